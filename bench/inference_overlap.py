"""How much the opponent's play tells about his hand: the share of his unknown cards a sampled world places right.

At every phase-1 decision (talon open, R7) after the first trick of self-play deals (``heuristic``, or ``--agent SPEC``
on both seats: how well the heuristic's rules read an opponent who is not the heuristic), worlds are drawn
from the deciding player's information set uniformly (``determinize``) and by the replay inference of
:mod:`sixtysix_env.core.inference` (each kept with the likelihood of the opponent's choices under the heuristic's
rules, with the given floors); the figure is the mean share of the opponent's unknown cards that a world puts in his
hand, overall and by the number of tricks played. 1.0 would be a revealed hand (docs/strength.md, session 4)::

    python -m bench.inference_overlap --deals 60 --worlds 200 --floors 0.1 --lead-floor 1.0
    python -m bench.inference_overlap --deals 60 --worlds 200 --floors 0.05 --lead-floor 0.05
    python -m bench.inference_overlap --agent pimc_v1:seconds=none --deals 60 --worlds 200 --floors 0.1,0.3,0.5

``--where closed`` measures instead at the decisions of a phase 2 after a closing (R10), where ``--closed-floor``
and ``--closing-floor`` weigh his play after the closing and the closing itself (docs/strength.md, session 24)::

    python -m bench.inference_overlap --where closed --deals 300 --worlds 200 --closed-floor 0.1 --closing-floor 0.1
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

import numpy as np
from tqdm import tqdm

from agents.registry import make_agent
from agents.rule_based import HeuristicAgent
from agents.solver import core_table
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.core.inference import inferred_worlds, public_timeline
from sixtysix_env.core.layout import HAND0, STATE_SIZE
from sixtysix_env.core.search import information_template, sample_worlds, seed_kernels
from sixtysix_env.schema import finite_float

from .checks import check_agent_specs


def self_play_decisions(deals: Iterable[int], first_seed: int, rules: Rules, agent: str = "heuristic"):
    """Every decision of ``agent``'s self-play (a spec), as (game, information set of the player to move), deal
    ``d`` of ``deals`` dealt from seed ``first_seed + d`` with dealer ``d % 2``; each is played on after it is
    yielded."""
    for deal in deals:
        game = Game.deal(rules, seed=first_seed + deal, dealer=deal % 2)
        players = [make_agent(agent, seed=deal * 2 + seat) for seat in range(2)]
        for seat, player in enumerate(players):
            player.start_deal(seat, rules)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            yield game, infoset
            game.apply(players[infoset.player].act(infoset))


def placed_share(worlds: np.ndarray, opponent: int, unknown: int) -> float:
    """The mean share of the opponent's ``unknown`` cards that ``worlds`` put in his hand."""
    return float(np.mean([(int(row[HAND0 + opponent]) & unknown).bit_count() for row in worlds])) / unknown.bit_count()


def uniform_placement(infoset: InformationSet, unknown: int, worlds: np.ndarray) -> float:
    """The share of the opponent's ``unknown`` cards placed right by worlds drawn uniformly from ``infoset`` (as many
    as ``worlds`` has rows; overwritten)."""
    template, allowed, unseen, needed = information_template(infoset)
    sample_worlds(len(worlds), template, 1 - infoset.player, allowed, unseen, needed, worlds)
    return placed_share(worlds, 1 - infoset.player, unknown)


def inferred_placement(infoset: InformationSet, unknown: int, worlds: np.ndarray, params: np.ndarray, table,
                       floors: tuple[float, ...]) -> float:
    """The same share for worlds drawn by the replay inference with ``floors`` (follow, rule, lead, closed,
    closing, played on)."""
    template, allowed, unseen, needed = information_template(infoset)
    timeline = public_timeline(infoset)
    inferred_worlds(len(worlds), 400, template, infoset.player, allowed, unseen, needed, timeline.history,
                    timeline.need, timeline.arrive, timeline.draw_after, timeline.draw_winner, timeline.bottom_draw,
                    timeline.dealer, timeline.trump_card, timeline.rule_bits, params, *floors, table.entries,
                    table.nodes, worlds, np.zeros(3, dtype=np.int64), False)
    return placed_share(worlds, 1 - infoset.player, unknown)


