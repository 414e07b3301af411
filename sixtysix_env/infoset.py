"""What one player may know (RULES "What a player may know"), and sampling hidden layouts consistent with it.

:class:`InformationSet` is built from a :class:`~sixtysix_env.game.Game` and keeps only public facts and the
player's own hand. Its template game has the hidden cards erased (the opponent's unseen cards and the
face-down talon, and the deck order), so an agent holding an information set cannot peek. ``determinize``
fills them in uniformly at random among all layouts consistent with everything the player knows.
"""

from __future__ import annotations

import numbers
import random

from .actions import NUM_ACTIONS
from .cards import CARD_NAMES, HIGHER_IN_SUIT, SUIT_MASKS, cards_of, deck_cards, mask_of
from .game import Exchange, Game, Marriage, Trick, check_player
from .rules import Rules

UNKNOWN = -1  # placeholder for an erased card in the template's talon


def opponent_known_cards(game: Game, player: int) -> int:
    """Cards known to be in the opponent's hand (mask): a shown marriage partner, the trump card he took by an
    exchange, and the bottom card he took as loser of the talon's last trick (R7, R9, R11) — while unplayed."""
    opponent = 1 - player
    played = game.won_cards[0] | game.won_cards[1]
    if game.lead_card >= 0:
        played |= 1 << game.lead_card
    known = 0
    for marriage in game.marriages:
        if marriage.player == opponent:
            partner = marriage.led_card ^ 1  # Queen (rank 2) <-> King (rank 3): ids differ in the lowest bit
            known |= (1 << partner) | (1 << marriage.led_card)  # the led card stays if the announcement ended the deal
    for exchange in game.exchanges:
        if exchange.player == opponent:
            known |= 1 << exchange.taken_card
    if game.bottom_taker == opponent:
        known |= 1 << game.bottom_taken_card
    return known & ~played


