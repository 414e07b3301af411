"""Where a match's margin comes from: agent A's game points split by who closed the talon (R10).

A closing stakes the deal on the closer reaching 66 (R10; if he fails, his opponent scores, R16), so a margin
against one opponent and another can differ mostly in the closed deals. This replays every game of a
match run's journal (deal runs only, not ``--match`` Bummerls) from its deal file and sorts it by who closed: A, B
or nobody (the talon ran out, R7, or the deal was decided before). For each it reports the games, A's mean game
points in them, and their share of A's margin per deal: the three shares add up to the run's margin. The share's
95 % interval is a t interval over the duplicate deal pairs, as the run's own margin is::

    python -m bench.closings results/RUN [results/OTHER ...] [--out closings.json] [--plot closings.png]

(docs/strength.md, "Session 54": against ``pimc_v1`` most of ``expert``'s lost margin is in the deals the opponent
closed.)

``--rates`` adds what a player's closing says about his hand: at every lead of each seat where closing was legal,
whether the ``heuristic``'s filter found closing plausible there (points, marriages and sure cards, from his own
hand), whether closing wins the true deal (solved exactly with every card seen, R10, R16), and whether he closed.
The rates, with Wilson intervals, are the likelihoods an inference of his hand would give his closing and his
playing on (docs/strength.md, "Session 58").
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from eval.deals import load_deals
from eval.luck import read_journal
from eval.report import write_figure
from eval.stats import mean_interval, wilson_interval
from sixtysix_env import Game, Rules
from sixtysix_env.fileio import write_json_atomic

from .checks import check_image_paths, check_output_paths

CLOSERS = ("A", "B", "nobody")  # who closed the talon (R10) in a game, from agent A's side


def game_closer(rules: Rules, deck: list[int], dealer: int, seat_a: int, actions: list[int]) -> tuple[str, int]:
    """(who closed: one of :data:`CLOSERS`, A's game points: positive for a win, negative for a loss, R16) of one
    game replayed from its deck and actions; an action the rules refuse, or a game the actions do not finish, is a
    ``ValueError``."""
    game = Game.deal(rules, deck=deck, dealer=dealer)
    for action in actions:
        game.apply(action)  # refuses an illegal action by name
    if not game.is_over:
        raise ValueError(f"the {len(actions)} recorded actions do not finish the deal")
    closer = "nobody" if game.closed_by is None else "A" if game.closed_by == seat_a else "B"
    return closer, int(game.returns()[seat_a])


def closer_split(run: str | Path, progress: bool = True) -> dict[str, Any]:
    """The split of one match run (module docstring): ``{"agents": [A, B], "pairs": n, "margin": A's mean game
    points per deal, "closers": {closer: {"games", "mean_points", "share", "low", "high"}}}``."""
    run = Path(run)
    settings, games, _ = read_journal(run)
    deals, rules = load_deals(run / "deals.json")
    if not games:  # no deal pair to take a margin over
        raise ValueError(f"{str(run)!r} holds no finished game (a run stopped before its first deal pair?)")
    games_per_deal = Counter(game["deal"] for game in games)
    if any(count != 2 for count in games_per_deal.values()):
        raise ValueError(f"{str(run)!r} holds a deal without both of its games (an unfinished run?)")
    per_pair: dict[int, dict[str, float]] = {}
    counts = {closer: 0 for closer in CLOSERS}
    points = {closer: 0 for closer in CLOSERS}
    for game in tqdm(games, desc=f"replaying {run.name}", unit="game", disable=not progress):
        deal = game["deal"]
        if not 0 <= deal < len(deals):
            raise ValueError(f"the journal of {str(run)!r} names deal {deal}, which its deals.json does not hold")
        try:
            closer, margin = game_closer(rules, list(deals[deal].deck), game["dealer"], game["seat_a"],
                                         game["actions"])
        except ValueError as error:
            raise ValueError(f"{str(run)!r}: deal {deal} with A in seat {game['seat_a']} does not replay: "
                             f"{error}") from None
        counts[closer] += 1
        points[closer] += margin
        # Each deal pair's margin is the mean of its two games (the unit of the run's own interval).
        per_pair.setdefault(deal, {name: 0.0 for name in CLOSERS})[closer] += margin / 2
    closers = {}
    for closer in CLOSERS:
        interval = mean_interval([pair[closer] for pair in per_pair.values()])
        bounds = interval.to_dict()  # one deal pair has no interval: its bounds are None, not infinite (not JSON)
        closers[closer] = {"games": counts[closer],
                           "mean_points": points[closer] / counts[closer] if counts[closer] else None,
                           "share": interval.mean, "low": bounds["low"], "high": bounds["high"]}
    margin = mean_interval([sum(pair.values()) for pair in per_pair.values()]).mean
    return {"run": str(run), "agents": list(settings["agents"]), "pairs": len(per_pair), "margin": margin,
            "closers": closers}


def closing_rates(run: str | Path, progress: bool = True) -> dict[str, Any]:
    """Each seat's closings at its leads where closing was legal (module docstring): ``{"run", "agents": [A, B],
    "rates": {"A"|"B": [{"plausible", "wins", "closed", "leads", "rate", "low", "high"}, ...]}}``, one row per
    (plausible, wins) in that order: (True, True), (True, False), (False, True), (False, False)."""
    from sixtysix_env.actions import CLOSE
    from sixtysix_env.core import state_from_game
    from sixtysix_env.core.heuristic import close_plausible
    from sixtysix_env.game import LEAD

    from agents.rule_based import HeuristicAgent
    from agents.solver import closing_wins

    params = HeuristicAgent().core_params()
    run = Path(run)
    settings, games, _ = read_journal(run)
    deals, rules = load_deals(run / "deals.json")
    counts: Counter = Counter()
    for game_record in tqdm(games, desc=f"closing rates of {run.name}", unit="game", disable=not progress):
        deal = game_record["deal"]
        if not 0 <= deal < len(deals):
            raise ValueError(f"the journal of {str(run)!r} names deal {deal}, which its deals.json does not hold")
        game = Game.deal(rules, deck=list(deals[deal].deck), dealer=game_record["dealer"])
        for action in game_record["actions"]:
            if game.stage == LEAD and CLOSE in game.legal_actions():
                seat = "A" if game.current_player == game_record["seat_a"] else "B"
                plausible = bool(close_plausible(state_from_game(game), params))
                counts[seat, plausible, closing_wins(game), action == CLOSE] += 1
            try:
                game.apply(action)  # refuses an illegal action by name
            except ValueError as error:  # say which run and game too
                raise ValueError(f"the journal of {str(run)!r}, deal {deal} (dealer {game_record['dealer']}): "
                                 f"{error}") from error
    rates: dict[str, list[dict[str, Any]]] = {}
    for seat in ("A", "B"):
        rows = []
        for plausible, wins in ((True, True), (True, False), (False, True), (False, False)):
            closed = counts[seat, plausible, wins, True]
            leads = closed + counts[seat, plausible, wins, False]
            low, high = wilson_interval(closed, leads) if leads else (None, None)
            rows.append({"plausible": plausible, "wins": wins, "closed": closed, "leads": leads,
                         "rate": closed / leads if leads else None, "low": low, "high": high})
        rates[seat] = rows
    return {"run": str(run), "agents": list(settings["agents"]), "rates": rates}


def rates_table(rates: dict[str, Any]) -> str:
    """One run's closing rates as a Markdown table."""
    agent_a, agent_b = rates["agents"]
    lines = [f"closing rates at the leads where closing was legal: `{agent_a}` (A) vs `{agent_b}` (B)", "",
             "| seat | heuristic's filter: plausible | closing wins the true deal | closed / leads | rate (95% CI) |",
             "| --- | --- | --- | ---: | --- |"]
    for seat, rows in rates["rates"].items():
        for row in rows:
            rate = "" if row["rate"] is None else f"{row['rate']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"
            lines.append(f"| {seat} | {'yes' if row['plausible'] else 'no'} | {'yes' if row['wins'] else 'no'} | "
                         f"{row['closed']} / {row['leads']} | {rate} |")
    return "\n".join(lines)


