"""Strict checks for every file the project reads (game records, deal files, tournament journals, configs, model
metadata): types exact, unknown keys refused, numbers finite, names spelled exactly.

Small explicit validators rather than a JSON Schema library: JSON Schema's ``integer`` admits ``1.0`` and its
error messages name schema paths, while these files need ``1.0`` refused where a count or a seat is expected, and
messages that name the file's own key ("deal 3: dealer must be 0 or 1, got 1.0"). Every check raises
``ValueError`` with such a message.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from .actions import ACTION_NAMES
from .cards import CARD_NAMES
from .rules import Rules

MAX_JSON_DEPTH = 64  # no file of the project nests deeper than a few levels
_CARD_BY_NAME = {name: card for card, name in enumerate(CARD_NAMES)}
_ACTION_BY_NAME = {name: action for action, name in enumerate(ACTION_NAMES)}


def loads_json(text: str, what: str) -> Any:
    """Parse JSON text strictly: duplicate keys, ``NaN``/``Infinity`` and nesting deeper than
    :data:`MAX_JSON_DEPTH` raise ``ValueError`` naming ``what`` (never a ``RecursionError``)."""
    if not isinstance(text, str):
        raise ValueError(f"{what}: expected JSON text, got {type(text).__name__}")
    depth_error = _nesting_error(text, what)
    if depth_error:
        raise ValueError(depth_error)
    try:
        return json.loads(text, object_pairs_hook=lambda pairs: _unique_keys(pairs, what),
                          parse_constant=lambda name: _refuse_constant(name, what))
    except json.JSONDecodeError as error:
        raise ValueError(f"{what}: not valid JSON ({error})") from None
    except ValueError as error:
        if "integer string conversion" not in str(error):
            raise
        raise ValueError(_long_number_problem(text, what)) from None
    except RecursionError:  # not reached after the depth check; kept so a parser change cannot leak one
        raise ValueError(f"{what}: JSON nested too deeply") from None


# JSON's tokens, left to right: a string (its raw text), a run of digits, or a mark. Each match moves on from the
# last one, so a scan is linear; one pattern searched from every position (a field's name, then the number) was
# quadratic on strings of escaped quotes: a 100 KB body held the browser app's event loop for 30 s.
_JSON_TOKENS = re.compile(r'"((?:[^"\\]|\\.)*)"|(-?\d+)|([:,\[\]{}])')


def _long_number_problem(text: str, what: str) -> str:
    """The message for a number beyond Python's digit limit: its own (int('9' * 5000)) names neither the number nor
    the field, so the field is found in the text (the first such number: the parser stopped there, so the text
    before it is well-formed)."""
    limit = sys.get_int_max_str_digits()
    where, last_string, key = "a number", None, None
    for token in _JSON_TOKENS.finditer(text):
        string, digits, mark = token.groups()
        if string is not None:
            last_string = string
        elif mark is not None:
            key = last_string if mark == ":" else None  # after , [ { a number is an item, not a field's value
        elif len(digits.lstrip("-")) > limit:
            where = f"field {key!r}" if key is not None else "a number"
            break
        else:
            key = None
    return f"{what}: {where} has more than {limit} digits (too long for any number here)"


def read_json_file(path: str | os.PathLike, what: str) -> Any:
    """The JSON document in the file ``path``, read strictly as :func:`loads_json` reads text; a missing or
    unreadable file, or one that is not JSON, raises ``ValueError`` naming ``what`` and the path."""
    named = f"{what} {str(path)!r}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"{named}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{named}: not UTF-8 text ({error.reason})") from None
    return loads_json(text, named)


def _nesting_error(text: str, what: str) -> str | None:
    """A message if brackets outside strings nest deeper than :data:`MAX_JSON_DEPTH` (a linear scan, no
    recursion), else ``None``. Malformed text is left for the parser to describe."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return f"{what}: JSON nested deeper than {MAX_JSON_DEPTH} levels"
        elif char in "]}":
            depth -= 1
    return None


def _unique_keys(pairs: list[tuple[str, Any]], what: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"{what}: duplicate key {key!r}")
        result[key] = value
    return result


def _refuse_constant(name: str, what: str) -> Any:
    raise ValueError(f"{what}: {name} is not a number this file may hold (numbers must be finite)")


def check_keys(value: object, what: str, required: Iterable[str], optional: Iterable[str] = ()) -> Mapping[str, Any]:
    """``value`` must be an object with every ``required`` key and no key outside ``required`` + ``optional``."""
    required = tuple(required)
    allowed = required + tuple(optional)
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be an object with keys {', '.join(allowed)}, got {type(value).__name__}")
    for key in required:
        if key not in value:
            raise ValueError(f"{what} is missing key {key!r} (expected {', '.join(allowed)})")
    unknown = sorted(str(key) for key in value if key not in allowed)
    if unknown:
        raise ValueError(f"{what} has unknown key {unknown[0]!r} (allowed: {', '.join(allowed)})")
    return value