def world_placements(infoset: InformationSet, unknown: int, worlds: np.ndarray, params: np.ndarray, table,
                     floors: tuple[float, ...]) -> tuple[float, float]:
    """(uniform, replay-inferred) placements of one decision, drawn one after the other."""
    return (uniform_placement(infoset, unknown, worlds),
            inferred_placement(infoset, unknown, worlds, params, table, floors))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.inference_overlap",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=60, help="self-play deals")
    parser.add_argument("--seed", type=int, default=100, help="first deal seed")
    parser.add_argument("--worlds", type=int, default=200, help="worlds drawn per decision and sampler")
    parser.add_argument("--agent", default="heuristic", help="agent spec playing both seats of the deals")
    parser.add_argument("--floors", default="0.1",
                        help="follow and rule floor of the replay; several, comma-separated, are measured on the same "
                             "decisions with the same random draws")
    parser.add_argument("--lead-floor", type=finite_float, default=1.0, help="plain-lead floor (1: leads not modelled)")
    parser.add_argument("--closed-floor", type=finite_float, default=1.0,
                        help="floor of his play after a closing that is not best with every card seen (1: unmodelled)")
    parser.add_argument("--closing-floor", type=finite_float, default=1.0,
                        help="floor of his closing a deal he loses with every card seen (1: unmodelled)")
    parser.add_argument("--played-on-floor", type=finite_float, default=1.0,
                        help="floor of his playing on where closing looked plausible and would have won "
                             "(1: unmodelled)")
    parser.add_argument("--where", choices=("phase1", "closed"), default="phase1",
                        help="the decisions measured: phase 1 after the first trick, or a phase 2 after a closing")
    args = parser.parse_args(argv)
    try:
        replay_floors = [float(text) for text in args.floors.split(",")]
    except ValueError:
        parser.error(f"--floors must be comma-separated numbers, got {args.floors!r}")
    if len(set(replay_floors)) != len(replay_floors):
        parser.error(f"--floors must not name a floor twice, got {args.floors!r}")
    named_floors = [("--floors", floor) for floor in replay_floors] + [
        ("--lead-floor", args.lead_floor), ("--closed-floor", args.closed_floor),
        ("--closing-floor", args.closing_floor), ("--played-on-floor", args.played_on_floor)]
    for option, floor in named_floors:
        if not 0 < floor <= 1:  # a likelihood factor: 0 would reject every world, above 1 reward the evidence
            parser.error(f"{option} must lie in (0, 1], got {floor:g}")
    for option, count in (("--deals", args.deals), ("--worlds", args.worlds)):
        if count < 1:
            parser.error(f"{option} must be positive, got {count}")
    check_agent_specs(parser, [("--agent", args.agent)])
    rules = Rules()
    params = HeuristicAgent().core_params()
    table = core_table()
    # floor -> tricks played -> [(uniform share, inferred share)], all floors on the same decisions
    by_trick: dict[float, dict[int, list[tuple[float, float]]]] = {floor: {} for floor in replay_floors}
    worlds = np.empty((args.worlds, STATE_SIZE), dtype=np.int64)
    deals = tqdm(range(args.deals), desc="self-play deals", unit="deal")
    for decision, (game, infoset) in enumerate(self_play_decisions(deals, args.seed, rules, args.agent)):
        unknown = game.hands[1 - infoset.player] & ~infoset.opponent_known
        measured = game.closed_by is not None if args.where == "closed" else not game.phase2 and game.tricks
        if measured and unknown:
            # Common random numbers: each decision seeds the kernels' generator afresh, and every floor's worlds
            # come from the same draws, so the floors differ by their floor alone, not by sampling noise (and a
            # floor's figures do not depend on which other floors are measured beside it).
            decision_seed = 2 * (args.seed * 1_000_003 + decision)
            seed_kernels(decision_seed)
            uniform = uniform_placement(infoset, unknown, worlds)
            for floor in replay_floors:
                seed_kernels(decision_seed + 1)
                inferred = inferred_placement(infoset, unknown, worlds, params, table,
                                              (floor, floor, args.lead_floor, args.closed_floor, args.closing_floor,
                                               args.played_on_floor))
                by_trick[floor].setdefault(len(game.tricks), []).append((uniform, inferred))
    if not any(by_trick[floor] for floor in replay_floors):
        print(f"error: no decision of {args.deals} deal(s) was measured ({args.where}: none had unknown cards of the "
              "opponent there); play more deals", file=sys.stderr)
        return 2
    for floor in replay_floors:
        rows = [pair for pairs in by_trick[floor].values() for pair in pairs]
        uniform, inferred = np.mean(rows, axis=0)
        print(f"{len(rows)} decisions of {args.agent}: unknown cards placed right by uniform worlds {uniform:.3f}, "
              f"by inferred worlds {inferred:.3f} (floors {floor}, lead floor {args.lead_floor}, closed floor "
              f"{args.closed_floor}, closing floor {args.closing_floor}, played-on floor {args.played_on_floor}; "
              f"{args.where})")
        for tricks in sorted(by_trick[floor]):
            shares = np.mean(by_trick[floor][tricks], axis=0)
            print(f"  after {tricks} tricks: {len(by_trick[floor][tricks])} decisions, uniform {shares[0]:.3f}, "
                  f"inferred {shares[1]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
