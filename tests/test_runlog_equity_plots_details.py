"""Details of train.runlog (scalars.csv and JSON-lines run logs), bench.bummerl_equity (R17), bench.luck_intervals,
bench.paired_spread and train.plots found by mutation testing, each checked against an independent computation."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from bench.luck_intervals import entry


# --- bench.luck_intervals --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["x=a,", "x=,a", "x=a,b,c", "x=a,,"])
def test_an_intervals_entry_with_an_empty_or_third_run_is_refused_by_name(text):
    """An empty part was turned into Path('.') (the working folder) before it was checked, so it passed."""
    with pytest.raises(argparse.ArgumentTypeError, match="expected one run or two runs"):
        entry(text)
    assert entry("x=a,b") == ("x", [Path("a"), Path("b")])
    assert entry("seed 1=a") == ("seed 1", [Path("a")])
