"""The values the client returns: the server's own response models, under the names a
caller thinks in (one definition of each shape, in app/api/*schemas*.py)."""

from __future__ import annotations

from app.api.batch_schemas import BatchAccepted, BatchOut, BatchResultLine, BatchSummary
from app.api.calibration_schemas import CalibrationOut
from app.api.schemas import Accepted, ScreeningOut, ScreeningSummary

Screening = ScreeningOut
ScreeningListed = ScreeningSummary
Batch = BatchOut
BatchListed = BatchSummary
BatchResult = BatchResultLine
Calibration = CalibrationOut

__all__ = [
    "Accepted",
    "Batch",
    "BatchAccepted",
    "BatchListed",
    "BatchResult",
    "Calibration",
    "Screening",
    "ScreeningListed",
]
