"""Integers given through the Python API.

A caller may pass a Python ``int`` or a numpy integer (an array's element, ``rng.integers(...)``) wherever the API
takes a count, a seed or a seat; a bool, a float (even ``1.0``) or text is refused by name. Files are stricter:
:func:`sixtysix_env.schema.require_int` takes JSON integers only.
"""

from __future__ import annotations

import operator


def as_integer(value: object) -> int | None:
    """``value`` as a Python ``int`` if it is a Python or numpy integer, else ``None``: the one test behind
    :func:`plain_int`, ``cards.integer_index`` (card and action ids) and the engines' action ids."""
    if type(value) is int:
        return value
    if isinstance(value, bool):  # a bool is an int to Python, never a count, a seed or an id here
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:  # a float, text, a numpy bool (numpy 2 gives it no __index__)
        return None


def plain_int(value: object, what: str) -> int:
    """``value`` as a Python ``int`` (a numpy integer converted); else ``ValueError`` naming ``what``."""
    integer = as_integer(value)
    if integer is None:
        raise ValueError(f"{what} must be an integer, got {value!r}")
    return integer


def optional_int(value: object, what: str) -> int | None:
    """:func:`plain_int`, or ``None`` as given (a seed drawn from fresh entropy, a dealer drawn at random)."""
    if value is None:
        return None
    integer = as_integer(value)
    if integer is None:
        raise ValueError(f"{what} must be an integer or None, got {value!r}")
    return integer
