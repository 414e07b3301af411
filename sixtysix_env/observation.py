"""The observation vector of one player: his information set (RULES "What a player may know"), as float32 in [0, 1].

The layout is declared up front as named pieces (:data:`OBSERVATION_LAYOUT`, :data:`OBSERVATION_SLICES`), in
the manner of OpenSpiel's observation tensors: first the binary pieces (card sets as 24-bit planes indexed by card
id, one-hots and flags), then a few scaled numbers. docs/observation.md lists every piece with its offset (a test
keeps it in step with this module). :func:`describe_observation` decodes a vector back into readable values.

Only public facts and the player's own hand enter the vector: never the opponent's hand beyond the cards he has
shown (:func:`~sixtysix_env.infoset.opponent_known_cards`), never the order of the talon or the deck. A property
test checks that the vector does not change when the opponent's hidden cards and the face-down talon are
permuted among themselves.

Speed: the environments build one observation per step, so nothing loops over cards in Python. Each card plane
(a 24-bit mask) becomes its 96 bytes of float32 by two lookups in a table of 12-bit halves; the flags are one small
integer whose bytes are cached; the scalars come from tables of their few possible values. One ``bytearray.join``
and one ``np.frombuffer`` make the vector.
"""

from __future__ import annotations

import os
import struct
from typing import Any, NamedTuple, Sequence

import numpy as np

from .actions import NUM_ACTIONS
from .cards import CARD_NAMES, HIGHER_IN_SUIT, SUIT_MASKS, SUITS, deck_cards, mask_of
from .game import GOAL, STAGE_NAMES, Game, check_player
from .infoset import InformationSet
from .integers import as_integer
from .rules import Rules


class ObservationPiece(NamedTuple):
    """One named piece of the observation vector."""

    name: str
    size: int
    kind: str  # "cards" (24-bit card plane), "onehot", "flags" (independent bits) or "scalar" (scaled number)
    meaning: str


# The switches of Rules encoded in the "rules" piece, in order (bit set = switch on; "deck_20" = R2 20 cards).
RULE_FLAGS = (
    "deck_20", "exchange_needs_trick", "exchange_after_opponent_closes", "close_draw_option",
    "marriage_needs_trick", "marriage_in_phase2", "auto_declare", "allow_false_declaration",
)

# Divisors of the scalar pieces (values are clipped to 1 after division).
TALON_SCALE = 12  # R4: at most 12 talon cards (11 face down + the bottom card)
HAND_SCALE = 6
POINTS_SCALE = GOAL  # counted points: 66 and above all read 1.0 (R13: enough to declare)
PENDING_MARRIAGE_SCALE = 40  # R11/R12: at most one marriage (20 or 40) can wait for its first trick

