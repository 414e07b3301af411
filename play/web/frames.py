"""Frames of a deal with all cards open, one per move, for the watch and replay pages (spectators of agents or of
a finished deal; never used for a human's game in progress)."""

from __future__ import annotations

from typing import Any

from sixtysix_env import Game
from sixtysix_env.actions import ACTION_NAMES
from sixtysix_env.cards import CARD_NAMES, CARD_POINTS, SUIT_NAMES
from sixtysix_env.game import FOLLOW

from ..session import move_label, sorted_hand


def frame(game: Game, text: str, names: list[str], number: int) -> dict[str, Any]:
    """The table after ``number`` moves: both hands, trump, talon size, the trick on the table, points."""
    last_trick = None
    if game.tricks:
        leader, lead, follow, winner, _ = game.tricks[-1]
        last_trick = {"leader": leader, "lead": CARD_NAMES[lead], "follow": CARD_NAMES[follow], "winner": winner}
    result = None
    if game.result is not None:
        result = {"winner": game.result.winner, "game_points": game.result.game_points,
                  "reason": game.result.reason, "points": list(game.result.points)}
    return {
        "number": number,
        "text": text,
        "names": names,
        "hands": [[CARD_NAMES[c] for c in sorted_hand(game.hands[p], game.trump_suit)] for p in (0, 1)],
        "trump_suit": "CDHS"[game.trump_suit],
        "trump_card": CARD_NAMES[game.trump_card],
        "bottom_card": None if game.bottom_card is None else CARD_NAMES[game.bottom_card],
        "talon_size": game.talon_size,
        "closed_by": game.closed_by,
        "dealer": game.dealer,
        "table": None if game.lead_card < 0 or game.is_over else {"card": CARD_NAMES[game.lead_card],
                                                                     "leader": 1 - game.to_move},
        "last_trick": last_trick,
        "points": [game.points(0), game.points(1)],
        "tricks_won": list(game.tricks_won),
        "to_move": game.current_player,
        "result": result,
    }


def frames_of_game(game: Game, names: list[str], last_only: bool = False) -> list[dict[str, Any]]:
    """Replay ``game`` (which has its deck) from the deal and describe every move."""
    replay = Game.deal(game.rules, deck=list(game.deck), dealer=game.dealer)
    frames = []
    if not last_only or not game.history:
        frames.append(frame(replay, f"{names[replay.dealer]} deals; trump card {CARD_NAMES[replay.trump_card]} "
                                    f"({SUIT_NAMES[replay.trump_suit]})", names, 0))
    for number, action in enumerate(game.history, start=1):
        player, stage = replay.to_move, replay.stage
        replay.apply(action)
        text = f"{names[player]}: {move_label(action) if action >= 24 else ACTION_NAMES[action]}"
        if stage == FOLLOW:
            leader, lead, follow, winner, _ = replay.tricks[-1]
            text += f" — {names[winner]} {_verb(names[winner], 'win')} the trick (+{CARD_POINTS[lead] + CARD_POINTS[follow]})"
        if replay.is_over and replay.result is not None:
            result = replay.result
            text += (" — not scored (R15)" if result.winner is None else
                     f" — {names[result.winner]} {_verb(names[result.winner], 'win')} {result.game_points} game point"
                     f"{'s' if result.game_points != 1 else ''} ({result.reason})")
        if not last_only or number == len(game.history):
            frames.append(frame(replay, text, names, number))
    if game.is_over and not replay.is_over:  # ended by a forfeit outside the actions (R8 Renonce)
        frames.append(frame(game, f"forfeit: {game.result.reason}", names, len(game.history)))
    return frames


def _verb(name: str, verb: str) -> str:
    return verb if name == "you" else verb + "s"
