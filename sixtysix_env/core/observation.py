"""The observation vector (docs/observation.md) and the action mask, written by numba kernels from core states.

A port of :meth:`sixtysix_env.observation.ObservationEncoder.encode` to the state array of :mod:`.layout`: the
state already holds every fact the vector needs (the cards each player played, the cards he showed, the cards his
opponent showed he cannot hold under R8, the suits of his marriages), so one row is a few masks and a few hundred
stores. :func:`encode_batch` writes a whole batch into preallocated arrays (the batched environments of
:mod:`sixtysix_env.vector`); ``tests/test_vector_env.py`` checks that every row is bit-identical to the Python
encoder's vector for the same game, match score included, over thousands of random positions of every preset.

The offsets come from :data:`~sixtysix_env.observation.OBSERVATION_SLICES` (one layout, one place); the scalar
pieces are divided in float64 and rounded once to float32, exactly as the Python encoder's ``struct.pack`` does.
"""

from __future__ import annotations

import numpy as np

from ..actions import NUM_ACTIONS
from ..observation import (
    HAND_SCALE, HISTORY_SLICES, OBSERVATION_SIZE, OBSERVATION_SLICES, PENDING_MARRIAGE_SCALE, POINTS_SCALE,
    TALON_SCALE, checked_score_pair,
)
from ._jit import kernel
from .engine import legal_mask, popcount, talon_size
from .layout import (
    BOTTOM_CARD, CANNOT_HOLD0, CLOSED_BY, DEALER, HAND0, LEAD_CARD, LEADER, LED0, MARRIAGE_POINTS0, MARRIED_SUITS0,
    OPPONENT_TRICKLESS_AT_CLOSE, OVER, PHASE2, PLAYED0, RULE_BITS, RULE_DECK_20, SHOWN0, STAGE, TO_MOVE,
    TRICK_POINTS0, TRICKS_WON0, TRUMP_SUIT, WON_CARDS0,
)

# Offsets of the pieces (numba reads module globals as compile-time constants).
_HAND = OBSERVATION_SLICES["hand"].start
_TALON_BOTTOM = OBSERVATION_SLICES["talon_bottom"].start
_TRICK_LEAD = OBSERVATION_SLICES["trick_lead"].start
_PLAYED_ME = OBSERVATION_SLICES["played_by_me"].start
_PLAYED_OPP = OBSERVATION_SLICES["played_by_opponent"].start
_WON_ME = OBSERVATION_SLICES["won_by_me"].start
_WON_OPP = OBSERVATION_SLICES["won_by_opponent"].start
_OPP_KNOWN = OBSERVATION_SLICES["opponent_known"].start
_UNSEEN = OBSERVATION_SLICES["unseen"].start
_CANNOT_HOLD = OBSERVATION_SLICES["opponent_cannot_hold"].start
_FLAGS = OBSERVATION_SLICES["trump_suit"].start  # the one-hot and flag pieces follow each other from here
_FLAGS_END = OBSERVATION_SLICES["rules"].stop
_TRUMP = OBSERVATION_SLICES["trump_suit"].start
_MARRIED_ME = OBSERVATION_SLICES["marriages_by_me"].start
_MARRIED_OPP = OBSERVATION_SLICES["marriages_by_opponent"].start
_STAGE = OBSERVATION_SLICES["stage"].start
_MY_TURN = OBSERVATION_SLICES["my_turn"].start
_FOREHAND = OBSERVATION_SLICES["forehand"].start
_CLOSED_ME = OBSERVATION_SLICES["closed_by_me"].start
_CLOSED_OPP = OBSERVATION_SLICES["closed_by_opponent"].start
_CLOSER_OPP_TRICKLESS = OBSERVATION_SLICES["closer_opponent_trickless"].start
_PHASE2 = OBSERVATION_SLICES["phase2"].start
_HAVE_TRICK = OBSERVATION_SLICES["i_have_trick"].start
_OPP_HAS_TRICK = OBSERVATION_SLICES["opponent_has_trick"].start
_RULES = OBSERVATION_SLICES["rules"].start
_RULES_SIZE = OBSERVATION_SLICES["rules"].stop - _RULES
_TALON_SIZE = OBSERVATION_SLICES["talon_size"].start
_OPP_HAND_SIZE = OBSERVATION_SLICES["opponent_hand_size"].start
_MY_POINTS = OBSERVATION_SLICES["my_points"].start
_OPP_POINTS = OBSERVATION_SLICES["opponent_points"].start
_MY_PENDING = OBSERVATION_SLICES["my_pending_marriage"].start
_OPP_PENDING = OBSERVATION_SLICES["opponent_pending_marriage"].start
_MY_GAME_POINTS = OBSERVATION_SLICES["my_game_points"].start
_OPP_GAME_POINTS = OBSERVATION_SLICES["opponent_game_points"].start
_OBSERVATION_SIZE = OBSERVATION_SIZE
_LED_ME = HISTORY_SLICES["led_by_me"].start - OBSERVATION_SIZE  # offsets in the history planes
_LED_OPP = HISTORY_SLICES["led_by_opponent"].start - OBSERVATION_SIZE
_DECK_24 = (1 << 24) - 1
_DECK_20 = _DECK_24 & ~sum(1 << (6 * suit) for suit in range(4))  # R2: no nines (card id 6 * suit)
_NUM_ACTIONS = NUM_ACTIONS
_TALON_SCALE, _HAND_SCALE, _POINTS_SCALE, _PENDING_SCALE = TALON_SCALE, HAND_SCALE, POINTS_SCALE, \
    PENDING_MARRIAGE_SCALE


