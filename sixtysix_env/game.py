"""The two-player Sixty-six engine (RULES R3–R16): one deal, from the deal to its result.

State API in the style of OpenSpiel: ``current_player``, ``legal_actions()``, ``apply(action)``, ``is_over``,
``result``. Hands are 24-bit masks (see :mod:`sixtysix_env.cards`) so legal moves and trick resolution are a few
integer operations; nothing is allocated per decision except the returned list of legal actions.
"""

from __future__ import annotations

from hashlib import blake2b
import math
import os
from typing import Any, ClassVar, Mapping, NamedTuple

from .actions import (
    ACTION_NAMES, CLOSE, DECLARE, DRAW, EXCHANGE, MARRY_BASE, NUM_ACTIONS, PASS, action_name, marry_card,
    parse_action,
)
from .cards import (
    _HIGH_HALF, _LOW_HALF, CARD_NAMES, CARD_POINTS, HIGHER_IN_SUIT, KING, QUEENS_MASK, SUIT_MASKS, cards_of,
    deck_cards, parse_card,
)
from .integers import as_integer, plain_int
from .rules import Rules

# Stages: whose decision it is and what kind (docs/actions.md).
LEAD, FOLLOW, PREDRAW, RESPOND_CLOSE, OVER = range(5)
STAGE_NAMES = ("lead", "follow", "predraw", "respond_close", "over")

# Result reasons (R13–R16).
DECLARED = "declared"
CLOSER_FAILED = "closer failed"
LAST_TRICK = "last trick"
RENONCE = "renonce"
FALSE_DECLARATION = "false declaration"
NOT_SCORED = "not scored"
RESULT_REASONS = (DECLARED, CLOSER_FAILED, LAST_TRICK, RENONCE, FALSE_DECLARATION, NOT_SCORED)

GOAL = 66  # R13
LAST_TRICK_BONUS = 10  # R14
SCHNEIDER_LIMIT = 32  # R16: opponent with at most 32 points -> 2 game points


class DealResult(NamedTuple):
    """How a deal ended. ``winner`` is ``None`` when the deal is not scored (R15, 65:65)."""

    winner: int | None
    game_points: int
    reason: str
    points: tuple[int, int]  # counted points (R12) of both players at the end

    def returns(self) -> tuple[int, int]:
        """Zero-sum game points from each player's side."""
        if self.winner is None:
            return (0, 0)
        return (self.game_points, -self.game_points) if self.winner == 0 else (-self.game_points, self.game_points)


class Trick(NamedTuple):
    leader: int
    lead_card: int
    follow_card: int
    winner: int
    in_phase2: bool  # R8 follow rules applied to this trick


class Marriage(NamedTuple):
    player: int
    suit: int
    led_card: int  # the card shown and led; the other card of the pair is known to be in the hand
    trick_index: int  # the trick it was announced for


class Exchange(NamedTuple):
    player: int
    laid_card: int  # the trump nine (jack with 20 cards), now the talon's bottom card
    taken_card: int  # the former bottom card, now known to be in ``player``'s hand


_FACTORIALS = [math.factorial(n) for n in range(25)]


def shuffled_deck(deck_size: Any, seed: Any) -> list[int]:
    """A uniformly random deck order from an integer ``seed`` (the same on every platform and Python version).

    The seed is hashed (BLAKE2b) into a 128-bit integer, decoded in the factorial number system: exactly uniform
    (a hash landing in the tiny remainder above the largest multiple of ``deck_size!`` is re-hashed) and several
    times faster than seeding ``random.Random`` and shuffling, which matters for millions of simulated deals.
    ``seed=None`` takes fresh entropy from the operating system.
    """
    seed = int.from_bytes(os.urandom(16), "little") if seed is None else plain_int(seed, "seed")
    deck_size = plain_int(deck_size, "deck size")  # a float key would find 24.0's constants, a list fail to hash
    constants = _SHUFFLE_CONSTANTS.get(deck_size)
    if constants is None:
        deck_cards(deck_size)  # raises the error naming the bad deck size
        raise AssertionError("unreachable")
    # Two independent uniform integers (rejection keeps them exact) decoded in the factorial number system: the
    # first picks the top half of the deck, the second orders the rest; both fit machine words, so decoding is fast.
    base_deck, top_choices, rest_orders, top_limit, rest_limit, top_radices, rest_radices = constants
    salt = 0
    while True:
        digest = blake2b(f"{seed}/{salt}".encode(), digest_size=16).digest()
        top_index = int.from_bytes(digest[:8], "little")
        rest_index = int.from_bytes(digest[8:], "little")
        if top_index < top_limit and rest_index < rest_limit:
            break
        salt += 1
    top_index %= top_choices
    rest_index %= rest_orders
    cards = list(base_deck)
    order: list[int] = []
    pop = cards.pop
    append = order.append
    for remaining in top_radices:
        top_index, pick = divmod(top_index, remaining)
        append(pop(pick))
    for remaining in rest_radices:
        rest_index, pick = divmod(rest_index, remaining)
        append(pop(pick))
    return order


