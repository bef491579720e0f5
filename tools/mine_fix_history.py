"""Mine meaning-changing statement fixes from Lean 4 benchmark repositories' histories.

For every fix commit listed in `tools/fix_commits.tsv` (source, mirror name, commit), each
theorem whose statement changed between the commit's first parent and the commit becomes
one row: the statement before (`label: mismatch`, what the fix repaired) and after
(`label: faithful`, assumed, not re-verified), the commit, and one defect class from
`tools/fix_taxonomy.py`, decided from the diff alone. Proofs, comments, docstrings and
whitespace do not count as a change, nor do `∑ x in` → `∑ x ∈` and `λ` → `fun`.

The mirrors are bare git directories (the `fetch` tool puts them under /work/.mirror);
nothing they hold is copied into the project (the commit list holds hashes only). Usage:

    python tools/mine_fix_history.py --mirrors /work/.mirror \
        --out /work/wt/evidence-data/fixes.jsonl
    python tools/mine_fix_history.py --candidates   # fix-like commits, to review the list
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fix_taxonomy import classify

COMMITS = Path(__file__).with_name("fix_commits.tsv")
# source -> (mirror directory name, path prefix of the statement files)
SOURCES = {
    "minif2f": ("yangky11+miniF2F-lean4", "MiniF2F"),
    "proofnet": ("rahul3613+ProofNet-lean4", "formal"),
    "combibench": ("MoonshotAI+CombiBench", "lean/CombiBench"),
    "putnambench": ("trishullab+PutnamBench", "lean4/src"),
}
# Messages of commits that fix statements, and of those that only port or restyle them.
FIX_WORDS = re.compile(r"fix|correct|misformal|missing|wrong|hypothes|assum|improve", re.I)
NOT_FIX = re.compile(
    r"bump|update (to )?lean|mathlib|style|docstring|deprecat|build error|fix build|"
    r"isabelle|coq|notation|readme|import|name of|jsonl|clean|compil|elaboration|"
    r"unknown identifier|syntax highlight|informal",
    re.I,
)
DECLARATION = re.compile(
    r"^(?:@\[[^\]\n]*\]\s*)?(?:noncomputable\s+|private\s+|protected\s+)*"
    r"(theorem|lemma|abbrev|def|example)\s+([^\s:({\[]+)",
    re.M,
)
DOCSTRING = re.compile(r"/--(.*?)-/", re.S)
COMMENT = re.compile(r"/-.*?-/|--[^\n]*", re.S)


@dataclass(frozen=True)
class Statement:
    name: str
    formal: str  # the definitions it uses, then the theorem, proof replaced by `sorry`
    header: str
    informal: str


def git(mirror: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={mirror}", *args], capture_output=True, text=True, check=False
    )
    return done.stdout


def candidates(mirror: Path, prefix: str) -> Iterator[tuple[str, str]]:
    log = git(mirror, "log", "--no-merges", "--format=%H%x09%s", "--", prefix)
    for line in log.splitlines():
        commit, _, subject = line.partition("\t")
        if FIX_WORDS.search(subject) and not NOT_FIX.search(subject):
            yield commit, subject


def changed_files(mirror: Path, commit: str, prefix: str) -> list[str]:
    out = git(mirror, "diff", "--name-only", f"{commit}^", commit, "--", prefix)
    # CombiBench's `with_solution/` copies repeat its statements with the answers filled in.
    return [p for p in out.splitlines() if p.endswith(".lean") and "/with_solution/" not in p]


def statements(text: str) -> dict[str, Statement]:
    """The theorems of one Lean file by name, each with the file's definitions it uses."""
    header = "\n".join(
        line for line in text.splitlines() if re.match(r"(import|open|set_option)\b", line)
    )
    starts = list(DECLARATION.finditer(text))
    chunks: list[tuple[str, str, str, str]] = []  # kind, name, body, docstring
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        before = text[starts[index - 1].end() if index else 0 : match.start()]
        docs = DOCSTRING.findall(before)
        body = _without_trailer(text[match.start() : end])
        chunks.append((match.group(1), match.group(2), body, docs[-1].strip() if docs else ""))
    found: dict[str, Statement] = {}
    for kind, name, body, doc in chunks:
        if kind not in ("theorem", "lemma"):
            continue
        used = [b for k, n, b, _ in chunks if k in ("abbrev", "def") and _uses(body, n)]
        formal = "\n\n".join([*used, _statement_only(body)])
        found[name] = Statement(name, formal, header, doc)
    return found


