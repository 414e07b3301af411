"""How a feature that needs an optional dependency group (an extra of pyproject.toml: ``play``, ``train``, ``ray``,
``peers``) says so when the group is missing: the package it lacks and the command that installs it, for a wheel
install and for a source checkout."""

from __future__ import annotations

import contextlib
from typing import Iterator

# This distribution's own top-level packages: a missing one is a broken install or a bug, never a missing extra.
OWN_PACKAGES = ("sixtysix_env", "agents", "eval", "train", "bench", "play", "models", "sixtysix_cli")


def install_hint(extra: str) -> str:
    """The commands that install the extra ``extra``."""
    return f"pip install 'sixtysix[{extra}]' (in a source checkout: pip install -e '.[{extra}]')"


@contextlib.contextmanager
def needs_extra(extra: str) -> Iterator[None]:
    """Turn a ``ModuleNotFoundError`` of a third-party package inside the block into a ``ValueError`` naming the
    package and :func:`install_hint` (the command-line tools print a ValueError as one line, not a traceback)."""
    try:
        yield
    except ModuleNotFoundError as error:
        package = (error.name or "").split(".")[0]  # 'rich', for a missing 'rich.console'
        if not package or package in OWN_PACKAGES:
            raise
        raise ValueError(f"needs the package {package!r}: {install_hint(extra)}") from None