def _shuffle_constants(deck_size: int) -> tuple:
    top_count = deck_size // 2
    top_choices = _FACTORIALS[deck_size] // _FACTORIALS[deck_size - top_count]
    rest_orders = _FACTORIALS[deck_size - top_count]
    return (
        tuple(deck_cards(deck_size)), top_choices, rest_orders,
        (1 << 64) - (1 << 64) % top_choices, (1 << 64) - (1 << 64) % rest_orders,
        tuple(range(deck_size, deck_size - top_count, -1)), tuple(range(deck_size - top_count, 0, -1)),
    )


_SHUFFLE_CONSTANTS = {size: _shuffle_constants(size) for size in (24, 20)}  # R1, R2


def parse_deck(deck: object, rules: Rules) -> list[int]:
    """Validate an explicit deck (R4 order, top card first): a list, tuple or array of card ids or R1 names.

    ``deck`` is typed ``object`` (and each card too) so that the compiled engine raises the same ``ValueError``
    with the same message as the source for any bad value, instead of a ``TypeError`` at a typed boundary."""
    if (isinstance(deck, (str, bytes, Mapping)) or not hasattr(deck, "__len__")
            or not hasattr(deck, "__getitem__")):
        raise ValueError(f"malformed deck: expected a list of {rules.deck} cards, got {type(deck).__name__}")
    cards: list[int] = []
    position = 0
    for card in list(deck):  # type: ignore[call-overload]  # any sized, indexable sequence
        position += 1
        cards.append(_card_of(card, position))
    expected = deck_cards(rules.deck)
    if len(cards) != rules.deck:
        raise ValueError(f"malformed deck: {len(cards)} cards given, the {rules.deck}-card game needs {rules.deck}")
    seen = set()
    for card_id in cards:
        if card_id in seen:
            raise ValueError(f"malformed deck: card {CARD_NAMES[card_id]} appears twice")
        seen.add(card_id)
    missing = sorted(set(expected) - seen)
    if missing:
        extra = sorted(seen - set(expected))
        raise ValueError(
            f"malformed deck: {', '.join(CARD_NAMES[c] for c in extra)} not in the {rules.deck}-card deck (R2)"
        )
    return cards


def _card_of(card: object, position: int) -> int:
    """One deck entry: an R1 name, or a card id 0..23 (a Python or numpy integer, never a bool or float)."""
    if isinstance(card, str):
        try:
            return parse_card(card)
        except ValueError as error:  # which of 20 or 24 cards it is, as for a bad card id
            raise ValueError(f"malformed deck: position {position}: {error}") from None
    if not isinstance(card, bool):
        index = _as_action_id(card)  # Python and numpy integers only
        if type(index) is int and 0 <= index < 24:
            return index
    raise ValueError(f"malformed deck: position {position} holds {card!r}, not a card")


def check_player(value: object, what: str = "player") -> int:
    """``value`` as a player index 0 or 1 (a Python or numpy integer, never a bool or float); else ``ValueError``
    naming ``what``. Used at the engine's boundaries (deal, forfeit, points, InformationSet), not per decision."""
    if type(value) is int:
        if value == 0 or value == 1:
            return value
    elif not isinstance(value, bool):
        index = _as_action_id(value)
        if type(index) is int and (index == 0 or index == 1):
            return index
    raise ValueError(f"{what} must be 0 or 1, got {value!r}")


