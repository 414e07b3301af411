"""Pool the duplicate deal pairs of several ``sixtysix match`` runs of the same two agents (on different seeds) into
one margin per deal with a 95% t interval, as each run reports its own.

    python -m eval.pool results/run_seed31 results/run_seed32 ...
    python -m eval.pool results/new_vs_heuristic --minus results/old_vs_heuristic
    python -m eval.pool results/new_seed92 results/new_seed93 --minus results/old_seed92 results/old_seed93

``--minus`` compares two agents paired by deal instead: two runs of different agents A against the same B on the
same deals (the same ``deals.json``), each pair's margin of the first A minus the second's, with its t interval.
Sharing the deals removes the deals' luck from the difference, so it is much tighter than the two intervals. With
several runs on each side (one per seed), the i-th run is paired with the i-th and the differences are pooled.

Each run's ``results.csv`` gives one row per deal played; a duplicate unit is a deal pair (the same ``deal`` with
the seats swapped), valued at the mean of agent A's margins over its deals, exactly as the match report does. Runs
of Bummerls (``--match``) or of other agent pairs are refused by name, and so are damaged or incomplete ones: a
malformed row or a margin that is not a finite number (by file and line), a deal with one seating only, or fewer
deals than the run's ``results.json`` (or its ``deals.json``) says were played. Runs that share a deal (the same run
twice, a copy, a seed run again) or were played under other rules are refused too: pooled, their deals would count
as new ones. Runs made by several versions of the code are pooled with a note that says so.

``--luck`` also prints each figure with the luck of the talon's draws taken out of every game's margin
(:mod:`eval.luck`, AIVAT's chance correction): the same expectation, and an interval as much narrower as the
heuristic's rollouts, which value the draws, model the agents' play (about half the variance for ``expert`` against
``heuristic``; wider than the raw one for ``random``, whose play they do not model: the correction is subtracted
whole). The adjusted line says how its interval's width compares with the raw one's.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

from agents.base import differing_switches, rules_name
from sixtysix_env import Rules
from sixtysix_env.schema import read_json_file

from .deals import load_deals
from .luck import DEFAULT_ORDERS, LuckAdjustment, adjusted_game_margins
from .stats import MeanInterval, mean_interval

# The columns of a match's results.csv (eval.report.CSV_COLUMNS) that pooling reads.
POOLED_COLUMNS = ("agent_a", "agent_b", "deal", "seat_a", "margin_a")


def unit_margins(directory: Path, luck: LuckAdjustment | None = None) -> tuple[tuple[str, str], list[float]]:
    """``((agent A, agent B), per-unit margins of A)`` of one match run's ``results.csv`` (luck-adjusted with
    ``luck``)."""
    pair, by_deal = deal_margins(directory, luck)
    return pair, list(by_deal.values())


def game_margins(directory: Path) -> tuple[tuple[str, str], dict[tuple[int, int], float]]:
    """``((agent A, agent B), {(deal, A's seat): A's margin})`` of one match run's ``results.csv``.

    A malformed row is refused by file and line, and so is an incomplete run: every deal needs both seatings, and
    the deals must be all those the run says it played (:func:`played_deal_count`)."""
    path = Path(directory) / "results.csv"
    rows: list[tuple[int, dict[str | None, str | None]]] = []  # (line number, row)
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            for row in reader:
                rows.append((reader.line_num, row))
    except OSError as error:
        raise ValueError(f"cannot read the match results {str(path)!r}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{str(path)!r} is not UTF-8 text ({error.reason} at byte {error.start}); "
                         "is it the results.csv of a match?") from None
    except csv.Error as error:
        raise ValueError(f"{str(path)!r} line {reader.line_num} is not CSV ({error})") from None
    if rows and "agent_seat2" in rows[0][1]:  # eval/three_tournament.py's columns
        raise ValueError(f"{str(path)!r} is the results.csv of a three-player tournament (R21); eval.pool pools "
                         "two-player match runs, and the three-player run's own table.md and results.json hold its "
                         "figures")
    if not rows:
        raise ValueError(f"{str(path)!r} is not the results.csv of a match (no rows)")
    missing = [column for column in POOLED_COLUMNS if column not in rows[0][1]]
    if missing:
        raise ValueError(f"{str(path)!r} is not the results.csv of a match (no {', '.join(missing)} column)")
    for line, row in rows:
        # DictReader fills missing fields with None and gathers extra ones in a list under the key None.
        if None in row or None in row.values():
            fields = (len(reader.fieldnames) + len(row[None]) if None in row
                      else sum(value is not None for value in row.values()))
            raise ValueError(f"{str(path)!r} line {line} has {fields} fields where the header has "
                             f"{len(reader.fieldnames)} (a damaged row)")
    pairs = {(row["agent_a"], row["agent_b"]) for _, row in rows}
    if len(pairs) != 1:
        raise ValueError(f"{str(path)!r} holds {len(pairs)} agent pairs; pool the runs of one pair")
    if any(row.get("bummerl_game") for _, row in rows):
        raise ValueError(f"{str(path)!r} is a run of Bummerls (--match); only deal pairs are pooled")
    games: dict[tuple[int, int], float] = {}
    for line, row in rows:
        try:
            key = int(row["deal"]), int(row["seat_a"])
            margin = float(row["margin_a"])
        except (KeyError, ValueError) as error:
            raise ValueError(f"{str(path)!r} line {line}: a malformed deal, seat or margin ({error})") from None
        if not math.isfinite(margin):
            raise ValueError(f"{str(path)!r} line {line}: margin {row['margin_a']!r} is not a finite number")
        if key[0] < 0 or key[1] not in (0, 1):
            raise ValueError(f"{str(path)!r} line {line}: deal {key[0]} with A in seat {key[1]} (deals count from 0, "
                             "seats are 0 and 1)")
        if key in games:
            raise ValueError(f"{str(path)!r} line {line}: deal {key[0]} with A in seat {key[1]} appears twice")
        games[key] = margin
    _check_complete(Path(directory), path, games)
    return pairs.pop(), games


def played_deal_count(directory: Path) -> tuple[int, Path] | None:
    """``(deals played, the file saying so)`` of a match run: its ``results.json`` (a finished ``sixtysix match``
    always writes one), else its ``deals.json`` if that is a deal file; ``None`` when neither tells."""
    results_path = directory / "results.json"
    if results_path.exists():
        document = read_json_file(results_path, "match results")
        settings = document.get("settings") if isinstance(document, dict) else None
        count = settings.get("deals") if isinstance(settings, dict) else None
        if type(count) is not int or count < 1:
            raise ValueError(f"match results {str(results_path)!r} hold no deal count (settings.deals); "
                             "is it the results.json of a match?")
        if settings.get("complete") is False:
            raise ValueError(f"match results {str(results_path)!r} describe an incomplete run; finish it (run the "
                             "same command again) before pooling")
        return count, results_path
    try:
        deals, _ = load_deals(directory / "deals.json")
    except (OSError, ValueError):
        return None  # results assembled by hand: only the deal pairs themselves are checked
    return len(deals), directory / "deals.json"


def _check_complete(directory: Path, path: Path, games: dict[tuple[int, int], float]) -> None:
    """Refuse a run whose results.csv lacks a seating of a deal or deals the run played (a truncated file would
    otherwise be pooled as a smaller run)."""
    seats_by_deal: dict[int, set[int]] = defaultdict(set)
    for deal, seat in games:
        seats_by_deal[deal].add(seat)
    deals = set(seats_by_deal)
    one_seating = sorted(deal for deal, seats in seats_by_deal.items() if len(seats) != 2)
    if one_seating:
        raise ValueError(f"{str(path)!r} is incomplete: {len(one_seating)} deal(s) played with one seating only "
                         f"(deal {_first_few(one_seating)}); a duplicate unit is a deal with both seatings")
    played = played_deal_count(directory)
    if played is None:
        return
    count, source = played
    missing = sorted(set(range(count)) - deals)
    foreign = sorted(deals - set(range(count)))
    if missing:
        raise ValueError(f"{str(path)!r} is incomplete: {str(source)!r} says the run played {count} deal(s), each "
                         f"with both seatings, but results.csv lacks {len(missing)} of them "
                         f"(deal {_first_few(missing)})")
    if foreign:
        raise ValueError(f"{str(path)!r} holds deal {_first_few(foreign)}, but {str(source)!r} says the run played "
                         f"only deals 0..{count - 1}")


def _first_few(numbers: list[int], shown: int = 5) -> str:
    return ", ".join(str(number) for number in numbers[:shown]) + (", ..." if len(numbers) > shown else "")


def deal_margins(directory: Path, luck: LuckAdjustment | None = None) -> tuple[tuple[str, str], dict[int, float]]:
    """``((agent A, agent B), {deal: A's mean margin over the deal's seats})`` of one match run; with ``luck``
    each game's margin has the luck of its draws taken out (:func:`eval.luck.adjusted_game_margins`)."""
    pair, games = game_margins(directory)
    if luck is not None:
        games = adjusted_game_margins(Path(directory), games, luck)
    by_deal: dict[int, list[float]] = defaultdict(list)
    for (deal, _), margin in games.items():
        by_deal[deal].append(margin)
    return pair, {deal: sum(margins) / len(margins) for deal, margins in by_deal.items()}


def check_distinct_deals(directories: list[Path]) -> None:
    """Refuse runs that cannot be pooled as independent deal pairs: the same run twice, runs that share a deal
    (the same deck and dealer: a seed run again, or a copy), or runs under other rules. Each would be counted as
    if its deals were new, and the interval would narrow without new evidence. Runs without a ``deals.json``
    (results assembled by hand) are checked by folder only; a ``deals.json`` that does not read is refused."""
    seen_folders: dict[Path, Path] = {}
    seen_deals: dict[tuple[tuple[int, ...], int], tuple[Path, int]] = {}
    first_rules: tuple[Path, Rules] | None = None
    for directory in directories:
        folder = Path(directory).resolve()
        if folder in seen_folders:
            raise ValueError(f"{str(directory)!r} is given twice (as {str(seen_folders[folder])!r} too); each run's "
                             "deals would count twice")
        seen_folders[folder] = Path(directory)
        try:
            deals, rules = load_deals(Path(directory) / "deals.json")
        except FileNotFoundError:
            continue
        except ValueError as error:  # a damaged deal file would turn the checks off unseen: name it instead
            raise ValueError(f"{error}; the check that pooled runs share no deal and one rule set reads it") from None
        if first_rules is None:
            first_rules = (Path(directory), rules)
        elif rules != first_rules[1]:
            raise ValueError(f"{str(directory)!r} was played under the rules {rules_name(rules)!r} and "
                             f"{str(first_rules[0])!r} under {rules_name(first_rules[1])!r} (switches differ: "
                             f"{', '.join(differing_switches(first_rules[1], rules))}); pool runs of one rule set")
        for number, deal in enumerate(deals):
            key = (tuple(deal.deck), deal.dealer)
            if key in seen_deals:
                other, other_number = seen_deals[key]
                raise ValueError(f"{str(directory)!r} deal {number} is deal {other_number} of {str(other)!r} (the same "
                                 "deck and dealer): pooled, it would count twice; pool runs on other seeds")
            seen_deals[key] = (Path(directory), number)


def run_commits(directories: list[Path]) -> dict[str, int]:
    """How many of the runs each code version made (``versions.git_commit`` of their results.json; runs that do
    not say are left out)."""
    commits: dict[str, int] = defaultdict(int)
    for directory in directories:
        try:
            document = read_json_file(Path(directory) / "results.json", "match results")
        except (OSError, ValueError):
            continue
        versions = document.get("versions") if isinstance(document, dict) else None
        commit = versions.get("git_commit") if isinstance(versions, dict) else None
        if isinstance(commit, str):
            commits[commit] += 1
    return dict(commits)


def paired(first: Path, second: Path, luck: LuckAdjustment | None = None) -> tuple[str, str, str, MeanInterval]:
    """``(A of first, A of second, their common B, the per-deal-pair difference first minus second)``."""
    first_a, second_a, opponent, differences = paired_differences(first, second, luck)
    return first_a, second_a, opponent, mean_interval(differences)


def paired_differences(first: Path, second: Path,
                       luck: LuckAdjustment | None = None) -> tuple[str, str, str, list[float]]:
    """``(A of first, A of second, their common B, the per-deal-pair differences first minus second)``."""
    if Path(first).resolve() == Path(second).resolve():  # every difference 0: an interval of nothing measured
        raise ValueError(f"{str(first)!r} minus itself: --minus needs the run of another agent on the same deals")
    (first_a, first_b), first_margins = deal_margins(first, luck)
    (second_a, second_b), second_margins = deal_margins(second, luck)
    if first_b != second_b:
        raise ValueError(f"{str(first)!r} plays against {first_b} and {str(second)!r} against {second_b}: "
                         "a paired comparison needs the same opponent")
    played = []
    for directory in (first, second):
        try:
            deals, rules = load_deals(Path(directory) / "deals.json")
        except FileNotFoundError as error:
            raise ValueError(f"a paired comparison needs both runs' deals.json: {error}") from None
        # The decks, dealers and rules, not the file's bytes: a run on another's deal file names no master seed.
        played.append(([(tuple(deal.deck), deal.dealer) for deal in deals], rules))
    same = played[0] == played[1]
    if not same or first_margins.keys() != second_margins.keys():
        raise ValueError(f"{str(first)!r} and {str(second)!r} did not play the same deals")
    return first_a, second_a, first_b, [first_margins[deal] - second_margins[deal] for deal in first_margins]


def paired_pool(firsts: list[Path], seconds: list[Path],
                luck: LuckAdjustment | None = None) -> tuple[str, str, str, MeanInterval]:
    """:func:`paired` over several pairs of runs (``firsts[i]`` with ``seconds[i]``, e.g. one pair per seed), the
    per-deal-pair differences pooled; every pair must compare the same two agents against the same opponent."""
    if not firsts or len(firsts) != len(seconds):
        raise ValueError(f"--minus pairs runs one to one: {len(firsts)} run(s) against {len(seconds)}")
    check_distinct_deals(firsts)  # each second plays its first's deals (paired_differences checks that)
    names = None
    differences: list[float] = []
    for first, second in zip(firsts, seconds):
        *these, values = paired_differences(first, second, luck)
        if names is not None and tuple(these) != names:
            raise ValueError(f"{str(first)!r} minus {str(second)!r} compares {these[0]} with {these[1]} against "
                             f"{these[2]}, not {names[0]} with {names[1]} against {names[2]}")
        names = tuple(these)
        differences += values
    return (*names, mean_interval(differences))


def pool(directories: list[Path], luck: LuckAdjustment | None = None) -> tuple[tuple[str, str], MeanInterval]:
    """The agent pair and the pooled margin per deal over the runs in ``directories`` (luck-adjusted with
    ``luck``)."""
    if not directories:
        raise ValueError("no match results to pool")
    pair = None
    for directory in directories:
        this_pair, _ = game_margins(directory)
        if pair is not None and this_pair != pair:
            raise ValueError(f"{str(directory)!r} is a match of {this_pair[0]} vs {this_pair[1]}, "
                             f"not of {pair[0]} vs {pair[1]}")
        pair = this_pair
    check_distinct_deals(directories)  # before the luck, which takes a while
    units = [margin for directory in directories for margin in unit_margins(directory, luck)[1]]
    return pair, mean_interval(units)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.pool", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="output directories of sixtysix match (--out)")
    parser.add_argument("--minus", type=Path, nargs="+", default=None,
                        help="runs of another agent against the same opponent on the same deals, one per run: "
                             "print the runs' margin minus these, paired by deal (pooled over the pairs of runs)")
    parser.add_argument("--luck", action="store_true",
                        help="also print the figure with the luck of the talon's draws taken out of every game "
                             "(eval.luck; computed once per run and kept in RUN/luck.json)")
    parser.add_argument("--luck-orders", type=int, default=DEFAULT_ORDERS,
                        help=f"talon orders per value of a draw's luck (default {DEFAULT_ORDERS})")
    parser.add_argument("--luck-seed", type=int, default=0, help="generator seed of the luck's rollouts (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="processes computing the luck (default 1)")
    args = parser.parse_args(argv)
    try:
        commits = run_commits(args.runs + (args.minus or []))
        if len(commits) > 1:
            made = ", ".join(f"{commit[:10]} ({count} run{'s' if count > 1 else ''})"
                             for commit, count in commits.items())
            print(f"note: these runs were made by {len(commits)} versions of the code: {made}; a spec names the same "
                  "agent in all of them only if its code did not change between them", file=sys.stderr)
        luck = LuckAdjustment(args.luck_orders, args.luck_seed, args.workers) if args.luck else None
        raw_width = None
        for adjustment in (None, luck) if luck is not None else (None,):
            label = "" if adjustment is None else f"luck-adjusted ({adjustment.orders} talon orders per draw): "
            if args.minus is not None:
                first_a, second_a, opponent, interval = paired_pool(args.runs, args.minus, adjustment)
                runs = f" from {len(args.runs)} pairs of runs" if len(args.runs) > 1 else ""
                line = (f"{label}{first_a} minus {second_a} (both against {opponent}): {interval.n} duplicate deal "
                        f"pairs{runs}, difference per deal {interval.mean:+.3f}, "
                        f"95% CI [{interval.low:+.3f}, {interval.high:+.3f}]")
            else:
                (agent_a, agent_b), interval = pool(args.runs, adjustment)
                line = (f"{label}{agent_a} vs {agent_b}: {interval.n} duplicate deal pairs from {len(args.runs)} "
                        f"runs, margin per deal {interval.mean:+.3f}, 95% CI [{interval.low:+.3f}, {interval.high:+.3f}]")
            width = interval.high - interval.low
            if adjustment is None:
                raw_width = width
            elif raw_width:  # the correction is subtracted whole: it narrows only as far as it models the play
                line += f" (width {width / raw_width:.2f} of the raw interval's)"
            print(line)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