def _uses(body: str, name: str) -> bool:
    return re.search(rf"(?<![\w.']){re.escape(name)}(?![\w'])", body) is not None


def _without_trailer(chunk: str) -> str:
    # A chunk runs to the next declaration: drop what follows it (comments, `end`, ...).
    chunk = DOCSTRING.sub("", chunk)
    lines = chunk.rstrip().splitlines()
    while lines and re.match(r"\s*(end\b|namespace\b|section\b|open\b|$)", lines[-1]):
        lines.pop()
    return "\n".join(lines)


def _statement_only(body: str) -> str:
    """The theorem up to its proof (the first `:=` outside brackets), then `sorry`."""
    stripped = COMMENT.sub(lambda m: " " * len(m.group()), body)
    depth = 0
    for index, char in enumerate(stripped):
        if char in "([{⟨⦃":
            depth += 1
        elif char in ")]}⟩⦄":
            depth -= 1
        elif depth == 0 and stripped.startswith(":=", index):
            return body[:index].rstrip() + " := by sorry"
    return body


def normalized(formal: str) -> str:
    text = COMMENT.sub(" ", formal)
    text = re.sub(r"([∑∏][^,]*?)\bin\b", r"\1∈", text)
    text = re.sub(r"\bλ\b|λ", "fun ", text)
    return " ".join(text.replace("↦", "=>").split())


def rows_of(source: str, mirror: Path, commit: str, subject: str) -> Iterator[dict[str, str]]:
    prefix = SOURCES[source][1]
    for path in changed_files(mirror, commit, prefix):
        before = statements(git(mirror, "show", f"{commit}^:{path}"))
        after = statements(git(mirror, "show", f"{commit}:{path}"))
        for name in sorted(before.keys() & after.keys()):
            old, new = before[name], after[name]
            if normalized(old.formal) == normalized(new.formal):
                continue
            yield {
                "id": f"{source}/{name}@{commit[:7]}",
                "source": source,
                "name": name,
                "repo": SOURCES[source][0].replace("+", "/"),
                "path": path,
                "commit": commit,
                "subject": subject,
                "class": classify(old.formal, new.formal),
                "informal": new.informal or old.informal,
                "before": old.formal,
                "after": new.formal,
                "header_before": old.header,
                "header_after": new.header,
            }


def informal_by_name(directory: Path) -> dict[tuple[str, str], str]:
    """(source, theorem name) -> the informal statement of the shared pairs (ids are
    `source/name`; ProofNet's names carry the book's prefix, which the files do not)."""
    found: dict[tuple[str, str], str] = {}
    for path in sorted(directory.glob("*.jsonl")) if directory.is_dir() else []:
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            source, _, name = str(row["id"]).partition("/")
            text = row.get("informal") or ""
            found[(source, name)] = text
            found[(source, name.split("_", 2)[-1] if source == "proofnet" else name)] = text
    return found


def read_commits(path: Path) -> list[tuple[str, str]]:
    """(source, commit) of every line that is not a comment."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            source, commit = line.split("\t")[:2]
            rows.append((source, commit))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--commits", type=Path, default=COMMITS)
    parser.add_argument("--out", type=Path, default=Path("/work/wt/evidence-data/fixes.jsonl"))
    parser.add_argument("--candidates", action="store_true", help="list fix-like commits")
    parser.add_argument(
        "--informal",
        type=Path,
        default=Path("/work/shared/data/pairs"),
        help="pairs whose informal text stands in where a Lean file has no docstring",
    )
    args = parser.parse_args(argv)
    if args.candidates:
        for source, (name, prefix) in SOURCES.items():
            for commit, subject in candidates(args.mirrors / name / "repo", prefix):
                print(f"{source}\t{commit}\t{subject}")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    seen: set[tuple[str, str]] = set()
    informal = informal_by_name(args.informal)
    with args.out.open("w", encoding="utf-8") as out:
        for source, commit in read_commits(args.commits):
            mirror = args.mirrors / SOURCES[source][0] / "repo"
            subject = git(mirror, "log", "-1", "--format=%s", commit).strip()
            for row in rows_of(source, mirror, commit, subject):
                key = (normalized(row["before"]), normalized(row["after"]))
                if key in seen:  # the same fix applied to Test and Valid copies
                    continue
                seen.add(key)
                row["informal"] = row["informal"] or informal.get((source, row["name"]), "")
                counts[(source, row["class"])] += 1
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    for (source, defect), count in sorted(counts.items()):
        print(f"{source}\t{defect}\t{count}")
    print(f"total\t\t{sum(counts.values())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