# BEATERS_BY_TRUMP[trump_suit][lead]: the mask of the cards that win a trick against ``lead`` (R6).
BEATERS_BY_TRUMP = tuple(
    tuple(HIGHER_IN_SUIT[lead] | (0 if lead // 6 == trump else SUIT_MASKS[trump]) for lead in range(24))
    for trump in range(4)
)


class Game:
    """One deal of two-player Sixty-six. Players are 0 and 1; the dealer's opponent is forehand (R3)."""

    __slots__ = (
        "rules", "deck", "dealer", "forehand", "trump_suit", "trump_mask", "trump_card", "exchange_card",
        "hands", "stock", "stock_pos", "bottom_card", "bottom_taker", "closed_by", "opponent_trickless_at_close",
        "closed_at_trick", "trick_points", "marriage_points", "tricks_won", "stage", "to_move", "leader",
        "lead_card", "lead_was_marriage", "turn_step", "phase2", "history", "tricks", "marriages", "exchanges",
        "result", "won_cards", "talon_exhausted_at_trick", "bottom_taken_card", "auto_declare",
        "declare_offered", "false_declaration_allowed", "close_draw_option", "is_over",
        "beaters",
    )
    # The game's facts, declared as the three-player game declares its own (R21: ThreePlayerGame).
    num_players: ClassVar[int] = 2
    num_actions: ClassVar[int] = NUM_ACTIONS

    # Attribute types (mypyc compiles this module to a native class from them, see sixtysix_env/compile.py).
    rules: Rules
    deck: tuple[int, ...] | None  # None in an information set's template (the order is hidden)
    dealer: int
    forehand: int
    trump_suit: int
    trump_mask: int
    trump_card: int
    exchange_card: int
    hands: list[int]
    stock: list[int]
    stock_pos: int
    bottom_card: int | None
    bottom_taker: int | None
    closed_by: int | None
    opponent_trickless_at_close: bool
    closed_at_trick: int | None
    trick_points: list[int]
    marriage_points: list[int]
    tricks_won: list[int]
    stage: int
    to_move: int
    leader: int
    lead_card: int
    lead_was_marriage: bool
    turn_step: int
    phase2: bool
    history: list[int]
    tricks: list[tuple[int, int, int, int, bool]]
    marriages: list[Marriage]
    exchanges: list[Exchange]
    result: DealResult | None
    won_cards: list[int]
    talon_exhausted_at_trick: int | None
    bottom_taken_card: int | None
    auto_declare: bool
    declare_offered: bool
    false_declaration_allowed: bool
    close_draw_option: bool
    is_over: bool
    beaters: tuple[int, ...]

    # ------------------------------------------------------------------ construction
    @classmethod
    def deal(
        cls,
        rules: Rules | None = None,
        deck: Any = None,
        dealer: Any = 0,
        seed: Any = None,
    ) -> Any:
        """Deal from an explicit deck (R4 order, top first) or, without one, from ``seed`` (an integer).

        ``deck``, ``dealer`` and ``seed`` are checked here (typed ``Any`` so the compiled engine raises the same
        ``ValueError`` as the source for a bad value, instead of a ``TypeError`` at the call). Rules with
        ``players=3`` (R21) deal a :class:`~sixtysix_env.three.ThreePlayerGame` (hence the ``Any`` return)."""
        rules = Rules() if rules is None else rules
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules object, got {type(rules).__name__}")
        if rules.players == 3:
            from .three import ThreePlayerGame

            return ThreePlayerGame.deal(rules, deck, dealer, seed)
        dealer_index = check_player(dealer, "dealer")
        if deck is None:
            cards = shuffled_deck(rules.deck, seed)
        else:
            if seed is not None:
                raise ValueError("give either an explicit deck or a seed, not both")
            cards = parse_deck(deck, rules)
        return cls._from_cards(rules, cards, dealer_index)

    def __init__(self) -> None:
        """A bare instance for :meth:`deal` and :meth:`clone` to fill; use ``Game.deal(...)``."""

    @classmethod
    def _from_cards(cls, rules: Rules, cards: list[int], dealer: int) -> "Game":
        game = cls()
        forehand = 1 - dealer
        c = cards
        # R4: cards 1–3 and 7–9 to forehand, 4–6 and 10–12 to the dealer.
        forehand_hand = (1 << c[0]) | (1 << c[1]) | (1 << c[2]) | (1 << c[6]) | (1 << c[7]) | (1 << c[8])
        dealer_hand = (1 << c[3]) | (1 << c[4]) | (1 << c[5]) | (1 << c[9]) | (1 << c[10]) | (1 << c[11])
        hands = [dealer_hand, forehand_hand] if dealer == 0 else [forehand_hand, dealer_hand]
        trump_card = cards[12]
        game.rules = rules
        # Switches read on every trick, copied into slots for speed.
        game.auto_declare = rules.auto_declare
        game.declare_offered = not rules.auto_declare or rules.allow_false_declaration
        game.false_declaration_allowed = rules.allow_false_declaration
        game.close_draw_option = rules.close_draw_option
        game.deck = tuple(cards)
        game.dealer = dealer
        game.forehand = forehand
        game.trump_card = trump_card
        game.trump_suit = trump_card // 6
        game.trump_mask = SUIT_MASKS[trump_card // 6]
        game.beaters = BEATERS_BY_TRUMP[trump_card // 6]
        game.exchange_card = game.trump_suit * 6 + rules.exchange_rank
        game.hands = hands
        game.stock = cards[13:]  # face-down talon, top first; shared by clones, never mutated
        game.stock_pos = 0
        game.bottom_card = trump_card  # the face-up card under the talon (R4), or the exchanged nine
        game.bottom_taker = None  # the loser of the talon's last trick, who took the bottom card (known to both)
        game.bottom_taken_card = None
        game.closed_by = None
        game.opponent_trickless_at_close = False
        game.closed_at_trick = None
        game.talon_exhausted_at_trick = None
        game.trick_points = [0, 0]
        game.marriage_points = [0, 0]
        game.tricks_won = [0, 0]
        game.won_cards = [0, 0]
        game.stage = LEAD
        game.is_over = False  # a plain attribute, not a property: it is read once per decision by every play loop
        game.to_move = forehand  # R5
        game.leader = forehand
        game.lead_card = -1
        game.lead_was_marriage = False
        game.turn_step = 0  # 0: nothing yet this turn, 1: exchanged, 2: closed (R9 -> R10 -> R11 order)
        game.phase2 = False
        game.history = []
        game.tricks = []
        game.marriages = []
        game.exchanges = []
        game.result = None
        return game

    def clone(self) -> "Game":
        """An independent copy (search agents clone millions of times; see ``_clone``)."""
        return _clone(self)

    @property
    def trick_log(self) -> list[Trick]:
        """Completed tricks in order."""
        return [Trick._make(trick) for trick in self.tricks]

    # ------------------------------------------------------------------ queries
    @property
    def current_player(self) -> int | None:
        return None if self.stage == OVER else self.to_move

    @property
    def face_down_count(self) -> int:
        """Face-down cards left on the talon (they stay there, unused, after a closing)."""
        return len(self.stock) - self.stock_pos

    @property
    def talon_size(self) -> int:
        """R4: face-down cards plus the bottom card while it lies there."""
        return len(self.stock) - self.stock_pos + (self.bottom_card is not None)

    @property
    def is_closed(self) -> bool:
        return self.closed_by is not None

    def points(self, player: object) -> int:
        """Counted card points (R12): tricks, plus marriages once the player has won a trick."""
        return self._points(check_player(player))

    def _points(self, player: int) -> int:
        """:meth:`points` without the argument check, for the engine's own calls."""
        if self.tricks_won[player]:
            return self.trick_points[player] + self.marriage_points[player]
        return self.trick_points[player]

    def hand(self, player: object) -> list[int]:
        """The card ids in ``player``'s hand, ascending."""
        return cards_of(self.hands[check_player(player)])

    def returns(self) -> tuple[int, int]:
        """Game points from each player's side (zero until the deal is over)."""
        return (0, 0) if self.result is None else self.result.returns()

    def action_name(self, action: Any) -> str:
        # Any, not int: the compiled build would take True for 1 and refuse a numpy integer with a TypeError.
        return action_name(action)

    @staticmethod
    def parse_action(text: Any) -> int:
        # Any, not str: the compiled build would refuse a non-string with a TypeError before the ValueError that
        # names it.
        return parse_action(text)

    def legal_actions(self) -> list[int]:
        """Legal action ids, ascending; empty once the deal is over."""
        stage = self.stage
        player = self.to_move
        hand = self.hands[player]
        if stage == FOLLOW:
            if self.phase2:
                hand = self._follow_mask(hand)
            return _LOW_HALF[hand & 0xFFF] + _HIGH_HALF[hand >> 12]  # cards_of, inlined: the hottest call
        if stage == LEAD:
            actions = _LOW_HALF[hand & 0xFFF] + _HIGH_HALF[hand >> 12]
            pairs = hand & (hand >> 1) & QUEENS_MASK  # bit of each Queen whose King is held too (K = Q + 1)
            if pairs and self._may_marry(player):
                while pairs:
                    queen = (pairs & -pairs).bit_length() - 1
                    pairs &= pairs - 1
                    base = MARRY_BASE + 2 * (queen // 6)
                    actions.append(base)
                    actions.append(base + 1)
            if self._may_exchange(player):
                actions.append(EXCHANGE)
            if self._may_close():
                actions.append(CLOSE)
            if self._may_declare(player):
                actions.append(DECLARE)
            return actions
        if stage == PREDRAW:
            # R9 before R10: the winner may exchange first, then close before drawing or draw (seed 000: "am Zug")
            actions = [EXCHANGE, CLOSE] if self._may_exchange(player) else [CLOSE]
            if self._may_declare(player):
                actions.append(DECLARE)
            actions.append(DRAW)
            return actions
        if stage == RESPOND_CLOSE:
            return [EXCHANGE, PASS] if hand >> self.exchange_card & 1 else [PASS]
        return []

    def is_legal(self, action: Any) -> bool:
        """Whether ``apply`` takes ``action`` now: a Python or numpy integer among the legal actions."""
        if type(action) is not int:
            action = _as_action_id(action)
        return type(action) is int and action in self.legal_actions()

    def _follow_mask(self, hand: int) -> int:
        """R8: win in suit, else follow suit, else trump, else anything."""
        lead = self.lead_card
        higher = hand & HIGHER_IN_SUIT[lead]
        if higher:
            return higher
        same_suit = hand & SUIT_MASKS[lead // 6]
        if same_suit:
            return same_suit
        trumps = hand & self.trump_mask
        return trumps if trumps else hand

    def _may_marry(self, player: int) -> bool:
        rules = self.rules
        if rules.marriage_needs_trick and not self.tricks_won[player]:
            return False
        if self.phase2 and not rules.marriage_in_phase2:
            # R11 paderborn: only while cards can be drawn; the closer may still announce on his closing turn, but
            # only when both drew first and hold six cards (seed 001: not after closing before drawing, R10).
            return self.closed_by == player and self.turn_step == 2 and self.hands[player].bit_count() == 6
        return True

    def _may_exchange(self, player: int) -> bool:
        """R9 at a lead: first thing in the turn, holding the trump nine (jack with 20 cards), talon open."""
        if self.turn_step != 0 or not self.hands[player] >> self.exchange_card & 1:
            return False
        if self.closed_by is not None or self.stock_pos >= len(self.stock):
            return False
        return not (self.rules.exchange_needs_trick and not self.tricks_won[player])

    def _may_close(self) -> bool:
        """R10: not after announcing this turn, talon open with at least two face-down cards."""
        return self.turn_step < 2 and self.closed_by is None and len(self.stock) - self.stock_pos >= 2

    def _may_declare(self, player: int) -> bool:
        """R13: offered without ``auto_declare`` (at 66, or below it with ``allow_false_declaration``), on a turn
        after winning a trick: counted points need one (R12), and a false declaration is one too, so forehand's
        first lead (no trick, no announcement that could bring 66) offers none."""
        return (self.declare_offered and self.tricks_won[player] > 0
                and (self.false_declaration_allowed or self._points(player) >= GOAL))

    # ------------------------------------------------------------------ moves
    def apply(self, action_id: object) -> None:
        """Apply a legal action; an illegal one raises ``ValueError`` and leaves the state unchanged."""
        if type(action_id) is not int:
            action_id = _as_action_id(action_id)  # numpy integers
            if type(action_id) is not int:
                self._reject(action_id)
        action: int = action_id  # type: ignore[assignment]  # an int from here on
        stage = self.stage
        player = self.to_move
        if stage == FOLLOW:
            hands = self.hands
            hand = hands[player]
            allowed = self._follow_mask(hand) if self.phase2 else hand
            if type(action) is not int or action < 0 or not allowed >> action & 1:  # a mask holds ids < 24 only
                self._reject(action)
            self.history.append(action)
            # Resolve the trick (inlined: this is the engine's hottest path).
            leader = 1 - player
            lead = self.lead_card
            hands[player] = hand ^ (1 << action)
            # R6: the follower wins with a higher card of the suit led or a trump on a non-trump lead.
            winner = player if self.beaters[lead] >> action & 1 else leader
            trick_points = self.trick_points
            trick_points[winner] += CARD_POINTS[lead] + CARD_POINTS[action]
            self.tricks_won[winner] += 1
            self.won_cards[winner] |= (1 << lead) | (1 << action)
            self.tricks.append((leader, lead, action, winner, self.phase2))  # a Trick's fields, plain for speed
            self.lead_card = -1
            self.leader = winner
            self.to_move = winner
            self.turn_step = 0
            if not hands[winner]:  # both hands are empty: the last trick (R14, R15)
                self._finish_all_played(winner)
            elif self.auto_declare and trick_points[winner] + self.marriage_points[winner] >= GOAL:
                self._declare(winner)  # R13 auto_declare (the winner has a trick now, so marriages count, R12)
            elif self.phase2:
                self.stage = LEAD
            elif self.close_draw_option and len(self.stock) - self.stock_pos >= 2:
                self.stage = PREDRAW  # R10 paderborn: close before drawing, or draw
            else:
                # R7: the winner draws the top card, then the loser (inlined _draw for the common case).
                position = self.stock_pos
                stock = self.stock
                if position + 1 < len(stock):
                    hands[winner] |= 1 << stock[position]
                    hands[leader if winner == player else player] |= 1 << stock[position + 1]
                    self.stock_pos = position + 2
                else:
                    self._draw(winner)
                self.stage = LEAD
            return
        if stage == LEAD:
            if type(action) is int and 0 <= action < 24 and self.hands[player] >> action & 1:
                self.history.append(action)
                self.hands[player] ^= 1 << action
                self.lead_card = action
                self.lead_was_marriage = False
                self.stage = FOLLOW
                self.to_move = 1 - player
                return
            if not self._lead_action_is_legal(action, player):
                self._reject(action)
            self.history.append(action)
            if action < EXCHANGE:
                self._marry(player, marry_card(action))
            elif action == EXCHANGE:
                self._exchange(player)
                self.turn_step = 1
            elif action == CLOSE:
                self._close(player)
            else:  # DECLARE
                self._declare(player)
            return
        if stage == OVER:
            raise ValueError(f"the deal is over; no action can be applied ({action_name_safe(action)})")
        if not self.is_legal(action):
            self._reject(action)
        self.history.append(action)
        if stage == PREDRAW:
            if action == DRAW:
                self._draw(player)
                self.stage = LEAD
            elif action == EXCHANGE:  # R9, and the choice of R10 stays his
                self._exchange(player)
                self.turn_step = 1
            elif action == CLOSE:
                self.stage = LEAD
                self._close(player)
            else:
                self._declare(player)
        else:  # RESPOND_CLOSE
            if action == EXCHANGE:
                self._exchange(player)
            self.stage = LEAD
            self.to_move = self.closed_by  # type: ignore[assignment]  # set by the closing

    def _lead_action_is_legal(self, action: object, player: int) -> bool:
        """Legality of a non-card action at a LEAD decision, by the same predicates :meth:`legal_actions` uses
        (a random player closes or announces often; recomputing the whole list would cost more)."""
        if type(action) is not int:
            return False
        if action == CLOSE:
            return self._may_close()
        if MARRY_BASE <= action < EXCHANGE:
            card = marry_card(action)
            hand = self.hands[player]
            return bool(hand >> card & 1 and hand >> (card ^ 1) & 1) and self._may_marry(player)  # Q, K ids differ in bit 0
        if action == EXCHANGE:
            return self._may_exchange(player)
        if action == DECLARE:
            return self._may_declare(player)
        return False

    def _reject(self, action: object) -> None:
        if self.stage == OVER:  # a junk action reaches here before apply's own check; "player -1" would say nothing
            raise ValueError(f"the deal is over; no action can be applied ({action_name_safe(action)})")
        legal = ", ".join(ACTION_NAMES[a] for a in self.legal_actions())
        raise ValueError(
            f"illegal action {action_name_safe(action)} for player {self.to_move} "
            f"({STAGE_NAMES[self.stage]}); legal: {legal or 'none'}"
        )

    def _marry(self, player: int, card: int) -> None:
        suit = card // 6
        self.marriage_points[player] += 40 if suit == self.trump_suit else 20  # R11
        self.marriages.append(Marriage(player, suit, card, len(self.tricks)))
        if self._points(player) >= GOAL:
            self._declare(player)  # R11: the announcement reaches 66; the card is not led
            return
        self.hands[player] ^= 1 << card
        self.lead_card = card
        self.lead_was_marriage = True
        self.stage = FOLLOW
        self.to_move = 1 - player

    def _exchange(self, player: int) -> None:
        nine = self.exchange_card
        taken: int = self.bottom_card  # type: ignore[assignment]  # R9: it lies there
        self.hands[player] ^= (1 << nine) | (1 << taken)
        self.bottom_card = nine
        self.exchanges.append(Exchange(player, nine, taken))

    def _close(self, player: int) -> None:
        self.closed_by = player
        self.opponent_trickless_at_close = not self.tricks_won[1 - player]
        self.closed_at_trick = len(self.tricks)
        self.phase2 = True
        self.turn_step = 2
        if self.rules.exchange_after_opponent_closes:
            # R9 paderborn: the opponent may still exchange once. The stage is offered whether or not he
            # holds the nine, so the closer learns nothing from being asked.
            self.stage = RESPOND_CLOSE
            self.to_move = 1 - player

    def _draw(self, winner: int) -> None:
        """R7: the winner draws the top card, then the loser; the loser of the talon's last trick takes the bottom."""
        stock = self.stock
        position = self.stock_pos
        self.hands[winner] |= 1 << stock[position]
        if position + 1 < len(stock):
            self.hands[1 - winner] |= 1 << stock[position + 1]
            self.stock_pos = position + 2
        else:
            self.hands[1 - winner] |= 1 << self.bottom_card  # type: ignore[operator]
            self.bottom_taker = 1 - winner
            self.bottom_taken_card = self.bottom_card
            self.bottom_card = None
            self.stock_pos = position + 1
            self.phase2 = True
            self.talon_exhausted_at_trick = len(self.tricks)

    # ------------------------------------------------------------------ endings (R13–R16)
    def _first_line_points(self, loser: int) -> int:
        """R16 first line: 3 if the loser has no trick, 2 if he has at most 32 counted points, else 1."""
        if not self.tricks_won[loser]:
            return 3
        return 2 if self._points(loser) <= SCHNEIDER_LIMIT else 1

    def _end(self, winner: int | None, game_points: int, reason: str) -> None:
        self.result = DealResult(winner, game_points, reason, (self._points(0), self._points(1)))
        self.stage = OVER
        self.is_over = True
        self.to_move = -1

    def _closer_failed(self) -> None:
        opponent = 1 - self.closed_by  # type: ignore[operator]
        self._end(opponent, 3 if self.opponent_trickless_at_close else 2, CLOSER_FAILED)

    def _declare(self, player: int) -> None:
        opponent = 1 - player
        if self._points(player) < GOAL:  # R13 allow_false_declaration
            self._end(opponent, 3 if not self.tricks_won[opponent] else 2, FALSE_DECLARATION)
        elif self.closed_by == opponent:
            self._closer_failed()  # R16: the closer's opponent declared first
        else:
            self._end(player, self._first_line_points(opponent), DECLARED)

    def _finish_all_played(self, last_winner: int) -> None:
        """Both hands are empty (R14–R16, R10)."""
        if self.closed_by is not None:
            closer = self.closed_by
            if last_winner != closer or self._points(closer) < GOAL:
                # R10/R16 second line: the closer has not reached 66, or (with manual declaring) he let his turns
                # at 66 pass and the opponent took the last trick, so no turn is left to declare on.
                self._closer_failed()
            elif self.auto_declare:
                self._declare(closer)  # R13: reached 66 with the last trick (no bonus after a closing, R14)
            else:
                # R10 with auto_declare off: the closer won the last trick with 66 or more; he gets that one turn,
                # whose only action is to declare (R13). The deal never ends "declared" without that action.
                self.stage = LEAD
            return
        self.trick_points[last_winner] += LAST_TRICK_BONUS  # R14
        first, second = self._points(0), self._points(1)
        if first == second:
            self._end(None, 0, NOT_SCORED)  # R15: 65:65
            return
        winner = 0 if first > second else 1
        self._end(winner, self._first_line_points(1 - winner), LAST_TRICK)

    def forfeit(self, offender: object, reason: object = RENONCE) -> None:
        """End the deal because ``offender`` broke a rule (R8 Renonce): the opponent scores 3 (R16)."""
        offender_index = check_player(offender, "offender")
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"forfeit reason must be a non-empty text, got {reason!r}")
        if self.stage == OVER:
            raise ValueError("the deal is already over")
        self._end(1 - offender_index, 3, reason)

    # ------------------------------------------------------------------ display
    def __repr__(self) -> str:
        if self.stage == OVER:
            return f"<Game over: {self.result}>"
        return (
            f"<Game {STAGE_NAMES[self.stage]} player {self.to_move} trump {CARD_NAMES[self.trump_card]} "
            f"talon {self.talon_size} points {self.points(0)}:{self.points(1)}>"
        )

    def render(self, viewer: object = None) -> str:
        """A short text picture of the table; hides the other hand when ``viewer`` is a player."""
        if viewer is not None:
            viewer = check_player(viewer, "viewer")
        lines = [f"trump {'CDHS'[self.trump_suit]}  talon {self.talon_size}"
                 + (f" (bottom {CARD_NAMES[self.bottom_card]})" if self.bottom_card is not None else "")
                 + (f"  closed by player {self.closed_by}" if self.closed_by is not None else "")]
        for player in (0, 1):
            if viewer is None or viewer == player:
                cards = " ".join(CARD_NAMES[c] for c in cards_of(self.hands[player]))
            else:
                cards = f"{bin(self.hands[player]).count('1')} hidden cards"
            lines.append(f"player {player}: {cards}  points {self.points(player)}  tricks {self.tricks_won[player]}")
        if self.lead_card >= 0:
            lines.append(f"on the table: {CARD_NAMES[self.lead_card]} led by player {self.leader}")
        if self.stage == OVER:
            lines.append(f"result: {self.result}")
        else:
            lines.append(f"to move: player {self.to_move} ({STAGE_NAMES[self.stage]})")
        return "\n".join(lines)


def _clone(self: Game) -> Game:
    """One attribute copy per slot, the lists copied (straight-line code: search agents clone millions of
    times; a test checks every slot is copied)."""
    other = Game()
    other.rules = self.rules
    other.deck = self.deck
    other.dealer = self.dealer
    other.forehand = self.forehand
    other.trump_suit = self.trump_suit
    other.trump_mask = self.trump_mask
    other.trump_card = self.trump_card
    other.exchange_card = self.exchange_card
    other.hands = self.hands[:]
    other.stock = self.stock
    other.stock_pos = self.stock_pos
    other.bottom_card = self.bottom_card
    other.bottom_taker = self.bottom_taker
    other.closed_by = self.closed_by
    other.opponent_trickless_at_close = self.opponent_trickless_at_close
    other.closed_at_trick = self.closed_at_trick
    other.trick_points = self.trick_points[:]
    other.marriage_points = self.marriage_points[:]
    other.tricks_won = self.tricks_won[:]
    other.stage = self.stage
    other.to_move = self.to_move
    other.leader = self.leader
    other.lead_card = self.lead_card
    other.lead_was_marriage = self.lead_was_marriage
    other.turn_step = self.turn_step
    other.phase2 = self.phase2
    other.history = self.history[:]
    other.tricks = self.tricks[:]
    other.marriages = self.marriages[:]
    other.exchanges = self.exchanges[:]
    other.result = self.result
    other.won_cards = self.won_cards[:]
    other.talon_exhausted_at_trick = self.talon_exhausted_at_trick
    other.bottom_taken_card = self.bottom_taken_card
    other.auto_declare = self.auto_declare
    other.declare_offered = self.declare_offered
    other.false_declaration_allowed = self.false_declaration_allowed
    other.close_draw_option = self.close_draw_option
    other.is_over = self.is_over
    other.beaters = self.beaters
    return other


def _as_action_id(action: object) -> object:
    """Accept numpy integers; leave anything else for the illegal-action error to describe."""
    integer = as_integer(action)
    return action if integer is None else integer


def action_name_safe(action: object) -> str:
    if type(action) is int and 0 <= action < NUM_ACTIONS:
        return repr(ACTION_NAMES[action])
    return f"{action!r} (not an action id 0..{NUM_ACTIONS - 1})"


__all__ = [
    "CLOSER_FAILED", "DECLARED", "DealResult", "Exchange", "FALSE_DECLARATION", "FOLLOW", "Game", "LAST_TRICK",
    "LEAD", "Marriage", "NOT_SCORED", "OVER", "PREDRAW", "RENONCE", "RESPOND_CLOSE", "RESULT_REASONS",
    "STAGE_NAMES", "Trick", "check_player", "parse_deck", "shuffled_deck", "KING",
]
