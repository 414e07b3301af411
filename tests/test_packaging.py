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


def _tracked_files() -> list[str] | None:
    """The files git tracks in this checkout (with their working-tree content), or None outside a git checkout."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in listing.decode().split("\0") if name and (ROOT / name).is_file()]


def test_the_sdist_holds_every_tracked_file_so_its_tests_run_from_it(tmp_path):
    """An sdist built from the tracked files holds every one of them (but .gitignore): the tests' helpers
    (conftest.py), the configs the training commands and tests read, the docs the rule-citation tests read. Before
    MANIFEST.in it held only the packages and the ``test*.py`` files, so its test suite could not run."""
    import shutil
    import subprocess
    import sys
    import tarfile

    import pytest

    tracked = _tracked_files()
    if tracked is None:
        pytest.skip("not a git checkout")
    source = tmp_path / "source"
    for name in tracked:  # a copy, so that the build's egg-info is not written into the checkout
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    build = ("import sys; from setuptools import build_meta; "
             "print(build_meta.build_sdist(sys.argv[1]))")
    result = subprocess.run([sys.executable, "-c", build, str(tmp_path / "dist")], cwd=source, capture_output=True,
                            text=True, check=True)
    archive = tmp_path / "dist" / result.stdout.strip().splitlines()[-1]
    with tarfile.open(archive) as sdist:
        members = {member.name.split("/", 1)[1] for member in sdist.getmembers()
                   if member.isfile() and "/" in member.name}
    missing = sorted(set(tracked) - members - {".gitignore"})
    assert not missing, missing
    assert "configs/ppo_smoke.yaml" in members and "tests/conftest.py" in members and "docs/rules.md" in members


def test_every_package_data_glob_names_tracked_files_of_its_package():
    """Each package-data glob matches files git tracks in the package it names, and none is a catch-all ``"*"``: a
    catch-all took any stray JSON or YAML (a results file, a config copied next to the code) into a wheel built
    from a working tree."""
    import pytest

    tracked = _tracked_files()
    if tracked is None:
        pytest.skip("not a git checkout")
    package_data = PROJECT["tool"]["setuptools"]["package-data"]
    assert "*" not in package_data
    for package, globs in package_data.items():
        folder = package.replace(".", "/") + "/"
        in_package = [name[len(folder):] for name in tracked if name.startswith(folder)]
        for glob in globs:
            assert any(fnmatch.fnmatch(name, glob) for name in in_package), (package, glob)
