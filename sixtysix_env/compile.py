"""Optional compiled engine: build ``sixtysix_env/game.py`` into a C extension with mypyc (``make compile``).

The engine is plain Python and works everywhere; this step makes the same source about twice as fast (the
benchmark in docs/performance.md). It needs a C compiler and mypy (``pip install -e '.[compile]'``):

    python -m sixtysix_env.compile            # build in place, next to game.py
    python -m sixtysix_env.compile --remove   # delete the compiled files (back to pure Python)

The build writes ``game.build-stamp`` with the SHA-256 of the ``game.py`` it compiled, last and atomically.
``sixtysix_env/__init__.py`` imports the compiled module only while the stamp matches the current source, so an
edited ``game.py`` is never shadowed by a stale build (it falls back to the source with a warning), and
``SIXTYSIX_PURE_PYTHON=1`` forces the source. ``sixtysix_env.ENGINE_BACKEND`` says which one is in use.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ._engine_build import PACKAGE_DIR, STAMP, source_digest
from .fileio import write_text_atomic


def compiled_files() -> list[Path]:
    """The extension modules of a build (``game.*.so`` and mypyc's ``game__mypyc.*.so``, or ``.pyd``)."""
    return sorted(path for pattern in ("game.*.so", "game__mypyc.*.so", "game.*.pyd", "game__mypyc.*.pyd")
                  for path in PACKAGE_DIR.glob(pattern))


def remove() -> list[Path]:
    """Delete the stamp first (so a half-removed build is never used), then the extension files."""
    STAMP.unlink(missing_ok=True)
    removed = compiled_files()
    for path in removed:
        path.unlink()
    return removed


def build(quiet: bool = False) -> list[Path]:
    """Compile ``game.py`` with mypyc in a scratch directory and install the result next to it."""
    if not _module_available("mypyc"):  # run below as `python -m mypyc`
        raise RuntimeError("mypyc not found: pip install -e '.[compile]' (mypy ships mypyc)")
    digest = source_digest()
    remove()
    with tempfile.TemporaryDirectory(prefix="sixtysix-compile-") as scratch:
        package = Path(scratch) / "sixtysix_env"
        package.mkdir()
        # mypyc follows the package's imports for types: copy the pure-Python modules game.py needs.
        for name in ("__init__.py", "actions.py", "cards.py", "rules.py", "game.py"):
            target = package / name
            if name == "__init__.py":
                target.write_text("")  # the real one imports the environments (numpy, gymnasium)
            else:
                shutil.copy2(PACKAGE_DIR / name, target)
        command = [sys.executable, "-m", "mypyc", "--ignore-missing-imports", "sixtysix_env/game.py"]
        environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "MYPYPATH")}
        completed = subprocess.run(command, cwd=scratch, capture_output=True, text=True, env=environment)
        if completed.returncode != 0:
            raise RuntimeError(f"mypyc failed ({completed.returncode}):\n{completed.stdout[-4000:]}{completed.stderr[-4000:]}")
        built = sorted(package.glob("game*.so")) + sorted(package.glob("game*.pyd"))
        if not built:
            raise RuntimeError(f"mypyc produced no extension module:\n{completed.stdout[-2000:]}")
        if source_digest() != digest:
            raise RuntimeError("game.py changed during the build; run it again")
        installed = []
        for path in built:
            target = PACKAGE_DIR / path.name
            temporary = target.with_name(target.name + ".tmp")
            shutil.copy2(path, temporary)  # keeps the extension's file mode, unlike a fresh temporary file
            temporary.replace(target)
            installed.append(target)
    write_text_atomic(STAMP, digest + "\n")  # last: it makes the build visible to sixtysix_env/__init__.py
    if not quiet:
        for path in installed:
            print(f"built {path.relative_to(PACKAGE_DIR.parent)}")
    return installed


def _module_available(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sixtysix_env.compile",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--remove", action="store_true", help="delete the compiled engine (use the pure Python one)")
    parser.add_argument("--optional", action="store_true",
                        help="a missing compiler or mypyc is not an error: keep the pure Python engine (make install)")
    args = parser.parse_args(argv)
    if args.remove:
        for path in remove():
            print(f"removed {path.relative_to(PACKAGE_DIR.parent)}")
        return 0
    if args.optional and not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")):
        print("compile: no C compiler found; the engine stays pure Python (optional build skipped)")
        return 0
    try:
        build()
    except RuntimeError as error:
        print(f"compile: {error}", file=sys.stderr)
        if args.optional:
            print("compile: the engine stays pure Python (optional build skipped)")
            return 0
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
