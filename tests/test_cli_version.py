"""``sixtysix --version``: the installed package's version (importlib.metadata), the source tree's when not installed."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import sixtysix_cli
import sixtysix_env

PYPROJECT_VERSION = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]["version"]


def test_version_option_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as stopped:
        sixtysix_cli.main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.strip() == f"sixtysix {importlib.metadata.version('sixtysix')}"


def test_version_sources_agree_with_pyproject():
    assert importlib.metadata.version("sixtysix") == PYPROJECT_VERSION
    assert sixtysix_env.__version__ == PYPROJECT_VERSION  # the fallback must not drift from the release number


def test_version_falls_back_to_the_source_tree(monkeypatch, capsys):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    with pytest.raises(SystemExit):
        sixtysix_cli.main(["--version"])
    assert capsys.readouterr().out.strip() == f"sixtysix {sixtysix_env.__version__} (not installed: version of the source tree)"


def test_console_script_version():
    result = subprocess.run([sys.executable, "-m", "sixtysix_cli", "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("sixtysix ") and not result.stderr


def test_installed_metadata_names_the_license_as_an_spdx_expression():
    # PEP 639: setuptools stops building the old `license = {text = ...}` table after 2027-02-18.
    metadata = importlib.metadata.metadata("sixtysix")
    assert metadata["License-Expression"] == "MIT"
    assert "LICENSE" in (metadata.get_all("License-File") or [])
