"""Deals for duplicate tournaments: generated from one master seed, saved to and loaded from a JSON deal file.

A deal is a deck in R4 order (top card first) and a dealer. ``generate_deals(master_seed, count, rules)`` derives
deal ``i`` from ``(master_seed, i)`` alone, so the first 100 deals of a 1000-deal run are the deals of a 100-deal
run with the same seed, and the deck of each deal is the engine's :func:`~sixtysix_env.game.shuffled_deck` of a
derived seed (identical on every platform). Dealers alternate (deal ``i`` is dealt by player ``i % 2``); in a
duplicate pair both agents sit in both seats anyway.

The deal file stores the decks as card names (R1 notation, ``"AH"``), so any program can reuse the exact deals::

    {"format": "sixtysix-deals", "version": 1, "rules": {...Rules switches...}, "master_seed": 0,
     "deals": [{"dealer": 0, "deck": ["QS", "9H", ...], "seed": 123456789}, ...]}

``seed`` and ``master_seed`` are optional provenance; the deck is what is played. In match mode (R17) each deal
starts one Bummerl; the Bummerl's later decks are derived from that deal (:meth:`Deal.key`), so a deal file also
fixes every Bummerl completely.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from sixtysix_env.cards import CARD_NAMES
from sixtysix_env.fileio import write_json_atomic
from sixtysix_env.game import parse_deck, shuffled_deck
from sixtysix_env.integers import as_integer, plain_int
from sixtysix_env.record import RECORD_FORMAT
from sixtysix_env.rules import Rules
from sixtysix_env.schema import (
    check_keys, loads_json, require_card_name, require_int, require_player, rules_from_file,
)

DEALS_FORMAT = "sixtysix-deals"
DEALS_VERSION = 1


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from a tuple of parts (BLAKE2b of their text): stable across runs, platforms and processes."""
    text = "/".join(str(part) for part in parts)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 1


@dataclass(frozen=True)
class Deal:
    """One deal: the deck in R4 order (card ids, top first) and the dealer (0 or 1). ``seed`` is provenance only."""

    dealer: int
    deck: tuple[int, ...]
    seed: int | None = None

    @property
    def deck_names(self) -> list[str]:
        return [CARD_NAMES[card] for card in self.deck]

    def key(self) -> int:
        """A seed determined by the deck and dealer alone (used to derive the later deals of a Bummerl)."""
        return derive_seed("deal", self.dealer, " ".join(self.deck_names))

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"dealer": self.dealer, "deck": self.deck_names}
        if self.seed is not None:
            entry["seed"] = self.seed
        return entry


def generate_deals(master_seed: int, count: int, rules: Rules) -> list[Deal]:
    """``count`` deals derived from ``master_seed`` (deterministic; deal ``i`` depends only on the seed and ``i``)."""
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a Rules object (Rules.preset(name)), got {rules!r}")
    master_seed = plain_int(master_seed, "master seed")
    whole = as_integer(count)
    if whole is None or whole < 1:
        raise ValueError(f"deal count must be a positive integer, got {count!r}")
    count = whole
    deals = []
    for index in range(count):
        seed = derive_seed("deal", master_seed, index)
        deals.append(Deal(dealer=index % 2, deck=tuple(shuffled_deck(rules.deck, seed)), seed=seed))
    return deals


def deals_digest(deals: Sequence[Deal]) -> str:
    """SHA-256 of the deals' decks and dealers: identifies the deal set (a resumed run must use the same)."""
    digest = hashlib.sha256()
    for deal in deals:
        digest.update(f"{deal.dealer}:{' '.join(deal.deck_names)}\n".encode())
    return digest.hexdigest()


