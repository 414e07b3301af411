"""The luck of the talon's draws, measured so that a match's margins can leave it out (a control variate).

Two agents' margin over a deal mixes their play with the cards' luck. Duplicate deals (each deal played twice, seats
swapped) remove the luck of the deal itself, but not that of the talon (R7) once the two games part ways: a trick won
in one game and lost in the other sends the same talon cards to different hands. AIVAT (Burch, Schmid, Moravcik,
Morrill and Bowling, "AIVAT: A New Variance Reduction Technique for Agent Evaluation in Imperfect Information Games",
AAAI 2018) takes such chance out of an outcome without bias: at every chance event subtract the value of what chance
dealt minus its expectation over what chance could have dealt. Whatever the value function, each term has mean zero,
so the corrected margin has the raw margin's expectation; the better the values, the smaller its variance.

Here the chance events are the talon's draws (R7: the trick's winner draws the top face-down card, the loser the
next). Given everything dealt so far (both hands, the cards played, the bottom card) the face-down cards lie in a
uniformly random order, since the deck was shuffled uniformly (R4) and no player sees that order; so the two cards
drawn are a uniform ordered pair of them. The value of a position is the game points (R16) that the compiled
heuristic in both seats (the rollout player of the ``expert`` search, with its exact solve from the talon's last
trick) scores from it for the observer, averaged over ``orders`` orders of the rest of the talon. :func:`draw_luck`
estimates one event's term by rollouts in pairs of worlds that differ only in the two cards drawn (common random
numbers); the estimate's own noise has mean zero too, and it shrinks with ``orders``.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from .engine import apply, copy_state, legal_mask
from .heuristic import face_down_count, rollout_values, shuffle_face_down
from .layout import STATE_SIZE, STOCK, STOCK_POS, STAGE, OVER

# Face-down cards a draw takes when chance decides which (R7): the winner's and the loser's. A trick that takes the
# last face-down card gives the loser the bottom card instead, and the last card is then the only one possible.
CARDS_PER_DRAW = 2
# Chance draws in one deal at most: the face-down talon (11 cards, R4) goes two by two down to its last card.
MAX_CHANCE_DRAWS = 5


@kernel
def draws_by_chance(state, action):
    """Whether playing ``action`` in ``state`` completes a trick after which both players draw a face-down card
    (R7), so that chance decides which cards they get (at least three face-down cards before the draw)."""
    if state[STAGE] == OVER or face_down_count(state) <= CARDS_PER_DRAW:
        return False
    after = state.copy()
    apply(after, action)
    return after[STOCK_POS] == state[STOCK_POS] + CARDS_PER_DRAW


@kernel
def draw_to_top(world, cards):
    """Move a uniformly random ordered choice of ``cards`` face-down talon cards to the top of the talon, in place:
    the first ``cards`` steps of a Fisher-Yates shuffle. Whatever the talon's order, the cards on top are a uniform
    ordered choice; a talon below them that lay in uniform order still does."""
    first = STOCK + world[STOCK_POS]
    count = face_down_count(world)
    for slot in range(cards):
        other = slot + np.random.randint(0, count - slot)
        world[first + slot], world[first + other] = world[first + other], world[first + slot]


@kernel
def draw_luck(state, action, observer, params, orders, entries, nodes, first_world):
    """The draw's term of the correction for ``observer``: the value after ``action`` (played in ``state``,
    unchanged) with the two face-down cards it draws as they lie, minus the value with a uniformly random pair of
    the face-down cards drawn instead, each value the mean over ``orders`` worlds of a rollout by the heuristic
    with ``params`` in both seats (:func:`.heuristic.rollout_values`). World ``k`` keeps the two cards on top and
    shuffles the rest, its twin takes a uniform ordered pair of all face-down cards to the top (a partial
    Fisher-Yates shuffle of world ``k``, so the twin's talon order is uniform) and both roll out from the same
    generator seed. 0 when ``action`` draws no cards by chance (:func:`draws_by_chance`). Uses worlds
    ``first_world`` to ``first_world + 2 * orders - 1`` of the transposition table; numba's generator must be
    seeded (``seed_generator``) for a reproducible value."""
    if not draws_by_chance(state, action):
        return 0.0
    actual = np.empty((orders, STATE_SIZE), dtype=np.int64)
    uniform = np.empty((orders, STATE_SIZE), dtype=np.int64)
    seeds = np.empty(orders, dtype=np.int64)
    for k in range(orders):
        copy_state(actual[k], state)
        shuffle_face_down(actual[k], CARDS_PER_DRAW)
        copy_state(uniform[k], actual[k])
        draw_to_top(uniform[k], CARDS_PER_DRAW)
        seeds[k] = np.random.randint(0, 2 ** 31 - 1)
    values_actual = np.zeros((orders, 37))
    values_uniform = np.zeros((orders, 37))
    rollout_values(actual, orders, 1 << action, observer, params, params, entries, nodes, seeds, first_world,
                   values_actual)
    rollout_values(uniform, orders, 1 << action, observer, params, params, entries, nodes, seeds,
                   first_world + orders, values_uniform)
    total = 0.0
    for k in range(orders):
        total += values_actual[k, action] - values_uniform[k, action]
    return total / orders


@kernel
def game_luck(state, actions, observer, params, orders, entries, nodes, first_world, terms):
    """Replay ``actions`` from ``state`` (a new deal, modified to the deal's end) and write each play's
    :func:`draw_luck` term for ``observer`` to ``terms`` (0 for plays that draw nothing by chance). Claims
    ``2 * orders`` transposition-table worlds per chance draw from ``first_world`` on (at most
    :data:`MAX_CHANCE_DRAWS` draws). Returns the number of chance draws, or ``-1 - i`` if play ``i`` is not legal
    where it stands or the deal is still on after the last play (``i`` = the number of plays)."""
    draws = 0
    for index in range(actions.shape[0]):
        action = actions[index]
        terms[index] = 0.0
        if state[STAGE] == OVER or not (legal_mask(state) >> action) & 1:
            return -1 - index
        if draws_by_chance(state, action):
            terms[index] = draw_luck(state, action, observer, params, orders, entries, nodes,
                                     first_world + 2 * orders * draws)
            draws += 1
        apply(state, action)
    if state[STAGE] != OVER:
        return -1 - actions.shape[0]
    return draws


__all__ = ["CARDS_PER_DRAW", "MAX_CHANCE_DRAWS", "draw_luck", "draw_to_top", "draws_by_chance", "game_luck"]
