"""Valuing a decision after a closing without assuming the observer will see every card at his next decision.

After a closing (R10) nobody draws (R8), so a sampled world fixes the rest of the deal and PIMC solves it exactly:
each action's value in a world assumes that both players then see every card. The observer does not: at his next
decision he knows only what the opponent has played since. PIMC's mean over worlds therefore credits him with a
different next move in each world (strategy fusion, Frank & Basin 1998).

:func:`lookahead_values` plays each candidate action in every world, lets the opponent answer as the exact solver
would in that world (the card best for him with every card seen; his hand is what the world changes), and groups the
worlds by what the observer then sees (the opponent's cards since). Within a group the observer's next decision is
one choice for all its worlds: the action with the best mean over the group, valued in each world exactly from there.
So the observer's next move may depend only on what he can see, one decision deeper than PIMC. Decisions after that
are still solved with every card seen.

With ``presumed_params`` the opponent does not answer as the solver would in the world (as if he saw the observer's
hand) but as a player who cannot see it either: the compiled ``heuristic``'s play of a closed deal, the best sum of
exact values over worlds drawn from his own view (:func:`sixtysix_env.core.heuristic.solved_phase2`). That is the
presumed-value correction of PIMC (Wisser 2015, "Doktor Schnaps"): the opponent's moves valued as he can value them,
by the mean over the deals he cannot tell apart. The heuristic and PIMC opponents play a closed deal exactly so.
"""

from __future__ import annotations

import time

import numpy as np

from sixtysix_env.core.engine import apply, copy_state, value_for
from sixtysix_env.core.heuristic import _heuristic_action
from sixtysix_env.core.layout import OVER, STAGE, TO_MOVE
from sixtysix_env.core.solver import action_values


def _opponent_reply(state: np.ndarray, table) -> int:
    """The action best for the player to move in ``state`` with every card seen; of equals, the lowest action id
    (a card of lower rank within its suit, R1)."""
    values = action_values(state, table)
    best = max(values.values())
    return min(action for action, value in values.items() if value == best)


def _presumed_reply(state: np.ndarray, params: np.ndarray, table) -> int:
    """The action the player to move chooses from his own view: the heuristic's sampled solves of a closed deal
    (R8, R10), with ``params``' ``P_PHASE2_SAMPLES`` worlds drawn by numba's generator."""
    return int(_heuristic_action(state, params, table.entries, table.nodes))


def lookahead_values(worlds: np.ndarray, observer: int, actions: list[int], table, utility=None,
                     deadline: float | None = None, presumed_params: np.ndarray | None = None) -> np.ndarray:
    """``values[w, a]`` for the world rows of ``worlds`` (core states after a closing, ``observer`` to move) and
    every action of ``actions``: the value for ``observer`` (game points, or ``utility(game points)``) of playing
    ``a``, the opponent answering as the solver would in world ``w``, and the observer's next decision taken as one
    choice per group of worlds that look alike to him (module docstring). Columns not in ``actions`` are 0.
    ``deadline``: a ``time.perf_counter()`` value; no world starts that would not end before it (at least one world
    is valued), and the rows returned are the worlds valued. ``presumed_params``: ``None`` (the opponent answers as
    the solver, with every card seen) or the compiled heuristic's numbers (checked by the caller,
    :func:`sixtysix_env.core.heuristic.check_params`), with which he answers from his own view (module docstring;
    its worlds follow numba's generator, which the caller seeds)."""
    count = len(worlds)
    value_of = (lambda points: float(points)) if utility is None else utility
    state = np.empty_like(worlds[0])
    # Per action, the worlds' outcomes: what the observer has seen when he next decides (the group) and either his
    # next decision's exact values in that world or the deal's final value.
    outcomes: dict[int, list[tuple[tuple, dict[int, int] | None, int]]] = {action: [] for action in actions}
    done = 0
    started = time.perf_counter()
    while done < count:
        if deadline is not None and done > 0:
            per_world = (time.perf_counter() - started) / done
            if time.perf_counter() + 1.5 * per_world > deadline:
                break
        for action in actions:
            copy_state(state, worlds[done])
            apply(state, action)
            seen = []
            while state[STAGE] != OVER and state[TO_MOVE] != observer:
                reply = (_opponent_reply(state, table) if presumed_params is None
                         else _presumed_reply(state, presumed_params, table))
                seen.append(reply)
                apply(state, reply)
            if state[STAGE] == OVER:
                outcomes[action].append((tuple(seen), None, int(value_for(state, observer))))
            else:
                outcomes[action].append((tuple(seen), action_values(state, table), 0))
        done += 1
    values = np.zeros((done, 37), dtype=np.float64)
    for action, per_world in outcomes.items():
        groups: dict[tuple, list[int]] = {}
        for index, (seen, _next_values, _final) in enumerate(per_world):
            groups.setdefault(seen, []).append(index)
        for members in groups.values():
            if per_world[members[0]][1] is None:  # the deal is over: nothing left to decide
                for index in members:
                    values[index, action] = value_of(per_world[index][2])
                continue
            # The observer's next decision: every world of the group shows him the same, so one action for all.
            choices = per_world[members[0]][1].keys()
            totals = {choice: sum(value_of(per_world[index][1][choice]) for index in members) for choice in choices}
            chosen = max(choices, key=lambda choice: (totals[choice], -choice))
            for index in members:
                values[index, action] = value_of(per_world[index][1][chosen])
    return values


__all__ = ["lookahead_values"]
