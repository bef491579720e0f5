"""Supplied replies: which a server takes (one judge's, or each of its panel's judges'), and
the ruling and review records they make, read exactly as if a provider had sent them."""

from __future__ import annotations

from collections.abc import Sequence

from app.errors import AppError, PayloadTooLarge
from app.evidence.finding import Finding
from app.intake.requests import ScreeningRequest, SuppliedReplies
from app.pipeline.review_records import reading_of_record, supplied_record
from app.pipeline.ruling import ScreeningRuling
from app.policy import Panel, RoleResult, decide, decide_panel
from app.repositories.reviews import ReviewRecord
from app.settings import JUDGES_ENV, Settings
from app.vocabulary import SINGLE_JUDGE, PanelRule, Role

# An unknown judge name is quoted back cut to this many characters: it is client input.
SHOWN_NAME_CHARS = 40


class JudgesRefused(AppError):
    """The request's judge replies or panel rule do not fit this server's judges."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(422, "invalid_judges", message)
        self.field = field


def request_panel(request: ScreeningRequest, settings: Settings) -> Panel | None:
    """The panel a new screening is screened by (None: the single judge)."""
    if not settings.panel:
        return None
    chosen = request.options.panel_rule
    return Panel(settings.panel, PanelRule(chosen) if chosen else settings.default_panel_rule)


def check_judges(request: ScreeningRequest, settings: Settings) -> None:
    """Refuse judge replies and a panel rule that this server's judges cannot take."""
    panel = settings.panel
    if not panel:
        if request.options.panel_rule is not None:
            raise JudgesRefused(
                "options.panel_rule",
                f"options.panel_rule needs a judge panel ({JUDGES_ENV}), and this server has one "
                "judge",
            )
        if request.replies is not None and request.replies.judges is not None:
            raise JudgesRefused(
                "replies.judges",
                f"replies.judges needs a judge panel ({JUDGES_ENV}); this server has one judge: "
                "supply its reply as replies.judge",
            )
        return
    replies = request.replies
    if replies is None:
        return
    names = ", ".join(panel)
    if replies.judge is not None:
        raise JudgesRefused(
            "replies.judge",
            f"replies.judge is refused: this server has a judge panel ({names}); supply one "
            "reply per judge as replies.judges",
        )
    given = replies.judges or {}
    for name in given:
        if name not in panel:
            shown = name[:SHOWN_NAME_CHARS]
            raise JudgesRefused(
                f"replies.judges.{shown}",
                f"replies.judges.{shown} is not a judge of this server's panel ({names})",
            )
    for name in panel:
        if name not in given:
            raise JudgesRefused(
                f"replies.judges.{name}",
                f"replies.judges.{name} is missing: every judge of the panel ({names}) needs a "
                "reply",
            )


def check_reply_sizes(replies: SuppliedReplies, limit: int) -> None:
    """413 for a supplied reply past FAITHSCREEN_MAX_REPLY_BYTES (UTF-8 bytes)."""
    texts = {"replies.translator": replies.translator, "replies.judge": replies.judge}
    texts |= {f"replies.judges.{name}": reply for name, reply in (replies.judges or {}).items()}
    for field, text in texts.items():
        if text is not None and len(text.encode("utf-8")) > limit:
            raise PayloadTooLarge(field, limit, "FAITHSCREEN_MAX_REPLY_BYTES")


def decide_supplied(
    screening_id: str,
    replies: SuppliedReplies,
    findings: Sequence[Finding],
    panel: Panel | None = None,
) -> tuple[ScreeningRuling, list[ReviewRecord]]:
    """The ruling and review records for supplied replies (checked by `check_judges`),
    given the pair's findings: what the pipeline decides, with the evidence checks run."""
    translator = supplied_record(screening_id, Role.TRANSLATOR, replies.translator)
    if panel is None:
        judges = {SINGLE_JUDGE: supplied_record(screening_id, Role.JUDGE, replies.judge or "")}
    else:
        given = replies.judges or {}
        judges = {
            name: supplied_record(screening_id, Role.JUDGE, given[name], name)
            for name in panel.judges
        }
    results = {name: RoleResult(reading_of_record(record)) for name, record in judges.items()}
    ruling = _ruling(tuple(findings), RoleResult(reading_of_record(translator)), results, panel)
    return ruling, [translator, *judges.values()]


def _ruling(
    findings: tuple[Finding, ...],
    translator: RoleResult,
    judges: dict[str, RoleResult],
    panel: Panel | None,
) -> ScreeningRuling:
    if panel is None:
        return ScreeningRuling(decide(translator, judges[SINGLE_JUDGE], findings, 0), findings)
    return ScreeningRuling(decide_panel(translator, judges, panel, findings, 0), findings)