def split_table(split: dict[str, Any]) -> str:
    """One run's split as a Markdown table."""
    agent_a, agent_b = split["agents"]
    lines = [f"`{agent_a}` (A) vs `{agent_b}` (B), {split['pairs']} deal pairs, margin per deal "
             f"{split['margin']:+.3f}", "",
             "| closed by | games | A's game points per game | share of A's margin per deal (95% CI) |",
             "| --- | ---: | ---: | --- |"]
    for closer, row in split["closers"].items():
        mean = "" if row["mean_points"] is None else f"{row['mean_points']:+.3f}"
        bounds = "(one deal pair: no interval)" if row["low"] is None else f"[{row['low']:+.3f}, {row['high']:+.3f}]"
        lines.append(f"| {closer} | {row['games']} | {mean} | {row['share']:+.3f} {bounds} |")
    return "\n".join(lines)


def plot_splits(splits: list[dict[str, Any]], path: str | Path) -> None:
    """A grouped bar chart of each run's shares with their intervals, written atomically to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figure, axes = plt.subplots(figsize=(8, 5.5))
    width = 0.8 / len(splits)
    for index, split in enumerate(splits):
        rows = [split["closers"][closer] for closer in CLOSERS]
        shares = np.array([row["share"] for row in rows])
        errors = np.array([[0.0 if row["low"] is None else row["share"] - row["low"] for row in rows],
                           [0.0 if row["high"] is None else row["high"] - row["share"] for row in rows]])
        axes.bar(np.arange(len(CLOSERS)) + index * width, shares, width, yerr=errors, capsize=3,
                 label=f"{split['agents'][0]} vs {split['agents'][1]} ({split['margin']:+.3f})")
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xticks(np.arange(len(CLOSERS)) + width * (len(splits) - 1) / 2,
                    [f"closed by {closer}" for closer in CLOSERS])
    axes.set_ylabel("share of A's margin per deal (game points)")
    axes.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    figure.tight_layout()
    write_figure(figure, path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.closings", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="match run directories (sixtysix match --out), deal runs only")
    parser.add_argument("--out", help="also write the splits as JSON to this file")
    parser.add_argument("--plot",
                        help="also draw the shares as a bar chart into this image (PNG, or the format of its suffix)")
    parser.add_argument("--rates", action="store_true",
                        help="also each seat's closing rates by whether closing was plausible and wins the true deal")
    args = parser.parse_args(argv)
    check_output_paths(parser, [("--out", args.out)])
    check_image_paths(parser, [("--plot", args.plot)])
    try:
        splits = [closer_split(run) for run in args.runs]
        if args.rates:
            for split in splits:
                split["closing_rates"] = closing_rates(split["run"])["rates"]
    except ValueError as error:
        parser.error(str(error))
    for split in splits:
        print(split_table(split), end="\n\n")
        if args.rates:
            print(rates_table({"agents": split["agents"], "rates": split["closing_rates"]}), end="\n\n")
    if args.out:
        write_json_atomic(args.out, {"format": "sixtysix-closings", "version": 1, "splits": splits})
    if args.plot:
        plot_splits(splits, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
