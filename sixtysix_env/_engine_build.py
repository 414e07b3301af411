"""Where the optional compiled engine lives and whether it matches the source (read by ``sixtysix_env/__init__.py``
at import, so it stays tiny; the build itself is :mod:`sixtysix_env.compile`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
SOURCE = PACKAGE_DIR / "game.py"
STAMP = PACKAGE_DIR / "game.build-stamp"  # SHA-256 of the game.py a build was made from, written last


def source_digest(path: Path = SOURCE) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def extension_present() -> bool:
    """Whether an extension module ``game.*`` lies next to ``game.py`` (the import system would prefer it)."""
    return any(PACKAGE_DIR.glob("game.*.so")) or any(PACKAGE_DIR.glob("game.*.pyd"))


def build_is_current() -> bool:
    """Whether the build stamp names the current ``game.py`` (a build is only ever used then)."""
    return STAMP.exists() and STAMP.read_text().strip() == source_digest()