def save_deals(path: str | os.PathLike, deals: Sequence[Deal], rules: Rules, master_seed: int | None = None) -> None:
    """Write a deal file atomically (see the module docstring for the format). What :func:`load_deals` would refuse
    (no deals, a deck that does not fit the rules, a dealer who is no seat) is refused before anything is written."""
    where = f"deals to write to {str(path)!r}"
    if not isinstance(rules, Rules):
        raise ValueError(f"{where}: rules must be a Rules object, got {rules!r}")
    document: dict[str, Any] = {"format": DEALS_FORMAT, "version": DEALS_VERSION, "rules": rules.to_dict()}
    if master_seed is not None:
        document["master_seed"] = plain_int(master_seed, f"{where}: master_seed")
    entries = []
    for index, deal in enumerate(deals):
        try:
            entries.append(deal.to_dict())
        except (AttributeError, IndexError, TypeError):  # a card id outside the deck, or no Deal at all
            raise ValueError(f"{where}: deal {index} is not a deal of card ids 0..23: {deal!r}") from None
    document["deals"] = entries
    parse_deals_document(document, rules, where=where)  # the reader's own checks: one concept, one place
    write_json_atomic(path, document)


def load_deals(path: str | os.PathLike, rules: Rules | None = None) -> tuple[list[Deal], Rules]:
    """Read and validate a deal file. Returns the deals and the file's rules.

    With ``rules`` given, the file's rules must be equal (the same deck under other switches would be a
    different game). Every problem raises ``ValueError`` naming the file, the deal and what is wrong.
    """
    source = Path(path)
    where = f"deal file {str(source)!r}"
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"deal file {str(source)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{where}: cannot be read as UTF-8 text ({error})") from None
    return parse_deals_document(loads_json(text, where), rules, where=where)


def parse_deals_document(document: Any, rules: Rules | None = None, where: str = "deal file") -> tuple[list[Deal], Rules]:
    """Validate an already parsed deal document (see :func:`load_deals`): types exact (``1.0`` is not ``1``),
    unknown keys refused, card names written exactly as R1 does."""
    if isinstance(document, dict) and document.get("format", DEALS_FORMAT) != DEALS_FORMAT:  # before its keys:
        # another file of ours (a game record) is named as what it is, not by the keys a deal file would have
        hint = " (a game record: replay it with `sixtysix replay`)" if document["format"] == RECORD_FORMAT else ""
        raise ValueError(f"{where}: format must be {DEALS_FORMAT!r}, got {document['format']!r}{hint}")
    check_keys(document, where, ("format", "version", "rules", "deals"), ("master_seed",))
    if document["format"] != DEALS_FORMAT:
        raise ValueError(f"{where}: format must be {DEALS_FORMAT!r}, got {document['format']!r}")
    if type(document["version"]) is not int or document["version"] != DEALS_VERSION:
        raise ValueError(f"{where}: unsupported version {document['version']!r} (this program reads {DEALS_VERSION})")
    file_rules = rules_from_file(document["rules"], f"{where}: rules")
    if rules is not None and file_rules != rules:
        differing = [
            f"{name}={value!r} (file) vs {getattr(rules, name)!r}"
            for name, value in file_rules.to_dict().items()
            if getattr(rules, name) != value
        ]
        raise ValueError(f"{where}: rules mismatch: {'; '.join(differing)}")
    if "master_seed" in document:  # optional, but never null (the writer leaves it out instead)
        require_int(document["master_seed"], f"{where}: master_seed")
    entries = document["deals"]
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{where}: 'deals' must be a non-empty list of deals")
    deals = []
    for number, entry in enumerate(entries):
        label = f"{where}: deal {number}"
        check_keys(entry, label, ("dealer", "deck"), ("seed",))
        dealer = require_player(entry["dealer"], f"{label}: dealer", file_rules.players)
        deck = entry["deck"]
        if not isinstance(deck, list):
            raise ValueError(f"{label}: deck must be a list of card names such as 'AH', got {deck!r}")
        names = [require_card_name(name, f"{label}: deck position {position}")
                 for position, name in enumerate(deck, start=1)]
        try:
            cards = parse_deck(names, file_rules)
        except ValueError as error:
            raise ValueError(f"{label}: {error}") from None
        seed = entry.get("seed")
        if "seed" in entry:
            require_int(seed, f"{label}: seed")
        deals.append(Deal(dealer=dealer, deck=tuple(cards), seed=seed))
    return deals, file_rules


__all__ = [
    "DEALS_FORMAT", "DEALS_VERSION", "Deal", "deals_digest", "derive_seed", "generate_deals", "load_deals",
    "parse_deals_document", "save_deals",
]
