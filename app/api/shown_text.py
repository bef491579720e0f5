"""How much of a stored reply a response body shows: every such text is bounded.

The client reads a provider's body only up to FAITHSCREEN_<ROLE>_MAX_RESPONSE_BYTES, but a
screening holds many reviews (format retries, confirmations, panel judges), and a row
stored before that cap may hold anything: a 50 MB reply once made GET /v1/screenings/{id}
answer 100 MB (issue 32). So each provider text a review shows is cut past
SHOWN_CHARACTERS, a marker at the cut says so, a `cut` field gives its whole length, and
the reply itself is served whole by GET /v1/screenings/{id}/reviews/{review_id}/raw.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.outside_text import without_lone_surrogates

# Code points of one text. A statement may hold 64 KiB (FAITHSCREEN_MAX_STATEMENT_BYTES)
# and a reading restates it, so an ordinary back-translation is never cut; twenty reviews
# with every text at the bound still answer in a few megabytes, not hundreds.
SHOWN_CHARACTERS = 64 * 1024
# A review's texts that come from the provider (`error` may quote its body).
REVIEW_TEXTS = ("raw_response", "back_translation", "issues", "refusal", "model", "error")
# What a re-scoring run's reading of a stored reply shows of it.
READING_TEXTS = ("back_translation", "issues")

CUT_DOC = (
    "The texts above shown cut, each with its whole length in characters (code points); "
    f"empty when every text is whole. A text longer than {SHOWN_CHARACTERS} characters "
    "shows its first ones and then a marker line beginning `[cut by FaithScreen:`; the "
    "whole reply is served by GET /v1/screenings/{screening_id}/reviews/{id}/raw."
)


def raw_path(screening_id: str, review_id: int) -> str:
    """Where one review's whole reply is served."""
    return f"/v1/screenings/{screening_id}/reviews/{review_id}/raw"


def showable(text: object) -> object:
    """A text in a form UTF-8 can carry (lone surrogates as U+FFFD); anything else as is."""
    return without_lone_surrogates(text) if isinstance(text, str) else text


def cut_texts(
    values: Mapping[str, object], names: tuple[str, ...], whole_at: str
) -> tuple[dict[str, str], dict[str, int]]:
    """The texts among `names` longer than SHOWN_CHARACTERS, cut with a marker that
    points at `whole_at`, and the whole length of each."""
    shown: dict[str, str] = {}
    lengths: dict[str, int] = {}
    for name in names:
        text = values.get(name)
        if isinstance(text, str) and len(text) > SHOWN_CHARACTERS:
            shown[name] = text[:SHOWN_CHARACTERS] + _marker(len(text), whole_at)
            lengths[name] = len(text)
    return shown, lengths


def _marker(length: int, whole_at: str) -> str:
    return (
        f"\n[cut by FaithScreen: the first {SHOWN_CHARACTERS} of {length} characters are "
        f"shown; the whole reply: GET {whole_at}]"
    )
