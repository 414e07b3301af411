"""Bummerl equity gained per deal (R17): how much a player's play moves his chance to win the Bummerl.

A Bummerl-aware search plays a deal differently at each score, so its strength is a Bummerl win rate, which whole
Bummerls measure slowly (a Bummerl is a handful of deals and one bit of outcome). This measures it deal by deal
instead, as backgammon programs are compared by equity per game: every deal starts from a score drawn from where
Bummerls pass (the scores at the start of a deal in Bummerls, by default between equal players:
:mod:`agents.match_equity`), is played twice with the seats swapped (each agent keeping its own score), and each game
is valued by the change of agent A's chance to win the Bummerl (his equity after the deal minus before). Summed over
the deals of a Bummerl the changes telescope to its outcome minus the chance at 0:0 (1/2 between equal players), so
the mean change times the deals a Bummerl lasts estimates the Bummerl win rate's distance from it; two agents on the
same deals and scores are compared deal pair by deal pair. ``--win-chance P`` measures for a player who wins the
share ``P`` of the scored deals (A against a weaker B): the scores are drawn from where such Bummerls pass and
valued by such a player's chance to win from them. The changes telescope to the outcome whatever the table, but a
table is what a Bummerl-aware search maximises, so comparing two searches that presume different chances is fair
only in the table of the chance A really has::

    python -m bench.bummerl_equity expert heuristic --deals 1000 --seed 95 --out results/be_expert_s95.json
    python -m bench.bummerl_equity expert:objective=bummerl heuristic --deals 1000 --seed 95 --out results/be_b_s95.json
    python -m bench.bummerl_equity --minus results/be_b_s95.json results/be_expert_s95.json
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from agents import make_agent
from agents.match_equity import DEAL_RESULT_SHARES, bummerl_equity, checked_win_chance
from eval.deals import derive_seed, generate_deals
from eval.play import play_deal
from eval.stats import mean_interval
from sixtysix_env import Game, Rules
from sixtysix_env.fileio import write_json_atomic
from sixtysix_env.schema import finite_float, finite_number, read_json_file, require_number

from .checks import check_agent_specs, check_output_paths

FORMAT = "sixtysix-bummerl-equity"
DOCUMENT_KEYS = ("agents", "seed", "deals_per_bummerl", "rows")  # what :func:`paired` and :func:`summary` read
ROW_KEYS = ("equity_change", "margin")


def score_visits(target: int = 7, shares=DEAL_RESULT_SHARES, win_chance: float = 0.5) -> dict[tuple[int, int], float]:
    """``{(points of A, points of B): expected number of deals started at that score}`` in a Bummerl from 0:0
    where A wins a scored deal with probability ``win_chance`` (1/2 between equal players), either's wins by 1, 2 or
    3 game points with ``shares``; the values sum to the expected number of scored deals per Bummerl."""
    visits = {(0, 0): 1.0}
    for total in range(0, 2 * target - 1):
        for mine in range(0, min(total, target - 1) + 1):
            theirs = total - mine
            if theirs >= target or (mine, theirs) not in visits:
                continue
            here = visits[(mine, theirs)]
            for points, share in enumerate(shares, start=1):
                for after, chance in (((mine + points, theirs), win_chance), ((mine, theirs + points), 1 - win_chance)):
                    if max(after) < target:
                        visits[after] = visits.get(after, 0.0) + chance * share * here
    return visits


def equity_of(points_a: int, points_b: int, target: int, win_chance: float = 0.5) -> float:
    """A's chance to win the Bummerl at this score (1 once he has reached the target, 0 once B has), winning the
    share ``win_chance`` of the scored deals."""
    if points_a >= target:
        return 1.0
    if points_b >= target:
        return 0.0
    return float(bummerl_equity(target, win_chance=win_chance)[target - points_a, target - points_b])


def run(spec_a: str, spec_b: str, deals: int, seed: int, progress: bool = True, win_chance: float = 0.5) -> dict:
    """Play ``deals`` duplicate deal pairs from drawn scores; per pair A's mean equity change and game points, in
    the table of a player who wins ``win_chance`` of the scored deals."""
    win_chance = checked_win_chance(win_chance)
    rules = Rules()
    target = rules.bummerl_target
    visits = score_visits(target, win_chance=win_chance)
    scores = sorted(visits)
    weights = np.array([visits[score] for score in scores])
    score_rng = random.Random(derive_seed("bummerl-equity scores", seed))
    agents = {"A": make_agent(spec_a, seed=seed), "B": make_agent(spec_b, seed=seed + 1)}
    rows = []
    for deal in tqdm(generate_deals(seed, deals, rules), desc="deal pairs", disable=not progress):
        points_a, points_b = score_rng.choices(scores, weights=weights)[0]
        index = len(rows)
        changes, margins = [], []
        for seat_a in (0, 1):
            seated = [agents["A"], agents["B"]] if seat_a == 0 else [agents["B"], agents["A"]]
            match_score = (points_a, points_b) if seat_a == 0 else (points_b, points_a)
            seeds = [derive_seed(seed, index, seat_a, seat) for seat in (0, 1)]
            game = Game.deal(rules, deck=list(deal.deck), dealer=deal.dealer)
            outcome = play_deal(game, seated, seeds, match_score=match_score)
            gained = outcome.returns[seat_a]
            after_a = points_a + max(gained, 0)
            after_b = points_b + max(-gained, 0)
            changes.append(equity_of(after_a, after_b, target, win_chance)
                           - equity_of(points_a, points_b, target, win_chance))
            margins.append(gained)
        rows.append({"deal": index, "score": [points_a, points_b], "equity_change": sum(changes) / 2,
                     "margin": sum(margins) / 2})
    return {"format": FORMAT, "agents": [spec_a, spec_b], "seed": seed, "deals": deals, "win_chance": win_chance,
            "deals_per_bummerl": float(weights.sum()), "rows": rows}


def start_equity(document: dict) -> float:
    """A's chance to win a Bummerl from 0:0 in the document's equity table (1/2 between equal players)."""
    return equity_of(0, 0, Rules().bummerl_target, document.get("win_chance", 0.5))


def summary(document: dict) -> str:
    changes = [row["equity_change"] for row in document["rows"]]
    margins = [row["margin"] for row in document["rows"]]
    change = mean_interval(changes)
    margin = mean_interval(margins)
    per_bummerl = document["deals_per_bummerl"]
    a, b = document["agents"]
    return (f"{a} vs {b}: {len(changes)} deal pairs (seed {document['seed']}, A winning "
            f"{document.get('win_chance', 0.5):g} of the deals in the equity table)\n"
            f"  equity change per deal: {change.mean:+.4f} [{change.low:+.4f}, {change.high:+.4f}]\n"
            f"  times the {per_bummerl:.2f} deals of such a Bummerl (a Bummerl win rate minus the table's chance at "
            f"0:0, {start_equity(document):.3f}): {per_bummerl * change.mean:+.3f} [{per_bummerl * change.low:+.3f}, "
            f"{per_bummerl * change.high:+.3f}]\n"
            f"  game points per deal: {margin.mean:+.3f} [{margin.low:+.3f}, {margin.high:+.3f}]")


def load(path: Path) -> dict:
    """A results file of :func:`run`; a file of another kind is refused by name."""
    document = read_json_file(path, "bummerl equity results")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} is not a file of bench.bummerl_equity (format {FORMAT!r})")
    missing = [key for key in DOCUMENT_KEYS if key not in document]
    if missing:
        raise ValueError(f"bummerl equity results {str(path)!r} lack {', '.join(missing)}")
    agents, rows = document["agents"], document["rows"]
    if not (isinstance(agents, list) and len(agents) == 2) or not (isinstance(rows, list) and rows):
        raise ValueError(f"bummerl equity results {str(path)!r} need two agents and at least one row")
    what = f"bummerl equity results {str(path)!r}"
    if not all(isinstance(agent, str) for agent in agents):
        raise ValueError(f"{what}: agents must be two agent specs, got {agents!r}")
    per_bummerl = document["deals_per_bummerl"]
    if not finite_number(per_bummerl) or per_bummerl <= 0:
        raise ValueError(f"{what}: deals_per_bummerl must be a positive number, got {per_bummerl!r}")
    if "win_chance" in document:
        checked_win_chance(document["win_chance"], f"{what}: win_chance")
    for index, row in enumerate(rows):
        missing = [key for key in ROW_KEYS if not isinstance(row, dict) or key not in row]
        if missing:
            raise ValueError(f"{what}: row {index} lacks {', '.join(missing)}")
        for key in ROW_KEYS:  # the numbers --minus subtracts: text or null failed there with a TypeError
            require_number(row[key], f"{what}: row {index} {key}")
    return document


def paired(first: dict, second: dict) -> str:
    """``first``'s equity change minus ``second``'s, deal pair by deal pair (the same seed: deals and scores)."""
    if first["seed"] != second["seed"] or first["agents"][1] != second["agents"][1]:
        raise ValueError("compare runs of the same seed against the same opponent")
    if first.get("win_chance", 0.5) != second.get("win_chance", 0.5):
        raise ValueError("compare runs valued in the same equity table (--win-chance)")
    count = min(len(first["rows"]), len(second["rows"]))
    unpaired = max(len(first["rows"]), len(second["rows"])) - count
    note = f" ({unpaired} deal pair(s) of the longer run have no twin and are left out)" if unpaired else ""
    differences = [first["rows"][k]["equity_change"] - second["rows"][k]["equity_change"] for k in range(count)]
    margins = [first["rows"][k]["margin"] - second["rows"][k]["margin"] for k in range(count)]
    change = mean_interval(differences)
    margin = mean_interval(margins)
    per_bummerl = first["deals_per_bummerl"]
    return (f"{first['agents'][0]} minus {second['agents'][0]} (both against {first['agents'][1]}), {count} deal pairs"
            f"{note}:\n"
            f"  equity change per deal {change.mean:+.4f} [{change.low:+.4f}, {change.high:+.4f}]; Bummerl win rate "
            f"about {per_bummerl * change.mean:+.3f} "
            f"[{per_bummerl * change.low:+.3f}, {per_bummerl * change.high:+.3f}]"
            f"\n  game points per deal {margin.mean:+.3f} [{margin.low:+.3f}, {margin.high:+.3f}]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bummerl_equity",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("agents", nargs="*", help="agent A and agent B")
    parser.add_argument("--deals", type=int, default=1000, help="duplicate deal pairs (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="master seed of deals and scores (default 0)")
    parser.add_argument("--win-chance", type=finite_float, default=0.5,
                        help="the share of scored deals A wins, for the scores drawn and the equity table "
                             "(default 0.5)")
    parser.add_argument("--out", type=Path, help="write the per-deal results here (JSON)")
    parser.add_argument("--minus", nargs=2, type=Path, metavar=("FIRST", "SECOND"),
                        help="compare two result files of the same seed, deal pair by deal pair")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    try:
        if args.minus:
            # --minus reads two files and writes nothing: options of a run would be ignored, so they are refused
            run_options = [f"--{name.replace('_', '-')}" for name in ("deals", "seed", "win_chance")
                           if getattr(args, name) != parser.get_default(name)]
            ignored = (["agents"] if args.agents else []) + (["--out"] if args.out else []) + run_options
            if ignored:
                parser.error(f"--minus compares two result files; it takes no {', '.join(ignored)}")
            print(paired(load(args.minus[0]), load(args.minus[1])))
            return 0
        if len(args.agents) != 2:
            parser.error("give two agents (A and B), or --minus FIRST SECOND")
        if args.deals < 1:
            parser.error("--deals must be positive")
        try:
            checked_win_chance(args.win_chance)
        except ValueError as error:
            parser.error(f"--win-chance: {error}")
        check_agent_specs(parser, [("agent A", args.agents[0]), ("agent B", args.agents[1])])
        check_output_paths(parser, [("--out", args.out)])
        document = run(args.agents[0], args.agents[1], args.deals, args.seed, progress=not args.no_progress,
                       win_chance=args.win_chance)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.out:
        write_json_atomic(args.out, document)
    print(summary(document))
    return 0


if __name__ == "__main__":
    sys.exit(main())
