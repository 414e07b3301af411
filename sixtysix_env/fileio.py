"""Atomic file writes: a reader never sees a half-written file (temp file in the same folder + ``os.replace``)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as temp_file:
            temp_file.write(data)
            temp_file.flush()
            os.fsync(temp_file.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp_name, 0o666 & ~umask)  # mkstemp creates owner-only files; give the usual permissions
        os.replace(temp_name, target)
    except BaseException:
        try:
            os.unlink(temp_name)
        except FileNotFoundError:
            pass
        raise


def writable_folder(path: str | os.PathLike, what: str) -> Path:
    """Create the folder ``path`` and try a write in it now, so a folder that cannot take files fails before any
    work is done instead of after it; else ``ValueError`` naming ``what`` (e.g. ``"--records 'x'"``)."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise ValueError(f"{what}: {str(target)!r} is a file, not a folder")
    try:
        target.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=target, prefix=".sixtysix-write-test.", suffix=".tmp")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise ValueError(f"{what}: cannot write files there ({error.strerror or error})") from None
    return target


def writable_file(path: str | os.PathLike, what: str) -> Path:
    """Check now that ``path`` can be written (its folder is made and tried, and ``path`` is not a folder), so an
    output path that cannot be used fails before the work instead of after it; else ``ValueError`` naming ``what``
    (e.g. ``"--out 'x.json'"``)."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{what}: is a folder, not a file")
    writable_folder(target.parent, what)
    return target


def remove_stale_temp_files(directory: str | os.PathLike) -> list[Path]:
    """Delete the temp files :func:`write_bytes_atomic` leaves in ``directory`` when its process is killed mid-write
    (``.NAME.XXXX.tmp``). Call it only while no writer of that directory runs (e.g. when a run starts)."""
    removed = []
    for path in Path(directory).glob(".*.tmp"):
        if path.is_file():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | os.PathLike, value: Any) -> None:
    write_text_atomic(path, json.dumps(value, indent=2, sort_keys=False) + "\n")
