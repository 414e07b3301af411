"""``python -m sixtysix_env.core``: compile every kernel of the core into numba's cache now (``make install`` runs
it), so the first real use loads machine code instead of compiling for half a minute. Prints the seconds taken.

The kernels fall into two groups that share only the rules (``engine.py``): the solvers and search, and the rules
as the Python boundary, random playouts and the environments use them. The two groups compile in two processes at
once (numba compiles one function at a time), which about halves the wall time on a machine with two cores;
``--serial`` compiles them in this process only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

PARTS = ("search", "rules")


def warm_up_search() -> None:
    """The solvers, the playout policy and the search kernels (importing ``solver`` compiles the search itself)."""
    import numpy as np

    from sixtysix_env import Game, InformationSet, Rules
    from sixtysix_env.actions import CLOSE, NUM_ACTIONS

    from . import state_from_game
    from .engine import legal_mask
    from .heuristic import PARAM_COUNT
    from .ismcts import LEAF_SOLVER, ismcts_iterations
    from .policy import pack_weights, playout_value, policy_duel, policy_playout_value
    from .search import Tree, information_template, seed_kernels, solved_world_values
    from .solver import Table, _solve_actions, _solve_value

    game = Game.deal(Rules(), seed=1)
    closed = game.clone()
    closed.apply(CLOSE)  # a phase-2 position: solved in microseconds
    table = Table(12)
    _solve_value(state_from_game(closed), -4, 4, table.entries, 0, table.nodes)
    _solve_actions(state_from_game(closed), np.zeros(64, dtype=np.int64), table.entries, 0, table.nodes)
    weights = pack_weights((0,) * 6, (0,) * 6, 0, 0, 0, 0)
    seed_kernels(1)
    policy_playout_value(state_from_game(game), 0, weights)
    playout_value(state_from_game(closed), 0, weights, table.entries, table.nodes)
    policy_duel(weights, weights, 1, 1, int(state_from_game(game)[37]), table.entries, table.nodes, np.zeros(1))
    tree = Tree(64)
    infoset = InformationSet(game, game.to_move)
    template, allowed, unseen, needed = information_template(infoset)
    ismcts_iterations(2, template, game.to_move, allowed, unseen, needed, 0.7, LEAF_SOLVER, weights, table.entries,
                      table.nodes, tree.action, tree.first_child, tree.next_sibling, tree.visits, tree.available,
                      tree.total, tree.size, np.zeros(PARAM_COUNT), table.claim_worlds(2), 0,
                      np.zeros(PARAM_COUNT), template.reshape(1, -1), 0, 1, True, tree.square,
                      legal_mask(template), np.zeros(NUM_ACTIONS), 0.0)
    closed_infoset = InformationSet(closed, closed.to_move)
    template, allowed, unseen, needed = information_template(closed_infoset)
    solved_world_values(1, template, closed.to_move, allowed, unseen, needed, np.zeros(64, dtype=np.int64),
                        np.zeros(64, dtype=np.int64), table.entries, 1, table.nodes)
    warm_up_heuristic(game, table)


def warm_up_heuristic(game, table) -> None:
    """The compiled ``heuristic``, its rollouts and the inference of the opponent's hand by replay."""
    import numpy as np

    from sixtysix_env import InformationSet

    from . import state_from_game
    from .engine import legal_mask
    from .heuristic import heuristic_action, pack_params, rollout_values
    from .inference import inferred_worlds, public_timeline
    from .layout import STATE_SIZE
    from .search import information_template, sample_worlds

    params = pack_params((10,) * 6, (1,) * 6, 5, 0.5, 0.1, 0.8, 0, 0, 0, 0, 6, 56, 2, 2, 1.0, 0.8, 2, 2, True, 2)
    played = game.clone()
    played.apply(played.legal_actions()[0])
    played.apply(played.legal_actions()[0])  # a trick played: the opponent has a history to replay
    state = state_from_game(played)
    heuristic_action(state, params, table.entries, table.nodes)
    infoset = InformationSet(played, played.to_move)
    template, allowed, unseen, needed = information_template(infoset)
    worlds = np.empty((2, STATE_SIZE), dtype=np.int64)
    sample_worlds(2, template, 1 - played.to_move, allowed, unseen, needed, worlds)
    rollout_values(worlds, 2, 1 << played.legal_actions()[0], played.to_move, params, params, table.entries,
                   table.nodes, np.zeros(2, dtype=np.int64), table.claim_worlds(2), np.zeros((2, 37)))
    timeline = public_timeline(infoset)
    inferred_worlds(2, 4, template, played.to_move, allowed, unseen, needed, timeline.history, timeline.need,
                    timeline.arrive, timeline.draw_after, timeline.draw_winner, timeline.bottom_draw, timeline.dealer,
                    timeline.trump_card, timeline.rule_bits, params, 0.1, 0.1, 0.5, 0.5, 0.5, 0.5, table.entries,
                    table.nodes, worlds, np.zeros(3, dtype=np.int64), False)
    # The training targets of labels.py: a whole labelled deal (label_deal calls value_actions), then the same deal's
    # positions kept for a continuation policy (worlds 0) and their rollouts started and advanced.
    from ..observation import OBSERVATION_SIZE
    from .continuation import advance_continuations, apply_continuation_actions, branch_worlds
    from .labels import MAX_DECISIONS_PER_DEAL, continuation_count, deal_returns, label_deal, start_continuations

    rows = MAX_DECISIONS_PER_DEAL
    deciders = np.zeros(rows, dtype=np.int64)
    positions = np.zeros((rows, STATE_SIZE), dtype=np.int64)
    observations = np.empty((rows, OBSERVATION_SIZE), dtype=np.float32)
    masks = np.zeros((rows, 37), dtype=np.bool_)
    match_score = np.zeros(2, dtype=np.float32)
    for worlds in (1, 0):
        deal = state_from_game(game)
        used = label_deal(deal, params, params, worlds, False, -1, 12, 0.0, table.entries, table.nodes,
                          table.claim_worlds(rows), match_score, observations, masks, np.full((rows, 37), np.nan),
                          np.zeros(rows, dtype=np.int64), np.zeros(rows, dtype=np.bool_), deciders, positions)
    deal_returns(deal, deciders, used, np.zeros(rows))
    count = continuation_count(positions, 1, 2)
    rollouts = np.zeros((count, STATE_SIZE), dtype=np.int64)
    origin, action = np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64)
    start_continuations(positions, 1, 2, rollouts, origin, action)
    waiting = np.zeros(count, dtype=np.int64)
    for opponent_params, endgame in ((params[:0], 0), (params, 2)):  # both seats / the heuristic opponent
        waited = advance_continuations(rollouts, np.arange(count), deciders[origin], opponent_params, endgame,
                                       np.arange(count), match_score, table.entries, table.nodes, np.zeros(count),
                                       np.empty((count, OBSERVATION_SIZE), np.float32),
                                       np.zeros((count, 37), dtype=np.bool_), waiting)
    apply_continuation_actions(rollouts, waiting, 0, np.zeros(max(waited, 1), dtype=np.int64))
    # The rollout search's network continuation starts its rollouts from sampled worlds instead.
    legal = legal_mask(positions[0])
    branches = bin(legal).count("1")
    branch_worlds(positions[:1], 1, legal, np.zeros((branches, STATE_SIZE), dtype=np.int64),
                  np.zeros(branches, dtype=np.int64), np.zeros(branches, dtype=np.int64))
    # eval.luck's draw terms: a whole deal replayed with the luck of its draws (draw_luck, draw_to_top inside).
    from .luck import game_luck

    replayed = game.clone()
    plays = []
    while not replayed.is_over:
        plays.append(replayed.legal_actions()[0])
        replayed.apply(plays[-1])
    game_luck(state_from_game(game), np.array(plays, dtype=np.int64), 0, params, 1, table.entries, table.nodes,
              table.claim_worlds(10), np.zeros(len(plays)))


