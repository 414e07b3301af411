"""What a player must not see, derived from the real game independently of the code that builds responses
(RULES "What a player may know"): the opponent's cards that were never shown, and the face-down talon; and the other
layouts of a deal its player cannot tell from the real one (the no-leak tests, two and three players)."""

from __future__ import annotations

import json
import random
import re

from sixtysix_env import Game
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


def consistent_layout(game, seen: set[int], rng: random.Random):
    """A replay of ``game`` on a deck whose cards outside ``seen`` (what a viewer has seen, derived by the caller from
    the deck and the action log alone) are redistributed at random among their positions; ``None`` when the drawn
    layout is the real one or contradicts the recorded actions (they do not replay). Two or three players."""
    positions = [index for index, card in enumerate(game.deck) if card not in seen]
    cards = [game.deck[index] for index in positions]
    rng.shuffle(cards)
    deck = list(game.deck)
    for index, card in zip(positions, cards):
        deck[index] = card
    if deck == list(game.deck):
        return None
    twin = Game.deal(game.rules, deck=deck, dealer=game.dealer)
    try:
        for action in game.history:
            twin.apply(action)
    except ValueError:
        return None
    return twin

