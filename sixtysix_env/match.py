"""Match play (RULES R3, R17, R18): deals with alternating dealer, Bummerl to 7 game points, Partie.

A :class:`Match` keeps the score; it does not play. Deal with :meth:`Match.new_deal`, play the :class:`Game` to
its end, hand it back with :meth:`Match.record_deal`. :func:`play_match` does all of it with one move chooser.

Counting: ``scores`` are the game points each player has won in the current Bummerl (RULES R17 notes that
players traditionally count down from 7: ``scores_remaining``). When a player reaches ``rules.bummerl_target``
the other gets a Bummerl, two if he has 0 game points and ``rules.schneider_bummerl`` is on ("Schneider").
``bummerl[p]`` is the number of Bummerl player ``p`` has *received*; the Partie is won by the player who first
hangs ``rules.partie_bummerl`` Bummerl on his opponent (R18).

Three people (R21): :class:`ThreePlayerMatch` scores a Bummerl of three-player Sixty-six "echt zu dritt" (one game
point per deal won, first to ``bummerl_target``), and :class:`DealerSitsOutMatch` the two-player game among three
people with the dealer sitting out each deal; in both the dealer rotates to his left. :func:`play_three_person_match`
plays either with one move chooser.
"""

from __future__ import annotations

import random
from typing import Callable, NamedTuple, Sequence

from .game import DealResult, Game, check_player
from .integers import optional_int
from .rules import Rules
from .three import check_player as check_three_player_seat


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
        if rules.players != 2:
            raise ValueError("Match plays the two-player game (R17); for three players (R21) use ThreePlayerMatch")
        seed = optional_int(seed, "seed")
        self.rules = rules
        self._rng = random.Random(seed)
        if first_dealer is None:
            first_dealer = self._rng.randrange(2)  # R3: the first dealer is drawn at random
        else:
            try:  # 1.0 equals 1 and was kept: a float dealer failed only at new_deal
                first_dealer = check_player(first_dealer, "first_dealer")
            except ValueError:
                raise ValueError(f"first_dealer must be 0, 1 or None, got {first_dealer!r}") from None
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
    def bummerl_score(self) -> tuple[int, int]:
        """The game points of players 0 and 1 in the current Bummerl (R17), as both see them in their information
        sets (``InformationSet(..., match_score)``)."""
        return (self.scores[0], self.scores[1])

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
        entry = BummerlEntry(winner, loser, 2 if schneider else 1, self.bummerl_score, deals)
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


# ---------------------------------------------------------------------------------------------- three people (R21)
class ThreeSeatEntry(NamedTuple):
    """One recorded deal among three people: the dealer, the people in the engine's seats, and each person's gain."""

    dealer: int
    seats: tuple[int, ...]  # seats[engine seat] = person
    game_points: tuple[int, int, int]  # game points each person won in this deal


class _ThreePersonBummerl:
    """A Bummerl among three people: deals with the dealer rotating to his left (the previous forehand) until one
    person has ``rules.bummerl_target`` game points (R17 carried over to three people). Subclasses say how a deal
    is dealt and which person sits in which engine seat."""

    def __init__(self, rules: Rules, first_dealer: int | None, seed: int | None):
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules object, got {type(rules).__name__}")
        seed = optional_int(seed, "seed")
        self.rules = rules
        self._rng = random.Random(seed)
        if first_dealer is None:
            first_dealer = self._rng.randrange(3)  # R3: the first dealer is drawn at random
        else:
            try:
                first_dealer = check_three_player_seat(first_dealer, "first_dealer")
            except ValueError:
                raise ValueError(f"first_dealer must be 0, 1, 2 or None, got {first_dealer!r}") from None
        self.first_dealer = first_dealer
        self.dealer = first_dealer  # the person dealing the next deal
        self.scores = [0, 0, 0]  # game points of each person
        self.deals: list[ThreeSeatEntry] = []

    @property
    def is_over(self) -> bool:
        return max(self.scores) >= self.rules.bummerl_target

    @property
    def winner(self) -> int | None:
        """The person who reached the target first (only one can: each deal scores one winner)."""
        return self.scores.index(max(self.scores)) if self.is_over else None

    def seats(self) -> tuple[int, ...]:
        raise NotImplementedError

    def _check_new_deal(self, seed: int | None, deck) -> int | None:
        if self.is_over:
            raise ValueError("the match is over; no more deals")
        return self._rng.getrandbits(64) if deck is None and seed is None else seed

    def _record(self, game_points_by_seat: Sequence[int]) -> None:
        seats = self.seats()
        gained = [0, 0, 0]
        for seat, points in enumerate(game_points_by_seat):
            gained[seats[seat]] += points
        self.deals.append(ThreeSeatEntry(self.dealer, seats, (gained[0], gained[1], gained[2])))
        for person in range(3):
            self.scores[person] += gained[person]
        self.dealer = (self.dealer + 1) % 3

    def _check_game(self, game, players: int) -> None:
        if self.is_over:  # a deal after the end could let a second person pass the target and change the winner
            raise ValueError("the match is over; no more deals")
        if getattr(game, "num_players", 2) != players or not game.is_over:
            raise ValueError(f"record_deal needs a finished {players}-player deal of this match")
        if game.rules != self.rules:
            raise ValueError("the deal was played under other rules than the match")

    def __repr__(self) -> str:
        state = f"winner person {self.winner}" if self.is_over else f"person {self.dealer} deals next"
        scores = ":".join(map(str, self.scores))
        return f"<{type(self).__name__} game points {scores}, {len(self.deals)} deals, {state}>"


