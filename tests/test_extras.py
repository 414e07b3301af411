"""A command whose optional dependency group (an extra of pyproject.toml) is missing names the package it lacks and
the command that installs the extra, for a wheel install and for a checkout; it printed a traceback (`train`,
`distill`, `train-vector` and `bench.play_load` in a base install, found by a fresh-venv sweep)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sixtysix_env.extras import install_hint, needs_extra

# A module set to None in sys.modules raises ModuleNotFoundError on import, as a package never installed does.
HIDE = "import sys; sys.modules[{package!r}] = None; "


@pytest.mark.parametrize("package, command, extra", [
    ("yaml", "import sixtysix_cli; sys.exit(sixtysix_cli.main(['train', '--describe']))", "train"),
    ("yaml", "import sixtysix_cli; sys.exit(sixtysix_cli.main(['distill', '--help']))", "train"),
    ("yaml", "import sixtysix_cli; sys.exit(sixtysix_cli.main(['train-vector', '--help']))", "train"),
    ("rich", "import sixtysix_cli; sys.exit(sixtysix_cli.main(['play']))", "play"),
    ("starlette", "import sixtysix_cli; sys.exit(sixtysix_cli.main(['serve']))", "play"),
    ("httpx", "from bench.play_load import main; sys.exit(main(['--games', '1']))", "play"),
])
def test_a_missing_extra_is_named_with_the_command_that_installs_it(package, command, extra):
    run = subprocess.run([sys.executable, "-c", HIDE.format(package=package) + command], capture_output=True,
                         text=True, timeout=120)
    message = f"needs the package {package!r}: pip install 'sixtysix[{extra}]' (in a source checkout: " \
              f"pip install -e '.[{extra}]')"
    assert message in run.stderr + run.stdout, run.stderr[-2000:]
    assert "Traceback" not in run.stderr and run.returncode != 0


def test_needs_extra_passes_on_a_missing_module_of_the_project_itself():
    """A module of this distribution missing is a broken install or a bug: its error goes on unchanged."""
    with pytest.raises(ModuleNotFoundError):
        with needs_extra("train"):
            raise ModuleNotFoundError("No module named 'agents.nonesuch'", name="agents.nonesuch")
    with pytest.raises(ValueError, match=r"needs the package 'rich': pip install 'sixtysix\[play\]'"):
        with needs_extra("play"):
            raise ModuleNotFoundError("No module named 'rich.console'", name="rich.console")
    assert install_hint("ray") == "pip install 'sixtysix[ray]' (in a source checkout: pip install -e '.[ray]')"
