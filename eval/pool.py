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
of Bummerls (``--match``) or of other agent pairs are refused by name.

``--luck`` also prints each figure with the luck of the talon's draws taken out of every game's margin
(:mod:`eval.luck`, AIVAT's chance correction): the same expectation, a narrower interval.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

from .luck import DEFAULT_ORDERS, LuckAdjustment, adjusted_game_margins
from .stats import MeanInterval, mean_interval


def unit_margins(directory: Path, luck: LuckAdjustment | None = None) -> tuple[tuple[str, str], list[float]]:
    """``((agent A, agent B), per-unit margins of A)`` of one match run's ``results.csv`` (luck-adjusted with
    ``luck``)."""
    pair, by_deal = deal_margins(directory, luck)
    return pair, list(by_deal.values())


def game_margins(directory: Path) -> tuple[tuple[str, str], dict[tuple[int, int], float]]:
    """``((agent A, agent B), {(deal, A's seat): A's margin})`` of one match run's ``results.csv``."""
    path = Path(directory) / "results.csv"
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise ValueError(f"cannot read the match results {str(path)!r}: {error.strerror or error}") from None
    if not rows or "margin_a" not in rows[0]:
        raise ValueError(f"{str(path)!r} is not the results.csv of a match (no margin_a column or no rows)")
    pairs = {(row["agent_a"], row["agent_b"]) for row in rows}
    if len(pairs) != 1:
        raise ValueError(f"{str(path)!r} holds {len(pairs)} agent pairs; pool the runs of one pair")
    if any(row.get("bummerl_game") for row in rows):
        raise ValueError(f"{str(path)!r} is a run of Bummerls (--match); only deal pairs are pooled")
    games: dict[tuple[int, int], float] = {}
    try:
        for row in rows:
            key = int(row["deal"]), int(row["seat_a"])
            if key in games:
                raise ValueError(f"deal {key[0]} with A in seat {key[1]} appears twice")
            games[key] = float(row["margin_a"])
    except (KeyError, ValueError) as error:
        raise ValueError(f"{str(path)!r}: a malformed deal, seat or margin ({error})") from None
    return pairs.pop(), games


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


def paired(first: Path, second: Path, luck: LuckAdjustment | None = None) -> tuple[str, str, str, MeanInterval]:
    """``(A of first, A of second, their common B, the per-deal-pair difference first minus second)``."""
    first_a, second_a, opponent, differences = paired_differences(first, second, luck)
    return first_a, second_a, opponent, mean_interval(differences)


def paired_differences(first: Path, second: Path,
                       luck: LuckAdjustment | None = None) -> tuple[str, str, str, list[float]]:
    """``(A of first, A of second, their common B, the per-deal-pair differences first minus second)``."""
    (first_a, first_b), first_margins = deal_margins(first, luck)
    (second_a, second_b), second_margins = deal_margins(second, luck)
    if first_b != second_b:
        raise ValueError(f"{str(first)!r} plays against {first_b} and {str(second)!r} against {second_b}: "
                         "a paired comparison needs the same opponent")
    deals = [Path(directory) / "deals.json" for directory in (first, second)]
    try:
        same = deals[0].read_bytes() == deals[1].read_bytes()
    except OSError as error:
        raise ValueError(f"a paired comparison needs both runs' deals.json: {error.strerror or error} "
                         f"({error.filename})") from None
    if not same or first_margins.keys() != second_margins.keys():
        raise ValueError(f"{str(first)!r} and {str(second)!r} did not play the same deals")
    return first_a, second_a, first_b, [first_margins[deal] - second_margins[deal] for deal in first_margins]


def paired_pool(firsts: list[Path], seconds: list[Path],
                luck: LuckAdjustment | None = None) -> tuple[str, str, str, MeanInterval]:
    """:func:`paired` over several pairs of runs (``firsts[i]`` with ``seconds[i]``, e.g. one pair per seed), the
    per-deal-pair differences pooled; every pair must compare the same two agents against the same opponent."""
    if not firsts or len(firsts) != len(seconds):
        raise ValueError(f"--minus pairs runs one to one: {len(firsts)} run(s) against {len(seconds)}")
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
    units: list[float] = []
    for directory in directories:
        this_pair, margins = unit_margins(directory, luck)
        if pair is not None and this_pair != pair:
            raise ValueError(f"{str(directory)!r} is a match of {this_pair[0]} vs {this_pair[1]}, "
                             f"not of {pair[0]} vs {pair[1]}")
        pair = this_pair
        units += margins
    return pair, mean_interval(units)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
        luck = LuckAdjustment(args.luck_orders, args.luck_seed, args.workers) if args.luck else None
        for adjustment in (None, luck) if luck is not None else (None,):
            label = "" if adjustment is None else f"luck-adjusted ({adjustment.orders} talon orders per draw): "
            if args.minus is not None:
                first_a, second_a, opponent, interval = paired_pool(args.runs, args.minus, adjustment)
                runs = f" from {len(args.runs)} pairs of runs" if len(args.runs) > 1 else ""
                print(f"{label}{first_a} minus {second_a} (both against {opponent}): {interval.n} duplicate deal "
                      f"pairs{runs}, difference per deal {interval.mean:+.3f}, "
                      f"95% CI [{interval.low:+.3f}, {interval.high:+.3f}]")
            else:
                (agent_a, agent_b), interval = pool(args.runs, adjustment)
                print(f"{label}{agent_a} vs {agent_b}: {interval.n} duplicate deal pairs from {len(args.runs)} runs, "
                      f"margin per deal {interval.mean:+.3f}, 95% CI [{interval.low:+.3f}, {interval.high:+.3f}]")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
