"""Hand-made task records for the evaluation harness's tests (the journal's shape, eval/tournament.py): one game
entry, one Bummerl entry. Tests built from them know every expected figure."""

from __future__ import annotations


def game_entry(seat_a: int, winner: int | None, game_points: int, points=(0, 0), times_us=((), ()),
               dealer: int = 0) -> dict:
    """One game of a unit: A in ``seat_a``; ``winner`` is a seat (None: not scored, R15); no actions."""
    return {"seat_a": seat_a, "dealer": dealer, "winner": winner, "game_points": game_points, "reason": "declared",
            "points": list(points), "actions": [], "times_us": [list(times_us[0]), list(times_us[1])]}


def bummerl_entry(seat_a: int, winner: int, deals: list[dict], bummerl_points: int = 1) -> dict:
    """One Bummerl of a unit (R17): A in ``seat_a``, won by seat ``winner``, made of the game entries ``deals``."""
    return {"seat_a": seat_a, "winner": winner, "bummerl_points": bummerl_points, "deals": deals}
