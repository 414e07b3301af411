"""The packages depend on each other one way only (README, "Layout"): the environment wraps the engine, agents use
the engine's public API, train and eval use agents and environments, and the human-play package uses them all while
none of them uses it. ``sixtysix_env`` never imports torch, so the engine and environments install without it.

Every import is read from the source (also those inside functions, which a plain import of the module would not
run), so a lazy import in the wrong direction is caught as well."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sixtysix_env", "agents", "train", "eval", "play", "bench", "examples")
# What each package may not import. bench and examples are users of the rest (bench measures play's open solve too,
# as the tests test it), so they have no entry.
FORBIDDEN = {
    "sixtysix_env": {"agents", "train", "eval", "play", "bench", "examples", "sixtysix_cli", "torch"},
    "agents": {"train", "eval", "play", "bench", "examples", "sixtysix_cli"},
    "train": {"play", "bench", "examples", "sixtysix_cli"},
    "eval": {"train", "play", "bench", "examples", "sixtysix_cli"},
    "play": {"train", "bench", "examples", "sixtysix_cli"},
}


def imported_top_levels(path: Path) -> set[str]:
    """The top-level names of the absolute imports in ``path``, wherever in the file they stand."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def wrong_way_imports(package: str) -> list[str]:
    return [f"{path.relative_to(ROOT)} imports {name}"
            for path in sorted((ROOT / package).rglob("*.py"))
            for name in sorted(imported_top_levels(path) & FORBIDDEN[package])]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_go_one_way(package):
    assert wrong_way_imports(package) == []


def test_the_check_reads_lazy_imports(tmp_path):
    """An import inside a function counts as much as one at the top (the check is not vacuous)."""
    source = tmp_path / "lazy.py"
    source.write_text("def load():\n    from train.tune_playout_policy import WEIGHT_NAMES\n    import torch.nn\n")
    assert imported_top_levels(source) == {"train", "torch"}


def test_every_package_is_checked_or_a_user():
    assert set(FORBIDDEN) | {"bench", "examples"} == set(PACKAGES)
    assert all((ROOT / package).is_dir() for package in PACKAGES)

