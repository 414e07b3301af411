"""What the human must not see, derived from the real game independently of the code that builds responses
(RULES "What a player may know"): the opponent's cards that were never shown, and the face-down talon."""

from __future__ import annotations

import json
import re

from sixtysix_env.cards import CARD_NAMES


def hidden_cards(game, human: int) -> set[str]:
    """Names of the cards in the opponent's hand that the human has not seen (a marriage partner shown with an
    announcement, R11; the trump card taken by an exchange, R9; the face-up bottom card taken last, R7 are seen),
    plus the face-down talon cards."""
    if game.is_over:
        return set()
    opponent = 1 - human
    shown = set()
    for marriage in game.marriages:
        if marriage.player == opponent:
            shown |= {marriage.led_card, marriage.led_card ^ 1}
    for exchange in game.exchanges:
        if exchange.player == opponent:
            shown.add(exchange.taken_card)
    if game.bottom_taker == opponent:
        shown.add(game.bottom_taken_card)
    in_hand = {card for card in range(24) if game.hands[opponent] >> card & 1}
    face_down = set(game.stock[game.stock_pos:])
    return {CARD_NAMES[card] for card in (in_hand - shown) | face_down}


CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])[9JQKTA][CDHS](?![0-9A-Za-z])")


def card_tokens(payload) -> set[str]:
    """Every card name anywhere in a JSON-ready value (keys and strings)."""
    return set(CARD_TOKEN.findall(payload if isinstance(payload, str) else json.dumps(payload)))


def talon_order_shown(payload, game) -> bool:
    """Whether the face-down talon's order appears as a run of card names (two or more in a row)."""
    face_down = [CARD_NAMES[card] for card in game.stock[game.stock_pos:]]
    if len(face_down) < 2:
        return False
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return any(f'"{a}", "{b}"' in text or f"{a} {b}" in text for a, b in zip(face_down, face_down[1:]))
