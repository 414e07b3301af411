"""numba's on-disk cache, made safe: a corrupt cache is rebuilt, an unwritable install still works.

The kernels are compiled with ``@njit(cache=True)``: the first use after an install compiles them (seconds) and
writes the machine code next to the sources (``sixtysix_env/core/__pycache__``); later processes load it.

* numba raises on a corrupt cache file (a truncated index or data file, e.g. after a disk filled up or a kill
  during the write). :func:`install_cache_guard` makes numba treat such a file as a cache miss: the kernel is
  compiled again and the file rewritten (tests/test_core_jit.py corrupts every file and checks this).
* numba falls back to a per-user cache directory when the package directory is read-only; when that is not
  writable either, :func:`ensure_cache_dir` points ``NUMBA_CACHE_DIR`` at a temporary directory rather than fail.
"""

from __future__ import annotations

import os
import tempfile

_GUARDED = False


def install_cache_guard() -> None:
    """Make numba treat an unreadable cache index or data file as a cache miss (once per process)."""
    global _GUARDED
    if _GUARDED:
        return
    from numba.core import caching

    load_index = caching.IndexDataCacheFile._load_index
    load = caching.IndexDataCacheFile.load

    def guarded_load_index(self):  # type: ignore[no-untyped-def]
        try:
            return load_index(self)
        except Exception:  # a corrupt index: start afresh, the next save rewrites it
            return {}

    def guarded_load(self, key):  # type: ignore[no-untyped-def]
        try:
            return load(self, key)
        except Exception:  # a corrupt data file: recompile, the next save replaces it
            return None

    caching.IndexDataCacheFile._load_index = guarded_load_index
    caching.IndexDataCacheFile.load = guarded_load
    _GUARDED = True


def ensure_cache_dir() -> None:
    """Give numba a writable cache directory: the package's own, else numba's per-user one, else a temporary
    one (set before the first ``@njit(cache=True)`` decorator runs)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    candidates = [os.path.join(os.path.dirname(__file__), "__pycache__"),
                  os.path.join(os.path.expanduser("~"), ".cache", "numba")]
    for path in candidates:
        try:
            os.makedirs(path, exist_ok=True)
            tempfile.TemporaryFile(dir=path).close()
            return
        except OSError:
            continue
    from numba.core import config

    fallback = os.path.join(tempfile.gettempdir(), "sixtysix-numba-cache")
    os.makedirs(fallback, exist_ok=True)
    config.CACHE_DIR = fallback


ensure_cache_dir()
install_cache_guard()
