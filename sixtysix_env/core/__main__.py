"""``python -m sixtysix_env.core``: compile every kernel of the core into numba's cache now (``make install`` runs
it), so the first real use loads machine code instead of compiling for half a minute. Prints the seconds taken."""

from __future__ import annotations

import time


def warm_up() -> float:
    """Compile (or load) every kernel once; returns the seconds it took."""
    start = time.perf_counter()
    from sixtysix_env import Game, InformationSet, Rules
    from sixtysix_env.actions import CLOSE

    from . import engine, state_from_game
    from .policy import pack_weights, policy_playout_value
    from .search import LEAF_SOLVER, Tree, information_template, ismcts_iterations
    from .solver import Table, _solve_actions, _solve_value

    rules = Rules()
    game = Game.deal(rules, seed=1)
    engine.random_playouts(2, 1, int(state_from_game(game)[37]))
    engine.play_random_to_end(state_from_game(game))
    closed = game.clone()
    closed.apply(CLOSE)  # a phase-2 position: solved in microseconds
    table = Table(12)
    import numpy as np

    _solve_value(state_from_game(closed), -4, 4, table.entries, 0, table.nodes)
    _solve_actions(state_from_game(closed), np.zeros(64, dtype=np.int64), table.entries, 0, table.nodes)
    weights = pack_weights((0,) * 6, (0,) * 6, 0, 0, 0, 0)
    policy_playout_value(state_from_game(game), 0, weights)
    tree = Tree(64)
    template, allowed, unseen, needed = information_template(InformationSet(game, game.to_move))
    ismcts_iterations(2, template, game.to_move, allowed, unseen, needed, 0.7, LEAF_SOLVER, weights, table.entries,
                      table.nodes, tree.action, tree.first_child, tree.next_sibling, tree.visits, tree.available,
                      tree.total, tree.size)
    # The batched environments (self-play and against the core's random opponent) and the AEC env's observer.
    import sixtysix_env

    for self_play in (True, False):
        environment = sixtysix_env.vector_env(2, self_play=self_play)
        environment.reset(seed=0)
        for _ in range(3):
            masks = environment.action_masks()
            environment.step(masks.argmax(axis=1))
        environment.close()
    aec = sixtysix_env.env()
    aec.reset(seed=0)
    aec.last()
    return time.perf_counter() - start


if __name__ == "__main__":
    print(f"compiled core ready in {warm_up():.1f} s")
