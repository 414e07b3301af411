"""``sixtysix tournament`` and ``sixtysix match``: duplicate-deal round robins from the command line.

Agent lists: ``--agents random,greedy,pimc:samples=30,seconds=0.1,heuristic`` is split on commas, and a piece
that is a bare ``key=value`` (no ``:`` before its ``=``) continues the parameters of the spec before it, so the
list above holds four agents: ``random``, ``greedy``, ``pimc:samples=30,seconds=0.1`` and ``heuristic``.
``--agent SPEC`` (repeatable) adds one spec verbatim. Agents from other packages: ``--import mypackage.agents``
imports a module that calls ``agents.register(name, factory)`` (in every worker process too).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from typing import Any, Callable, Sequence

from sixtysix_env.fileio import writable_file
from sixtysix_env.rules import ALL_PRESET_NAMES, Rules

from agents.registry import split_agent_list

from .deals import generate_deals, load_deals, save_deals
from .ray_backend import BACKENDS


def _parse_override(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--rule expects SWITCH=VALUE (e.g. schneider_bummerl=false), got {text!r}")
    value = value.strip()
    lowered = value.lower()
    if lowered in ("true", "false"):
        return key.strip(), lowered == "true"
    try:
        return key.strip(), int(value)
    except ValueError:
        raise ValueError(f"--rule {text!r}: value must be true, false or an integer") from None


def _rule_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--rule`` switches of a run. ``partie_bummerl`` is refused: the runners play single deals, or single
    Bummerls with ``--match`` (R17), never a Partie (R18), so no result would read it."""
    overrides = dict(_parse_override(text) for text in args.rule)
    if "partie_bummerl" in overrides:
        raise ValueError("--rule partie_bummerl would be ignored: matches and tournaments play single deals, or "
                         "single Bummerls with --match (R17), never a Partie (R18); leave it out")
    return overrides


def _common_options(parser: argparse.ArgumentParser, out_required: bool) -> None:
    parser.add_argument("--deals", type=int, default=None,
                        help="duplicate units per pair: deal pairs, or Bummerl pairs with --match (default 100, "
                             "or every deal of --deals-file)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes or Ray actors (default 1)")
    parser.add_argument("--backend", choices=BACKENDS, default="multiprocessing",
                        help="where the workers run: processes on this machine (default) or Ray actors")
    parser.add_argument("--address", default=None,
                        help="with --backend ray: the Ray cluster to join (default: start Ray locally)")
    parser.add_argument("--out", required=out_required, default=None,
                        help="output directory: results.json, results.csv, table.md, crosstable.png, deals.json "
                             "and the resume journal" + ("" if out_required else " (default: write nothing)"))
    parser.add_argument("--rules", default=None, choices=ALL_PRESET_NAMES,
                        help="rules preset (default standard, or the rules stored in --deals-file)")
    parser.add_argument("--rule", action="append", default=[], metavar="SWITCH=VALUE",
                        help="override one rules switch, e.g. --rule schneider_bummerl=false (repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="master seed for deals and agent seeds (default 0)")
    parser.add_argument("--deals-file", default=None, help="play the deals of this deal file (JSON, see eval/deals.py)")
    parser.add_argument("--records", default=None, metavar="DIR",
                        help="write every deal's JSON game record to DIR (for `sixtysix replay`; see eval/records.py)")
    parser.add_argument("--save-deals", default=None, metavar="FILE", help="also write the deals played to FILE")
    parser.add_argument("--match", action="store_true",
                        help="match mode (R17): play duplicate Bummerls to 7 and report the Bummerl win rate")
    parser.add_argument("--overwrite", action="store_true", help="discard an existing run in --out")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (it may register extra agents); repeatable")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for rating errors (default 1000)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--quiet", action="store_true", help="print nothing on success")


def _settings(args: argparse.Namespace, specs: Sequence[str]):
    from .tournament import TournamentSettings

    if args.deals is not None and args.deals < 1:
        raise ValueError(f"--deals must be at least 1, got {args.deals}")
    if args.bootstrap < 0:
        raise ValueError(f"--bootstrap must be 0 or more, got {args.bootstrap}")
    overrides = _rule_overrides(args)
    if args.deals_file:
        if overrides and not args.rules:
            raise ValueError("--rule with --deals-file needs --rules too (the preset whose switches it changes); the "
                             "deal file's own rules apply when neither is given")
        file_rules_wanted = Rules.preset(args.rules, **overrides) if args.rules else None
        deals, rules = load_deals(args.deals_file, file_rules_wanted)
        if rules.players != 2:  # the file's rules decide, and these are not the two-player game this runner plays
            raise ValueError(f"deal file {args.deals_file!r} holds three-player deals (R21): play them with --rules "
                             "three and three agents or more (sixtysix tournament)")
        if args.deals is not None:
            if args.deals > len(deals):
                raise ValueError(f"--deals {args.deals} but deal file {args.deals_file!r} holds only {len(deals)} deals")
            deals = deals[: args.deals]
        source = f"file {args.deals_file}"
    else:
        rules = Rules.preset(args.rules or "standard", **overrides)
        deals = generate_deals(args.seed, args.deals if args.deals is not None else 100, rules)
        source = f"generated from master seed {args.seed}"
    return TournamentSettings(
        agents=tuple(specs),
        rules=rules,
        deals=tuple(deals),
        master_seed=args.seed,
        match=args.match,
        imports=tuple(args.imports),
        deals_source=source,
        bootstrap=args.bootstrap,
    )


