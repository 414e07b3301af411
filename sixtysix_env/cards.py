"""Cards of Sixty-six (RULES R1, R2) and the bit-mask tables the engine runs on.

A card is an integer ``suit * 6 + rank`` with suits ``C D H S`` (0..3) and ranks ordered by trick strength,
lowest first: ``9 J Q K T A`` (0..5). So within a suit a higher id always beats a lower one (R6), and a set of
cards is a 24-bit mask. Text uses the R1 notation: rank then suit, e.g. ``AH``, ``TS``, ``9C``.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from .integers import as_integer

SUITS = "CDHS"
RANKS = "9JQKTA"  # lowest to highest trick strength (R1)
SUIT_NAMES = ("Clubs", "Diamonds", "Hearts", "Spades")
RANK_POINTS = (0, 2, 3, 4, 10, 11)  # card points ("Augen") by rank index (R1)

NUM_CARDS = 24
NINE, JACK, QUEEN, KING, TEN, ACE = range(6)

CARD_NAMES = tuple(RANKS[card % 6] + SUITS[card // 6] for card in range(NUM_CARDS))
CARD_POINTS = tuple(RANK_POINTS[card % 6] for card in range(NUM_CARDS))
_CARD_BY_NAME = {name: card for card, name in enumerate(CARD_NAMES)}

SUIT_MASKS = tuple(0x3F << (6 * suit) for suit in range(4))
FULL_DECK_MASK = (1 << NUM_CARDS) - 1
NINES_MASK = sum(1 << (suit * 6 + NINE) for suit in range(4))
QUEENS_MASK = sum(1 << (suit * 6 + QUEEN) for suit in range(4))
KINGS_MASK = sum(1 << (suit * 6 + KING) for suit in range(4))
# HIGHER_IN_SUIT[c]: cards of c's suit that beat c (R6).
HIGHER_IN_SUIT = tuple(SUIT_MASKS[c // 6] & ~((2 << c) - 1) for c in range(NUM_CARDS))


def card_suit(card: int) -> int:
    return card // 6


def card_rank(card: int) -> int:
    return card % 6


def integer_index(value: object) -> int:
    """``value`` as an int if it is a Python or numpy integer (not a bool, not a float), else -1: the check of an
    id (a card, an action) given by a caller is then ``0 <= integer_index(value) < count``."""
    integer = as_integer(value)
    return -1 if integer is None else integer


def shown(value: object, longest: int = 60) -> str:
    """``repr(value)``, cut short: an error message names a bad value without echoing a huge one (a typed or posted
    move of a megabyte)."""
    text = repr(value)
    return text if len(text) <= longest else f"{text[:longest - 5]}...{text[-2:]}"


def card_name(card: int) -> str:
    """The R1 name of card id ``card`` (``'AH'``, ``'9C'``, ...); ``ValueError`` for anything but a card id 0..23
    (a Python or numpy integer, not a bool)."""
    index = integer_index(card)
    if not 0 <= index < len(CARD_NAMES):
        raise ValueError(f"malformed card id {card!r}: expected an integer 0..{len(CARD_NAMES) - 1}")
    return CARD_NAMES[index]


def parse_card(text: str) -> int:
    """Parse ``'AH'`` style text (R1) into a card id; anything else raises ``ValueError``."""
    if not isinstance(text, str):
        raise ValueError(f"malformed card {shown(text)}: expected a string such as 'AH', 'TS' or '9C'")
    stripped = text.strip()
    # ASCII first: upper() maps some other letters onto a suit ("ſ", the long s, to "S")
    card = _CARD_BY_NAME.get(stripped.upper()) if len(stripped) == 2 and stripped.isascii() else None
    if card is None:
        raise ValueError(
            f"malformed card {shown(text)}: expected rank {'/'.join(RANKS)} then suit {'/'.join(SUITS)}, "
            "e.g. 'AH', 'TS', '9C'"
        )
    return card


def parse_cards(group: Sequence[int | str] | str, what: str) -> list[int]:
    """The card ids of ``group``: names (``'AH'``, R1) or ids 0..23, a list or one space-separated string; a
    malformed card is a ``ValueError`` that names ``what`` (say ``"dealer hand"``), where a scenario's cards come
    from."""
    if isinstance(group, str):
        group = group.split()
    try:
        return [parse_card(card) if isinstance(card, str) else _card_id(card) for card in group]
    except ValueError as error:
        raise ValueError(f"{what}: {error}") from None
    except TypeError:
        raise ValueError(f"{what}: expected a list of cards, got {shown(group)}") from None


def _card_id(card: object) -> int:
    index = integer_index(card)  # a Python or numpy integer, as parse_deck takes
    if not 0 <= index < 24:
        raise ValueError(f"malformed card {shown(card)}: expected a card id 0..23 or a name such as 'AH'")
    return index


def deck_cards(deck_size: int) -> list[int]:
    """The cards in play for a deck size (R1: 24 cards; R2: 20 cards, the nines removed)."""
    if deck_size == 24:
        return list(range(NUM_CARDS))
    if deck_size == 20:
        return [card for card in range(NUM_CARDS) if card % 6 != NINE]
    raise ValueError(f"deck must be 24 or 20 cards, got {deck_size!r}")


def mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


# Mask -> ascending list of card ids, by two 12-bit halves: two lookups and one list concatenation.
_LOW_HALF = tuple([c for c in range(12) if half >> c & 1] for half in range(4096))
_HIGH_HALF = tuple([c + 12 for c in range(12) if half >> c & 1] for half in range(4096))


def cards_of(mask: int) -> list[int]:
    """Card ids in a mask, ascending (a new list)."""
    return _LOW_HALF[mask & 0xFFF] + _HIGH_HALF[mask >> 12]


def names_of(cards: Sequence[int] | int) -> list[str]:
    """The names of a mask of cards (an int of bits 0..23) or of a sequence of card ids; a bool or a mask with other
    bits is a ``ValueError`` naming it (``True`` is an int in Python, not the nine of clubs)."""
    if isinstance(cards, int):
        if isinstance(cards, bool) or not 0 <= cards <= FULL_DECK_MASK:
            raise ValueError(f"malformed card mask {shown(cards)}: expected an int of bits 0..23 or card ids")
        cards = cards_of(cards)
    return [card_name(card) for card in cards]


def popcount(mask: int) -> int:
    return mask.bit_count()
