"""ORM tables, one a file. Importing this package registers all of them on `Base.metadata`."""

from app.models.api_key import ApiKey
from app.models.base import Base
from app.models.batch import Batch
from app.models.decision import Decision, DecisionIsAppendOnly
from app.models.job import Job
from app.models.lean_check import LeanCheck, LeanCheckIsAppendOnly
from app.models.metric_count import MetricCount, MetricCountChange
from app.models.pair import PairRow
from app.models.provider_budget import ProviderBudget, ProviderBudgetLease
from app.models.queue_item import QueueItem, QueueItemScreening
from app.models.rescore import ReadingRow, Rescore, RescoreRowIsAppendOnly, RulingRow
from app.models.review import Review, ReviewIsAppendOnly
from app.models.review_thread import Assignment, Comment, ItemOpening, ThreadRowIsAppendOnly
from app.models.screening import Screening
from app.models.screening_key import ScreeningKey
from app.models.web_session import WebSession

metadata = Base.metadata

__all__ = [
    "ApiKey",
    "Assignment",
    "Base",
    "Batch",
    "Comment",
    "Decision",
    "DecisionIsAppendOnly",
    "ItemOpening",
    "Job",
    "LeanCheck",
    "LeanCheckIsAppendOnly",
    "MetricCount",
    "MetricCountChange",
    "PairRow",
    "ProviderBudget",
    "ProviderBudgetLease",
    "QueueItem",
    "QueueItemScreening",
    "ReadingRow",
    "Rescore",
    "RescoreRowIsAppendOnly",
    "Review",
    "ReviewIsAppendOnly",
    "RulingRow",
    "Screening",
    "ScreeningKey",
    "ThreadRowIsAppendOnly",
    "WebSession",
    "metadata",
]