@kernel
def _write_cards(row, offset, mask):
    for card in range(24):
        row[offset + card] = (mask >> card) & 1


@kernel
def _scaled(value, limit, scale):
    """``min(value, limit) / scale`` divided in float64, rounded once to float32 (as ``struct.pack('<f', ...)``)."""
    return np.float32((value if value < limit else limit) / scale)


@kernel
def encode_row(state, player, match_score, row):
    """Write ``player``'s observation of ``state`` into ``row`` (float32, OBSERVATION_SIZE).

    ``match_score`` holds the scaled game points of players 0 and 1 (R17: ``min(points, target) / target`` as
    float32, see :func:`scaled_match_score`). Mirrors ``ObservationEncoder.encode`` piece by piece."""
    opponent = 1 - player
    hand = state[HAND0 + player]
    won_me = state[WON_CARDS0 + player]
    won_opp = state[WON_CARDS0 + opponent]
    played_me = state[PLAYED0 + player]
    played_opp = state[PLAYED0 + opponent]
    lead = state[LEAD_CARD]
    lead_mask = 0
    if lead >= 0:  # the card on the table counts as played by its leader
        lead_mask = 1 << lead
        if state[LEADER] == player:
            played_me |= lead_mask
        else:
            played_opp |= lead_mask
    bottom = state[BOTTOM_CARD]
    bottom_mask = (1 << bottom) if bottom >= 0 else 0
    # Cards the opponent showed (R7, R9, R11) and has not played since are still in his hand.
    known = state[SHOWN0 + opponent] & ~(won_me | won_opp | lead_mask)
    rules = state[RULE_BITS]
    deck = _DECK_20 if rules & RULE_DECK_20 else _DECK_24
    unseen = deck & ~(hand | won_me | won_opp | lead_mask | known | bottom_mask)
    cannot_hold = state[CANNOT_HOLD0 + player] & unseen
    _write_cards(row, _HAND, hand)
    _write_cards(row, _TALON_BOTTOM, bottom_mask)
    _write_cards(row, _TRICK_LEAD, lead_mask)
    _write_cards(row, _PLAYED_ME, played_me)
    _write_cards(row, _PLAYED_OPP, played_opp)
    _write_cards(row, _WON_ME, won_me)
    _write_cards(row, _WON_OPP, won_opp)
    _write_cards(row, _OPP_KNOWN, known)
    _write_cards(row, _UNSEEN, unseen)
    _write_cards(row, _CANNOT_HOLD, cannot_hold)
    for index in range(_FLAGS, _FLAGS_END):
        row[index] = 0.0
    row[_TRUMP + state[TRUMP_SUIT]] = 1.0
    for suit in range(4):
        row[_MARRIED_ME + suit] = (state[MARRIED_SUITS0 + player] >> suit) & 1
        row[_MARRIED_OPP + suit] = (state[MARRIED_SUITS0 + opponent] >> suit) & 1
    stage = state[STAGE]
    row[_STAGE + stage] = 1.0
    row[_MY_TURN] = 1.0 if stage != OVER and state[TO_MOVE] == player else 0.0
    row[_FOREHAND] = 1.0 if state[DEALER] != player else 0.0  # R3: forehand is the dealer's opponent
    closed_by = state[CLOSED_BY]
    if closed_by >= 0:
        row[_CLOSED_ME if closed_by == player else _CLOSED_OPP] = 1.0
        row[_CLOSER_OPP_TRICKLESS] = state[OPPONENT_TRICKLESS_AT_CLOSE]
    row[_PHASE2] = state[PHASE2]
    tricks_me = state[TRICKS_WON0 + player]
    tricks_opp = state[TRICKS_WON0 + opponent]
    row[_HAVE_TRICK] = 1.0 if tricks_me > 0 else 0.0
    row[_OPP_HAS_TRICK] = 1.0 if tricks_opp > 0 else 0.0
    for bit in range(_RULES_SIZE):
        row[_RULES + bit] = (rules >> bit) & 1
    # R12: marriage points count once the player has a trick; before, they are pending.
    my_points = state[TRICK_POINTS0 + player]
    my_pending = state[MARRIAGE_POINTS0 + player]
    if tricks_me > 0:
        my_points += my_pending
        my_pending = 0
    opp_points = state[TRICK_POINTS0 + opponent]
    opp_pending = state[MARRIAGE_POINTS0 + opponent]
    if tricks_opp > 0:
        opp_points += opp_pending
        opp_pending = 0
    row[_TALON_SIZE] = _scaled(talon_size(state), _TALON_SCALE, _TALON_SCALE)
    row[_OPP_HAND_SIZE] = _scaled(popcount(state[HAND0 + opponent]), _HAND_SCALE, _HAND_SCALE)
    row[_MY_POINTS] = _scaled(my_points, _POINTS_SCALE, _POINTS_SCALE)
    row[_OPP_POINTS] = _scaled(opp_points, _POINTS_SCALE, _POINTS_SCALE)
    row[_MY_PENDING] = _scaled(my_pending, _PENDING_SCALE, _PENDING_SCALE)
    row[_OPP_PENDING] = _scaled(opp_pending, _PENDING_SCALE, _PENDING_SCALE)
    row[_MY_GAME_POINTS] = match_score[player]
    row[_OPP_GAME_POINTS] = match_score[opponent]


