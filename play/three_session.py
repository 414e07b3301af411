"""A human against two agents in three-player Sixty-six (R21): one deal or a Bummerl to 7, shown only as the human
may see it.

The three-player counterpart of :class:`play.session.PlaySession`, with the same shape: :class:`ThreePlaySession`
owns the real :class:`~sixtysix_env.three.ThreePlayerGame` and the :class:`~sixtysix_env.match.ThreePlayerMatch`;
the human's moves are checked by the engine (an illegal one raises ``ValueError`` and changes nothing); each agent
moves from its own :class:`~sixtysix_env.three_infoset.ThreeInformationSet`. What leaves the session for display is
:meth:`view`, built from the human's information set alone (RULES "What a player may know"; forehand naming trump sees
his first three cards only, R21), and the public events. A finished deal's full record is kept in ``finished``.

Everything random is derived from the session's seed: each deal's deck, the first dealer, the human's seat when not
given, and each agent's generator before every move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from agents.registry import agent_for_rules
from eval.deals import derive_seed
from sixtysix_env import Rules
from sixtysix_env.actions import MARRY_BASE, PASS, marry_card
from sixtysix_env.cards import CARD_NAMES, CARD_POINTS, SUIT_NAMES, SUITS
from sixtysix_env.match import ThreePlayerMatch
from sixtysix_env.record import game_to_record
from sixtysix_env.three import (
    ANNOUNCE_BASE, NAME_TRUMP_BASE, ThreePlayerGame, parse_three_player_action, three_player_action_name,
)
from sixtysix_env.three_infoset import ThreeInformationSet

from .session import DealByDeal, parse_typed_move, sorted_hand

THREE = Rules.preset("three")


def three_move_label(action: int) -> str:
    """A short label for a move, one that can be typed back: ``AH``, ``marry KH``, ``name trump H``, ``announce H``,
    ``pass``."""
    if action < 24:
        return CARD_NAMES[action]
    if MARRY_BASE <= action < MARRY_BASE + 8:
        return f"marry {CARD_NAMES[marry_card(action)]}"
    return three_player_action_name(action)  # name trump H, announce H, pass


@dataclass
class ThreeSessionSettings:
    """What a three-player session is: who plays the two other seats, under which rules, how long."""

    opponents: tuple[str, str] = ("heuristic", "heuristic")
    """Agent specs of the seat to the human's left (who plays after him) and to his right."""
    rules: Rules = THREE
    """Rules with ``players=3`` (the preset ``three``, or it without the early marriages)."""
    match: bool = True
    """A whole Bummerl (R17 carried over to three: the first to ``rules.bummerl_target`` game points)."""
    seed: int = 0
    """Derives every deck, the first dealer, the human's seat when not given and the agents' generators."""
    human: int | None = None
    """The human's seat (0, 1 or 2); ``None`` draws it from the seed. The dealer rotates, so no seat is favoured."""


