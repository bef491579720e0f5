"""ORM tables, one a file. Importing this package registers all of them on `Base.metadata`."""

from app.models.base import Base
from app.models.job import Job, JobStatus
from app.models.pair import PairRow
from app.models.review import Review, ReviewIsAppendOnly
from app.models.screening import Screening

metadata = Base.metadata

__all__ = [
    "Base",
    "Job",
    "JobStatus",
    "PairRow",
    "Review",
    "ReviewIsAppendOnly",
    "Screening",
    "metadata",
]
