"""How much common worlds narrow the rollout search's comparison of two actions.

At each decision of ``heuristic`` self-play deals where the mover has at least two actions and the talon is open
(R7), ``expert``'s rollouts value every action in the same sampled worlds (no clock, no pruning). For the two best
actions the figure is the ratio of the standard deviation of their world-by-world differences (the paired
comparison ``expert`` prunes and chooses by) to that of an unpaired difference, sqrt(var(a) + var(b)), had each
action been valued in worlds of its own (as a tree's root children are). A ratio r means a paired test needs about
r² of the worlds (docs/strength.md, session 8)::

    python -m bench.paired_spread --deals 40 --worlds 400 --seed 700
"""

from __future__ import annotations

import argparse

import numpy as np
from tqdm import tqdm

from agents import make_agent
from sixtysix_env import Game, InformationSet, Rules


def spread_ratios(deals: int, worlds: int, seed: int, progress: bool = True) -> list[float]:
    """One ratio per searched decision of either player in each deal (see the module docstring)."""
    searcher = make_agent(f"expert:seconds=none,samples={worlds},prune=none", seed=seed)
    ratios = []
    for deal in tqdm(range(deals), desc="deals", disable=not progress):
        game = Game.deal(Rules(), seed=seed + deal, dealer=deal % 2)
        # Two seeds per deal, none shared with another deal's players (seed * 3 + deal + seat gave deal d's second
        # seat deal d + 1's first seat's seed).
        players = [make_agent("heuristic", seed=2 * (seed + deal) + seat) for seat in range(2)]
        for seat, player in enumerate(players):
            player.start_deal(seat, game.rules)
        searcher.start_deal(game.to_move, game.rules)
        while not game.is_over:
            infoset = InformationSet(game, game.to_move)
            if len(infoset.legal_actions) > 1 and infoset.talon_size > 0 and infoset.closed_by is None:
                values = searcher.action_values(infoset, None)
                if len(values) >= 2:
                    scores = searcher.world_values
                    first, second = sorted(values, key=values.get, reverse=True)[:2]
                    unpaired = np.sqrt(scores[:, first].var() + scores[:, second].var())
                    if unpaired > 0:
                        ratios.append(float((scores[:, first] - scores[:, second]).std() / unpaired))
            game.apply(players[game.to_move].act(infoset))
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.paired_spread", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=40, help="heuristic self-play deals")
    parser.add_argument("--worlds", type=int, default=400, help="worlds per searched decision")
    parser.add_argument("--seed", type=int, default=700, help="first deal seed (and the searcher's)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.worlds < 2:
        parser.error("--deals must be positive and --worlds at least 2")
    ratios = np.array(spread_ratios(args.deals, args.worlds, args.seed, not args.no_progress))
    if ratios.size == 0:
        print("no decision with two valued actions")
        return 1
    quartiles = np.percentile(ratios, [25, 50, 75])
    print(f"{ratios.size} decisions: paired / unpaired standard deviation of the two best actions' difference, "
          f"median {quartiles[1]:.2f} (quartiles {quartiles[0]:.2f}, {quartiles[2]:.2f}); "
          f"a paired test needs about {np.median(ratios ** 2):.2f} of the worlds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
