"""Atomic file writes: a reader never sees a half-written file (temp file in the same folder + ``os.replace``);
output paths checked before the work; ``.npz`` archives read with errors that name the file."""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Iterable

import numpy as np


def _process_umask() -> int:
    """The process umask, read from /proc where there is one: setting it to read it back changes it for a moment
    in every thread, so that is the fallback only."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as temp_file:
            temp_file.write(data)
            temp_file.flush()
            os.fsync(temp_file.fileno())
        # mkstemp creates owner-only files: a rewrite keeps the file's own mode, a new file gets the usual one
        os.chmod(temp_name, stat.S_IMODE(target.stat().st_mode) if target.is_file() else 0o666 & ~_process_umask())
        os.replace(temp_name, target)
    except BaseException:
        try:
            os.unlink(temp_name)
        except FileNotFoundError:
            pass
        raise


def _try_a_write(folder: Path, what: str) -> None:
    """Create and delete a probe file in ``folder``: a folder that cannot take files fails now."""
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".sixtysix-write-test.", suffix=".tmp")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise ValueError(f"{what}: cannot write files there ({error.strerror or error})") from None


def writable_folder(path: str | os.PathLike, what: str) -> Path:
    """Create the folder ``path`` and try a write in it now, so a folder that cannot take files fails before any
    work is done instead of after it; else ``ValueError`` naming ``what`` (e.g. ``"--records 'x'"``)."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise ValueError(f"{what}: {str(target)!r} is a file, not a folder")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"{what}: cannot write files there ({error.strerror or error})") from None
    _try_a_write(target, what)
    return target


def writable_file(path: str | os.PathLike, what: str) -> Path:
    """Check now that ``path`` can be written, so an output path that cannot be used fails before the work instead
    of after it; else ``ValueError`` naming ``what`` (e.g. ``"--out 'x.json'"``). Nothing is created: a missing
    folder on the way is tried in its nearest existing parent, and the writers (:func:`write_bytes_atomic`) make it
    when they write, so a command refused by a later check leaves no empty folder behind."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{what}: is a folder, not a file")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        if folder != target.parent:  # a file where a folder on the way should be made
            raise ValueError(f"{what}: cannot write files there (Not a directory: {str(folder)!r} is a file)")
        raise ValueError(f"{what}: {str(folder)!r} is a file, not a folder")
    _try_a_write(folder, what)
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


def nonfinite_as_null(value: Any) -> Any:
    """``value`` with every NaN or infinite float (in lists, tuples and dicts too) as None: for writers whose
    figures may be undefined (a standard error over one deal), which :func:`write_json_atomic` would refuse."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: nonfinite_as_null(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [nonfinite_as_null(item) for item in value]
    return value


def write_json_atomic(path: str | os.PathLike, value: Any) -> None:
    # NaN and infinity are not JSON, and the strict readers (schema.loads_json) refuse them: refused here first.
    write_text_atomic(path, json.dumps(value, indent=2, sort_keys=False, allow_nan=False) + "\n")


def read_npz_arrays(source: str | os.PathLike | BinaryIO, where: str,
                    names: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` archive by name (only ``names`` if given, those present), never unpickling. A file
    that is not an ``.npz`` archive, or an entry that cannot be read, is a ``ValueError`` starting with ``where``:
    numpy's own errors name neither file nor entry, and for a file of another format suggest loading it unsafely."""
    try:
        archive = np.load(source, allow_pickle=False)
    except OSError as error:  # missing, a folder, unreadable
        raise ValueError(f"{where}: it is unreadable ({error.strerror or error})") from None
    except (ValueError, EOFError, zipfile.BadZipFile):  # numpy's ValueError for a file of another format
        raise ValueError(f"{where}: it is not an .npz archive (truncated or another format)") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):  # np.load reads a lone .npy array too
        raise ValueError(f"{where}: it is a single .npy array, not an .npz archive")
    arrays = {}
    with archive:
        wanted = archive.files if names is None else [name for name in names if name in archive.files]
        for name in wanted:
            try:
                arrays[name] = archive[name]
            except ValueError:  # a damaged array header or data, or pickled objects (never loaded)
                raise ValueError(f"{where}: its entry {name!r} is damaged or holds Python objects, "
                                 "not a plain array") from None
            except (EOFError, OSError, zipfile.BadZipFile, zlib.error) as error:
                raise ValueError(f"{where}: its entry {name!r} is truncated or corrupt "
                                 f"({type(error).__name__}: {error})") from None
    return arrays
