"""A stand-in for ``time`` in tests of the tools that time decisions (bench.decision_time, bench.decision_regret):
its ``perf_counter`` moves on only when a test's agent moves ``now``, so the figures they print can be checked
exactly, with no real timing in the test."""

from __future__ import annotations


class FakeClock:
    """``perf_counter`` reads ``now``, which starts at 100 s and changes only when the test changes it."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now
