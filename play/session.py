"""A human against an agent: one deal or a Bummerl (R17), played server-side, shown only as the human may see it.

:class:`PlaySession` owns the real :class:`~sixtysix_env.game.Game` and the :class:`~sixtysix_env.match.Match`. The
human's moves are checked by the engine (an illegal one raises ``ValueError`` and changes nothing); the agent moves
from its own :class:`~sixtysix_env.infoset.InformationSet`. What leaves the session for display is :meth:`view`, built
from the human's information set alone (RULES "What a player may know"): his hand, the public cards and events, the
points a careful player counts (R12) — never the opponent's unseen cards or the talon order. A finished deal's full
record (:meth:`deal_record`) is shown only once the deal is over.

Everything random is derived from the session's seed (each deal's deck, the agent's generator before every move),
so :meth:`to_state` / :meth:`from_state` rebuild a session exactly by replaying its moves: the web server persists
this state in SQLite after every move and a restart loses nothing.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from agents.registry import make_agent
from eval.deals import derive_seed
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import (
    ACTION_NAMES, CLOSE, DECLARE, DRAW, EXCHANGE, MARRY_BASE, PASS, marry_card, parse_action,
)
from sixtysix_env.cards import CARD_NAMES, CARD_POINTS, SUIT_NAMES, cards_of, shown
from sixtysix_env.game import FOLLOW, STAGE_NAMES
from sixtysix_env.match import Match
from sixtysix_env.record import game_to_record, record_to_game

STATE_VERSION = 1
SUIT_ORDER_FOR_DISPLAY = (3, 2, 0, 1)  # spades, hearts, clubs, diamonds: alternating colours in a fanned hand


def sorted_hand(mask: int, trump_suit: int) -> list[int]:
    """Cards grouped by suit (trumps first, then alternating colours), high to low within a suit."""
    order = [trump_suit] + [suit for suit in SUIT_ORDER_FOR_DISPLAY if suit != trump_suit]
    return sorted(cards_of(mask), key=lambda card: (order.index(card // 6), -(card % 6)))


def move_label(action: int) -> str:
    """A short label for a move button: ``AH``, ``marry KH``, ``close the talon``..."""
    if action < 24:
        return CARD_NAMES[action]
    if action < EXCHANGE:
        return f"marry {CARD_NAMES[marry_card(action)]}"
    return {EXCHANGE: "exchange the trump card", CLOSE: "close the talon", DECLARE: "declare 66",
            DRAW: "draw", PASS: "do not exchange"}[action]


SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}  # how the terminal shows the suits (R1 letters)
_LETTER_OF_SYMBOL = {symbol: letter for letter, symbol in SUIT_SYMBOLS.items()}


def _typed_word(word: str) -> str:
    """A card as shown may be typed back: ``10♥`` -> ``TH`` (a ten shown as 10 is named T, R1), ``Q♠`` -> ``QS``."""
    word = "".join(_LETTER_OF_SYMBOL.get(character, character) for character in word)
    return "T" + word[2:] if word.startswith("10") and len(word) == 3 else word


def parse_typed_move(text: str, legal: list[int], parse, name_of) -> int:
    """The legal move ``text`` names: its number in ``legal`` (1-based), a bare card (``QH``, or as shown, ``10♥``:
    a ten is shown as 10 and named T, R1), ``marry H`` (the King of that suit led, the Queen shown either way) or a
    full action name that ``parse`` reads (two or three players); ``ValueError`` naming what is wrong, in the words
    typed."""
    if not legal:
        raise ValueError("it is not your turn")
    words = text.strip().split()
    if not words:
        raise ValueError("empty move")
    if len(words) == 1 and re.fullmatch(r"-?[0-9]+", words[0]):  # ASCII digits: int() takes others too
        number = int(words[0])
        if not 1 <= number <= len(legal):
            raise ValueError(f"no move number {number}: choose 1 to {len(legal)}")
        return legal[number - 1]
    typed, words = words, [_typed_word(word) for word in words]
    rewritten = words != typed
    head = words[0].lower()
    if len(words) == 1 and len(words[0]) == 2:
        words = ["play", words[0]]  # a bare card name
    elif len(words) == 2 and head == "marry" and len(words[1]) == 1:
        suit = words[1].upper()
        options = [a for a in legal if MARRY_BASE <= a < EXCHANGE and CARD_NAMES[marry_card(a)][1] == suit]
        if not options:
            raise ValueError(f"no marriage in {typed[1]!r} is legal now")
        return options[-1]  # lead the King (the Queen is shown either way)
    try:
        action = parse(" ".join(words))
    except ValueError as error:
        if not rewritten:
            raise
        # The parser names the rewritten word ('TX' for 10X): name what was typed, with the parser's reason.
        reason = str(error).split(": ", 1)[-1]
        raise ValueError(f"malformed move {shown(text.strip())}: {reason}") from None
    if action not in legal:
        names = ", ".join(name_of(a) for a in legal)
        raise ValueError(f"{name_of(action)!r} is not legal now; legal: {names}")
    return action


@dataclass
class SessionSettings:
    """What a session is: who plays, under which rules, how long."""

    opponent: str = "heuristic"
    """Agent spec of the opponent (agents/registry.py), e.g. ``heuristic``, ``pimc``, ``random``."""
    rules: Rules = Rules()
    """Rule switches (a preset: ``Rules.preset('paderborn')``)."""
    match: bool = True
    """A whole Bummerl (R17: to ``rules.bummerl_target`` game points) rather than one deal."""
    seed: int = 0
    """Derives every deck, the first dealer (R3) and the agent's generator: a seeded session is reproducible."""
    human: int = 0
    """The human's seat (0 or 1); the dealer alternates (R3), so the seat does not favour anyone."""
    hint_seconds: float = 0.5
    """Time a hint's search may take (PIMC over sampled worlds of the human's information set)."""

    def to_dict(self) -> dict[str, Any]:
        return {"opponent": self.opponent, "rules": self.rules.to_dict(), "match": self.match, "seed": self.seed,
                "human": self.human, "hint_seconds": self.hint_seconds}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "SessionSettings":
        return cls(opponent=values["opponent"], rules=Rules.from_dict(values["rules"]), match=values["match"],
                   seed=values["seed"], human=values["human"], hint_seconds=values["hint_seconds"])


