"""The logs of a run directory that grow row by row: ``scalars.csv`` (a header, then ``step,tag,value`` rows) and
JSON-lines files such as ``eval.jsonl`` (one object with a ``step`` per line)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, AnyStr, Callable

from sixtysix_env.fileio import write_bytes_atomic, write_text_atomic
from sixtysix_env.schema import loads_json


def _csv_step(row: list[str]) -> int:
    if not (row and row[0].isascii() and row[0].removeprefix("-").isdigit()):  # one sign: '--5' is no number
        raise ValueError(f"its first cell is not a step number: {row[:1]!r}")
    return int(row[0])


def _json_step(line: str) -> int:
    return loads_json(line, "log line")["step"]


def _whole_step(step: Any) -> int:
    """A step as read from a row: a whole number (a JSON ``"5"``, ``5.0`` or ``true`` would otherwise be compared as
    it comes, or fail the comparison with a ``TypeError``)."""
    if type(step) is not int:
        raise ValueError(f"its step is {step!r}, not a whole number")
    return step


def _unreadable_step(path: Path, line: int, reason: str) -> ValueError:
    return ValueError(f"run log {str(path)!r} line {line} has no step to read ({reason}); the run cannot be resumed "
                      "past it")


def _without_torn_row(data: AnyStr) -> AnyStr:
    """``data`` (a log's text or bytes) up to its last newline: the rows are appended as they come, so a kill can
    leave the last one torn, and a row appended after it would continue it (``1,a,0.`` then ``2,b,1`` reads
    ``1,a,0.2,b,1``)."""
    newline = "\n" if isinstance(data, str) else b"\n"
    return data[: data.rfind(newline) + 1]


def _drop_torn_row(path: Path) -> None:
    """Drop the last row of ``path`` if a kill left it torn (no newline after it), written atomically."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        write_bytes_atomic(path, _without_torn_row(data))


def truncate_log(path: Path, last_step: int, step_of: Callable[[Any], int] | None = None) -> None:
    """Drop the rows of ``path`` logged after ``last_step`` (the part of a killed run being redone, or a round
    fitted again), written atomically; a CSV keeps its header row. ``step_of`` reads a row's step (a CSV row's
    list of cells, or a JSON line's text); by default its first cell, or its ``step`` key. The rows are appended
    as they come, so a kill can leave the last one torn (no newline after it): it is dropped. Any other row whose
    step cannot be read is refused, naming the file and the line."""
    if not path.exists():
        return
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"run log {str(path)!r} is not UTF-8 text") from None
    if text and not text.endswith("\n"):
        text = _without_torn_row(text)
    if path.suffix == ".csv":
        step_of = step_of or _csv_step
        reader = csv.reader(io.StringIO(text, newline=""))
        kept = []
        for row in reader:
            if not row:  # a blank row is dropped
                continue
            if reader.line_num > 1:  # the header row is kept
                try:
                    step = _whole_step(step_of(row))
                except (ValueError, IndexError) as error:
                    raise _unreadable_step(path, reader.line_num, str(error)) from None
                if step > last_step:
                    continue
            kept.append(row)
        buffer = io.StringIO()
        csv.writer(buffer).writerows(kept)
        write_text_atomic(path, buffer.getvalue())
    else:
        step_of = step_of or _json_step
        kept_lines = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                step = _whole_step(step_of(line))
            except (ValueError, KeyError, TypeError) as error:
                raise _unreadable_step(path, number, repr(error)) from None
            if step <= last_step:
                kept_lines.append(line + "\n")
        write_text_atomic(path, "".join(kept_lines))


class ScalarsCsv:
    """A run's ``scalars.csv``, appended row by row (a header, then ``step,tag,value`` rows), the one place that
    writes it. Rows logged after ``keep_through`` are dropped first (``truncate_log``: the part of a killed run being
    redone, or a round fitted again; ``None`` keeps them all but a last row a kill left torn). A context manager, so
    no error leaves it open."""

    def __init__(self, path: Path, keep_through: int | None = None):
        if keep_through is not None:
            truncate_log(path, keep_through)
        else:
            _drop_torn_row(path)
        # An empty file is new too: a kill can leave one before the header reached the disk (or a torn header,
        # which is dropped above), and rows without a header would be read as one.
        new = not path.exists() or path.stat().st_size == 0
        self._handle = open(path, "a", newline="", encoding="utf-8")
        self._rows = csv.writer(self._handle)
        if new:
            self._rows.writerow(["step", "tag", "value"])

    def add(self, step: int, tag: str, value: Any) -> None:
        self._rows.writerow([step, tag, value])

    def flush(self) -> None:
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> "ScalarsCsv":
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()


__all__ = ["ScalarsCsv", "truncate_log"]
