"""Frames of a deal with all cards open, one per move, for the watch and replay pages (spectators of agents or of
a finished deal; never used for a human's game in progress). Two-player deals, and three-player deals (R21: three
hands, no talon, the trump named by forehand) replayed from their records."""

from __future__ import annotations

from typing import Any

from sixtysix_env import Game
from sixtysix_env.actions import ACTION_NAMES
from sixtysix_env.cards import CARD_NAMES, CARD_POINTS, SUIT_NAMES
from sixtysix_env.three import ThreePlayerGame

from ..session import move_label, sorted_hand


def _names(cards: Any) -> list[str]:
    return [CARD_NAMES[card] for card in cards]


def _tricks(game: Game | ThreePlayerGame) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The cards on the table (``{"leader", "cards"}`` in play order) and the last finished trick (``{"leader",
    "cards", "winner"}``), for either game."""
    if isinstance(game, ThreePlayerGame):
        table = ({"leader": game.leader, "cards": _names(game.trick_cards)}
                 if game.trick_cards and not game.is_over else None)
        last = game.tricks[-1] if game.tricks else None
        return table, None if last is None else {"leader": last[0], "cards": _names(last[1]), "winner": last[2]}
    table = (None if game.lead_card < 0 or game.is_over
             else {"leader": 1 - game.to_move, "cards": [CARD_NAMES[game.lead_card]]})
    if not game.tricks:
        return table, None
    leader, lead, follow, winner, _ = game.tricks[-1]
    return table, {"leader": leader, "cards": _names((lead, follow)), "winner": winner}


def frame(game: Game | ThreePlayerGame, text: str, names: list[str], number: int) -> dict[str, Any]:
    """The table after ``number`` moves: every hand, trump, talon size, the trick on the table, points."""
    seats = range(len(names))
    three = isinstance(game, ThreePlayerGame)
    result = None
    if game.result is not None:
        result = {"winner": game.result.winner, "game_points": game.result.game_points,
                  "reason": game.result.reason, "points": list(game.result.points)}
    table, last_trick = _tricks(game)
    trump_suit = None if game.trump_suit < 0 else "CDHS"[game.trump_suit]  # R21: unnamed before forehand names it
    return {
        "number": number,
        "text": text,
        "names": names,
        "hands": [[CARD_NAMES[c] for c in sorted_hand(game.hands[p], game.trump_suit)] for p in seats],
        "trump_suit": trump_suit,
        "trump_card": None if three else CARD_NAMES[game.trump_card],
        "bottom_card": None if three or game.bottom_card is None else CARD_NAMES[game.bottom_card],
        "talon_size": 0 if three else game.talon_size,  # R21 deals every card
        "closed_by": None if three else game.closed_by,
        "dealer": game.dealer,
        "table": table,
        "last_trick": last_trick,
        "points": [game.points(p) for p in seats],
        "tricks_won": list(game.tricks_won),
        "to_move": game.current_player,
        "result": result,
    }


def _move_text(replay: Game | ThreePlayerGame, action: int, names: list[str], player: int,
               tricks_before: int) -> str:
    """What ``player`` did with ``action`` (already applied to ``replay``), the trick it finished and the result."""
    three = isinstance(replay, ThreePlayerGame)
    move = replay.action_name(action) if three else move_label(action) if action >= 24 else ACTION_NAMES[action]
    text = f"{names[player]}: {move}"
    if len(replay.tricks) > tricks_before:
        last = replay.tricks[-1]
        winner, cards = (last[2], last[1]) if three else (last[3], last[1:3])
        text += f" — {names[winner]} {_verb(names[winner], 'win')} the trick (+{sum(CARD_POINTS[c] for c in cards)})"
    if replay.is_over and replay.result is not None:
        result = replay.result
        if result.winner is None:
            text += " — not scored (tie at the top, R21)" if three else " — not scored (R15)"
        else:
            text += (f" — {names[result.winner]} {_verb(names[result.winner], 'win')} {result.game_points} game point"
                     f"{'s' if result.game_points != 1 else ''} ({result.reason})")
    return text


def frames_of_game(game: Game | ThreePlayerGame, names: list[str], last_only: bool = False) -> list[dict[str, Any]]:
    """Replay ``game`` (which has its deck) from the deal and describe every move."""
    replay = Game.deal(game.rules, deck=list(game.deck), dealer=game.dealer)
    frames = []
    if not last_only or not game.history:
        if isinstance(replay, ThreePlayerGame):
            opening = f"{names[replay.dealer]} deals; {names[replay.forehand]} names trump (R21)"
        else:
            opening = (f"{names[replay.dealer]} deals; trump card {CARD_NAMES[replay.trump_card]} "
                       f"({SUIT_NAMES[replay.trump_suit]})")
        frames.append(frame(replay, opening, names, 0))
    for number, action in enumerate(game.history, start=1):
        player, tricks_before = replay.current_player, len(replay.tricks)
        replay.apply(action)
        if not last_only or number == len(game.history):
            frames.append(frame(replay, _move_text(replay, action, names, player, tricks_before), names, number))
    if game.is_over and not replay.is_over:  # ended by a forfeit outside the actions (R8 Renonce)
        frames.append(frame(game, f"forfeit: {game.result.reason}", names, len(game.history)))
    return frames


def _verb(name: str, verb: str) -> str:
    return verb if name == "you" else verb + "s"
