"""What a search's solved closings credit it with beyond what it then makes of them: the clairvoyance premium (R10).

A PIMC search values closing the talon (R10) by solving the closed deal in each sampled world with every card seen,
though after the closing it will play without seeing them. At every phase-1 lead of the searching ``--agent`` where
closing is legal (talon open, more than two cards), against ``--opponent``:

- a twin search without the prune (``prune=none``, so every action keeps every world) gives the closing's value in
  each of its worlds, their mean and spread (standard deviation), and the other actions' means;
- the true deal is forked, the closing applied, and (a) solved with every card seen
  (:func:`agents.solver.solve_value`), (b) played on by the two agents as they play (the same agent objects, so
  the deal itself goes on after the fork from the generators' later state).

The premium (a) minus (b) is what the solve credits the closing with beyond this agent's play of it, in the true
deal. The summary gives its mean with a t interval and its least-squares slope on the spread with a 95 % interval,
both over deals (a deal's leads share its cards and play: the mean is a ratio over deals, the slope's error the
cluster sandwich; before session 65 both treated every lead as independent), for every such lead, the leads where
closing is within ``--within`` game points of the best other action and the leads where the agent closed, and
whether the worlds are calibrated (the true deal's solve minus the worlds' mean)::

    python -m bench.closing_premium --deals 2000 --seed 200 --workers 2 --out results/s57_closing_premium.json
    python -m bench.closing_premium --from results/s57_closing_premium.json --plot docs/strength/session57_premium.png

Deal ``d`` is dealt from seed ``seed + d`` with dealer ``d % 2``; the searcher sits in seat ``d % 2`` for even
``d // 2`` and in the other seat otherwise, so it deals and leads equally often; every agent is seeded from ``d``
(docs/strength.md, session 57).
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from itertools import repeat
from typing import Any

import numpy as np
from scipy import stats
from tqdm import tqdm

from agents.registry import make_agent, with_parameter
from agents.solver import solve_value
from eval.stats import ratio_interval
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE
from sixtysix_env.fileio import write_json_atomic
from sixtysix_env.schema import finite_float, read_json_file, require_bool, require_number

from .checks import check_agent_specs, check_image_paths, check_output_paths

CLOCK_FREE_EXPERT = "expert:seconds=none,samples=300,threads=1"
ROW_KEYS = ("deal", "close_mean", "best_other", "close_std", "solved_true", "honest_true", "closed")  # summary reads
SPREAD_BINS = (0.0, 0.01, 0.5, 1.0, 1.5, np.inf)  # the closing's spread over the worlds, game points


def searcher_seat(deal: int) -> int:
    """The searcher's seat in deal ``deal`` (dealer ``deal % 2``): alternately the dealer and his opponent."""
    return deal % 2 if (deal // 2) % 2 == 0 else 1 - deal % 2


def deal_rows(deal: int, seed: int, agent: str, opponent: str) -> list[dict[str, Any]]:
    """One row per lead of the searcher in deal ``deal`` where closing is legal (module docstring)."""
    rules = Rules.preset("standard")
    game = Game.deal(rules, seed=seed + deal, dealer=deal % 2)
    seat = searcher_seat(deal)
    searcher = make_agent(agent, seed=deal * 4)
    twin = make_agent(with_parameter(agent, "prune", "none"), seed=deal * 4 + 1)
    players = {seat: searcher, 1 - seat: make_agent(opponent, seed=deal * 4 + 2)}
    for player, each in players.items():
        each.start_deal(player, rules)
    twin.start_deal(seat, rules)
    rows = []
    while not game.is_over:
        infoset = InformationSet(game, game.current_player)
        row = None
        if (infoset.player == seat and CLOSE in infoset.legal_actions and len(infoset.legal_actions) > 1
                and game.talon_size > 2):
            values = twin.action_values(infoset, None)
            closing = twin.world_values[:, CLOSE]
            fork = game.clone()
            fork.apply(CLOSE)
            solved = fork.returns()[seat] if fork.is_over else solve_value(fork)
            while not fork.is_over:
                fork_infoset = InformationSet(fork, fork.current_player)
                fork.apply(players[fork_infoset.player].act(fork_infoset))
            row = {"deal": deal, "history": list(game.history), "talon": game.talon_size,
                   "close_mean": float(closing.mean()), "close_std": float(closing.std()),
                   "best_other": max(value for other, value in values.items() if other != CLOSE),
                   "solved_true": int(solved), "honest_true": int(fork.returns()[seat]), "worlds": len(closing)}
            rows.append(row)
        action = players[infoset.player].act(infoset)
        if row is not None:
            row["closed"] = action == CLOSE
        game.apply(action)
    return rows


def _premium(row: dict[str, Any]) -> float:
    return row["solved_true"] - row["honest_true"]


def _mean_over_deals(rows: list[dict[str, Any]], value=_premium):
    """The mean of ``value`` per lead (the premium by default) with a t interval over deals: a deal's leads share its
    cards and its play, so the deal is the independent unit (:func:`eval.stats.ratio_interval` of the deals' sums
    over their leads)."""
    sums: dict[int, list[float]] = {}
    for row in rows:
        entry = sums.setdefault(row["deal"], [0.0, 0])
        entry[0] += value(row)
        entry[1] += 1
    return ratio_interval([entry[0] for entry in sums.values()], [entry[1] for entry in sums.values()])


def _slope_over_deals(spread: np.ndarray, premium: np.ndarray, deals: np.ndarray) -> tuple[float, float, float]:
    """(intercept, slope, the slope's 95 % half-width) of the least-squares line, its standard error robust to leads
    of one deal erring together (the cluster sandwich, CR1, with a t quantile on deals - 1 degrees of freedom)."""
    design = np.column_stack([np.ones_like(spread), spread])
    bread = np.linalg.inv(design.T @ design)
    coefficients = bread @ design.T @ premium
    residuals = premium - design @ coefficients
    clusters = np.unique(deals)
    meat = np.zeros((2, 2))
    for deal in clusters:
        score = design[deals == deal].T @ residuals[deals == deal]
        meat += np.outer(score, score)
    count, leads = len(clusters), len(premium)
    correction = count / (count - 1) * (leads - 1) / (leads - 2)
    covariance = correction * bread @ meat @ bread
    half = stats.t.ppf(0.975, count - 1) * float(np.sqrt(covariance[1, 1]))
    return float(coefficients[0]), float(coefficients[1]), half


def _premium_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    premium = np.array([_premium(row) for row in rows])
    deals = np.array([row["deal"] for row in rows])
    figures: dict[str, Any] = {"leads": len(rows), "deals": len(set(deals.tolist()))}
    if len(rows) < 3 or figures["deals"] < 2:
        return figures
    interval = _mean_over_deals(rows)
    spread = np.array([row["close_std"] for row in rows])
    intercept, slope, half = (_slope_over_deals(spread, premium, deals) if np.ptp(spread) > 0
                              else (math.nan, math.nan, math.nan))
    figures.update(premium=interval.mean, premium_low=interval.low, premium_high=interval.high,
                   slope=slope, slope_low=slope - half, slope_high=slope + half,
                   intercept=intercept, mean_spread=float(spread.mean()), max_spread=float(spread.max()))
    # No slope where every spread is the same (and no interval where the premium never varies): None, not NaN.
    return {key: None if isinstance(value, float) and not np.isfinite(value) else value
            for key, value in figures.items()}


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def summary(rows: list[dict[str, Any]], within: float = 1.0) -> dict[str, Any]:
    """The figures of the module docstring for ``rows`` of :func:`deal_rows`."""
    near = [row for row in rows if abs(row["close_mean"] - row["best_other"]) < within]
    bins = []
    for low, high in zip(SPREAD_BINS, SPREAD_BINS[1:]):
        inside = [row for row in near if low <= row["close_std"] < high]
        bin_: dict[str, Any] = {"low": low, "high": None if high == np.inf else high, "leads": len(inside),
                                "premium": None}
        if inside:
            interval = _mean_over_deals(inside).to_dict()
            bin_.update(premium=interval["mean"], premium_low=interval["low"], premium_high=interval["high"],
                        mean_spread=float(np.mean([row["close_std"] for row in inside])))  # no interval for one
        bins.append(bin_)
    return {"within": within, "every_lead": _premium_figures(rows), "near": _premium_figures(near),
            "closed": _premium_figures([row for row in rows if row["closed"]]),
            "world_calibration": (_mean_over_deals(near, lambda row: row["solved_true"] - row["close_mean"]).to_dict()
                                  if len({row["deal"] for row in near}) > 1 else None),
            "near_by_spread": bins}


def premium_rows(deals: range, seed: int, agent: str, opponent: str, workers: int = 1,
                 progress: bool = True) -> list[dict[str, Any]]:
    """Every row of ``deals``, in deal order whatever the ``workers`` (each deal seeds its own agents)."""
    arguments = (deals, repeat(seed), repeat(agent), repeat(opponent))
    with ProcessPoolExecutor(workers) if workers > 1 else nullcontext() as pool:
        per_deal = pool.map(deal_rows, *arguments, chunksize=4) if pool else map(deal_rows, *arguments)
        return [row for rows in tqdm(per_deal, total=len(deals), desc="deals", unit="deal", disable=not progress)
                for row in rows]


def plot_premium(result: dict[str, Any], path: str) -> None:
    """The premium of the 'near' leads against the closing's spread, from a :func:`summary`: each bin's mean with
    its t interval and the least-squares line, written atomically to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from eval.report import write_figure

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for bin_ in result["near_by_spread"]:
        if bin_["leads"] > 1 and bin_.get("premium_high") is not None:  # leads of two deals or more
            high = bin_["premium_high"]
            axes.errorbar(bin_["mean_spread"], bin_["premium"], yerr=high - bin_["premium"], fmt="o",
                          color="tab:blue", capsize=3)
            axes.annotate(f"{bin_['leads']}", (bin_["mean_spread"], high), textcoords="offset points",
                          xytext=(0, 4), ha="center", fontsize=7)
    figures = result["near"]
    if figures.get("slope") is not None and figures.get("slope_low") is not None:
        line = np.linspace(0, figures["max_spread"], 20)
        axes.plot(line, figures["intercept"] + figures["slope"] * line, color="tab:orange",
                  label=f"least squares: slope {figures['slope']:+.3f} [{figures['slope_low']:+.3f}, "
                        f"{figures['slope_high']:+.3f}]")
        axes.legend(fontsize=8)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xlabel("spread of the closing's solved values over the search's worlds (game points)")
    axes.set_ylabel("premium: solved minus played (game points)")
    axes.set_title(f"closings within {result['within']:g} game point(s) of the best other action: "
                   f"{figures['leads']} leads", fontsize=9)
    figure.tight_layout()
    write_figure(figure, path, dpi=120)


def _line(label: str, figures: dict[str, Any]) -> str:
    if "premium" not in figures:
        return f"| {label} | {figures['leads']} | | | |"
    premium, slope = (f"{_signed(figures[key])} [{_signed(figures[key + '_low'])}, {_signed(figures[key + '_high'])}]"
                      for key in ("premium", "slope"))
    return f"| {label} | {figures['leads']} | {premium} | {slope} | {figures['mean_spread']:.2f} |"


# The options that say which deals are played and by whom, with their defaults (an --out file records them).
PLAY_OPTIONS = {"deals": 200, "seed": 200, "first": 0, "agent": CLOCK_FREE_EXPERT, "opponent": "heuristic"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.closing_premium",
                                     description=(__doc__ or "").split("\n\n")[0])
    # PLAY_OPTIONS: None when not given, since with --from the file's values stand.
    parser.add_argument("--deals", type=int, help="deals to play (default 200)")
    parser.add_argument("--seed", type=int, help="deal d is dealt from seed + d (default 200)")
    parser.add_argument("--first", type=int, help="the first deal's number d (default 0)")
    parser.add_argument("--agent", help=f"the searching agent, a rollout search spec (default {CLOCK_FREE_EXPERT})")
    parser.add_argument("--opponent", help="its opponent, an agent spec (default heuristic)")
    parser.add_argument("--within", type=finite_float, default=1.0,
                        help="the 'near' leads: closing within this many game points of the best other action")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--out", help="also write the rows and the summary as JSON (atomically)")
    parser.add_argument("--from", dest="source", metavar="FILE",
                        help="summarise the rows of an earlier --out file instead of playing deals")
    parser.add_argument("--plot",
                        help="also draw the premium against the spread (PNG, or the format of its suffix; atomically)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.source:
        given = [name for name in PLAY_OPTIONS if getattr(args, name) is not None]
        if given:  # it would be silently replaced by the file's
            parser.error(f"--{given[0]} is read from the --from file: give it only when playing deals")
    for name, default in PLAY_OPTIONS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.deals < 1 or args.first < 0:
        parser.error("--deals must be at least 1 and --first at least 0")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if not args.within > 0:
        parser.error("--within must be a positive number of game points")
    check_agent_specs(parser, [("--agent", args.agent), ("--opponent", args.opponent)])
    # The twin's per-world values are what the premium is read from, and only the rollout search keeps them: any
    # other search failed at the first lead where closing was legal, perhaps deep into a long run.
    if not hasattr(type(make_agent(args.agent, seed=0)), "world_values"):
        parser.error(f"--agent {args.agent!r}: not a rollout search (rollout:..., expert), which keeps the per-world "
                     f"values this tool reads")
    check_agent_specs(parser, [("--agent", with_parameter(args.agent, "prune", "none"))])  # its twin
    check_output_paths(parser, [("--out", args.out)])
    check_image_paths(parser, [("--plot", args.plot)])
    if args.source:
        try:
            written = read_json_file(args.source, "a closing premium file")
            rows = written["rows"]
            args.deals, args.seed, args.first = written["deals"], written["seed"], written["first"]
            args.agent, args.opponent = written["agent"], written["opponent"]
            if not isinstance(rows, list):
                raise ValueError("its rows are not a list")
            for index, row in enumerate(rows):
                if not isinstance(row, dict):  # else `in` below fails with a TypeError that names no row
                    raise ValueError(f"row {index} is not an object of {', '.join(ROW_KEYS)}")
                missing = [key for key in ROW_KEYS if key not in row]
                if missing:
                    raise ValueError(f"row {index} lacks {', '.join(missing)}")
                # summary() does arithmetic on these: a string or null there would fail later with a traceback
                for key in ROW_KEYS:
                    (require_bool if key == "closed" else require_number)(row[key], f"row {index}: {key}")
        except (KeyError, TypeError, ValueError) as error:
            parser.error(f"--from {args.source!r} is not an --out file of this command: {error!r}")
    else:
        rows = premium_rows(range(args.first, args.first + args.deals), args.seed, args.agent, args.opponent,
                            args.workers, progress=not args.no_progress)
    result = summary(rows, args.within)
    print(f"{len(rows)} leads where closing was legal in {args.deals} deals (seed {args.seed})\n")
    print("| leads | count | premium (solve minus play) | slope on the spread | mean spread |")
    print("| --- | ---: | --- | --- | ---: |")
    print(_line("every lead", result["every_lead"]))
    print(_line(f"closing within {args.within:g} of the best other action", result["near"]))
    print(_line("the agent closed", result["closed"]))
    if args.plot:
        plot_premium(result, args.plot)
    if args.out:
        write_json_atomic(args.out, {"deals": args.deals, "seed": args.seed, "first": args.first,
                                     "agent": args.agent, "opponent": args.opponent, "summary": result,
                                     "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
