"""What a plain ``pip install`` (not editable) of the project gets: the libraries of the main job and the shipped
model files (a packaging review found both missing: ``sixtysix tournament --help`` crashed without scipy, and every
network alias such as ``expert`` had no model to load)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

from test_layering import imported_top_levels

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_main_jobs_libraries_are_base_dependencies():
    """``sixtysix tournament``/``match``/``replay`` (the README's main job) import scipy (eval/stats.py), tqdm and
    matplotlib (the cross-table every run writes): a plain ``pip install`` must bring them, not an extra."""
    project = PROJECT["project"]
    base = {requirement.split(">")[0].split("=")[0].split("[")[0].strip().lower()
            for requirement in project["dependencies"]}
    assert {"scipy", "tqdm", "matplotlib"} <= base
    assert "scipy" in imported_top_levels(ROOT / "eval" / "stats.py")
    assert "matplotlib" in imported_top_levels(ROOT / "eval" / "report.py")


def test_every_shipped_model_file_is_package_data():
    """agents.base.MODELS_DIR is ``models`` beside ``agents``: the folder is a package whose data globs cover every
    file in it, so the wheel and the sdist carry all of them."""
    from agents.base import MODELS_DIR

    setuptools = PROJECT["tool"]["setuptools"]
    assert MODELS_DIR == ROOT / "models" and (MODELS_DIR / "__init__.py").is_file()
    assert "models" in setuptools["packages"]["find"]["include"]
    globs = setuptools["package-data"]["models"] + setuptools["package-data"].get("*", [])
    files = [path.name for path in MODELS_DIR.iterdir() if path.is_file() and path.suffix != ".py"]
    assert files and all(any(fnmatch.fnmatch(name, glob) for glob in globs) for name in files), files


def _requirement_names(requirements: list[str]) -> set[str]:
    return {requirement.split(">")[0].split("=")[0].split("[")[0].split(";")[0].strip().lower()
            for requirement in requirements}


def test_the_play_extra_holds_what_playing_imports_and_no_test_tools():
    """``pip install 'sixtysix[play]'`` is for people who play: every library that ``play/`` imports comes with the
    base dependencies or the extra, and the tools only the tests drive (pexpect, playwright) come with ``dev``."""
    import sys

    project = PROJECT["project"]
    play_extra = _requirement_names(project["optional-dependencies"]["play"])
    provided = _requirement_names(project["dependencies"]) | play_extra
    own = {"sixtysix_env", "agents", "eval", "train", "bench", "play", "models", "sixtysix_cli"}
    imported = set().union(*(imported_top_levels(path) for path in (ROOT / "play").rglob("*.py")))
    third_party = imported - set(sys.stdlib_module_names) - own
    assert third_party and third_party <= provided, sorted(third_party - provided)
    test_tools = {"pexpect", "playwright"}
    assert not play_extra & test_tools
    assert test_tools <= _requirement_names(project["optional-dependencies"]["dev"])
