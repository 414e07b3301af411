"""Match play (RULES R3, R17, R18): deals with alternating dealer, Bummerl to 7 game points, Partie.

A :class:`Match` keeps the score; it does not play. Deal with :meth:`Match.new_deal`, play the :class:`Game` to
its end, hand it back with :meth:`Match.record_deal`. :func:`play_match` does all of it with one move chooser.

Counting: ``scores`` are the game points each player has won in the current Bummerl (RULES R17 notes that
players traditionally count down from 7: ``scores_remaining``). When a player reaches ``rules.bummerl_target``
the other gets a Bummerl, two if he has 0 game points and ``rules.schneider_bummerl`` is on ("Schneider").
``bummerl[p]`` is the number of Bummerl player ``p`` has *received*; the Partie is won by the player who first
hangs ``rules.partie_bummerl`` Bummerl on his opponent (R18).
"""

from __future__ import annotations

import random
from typing import Callable, NamedTuple, Sequence

from .game import DealResult, Game
from .rules import Rules


class DealEntry(NamedTuple):
    """One recorded deal: who dealt it and how it ended."""

    dealer: int
    result: DealResult
    bummerl_number: int  # 0-based index of the Bummerl the deal belongs to


class BummerlEntry(NamedTuple):
    """One finished Bummerl (R17)."""

    winner: int
    loser: int
    marks: int  # Bummerl the loser received: 1, or 2 for Schneider
    scores: tuple[int, int]  # game points of both players when it ended
    deals: int  # deals it took


class Match:
    """A Partie of two-player Sixty-six (R17, R18) with the dealer alternating every deal (R3)."""

    def __init__(self, rules: Rules | None = None, first_dealer: int | None = None, seed: int | None = None):
        """``first_dealer`` 0 or 1; ``None`` draws it at random (R3) from ``seed``. Deals dealt without an explicit
        deck or seed take their seeds from the same generator, so a seeded match is reproducible."""
        rules = Rules() if rules is None else rules
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules object, got {type(rules).__name__}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed must be an integer or None, got {seed!r}")
        self.rules = rules
        self._rng = random.Random(seed)
        if first_dealer is None:
            first_dealer = self._rng.randrange(2)  # R3: the first dealer is drawn at random
        elif isinstance(first_dealer, bool) or first_dealer not in (0, 1):
            raise ValueError(f"first_dealer must be 0, 1 or None, got {first_dealer!r}")
        self.first_dealer = first_dealer
        self.dealer = first_dealer  # dealer of the next deal
        self.scores = [0, 0]  # game points in the current Bummerl
        self.bummerl = [0, 0]  # Bummerl received by each player
        self.deals: list[DealEntry] = []
        self.bummerl_history: list[BummerlEntry] = []

    # ------------------------------------------------------------------ state
    @property
    def is_over(self) -> bool:
        """R18: one player has received ``partie_bummerl`` Bummerl."""
        return max(self.bummerl) >= self.rules.partie_bummerl

    @property
    def winner(self) -> int | None:
        """The Partie winner (the player who hung the Bummerl on the other), ``None`` while it is running."""
        if not self.is_over:
            return None
        return 1 if self.bummerl[0] >= self.rules.partie_bummerl else 0

    @property
    def scores_remaining(self) -> tuple[int, int]:
        """R17's traditional count: game points each player still needs in this Bummerl."""
        target = self.rules.bummerl_target
        return (target - self.scores[0], target - self.scores[1])

    @property
    def forehand(self) -> int:
        """Forehand of the next deal (R3)."""
        return 1 - self.dealer

    # ------------------------------------------------------------------ play
    def new_deal(self, seed: int | None = None, deck: Sequence[int | str] | None = None) -> Game:
        """Deal the next game with the current dealer: from ``deck`` (R4 order), ``seed``, or the match's generator."""
        if self.is_over:
            raise ValueError("the match is over; no more deals")
        if deck is None and seed is None:
            seed = self._rng.getrandbits(64)
        return Game.deal(self.rules, deck=deck, dealer=self.dealer, seed=seed)

    def record_deal(self, game: Game) -> BummerlEntry | None:
        """Add a finished deal dealt by the current dealer; returns the Bummerl it finished, if any."""
        if not isinstance(game, Game):
            raise ValueError(f"record_deal needs a Game, got {type(game).__name__}")
        if not game.is_over:
            raise ValueError("record_deal needs a finished deal; this one is still being played")
        if game.rules != self.rules:
            raise ValueError("the deal was played under other rules than the match")
        if game.dealer != self.dealer:
            raise ValueError(f"the deal was dealt by player {game.dealer}, but player {self.dealer} deals now (R3)")
        return self.record_result(game.result)

    def record_result(self, result: DealResult) -> BummerlEntry | None:
        """Add a deal's result (for scripted scores; :meth:`record_deal` checks a played game first)."""
        if self.is_over:
            raise ValueError("the match is over; no more deals")
        if not isinstance(result, DealResult):
            raise ValueError(f"record_result needs a DealResult, got {type(result).__name__}")
        if result.winner is not None and (result.winner not in (0, 1) or result.game_points not in (1, 2, 3)):
            raise ValueError(f"malformed deal result {result}: winner 0/1 with 1, 2 or 3 game points (R16)")
        self.deals.append(DealEntry(self.dealer, result, len(self.bummerl_history)))
        self.dealer = 1 - self.dealer  # R3: the deal alternates, also after an unscored deal and across Bummerl
        if result.winner is None:
            return None  # R15: 65:65 is not scored
        self.scores[result.winner] += result.game_points
        if self.scores[result.winner] < self.rules.bummerl_target:
            return None
        winner, loser = result.winner, 1 - result.winner
        schneider = self.rules.schneider_bummerl and self.scores[loser] == 0  # R17
        deals = sum(deal.bummerl_number == len(self.bummerl_history) for deal in self.deals)
        entry = BummerlEntry(winner, loser, 2 if schneider else 1, (self.scores[0], self.scores[1]), deals)
        self.bummerl[loser] += entry.marks
        self.bummerl_history.append(entry)
        self.scores = [0, 0]
        return entry

    def __repr__(self) -> str:
        state = f"winner player {self.winner}" if self.is_over else f"player {self.dealer} deals next"
        return (f"<Match game points {self.scores[0]}:{self.scores[1]}, Bummerl received "
                f"{self.bummerl[0]}:{self.bummerl[1]}, {len(self.deals)} deals, {state}>")


def play_match(
    rules: Rules | None,
    choose_action: Callable[[Game, int], int],
    seed: int | None = None,
    first_dealer: int | None = None,
    max_deals: int = 10_000,
) -> Match:
    """Play a whole Partie, ``choose_action(game, player)`` picking every move; returns the finished match."""
    match = Match(rules, first_dealer=first_dealer, seed=seed)
    while not match.is_over:
        if len(match.deals) >= max_deals:
            raise RuntimeError(f"the match did not end within {max_deals} deals")
        game = match.new_deal()
        while not game.is_over:
            game.apply(choose_action(game, game.current_player))
        match.record_deal(game)
    return match


__all__ = ["BummerlEntry", "DealEntry", "Match", "play_match"]
