"""bench.paired_spread: the paired-to-unpaired spread ratios of the rollout search's two best actions."""

from __future__ import annotations

import math

import pytest

from bench.paired_spread import main, spread_ratios


def test_spread_ratios_are_bounded_and_reproducible():
    """var(a - b) <= 2 (var a + var b) (Cauchy-Schwarz), so every ratio lies in [0, sqrt 2]; the same seed gives the
    same ratios."""
    ratios = spread_ratios(deals=2, worlds=24, seed=5, progress=False)
    assert ratios and all(0 <= ratio <= math.sqrt(2) + 1e-9 for ratio in ratios)
    assert spread_ratios(deals=2, worlds=24, seed=5, progress=False) == ratios


def test_paired_spread_refuses_bad_arguments_by_name(capsys):
    for argv, named in ((["--worlds", "1"], "--worlds"), (["--deals", "0"], "--deals")):
        with pytest.raises(SystemExit):
            main(argv)
        assert named in capsys.readouterr().err
