"""The observation vector of one seat in three-player Sixty-six (R21): its information set as float32 in [0, 1].

Built only from :class:`~sixtysix_env.three_infoset.ThreeInformationSet` (own hand, public play, shown marriages,
shown voids, points), so it cannot reveal a hidden card; a property test checks that it is the same in every
layout of the hidden cards consistent with the seat's knowledge. Seats are *relative*: piece ``..._self`` is the
observing seat, ``..._left`` the seat that plays after it (``(seat + 1) % 3``), ``..._right`` the one after that.
docs/observation.md lists every piece with its offset (a test keeps it in step with this module).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cards import SUIT_MASKS
from .observation import ObservationPiece
from .three import NUM_ACTIONS_THREE, STAGE_NAMES, ThreePlayerGame, check_player
from .three_infoset import ThreeInformationSet

POINTS_SCALE = 240  # counted points: 120 card points plus at most 100 in marriages (40 + 3 x 20)
MARRIAGE_SCALE = 100
TRICKS_SCALE = 8

RELATIVE = ("self", "left", "right")
THREE_OBSERVATION_LAYOUT: tuple[ObservationPiece, ...] = (
    ObservationPiece("hand", 24, "cards", "cards in my hand (forehand naming trump: only his first three, R21)"),
    ObservationPiece("trump_suit", 4, "onehot", "trump suit C D H S (all zero before forehand names it)"),
    ObservationPiece("stage", 5, "onehot", "stage: " + ", ".join(STAGE_NAMES)),
    ObservationPiece("my_position", 3, "onehot", "my position this deal: forehand, middlehand, dealer"),
    ObservationPiece("to_move", 3, "onehot", "who is to move: self, left, right (all zero once over)"),
    *(ObservationPiece(f"table_{who}", 24, "cards", f"the card {who} played to the current trick") for who in RELATIVE),
    *(ObservationPiece(f"won_{who}", 24, "cards", f"cards in the tricks {who} has won") for who in RELATIVE),
    *(ObservationPiece(f"known_{who}", 24, "cards", f"cards {who} is known to hold (a shown marriage)")
      for who in RELATIVE[1:]),
    *(ObservationPiece(f"void_{who}", 4, "flags", f"suits {who} has shown to be void in (R21 follow rule)")
      for who in RELATIVE[1:]),
    *(ObservationPiece(f"marriages_{who}", 4, "flags", f"suits whose marriage {who} has announced")
      for who in RELATIVE),
    ObservationPiece("unseen", 24, "cards", "cards I have not seen (held by the others, place unknown)"),
    ObservationPiece("early_marriage", 1, "flags", "switch three_player_early_marriage (R21)"),
    ObservationPiece("points", 3, "scalar", f"counted points (R12) of self, left, right, / {POINTS_SCALE}"),
    ObservationPiece("marriage_points", 3, "scalar",
                     f"marriage points announced (counted or waiting for a trick) of self, left, right, / {MARRIAGE_SCALE}"),
    ObservationPiece("tricks_won", 3, "scalar", f"tricks won by self, left, right, / {TRICKS_SCALE}"),
)
THREE_OBSERVATION_SLICES: dict[str, slice] = {}
_offset = 0
for _piece in THREE_OBSERVATION_LAYOUT:
    THREE_OBSERVATION_SLICES[_piece.name] = slice(_offset, _offset + _piece.size)
    _offset += _piece.size
THREE_OBSERVATION_SIZE = _offset
del _offset, _piece

_BITS = np.array([1 << card for card in range(24)], dtype=np.int64)


def _plane(vector: np.ndarray, name: str, mask: int) -> None:
    if mask:
        vector[THREE_OBSERVATION_SLICES[name]] = (mask & _BITS) != 0


def encode_three_infoset(infoset: ThreeInformationSet) -> np.ndarray:
    """The observation vector of ``infoset`` (see :data:`THREE_OBSERVATION_LAYOUT`)."""
    vector = np.zeros(THREE_OBSERVATION_SIZE, dtype=np.float32)
    seat = infoset.player
    order = (seat, (seat + 1) % 3, (seat + 2) % 3)
    s = THREE_OBSERVATION_SLICES
    _plane(vector, "hand", infoset.hand)
    if infoset.trump_suit >= 0:
        vector[s["trump_suit"].start + infoset.trump_suit] = 1.0
    vector[s["stage"].start + infoset.stage] = 1.0
    vector[s["my_position"].start + (seat - infoset.dealer - 1) % 3] = 1.0
    if infoset.to_move is not None:
        vector[s["to_move"].start + (infoset.to_move - seat) % 3] = 1.0
    for offset, card in enumerate(infoset.trick_cards):
        player = (infoset.leader + offset) % 3
        vector[s[f"table_{RELATIVE[(player - seat) % 3]}"].start + card] = 1.0
    for relative, player in enumerate(order):
        who = RELATIVE[relative]
        _plane(vector, f"won_{who}", infoset.won_cards[player])
        if relative:
            _plane(vector, f"known_{who}", infoset.known[player])
            void = infoset.void[player]
            for suit in range(4):
                if void & SUIT_MASKS[suit] == SUIT_MASKS[suit]:
                    vector[s[f"void_{who}"].start + suit] = 1.0
        vector[s["points"].start + relative] = min(1.0, infoset.points[player] / POINTS_SCALE)
        vector[s["marriage_points"].start + relative] = infoset.marriage_points[player] / MARRIAGE_SCALE
        vector[s["tricks_won"].start + relative] = infoset.tricks_won[player] / TRICKS_SCALE
    for marriage in infoset.marriages:
        vector[s[f"marriages_{RELATIVE[(marriage.player - seat) % 3]}"].start + marriage.suit] = 1.0
    _plane(vector, "unseen", infoset.unseen)
    vector[s["early_marriage"].start] = float(infoset.rules.three_player_early_marriage)
    return vector


def encode_three_observation(game: ThreePlayerGame, player: int) -> np.ndarray:
    return encode_three_infoset(ThreeInformationSet(game, player))


def three_action_mask(game: ThreePlayerGame, player: int | None = None, dtype: Any = np.int8) -> np.ndarray:
    """Legal actions of ``player`` (default: the seat to move) over the 45 three-player actions; all zero for a
    seat that is not to move."""
    if player is not None:  # else "player_1" or 5 gave an all-zero mask silently
        player = check_player(player)
    mask = np.zeros(NUM_ACTIONS_THREE, dtype=dtype)
    if player is None or player == game.current_player:
        mask[game.legal_actions()] = 1
    return mask


def three_observation_table_markdown() -> str:
    """The layout as a Markdown table (docs/observation.md, three-player section)."""
    lines = ["| offset | size | name | kind | meaning |", "| --- | --- | --- | --- | --- |"]
    for piece in THREE_OBSERVATION_LAYOUT:
        lines.append(f"| {THREE_OBSERVATION_SLICES[piece.name].start} | {piece.size} | `{piece.name}` | "
                     f"{piece.kind} | {piece.meaning} |")
    return "\n".join(lines)


__all__ = [
    "THREE_OBSERVATION_LAYOUT", "THREE_OBSERVATION_SIZE", "THREE_OBSERVATION_SLICES", "encode_three_infoset",
    "encode_three_observation", "three_action_mask", "three_observation_table_markdown",
]
