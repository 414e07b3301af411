"""Training targets from the true deal: every legal action valued by rollouts of the hidden cards as they lie.

A learned policy that plays without search has to learn what a search computes: how much each legal action is
worth from the mover's view. The rollout search (``agents/rollout.py``) estimates that by sampling worlds from the
information set, and its estimates are as good as its model of which worlds are likely. Training data does not
have to guess: in self-play the true deal is known. :func:`label_deal` plays a deal with the compiled ``heuristic``
in both seats (a random legal action with probability ``epsilon``, so that positions off its path are seen too) and
at every decision with a choice values each legal action by playing it in the *true* position and then both seats
on with the rollout player, each of whom decides from his own view only (as in the rollout search). The only hidden
thing redrawn is the order of the face-down talon (R4), reshuffled ``worlds`` times: given the cards that have been
seen and played, that order is independent of everything that happened, while the opponent's hand is not (his play
depends on it). One decision's actions share each world and its random stream (common random numbers).

So one row's values are an unbiased but noisy sample of the action values of the rollout player given the *deal*;
a network regressing them over many deals learns their mean given its *observation*, which is the value under the
true distribution of hidden hands that the behaviour's play implies (the inference the search approximates by
replaying, :mod:`.inference`, comes for free), as Monte-Carlo targets do in DouZero. Its greedy policy is then a
one-step improvement over the rollout player, like ``expert``'s, without sampling at play time.

With ``resample_hands`` each world is drawn from the mover's *view* instead (:func:`.heuristic.world_for`: his
opponent's hand redrawn uniformly among the hands consistent with what he has seen, the talon reordered): the label
is then the value ``expert`` would compute over those worlds with uniform inference (PIMC with the rollout player),
much less noisy than one true hand. Uniform worlds ignore what the opponent's play says about his hand; in the second
half of phase 1 that costs ``expert`` only 0.006 game points per decision, which is why such labels are meant for a
talon window (``min_talon``/``max_talon``: only those decisions are labelled). Measured (docs/training.md,
"Session 14"): one such label of 16 worlds chooses far better than a true-deal label at its own position, yet
networks fitted to either play alike.

**A network as the continuation** (policy iteration, docs/training.md "Session 18"). The rollout player solves the
rest of the deal exactly from the talon's last trick (R7) and from any closing (R10) on *as if both players saw all
cards*; in the second half of phase 1 a true-deal label is then close to a double-dummy value, which no player who
sees only his own hand can reach (strategy fusion). :func:`start_continuations` starts every labelled position's
actions in the same talon orders, and a policy outside the core (a network) plays them on in lockstep
(:mod:`.continuation`): the caller chooses the action of every rollout waiting at a decision from the mover's
observation, and only a phase 2 after the talon's exhaustion, where both hands are known (R8), is solved exactly. ``label_deal`` with ``worlds == 0`` plays a deal and
keeps its labelled positions (``positions``) without valuing them.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from .engine import apply, bit_index, copy_state, legal_mask, popcount, random_action, talon_size, value_for
from .heuristic import _heuristic_action, face_down_count, rollout_values, shuffle_face_down, world_for
from .layout import CLOSED_BY, PHASE2, STAGE, STATE_SIZE, TO_MOVE, OVER
from .observation import encode_to_width

# At most this many decisions with a choice per deal, both seats together: 12 cards each (R4) plus exchanges (R9),
# closings (R10) and marriages (R11, which are card plays) with room to spare.
MAX_DECISIONS_PER_DEAL = 64


@kernel
def talon_orders(state, worlds):
    """How many reorderings of the face-down talon a position's actions are rolled out in: ``worlds``, or one where
    the order cannot matter (talon closed, R10, or at most one face-down card, R7)."""
    return worlds if state[CLOSED_BY] < 0 and face_down_count(state) > 1 else 1


@kernel
def value_actions(state, mover, params, worlds, resample_hands, entries, nodes, first_world, values):
    """``values[a]``: the mean game points (R16) for ``mover`` (to move in ``state``, unchanged) of every legal action
    ``a`` over ``worlds`` reorderings of the face-down talon (one where the order cannot matter: talon closed, R10, or
    at most one face-down card), each rolled out by both seats with ``params`` (:func:`.heuristic.rollout_values`,
    one world at a time); NaN for illegal actions. ``resample_hands``: each world is drawn from ``mover``'s view
    (the opponent's unknown cards redrawn too, :func:`.heuristic.world_for`), always ``worlds`` of them. World ``k``
    is number ``first_world + k`` of the transposition table. Returns the legal-action mask."""
    world = np.empty((1, STATE_SIZE), dtype=np.int64)
    stream = np.empty(1, dtype=np.int64)
    rolled = np.zeros((1, 37), dtype=np.float64)
    legal = legal_mask(state)
    count = worlds if resample_hands else talon_orders(state, worlds)
    for action in range(37):
        values[action] = 0.0 if (legal >> action) & 1 else np.nan
    for k in range(count):
        if resample_hands:
            world_for(world[0], state, mover)
        else:
            copy_state(world[0], state)
            if count > 1:
                shuffle_face_down(world[0], 0)
        stream[0] = np.random.randint(0, 2 ** 31 - 1)  # common random numbers for every action of this world
        rollout_values(world, 1, legal, mover, params, params, entries, nodes, stream, first_world + k, rolled)
        for action in range(37):
            if (legal >> action) & 1:
                values[action] += rolled[0, action] / count
    return legal


@kernel
def in_talon_window(state, min_talon, max_talon):
    """A phase-1 position (talon open: neither closed, R10, nor used up, R7) whose talon size (R4) is from
    ``min_talon`` to ``max_talon``."""
    size = talon_size(state)
    return state[CLOSED_BY] < 0 and not state[PHASE2] and min_talon <= size <= max_talon


@kernel
def label_deal(state, params, behaviour_params, worlds, resample_hands, min_talon, max_talon, epsilon, entries, nodes,
               first_world, match_score, observations, masks, values, behaviour_actions, phase2, deciders, positions):
    """Play the deal in ``state`` (modified, to its end) and label every decision with a choice (module docstring);
    with ``min_talon >= 0`` only the phase-1 decisions (talon open: neither closed, R10, nor used up, R7) with a talon
    size (R4) from ``min_talon`` to ``max_talon``, the others played unlabelled. ``resample_hands``: see
    :func:`value_actions`.

    Rows ``0 .. n-1`` of the outputs get, per decision: the mover's observation (``encode_row`` with
    ``match_score``), the legal-action mask (37 booleans), the action values of :func:`value_actions`, the action
    played, whether R8 applied and the mover; with ``worlds == 0`` no values (left as they are) but the position
    itself in ``positions`` (which may have no rows otherwise), for :func:`start_continuations`. The deal is played
    by the heuristic with ``behaviour_params`` (a random legal action with probability ``epsilon``). Row ``row``'s
    reorderings are worlds ``first_world + row * worlds`` on (claim ``MAX_DECISIONS_PER_DEAL * worlds`` worlds).
    Returns n. numba's generator must be seeded (``seed_generator``) for a reproducible deal."""
    row = 0
    while state[STAGE] != OVER:
        legal = legal_mask(state)
        if popcount(legal) == 1:
            apply(state, bit_index(legal))
            continue
        labelled = min_talon < 0 or in_talon_window(state, min_talon, max_talon)
        if labelled:
            if row >= observations.shape[0]:
                raise ValueError("label_deal: more decisions than rows")  # cannot happen under R1-R16
            mover = state[TO_MOVE]
            encode_to_width(state, mover, match_score, observations[row])  # with the planes: label.history
            if worlds > 0:
                value_actions(state, mover, params, worlds, resample_hands, entries, nodes,
                              first_world + row * worlds, values[row])
            else:
                copy_state(positions[row], state)
            for action in range(37):
                masks[row, action] = (legal >> action) & 1
            phase2[row] = state[PHASE2] != 0
            deciders[row] = mover
        if np.random.random() < epsilon:
            choice = random_action(state)
        else:
            choice = _heuristic_action(state, behaviour_params, entries, nodes)
        if labelled:
            behaviour_actions[row] = choice
            row += 1
        apply(state, choice)
    return row