OBSERVATION_LAYOUT: tuple[ObservationPiece, ...] = (
    # --- binary pieces: card planes (bit = card id, R1 order 9C JC QC KC TC AC 9D ... AS) ---
    ObservationPiece("hand", 24, "cards", "cards in my hand"),
    ObservationPiece("talon_bottom", 24, "cards",
                     "the card under the talon while it lies there: the trump card (face up, or turned down after a "
                     "closing, R10) or the trump nine laid by an exchange (R9)"),
    ObservationPiece("trick_lead", 24, "cards", "the card led to the current trick, on the table (none at a lead)"),
    ObservationPiece("played_by_me", 24, "cards", "cards I have played this deal (the card on the table included)"),
    ObservationPiece("played_by_opponent", 24, "cards",
                     "cards the opponent has played (the card on the table included)"),
    ObservationPiece("won_by_me", 24, "cards", "cards in the tricks I won"),
    ObservationPiece("won_by_opponent", 24, "cards", "cards in the tricks the opponent won"),
    ObservationPiece("opponent_known", 24, "cards",
                     "unplayed cards known to be in the opponent's hand: shown marriage cards (R11), the card he "
                     "took by an exchange (R9), the bottom card he took with the talon's last trick (R7)"),
    ObservationPiece("unseen", 24, "cards",
                     "cards I have not seen: the opponent's unknown cards and the face-down talon (R1/R2 deck)"),
    ObservationPiece("opponent_cannot_hold", 24, "cards",
                     "unseen cards the opponent cannot hold, shown by how he followed my leads under R8"),
    # --- binary pieces: one-hots and flags ---
    ObservationPiece("trump_suit", 4, "onehot", "trump suit C D H S (R4)"),
    ObservationPiece("marriages_by_me", 4, "flags", "suits C D H S in which I announced a marriage (R11)"),
    ObservationPiece("marriages_by_opponent", 4, "flags", "suits C D H S in which the opponent announced a marriage"),
    ObservationPiece("stage", 5, "onehot", "stage " + " / ".join(STAGE_NAMES) + " (docs/actions.md)"),
    ObservationPiece("my_turn", 1, "flags", "I am to move"),
    ObservationPiece("forehand", 1, "flags", "I am forehand, the dealer's opponent (R3)"),
    ObservationPiece("closed_by_me", 1, "flags", "I closed the talon (R10)"),
    ObservationPiece("closed_by_opponent", 1, "flags", "the opponent closed the talon (R10)"),
    ObservationPiece("closer_opponent_trickless", 1, "flags",
                     "the closer's opponent had no trick when the talon was closed (R16: the closer then risks 3)"),
    ObservationPiece("phase2", 1, "flags", "the R8 follow rules apply (talon closed or exhausted)"),
    ObservationPiece("i_have_trick", 1, "flags", "I have won a trick (my marriages count, R12)"),
    ObservationPiece("opponent_has_trick", 1, "flags", "the opponent has won a trick"),
    ObservationPiece("rules", len(RULE_FLAGS), "flags", "rule switches: " + ", ".join(RULE_FLAGS)),
    # --- scalar pieces ---
    ObservationPiece("talon_size", 1, "scalar", f"talon size (face-down cards + bottom card, R4) / {TALON_SCALE}"),
    ObservationPiece("opponent_hand_size", 1, "scalar", f"cards in the opponent's hand / {HAND_SCALE}"),
    ObservationPiece("my_points", 1, "scalar", f"my counted points (R12) / {POINTS_SCALE}, clipped to 1"),
    ObservationPiece("opponent_points", 1, "scalar", f"the opponent's counted points / {POINTS_SCALE}, clipped to 1"),
    ObservationPiece("my_pending_marriage", 1, "scalar",
                     f"my marriage points not yet counted for lack of a trick (R12) / {PENDING_MARRIAGE_SCALE}"),
    ObservationPiece("opponent_pending_marriage", 1, "scalar",
                     f"the opponent's uncounted marriage points / {PENDING_MARRIAGE_SCALE}"),
    ObservationPiece("my_game_points", 1, "scalar",
                     "my game points in the current Bummerl / bummerl_target (R17; given by the caller, else 0)"),
    ObservationPiece("opponent_game_points", 1, "scalar", "the opponent's game points / bummerl_target"),
)


def _piece_slices(layout: Sequence[ObservationPiece], start: int) -> dict[str, slice]:
    """Each piece's slice of the vector, the pieces laid one after the other from offset ``start``."""
    slices, offset = {}, start
    for piece in layout:
        slices[piece.name] = slice(offset, offset + piece.size)
        offset += piece.size
    return slices


OBSERVATION_SLICES: dict[str, slice] = _piece_slices(OBSERVATION_LAYOUT, 0)
OBSERVATION_SIZE = OBSERVATION_SLICES[OBSERVATION_LAYOUT[-1].name].stop
NUM_BINARY_FEATURES = sum(piece.size for piece in OBSERVATION_LAYOUT if piece.kind != "scalar")
NUM_SCALAR_FEATURES = OBSERVATION_SIZE - NUM_BINARY_FEATURES
assert all(piece.kind == "scalar"
           for piece in OBSERVATION_LAYOUT if OBSERVATION_SLICES[piece.name].start >= NUM_BINARY_FEATURES)

# --- the history planes, beside the observation ----------------------------------------------------------------
# What each player led. The observation keeps the cards each player played and won, not which of them he led, so
# which of the opponent's cards answered a lead, and whether they took it, is lost; in phase 1 (R7: no duty to
# follow) that answer is where his play shows his hand. Networks fitted with these planes read the observation
# followed by them (OBSERVATION_SIZE + HISTORY_SIZE floats, :func:`encode_history`); the environments' spaces
# are unchanged.
HISTORY_LAYOUT: tuple[ObservationPiece, ...] = (
    ObservationPiece("led_by_me", 24, "cards", "cards I have led this deal (the card on the table included)"),
    ObservationPiece("led_by_opponent", 24, "cards",
                     "cards the opponent has led this deal (the card on the table included)"),
)
HISTORY_SLICES: dict[str, slice] = _piece_slices(HISTORY_LAYOUT, OBSERVATION_SIZE)  # in the extended vector
EXTENDED_OBSERVATION_SIZE = HISTORY_SLICES[HISTORY_LAYOUT[-1].name].stop
HISTORY_SIZE = EXTENDED_OBSERVATION_SIZE - OBSERVATION_SIZE


def led_cards(game: Game, player: int) -> int:
    """The cards ``player`` has led in ``game`` (a mask; the card on the table included)."""
    led = 0
    for leader, lead_card, _follow, _winner, _phase2 in game.tricks:
        if leader == player:
            led |= 1 << lead_card
    if game.lead_card >= 0 and game.leader == player:
        led |= 1 << game.lead_card
    return led


