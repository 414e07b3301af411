"""numba's on-disk cache, made safe: a corrupt cache is rebuilt, an unwritable install still works.

The kernels are compiled with ``@njit(cache=True)``: the first use after an install compiles them (seconds) and
writes the machine code next to the sources (``sixtysix_env/core/__pycache__``); later processes load it.

* numba raises on a corrupt cache file (a truncated index or data file, e.g. after a disk filled up or a kill
  during the write). :func:`install_cache_guard` makes numba treat such a file as a cache miss: the kernel is
  compiled again and the file rewritten (tests/test_core_agents.py corrupts every file and checks this).
* When the package directory is read-only, :func:`ensure_cache_dir` points numba's ``CACHE_DIR`` at numba's
  per-user directory, else at a temporary directory of this user's, rather than fail.
* numba revalidates a cached kernel against its own source file only, not against the kernels it calls in other
  files, nor against the package modules whose constants it froze: after an edit of ``engine.py``, ``solver.py``'s
  cached kernels would still hold the old rules, and after one of ``observation.py`` the old encoding.
  :func:`drop_stale_cache` keeps a hash of every source file of the core, and of the package modules they import
  from, next to the cache and deletes the core's cache files when it changes.

:func:`kernel` is the core's decorator: ``njit(cache=True)``, typed on plain argument types (see its docstring).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
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


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def ensure_cache_dir() -> None:
    """Give numba a writable cache directory: the package's own, else numba's per-user one, else a temporary one of
    this user's (set before the first ``@njit(cache=True)`` decorator runs). Any but the package's own is set as
    numba's ``CACHE_DIR``, where :func:`drop_stale_cache` looks too: left to numba's own locator, the per-user cache
    was never checked against the sources."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    from numba.core import config

    if _writable(os.path.join(os.path.dirname(__file__), "__pycache__")):
        return
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    # Per user: a shared name in /tmp may belong to another user and be read-only to this one.
    for path in (os.path.join(os.path.expanduser("~"), ".cache", "numba"),
                 os.path.join(tempfile.gettempdir(), f"sixtysix-numba-cache-{user}")):
        if _writable(path):
            config.CACHE_DIR = path
            return
    config.CACHE_DIR = tempfile.mkdtemp(prefix="sixtysix-numba-cache-")


# A package module named in an import: ``from ..name import`` anywhere in the core; ``from .name import`` at the
# top of a package module (what its functions import when called, e.g. observation.py's three-player encoder, holds
# no constant a kernel reads).
_IMPORT_FROM_THE_CORE = re.compile(r"^\s*from \.\.([a-z_][a-z0-9_]*) import", re.MULTILINE)
_IMPORT_FROM_THE_PACKAGE = re.compile(r"^from \.([a-z_][a-z0-9_]*) import", re.MULTILINE)


def _source_files(core_directory: str) -> list[str]:
    """The core's source files, and the package's modules they import from, directly or through one another
    (``from ..observation import ...``, and what observation.py takes ``from .cards``): the kernels freeze those
    modules' constants as compile-time values."""
    package_directory = os.path.dirname(core_directory)
    files = sorted(glob.glob(os.path.join(core_directory, "*.py")))
    pending, modules = list(files), set()
    while pending:
        path = pending.pop()
        pattern = _IMPORT_FROM_THE_CORE if os.path.dirname(path) == core_directory else _IMPORT_FROM_THE_PACKAGE
        with open(path, encoding="utf-8") as handle:
            for name in pattern.findall(handle.read()):
                module_path = os.path.join(package_directory, f"{name}.py")
                if name not in modules and os.path.isfile(module_path):
                    modules.add(name)
                    pending.append(module_path)
    return files + sorted(os.path.join(package_directory, f"{name}.py") for name in modules)


def _sources_digest(core_directory: str = os.path.dirname(__file__)) -> str:
    """SHA-256 over the names and contents of :func:`_source_files`."""
    digest = hashlib.sha256()
    for path in _source_files(core_directory):
        digest.update(os.path.relpath(path, os.path.dirname(core_directory)).encode())
        with open(path, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()


def _cache_directories() -> list[str]:
    """Where numba keeps the core's cache files: next to the sources, or, under ``CACHE_DIR``, in the folder numba
    names after the sources' folder (``core_<sha1 of its path>``). Other ``core_*`` folders there belong to other
    installs (or packages), which check their own."""
    from numba.core import config
    from numba.core.caching import UserProvidedCacheLocator

    directories = [os.path.join(os.path.dirname(__file__), "__pycache__")]
    if config.CACHE_DIR:
        own_folder = UserProvidedCacheLocator.get_suitable_cache_subpath(__file__)
        directories.append(os.path.join(config.CACHE_DIR, own_folder))
    return directories


def drop_stale_cache() -> None:
    """Delete the core's numba cache files where they were compiled from other sources than these."""
    digest = _sources_digest()
    module_names = [os.path.splitext(os.path.basename(path))[0]
                    for path in glob.glob(os.path.join(os.path.dirname(__file__), "*.py"))]
    for directory in _cache_directories():
        stamp = os.path.join(directory, "sources.sha256")
        try:
            with open(stamp, encoding="ascii") as handle:
                if handle.read().strip() == digest:
                    continue
        except OSError:
            pass
        try:
            for name in module_names:
                for path in glob.glob(os.path.join(directory, f"{name}.*.nb[ic]")):
                    os.remove(path)
            # Made now if numba has not yet: stamped before the first compile writes there, or the next run would
            # find files without a stamp and drop them (a first run's work compiled twice).
            os.makedirs(directory, exist_ok=True)
            with open(stamp + ".tmp", "w", encoding="ascii") as handle:
                handle.write(digest)
            os.replace(stamp + ".tmp", stamp)
        except OSError:  # a read-only cache: numba then compiles in memory
            continue


def kernel(function=None, *, nogil: bool = False):  # type: ignore[no-untyped-def]
    """``@njit(cache=True)`` for a kernel of the core, compiled once per plain argument types.

    ``@kernel(nogil=True)`` releases the GIL while the kernel runs, so Python threads may run it side by side (the
    rollout search's ``threads``: each thread with its own transposition table; numba's generator is per thread).

    numba types a constant argument of a call between jitted functions as a literal (``Literal[int](0)``) and
    compiles one more specialization of the callee for every distinct constant: ``value_for(state, 0)`` and
    ``value_for(state, 1)`` were two kernels, the whole solver was compiled three times (its window ``-4, 4`` and
    world ``0`` passed as constants) and an observation helper ten times (one per offset). Nothing in the core
    branches on a literal type, so calls from jitted code are typed as with a variable (``int64``); a call from
    Python is typed that way anyway. That roughly halves the cold compile (docs/performance.md).

    No C-callable wrapper is built for a kernel (``no_cfunc_wrapper``: numba needs it only to pass a jitted
    function as a first-class value, which the core never does), which saves a tenth of the compile."""
    from numba import njit
    from numba.core import types

    if function is None:
        return lambda decorated: kernel(decorated, nogil=nogil)
    dispatcher = njit(cache=True, no_cfunc_wrapper=True, nogil=nogil)(function)
    literal_call_template = dispatcher.get_call_template

    def get_call_template(args, kws):  # type: ignore[no-untyped-def]
        return literal_call_template(tuple(types.unliteral(arg) for arg in args),
                                     {name: types.unliteral(arg) for name, arg in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


ensure_cache_dir()
install_cache_guard()
drop_stale_cache()
