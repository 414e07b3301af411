"""bench.leaf_calibration: the estimators' values against the game points the player to move scores (R16)."""

from __future__ import annotations

import json

import pytest

from bench import leaf_calibration


def test_calibration_counts_every_phase1_choice_and_fits_each_estimator(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "calibration.json"
    assert leaf_calibration.main(["--deals", "3", "--seed", "9000", "--prior", "suit_iterated", "--critic",
                                  "ppo_true_world", "--out", str(out), "--no-progress"]) == 0
    result = json.loads(out.read_text())
    expected = sum(1 for game, infoset in leaf_calibration.self_play_decisions(range(3), 9000, leaf_calibration.Rules())
                   if not game.phase2 and len(infoset.legal_actions) > 1)
    assert result["decisions"] == expected > 10
    assert set(result["estimators"]) == {"prior suit_iterated (best action)", "critic ppo_true_world"}
    for fit in result["estimators"].values():
        assert -1.0 <= fit["r"] <= 1.0


def test_calibration_refuses_no_estimator_and_a_bad_deal_count():
    with pytest.raises(SystemExit):
        leaf_calibration.main(["--deals", "3"])
    with pytest.raises(SystemExit):
        leaf_calibration.main(["--deals", "0", "--critic", "ppo_true_world"])