def _refuse_before_writing(args: argparse.Namespace, specs: Sequence[str], settings: Any | None) -> None:
    """Refuse bad agents, workers, backend, --out or --records before --save-deals, the journal or any record is
    written ("nothing is half-written"); the tournament runners check them again, but only after writing some.
    ``settings``: the two-player run's (its agents and --out are checked against them); ``None`` for three players,
    whose three_player_cli checks the agents and --out and makes the --records folder before --save-deals writes."""
    from agents import agent_for_rules

    from .ray_backend import check_backend
    from .records import prepare_records_dir
    from .tournament import check_output_dir, import_agent_modules

    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    check_backend(args.backend, args.address)
    if args.save_deals:  # a folder or an unwritable place is named now, not by the temp file of the late write
        writable_file(args.save_deals, f"--save-deals {args.save_deals!r}")
    if settings is None:  # three players: three_player_cli checks the agents, --out and --records, as early
        return
    import_agent_modules(settings.imports)
    for spec in specs:  # an unknown agent or parameter, or one that cannot play the rules, is named here
        agent_for_rules(spec, settings.rules)
    if args.out is not None:
        check_output_dir(args.out, settings, args.overwrite)  # a file, or a run with other settings
    if args.records is not None:
        prepare_records_dir(args.records)  # the last check: it creates the folder


class _StopRequest:
    """Whether Ctrl-C or SIGTERM arrived while a tournament ran."""

    def __init__(self) -> None:
        self.received = False


@contextlib.contextmanager
def _stop_signals_as_interrupt(stop: _StopRequest):
    """SIGTERM (a batch system stopping the job) is handled like Ctrl-C while a tournament runs: the worker pool is
    stopped and the journal closed cleanly, so the same command continues later. Both signals are also remembered in
    ``stop``: one that arrives while numba compiles is raised inside llvmlite's ctypes callback, which swallows the
    KeyboardInterrupt, and numba then fails with an error of its own; that error is still a stop, not a crash."""

    def handler(signum: int, frame: Any) -> None:
        stop.received = True
        raise KeyboardInterrupt

    stop_signals = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # a job started with SIGINT ignored keeps it so
        stop_signals.append(signal.SIGINT)
    previous_handlers = {signum: signal.signal(signum, handler) for signum in stop_signals}
    try:
        yield
    finally:
        for signum, previous_handler in previous_handlers.items():
            signal.signal(signum, previous_handler)


def _run_until_stopped(
    args: argparse.Namespace, run: Callable[[], dict], markdown_table: Callable[[dict], str],
) -> int:
    """Runs a tournament and prints its table; a stop (Ctrl-C, SIGTERM) or a killed worker ends it with advice."""
    from .tournament import WorkerDied

    stop = _StopRequest()
    try:
        with _stop_signals_as_interrupt(stop):
            document = run()
    except KeyboardInterrupt:
        return _interrupted(args)
    except Exception as error:
        if stop.received:  # the stop turned into another error inside a library (numba compiling)
            return _interrupted(args)
        if isinstance(error, WorkerDied):
            return _worker_died(args, error)
        raise
    if not args.quiet:
        print(markdown_table(document))
        _say_where_written(args)
    return 0


def _run(args: argparse.Namespace, specs: Sequence[str], three_players_allowed: bool = True) -> int:
    """Play the run: three seats (R21) when its rules have them, if ``three_players_allowed`` (sixtysix match seats
    two agents, and its deal-file check names a three-player file)."""
    from .report import markdown_table
    from .tournament import run_tournament

    overrides = _rule_overrides(args)
    if three_players_allowed:
        rules = _run_rules(args, overrides)
        if rules.players == 3:
            return _run_three_players(args, specs, rules)
    settings = _settings(args, specs)

    def checked_run() -> dict:
        # The checks build the agents, which compiles numba's kernels on a cold cache (seconds): a stop then is a
        # stop too, not a traceback or a silent death.
        _refuse_before_writing(args, specs, settings)
        if args.save_deals:
            save_deals(args.save_deals, settings.deals, settings.rules,
                       master_seed=None if args.deals_file else args.seed)
        return run_tournament(settings, out_dir=args.out, workers=args.workers,
                              progress=not args.no_progress and not args.quiet, overwrite=args.overwrite,
                              records_dir=args.records, backend=args.backend, address=args.address)

    return _run_until_stopped(args, checked_run, markdown_table)