@kernel
def deal_returns(state, deciders, count, returns):
    """The final game points (R16) of the deal in ``state`` (over) for each of the first ``count`` rows' movers."""
    for row in range(count):
        returns[row] = value_for(state, deciders[row])


@kernel
def continuation_count(positions, count, worlds):
    """How many rollouts :func:`start_continuations` starts for the first ``count`` positions: per position, its
    :func:`talon_orders` times its legal actions."""
    total = 0
    for index in range(count):
        total += talon_orders(positions[index], worlds) * popcount(legal_mask(positions[index]))
    return total


@kernel
def start_continuations(positions, count, worlds, rollouts, rollout_position, rollout_action):
    """Start the rollouts of every legal action of the first ``count`` positions (module docstring, "A network as the
    continuation"): in each of a position's :func:`talon_orders` reorderings of the face-down talon (R4, the
    opponent's hand as it lies), one rollout per legal action, that action applied (common random numbers: a
    position's actions share each reordering). Row ``r`` of ``rollouts`` gets the state, ``rollout_position[r]``
    and ``rollout_action[r]`` where it came from. Returns the rollouts started (:func:`continuation_count`)."""
    world = np.empty(STATE_SIZE, dtype=np.int64)
    row = 0
    for index in range(count):
        legal = legal_mask(positions[index])
        orders = talon_orders(positions[index], worlds)
        for _ in range(orders):
            copy_state(world, positions[index])
            if orders > 1:
                shuffle_face_down(world, 0)
            for action in range(37):
                if (legal >> action) & 1:
                    copy_state(rollouts[row], world)
                    apply(rollouts[row], action)
                    rollout_position[row], rollout_action[row] = index, action
                    row += 1
    return row


__all__ = ["MAX_DECISIONS_PER_DEAL", "continuation_count", "deal_returns", "in_talon_window", "label_deal",
           "start_continuations", "talon_orders", "value_actions"]