class ThreePlaySession(DealByDeal):
    """One deal or Bummerl of a human and two agents. Seats 0, 1, 2; play passes to the left, ``seat + 1``."""

    def __init__(self, settings: ThreeSessionSettings):
        if not isinstance(settings.rules, Rules) or settings.rules.players != 3:
            raise ValueError("a three-player session needs rules with players=3 (R21), e.g. Rules.preset('three')")
        if isinstance(settings.seed, bool) or not isinstance(settings.seed, int):
            raise ValueError(f"seed must be an integer, got {settings.seed!r}")
        if len(settings.opponents) != 2:
            raise ValueError(f"a three-player session needs two opponents, got {len(settings.opponents)}")
        human = settings.human
        if human is None:
            human = random.Random(derive_seed("seat", settings.seed)).randrange(3)
        elif isinstance(human, bool) or human not in (0, 1, 2):
            raise ValueError(f"human seat must be 0, 1 or 2, got {human!r}")
        self.settings = settings
        self.human = human
        self.rules = settings.rules
        # The seat after the human (to his left) first; each agent refuses here rules it cannot play.
        self.agents = {(human + offset) % 3: agent_for_rules(spec, settings.rules,
                                                              seed=derive_seed("agent", settings.seed, offset))
                       for offset, spec in zip((1, 2), settings.opponents)}
        first_dealer = random.Random(derive_seed("first dealer", settings.seed)).randrange(3)
        self.match = ThreePlayerMatch(settings.rules, first_dealer=first_dealer)
        self.finished: list[dict[str, Any]] = []  # records of the finished deals, in order
        self.events: list[dict[str, Any]] = []  # public events of the current deal
        self.game: ThreePlayerGame = self._new_game()

    # ------------------------------------------------------------------ deals
    def _new_game(self) -> ThreePlayerGame:
        game = self.match.new_deal(seed=derive_seed("deal", self.settings.seed, len(self.match.deals)))
        for seat, agent in self.agents.items():
            agent.start_deal(seat, self.rules)
        self.events = []
        dealer = "you deal" if game.dealer == self.human else f"{self.who(game.dealer)} deals"
        self._log(None, "deal", f"deal {len(self.finished) + 1}: {dealer}; {self.who(game.forehand)} "
                  f"{'name' if game.forehand == self.human else 'names'} trump")
        return game

    @property
    def session_over(self) -> bool:
        """The Bummerl (or the single deal) is finished and no next deal will be dealt."""
        return self.game.is_over and (not self.settings.match or self.match.is_over)

    # ------------------------------------------------------------------ moves
    def who(self, seat: int) -> str:
        """``you``, ``left`` (the seat after the human) or ``right``, with the agent's spec."""
        if seat == self.human:
            return "you"
        side = "left" if seat == (self.human + 1) % 3 else "right"
        return f"{side} ({self.settings.opponents[0 if side == 'left' else 1]})"

    @property
    def seats(self) -> tuple[int, int, int]:
        """The human's seat, then the seat to his left (who plays after him), then the one to his right."""
        return (self.human, (self.human + 1) % 3, (self.human + 2) % 3)

    def legal_moves(self) -> list[int]:
        return self.game.legal_actions() if not self.game.is_over and self.game.to_move == self.human else []

    def parse_move(self, text: str) -> int:
        """A move typed by name (``play QH``, ``QH``, ``10H``, ``marry H``, ``name trump S``, ``announce H``,
        ``pass``) or by its number in the list of legal moves (1-based); ``ValueError`` naming what is wrong. Before
        the first lead, ``marry H`` (or ``marry KH``) shows the marriage as ``announce H`` does (R21)."""
        legal = self.legal_moves()
        words = text.strip().upper().split()
        # "marry H", "marry KH" or "marry QH": the suit, or a card of the pair (not 9H, nor ZH)
        if len(words) == 2 and words[0] == "MARRY" and (words[1] in SUITS or (
                len(words[1]) == 2 and words[1][0] in "KQ" and words[1][1] in SUITS)):
            announce = ANNOUNCE_BASE + SUITS.index(words[1][-1])
            if announce in legal:
                return announce
        return parse_typed_move(text, legal, parse_three_player_action, three_player_action_name)

    def play(self, action: int) -> None:
        """Apply the human's move (checked by the engine; an illegal move raises ``ValueError``, nothing changes)."""
        if isinstance(action, bool) or not isinstance(action, int):
            raise ValueError(f"malformed move {action!r}: expected an action id (see docs/actions.md)")
        if self.game.is_over or self.game.to_move != self.human:
            raise ValueError("it is not your turn")
        self._apply(action)

    def run_agents(self) -> list[int]:
        """The agents' moves until the human is to move or the deal is over. Each agent's generator is re-seeded
        from the session seed and the move number first, so a session with the same moves plays the same."""
        moves = []
        game = self.game
        while not game.is_over and game.to_move != self.human:
            seat = game.to_move
            agent = self.agents[seat]
            agent.seed(derive_seed("move", self.settings.seed, len(self.finished), len(game.history)))
            infoset = ThreeInformationSet(game, seat)
            action = agent.act(infoset)
            if action not in infoset.legal_actions:
                raise RuntimeError(f"agent {self.who(seat)!r} chose the illegal action {action!r}")
            self._apply(int(action))
            moves.append(int(action))
        return moves

    run_agent = run_agents  # the two-player session's name, so the terminal loop drives either

    def _apply(self, action: int) -> None:
        game = self.game
        seat = game.to_move
        tricks_before = len(game.tricks)
        game.apply(action)  # refuses an illegal move before anything changes
        self._log_action(seat, action, tricks_before)
        if game.is_over:
            self.match.record_deal(game)
            self.finished.append(game_to_record(game))

    # ------------------------------------------------------------------ public events
    def _log(self, seat: int | None, kind: str, text: str) -> None:
        self.events.append({"player": None if seat is None else self.who(seat), "kind": kind, "text": text})

    def _log_action(self, seat: int, action: int, tricks_before: int) -> None:
        """Every action is seen by all three players (R21): a card played, a trump named, a marriage shown."""
        game = self.game
        who = self.who(seat)
        if action < 24:
            self._log(seat, "card", f"{who}: {CARD_NAMES[action]}")
        elif MARRY_BASE <= action < MARRY_BASE + 8:
            card = marry_card(action)
            value = 40 if card // 6 == game.trump_suit else 20
            self._log(seat, "marry", f"{who}: the marriage in {SUIT_NAMES[card // 6]} ({value}), leading "
                      f"{CARD_NAMES[card]}")
        elif NAME_TRUMP_BASE <= action < NAME_TRUMP_BASE + 4:
            self._log(seat, "trump", f"{who}: trump is {SUIT_NAMES[action - NAME_TRUMP_BASE]}")
        elif ANNOUNCE_BASE <= action < ANNOUNCE_BASE + 4:
            suit = action - ANNOUNCE_BASE
            self._log(seat, "marry", f"{who}: shows the marriage in {SUIT_NAMES[suit]} "
                      f"({40 if suit == game.trump_suit else 20}; it counts once a trick is won, R12)")
        elif action == PASS:  # a player may keep a marriage hidden and announce it with a lead later
            self._log(seat, "pass", f"{who}: passes (shows no more marriages before the first lead)")
        if len(game.tricks) > tricks_before:
            _leader, cards, winner = game.tricks[-1]
            self._log(winner, "trick", f"{self.who(winner)} take{'' if winner == self.human else 's'} the trick "
                      f"{' '.join(CARD_NAMES[card] for card in cards)} (+{sum(CARD_POINTS[card] for card in cards)})")
        if game.is_over:
            result = game.result
            if result.winner is None:
                points = ", ".join(f"{self.who(seat)} {result.points[seat]}" for seat in self.seats)
                self._log(None, "result", f"not scored: a tie at the top ({points}; R21)")
            else:
                points = ", ".join(f"{self.who(seat)} {result.points[seat]}" for seat in self.seats)
                self._log(result.winner, "result", f"{self.who(result.winner)} win"
                          f"{'' if result.winner == self.human else 's'} the deal and 1 game point ({points})")

    # ------------------------------------------------------------------ what the human sees
    def view(self) -> dict[str, Any]:
        """The table as the human sees it, from his :class:`ThreeInformationSet` only."""
        info = ThreeInformationSet(self.game, self.human)
        seats = self.seats
        result = None
        if info.result is not None:
            result = {"winner": None if info.result.winner is None else self.who(info.result.winner),
                      "reason": info.result.reason,
                      "points": {self.who(seat): info.result.points[seat] for seat in seats}}
        return {
            "deal": len(self.finished) + (0 if self.game.is_over else 1),
            "trump_suit": None if info.trump_suit < 0 else SUITS[info.trump_suit],
            "naming": info.naming,
            "hand": [CARD_NAMES[card] for card in sorted_hand(info.hand, max(info.trump_suit, 0))],
            "table": [{"player": self.who((info.leader + offset) % 3), "card": CARD_NAMES[card]}
                      for offset, card in enumerate(info.trick_cards)],
            "players": [{"player": self.who(seat), "points": info.points[seat], "tricks": info.tricks_won[seat],
                         "cards": info.hand_sizes[seat],
                         "known": [CARD_NAMES[card] for card in sorted_hand(info.known[seat], max(info.trump_suit, 0))]}
                        for seat in seats],
            "legal": [{"action": action, "name": three_player_action_name(action),
                       "label": three_move_label(action)} for action in info.legal_actions],
            "events": list(self.events),
            "result": result,
            "match": {"bummerl": self.settings.match, "target": self.rules.bummerl_target,
                      "scores": {self.who(seat): self.match.scores[seat] for seat in seats},
                      "over": self.session_over,
                      "winner": (self.who(self.match.winner) if self.settings.match and self.match.is_over
                                 else None)},
        }


__all__ = ["ThreePlaySession", "ThreeSessionSettings", "three_move_label"]
