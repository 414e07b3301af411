"""What one seat may know in three-player Sixty-six (R21), and sampling the two hidden hands consistently with it.

The three-player counterpart of :mod:`sixtysix_env.infoset`. A seat knows its own hand (forehand, while naming
trump, only his first three cards: R21), the trump suit once named, every card played and who won each trick,
every marriage shown (an announced pair before the first lead stays in the hand; with ``marry XY`` the partner
card is known to stay), all points, and from the follow rule of R21 which suits each other seat has shown to be
void in (a seat that did not follow suit is void in it; one that neither followed nor trumped is void in trumps).
Never the other seats' unseen cards or the deck order.

``determinize`` deals the unseen cards to the two other seats uniformly at random among all layouts consistent
with this knowledge: each constraint says which seats may hold a card, so the cards only one seat may hold go
there and the rest are split by a uniform random subset of the right size, which is exactly uniform. The world is
a whole game: for any seat but forehand it also draws which three of forehand's cards came first (uniform among
the cards he was dealt), so forehand's own information set in it is right, also while he names trump.
"""

from __future__ import annotations

import random

from .cards import CARD_NAMES, FULL_DECK_MASK, SUIT_MASKS, SUITS, cards_of, mask_of
from .three import NAME_TRUMP, NUM_ACTIONS_THREE, ThreeMarriage, ThreePlayerGame, ThreeTrick, check_player


def others_known_cards(game: ThreePlayerGame, seat: int) -> list[int]:
    """Per seat, the cards known to be in that seat's hand from shown marriages (R11), while unplayed."""
    played = game.won_cards[0] | game.won_cards[1] | game.won_cards[2] | mask_of(game.trick_cards)
    known = [0, 0, 0]
    for marriage in game.marriages:
        if marriage.player != seat:
            queen = marriage.suit * 6 + 2
            known[marriage.player] |= (1 << queen) | (1 << (queen + 1))
    return [mask & ~played if other != seat else 0 for other, mask in enumerate(known)]


