"""The handle a test moves the application's clock (app/clock.py) with."""

from __future__ import annotations

from datetime import timedelta

from app import clock


class MovableClock:
    def advance(self, seconds: float) -> None:
        clock.advance(timedelta(seconds=seconds))

    def reset(self) -> None:
        clock.reset()