def _interrupted(args: argparse.Namespace) -> int:
    """Ctrl-C or SIGTERM during a tournament: say where the finished work is and how to go on; exit code 130."""
    where = f" (finished work is kept in {args.out})" if args.out else ""
    print(f"interrupted{where}; run the same command again to continue", file=sys.stderr)
    return 130


def _say_where_written(args: argparse.Namespace) -> None:
    if args.out:
        print(f"results written to {args.out}/ (results.json, results.csv, table.md, crosstable.png)")
    if args.records:
        print(f"game records written to {args.records}/ (one per deal and seating; `sixtysix replay FILE`)")


def _worker_died(args: argparse.Namespace, error: Exception) -> int:
    """A worker process was killed (out of memory...): say so, where the finished work is, and how to go on."""
    where = f"; finished tasks are kept in {args.out}" if args.out else ""
    print(f"error: {str(error).split(';')[0]}{where}; run the same command again to continue", file=sys.stderr)
    return 1


def _run_rules(args: argparse.Namespace, overrides: dict[str, Any]) -> Rules:
    """The rules a run plays: ``--rules`` with its ``--rule`` switches; without either, those stored in
    ``--deals-file`` (as its help says: a three-player file makes a three-player run), else ``standard``."""
    if args.deals_file and not args.rules and not overrides:
        return load_deals(args.deals_file)[1]
    return Rules.preset(args.rules or "standard", **overrides)


def _run_three_players(args: argparse.Namespace, specs: Sequence[str], rules: Rules) -> int:
    """R21: three seats, every deal in all six seat permutations (eval/three_tournament.py)."""
    from .three_tournament import markdown_table, three_player_cli

    if args.deals is not None and args.deals < 1:
        raise ValueError(f"--deals must be at least 1, got {args.deals}")
    if args.bootstrap < 0:
        raise ValueError(f"--bootstrap must be 0 or more, got {args.bootstrap}")
    if args.backend != "multiprocessing" or args.address is not None:
        raise ValueError("three-player tournaments run on worker processes only: drop --backend/--address")
    if args.imports:  # the three-player runner builds agents without importing modules (in the workers too)
        raise ValueError("--import is not supported with three players (R21): their workers build agents from the "
                         "registry only (agents/registry.py)")
    _refuse_before_writing(args, specs, None)  # builds no agent (three_player_cli does, under the stop handling)
    return _run_until_stopped(args, lambda: three_player_cli(args, specs, rules), markdown_table)


def tournament_main(argv: Sequence[str]) -> int:
    """``sixtysix tournament --agents A,B,C --deals N --workers W --out DIR ...``: a duplicate round robin."""
    parser = argparse.ArgumentParser(
        prog="sixtysix tournament",
        description="Round robin of agents on duplicate deals (each deal played twice with the seats swapped).",
        epilog="Agent lists are split on commas; a bare key=value piece continues the previous agent's "
               "parameters: --agents random,pimc:samples=30,seconds=0.1,heuristic is three agents.",
    )
    parser.add_argument("--agents", default=None, help="comma-separated agent specs, e.g. random,greedy,pimc:samples=30")
    parser.add_argument("--agent", action="append", default=[], metavar="SPEC", help="one agent spec (repeatable)")
    _common_options(parser, out_required=True)
    args = parser.parse_args(list(argv))
    specs = (split_agent_list(args.agents) if args.agents else []) + list(args.agent)
    if len(specs) < 2:
        parser.error("give at least two agents with --agents and/or --agent")
    return _run(args, specs)


def match_main(argv: Sequence[str]) -> int:
    """``sixtysix match A B --deals N ...``: one pair of agents on duplicate deals (or Bummerls with --match)."""
    parser = argparse.ArgumentParser(
        prog="sixtysix match",
        description="One pair of agents on duplicate deals (each deal played twice with the seats swapped).",
    )
    parser.add_argument("agent_a", metavar="A", help="first agent spec, e.g. heuristic")
    parser.add_argument("agent_b", metavar="B", help="second agent spec, e.g. pimc:samples=30,seconds=0.1")
    _common_options(parser, out_required=False)
    args = parser.parse_args(list(argv))
    if Rules.preset(args.rules or "standard", **_rule_overrides(args)).players == 3:
        raise ValueError("sixtysix match plays two agents; for three players (R21) run sixtysix tournament --rules "
                         "three --agents A,B,C")
    return _run(args, [args.agent_a, args.agent_b], three_players_allowed=False)


__all__ = ["match_main", "split_agent_list", "tournament_main"]