def warm_up_rules() -> None:
    """The rules as the Python boundary uses them (``state.py``), random playouts, the batched environments
    (self-play, the core's random opponent, a Python opponent) and the AEC env's observer."""
    import sixtysix_env
    from sixtysix_env import Rules

    from . import apply_action, engine, legal_actions, new_state, result_of

    state = new_state(Rules(), seed=1)
    engine.random_playouts(2, 1, int(state[37]))
    engine.play_random_to_end(state.copy())
    while result_of(state) is None:
        apply_action(state, legal_actions(state)[0])

    class FirstLegal:  # an opponent in Python: the environment steps it outside the core
        def act(self, infoset):  # type: ignore[no-untyped-def]
            return infoset.legal_actions[0]

    for options in ({"self_play": True}, {}, {"opponent": FirstLegal()}):
        environment = sixtysix_env.vector_env(2, **options)
        environment.reset(seed=0)
        for _ in range(3):
            masks = environment.action_masks()
            environment.step(masks.argmax(axis=1))
        environment.close()
    aec = sixtysix_env.env()
    aec.reset(seed=0)
    aec.last()


def warm_up(parallel: bool = True) -> float:
    """Compile (or load) every kernel once; returns the seconds it took."""
    start = time.perf_counter()
    if parallel:
        children = [subprocess.Popen([sys.executable, "-m", "sixtysix_env.core", "--part", part]) for part in PARTS]
        failed = [part for part, child in zip(PARTS, children) if child.wait() != 0]
        if failed:
            raise RuntimeError(f"compiling the core's {' and '.join(failed)} kernels failed (see above)")
    else:
        warm_up_search()
        warm_up_rules()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sixtysix_env.core", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--serial", action="store_true", help="compile in this process only")
    parser.add_argument("--part", choices=PARTS, help=argparse.SUPPRESS)  # one group, in a child process
    args = parser.parse_args(argv)
    if args.part == "search":
        warm_up_search()
    elif args.part == "rules":
        warm_up_rules()
    else:
        print(f"compiled core ready in {warm_up(parallel=not args.serial):.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
