"""What was read from one reply: the value every later step works with."""

from __future__ import annotations

from dataclasses import dataclass

from app.vocabulary import ParseStatus, Verdict


@dataclass(frozen=True, slots=True)
class Reading:
    """A verdict together with why it is that verdict (the parse status).

    Invariant: `verdict` is `unclear` whenever `parse_status` is not `ok`; `ok` with
    `unclear` means the model itself said UNCLEAR.
    """

    verdict: Verdict
    parse_status: ParseStatus
    back_translation: str | None
    issues: str | None
    parser_version: str

    @property
    def is_faithful(self) -> bool:
        """True only for an unambiguous FAITHFUL read from a complete reply."""
        return self.parse_status is ParseStatus.OK and self.verdict is Verdict.FAITHFUL

    @property
    def is_mismatch(self) -> bool:
        return self.parse_status is ParseStatus.OK and self.verdict is Verdict.MISMATCH