def void_cards(game: ThreePlayerGame) -> list[int]:
    """Per seat, the cards it cannot hold by how it followed (R21: follow suit, else trump, else anything).
    A hand only shrinks, so a void once shown lasts for the deal."""
    forbidden = [0, 0, 0]
    trump_mask = game.trump_mask
    tricks = list(game.tricks)
    if len(game.trick_cards) > 1:
        tricks.append((game.leader, tuple(game.trick_cards), -1))
    for leader, cards, _winner in tricks:
        lead_suit_mask = SUIT_MASKS[cards[0] // 6]
        for offset in range(1, len(cards)):
            card = cards[offset]
            if lead_suit_mask >> card & 1:
                continue
            follower = (leader + offset) % 3
            forbidden[follower] |= lead_suit_mask
            if not trump_mask >> card & 1:
                forbidden[follower] |= trump_mask
    return forbidden


def dealt_hand(game: ThreePlayerGame, seat: int) -> int:
    """The eight cards ``seat`` was dealt: those still in his hand and those he has played."""
    dealt = game.hands[seat]
    for leader, cards, _winner in game.tricks:
        dealt |= 1 << cards[(seat - leader) % 3]
    offset = (seat - game.leader) % 3
    if offset < len(game.trick_cards):
        dealt |= 1 << game.trick_cards[offset]
    return dealt


class ThreeInformationSet:
    """Everything ``player`` may know about a three-player deal, and nothing else."""

    num_players = 3
    num_actions = NUM_ACTIONS_THREE

    def __init__(self, game: ThreePlayerGame, player: int, match_score: object = None):
        """``match_score`` exists for the two-player signature only: a three-player information set carries no
        Bummerl score (its observation has no place for one), so anything but ``None`` is refused."""
        if not isinstance(game, ThreePlayerGame):
            raise ValueError(
                f"a three-player information set is built from a ThreePlayerGame, got {type(game).__name__}")
        player = check_player(player)
        if match_score is not None:
            raise ValueError(f"match_score is not taken by three-player information sets (R21), got {match_score!r}")
        self.player = player
        self.match_score = None  # as a two-player information set's for a deal on its own
        self.rules = game.rules
        self.dealer = game.dealer
        self.forehand = game.forehand
        self.trump_suit = game.trump_suit
        self.naming = game.stage == NAME_TRUMP
        # R21: forehand sees only his first three cards before he names trump.
        self.hand = game.first_three if self.naming and player == game.forehand else game.hands[player]
        self.stage = game.stage
        self.to_move = game.current_player
        self.leader = game.leader
        self.trick_cards = tuple(game.trick_cards)
        self.lead_card = game.trick_cards[0] if game.trick_cards else -1
        self.tricks: tuple[ThreeTrick, ...] = tuple(ThreeTrick(*trick) for trick in game.tricks)
        self.marriages: tuple[ThreeMarriage, ...] = tuple(game.marriages)
        self.points = tuple(game.points(seat) for seat in range(3))
        self.marriage_points = tuple(game.marriage_points)
        self.tricks_won = tuple(game.tricks_won)
        self.hand_sizes = tuple(game.hands[seat].bit_count() for seat in range(3))
        self.known = tuple(others_known_cards(game, player))
        self.void = tuple(mask if seat != player else 0 for seat, mask in enumerate(void_cards(game)))
        self.played = game.won_cards[0] | game.won_cards[1] | game.won_cards[2] | mask_of(game.trick_cards)
        self.won_cards = tuple(game.won_cards)
        self.unseen = FULL_DECK_MASK & ~(self.hand | self.played | self.known[0] | self.known[1] | self.known[2])
        self.history = tuple(game.history)
        self.legal_actions = game.legal_actions() if game.current_player == player else []
        self.is_over = game.is_over
        self.result = game.result
        template = game.clone()
        template.deck = None  # the deck order is hidden
        # Only what the player may know: his own hand as he sees it (forehand naming trump: his first three cards,
        # R21) and the others' cards known from shown marriages.
        template.hands = [self.known[seat] if seat != player else self.hand for seat in range(3)]
        if player != game.forehand:
            template.first_three = 0  # which of forehand's cards came first only forehand knows
        self._template = template

    @property
    def others(self) -> tuple[int, int]:
        return ((self.player + 1) % 3, (self.player + 2) % 3)

    def determinize(self, rng: random.Random) -> ThreePlayerGame:
        """A full game consistent with this information, drawn uniformly over the hidden layouts."""
        if not isinstance(rng, random.Random):  # as for two players: else an AttributeError, or a numpy one used
            raise ValueError(f"rng must be a random.Random, got {type(rng).__name__}")
        game = self._template.clone()
        if self.naming and self.player == self.forehand:
            # R21: forehand's own last five cards are hidden from him too; nothing constrains any hidden card yet.
            unseen = cards_of(FULL_DECK_MASK & ~self.hand)
            rng.shuffle(unseen)
            game.hands[self.player] = self.hand | mask_of(unseen[:5])
            game.hands[self.others[0]] = mask_of(unseen[5:13])
            game.hands[self.others[1]] = mask_of(unseen[13:])
            return game  # first_three: his own first three, kept by the template
        first, second = self.others
        needed_first = self.hand_sizes[first] - self.known[first].bit_count()
        needed_second = self.hand_sizes[second] - self.known[second].bit_count()
        unseen = self.unseen
        only_first = unseen & self.void[second] & ~self.void[first]
        only_second = unseen & self.void[first] & ~self.void[second]
        if unseen & self.void[first] & self.void[second]:
            raise ValueError("inconsistent information set: an unseen card neither other seat may hold")
        free = cards_of(unseen & ~(only_first | only_second))
        extra_first = needed_first - only_first.bit_count()
        if extra_first < 0 or extra_first > len(free) or needed_first + needed_second != unseen.bit_count():
            raise ValueError("inconsistent information set: the unseen cards do not fit the other hands")
        chosen = mask_of(rng.sample(free, extra_first)) if extra_first else 0
        game.hands[first] = self.known[first] | only_first | chosen
        game.hands[second] = self.known[second] | only_second | (mask_of(free) & ~chosen)
        if self.player != self.forehand:
            game.first_three = mask_of(rng.sample(cards_of(dealt_hand(game, self.forehand)), 3))
        return game

    def describe(self) -> str:
        names = lambda mask: " ".join(CARD_NAMES[c] for c in cards_of(mask)) or "-"  # noqa: E731
        trump = SUITS[self.trump_suit] if self.trump_suit >= 0 else "not named"
        return (f"player {self.player} hand {names(self.hand)}; trump {trump}; "
                f"points {':'.join(map(str, self.points))}; unseen {names(self.unseen)}")


__all__ = ["ThreeInformationSet", "dealt_hand", "others_known_cards", "void_cards"]
