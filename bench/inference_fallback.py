"""What the inferred worlds' fallback does to them where the opponent often leaves the heuristic's play.

``expert`` draws worlds by rejection (:mod:`sixtysix_env.core.inference`): each is kept with the likelihood of the
opponent's play so far under the heuristic's rules. When ``max_tries`` draws are all rejected, one of them is kept:
the likeliest (``likeliest``, the default) or one drawn in proportion to its likelihood (``resample``). At positions
where the opponent played a random card at a share ``--deviate`` of his decisions, this prints how many worlds came
from the fallback and how far each way's card-in-hand marginals of the opponent lie from worlds drawn with
``--reference-tries`` tries, where the fallback (almost) never triggers (docs/strength.md, session 65)::

    python -m bench.inference_fallback --seeds 11004,11015 --tricks 3 --deviate 0.5 --worlds 4000

A position is taken at the viewer's lead after ``--tricks`` tricks, and only if the opponent could exchange (R9) or
announce a marriage (R11) on the way, so that his rule-following choices say something.
"""

from __future__ import annotations

import argparse
import random

import numpy as np

from agents.inference import WORLD_FALLBACKS, ReplayedWorlds
from agents.registry import make_agent
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE, EXCHANGE, MARRY_BASE
from sixtysix_env.cards import cards_of
from sixtysix_env.core.layout import HAND0
from sixtysix_env.game import LEAD
from sixtysix_env.schema import finite_float


def reached_position(seed: int, tricks: int, deviate: float) -> tuple[Game, int, bool] | None:
    """A deal of ``seed`` played by the heuristic on both seats, the opponent of the viewer (seat ``seed % 2``)
    playing a random legal card or action other than closing at a share ``deviate`` of his decisions: (the game at
    the viewer's lead after ``tricks`` tricks, the viewer, whether the opponent could exchange or announce before
    it), or None if the deal never comes to that lead (the opponent took trick ``tricks``, or the deal ended)."""
    rng = random.Random(seed)
    rules = Rules()
    game = Game.deal(rules, seed=seed, dealer=seed % 2)
    agents = [make_agent("heuristic", seed=seed), make_agent("heuristic", seed=seed + 1)]
    for seat, agent in enumerate(agents):
        agent.start_deal(seat, rules)
    viewer, telling = seed % 2, False
    while not game.is_over:
        if len(game.tricks) == tricks and game.to_move == viewer and game.stage == LEAD:
            return game, viewer, telling
        mover, legal = game.to_move, game.legal_actions()
        action = agents[mover].act(InformationSet(game, mover))
        if mover != viewer:
            telling = telling or EXCHANGE in legal or any(MARRY_BASE <= other < EXCHANGE for other in legal)
            if rng.random() < deviate:
                action = rng.choice([other for other in legal if other != CLOSE])
        game.apply(action)
    return None


def deviating_position(seed: int, tricks: int, deviate: float) -> tuple[Game, int] | None:
    """The game and the viewer of :func:`reached_position`, or None if the deal never comes to the viewer's lead
    after ``tricks`` tricks or the opponent never could exchange or announce before it."""
    reached = reached_position(seed, tricks, deviate)
    if reached is None or not reached[2]:
        return None
    return reached[0], reached[1]


def marginals(infoset: InformationSet, worlds: int, tries: int, fallback: str, seed: int) -> tuple[np.ndarray, int]:
    """(the share of ``worlds`` inferred worlds that put each unseen card in the opponent's hand, the number of
    those worlds that came from the fallback)."""
    drawn = ReplayedWorlds(infoset, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, max_tries=tries, fallback=fallback)
    rng = random.Random(seed)
    opponent = 1 - infoset.player
    hands = np.empty(worlds, dtype=np.int64)
    for index in range(worlds):
        # Worlds come in batches, and the fallback count covers each whole batch: the last one holds only the
        # worlds still wanted (the batch's first worlds are the same whatever its size), so the count is of these.
        drawn.BATCH = min(ReplayedWorlds.BATCH, worlds - index)
        hands[index] = int(drawn.next_state(rng)[HAND0 + opponent])
    shares = np.array([np.mean((hands >> card) & 1) for card in cards_of(infoset.unseen)])
    return shares, int(drawn.stats[2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.inference_fallback",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seeds", default="11004,11015", help="deal seeds of the positions (comma-separated)")
    parser.add_argument("--tricks", type=int, default=3, help="tricks played before the position (default 3)")
    parser.add_argument("--deviate", type=finite_float, default=0.5,
                        help="share of the opponent's decisions played at random (default 0.5)")
    parser.add_argument("--worlds", type=int, default=4000, help="worlds drawn per way (default 4000)")
    parser.add_argument("--tries", type=int, default=64, help="draws before the fallback (default 64, expert's)")
    parser.add_argument("--reference-tries", type=int, default=5000, help="draws of the reference (default 5000)")
    args = parser.parse_args(argv)
    try:
        seeds = [int(text) for text in args.seeds.split(",")]
    except ValueError:
        parser.error(f"--seeds must be integers separated by commas, got {args.seeds!r}")
    if not 1 <= args.tricks <= 5 or not 0 <= args.deviate <= 1:
        parser.error("--tricks must lie in 1..5 and --deviate in [0, 1]")
    if min(args.worlds, args.tries, args.reference_tries) < 1:
        parser.error("--worlds, --tries and --reference-tries must be positive")
    print("| seed | way | worlds from the fallback | the marginals' distances from the reference, summed | "
          "worst card |")
    print("|---:|---|---:|---:|---:|")
    for seed in seeds:
        # Why a seed has no row: the viewer must lead after --tricks tricks, and the opponent's choices say something.
        reached = reached_position(seed, args.tricks, args.deviate)
        if reached is None:
            print(f"| {seed} | (no position: the viewer does not lead after trick {args.tricks}) | | | |")
            continue
        if not reached[2]:
            print(f"| {seed} | (no position: the opponent could not exchange or announce) | | | |")
            continue
        infoset = InformationSet(reached[0], reached[1])
        reference, _ = marginals(infoset, args.worlds, args.reference_tries, "likeliest", seed)
        for fallback in WORLD_FALLBACKS:
            shares, from_fallback = marginals(infoset, args.worlds, args.tries, fallback, seed)
            deviation = np.abs(shares - reference)
            print(f"| {seed} | {fallback} | {from_fallback} of {args.worlds} | {deviation.sum():.3f} | "
                  f"{deviation.max():.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
