"""What a critic of a sampled world reads: the mover's observation, and what the world fixes beyond it.

A rollout search values its candidate actions in worlds it samples (every hidden card placed), so where it cuts a
rollout short (``rollout:leaf_tricks``) the leaf's value may use what that world knows and the mover does not. The
input sets, each the named pieces in this order:

* ``observation``: the mover's observation (:data:`~sixtysix_env.observation.OBSERVATION_LAYOUT`) with the Bummerl
  score pieces (``my_game_points``, ``opponent_game_points``, R17) set to zero. A critic values one deal in game
  points (R16); a search in a Bummerl turns them into Bummerl equity itself, so the score must not move the value.
* ``opponent_hand``: that, then the mover's opponent's hand, one bit per card id (R1: ``6 * suit + rank``).
* ``full``: that, then the face-down talon in the order it will be drawn (R7), one row of card bits per slot from
  the next card drawn on, ``TALON_ORDER_SLOTS`` rows, all zero past the talon's end. The card under the talon (R4)
  is in the observation already (``talon_bottom``).

A critic fitted on these inputs (``python -m train.critic``) estimates the game points the mover scores when a
network plays both seats on from there. Plain NumPy on rows of core states, so the fitting and the search build
the same vectors.
"""

from __future__ import annotations

import numpy as np

from ..cards import NUM_CARDS
from ..observation import OBSERVATION_SIZE, OBSERVATION_SLICES
from .layout import HAND0, STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS, STOCK_SLOTS, TO_MOVE

CRITIC_INPUTS = ("observation", "opponent_hand", "full")
TALON_ORDER_SLOTS = STOCK_SLOTS
_SCORE_PIECES = (OBSERVATION_SLICES["my_game_points"], OBSERVATION_SLICES["opponent_game_points"])


def critic_input_size(inputs: str) -> int:
    """The length of one input row of the set ``inputs`` (one of :data:`CRITIC_INPUTS`)."""
    check_critic_inputs(inputs)
    size = OBSERVATION_SIZE
    if inputs in ("opponent_hand", "full"):
        size += NUM_CARDS
    if inputs == "full":
        size += TALON_ORDER_SLOTS * NUM_CARDS
    return size


def check_critic_inputs(inputs: object) -> str:
    """``inputs`` if it names an input set, else a ``ValueError`` listing them."""
    if inputs not in CRITIC_INPUTS:
        raise ValueError(f"a critic's inputs must be one of {', '.join(CRITIC_INPUTS)}, got {inputs!r}")
    return inputs


def card_bits(masks: np.ndarray) -> np.ndarray:
    """(n, NUM_CARDS) float32: bit ``c`` of each 24-bit card mask."""
    masks = np.asarray(masks, dtype=np.int64)
    return ((masks[:, None] >> np.arange(NUM_CARDS)) & 1).astype(np.float32)


def talon_order(states: np.ndarray) -> np.ndarray:
    """(n, TALON_ORDER_SLOTS * NUM_CARDS) float32: slot ``k`` holds the card drawn ``k``-th from now (R7)."""
    count = len(states)
    rows = np.zeros((count, TALON_ORDER_SLOTS, NUM_CARDS), dtype=np.float32)
    for slot in range(TALON_ORDER_SLOTS):
        position = states[:, STOCK_POS] + slot
        present = position < states[:, STOCK_LEN]
        cards = states[present, STOCK + position[present]]
        rows[np.flatnonzero(present), slot, cards] = 1.0
    return rows.reshape(count, TALON_ORDER_SLOTS * NUM_CARDS)


def critic_features(observations: np.ndarray, states: np.ndarray, inputs: str) -> np.ndarray:
    """The input rows of the set ``inputs`` for positions given as their movers' observations (float32, the first
    :data:`OBSERVATION_SIZE` columns are read; history planes after them are ignored) and core states (rows of
    :data:`STATE_SIZE`, the player to move deciding)."""
    check_critic_inputs(inputs)
    states = np.asarray(states, dtype=np.int64)
    if states.ndim != 2 or states.shape[1] != STATE_SIZE or len(states) != len(observations):
        raise ValueError(f"critic_features needs one core state ({STATE_SIZE} slots) per observation, got states of "
                         f"shape {states.shape} for {len(observations)} observations")
    observation = np.array(observations[:, :OBSERVATION_SIZE], dtype=np.float32)
    for piece in _SCORE_PIECES:
        observation[:, piece] = 0.0
    parts = [observation]
    if inputs in ("opponent_hand", "full"):
        movers = states[:, TO_MOVE]
        parts.append(card_bits(states[np.arange(len(states)), HAND0 + 1 - movers]))
    if inputs == "full":
        parts.append(talon_order(states))
    return np.concatenate(parts, axis=1) if len(parts) > 1 else observation


__all__ = ["CRITIC_INPUTS", "TALON_ORDER_SLOTS", "card_bits", "check_critic_inputs", "critic_features",
           "critic_input_size", "talon_order"]