def encode_history(game: Game, player: int) -> np.ndarray:
    """The history planes of ``player`` in ``game`` (:data:`HISTORY_LAYOUT`): float32, :data:`HISTORY_SIZE`. For an
    information set pass its template game (``infoset._template``, as :func:`encode_extended_infoset` does): the
    leads are public."""
    if player != 0 and player != 1:
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    mine, theirs = led_cards(game, player), led_cards(game, 1 - player)
    return np.frombuffer(bytearray().join((_HALF_PLANE[mine & 4095], _HALF_PLANE[mine >> 12],
                                           _HALF_PLANE[theirs & 4095], _HALF_PLANE[theirs >> 12])), dtype="<f4")


# --- packing tables -------------------------------------------------------------------------------------------
_CARD_PIECES = tuple(piece.name for piece in OBSERVATION_LAYOUT if piece.kind == "cards")
_FLAG_PIECES = tuple(piece.name for piece in OBSERVATION_LAYOUT if piece.kind in ("onehot", "flags"))
_SCALAR_PIECES = tuple(piece.name for piece in OBSERVATION_LAYOUT if piece.kind == "scalar")
# ObservationEncoder.encode writes the pieces in this order; the layout must list them so.
_ENCODE_ORDER = (
    "hand", "talon_bottom", "trick_lead", "played_by_me", "played_by_opponent", "won_by_me", "won_by_opponent",
    "opponent_known", "unseen", "opponent_cannot_hold",
    "trump_suit", "marriages_by_me", "marriages_by_opponent", "stage", "my_turn", "forehand", "closed_by_me",
    "closed_by_opponent", "closer_opponent_trickless", "phase2", "i_have_trick", "opponent_has_trick", "rules",
    "talon_size", "opponent_hand_size", "my_points", "opponent_points", "my_pending_marriage",
    "opponent_pending_marriage", "my_game_points", "opponent_game_points",
)
assert _ENCODE_ORDER == tuple(piece.name for piece in OBSERVATION_LAYOUT), "encode order differs from the layout"
assert _CARD_PIECES + _FLAG_PIECES + _SCALAR_PIECES == _ENCODE_ORDER

# 12-bit half of a card mask -> its 12 float32 (0.0 / 1.0, lowest card first) as raw little-endian bytes.
_HALF_PLANE = [
    row.tobytes()
    for row in np.unpackbits(np.arange(4096, dtype="<u2").view(np.uint8).reshape(-1, 2), axis=1, bitorder="little")
    [:, :12].astype("<f4")
]
# Bit offsets inside the flags integer (the one-hot and flag pieces, in layout order from bit 0).
_FLAG_AT = {name: OBSERVATION_SLICES[name].start - OBSERVATION_SLICES[_FLAG_PIECES[0]].start for name in _FLAG_PIECES}
NUM_FLAG_BITS = sum(OBSERVATION_SLICES[name].stop - OBSERVATION_SLICES[name].start for name in _FLAG_PIECES)
_TRUMP, _MARRIED_ME, _MARRIED_OPP, _STAGE = (
    _FLAG_AT["trump_suit"], _FLAG_AT["marriages_by_me"], _FLAG_AT["marriages_by_opponent"], _FLAG_AT["stage"])
_MY_TURN, _FOREHAND, _CLOSED_ME, _CLOSED_OPP = (
    _FLAG_AT["my_turn"], _FLAG_AT["forehand"], _FLAG_AT["closed_by_me"], _FLAG_AT["closed_by_opponent"])
_CLOSER_OPP_TRICKLESS, _PHASE2 = _FLAG_AT["closer_opponent_trickless"], _FLAG_AT["phase2"]
_HAVE_TRICK, _OPP_HAS_TRICK, _RULES = _FLAG_AT["i_have_trick"], _FLAG_AT["opponent_has_trick"], _FLAG_AT["rules"]


# The flags integer is written as 12-bit chunks like the card planes; its last chunk is cut to the remaining bits.
_FLAG_CHUNKS, _FLAG_REST = divmod(NUM_FLAG_BITS, 12)
assert _FLAG_CHUNKS == 2 and 0 < _FLAG_REST <= 12, "encode writes the flags as two full chunks and a partial one"
_FLAG_REST_TABLE = [chunk[: 4 * _FLAG_REST] for chunk in _HALF_PLANE[: 1 << _FLAG_REST]]


def _scaled_bytes(limit: int, scale: int) -> list[bytes]:
    """float32 bytes of ``min(value, limit) / scale`` for ``value`` in 0..limit."""
    return [struct.pack("<f", min(value, limit) / scale) for value in range(limit + 1)]


