"""Rollouts played by a policy outside the core: a network, which the kernels cannot run, deciding in lockstep.

A rollout search or a training label values an action by playing the deal on after it. The compiled heuristic plays
such rollouts inside one kernel (:func:`.heuristic.rollout_values`); a network cannot, so here many rollouts advance
together: :func:`advance_continuations` plays each on to its next real decision in one kernel and collects the
mover's observation, the caller answers all of them with one batched forward pass, and
:func:`apply_continuation_actions` applies the answers. :func:`play_out` is that loop. Each mover decides from his
own observation only; a phase 2 after the talon's exhaustion (R8: both hands known) is solved exactly, while a phase
2 after a closing (R10) is played, not solved (nobody sees the other's hand there), unless the caller asks for more
to be solved as the heuristic's rollouts solve it (``CONTINUATION_ENDGAMES``).

Where the rollouts start is the caller's: every legal action of a true position in reorderings of its talon
(training labels, :func:`.labels.start_continuations`), or every candidate action in worlds sampled from a player's
information set (the rollout search's ``continuation``, :func:`branch_worlds`).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from .engine import apply, bit_index, copy_state, legal_mask, popcount, value_for
from .heuristic import PLAYING_ON, _heuristic_action, rollout_leaves, solved_from_here
from .layout import STAGE, STATE_SIZE, TO_MOVE, OVER
from .observation import encode_to_width

# Where a continuation stops playing and solves exactly (the index is ``advance_continuations``' ``endgame``): a
# phase 2 after the talon's exhaustion only (R8: both hands known); also one after a closing (R10), solved as if each
# saw the other's cards; also from the talon's last trick (R7), by the whole-deal solver with the last face-down
# card known, as the heuristic rollouts of ``endgame=last_trick`` solve.
CONTINUATION_ENDGAMES = ("exhausted", "phase2", "last_trick")


@kernel
def branch_worlds(worlds, count, mask, rollouts, rollout_world, rollout_action):
    """One rollout per world and action: row ``w * k + j`` of ``rollouts`` is ``worlds[w]`` (one of the first
    ``count``) with the ``j``-th of the ``k`` actions of the bit mask ``mask`` applied (ascending), its world and
    action in ``rollout_world`` and ``rollout_action``. Every action must be legal in every world (the worlds of one
    information set share the mover's legal actions). Returns the rollouts started, ``count * k``."""
    row = 0
    for world in range(count):
        for action in range(37):
            if (mask >> action) & 1:
                copy_state(rollouts[row], worlds[world])
                apply(rollouts[row], action)
                rollout_world[row], rollout_action[row] = world, action
                row += 1
    return row


@kernel
def advance_continuations(rollouts, rows, observers, opponent_params, endgame, world_ids, match_score, entries,
                          nodes, values, observations, masks, waiting):
    """Play each rollout of ``rows`` on to its next real decision: forced moves are applied; a finished deal, or a
    phase 2 after the talon's exhaustion (R8: both hands known, solved exactly), and as far as ``endgame`` (an index
    of ``CONTINUATION_ENDGAMES``) says a phase 2 after a closing (R10) or the talon's last trick (R7, solved as world
    ``world_ids[row]`` of the transposition table), ends it with ``values[row]`` = game
    points (R16) for ``observers[row]``; with ``opponent_params`` of any length, the observer's opponent decides
    here by :func:`.heuristic.heuristic_action` with those numbers (the caller's policy then plays the observer's
    seat only); any other decision with a choice (phase 1, or a phase 2 after a closing, R10) waits for the caller:
    its mover's observation (``encode_row``) and legal mask go to the next row of ``observations`` and ``masks``,
    the rollout's row to ``waiting``. Returns how many wait."""
    count = 0
    opponent_here = opponent_params.shape[0] > 0
    solve_closed = endgame >= 1
    solve_talon = 1 if endgame >= 2 else 0
    for index in range(rows.shape[0]):
        row = rows[index]
        state = rollouts[row]
        while True:
            stage = state[STAGE]
            if stage == OVER:
                values[row] = value_for(state, observers[row])
                break
            value = solved_from_here(state, observers[row], solve_closed, solve_talon, entries, nodes, world_ids[row])
            if value != PLAYING_ON:
                values[row] = value
                break
            legal = legal_mask(state)
            if popcount(legal) == 1:
                apply(state, bit_index(legal))
                continue
            if opponent_here and state[TO_MOVE] != observers[row]:
                apply(state, _heuristic_action(state, opponent_params, entries, nodes))
                continue
            encode_to_width(state, state[TO_MOVE], match_score, observations[count])  # planes if wide
            for action in range(37):
                masks[count, action] = (legal >> action) & 1
            waiting[count] = row
            count += 1
            break
    return count


@kernel
def apply_continuation_actions(rollouts, waiting, count, actions):
    """Apply ``actions[k]`` to the rollout ``waiting[k]`` for the first ``count`` waiting rollouts."""
    for index in range(count):
        apply(rollouts[waiting[index]], actions[index])


def play_out(rollouts: np.ndarray, observers: np.ndarray, logits_of, table, match_score: np.ndarray,
             opponent_params: np.ndarray | None = None, endgame: str = "exhausted",
             world_ids: np.ndarray | None = None, history: bool = False, opponent_logits_of=None,
             on_decision=None) -> np.ndarray:
    """Play every rollout (rows of core states, modified) to its end and return the game points (R16) of each for
    its observer (``observers[row]``). ``logits_of(observations) -> (n, 37) logits`` chooses, greedily among the
    legal actions, every decision with a choice from its mover's own observation (encoded with ``match_score``, the
    scaled Bummerl score, float32); with ``opponent_params`` the observer's opponent is the compiled heuristic with
    those numbers instead (``logits_of`` then plays the observer's seat only). A phase 2 after the talon's exhaustion
    is solved with ``table`` (:class:`.solver.Table`); ``endgame`` (``CONTINUATION_ENDGAMES``) also one after a
    closing (R10), or also the talon's last trick (R7) as world ``world_ids[row]`` of ``table`` (rollouts of one
    talon order may share a number; new numbers for every row when not given). All waiting rollouts are answered by
    one call per step. ``history``: the observations are followed by the history planes (a network fitted with
    them, ``agents.suit``). ``opponent_logits_of``: the observer's opponent decides by these logits instead (another
    network, e.g. a model of the opponent; ``logits_of`` then plays the observer's seat only). ``on_decision``: called
    at every step, before the choices, with the rows waiting for one and their movers' observations (a view into a
    buffer the next step overwrites), to record the positions met (``train.critic``)."""
    from ..actions import NUM_ACTIONS
    from ..observation import EXTENDED_OBSERVATION_SIZE, OBSERVATION_SIZE

    total = len(rollouts)
    if endgame not in CONTINUATION_ENDGAMES:
        raise ValueError(f"endgame must be one of {', '.join(CONTINUATION_ENDGAMES)}, got {endgame!r}")
    if opponent_params is not None and opponent_logits_of is not None:
        raise ValueError("play_out: the observer's opponent is either the compiled heuristic (opponent_params) or a "
                         "network (opponent_logits_of), not both")
    if world_ids is None:  # numbered only where the talon's last trick is solved
        first = table.claim_worlds(total) if endgame == "last_trick" else 0
        world_ids = first + np.arange(total, dtype=np.int64)
    world_ids = np.ascontiguousarray(world_ids, dtype=np.int64)
    opponent = np.zeros(0) if opponent_params is None else np.ascontiguousarray(opponent_params, dtype=np.float64)
    observers = np.ascontiguousarray(observers, dtype=np.int64)
    results = np.full(total, np.nan)
    observations = np.empty((total, EXTENDED_OBSERVATION_SIZE if history else OBSERVATION_SIZE), dtype=np.float32)
    masks = np.zeros((total, NUM_ACTIONS), dtype=np.bool_)
    waiting = np.empty(total, dtype=np.int64)
    rows = np.arange(total, dtype=np.int64)
    while len(rows):
        count = advance_continuations(rollouts, rows, observers, opponent, CONTINUATION_ENDGAMES.index(endgame),
                                      world_ids, match_score, table.entries, table.nodes, results, observations,
                                      masks, waiting)
        if count == 0:
            break
        if on_decision is not None:
            on_decision(waiting[:count], observations[:count])
        if opponent_logits_of is None:
            logits = logits_of(observations[:count])
        else:  # each side's network answers the rollouts where its seat is to move
            observer_moves = rollouts[waiting[:count], TO_MOVE] == observers[waiting[:count]]
            logits = None
            for rows_of_side, side_logits_of in ((observer_moves, logits_of), (~observer_moves, opponent_logits_of)):
                if rows_of_side.any():
                    side_logits = side_logits_of(observations[:count][rows_of_side])
                    if logits is None:
                        logits = np.empty((count, NUM_ACTIONS), dtype=side_logits.dtype)
                    logits[rows_of_side] = side_logits
        choices = np.where(masks[:count], logits, -np.inf).argmax(axis=1)
        apply_continuation_actions(rollouts, waiting, count, choices.astype(np.int64))
        rows = waiting[:count].copy()
    return results


def leaf_values(worlds: np.ndarray, count: int, actions: int, observer: int, params: np.ndarray,
                other_params: np.ndarray, table, seeds: np.ndarray, first_world: int, leaf_trick: int,
                match_score: np.ndarray, mover_values, history: bool, values: np.ndarray) -> int:
    """``values[w, a]`` for every action of the mask ``actions`` in each of the first ``count`` worlds: the
    heuristic rollouts of :func:`.heuristic.rollout_values` played only until ``leaf_trick`` tricks are complete
    (R7), then valued by ``mover_values(observations, masks, states) -> (n,)``, the game points the leaf's mover
    expects from his observation and legal actions, and the leaf's state in its world if the valuation reads it
    (one batched call: a network's state value, a critic of the world, or a q network's best action's value),
    negated when he is the observer's opponent (R16: a deal's game points are won by one player from the other).
    Rollouts that end or are solved first keep their exact game points (:func:`.heuristic.rollout_leaves`). Returns
    how many reached a leaf."""
    from ..actions import NUM_ACTIONS
    from ..observation import EXTENDED_OBSERVATION_SIZE, OBSERVATION_SIZE

    total = count * bin(actions).count("1")
    observations = np.empty((total, EXTENDED_OBSERVATION_SIZE if history else OBSERVATION_SIZE), dtype=np.float32)
    masks = np.zeros((total, NUM_ACTIONS), dtype=np.bool_)
    leaf_world, leaf_action = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    leaf_sign = np.empty(total, dtype=np.int64)
    leaf_states = np.empty((total, STATE_SIZE), dtype=np.int64)
    leaves = rollout_leaves(worlds, count, actions, observer, params, other_params, table.entries, table.nodes, seeds,
                            first_world, leaf_trick, match_score, values, observations, masks, leaf_world,
                            leaf_action, leaf_sign, leaf_states)
    if leaves:
        mover = np.asarray(mover_values(observations[:leaves], masks[:leaves], leaf_states[:leaves]),
                           dtype=np.float64).reshape(leaves)
        values[leaf_world[:leaves], leaf_action[:leaves]] = leaf_sign[:leaves] * mover
    return leaves


__all__ = ["CONTINUATION_ENDGAMES", "advance_continuations", "apply_continuation_actions", "branch_worlds", "leaf_values",
           "play_out"]
