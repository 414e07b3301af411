"""After a deal: "could I have won?" — the exact value with all cards open, and what each of the human's moves cost.

Two different questions, answered separately:

* **All cards open** (:func:`open_value`): the deal's value for a player when both players see every card and the
  talon order and both play perfectly (a "double dummy" solve). Phase 2 (talon closed or exhausted, R8) is
  :mod:`agents.solver`; phase 1 (talon open, R7) is an alpha-beta minimax over the engine's own moves with a
  transposition table, probed with null windows (MTD(f)) since values are the small integers -3..3 (R16).
  :func:`open_analysis` runs it at every decision of the human: the best value he still had and the value of the move
  he made, so "could I have won?" and "where did it slip away?" have exact answers.
* **What the search thinks** (:func:`search_costs`): at each human decision, a search agent's action values computed
  from the human's own information set only (what he could know then) — the best value minus the value of his move.
"""

from __future__ import annotations

import time

from sixtysix_env import Game
from sixtysix_env.actions import ACTION_NAMES
from sixtysix_env.cards import CARD_POINTS
from sixtysix_env.game import FOLLOW

from agents.solver import solve_value_within

INFINITY = 4  # game points are -3..3 (R16)


class BudgetExceeded(Exception):
    """The open solve did not finish within its time budget."""


def _phase2_decision(game: Game) -> bool:
    return game.phase2 and game.stage in (0, 1)  # LEAD, FOLLOW with the talon closed or exhausted


def _key(game: Game) -> tuple:
    # Everything the rest of the deal depends on (the talon below stock_pos is fixed by the deck).
    return (game.hands[0], game.hands[1], game.stock_pos, game.bottom_card, game.closed_by,
            game.opponent_trickless_at_close, tuple(game.trick_points), tuple(game.marriage_points),
            tuple(game.tricks_won), game.stage, game.to_move, game.lead_card, game.turn_step, game.phase2)


class OpenSolver:
    """Exact minimax value of a deal with all cards open (see the module docstring), within a time budget shared
    by all calls (``seconds=None``: no limit). The transposition table is kept across calls on the same deal."""

    def __init__(self, player: int, seconds: float | None = 20.0):
        self.player = player
        self.seconds = seconds
        self.deadline: float | None = None
        self.table: dict[tuple, tuple[int, int, int]] = {}  # key -> bounds of ``player``'s value, best move
        self.nodes = 0

    def value(self, game: Game) -> int:
        """The exact value in game points for ``self.player`` (raises :class:`BudgetExceeded`)."""
        if self.deadline is None and self.seconds is not None:
            self.deadline = time.perf_counter() + self.seconds
        if game.is_over:
            return game.result.returns()[self.player]
        guess, lower, upper = 0, -INFINITY, INFINITY
        while lower < upper:  # MTD(f): null-window probes around the guess
            beta = guess + 1 if guess == lower else guess
            value = self._search(game.clone(), beta - 1, beta)
            if value < beta:
                upper = value
            else:
                lower = value
            guess = value
        return lower

    def action_values(self, game: Game) -> dict[int, int]:
        """Exact value for ``self.player`` of every legal action at ``game``."""
        values = {}
        for action in game.legal_actions():
            child = game.clone()
            child.apply(action)
            values[action] = self.value(child)
        return values

    def _search(self, game: Game, alpha: int, beta: int) -> int:
        """Fail-soft alpha-beta for the value to ``self.player``; ``game`` may be modified."""
        player = self.player
        if game.is_over:
            return game.result.returns()[player]
        if _phase2_decision(game):
            if game.to_move == player:
                return solve_value_within(game, alpha, beta)
            return -solve_value_within(game, -beta, -alpha)
        self.nodes += 1
        if self.deadline is not None and not self.nodes & 255 and time.perf_counter() > self.deadline:
            raise BudgetExceeded(f"the open solve needs more than {self.seconds:g} s")
        key = _key(game)
        lower, upper, best_move = self.table.get(key, (-INFINITY, INFINITY, -1))
        if lower >= beta:
            return lower
        if upper <= alpha:
            return upper
        alpha, beta = max(alpha, lower), min(beta, upper)
        maximizing = game.to_move == player
        best = -INFINITY if maximizing else INFINITY
        window_low, window_high = alpha, beta
        actions = _ordered(game)
        if best_move >= 0:  # the best move of an earlier probe first (MTD(f) searches each position several times)
            actions.remove(best_move)
            actions.insert(0, best_move)
        for action in actions:
            child = game.clone()
            child.apply(action)
            value = self._search(child, window_low, window_high)
            if maximizing:
                if value > best:
                    best, best_move = value, action
                    window_low = max(window_low, best)
            else:
                if value < best:
                    best, best_move = value, action
                    window_high = min(window_high, best)
            if window_low >= window_high:
                break
        if best <= alpha:
            self.table[key] = (lower, best, best_move)
        elif best >= beta:
            self.table[key] = (best, upper, best_move)
        else:
            self.table[key] = (best, best, best_move)
        return best