def _pair_table(first: list[bytes], second: list[bytes]) -> list[bytes]:
    """Index ``a * len(second) + b`` -> the bytes of ``first[a]`` then ``second[b]`` (one lookup for two pieces)."""
    return [one + two for one in first for two in second]


# Scalars come in adjacent pairs: (talon size, opponent hand size), (my, opponent points), (my, opponent pending).
_TALON_HAND_BYTES = _pair_table(_scaled_bytes(TALON_SCALE, TALON_SCALE), _scaled_bytes(HAND_SCALE, HAND_SCALE))
_POINTS_BYTES = _pair_table(_scaled_bytes(POINTS_SCALE, POINTS_SCALE), _scaled_bytes(POINTS_SCALE, POINTS_SCALE))
_PENDING_BYTES = _pair_table(_scaled_bytes(PENDING_MARRIAGE_SCALE, PENDING_MARRIAGE_SCALE),
                             _scaled_bytes(PENDING_MARRIAGE_SCALE, PENDING_MARRIAGE_SCALE))
_HAND_COUNT = HAND_SCALE + 1
_POINTS_COUNT = POINTS_SCALE + 1
_PENDING_COUNT = PENDING_MARRIAGE_SCALE + 1
_EMPTY_BUFFER = bytearray()
_OPPONENT_HAND_SIZE_AT = OBSERVATION_SLICES["opponent_hand_size"].start


def rules_bits(rules: Rules) -> int:
    """The ``rules`` piece of the observation as an integer (bit i = :data:`RULE_FLAGS` [i])."""
    values = (rules.deck == 20,) + tuple(getattr(rules, name) for name in RULE_FLAGS[1:])
    return sum(1 << index for index, value in enumerate(values) if value)


def checked_score_pair(match_score: Any) -> tuple[int, int]:
    """``match_score`` as the game points of players 0 and 1 in the current Bummerl (R17): two non-negative
    integers, else a ``ValueError`` naming it."""
    try:
        first, second = match_score
    except (TypeError, ValueError):
        raise ValueError(
            f"match_score must be two game point counts (player 0, player 1), got {match_score!r}") from None
    for value in (first, second):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"match_score must hold non-negative integers, got {match_score!r}")
    return (int(first), int(second))


def agents_match_score(given: Any, bummerl_target: int) -> tuple[int, int] | None:
    """The Bummerl score (R17) an environment's agents find in their information sets after a reset with
    ``options["match_score"] = given``: the pair when one of a Bummerl in progress was given (both below
    ``bummerl_target``), else None (a deal on its own, or a score the observation can only clip). One rule for the
    AEC, Gymnasium and vector environments, so an embedded opponent plays for the same Bummerl the learner sees."""
    if given is None:
        return None
    score = checked_score_pair(given)
    return score if max(score) < bummerl_target else None


