"""`faithscreen ...` under a profiler, switched on and off by signals (bench/batch_bench.py
--profile): SIGUSR1 starts profiling the main thread (the event loop: API, worker, LLM
client), SIGUSR2 stops and writes the stats to the path in FAITHSCREEN_BENCH_PROFILE.
Start-up and shut-down stay out of the profile. SQLite's own work runs in aiosqlite's
thread, which neither profiler sees: the bench reports each thread's CPU time instead.

FAITHSCREEN_BENCH_PROFILER picks the profiler:
- `cprofile` (the default): cProfile, timed by the thread's CPU clock, not the wall: on a
  shared machine wall time counts the waits for a core (and for the GIL, while aiosqlite's
  thread holds it) against whatever function happened to be running. It counts every
  call, and its cost per call inflates call-heavy code; SQLAlchemy's greenlet switches
  also blur its cumulative times (tottime stays right). Stats for `python -m pstats`.
- `pyinstrument` (if installed): samples the stack every millisecond, so no per-call cost
  and greenlets do not matter; wall-clock samples, the idle wait in `select` included.
  Writes a text tree (PATH) and the session (PATH.pyisession).

    FAITHSCREEN_BENCH_PROFILE=out.prof python bench/profiled_service.py serve --port 8000
"""

from __future__ import annotations

import cProfile
import os
import signal
import sys
import time
from types import FrameType
from typing import Any

from app.cli import main

PROFILER = os.environ.get("FAITHSCREEN_BENCH_PROFILER", "cprofile")
_profiler: Any = None


def _start(_signum: int, _frame: FrameType | None) -> None:
    global _profiler
    if PROFILER == "pyinstrument":
        from pyinstrument import Profiler

        _profiler = Profiler(interval=0.001, async_mode="disabled")
        _profiler.start()
    else:
        _profiler = cProfile.Profile(time.thread_time)
        _profiler.enable()


def _stop(_signum: int, _frame: FrameType | None) -> None:
    path = os.environ["FAITHSCREEN_BENCH_PROFILE"]
    if PROFILER == "pyinstrument":
        session = _profiler.stop()
        session.save(path + ".pyisession")
        text = _profiler.output_text(unicode=True, show_all=False)
        with open(path + ".part", "w", encoding="utf-8") as out:
            out.write(text)
    else:
        _profiler.disable()
        _profiler.dump_stats(path + ".part")
    os.replace(path + ".part", path)  # the bench waits for the file: whole or absent


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, _stop)
    sys.argv[0] = "faithscreen"
    main()