def opponent_void_cards(game: Game, player: int) -> int:
    """Cards the opponent cannot hold, from how he followed ``player``'s leads under R8 (phase 2 only: he draws
    no more cards then, so a void shown once lasts)."""
    forbidden = 0
    trump_mask = game.trump_mask
    for trick_leader, lead, follow, _winner, in_phase2 in game.tricks:
        if not in_phase2 or trick_leader != player:
            continue
        lead_suit_mask = SUIT_MASKS[lead // 6]
        if lead_suit_mask >> follow & 1:
            if follow < lead:
                forbidden |= HIGHER_IN_SUIT[lead]  # (b) followed low: held no higher card of the suit
        elif trump_mask >> follow & 1:
            forbidden |= lead_suit_mask  # (c) trumped: void in the suit led
        else:
            forbidden |= lead_suit_mask | trump_mask  # (d) discarded: void in the suit led and in trumps
    return forbidden


class InformationSet:
    """Everything ``player`` may know about a deal, and nothing else."""

    __slots__ = (
        "player", "rules", "dealer", "forehand", "trump_suit", "trump_card", "hand", "bottom_card",
        "talon_size", "face_down_count", "closed_by", "stage", "to_move", "lead_card", "tricks", "marriages",
        "exchanges", "bottom_taker", "bottom_taken_card", "points", "tricks_won", "opponent_hand_size",
        "opponent_known", "opponent_void", "played", "unseen", "history", "legal_actions", "is_over", "result",
        "match_score", "_template",
    )
    num_players = 2  # as the game's (R21: three-player information sets declare 3)
    num_actions = NUM_ACTIONS

    def __new__(cls, game: Game | None = None, player: int | None = None, match_score=None):
        """A three-player deal (R21) gets its own kind of information set (:mod:`sixtysix_env.three_infoset`).
        (Both arguments are optional so that ``copy`` and ``pickle``, which call ``__new__`` bare, still work.)"""
        if getattr(game, "num_players", 2) == 3:
            from .three_infoset import ThreeInformationSet

            return ThreeInformationSet(game, player, match_score)
        return super().__new__(cls)

    def __init__(self, game: Game, player: int, match_score=None):
        """``match_score``: the game points of players 0 and 1 in the current Bummerl before this deal (R17), public
        to both, when the deal is part of one (the play loops pass it); ``None`` for a deal on its own."""
        if not isinstance(game, Game):
            raise ValueError(f"an information set is built from a Game, got {type(game).__name__}")
        player = check_player(player)
        self.match_score = checked_match_score(match_score, game.rules)
        opponent = 1 - player
        self.player = player
        self.rules: Rules = game.rules
        self.dealer = game.dealer
        self.forehand = game.forehand
        self.trump_suit = game.trump_suit
        self.trump_card = game.trump_card  # seen by both when it was turned up (R4)
        self.hand = game.hands[player]
        self.bottom_card = game.bottom_card  # the card under the talon: trump card or exchanged nine, both shown
        self.talon_size = game.talon_size
        self.face_down_count = game.face_down_count
        self.closed_by = game.closed_by
        self.stage = game.stage
        self.to_move = game.current_player
        self.lead_card = game.lead_card
        self.tricks: tuple[Trick, ...] = tuple(map(Trick._make, game.tricks))
        self.marriages: tuple[Marriage, ...] = tuple(game.marriages)
        self.exchanges: tuple[Exchange, ...] = tuple(game.exchanges)
        self.bottom_taker = game.bottom_taker
        self.bottom_taken_card = game.bottom_taken_card
        self.points = (game.points(0), game.points(1))
        self.tricks_won = tuple(game.tricks_won)
        self.opponent_hand_size = game.hands[opponent].bit_count()
        self.opponent_known = opponent_known_cards(game, player)
        self.opponent_void = opponent_void_cards(game, player)
        played = game.won_cards[0] | game.won_cards[1]
        if game.lead_card >= 0:
            played |= 1 << game.lead_card
        self.played = played
        all_cards = mask_of(deck_cards(game.rules.deck))
        bottom = 0 if game.bottom_card is None else 1 << game.bottom_card
        self.unseen = all_cards & ~(self.hand | played | self.opponent_known | bottom)
        self.history = tuple(game.history)
        self.legal_actions = game.legal_actions() if game.current_player == player else []
        self.is_over = game.is_over
        self.result = game.result
        template = game.clone()
        template.deck = None  # the deck order is hidden
        template.hands[opponent] = self.opponent_known
        template.stock = [UNKNOWN] * len(game.stock)
        self._template = template

    @property
    def opponent(self) -> int:
        return 1 - self.player

    def determinize(self, rng: random.Random) -> Game:
        """A full game consistent with this information, drawn uniformly over hidden layouts.

        The opponent's unknown cards are a uniform subset of the unseen cards he may hold (not those his phase-2
        follows ruled out); the remaining unseen cards fill the face-down talon in uniform random order. Every
        consistent layout is one (subset, order) pair and each subset admits the same number of orders, so the
        draw is exactly uniform without rejection.
        """
        if not isinstance(rng, random.Random):  # else an AttributeError deep inside (None, a numpy Generator)
            raise ValueError(f"rng must be a random.Random, got {type(rng).__name__}")
        game = self._template.clone()
        needed = self.opponent_hand_size - self.opponent_known.bit_count()
        allowed = cards_of(self.unseen & ~self.opponent_void)
        if needed > len(allowed):
            raise ValueError("inconsistent information set: the opponent cannot hold enough unseen cards")
        chosen = rng.sample(allowed, needed) if needed else []
        chosen_mask = mask_of(chosen)
        rest = cards_of(self.unseen & ~chosen_mask)
        rng.shuffle(rest)
        if len(rest) != self.face_down_count:
            raise ValueError("inconsistent information set: unseen cards do not fill the talon")
        game.hands[self.opponent] = self.opponent_known | chosen_mask
        stock = self._template.stock
        game.stock = stock[: len(stock) - len(rest)] + rest
        return game

    def describe(self) -> str:
        names = lambda mask: " ".join(CARD_NAMES[c] for c in cards_of(mask)) or "-"  # noqa: E731
        return (
            f"player {self.player} hand {names(self.hand)}; trump {'CDHS'[self.trump_suit]}; talon {self.talon_size}; "
            f"opponent holds {names(self.opponent_known)} + {self.opponent_hand_size - self.opponent_known.bit_count()} unknown; "
            f"points {self.points[0]}:{self.points[1]}"
        )


def checked_match_score(match_score, rules) -> tuple[int, int] | None:
    """``match_score`` as a pair of game points below the Bummerl target (R17), or ``None``; anything else is
    refused by name."""
    if match_score is None:
        return None
    try:
        first, second = match_score
    except (TypeError, ValueError):
        raise ValueError(f"match_score must be the game points of players 0 and 1, got {match_score!r}") from None
    for points in (first, second):
        if isinstance(points, bool) or not isinstance(points, numbers.Integral) or not 0 <= points < rules.bummerl_target:
            raise ValueError(f"match_score must be two integers from 0 to {rules.bummerl_target - 1} (R17: a Bummerl "
                             f"ends at {rules.bummerl_target}), got {match_score!r}")
    return (int(first), int(second))


def information_set(game: Game, player: int) -> InformationSet:
    return InformationSet(game, player)


def determinize(game: Game, player: int, rng: random.Random) -> Game:
    """Sample a full game consistent with ``player``'s information in ``game`` (see InformationSet.determinize)."""
    return InformationSet(game, player).determinize(rng)


__all__ = ["InformationSet", "checked_match_score", "determinize", "information_set", "opponent_known_cards", "opponent_void_cards"]