@kernel
def encode_history_row(state, player, row):
    """Write ``player``'s history planes (``HISTORY_LAYOUT``: the cards he led, then those his opponent led, the
    card on the table included) into ``row`` (HISTORY_SIZE floats): the Python ``encode_history``'s vector."""
    led_me = state[LED0 + player]
    led_opp = state[LED0 + 1 - player]
    lead = state[LEAD_CARD]
    if lead >= 0:
        if state[LEADER] == player:
            led_me |= 1 << lead
        else:
            led_opp |= 1 << lead
    _write_cards(row, _LED_ME, led_me)
    _write_cards(row, _LED_OPP, led_opp)


@kernel
def encode_extended_row(state, player, match_score, row):
    """The observation and then the history planes into ``row`` (EXTENDED_OBSERVATION_SIZE floats)."""
    encode_row(state, player, match_score, row[:_OBSERVATION_SIZE])
    encode_history_row(state, player, row[_OBSERVATION_SIZE:])


@kernel
def encode_to_width(state, player, match_score, row):
    """The observation into ``row``, followed by the history planes when ``row`` has room for them (the rows of
    labels with ``label.history``, the rollouts of a network that reads the planes)."""
    if row.shape[0] > _OBSERVATION_SIZE:
        encode_extended_row(state, player, match_score, row)
    else:
        encode_row(state, player, match_score, row)


@kernel
def mask_row(state, player, mask):
    """Write the legal actions of ``player`` as 0/1 into ``mask`` (37 entries; all 0 unless he is to move)."""
    legal = 0
    if state[STAGE] != OVER and state[TO_MOVE] == player:
        legal = legal_mask(state)
    for action in range(_NUM_ACTIONS):
        mask[action] = (legal >> action) & 1


@kernel
def observe_into(state, player, match_score, row, mask):
    """``player``'s observation into ``row`` and his action mask into ``mask`` (one call from Python)."""
    encode_row(state, player, match_score, row)
    mask_row(state, player, mask)


@kernel
def encode_batch(states, players, match_scores, observations, masks):
    """Row ``i``: player ``players[i]``'s observation of ``states[i]`` and his action mask (int8 or bool)."""
    for index in range(states.shape[0]):
        observe_into(states[index], players[index], match_scores[index], observations[index], masks[index])


def scaled_match_score(match_score, bummerl_target: int) -> np.ndarray:
    """The game points of players 0 and 1 as the observation shows them (float32 ``min(points, target) /
    target``, R17). ``match_score`` must already be checked (two non-negative integers)."""
    return np.array([min(int(value), bummerl_target) / bummerl_target for value in match_score], dtype=np.float32)


def encode_state(state: np.ndarray, player: int, match_score=(0, 0), bummerl_target: int = 7) -> np.ndarray:
    """One observation vector of ``player`` (0 or 1) from a core state (a new float32 array): the same vector as
    ``ObservationEncoder(rules, match_score).encode(game, player)`` for the game the state came from."""
    from .state import check_state  # here: state.py is the boundary module, imported lazily as in solver.py

    check_state(state)
    if player not in (0, 1) or isinstance(player, bool):
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    if isinstance(bummerl_target, bool) or not isinstance(bummerl_target, (int, np.integer)) or bummerl_target < 1:
        raise ValueError(f"bummerl_target must be a positive integer (R17), got {bummerl_target!r}")
    match_score = checked_score_pair(match_score)
    row = np.empty(OBSERVATION_SIZE, dtype=np.float32)
    encode_row(state, int(player), scaled_match_score(match_score, bummerl_target), row)
    return row


__all__ = ["encode_batch", "encode_extended_row", "encode_history_row", "encode_row", "encode_to_width",
           "encode_state", "mask_row", "observe_into", "scaled_match_score"]