class ThreePlayerMatch(_ThreePersonBummerl):
    """A Bummerl of three-player Sixty-six "echt zu dritt" (R21; one game point per won deal, R17's target of 7).
    People and engine seats coincide; the dealer rotates to his left, ``(dealer + 1) % 3``."""

    def __init__(self, rules: Rules | None = None, first_dealer: int | None = None, seed: int | None = None):
        rules = Rules.preset("three") if rules is None else rules
        if isinstance(rules, Rules) and rules.players != 3:
            raise ValueError("ThreePlayerMatch needs rules with players=3 (R21)")
        super().__init__(rules, first_dealer, seed)

    def seats(self) -> tuple[int, ...]:
        return (0, 1, 2)

    def new_deal(self, seed: int | None = None, deck: Sequence[int | str] | None = None):
        seed = self._check_new_deal(seed, deck)
        return Game.deal(self.rules, deck=deck, dealer=self.dealer, seed=seed)

    def record_deal(self, game) -> None:
        self._check_game(game, 3)
        if game.dealer != self.dealer:
            raise ValueError(f"the deal was dealt by player {game.dealer}, but player {self.dealer} deals now")
        self._record(game.result.returns())


class DealerSitsOutMatch(_ThreePersonBummerl):
    """Three people playing the two-player game, the dealer sitting out each deal (R21's last sentence, seed 001
    "der jeweilige Kartengeber setzt stets für eine Runde aus"). The person left of the dealer is forehand (engine
    seat 1 - ``dealer seat``), the third person takes the engine's dealer seat (receives the dealer's cards, R4).
    Game points (R16) go to the people; the first to ``rules.bummerl_target`` wins."""

    ENGINE_DEALER_SEAT = 0  # the engine deal is always dealt with engine seat 0 as the (card-receiving) dealer

    def __init__(self, rules: Rules | None = None, first_dealer: int | None = None, seed: int | None = None):
        rules = Rules() if rules is None else rules
        if isinstance(rules, Rules) and rules.players != 2:
            raise ValueError("DealerSitsOutMatch plays the two-player game: it needs rules with players=2")
        super().__init__(rules, first_dealer, seed)

    def seats(self) -> tuple[int, ...]:
        """``seats[engine seat]``: engine seat 1 (forehand) is the person left of the dealer, seat 0 the other."""
        return ((self.dealer + 2) % 3, (self.dealer + 1) % 3)

    def new_deal(self, seed: int | None = None, deck: Sequence[int | str] | None = None) -> Game:
        seed = self._check_new_deal(seed, deck)
        return Game.deal(self.rules, deck=deck, dealer=self.ENGINE_DEALER_SEAT, seed=seed)

    def record_deal(self, game: Game) -> None:
        self._check_game(game, 2)
        if game.dealer != self.ENGINE_DEALER_SEAT:  # else forehand and the card-receiving dealer seat are swapped
            raise ValueError(f"the deal was dealt by engine seat {game.dealer}; this match deals with seat "
                             f"{self.ENGINE_DEALER_SEAT} as the dealer (new_deal)")
        result = game.result
        self._record([result.game_points if result.winner == seat else 0 for seat in (0, 1)])


def play_three_person_match(match: _ThreePersonBummerl, choose_action: Callable[[object, int], int],
                            max_deals: int = 10_000) -> _ThreePersonBummerl:
    """Play ``match`` to its end; ``choose_action(game, person)`` picks every move of the person in that seat."""
    while not match.is_over:
        if len(match.deals) >= max_deals:
            raise RuntimeError(f"the match did not end within {max_deals} deals")
        seats = match.seats()
        game = match.new_deal()
        while not game.is_over:
            game.apply(choose_action(game, seats[game.current_player]))
        match.record_deal(game)
    return match


__all__ = [
    "BummerlEntry", "DealEntry", "DealerSitsOutMatch", "Match", "ThreePlayerMatch", "ThreeSeatEntry", "play_match",
    "play_three_person_match",
]
