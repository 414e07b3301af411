"""The command-line tools under ``python -OO``, which strips docstrings: their ``--help`` took its description from
the module's docstring (``__doc__.split(...)``) and failed with an AttributeError on ``None``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC_DESCRIPTION = '(__doc__ or "")'  # how a tool's parser takes its description from the module's docstring

# One process for every tool (their imports are what takes the time): each main's --help must print its usage.
PROBE = """
import contextlib, importlib, io, sys
assert __doc__ is None and sys.flags.optimize == 2
failed = []
for name in sys.argv[1:]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            if name.startswith("sixtysix "):
                import sixtysix_cli
                code = sixtysix_cli.main([name.split()[1], "--help"])
            else:
                code = importlib.import_module(name).main(["--help"])
        except SystemExit as stop:
            code = stop.code
        except Exception as error:
            code = f"{type(error).__name__}: {error}"
    if code != 0 or not out.getvalue().startswith("usage:"):
        failed.append(f"{name}: {code}")
print("\\n".join(failed) or "all printed their usage")
"""


def tool_modules() -> list[str]:
    """The modules with a command line (a ``main`` that builds an argparse parser), found in the source so a new
    tool is covered."""
    modules = []
    for folder in ("bench", "eval", "sixtysix_env", "train"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "\ndef main(" in text and "argparse.ArgumentParser(" in text:
                modules.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return modules


def test_every_tool_prints_its_help_when_docstrings_are_stripped():
    modules = tool_modules()
    assert len(modules) >= 30 and "eval.pool" in modules and "train.distill" in modules
    # the sixtysix subcommands that hand their options to those tools (bench.run, train.distill)
    names = modules + ["sixtysix bench", "sixtysix distill"]
    completed = subprocess.run([sys.executable, "-OO", "-c", PROBE, *names], cwd=ROOT, capture_output=True,
                               text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "all printed their usage", completed.stdout


def test_no_tool_reads_its_docstring_unguarded():
    """``__doc__`` is None under -OO: a parser must take ``(__doc__ or "")``, never ``__doc__`` itself."""
    unguarded = [f"{path.relative_to(ROOT)}:{number}"
                 for folder in ("bench", "eval", "sixtysix_env", "train", "agents", "play")
                 for path in sorted((ROOT / folder).rglob("*.py"))
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if "__doc__" in line and DOC_DESCRIPTION not in line]
    assert unguarded == []
