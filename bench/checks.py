"""Checks the benchmark tools make right after parsing their arguments, before any work.

Bad input is refused by ``parser.error`` (a short ``error: ...`` naming the option and its value, exit code 2)
instead of a traceback after minutes of measuring, and every output path is tried before the first is written, so
a run writes all of its files or none.
"""

from __future__ import annotations

import argparse
import os
from typing import Iterable

from sixtysix_env.fileio import writable_file
from sixtysix_env.rules import Rules


def check_agent_specs(parser: argparse.ArgumentParser, specs: Iterable[tuple[str, str]],
                      rules: Rules | None = None) -> None:
    """Build the agent of each ``(option, spec)`` once and start a deal of ``rules`` (the standard rules unless
    given), so an unknown agent or parameter, or an agent that cannot play the rules (a network fitted for others,
    R19-R21), is refused by its option."""
    from agents import agent_for_rules  # lazily: the registry imports every agent module

    for option, spec in specs:
        try:
            agent_for_rules(spec, Rules() if rules is None else rules)
        except (ValueError, OSError) as error:  # OSError: a network file an agent loads is missing or unreadable
            parser.error(f"{option} {spec!r}: {error}")


def check_output_paths(parser: argparse.ArgumentParser,
                       paths: Iterable[tuple[str, str | os.PathLike | None]]) -> None:
    """Check that each ``(option, path)`` can be written (``writable_file``: a write tried in its folder, or in the
    nearest existing parent of a folder still to make); a ``None`` path is an output not asked for."""
    for option, path in paths:
        if path is None:
            continue
        try:
            writable_file(path, f"{option} {str(path)!r}")
        except ValueError as error:
            parser.error(str(error))


def check_image_paths(parser: argparse.ArgumentParser,
                      paths: Iterable[tuple[str, str | os.PathLike | None]]) -> None:
    """:func:`check_output_paths` for plots, which are written in the format of their suffix
    (:func:`eval.report.image_format`): also refuse a suffix matplotlib does not write."""
    from eval.report import check_image_path

    paths = list(paths)
    check_output_paths(parser, paths)
    for option, path in paths:
        if path is not None:
            try:
                check_image_path(path, option)
            except ValueError as error:
                parser.error(str(error))
