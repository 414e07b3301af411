"""The three-player Sixty-six engine, "echt zu dritt" (RULES R21): one deal, from the deal to its result.

The same small state API as the two-player :class:`~sixtysix_env.game.Game` (``deal``, ``current_player``,
``legal_actions()``, ``apply()``, ``is_over``, ``result``, ``returns()``, ``clone()``), with three seats 0, 1, 2.
``Game.deal(Rules.preset("three"), ...)`` returns a :class:`ThreePlayerGame`.

The game (R21): all 24 cards are dealt, 8 each, no talon and no trump card. Forehand (left of the dealer,
``(dealer + 1) % 3``) names the trump suit after seeing only his first three cards; then middlehand
(``(dealer + 2) % 3``) and the dealer follow in play order. From the first trick on a follower must follow suit,
and if void must trump when he can; he need not win the trick. Marriages score 20 (40 in trump, R11) and count only
once the player has won a trick (R12). After the eighth trick the player with the most points wins one game
point; a tie at the top is not scored.

Facts the rule text leaves open, and what this engine does (docs/rules_coverage.md, seed 001 and seed 000):

* No last-trick bonus (the deal holds 120 card points plus counted marriages): R21 and seed 001 count "the card
  points in his tricks" only, and the 10 extra points of R14 belong to the talon game.
* No declaring "66" and no early end: seed 001 "wins also when nobody reaches 66"; all eight tricks are played.
* A marriage announced as leader is the two-player ``marry XY`` (R11: announce and lead one of the pair).
  Without ``three_player_early_marriage`` a leader may announce from the second trick on (he then has won the
  previous trick, seed 001 "only right after winning a trick"). With it, before the first lead every player in turn
  (forehand, middlehand, dealer) may show any of his marriages (``announce X``) and then ``pass``; forehand may
  also announce with his first lead.

Actions (docs/actions.md): the 37 two-player ids keep their meaning (``play XY`` 0..23, ``marry XY`` 24..31,
``pass`` 36); ``name trump C/D/H/S`` are 37..40 and ``announce C/D/H/S`` (show a marriage before the first lead)
41..44, so ``NUM_ACTIONS_THREE`` is 45.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from .actions import ACTION_NAMES as TWO_PLAYER_ACTION_NAMES
from .actions import MARRY_BASE, PASS, marry_card
from .actions import parse_action as parse_two_player_action
from .cards import (
    _HIGH_HALF, _LOW_HALF, CARD_NAMES, CARD_POINTS, QUEENS_MASK, SUIT_MASKS, SUIT_NAMES, SUITS, cards_of, integer_index,
    parse_cards, shown,
)
from .game import BEATERS_BY_TRUMP, _as_action_id, parse_deck, shuffled_deck
from .rules import Rules

# ---------------------------------------------------------------------------------------------- actions
NAME_TRUMP_BASE = 37  # ``name trump C`` .. ``name trump S``: forehand's first decision (R21)
ANNOUNCE_BASE = 41  # ``announce C`` .. ``announce S``: show a marriage before the first lead (R21 early marriage)
NUM_ACTIONS_THREE = 45
ACTION_NAMES_THREE = TWO_PLAYER_ACTION_NAMES + tuple(f"name trump {suit}" for suit in SUITS) + tuple(
    f"announce {suit}" for suit in SUITS
)
_ACTION_BY_NAME = {name: action for action, name in enumerate(ACTION_NAMES_THREE)}


def three_player_action_name(action: int) -> str:
    index = integer_index(action)  # a Python or numpy integer, as ThreePlayerGame.apply takes
    if not 0 <= index < NUM_ACTIONS_THREE:
        raise ValueError(f"malformed action {action!r}: expected an integer in 0..{NUM_ACTIONS_THREE - 1}")
    return ACTION_NAMES_THREE[index]


def parse_three_player_action(text: str) -> int:
    """``'name trump H'``, ``'announce C'``, ``'play XY'``, ``'marry XY'`` or ``'pass'`` -> action id (R21)."""
    words = text.split() if isinstance(text, str) else []
    if words and words[0].lower() in ("name", "announce"):
        head = [word.lower() for word in words[:-1]]
        action = _ACTION_BY_NAME.get(" ".join(head + [words[-1].upper()]))
        if action is None:
            raise ValueError(
                f"malformed action {shown(text)}: expected 'name trump X' or 'announce X' with X one of "
                f"{', '.join(SUITS)}"
            )
        return action
    if len(words) == 2 and words[0].lower() in ("play", "marry"):
        return parse_two_player_action(text)  # a malformed card is named as such
    if " ".join(words).lower() == "pass":
        return PASS
    # R21: no talon and no declaring, so the two-player exchange, close, declare and draw are no three-player moves.
    raise ValueError(f"malformed action {shown(text)}: expected 'play XY', 'marry XY' (XY a card such as "
                     f"{CARD_NAMES[17]}), 'pass', 'name trump X' or 'announce X' with X one of {', '.join(SUITS)} "
                     "(three players, R21)")


# ---------------------------------------------------------------------------------------------- deal order
# R21 deck order (top card first): packets of 3, 2, 3 cards, each round forehand, middlehand, dealer.
# FOREHAND_POSITIONS etc. are 0-based deck positions.
FOREHAND_POSITIONS = (0, 1, 2, 9, 10, 15, 16, 17)
MIDDLEHAND_POSITIONS = (3, 4, 5, 11, 12, 18, 19, 20)
DEALER_POSITIONS = (6, 7, 8, 13, 14, 21, 22, 23)
HAND_SIZE = 8
NUM_TRICKS = 8

# Stages
NAME_TRUMP, ANNOUNCE, LEAD, FOLLOW, OVER = range(5)
STAGE_NAMES = ("name trump", "announce", "lead", "follow", "over")

MOST_POINTS = "most points"
ILLEGAL_ACTION_END = "illegal action"  # the start of the reason of a deal ended by an illegal action (not scored)
TIE = "not scored"


# BEATERS_BY_TRUMP[trump][card]: cards that beat ``card`` (R6). Applied to the best card of a trick so far, it
# gives the three-card winner: the highest trump, else the highest card of the suit led.
BEATERS = BEATERS_BY_TRUMP


class ThreePlayerResult(NamedTuple):
    """How a three-player deal ended. ``winner`` is ``None`` for a tie at the top (not scored, R21)."""

    winner: int | None
    game_points: int
    reason: str
    points: tuple[int, int, int]  # counted points (R12) of each seat

    def returns(self) -> tuple[int, int, int]:
        """Game points each seat scored: 1 for the winner (R21), 0 otherwise."""
        if self.winner is None:
            return (0, 0, 0)
        return tuple(self.game_points if seat == self.winner else 0 for seat in range(3))  # type: ignore[return-value]


class ThreeTrick(NamedTuple):
    leader: int
    cards: tuple[int, int, int]  # in play order, the leader's first
    winner: int


class ThreeMarriage(NamedTuple):
    player: int
    suit: int
    led_card: int  # the card led with the announcement, or -1 when shown before the first lead (both stay in hand)
    trick_index: int


def parse_three_player_deck(deck: Sequence[int | str]) -> list[int]:
    return parse_deck(deck, Rules())  # 24 cards, each once (R1, R21)


def deck_from_seat_hands(forehand: Sequence[int | str], middlehand: Sequence[int | str],
                         dealer: Sequence[int | str]) -> list[str]:
    """The R21-ordered deck (top card first) from the three hands of 8 cards in deal order: each hand's first
    three cards are its first packet, the next two the second, the last three the third (forehand's first three are
    the cards he sees before naming trump)."""
    hands = []
    for what, group in (("forehand", forehand), ("middlehand", middlehand), ("dealer", dealer)):
        cards = parse_cards(group, f"{what} hand")  # a malformed card named by its hand, not by a deck position
        if len(cards) != HAND_SIZE:
            raise ValueError(f"{what} hand needs {HAND_SIZE} cards (R21), got {len(cards)}")
        hands.append(cards)
    deck: list[Any] = [None] * 24
    for hand, positions in zip(hands, (FOREHAND_POSITIONS, MIDDLEHAND_POSITIONS, DEALER_POSITIONS)):
        for card, position in zip(hand, positions):
            deck[position] = card
    return [CARD_NAMES[card] for card in parse_three_player_deck(deck)]


def check_player(value: object, what: str = "player") -> int:
    """``value`` as a seat 0, 1 or 2 (a Python or numpy integer, never a bool or float); else ``ValueError`` naming
    ``what`` (the two-player engine's ``check_player`` for three seats, R21)."""
    index = integer_index(value)
    if 0 <= index <= 2:
        return index
    raise ValueError(f"{what} must be 0, 1 or 2, got {value!r}")


class ThreePlayerGame:
    """One deal of three-player Sixty-six (R21). Seats 0, 1, 2; play goes ``seat -> (seat + 1) % 3``."""

    __slots__ = (
        "rules", "deck", "dealer", "forehand", "first_three", "trump_suit", "trump_mask", "beaters", "hands",
        "stage", "to_move", "leader", "trick_cards", "best_card", "best_player", "trick_points", "marriage_points",
        "tricks_won", "won_cards", "history", "tricks", "marriages", "result", "is_over", "announced",
        "early_marriage", "announcers_left",
    )
    num_players = 3
    num_actions = NUM_ACTIONS_THREE

    # ------------------------------------------------------------------ construction
    @classmethod
    def deal(cls, rules: Rules | None = None, deck: Sequence[int | str] | None = None, dealer: Any = 0,
             seed: Any = None) -> "ThreePlayerGame":
        """Deal from an explicit deck (R21 order, top first) or, without one, from ``seed`` (an integer)."""
        rules = Rules.preset("three") if rules is None else rules
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules object, got {type(rules).__name__}")
        if rules.players != 3:
            raise ValueError(f"ThreePlayerGame needs rules with players=3 (R21), got players={rules.players}")
        dealer = check_player(dealer, "dealer")
        if deck is None:
            cards = shuffled_deck(24, seed)
        else:
            if seed is not None:
                raise ValueError("give either an explicit deck or a seed, not both")
            cards = parse_three_player_deck(deck)
        return cls._from_cards(rules, cards, dealer)

    @classmethod
    def _from_cards(cls, rules: Rules, cards: list[int], dealer: int) -> "ThreePlayerGame":
        game = cls.__new__(cls)
        forehand = (dealer + 1) % 3
        hands = [0, 0, 0]
        for seat, positions in ((forehand, FOREHAND_POSITIONS), ((dealer + 2) % 3, MIDDLEHAND_POSITIONS),
                                (dealer, DEALER_POSITIONS)):
            for position in positions:
                hands[seat] |= 1 << cards[position]
        game.rules = rules
        game.deck = tuple(cards)
        game.dealer = dealer
        game.forehand = forehand
        game.first_three = (1 << cards[0]) | (1 << cards[1]) | (1 << cards[2])  # all forehand sees when naming
        game.trump_suit = -1
        game.trump_mask = 0
        game.beaters = BEATERS[0]  # replaced when trump is named
        game.hands = hands
        game.stage = NAME_TRUMP
        game.to_move = forehand
        game.leader = forehand
        game.trick_cards = []
        game.best_card = -1
        game.best_player = -1
        game.trick_points = [0, 0, 0]
        game.marriage_points = [0, 0, 0]
        game.tricks_won = [0, 0, 0]
        game.won_cards = [0, 0, 0]
        game.history = []
        game.tricks = []
        game.marriages = []
        game.result = None
        game.is_over = False
        game.announced = 0  # suits whose marriage has been announced (bit per suit)
        game.early_marriage = rules.three_player_early_marriage
        game.announcers_left = 3  # players still to speak in the early-marriage round
        return game

    def clone(self) -> "ThreePlayerGame":
        other = ThreePlayerGame.__new__(ThreePlayerGame)
        other.rules = self.rules
        other.deck = self.deck
        other.dealer = self.dealer
        other.forehand = self.forehand
        other.first_three = self.first_three
        other.trump_suit = self.trump_suit
        other.trump_mask = self.trump_mask
        other.beaters = self.beaters
        other.hands = self.hands[:]
        other.stage = self.stage
        other.to_move = self.to_move
        other.leader = self.leader
        other.trick_cards = self.trick_cards[:]
        other.best_card = self.best_card
        other.best_player = self.best_player
        other.trick_points = self.trick_points[:]
        other.marriage_points = self.marriage_points[:]
        other.tricks_won = self.tricks_won[:]
        other.won_cards = self.won_cards[:]
        other.history = self.history[:]
        other.tricks = self.tricks[:]
        other.marriages = self.marriages[:]
        other.result = self.result
        other.is_over = self.is_over
        other.announced = self.announced
        other.early_marriage = self.early_marriage
        other.announcers_left = self.announcers_left
        return other

    # ------------------------------------------------------------------ queries
    @property
    def current_player(self) -> int | None:
        return None if self.stage == OVER else self.to_move

    @property
    def middlehand(self) -> int:
        return (self.dealer + 2) % 3

    @property
    def trick_log(self) -> list[ThreeTrick]:
        return [ThreeTrick(leader, cards, winner) for leader, cards, winner in self.tricks]

    def points(self, player: object) -> int:
        """Counted points (R12, R21): tricks, plus marriages once the player has won a trick."""
        player = check_player(player)
        if self.tricks_won[player]:
            return self.trick_points[player] + self.marriage_points[player]
        return self.trick_points[player]

    def hand(self, player: object) -> list[int]:
        """The card ids in ``player``'s hand, ascending."""
        return cards_of(self.hands[check_player(player)])

    def returns(self) -> tuple[int, int, int]:
        return (0, 0, 0) if self.result is None else self.result.returns()

    def action_name(self, action: int) -> str:
        return three_player_action_name(action)

    @staticmethod
    def parse_action(text: str) -> int:
        return parse_three_player_action(text)

    def legal_actions(self) -> list[int]:
        """Legal action ids, ascending; empty once the deal is over."""
        stage = self.stage
        hand = self.hands[self.to_move]
        if stage == FOLLOW:
            hand = self._follow_mask(hand)
            return _LOW_HALF[hand & 0xFFF] + _HIGH_HALF[hand >> 12]
        if stage == LEAD:
            actions = _LOW_HALF[hand & 0xFFF] + _HIGH_HALF[hand >> 12]
            pairs = hand & (hand >> 1) & QUEENS_MASK & ~self._announced_queens()  # Queens whose King is held too
            if pairs and (self.tricks or self.early_marriage):
                while pairs:
                    queen = (pairs & -pairs).bit_length() - 1
                    pairs &= pairs - 1
                    base = MARRY_BASE + 2 * (queen // 6)
                    actions.append(base)
                    actions.append(base + 1)
            return actions
        if stage == NAME_TRUMP:
            return [NAME_TRUMP_BASE, NAME_TRUMP_BASE + 1, NAME_TRUMP_BASE + 2, NAME_TRUMP_BASE + 3]
        if stage == ANNOUNCE:
            return [PASS] + [ANNOUNCE_BASE + suit for suit in self._announceable(self.to_move)]
        return []

    def is_legal(self, action: object) -> bool:
        """Whether ``apply`` takes ``action`` now: a Python or numpy integer among the legal actions."""
        if type(action) is not int:
            action = _as_action_id(action)
        return type(action) is int and action in self.legal_actions()

    def _follow_mask(self, hand: int) -> int:
        """R21: follow suit; if void, trump; if void in trumps too, anything (no obligation to win)."""
        same_suit = hand & SUIT_MASKS[self.trick_cards[0] // 6]
        if same_suit:
            return same_suit
        trumps = hand & self.trump_mask
        return trumps if trumps else hand

    def _announced_queens(self) -> int:
        announced = self.announced
        return sum(1 << (suit * 6 + 2) for suit in range(4) if announced >> suit & 1) if announced else 0

    def _announceable(self, player: int) -> list[int]:
        hand = self.hands[player]
        pairs = hand & (hand >> 1) & QUEENS_MASK & ~self._announced_queens()
        return [suit for suit in range(4) if pairs >> (suit * 6 + 2) & 1]

    # ------------------------------------------------------------------ moves
    def apply(self, action_id: object) -> None:
        """Apply a legal action; an illegal one raises ``ValueError`` and leaves the state unchanged."""
        action = action_id if type(action_id) is int else _as_action_id(action_id)
        stage = self.stage
        player = self.to_move
        if stage == FOLLOW:
            hand = self.hands[player]
            if type(action) is not int or action < 0 or not self._follow_mask(hand) >> action & 1:
                self._reject(action)
            self.history.append(action)
            self.hands[player] = hand ^ (1 << action)  # type: ignore[operator]
            self.trick_cards.append(action)
            if self.beaters[self.best_card] >> action & 1:  # type: ignore[operator]
                self.best_card = action  # type: ignore[assignment]
                self.best_player = player
            if len(self.trick_cards) == 3:
                self._finish_trick()
            else:
                self.to_move = (player + 1) % 3
            return
        if stage == LEAD and type(action) is int and 0 <= action < 24 and self.hands[player] >> action & 1:
            self.history.append(action)
            self._lead(player, action)
            return
        if stage == OVER:
            raise ValueError(f"the deal is over; no action can be applied ({_action_text(action)})")
        if not self.is_legal(action):
            self._reject(action)
        assert isinstance(action, int)
        self.history.append(action)
        if stage == NAME_TRUMP:
            suit = action - NAME_TRUMP_BASE
            self.trump_suit = suit
            self.trump_mask = SUIT_MASKS[suit]
            self.beaters = BEATERS[suit]
            if self.early_marriage:
                self.stage = ANNOUNCE
            else:
                self.stage = LEAD
        elif stage == ANNOUNCE:
            if action == PASS:
                self.announcers_left -= 1
                if self.announcers_left == 0:
                    self.stage = LEAD
                    self.to_move = self.forehand
                else:
                    self.to_move = (player + 1) % 3
            else:
                self._announce(player, action - ANNOUNCE_BASE, -1)
        else:  # LEAD with a marriage: announce it and lead the card (R11)
            card = marry_card(action)
            self._announce(player, card // 6, card)
            self._lead(player, card)

    def _lead(self, player: int, card: int) -> None:
        self.hands[player] ^= 1 << card
        self.trick_cards = [card]
        self.best_card = card
        self.best_player = player
        self.stage = FOLLOW
        self.to_move = (player + 1) % 3

    def _announce(self, player: int, suit: int, led_card: int) -> None:
        self.announced |= 1 << suit
        self.marriage_points[player] += 40 if suit == self.trump_suit else 20  # R11
        self.marriages.append(ThreeMarriage(player, suit, led_card, len(self.tricks)))

    def _finish_trick(self) -> None:
        cards = self.trick_cards
        winner = self.best_player
        self.trick_points[winner] += CARD_POINTS[cards[0]] + CARD_POINTS[cards[1]] + CARD_POINTS[cards[2]]
        self.tricks_won[winner] += 1
        self.won_cards[winner] |= (1 << cards[0]) | (1 << cards[1]) | (1 << cards[2])
        self.tricks.append((self.leader, (cards[0], cards[1], cards[2]), winner))
        self.trick_cards = []
        self.best_card = -1
        self.best_player = -1
        self.leader = winner
        self.to_move = winner
        self.stage = LEAD
        if len(self.tricks) == NUM_TRICKS:
            self._finish()

    def _finish(self) -> None:
        """R21: after the last trick the most points win 1 game point; a tie at the top is not scored."""
        points = (self.points(0), self.points(1), self.points(2))
        top = max(points)
        leaders = [seat for seat in range(3) if points[seat] == top]
        if len(leaders) == 1:
            self.result = ThreePlayerResult(leaders[0], 1, MOST_POINTS, points)
        else:
            self.result = ThreePlayerResult(None, 0, TIE, points)
        self.stage = OVER
        self.is_over = True
        self.to_move = -1

    def end_after_illegal_action(self, offender: object) -> None:
        """End the deal unscored after ``offender``'s illegal action (the Gymnasium environment's
        ``illegal_action="forfeit"``): R21 names no Renonce for three, so nobody wins a game point. ``offender`` must
        be the player to move, whose action was refused; a record of the deal replays it (``"forfeit"``)."""
        offender = check_player(offender, "offender")
        if self.is_over:
            raise ValueError("the deal is over; it cannot end again")
        if offender != self.to_move:
            raise ValueError(f"player {offender} is not to move (player {self.to_move} is): only the player to move "
                             "can make an illegal action")
        points = (self.points(0), self.points(1), self.points(2))
        self.result = ThreePlayerResult(None, 0, f"{ILLEGAL_ACTION_END} by player {offender} (not scored)", points)
        self.stage = OVER
        self.is_over = True
        self.to_move = -1

    def _reject(self, action: object) -> None:
        legal = ", ".join(ACTION_NAMES_THREE[a] for a in self.legal_actions())
        raise ValueError(
            f"illegal action {_action_text(action)} for player {self.to_move} "
            f"({STAGE_NAMES[self.stage]}); legal: {legal or 'none'}"
        )

    # ------------------------------------------------------------------ display
    def __repr__(self) -> str:
        if self.stage == OVER:
            return f"<ThreePlayerGame over: {self.result}>"
        trump = SUITS[self.trump_suit] if self.trump_suit >= 0 else "-"
        points = ":".join(str(self.points(seat)) for seat in range(3))
        return f"<ThreePlayerGame {STAGE_NAMES[self.stage]} player {self.to_move} trump {trump} points {points}>"

    def render(self, viewer: int | None = None) -> str:
        """A short text picture of the table; hides the other hands when ``viewer`` is a seat."""
        if viewer is not None:
            viewer = check_player(viewer, "viewer")
        trump = SUIT_NAMES[self.trump_suit] if self.trump_suit >= 0 else "not named yet"
        lines = [f"trump {trump}  dealer {self.dealer}  forehand {self.forehand}"]
        for seat in range(3):
            if viewer is None or viewer == seat:
                mask = self.hands[seat]
                if viewer == seat and self.stage == NAME_TRUMP and seat == self.forehand:
                    mask = self.first_three
                cards = " ".join(CARD_NAMES[c] for c in cards_of(mask))
            else:
                cards = f"{self.hands[seat].bit_count()} hidden cards"
            lines.append(f"player {seat}: {cards}  points {self.points(seat)}  tricks {self.tricks_won[seat]}")
        if self.trick_cards:
            lines.append(f"on the table: {' '.join(CARD_NAMES[c] for c in self.trick_cards)} led by player {self.leader}")
        lines.append(f"result: {self.result}" if self.stage == OVER else f"to move: player {self.to_move} ({STAGE_NAMES[self.stage]})")
        return "\n".join(lines)


def _action_text(action: object) -> str:
    if type(action) is int and 0 <= action < NUM_ACTIONS_THREE:
        return repr(ACTION_NAMES_THREE[action])
    return f"{action!r} (not an action id 0..{NUM_ACTIONS_THREE - 1})"


__all__ = [
    "ACTION_NAMES_THREE", "ANNOUNCE", "ANNOUNCE_BASE", "DEALER_POSITIONS", "FOLLOW", "FOREHAND_POSITIONS",
    "ILLEGAL_ACTION_END", "LEAD",
    "MIDDLEHAND_POSITIONS", "NAME_TRUMP", "NAME_TRUMP_BASE", "NUM_ACTIONS_THREE", "OVER", "STAGE_NAMES",
    "ThreeMarriage", "ThreePlayerGame", "ThreePlayerResult", "ThreeTrick", "deck_from_seat_hands",
    "parse_three_player_action", "three_player_action_name",
]