def _ordered(game: Game) -> list[int]:
    """Move ordering for earlier cutoffs. Leading: declaring, closing, exchanging and marriages first (they often
    decide a deal), then cards high to low. Following: the cheapest card that wins the trick first (R6), then the
    cards that lose it, cheapest first."""
    actions = game.legal_actions()
    if game.stage == FOLLOW:
        beaters = game.beaters[game.lead_card]
        trumps = game.trump_mask
        return sorted(actions, key=lambda card: (0, trumps >> card & 1, CARD_POINTS[card]) if beaters >> card & 1
                      else (1, trumps >> card & 1, CARD_POINTS[card]))
    return sorted(actions, key=lambda action: _ORDER[action])


_ORDER = [-(action % 6) for action in range(24)] + [-20] * 8 + [-30, -40, -50, 0, 0]  # marry, exchange, close, declare


def _positions(record: dict) -> tuple[Game, list[Game]]:
    """The finished game of a record and the position before each of its actions."""
    from sixtysix_env.record import record_to_game

    final = record_to_game(record)
    game = Game.deal(final.rules, deck=list(final.deck), dealer=final.dealer)
    positions = []
    for action in final.history:
        positions.append(game.clone())
        game.apply(action)
    return final, positions


def open_analysis(record: dict, human: int, decisions: list[int], seconds: float | None = 20.0) -> dict:
    """With all cards open: at each of ``human``'s decisions (indexes into the record's actions) the exact value
    he still had before his move and the value after it, and the deal's value at the start. Solved from the last
    decision backwards (late positions are cheap and fill the shared transposition table); where the shared time
    budget runs out the earlier entries stay ``None`` and ``solved`` is false."""
    final, positions = _positions(record)
    positions.append(final)
    solver = OpenSolver(human, seconds)
    moves = [{"index": index, "move": ACTION_NAMES[final.history[index]], "value_before": None, "value_after": None,
              "cost": None} for index in decisions]
    result: dict = {"start_value": None, "moves": moves, "solved": True, "seconds": seconds}
    try:
        for move in reversed(moves):
            move["value_after"] = solver.value(positions[move["index"] + 1])
            move["value_before"] = solver.value(positions[move["index"]])
            move["cost"] = move["value_before"] - move["value_after"]
        result["start_value"] = solver.value(positions[0])
    except BudgetExceeded:
        result["solved"] = False
    known = [move for move in moves if move["value_before"] is not None]
    result["could_have_won"] = (any(move["value_before"] > 0 for move in known)
                                or (result["start_value"] is not None and result["start_value"] > 0))
    result["slipped_at"] = next((move for move in known if move["value_before"] > 0 >= move["value_after"]), None)
    result["nodes"] = solver.nodes
    return result


def search_costs(record: dict, human: int, decisions: list[int], seconds_per_move: float = 0.2,
                 seed: int = 0) -> list[dict]:
    """At each human decision, PIMC's values from the human's own information set (what he could know then):
    the cost of his move is the best mean minus his move's mean, in game points."""
    from sixtysix_env import InformationSet

    from .session import hint_values

    final, positions = _positions(record)
    rows = []
    for index in decisions:
        action = final.history[index]
        position = positions[index]
        if len(position.legal_actions()) == 1:
            rows.append({"index": index, "move": ACTION_NAMES[action], "value": None, "best_value": None,
                         "cost": 0.0, "best_moves": [ACTION_NAMES[action]], "forced": True})
            continue
        values = hint_values(InformationSet(position, human), seconds_per_move, seed + index)
        by_action = {row["id"]: row["value"] for row in values}
        best = values[0]["value"]
        rows.append({"index": index, "move": ACTION_NAMES[action], "value": by_action[action], "best_value": best,
                     "cost": round(best - by_action[action], 3),
                     "best_moves": [row["name"] for row in values if row["value"] == best], "forced": False})
    return rows


def analyse_deal(record: dict, human: int, decisions: list[int], open_seconds: float | None = 20.0,
                 search_seconds: float = 0.2, seed: int = 0) -> dict:
    """"Could I have won?": the open solve and the search's cost of each of the human's moves, in one JSON-ready
    dictionary."""
    return {"open": open_analysis(record, human, decisions, open_seconds),
            "search": search_costs(record, human, decisions, search_seconds, seed),
            "result": record["result"], "human": human}