class ObservationEncoder:
    """Builds observations for games under one set of rules (the rule bits and the deck are computed once).

    ``match_score`` is the game points of players 0 and 1 in the current Bummerl (R17), public knowledge that the
    engine's single deal does not hold; environments playing matches set it before each deal.

    The encoder remembers what it derived from the last game's completed tricks (who played which card, the
    opponents' shown voids), so encoding the same deal step after step only looks at the new tricks.
    """

    __slots__ = (
        "rules", "match_score", "_rules_bits", "_deck_mask", "_score_bytes",
        "_tricks", "_tricks_seen", "_played", "_void", "_known_key", "_known_raw", "_marriage_flags", "_deal_flags",
        "_trump_mask", "_flag_bytes",
    )

    def __init__(self, rules: Rules, match_score: Sequence[int] = (0, 0)):
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules object, got {type(rules).__name__}")
        self.rules = rules
        self._rules_bits = rules_bits(rules) << _RULES
        self._deck_mask = mask_of(deck_cards(rules.deck))
        self.match_score = (0, 0)
        self._score_bytes = (b"", b"")
        self.set_match_score(match_score)
        self._tricks: list | None = None  # the trick list last seen (a game's own list object)
        self._tricks_seen = 0
        self._played = [0, 0]  # cards each player has played in completed tricks
        self._void = [0, 0]  # per player: opponent_void_cards(game, player), grown trick by trick
        self._known_key: tuple | None = None  # (marriages, exchanges, bottom taker) behind the two lists below
        self._known_raw = [0, 0]  # per player: cards shown to be in the opponent's hand, played or not
        self._marriage_flags = [0, 0]  # per player: the marriages_by_me / marriages_by_opponent bits
        self._deal_flags = [0, 0]  # per player: the flags fixed for the whole deal (rules, trump, forehand)
        self._trump_mask = 0
        self._flag_bytes: dict[int, bytes] = {}  # flags integer -> its float32 bytes (a few hundred recur)

    def set_match_score(self, match_score: Sequence[int]) -> None:
        """Game points of players 0 and 1 in the current Bummerl (non-negative integers)."""
        self.match_score = checked_score_pair(match_score)
        target = self.rules.bummerl_target
        first_scaled, second_scaled = (min(value, target) / target for value in self.match_score)
        self._score_bytes = (
            struct.pack("<2f", first_scaled, second_scaled), struct.pack("<2f", second_scaled, first_scaled))

    def _update_tricks(self, game: Game) -> None:
        """Bring the played-card masks and voids up to date with ``game.tricks`` (append-only within a game)."""
        tricks = game.tricks
        if tricks is not self._tricks or len(tricks) < self._tricks_seen:
            self._tricks = tricks
            self._tricks_seen = 0
            self._played = [0, 0]
            self._void = [0, 0]
            self._known_key = None
            self._known_raw = [0, 0]
            self._marriage_flags = [0, 0]
            self._trump_mask = game.trump_mask
            deal_flags = self._rules_bits | 1 << (_TRUMP + game.trump_suit)
            self._deal_flags = [deal_flags | (game.forehand == player) << _FOREHAND for player in (0, 1)]
        played = self._played
        void = self._void
        for leader, lead_card, follow_card, _winner, in_phase2 in tricks[self._tricks_seen:]:
            played[leader] |= 1 << lead_card
            played[1 - leader] |= 1 << follow_card
            if in_phase2:
                void[leader] |= _void_shown(lead_card, follow_card, self._trump_mask)
        self._tricks_seen = len(tricks)

    def encode_infoset(self, infoset: InformationSet) -> np.ndarray:
        """The same vector from an :class:`~sixtysix_env.infoset.InformationSet`, what an agent is handed: equal to
        ``encode(game, infoset.player)`` for the game it was taken from (a test checks this)."""
        return _encode_infoset(self, infoset)

    def encode(self, game: Game, player: int) -> np.ndarray:
        """The observation of ``player`` (0 or 1) in ``game``: a new float32 vector of :data:`OBSERVATION_SIZE`."""
        if type(player) is not int or (player != 0 and player != 1):  # a plain 0 or 1 takes the fast path
            player = check_player(player)  # a numpy integer passes; a float, a bool or an agent name is refused
        opponent = 1 - player
        tricks = game.tricks
        if tricks is not self._tricks or len(tricks) != self._tricks_seen:
            self._update_tricks(game)
        hand = game.hands[player]
        won_cards = game.won_cards
        won_me = won_cards[player]
        won_opp = won_cards[opponent]
        played_me = self._played[player]
        played_opp = self._played[opponent]
        lead = game.lead_card
        lead_mask = 0
        if lead >= 0:
            lead_mask = 1 << lead
            if game.leader == player:
                played_me |= lead_mask
            else:
                played_opp |= lead_mask
        bottom_card = game.bottom_card
        bottom = 0 if bottom_card is None else 1 << bottom_card
        marriages = game.marriages
        known = 0
        if marriages or game.exchanges or game.bottom_taker is not None:
            key = (len(marriages), len(game.exchanges), game.bottom_taker)
            if key != self._known_key:  # a marriage, an exchange or the bottom card taken since the last call
                self._known_key = key
                self._known_raw = [_shown_by_opponent(game, 0), _shown_by_opponent(game, 1)]
                self._marriage_flags = [_marriage_bits(marriages, 0), _marriage_bits(marriages, 1)]
            known = self._known_raw[player] & ~(won_me | won_opp | lead_mask)  # unplayed, so still in his hand
        unseen = self._deck_mask & ~(hand | won_me | won_opp | lead_mask | known | bottom)  # as InformationSet.unseen
        cannot_hold = self._void[player] & unseen
        closed_by = game.closed_by
        tricks_won = game.tricks_won
        stage = game.stage
        flags = (
            self._deal_flags[player]
            | self._marriage_flags[player]
            | 1 << (_STAGE + stage)
            | (stage != 4 and game.to_move == player) << _MY_TURN  # stage 4 = OVER
            | (tricks_won[player] > 0) << _HAVE_TRICK
            | (tricks_won[opponent] > 0) << _OPP_HAS_TRICK
            | game.phase2 << _PHASE2
        )
        if closed_by is not None:
            flags |= (1 << _CLOSED_ME if closed_by == player else 1 << _CLOSED_OPP) | (
                game.opponent_trickless_at_close << _CLOSER_OPP_TRICKLESS)
        flag_bytes = self._flag_bytes.get(flags)
        if flag_bytes is None:
            if len(self._flag_bytes) >= 4096:  # bounded; far fewer combinations occur in practice
                self._flag_bytes.clear()
            flag_bytes = self._flag_bytes[flags] = (
                _HALF_PLANE[flags & 4095] + _HALF_PLANE[flags >> 12 & 4095] + _FLAG_REST_TABLE[flags >> 24])
        trick_points = game.trick_points
        marriage_points = game.marriage_points
        if tricks_won[player]:
            my_points = trick_points[player] + marriage_points[player]
            my_pending = 0
        else:
            my_points = trick_points[player]
            my_pending = marriage_points[player]
        if tricks_won[opponent]:
            opp_points = trick_points[opponent] + marriage_points[opponent]
            opp_pending = 0
        else:
            opp_points = trick_points[opponent]
            opp_pending = marriage_points[opponent]
        half = _HALF_PLANE
        vector = np.frombuffer(_EMPTY_BUFFER.join((
            half[hand & 4095], half[hand >> 12],
            half[bottom & 4095], half[bottom >> 12],
            half[lead_mask & 4095], half[lead_mask >> 12],
            half[played_me & 4095], half[played_me >> 12],
            half[played_opp & 4095], half[played_opp >> 12],
            half[won_me & 4095], half[won_me >> 12],
            half[won_opp & 4095], half[won_opp >> 12],
            half[known & 4095], half[known >> 12],
            half[unseen & 4095], half[unseen >> 12],
            half[cannot_hold & 4095], half[cannot_hold >> 12],
            flag_bytes,
            _TALON_HAND_BYTES[  # game.talon_size, the opponent's hand size
                (len(game.stock) - game.stock_pos + (bottom_card is not None)) * _HAND_COUNT
                + game.hands[opponent].bit_count()],
            _POINTS_BYTES[(my_points if my_points < POINTS_SCALE else POINTS_SCALE) * _POINTS_COUNT
                          + (opp_points if opp_points < POINTS_SCALE else POINTS_SCALE)],
            _PENDING_BYTES[
                (my_pending if my_pending < PENDING_MARRIAGE_SCALE else PENDING_MARRIAGE_SCALE) * _PENDING_COUNT
                + (opp_pending if opp_pending < PENDING_MARRIAGE_SCALE else PENDING_MARRIAGE_SCALE)],
            self._score_bytes[player],
        )), dtype=np.float32)  # writable: backed by a fresh bytearray
        if CHECK_OBSERVATIONS:
            check_observation(vector)
        return vector


