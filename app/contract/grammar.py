"""The `grammar` reply format: the three-line contract as a GBNF grammar the server decodes by.

Pure: strings in, strings out. A server that constrains decoding by this grammar (llama.cpp's
`grammar`, vLLM's and SGLang's xgrammar) can only send a reply the parser reads `ok`, and
never one longer than `worst_case_tokens(role)`, so a `max_tokens` of that size never cuts
one. The reply is read by the same parser as a free-text one; the grammar helps a model
write the contract, it never decides what the reply says.

What it admits (docs/contract.md, "The grammar format"):

- the role's fields in the contract's order, each name in capitals at the very start of its
  line (`BACK-TRANSLATION:`, `VERDICT:`, `ISSUES:`; the judge has no back-translation);
- `VERDICT: ` followed by exactly FAITHFUL, MISMATCH or UNCLEAR, and the line ends there;
- a text field: its first line, then at most `MORE_LINES` more (blank ones too), each line
  at most `LINE_CHARS` characters past a short lead that proves it is not a field line;
- text in printable ASCII without `<`: no CR, no Unicode line break or format character, so
  the strict and the lenient readings see the same lines (contract rule 7), and no
  chat-template marker (`<end_of_turn>`, `<|im_end|>`, `</s>`) can be written;
- a line after the first of a field never starts with a space, nor with `verdict`,
  `issues:` or `back-translation:` in any letter case: it cannot be read as a field line.

`GRAMMAR_VERSION` changes whenever the grammar admits anything else.
"""

from __future__ import annotations

from app.vocabulary import Role, Verdict

GRAMMAR_VERSION = "grammar-1"

# A text field holds at most 1 + MORE_LINES lines of at most LINE_CHARS characters (past
# each later line's lead): room for a paragraph of back-translation or a list of issues.
LINE_CHARS = 200
MORE_LINES = 3
# Every character a text line may hold: printable ASCII but `<`.
TEXT_CHARACTERS = "".join(chr(code) for code in range(0x20, 0x7F) if chr(code) != "<")
# A later line may not begin with one of these (ASCII letter case ignored). `verdict` has
# no colon: the lenient reading also takes `VERDICT :` for a field (contract rule 7).
FIELD_WORDS = ("verdict", "issues:", "back-translation:")
VERDICT_WORDS = tuple(verdict.value.upper() for verdict in Verdict)

_FIELDS = {
    Role.TRANSLATOR: '"BACK-TRANSLATION:" text "\\nVERDICT: " verdict "\\nISSUES:" text',
    Role.JUDGE: '"VERDICT: " verdict "\\nISSUES:" text',
}
_FIXED_CHARACTERS = {
    Role.TRANSLATOR: len("BACK-TRANSLATION:\nVERDICT: \nISSUES:"),
    Role.JUDGE: len("VERDICT: \nISSUES:"),
}
_TEXT_FIELDS = {Role.TRANSLATOR: 2, Role.JUDGE: 1}


def reply_grammar(role: Role) -> str:
    """The GBNF grammar of `role`'s reply, one rule a line, `root` first."""
    rules = [
        f"root ::= {_FIELDS[role]}",
        "verdict ::= " + " | ".join(f'"{word}"' for word in VERDICT_WORDS),
        f'text ::= (" " chars)? more{{0,{MORE_LINES}}}',
        'more ::= "\\n" (lead chars)?',
        f"chars ::= {_character_class(TEXT_CHARACTERS)}{{0,{LINE_CHARS}}}",
        *_lead_rules(),
    ]
    return "\n".join(rules) + "\n"


def worst_case_characters(role: Role) -> int:
    """The longest reply the grammar admits for `role`, in characters (ASCII: in bytes)."""
    longest_lead = max(len(word) for word in FIELD_WORDS)  # its prefix, then one other
    first = 1 + LINE_CHARS  # " " and the line
    later = 1 + longest_lead + LINE_CHARS  # "\n", the lead and the line
    text = first + MORE_LINES * later
    verdict = max(len(word) for word in VERDICT_WORDS)
    return _FIXED_CHARACTERS[role] + verdict + _TEXT_FIELDS[role] * text


def worst_case_tokens(role: Role) -> int:
    """The most tokens a reply in the grammar can take: a server never sends a token that
    decodes to no text, so at most one a byte (a byte-fallback tokenizer spelling every
    character alone), and the end-of-generation token."""
    return worst_case_characters(role) + 1


def _lead_rules() -> list[str]:
    """`lead`: a later line's first characters, up to the first that makes it no field word
    (the words' first letters differ, so each word is one branch of a trie)."""
    firsts = {word[0].lower() for word in FIELD_WORDS} | {word[0].upper() for word in FIELD_WORDS}
    others = "".join(c for c in TEXT_CHARACTERS if c not in firsts and c != " ")
    branches = [_character_class(others)]
    rules: list[str] = []
    for number, word in enumerate(FIELD_WORDS):
        name = f"lead{number}-"
        branches.append(f"{_either_case(word[0])} {name}1")
        for at in range(1, len(word)):
            other = _character_class(_other_than(word[at]))
            last = at == len(word) - 1  # the whole word is never a lead
            rules.append(
                f"{name}{at} ::= {other}"
                + ("" if last else f" | {_either_case(word[at])} {name}{at + 1}")
            )
    return ["lead ::= " + " | ".join(branches), *rules]


def _other_than(character: str) -> str:
    same = {character.lower(), character.upper()}
    return "".join(c for c in TEXT_CHARACTERS if c not in same)


def _either_case(character: str) -> str:
    both = sorted({character.lower(), character.upper()})
    return _character_class("".join(both))


def _character_class(characters: str) -> str:
    """A GBNF character class of exactly these (ASCII) characters, as escaped ranges."""
    codes = sorted({ord(c) for c in characters})
    ranges: list[tuple[int, int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    body = "".join(
        f"\\x{low:02x}" if low == high else f"\\x{low:02x}-\\x{high:02x}" for low, high in ranges
    )
    return f"[{body}]"
