"""The fixed ``Discrete(37)`` action layout (docs/actions.md).

=======  ==============  =========================================================================
ids      name            meaning
=======  ==============  =========================================================================
0..23    ``play XY``     play card XY (card id ``suit * 6 + rank``, see :mod:`sixtysix_env.cards`)
24..31   ``marry XY``    announce the marriage of XY's suit and lead XY (R11); id ``24 + 2*suit + (0 Queen, 1 King)``
32       ``exchange``    swap the trump nine (jack with 20 cards) for the trump card (R9)
33       ``close``       close the talon (R10)
34       ``declare``     declare "66" (R13); only offered without ``auto_declare`` or with ``allow_false_declaration``
35       ``draw``        ``close_draw_option`` only: the trick winner draws instead of closing before drawing (R10)
36       ``pass``        ``exchange_after_opponent_closes`` only: decline the exchange offered after a closing (R9)
=======  ==============  =========================================================================
"""

from __future__ import annotations

from .cards import CARD_NAMES, KING, NUM_CARDS, QUEEN, SUITS, integer_index, parse_card, shown

MARRY_BASE = 24
EXCHANGE = 32
CLOSE = 33
DECLARE = 34
DRAW = 35
PASS = 36
NUM_ACTIONS = 37


def marry_action(card: int) -> int:
    """The ``marry`` action that announces ``card``'s suit and leads ``card`` (a Queen or King, R11)."""
    if not 0 <= integer_index(card) < NUM_CARDS or card % 6 not in (QUEEN, KING):
        raise ValueError(f"marry_action needs a Queen or King (card id 0..23), got {card!r}")
    return MARRY_BASE + 2 * (card // 6) + (card % 6 == KING)


def marry_card(action: int) -> int:
    """The card led by a ``marry`` action (24..31)."""
    if not MARRY_BASE <= integer_index(action) < MARRY_BASE + 2 * len(SUITS):
        raise ValueError(f"marry_card needs a marry action ({MARRY_BASE}..{MARRY_BASE + 2 * len(SUITS) - 1}), "
                         f"got {action!r}")
    offset = action - MARRY_BASE
    return (offset // 2) * 6 + (KING if offset % 2 else QUEEN)


ACTION_NAMES = tuple(
    [f"play {CARD_NAMES[c]}" for c in range(NUM_CARDS)]
    + [f"marry {CARD_NAMES[marry_card(a)]}" for a in range(MARRY_BASE, EXCHANGE)]
    + ["exchange", "close", "declare", "draw", "pass"]
)
_ACTION_BY_NAME = {name: action for action, name in enumerate(ACTION_NAMES)}


def action_name(action: int) -> str:
    """The name of action id ``action`` (a Python or numpy integer, not a bool), e.g. ``'play AH'``."""
    index = integer_index(action)
    if not 0 <= index < NUM_ACTIONS:
        raise ValueError(f"malformed action {action!r}: expected an integer in 0..{NUM_ACTIONS - 1}")
    return ACTION_NAMES[index]


def parse_action(text: str) -> int:
    """``'play AH'``, ``'marry KH'``, ``'exchange'``, ... -> action id; anything else raises ``ValueError``."""
    if not isinstance(text, str):
        raise ValueError(f"malformed action {shown(text)}: expected text such as 'play AH' or 'close'")
    words = text.split()
    if len(words) == 2 and words[0].lower() in ("play", "marry"):
        card = parse_card(words[1])
        if words[0].lower() == "play":
            return card
        if card % 6 not in (QUEEN, KING):
            raise ValueError(f"malformed action {shown(text)}: a marriage is announced with its Queen or King")
        return marry_action(card)
    action = _ACTION_BY_NAME.get(" ".join(words).lower())
    if action is None:
        raise ValueError(
            f"malformed action {shown(text)}: expected 'play XY', 'marry XY' (XY a card such as {CARD_NAMES[17]}), "
            "'exchange', 'close', 'declare', 'draw' or 'pass'"
        )
    return action


__all__ = [
    "ACTION_NAMES", "CLOSE", "DECLARE", "DRAW", "EXCHANGE", "MARRY_BASE", "NUM_ACTIONS", "PASS", "SUITS",
    "action_name", "marry_action", "marry_card", "parse_action",
]