class DealByDeal:
    """What both sessions (two and three players) share: the next deal of a Bummerl is dealt only once the current
    one is over and the Bummerl goes on. The session provides ``game``, ``session_over`` and ``_new_game``."""

    def next_deal(self) -> None:
        """Deal the next game of the Bummerl (after the current one is over)."""
        if not self.game.is_over:
            raise ValueError("the current deal is still being played")
        if self.session_over:
            raise ValueError("the Bummerl is over; start a new game")
        self.game = self._new_game()


class PlaySession(DealByDeal):
    """One human-vs-agent deal or Bummerl. Players are seats 0 and 1; ``settings.human`` is the human's seat."""

    def __init__(self, settings: SessionSettings):
        if settings.human not in (0, 1) or isinstance(settings.human, bool):
            raise ValueError(f"human seat must be 0 or 1, got {settings.human!r}")
        if isinstance(settings.seed, bool) or not isinstance(settings.seed, int):
            raise ValueError(f"seed must be an integer, got {settings.seed!r}")
        self.settings = settings
        self.human = settings.human
        self.agent = make_agent(settings.opponent, seed=derive_seed("agent", settings.seed))  # ValueError if bad spec
        first_dealer = random.Random(derive_seed("first dealer", settings.seed)).randrange(2)  # R3: drawn
        self.match = Match(settings.rules, first_dealer=first_dealer)
        self.finished: list[dict[str, Any]] = []  # records of the finished deals, in order
        self.human_decisions: list[list[int]] = []  # per deal: indexes into history of the human's moves
        self.events: list[dict[str, Any]] = []  # public events of the current deal (see _log)
        self.game: Game = self._new_game()

    # ------------------------------------------------------------------ deals
    def _new_game(self) -> Game:
        deal_number = len(self.match.deals)
        game = self.match.new_deal(seed=derive_seed("deal", self.settings.seed, deal_number))
        self.agent.start_deal(1 - self.human, self.settings.rules)
        self.human_decisions.append([])
        self.events = []
        self._log_start(game)
        return game

    @property
    def deal_number(self) -> int:
        """1-based number of the current deal."""
        return len(self.finished) + (0 if self.game.is_over else 1)

    @property
    def session_over(self) -> bool:
        """The Bummerl (or the single deal) is finished and no next deal will be dealt."""
        if not self.game.is_over:
            return False
        return not self.settings.match or bool(self.match.bummerl_history)

    # ------------------------------------------------------------------ moves
    @property
    def human_to_move(self) -> bool:
        return not self.game.is_over and self.game.to_move == self.human

    def legal_moves(self) -> list[int]:
        return self.game.legal_actions() if self.human_to_move else []

    def parse_move(self, text: str) -> int:
        """A move typed by name (``play QH``, ``QH``, ``marry H``, ``marry KH``, ``close``...) or by its number in the
        list of legal moves (1-based). Raises ``ValueError`` naming what is wrong."""
        return parse_typed_move(text, self.legal_moves(), parse_action, lambda action: ACTION_NAMES[action])

    def play(self, action: int) -> None:
        """Apply the human's move (checked by the engine; an illegal move raises ``ValueError``, nothing changes)."""
        if isinstance(action, bool) or not isinstance(action, int):
            raise ValueError(f"malformed move {action!r}: expected an action id (see docs/actions.md)")
        if self.game.is_over:
            raise ValueError("the deal is over")
        if self.game.to_move != self.human:
            raise ValueError("it is not your turn")
        if action not in self.game.legal_actions():
            legal = ", ".join(ACTION_NAMES[a] for a in self.game.legal_actions())
            shown = ACTION_NAMES[action] if 0 <= action < len(ACTION_NAMES) else f"action {action}"
            raise ValueError(f"illegal move {shown!r}; legal: {legal}")
        self.human_decisions[-1].append(len(self.game.history))
        self._apply(action)

    def agent_move(self) -> int:
        """Let the agent make one move (it must be its turn); returns the action. The agent's generator is re-seeded
        from the session seed and the move number, so a rebuilt session moves the same way."""
        game = self.game
        if game.is_over or game.to_move == self.human:
            raise ValueError("it is not the agent's turn")
        self.agent.seed(derive_seed("move", self.settings.seed, len(self.finished), len(game.history)))
        infoset = InformationSet(game, game.to_move, self.bummerl_score())
        action = self.agent.act(infoset)
        if action not in infoset.legal_actions:
            raise RuntimeError(f"agent {self.settings.opponent!r} chose the illegal action {action!r}")
        self._apply(int(action))
        return int(action)

    def bummerl_score(self) -> tuple[int, int] | None:
        """The game points of players 0 and 1 before this deal while a Bummerl is being played (R17), which both
        players know; ``None`` outside one."""
        if not self.settings.match or self.match.bummerl_history:
            return None
        return self.match.bummerl_score

    def run_agent(self) -> list[int]:
        """Agent moves until the human is to move or the deal is over."""
        moves = []
        while not self.game.is_over and self.game.to_move != self.human:
            moves.append(self.agent_move())
        return moves

    def _apply(self, action: int) -> None:
        game = self.game
        player = game.to_move
        stage = game.stage
        before = game.hands[self.human]
        bottom_before = game.bottom_card
        game.apply(action)
        self._log_action(player, stage, action, before, bottom_before)
        if game.is_over:
            self.match.record_deal(game)
            self.finished.append(game_to_record(game))

    # ------------------------------------------------------------------ public events
    def _who(self, player: int) -> str:
        return "you" if player == self.human else "opponent"

    def _log(self, player: int | None, kind: str, text: str, **cards: Any) -> None:
        self.events.append({"player": None if player is None else self._who(player), "kind": kind, "text": text,
                            **cards})

    def _log_start(self, game: Game) -> None:
        dealer = "you deal" if game.dealer == self.human else "the opponent deals"
        self._log(None, "deal", f"deal {len(self.finished) + 1}: {dealer}; trump card "
                  f"{CARD_NAMES[game.trump_card]} ({SUIT_NAMES[game.trump_suit]})", card=CARD_NAMES[game.trump_card])

    def _log_action(self, player: int, stage: int, action: int, hand_before: int, bottom_before: int | None) -> None:
        """Describe a move using public facts only (every action is seen by both players) plus the human's own
        draws; the opponent's draw is shown only when it is the face-up bottom card (R7)."""
        game = self.game
        who = self._who(player)
        if stage == FOLLOW:
            leader, lead, follow, winner, _ = game.tricks[-1]
            gained = CARD_POINTS[lead] + CARD_POINTS[follow]
            self._log(player, "follow", f"{who} play{'s' if who == 'opponent' else ''} {CARD_NAMES[follow]}",
                      card=CARD_NAMES[follow])
            self._log(winner, "trick", f"{self._who(winner)} win{'s' if winner != self.human else ''} the trick "
                      f"{CARD_NAMES[lead]} {CARD_NAMES[follow]} (+{gained})", lead=CARD_NAMES[lead],
                      follow=CARD_NAMES[follow])
        elif action < 24:
            self._log(player, "lead", f"{who} lead{'s' if who == 'opponent' else ''} {CARD_NAMES[action]}",
                      card=CARD_NAMES[action])
        elif action < EXCHANGE:
            card = marry_card(action)
            value = 40 if card // 6 == game.trump_suit else 20
            text = f"{who} announce{'s' if who == 'opponent' else ''} the marriage in {SUIT_NAMES[card // 6]} ({value})"
            self._log(player, "marry", text + ("" if game.is_over else f" and lead{'s' if who == 'opponent' else ''} "
                      f"{CARD_NAMES[card]}"), card=CARD_NAMES[card])
        elif action == EXCHANGE:
            exchange = game.exchanges[-1]
            self._log(player, "exchange", f"{who} exchange{'s' if who == 'opponent' else ''} "
                      f"{CARD_NAMES[exchange.laid_card]} for the trump card {CARD_NAMES[exchange.taken_card]}",
                      card=CARD_NAMES[exchange.taken_card])
        elif action == CLOSE:
            self._log(player, "close", f"{who} close{'s' if who == 'opponent' else ''} the talon")
        elif action == DECLARE:
            self._log(player, "declare", f"{who} declare{'s' if who == 'opponent' else ''} 66")
        elif action == PASS:
            self._log(player, "pass", f"{who} do{'es' if who == 'opponent' else ''} not exchange")
        drawn = game.hands[self.human] & ~hand_before & ~(1 << action if action < 24 else 0)
        if drawn and action != EXCHANGE:
            self._log(self.human, "draw", f"you draw {' '.join(CARD_NAMES[c] for c in cards_of(drawn))}",
                      cards=[CARD_NAMES[c] for c in cards_of(drawn)])
        if bottom_before is not None and game.bottom_card is None and game.bottom_taker is not None:
            self._log(game.bottom_taker, "bottom", f"{self._who(game.bottom_taker)} take"
                      f"{'s' if game.bottom_taker != self.human else ''} the face-up card {CARD_NAMES[bottom_before]}; "
                      "the talon is exhausted", card=CARD_NAMES[bottom_before])
        if game.is_over:
            result = game.result
            if result.winner is None:
                self._log(None, "result", f"not scored: {result.points[0]}:{result.points[1]} (R15)")
            else:
                self._log(result.winner, "result", f"{self._who(result.winner)} win"
                          f"{'s' if result.winner != self.human else ''} {result.game_points} game point"
                          f"{'s' if result.game_points != 1 else ''} ({result.reason})")

    # ------------------------------------------------------------------ what the human sees
    def view(self) -> dict[str, Any]:
        """The table as the human sees it: built from his :class:`InformationSet` (and the match score) only.
        The full deal appears only in ``finished`` records, after a deal is over."""
        game = self.game
        info = InformationSet(game, self.human)
        human, opponent = self.human, 1 - self.human
        last_trick = None
        if info.tricks:
            trick = info.tricks[-1]
            last_trick = {"leader": self._who(trick.leader), "lead": CARD_NAMES[trick.lead_card],
                          "follow": CARD_NAMES[trick.follow_card], "winner": self._who(trick.winner)}
        table = None
        if info.lead_card >= 0 and not info.is_over:  # a lead waiting for the reply of the player to move
            table = {"card": CARD_NAMES[info.lead_card], "leader": self._who(1 - info.to_move)}
        won = [[], []]
        for trick in info.tricks:  # cards taken in tricks are seen by both players
            won[trick.winner] += [CARD_NAMES[trick.lead_card], CARD_NAMES[trick.follow_card]]
        legal = info.legal_actions if info.to_move == human and not info.is_over else []
        result = None
        if info.is_over:
            result = {"winner": None if info.result.winner is None else self._who(info.result.winner),
                      "game_points": info.result.game_points, "reason": info.result.reason,
                      "points": {"you": info.result.points[human], "opponent": info.result.points[opponent]}}
        match = self.match
        return {
            "deal": self.deal_number,
            "move_number": len(self.game.history),  # moves made in this deal: a client names the view it moves from
            "opponent": self.settings.opponent,
            "rules": self.settings.rules.preset_name or "custom",
            "trump_suit": "CDHS"[info.trump_suit],
            "trump_card": CARD_NAMES[info.trump_card],
            "bottom_card": None if info.bottom_card is None else CARD_NAMES[info.bottom_card],
            "talon_size": info.talon_size,
            "closed_by": None if info.closed_by is None else self._who(info.closed_by),
            "dealer": self._who(info.dealer),
            "hand": [CARD_NAMES[c] for c in sorted_hand(info.hand, info.trump_suit)],
            "opponent_hand_size": info.opponent_hand_size,
            "opponent_known": [CARD_NAMES[c] for c in cards_of(info.opponent_known)],
            "to_move": None if info.is_over else self._who(info.to_move),
            "stage": STAGE_NAMES[info.stage],
            "legal": [{"id": a, "name": ACTION_NAMES[a], "label": move_label(a)} for a in legal],
            "table": table,
            "last_trick": last_trick,
            "points": {"you": info.points[human], "opponent": info.points[opponent]},
            "tricks_won": {"you": info.tricks_won[human], "opponent": info.tricks_won[opponent]},
            "won_cards": {"you": won[human], "opponent": won[opponent]},
            "events": list(self.events),
            "result": result,
            "match": {
                "bummerl": self.settings.match,
                "target": self.settings.rules.bummerl_target,
                "scores": {"you": match.scores[human], "opponent": match.scores[opponent]}
                if not match.bummerl_history else
                {"you": match.bummerl_history[-1].scores[human], "opponent": match.bummerl_history[-1].scores[opponent]},
                "deals": [self._deal_summary(record) for record in self.finished],
                "over": self.session_over,
                "winner": self._bummerl_winner(),
                # R17: a Bummerl lost with no game point counts double ("Schneider"); None until a Bummerl ends
                "schneider": match.bummerl_history[-1].marks == 2 if match.bummerl_history else None,
            },
        }

    def _deal_summary(self, record: dict[str, Any]) -> dict[str, Any]:
        result = record["result"]
        winner = result["winner"]
        return {"winner": None if winner is None else self._who(winner), "game_points": result["game_points"],
                "reason": result["reason"], "points": {"you": result["points"][self.human],
                                                        "opponent": result["points"][1 - self.human]}}

    def _bummerl_winner(self) -> str | None:
        if not self.match.bummerl_history:
            if not self.settings.match and self.game.is_over and self.game.result.winner is not None:
                return self._who(self.game.result.winner)
            return None
        return self._who(self.match.bummerl_history[-1].winner)

    # ------------------------------------------------------------------ hints
    def hint(self, seconds: float | None = None) -> list[dict[str, Any]]:
        """The search's value of each legal move, from the human's information set only (never the real deal):
        PIMC (agents/pimc.py) averages each move's value over worlds sampled consistent with what he knows."""
        if not self.human_to_move:
            raise ValueError("it is not your turn")
        return hint_values(InformationSet(self.game, self.human), self.settings.hint_seconds if seconds is None
                           else seconds, derive_seed("hint", self.settings.seed, len(self.finished),
                                                     len(self.game.history)))

    # ------------------------------------------------------------------ records and persistence
    def deal_record(self, number: int) -> dict[str, Any]:
        """The JSON record (sixtysix_env/record.py) of finished deal ``number`` (1-based)."""
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(self.finished):
            raise ValueError(f"no finished deal {number!r}: {len(self.finished)} deal(s) finished")
        return self.finished[number - 1]

    def deal_decisions(self, number: int) -> list[int]:
        """Indexes into deal ``number``'s action list of the human's moves."""
        self.deal_record(number)
        return list(self.human_decisions[number - 1])

    def to_state(self) -> dict[str, Any]:
        """Everything needed to rebuild the session (JSON-ready): settings, finished deals, the current moves."""
        return {"version": STATE_VERSION, "settings": self.settings.to_dict(), "finished": self.finished,
                "current": [ACTION_NAMES[a] for a in self.game.history] if not self.game.is_over else None,
                "human_decisions": self.human_decisions}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "PlaySession":
        """Rebuild a session from :meth:`to_state` by replaying every move through the engine."""
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise ValueError("unknown session state version")
        session = cls(SessionSettings.from_dict(state["settings"]))
        decisions = state["human_decisions"]
        for number, record in enumerate(state["finished"]):
            if number:
                session.next_deal()
            session._replay_actions(record_to_game(record).history, decisions[number])
        if state["current"] is not None:
            if state["finished"]:
                session.next_deal()
            session._replay_actions([parse_action(text) for text in state["current"]], decisions[len(session.finished)])
        return session

    def _replay_actions(self, actions: list[int], human_indexes: list[int]) -> None:
        for index, action in enumerate(actions):
            if index in human_indexes:
                self.play(action)
            else:
                self._apply(action)