# Debugging aid: SIXTYSIX_CHECK_OBSERVATIONS=1 checks every encoded vector (off by default: the environments build
# one observation per step; the property tests check them all the same).
CHECK_OBSERVATIONS = os.environ.get("SIXTYSIX_CHECK_OBSERVATIONS", "") not in ("", "0")


def check_observation(vector: Any) -> None:
    """Raise ``ValueError`` naming the piece (:data:`OBSERVATION_SLICES`) of an observation that is not a finite
    float32 vector of :data:`OBSERVATION_SIZE` values in [0, 1]."""
    vector = np.asarray(vector)
    if vector.shape != (OBSERVATION_SIZE,) or vector.dtype != np.float32:
        raise ValueError(f"observation must be float32 of shape ({OBSERVATION_SIZE},), got {vector.dtype} {vector.shape}")
    if np.isfinite(vector).all() and vector.min() >= 0.0 and vector.max() <= 1.0:
        return
    for name, piece in OBSERVATION_SLICES.items():
        values = vector[piece]
        if not np.isfinite(values).all():
            raise ValueError(f"observation piece {name!r} holds NaN or infinite values: {values.tolist()}")
        if values.min() < 0.0 or values.max() > 1.0:
            raise ValueError(f"observation piece {name!r} lies outside [0, 1]: {values.tolist()}")


def _encode_infoset(encoder: "ObservationEncoder", infoset: InformationSet) -> np.ndarray:
    # The information set's template game holds every public fact and the player's hand, with the hidden cards
    # erased: only the opponent's hand size must come from the information set itself.
    vector = encoder.encode(infoset._template, infoset.player)
    vector[_OPPONENT_HAND_SIZE_AT] = min(infoset.opponent_hand_size, HAND_SCALE) / HAND_SCALE
    return vector


