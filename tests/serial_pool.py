"""A process pool played in the test's own process, so that a test's patches reach the tasks: stands in for
``multiprocessing.Pool`` (``imap``) and ``concurrent.futures.ProcessPoolExecutor`` (``map``)."""

from __future__ import annotations


class SerialPool:
    """Runs each task in order when asked; ``made`` records the worker count of every pool made since a test
    reset it (``SerialPool.made = []``)."""

    made: list[int] = []

    def __init__(self, workers: int, *args, **kwargs):
        SerialPool.made.append(workers)

    def __enter__(self) -> "SerialPool":
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def map(self, function, items):
        return map(function, items)

    def imap(self, function, items):
        return map(function, items)
