"""docs/rules.md, the project's own rules document: every R-id, every switch with the presets' true values, and only
code locations and tests that exist (so the document cannot drift from the code unnoticed)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from sixtysix_env import Rules

ROOT = Path(__file__).resolve().parent.parent
RULES_DOC = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
PRESETS = ("standard", "paderborn", "scharf")  # the columns of the switch table


def test_every_rule_id_has_its_own_section():
    headings = re.findall(r"^### (R\d+):", RULES_DOC, flags=re.M)
    assert headings == [f"R{number}" for number in range(1, 22)]


def test_switch_table_lists_every_switch_with_each_presets_value():
    rows = re.findall(r"^\| `(\w+)` \| (R\d+) \| [^|]+ \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", RULES_DOC, flags=re.M)
    table = {switch: (rule_id, [value.strip() for value in values]) for switch, rule_id, *values in rows}
    assert sorted(table) == sorted(field.name for field in dataclasses.fields(Rules))
    for switch, (rule_id, values) in table.items():
        assert re.search(rf"^### {rule_id}:.*?`{switch}`", RULES_DOC, flags=re.M | re.S), switch  # explained too
        for preset, shown in zip(PRESETS, values):
            actual = getattr(Rules.preset(preset), switch)
            assert shown == (str(actual).lower() if isinstance(actual, bool) else str(actual)), (switch, preset)


def _defined_tests() -> set[str]:
    names = set()
    for path in (ROOT / "tests").glob("test_*.py"):
        names.update(re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), flags=re.M))
    return names


@pytest.mark.parametrize("document, least", [("rules.md", 80), ("rules_coverage.md", 150)])
def test_every_cited_test_exists(document, least):
    """docs/rules.md and docs/rules_coverage.md (its error paths) cite only tests that exist, so a renamed test
    cannot leave a stale citation behind."""
    cited = set(re.findall(r"\b(test_\w+)`", (ROOT / "docs" / document).read_text(encoding="utf-8")))
    assert len(cited) > least
    missing = sorted(cited - _defined_tests())
    assert not missing, f"docs/{document} cites tests that do not exist: {missing}"


def test_every_rule_test_is_cited():
    """A new test named after a rule id belongs in the document too."""
    rule_tests = {name for name in _defined_tests() if re.match(r"test_R\d+", name)}
    uncited = sorted(name for name in rule_tests if f"{name}`" not in RULES_DOC)
    assert not uncited, f"rule tests missing from docs/rules.md: {uncited}"


@pytest.mark.parametrize("reference", sorted(set(re.findall(r"`((?:sixtysix_env|eval|agents)/\w+\.py)::([\w.]+)`", RULES_DOC))))
def test_every_cited_code_location_exists(reference):
    path, name = reference
    source = (ROOT / path).read_text(encoding="utf-8")
    for part in name.split("."):
        assert re.search(rf"^\s*(def|class) {part}\b|^{part}\b\s*[:=]|^\s*{part} *[:=]", source, flags=re.M), (path, part)


def test_no_document_points_outside_the_repository():
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        assert "../shared" not in path.read_text(encoding="utf-8"), path
    assert "(docs/rules.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