def _void_shown(lead: int, follow: int, trump_mask: int) -> int:
    """Cards the follower showed he cannot hold by following ``lead`` with ``follow`` in phase 2 (R8), as
    :func:`~sixtysix_env.infoset.opponent_void_cards` reads one trick (a test checks the two agree)."""
    lead_suit_mask = SUIT_MASKS[lead // 6]
    if lead_suit_mask >> follow & 1:
        return HIGHER_IN_SUIT[lead] if follow < lead else 0  # (b) followed low: no higher card of the suit
    if trump_mask >> follow & 1:
        return lead_suit_mask  # (c) trumped: void in the suit led
    return lead_suit_mask | trump_mask  # (d) discarded: void in the suit led and in trumps


def _marriage_bits(marriages: Sequence[Any], player: int) -> int:
    """The marriages_by_me / marriages_by_opponent flag bits from ``player``'s side."""
    bits = 0
    for marriage in marriages:
        bits |= 1 << ((_MARRIED_ME if marriage.player == player else _MARRIED_OPP) + marriage.suit)
    return bits


def _shown_by_opponent(game: Game, player: int) -> int:
    """Cards ``player``'s opponent has shown to hold, played since or not (the encoder drops the played ones).

    As :func:`~sixtysix_env.infoset.opponent_known_cards`, plus one case it misses: R11 shows both cards of a
    marriage, and when the announcement ends the deal at once (R11/R13) the announced card is not led but stays
    in the hand, still known.
    """
    opponent = 1 - player
    shown = 0
    for marriage in game.marriages:
        if marriage.player == opponent:
            # Both cards of the pair; Queen and King ids differ in bit 0.
            shown |= (1 << marriage.led_card) | (1 << (marriage.led_card ^ 1))
    for exchange in game.exchanges:
        if exchange.player == opponent:
            shown |= 1 << exchange.taken_card
    if game.bottom_taker == opponent:
        shown |= 1 << game.bottom_taken_card
    return shown


_ENCODERS: dict[int, ObservationEncoder] = {}  # id(rules) -> encoder (hashing a Rules costs more than encoding)


def encode_infoset(infoset: InformationSet, match_score: Sequence[int] | None = (0, 0)) -> np.ndarray:
    """The observation vector from an information set (see :meth:`ObservationEncoder.encode_infoset`); a
    three-player one (R21) gets its own encoding, as in :func:`encode_observation`. ``match_score`` None (an
    information set's own for a deal on its own) is no score, as (0, 0)."""
    match_score = (0, 0) if match_score is None else match_score
    if infoset.rules.players == 3:
        from .three_observation import encode_three_infoset

        _no_three_player_score(match_score)
        return encode_three_infoset(infoset)
    encoder = ObservationEncoder(infoset.rules, match_score)
    return encoder.encode_infoset(infoset)


def encode_extended_infoset(infoset: InformationSet, match_score: Sequence[int] | None = (0, 0)) -> np.ndarray:
    """The observation vector of an information set followed by its history planes
    (:data:`EXTENDED_OBSERVATION_SIZE` floats), what networks fitted with the planes read."""
    if infoset.rules.players == 3:  # else a shift by the third seat failed inside the planes ("negative shift count")
        raise ValueError("encode_extended_infoset: the history planes are two-player only; a three-player "
                         "information set (R21) is encoded by encode_infoset")
    return np.concatenate([encode_infoset(infoset, match_score), encode_history(infoset._template, infoset.player)])


def encode_observation(game: Game, player: int, match_score: Sequence[int] | None = (0, 0)) -> np.ndarray:
    """The observation vector of ``player`` in ``game`` (see :class:`ObservationEncoder`); a three-player game (R21)
    gets its own encoding (:func:`~sixtysix_env.three_observation.encode_three_observation`). ``match_score`` None
    is no score, as (0, 0)."""
    match_score = (0, 0) if match_score is None else match_score
    rules = game.rules
    if rules.players == 3:
        return _three_player_observation(game, player, match_score)
    encoder = _ENCODERS.get(id(rules))
    if encoder is None or encoder.rules is not rules:
        if len(_ENCODERS) > 64:
            _ENCODERS.clear()
        encoder = _ENCODERS[id(rules)] = ObservationEncoder(rules)
    if tuple(match_score) != (0, 0):
        encoder = ObservationEncoder(rules, match_score)
    return encoder.encode(game, player)


def _three_player_observation(game: Any, player: int, match_score: Sequence[int]) -> np.ndarray:
    from .three_observation import encode_three_observation

    _no_three_player_score(match_score)
    return encode_three_observation(game, player)


def _no_three_player_score(match_score: Sequence[int]) -> None:
    if tuple(match_score) != (0, 0):
        raise ValueError(f"match_score: the three-player game (R21) is played deal by deal, got {match_score!r}")


def action_mask(game: Game, player: int | None = None, dtype: Any = np.int8) -> np.ndarray:
    """Mask of the legal actions (a new array of 37; of 45 in a three-player game, R21): 1 where
    ``game.legal_actions()`` holds the action.

    With ``player`` given, the mask is all zeros unless that player is to move (the PettingZoo convention for
    observations of agents not acting). ``dtype`` is int8 (PettingZoo) or bool (sb3-contrib's ``action_masks``).
    """
    try:
        wanted = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"action_mask: dtype {dtype!r} is not a numpy dtype") from None
    if game.rules.players == 3:  # R21: its own 45 actions
        from .three_observation import three_action_mask

        return three_action_mask(game, player, wanted)
    if player is not None:  # else "player_1" or 1.0 gave an all-zero mask silently
        player = check_player(player)
    values = bytearray(NUM_ACTIONS)
    if game.stage != 4 and (player is None or game.to_move == player):  # 4 = OVER
        for action in game.legal_actions():
            values[action] = 1
    mask = np.frombuffer(values, dtype=np.int8)  # writable: backed by the fresh bytearray
    # Another dtype (bool, float32) as the three-player mask gives it: a frombuffer of 37 bytes read as wider items
    # failed ("buffer size must be a multiple of element size").
    return mask if wanted == np.int8 else mask.astype(wanted)