# The most samples (worlds, opponent hands) any sample count of the heuristic and its compiled twin may ask for: far
# above what a decision uses, and below what the kernels can allocate and count.
MAX_SAMPLE_COUNT = 100_000

# Seeds are signed 64-bit integers wherever they end up: numba's kernels and numpy's int64 arrays take them, and the
# web app stores them in SQLite's INTEGER columns. A seed, or the last seed a run derives from it, is below this.
SEED_LIMIT = 2**63


def require_int(value: object, what: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer exactly (``1.0`` and ``true`` are refused), within the bounds if given."""
    if type(value) is not int:
        raise ValueError(f"{what} must be an integer, got {value!r}")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = (f"{minimum}..{maximum}" if minimum is not None and maximum is not None
                  else f">= {minimum}" if minimum is not None else f"<= {maximum}")
        raise ValueError(f"{what} must be an integer {bounds}, got {value!r}")
    return value


def require_player(value: object, what: str, players: int = 2) -> int:
    """A seat index of a game of ``players`` (2, or 3 for R21): an exact integer 0..players-1."""
    if type(value) is not int or not 0 <= value < players:
        raise ValueError(f"{what} must be {'0 or 1' if players == 2 else '0, 1 or 2'}, got {value!r}")
    return value


def require_bool(value: object, what: str) -> bool:
    if type(value) is not bool:
        raise ValueError(f"{what} must be true or false, got {value!r}")
    return value


def require_str(value: object, what: str, non_empty: bool = True) -> str:
    if not isinstance(value, str) or (non_empty and not value.strip()):
        raise ValueError(f"{what} must be {'non-empty ' if non_empty else ''}text, got {value!r}")
    return value


def finite_number(value: object) -> bool:
    """Whether ``value`` is a finite number: an int or a float, not a bool. NaN passes every one-sided range check
    (``x < 0`` is false) and poisons arithmetic, so a number read from outside is checked with this first. An integer
    beyond any float (``10**400``) is not one: every user converts it to a float."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # math.isfinite converts an int to a float first
        return False


def require_number(value: object, what: str) -> float:
    """A finite number (an integer or a float, not a bool)."""
    if not finite_number(value):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return value


def require_card_name(value: object, what: str) -> int:
    """A card written exactly as R1 does (``AH``, ``TS``, ``9C``: upper case, no spaces); returns its id."""
    card = _CARD_BY_NAME.get(value) if isinstance(value, str) else None
    if card is None:
        raise ValueError(f"{what} must be a card name written as rank then suit in capitals, such as 'AH', 'TS' or "
                         f"'9C', got {value!r}")
    return card


def require_action_name(value: object, what: str) -> int:
    """An action written exactly as :data:`~sixtysix_env.actions.ACTION_NAMES` does (``play AH``, ``close``)."""
    action = _ACTION_BY_NAME.get(value) if isinstance(value, str) else None
    if action is None:
        raise ValueError(f"{what} must be an action name such as 'play AH', 'marry KH', 'exchange', 'close', "
                         f"'declare', 'draw' or 'pass', got {value!r}")
    return action


LATER_SWITCHES = ("players", "three_player_early_marriage")  # switches added after files were first written


def rules_from_file(values: object, what: str) -> Rules:
    """The rules a file states: an object naming every switch of :class:`Rules` (a file never relies on
    defaults, which may change), each with its exact type."""
    if not isinstance(values, Mapping):
        raise ValueError(f"{what} must be an object of switches, got {type(values).__name__}")
    # Files written before the three-player switches existed (R21) do not name them; they were two-player files.
    missing = [name for name in Rules().to_dict() if name not in values and name not in LATER_SWITCHES]
    if missing:
        raise ValueError(f"{what} are missing switch {missing[0]!r} (a file names every switch)")
    try:
        return Rules.from_dict(values)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{what}: {error}") from None


def finite_float(text: str) -> float:
    """An argparse ``type`` for the float options of the ``python -m`` tools: ``nan`` and ``inf`` parse as floats
    but are refused by name, since NaN passes every one-sided range check (``x <= 0`` is false)."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


__all__ = [
    "MAX_JSON_DEPTH", "check_keys", "finite_float", "finite_number", "loads_json", "read_json_file",
    "require_action_name", "require_bool", "require_card_name", "require_int", "require_number", "require_player",
    "require_str", "rules_from_file",
]