_search_compiled = False


def compile_search_once() -> None:
    """Compile the search's kernels (or load them from numba's cache) once per process, before a hint's clock starts:
    the first hint after an install spent its whole budget compiling and rated every move on one sampled world."""
    global _search_compiled
    if not _search_compiled:
        from sixtysix_env.core.__main__ import warm_up_search

        warm_up_search()
        _search_compiled = True


def hint_values(infoset: InformationSet, seconds: float, seed: int) -> list[dict[str, Any]]:
    """PIMC's mean game points of every legal move at ``infoset``, best first. Takes an information set, so it
    cannot see the hidden cards (its template game has them erased)."""
    from agents.pimc import PimcAgent

    if not isinstance(infoset, InformationSet):
        raise ValueError("hints are computed from an InformationSet only")
    compile_search_once()
    agent = PimcAgent(seed=seed, seconds=seconds, prune=None)
    values = agent.action_values(infoset)
    ranked = sorted(values.items(), key=lambda item: -item[1])
    return [{"id": action, "name": ACTION_NAMES[action], "label": move_label(action), "value": round(value, 3),
             "worlds": len(agent.last_scores[action])} for action, value in ranked]


def decisions_of(record: dict[str, Any], player: int) -> list[int]:
    """Indexes into a finished deal's action list of ``player``'s moves, read from its record by replaying it: the
    same as :meth:`PlaySession.deal_decisions` for the human, since every move of his is one he chose."""
    played = record_to_game(record)
    game = Game.deal(played.rules, deck=played.deck, dealer=played.dealer)
    indexes = []
    for index, action in enumerate(played.history):
        if game.to_move == player:
            indexes.append(index)
        game.apply(action)
    return indexes


__all__ = [
    "DealByDeal", "PlaySession", "SessionSettings", "decisions_of", "hint_values", "move_label", "parse_typed_move",
    "sorted_hand",
]