def describe_observation(vector: Any, bummerl_target: int = 7) -> dict[str, Any]:
    """Decode an observation vector into readable values, piece by piece.

    Card planes become lists of card names, one-hots a name (``trump_suit``: ``'H'``; ``stage``: ``'lead'``),
    flags a bool (or, for several bits, the list of names that are set), scalars the unscaled number (points of 66
    and more read 66; game points assume ``bummerl_target``).
    """
    array = np.asarray(vector, dtype=np.float64)
    if array.shape != (OBSERVATION_SIZE,):
        raise ValueError(f"observation must be a vector of {OBSERVATION_SIZE} values, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"observation holds NaN or infinite values at indexes "
                         f"{np.flatnonzero(~np.isfinite(array)).tolist()[:10]}")
    target = as_integer(bummerl_target)
    if target is None or target < 1:
        raise ValueError(f"bummerl_target must be a whole number of game points, 1 or more, got {bummerl_target!r}")
    bummerl_target = target
    bit_names = {"marriages_by_me": SUITS, "marriages_by_opponent": SUITS, "rules": RULE_FLAGS}
    onehot_names = {"trump_suit": SUITS, "stage": STAGE_NAMES}
    scales = {
        "talon_size": TALON_SCALE, "opponent_hand_size": HAND_SCALE, "my_points": POINTS_SCALE,
        "opponent_points": POINTS_SCALE, "my_pending_marriage": PENDING_MARRIAGE_SCALE,
        "opponent_pending_marriage": PENDING_MARRIAGE_SCALE, "my_game_points": bummerl_target,
        "opponent_game_points": bummerl_target,
    }
    decoded: dict[str, Any] = {}
    for piece in OBSERVATION_LAYOUT:
        values = array[OBSERVATION_SLICES[piece.name]]
        if piece.kind == "cards":
            decoded[piece.name] = [CARD_NAMES[card] for card in np.flatnonzero(values > 0.5)]
        elif piece.kind == "onehot":
            hot = np.flatnonzero(values > 0.5)
            decoded[piece.name] = onehot_names[piece.name][hot[0]] if len(hot) == 1 else None
        elif piece.kind == "flags":
            if piece.size == 1:
                decoded[piece.name] = bool(values[0] > 0.5)
            else:
                decoded[piece.name] = [bit_names[piece.name][i] for i in np.flatnonzero(values > 0.5)]
        else:
            decoded[piece.name] = int(round(float(values[0]) * scales[piece.name]))
    return decoded


def observation_table_markdown() -> str:
    """The layout as a Markdown table (docs/observation.md holds exactly this; a test keeps them equal)."""
    rows = ["| piece | offset | size | kind | meaning |", "| --- | --- | --- | --- | --- |"]
    for piece in OBSERVATION_LAYOUT:
        rows.append(f"| `{piece.name}` | {OBSERVATION_SLICES[piece.name].start} | {piece.size} | {piece.kind} | "
                    f"{piece.meaning} |")
    rows.append(f"| (total) | | {OBSERVATION_SIZE} | | |")
    return "\n".join(rows)


def card_plane(vector: np.ndarray, name: str) -> int:
    """A card piece of an observation as a 24-bit card mask (for tests and debugging)."""
    piece_slice = OBSERVATION_SLICES[name]
    return mask_of(int(card) for card in np.flatnonzero(np.asarray(vector)[piece_slice] > 0.5))


__all__ = [
    "EXTENDED_OBSERVATION_SIZE", "HISTORY_LAYOUT", "HISTORY_SIZE", "HISTORY_SLICES", "NUM_BINARY_FEATURES",
    "NUM_FLAG_BITS", "OBSERVATION_LAYOUT", "OBSERVATION_SIZE", "OBSERVATION_SLICES", "ObservationEncoder",
    "ObservationPiece", "RULE_FLAGS", "action_mask", "card_plane", "check_observation", "checked_score_pair",
    "describe_observation",
    "encode_extended_infoset", "encode_history", "encode_infoset", "encode_observation", "led_cards",
    "observation_table_markdown", "rules_bits",
]
