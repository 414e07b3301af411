"""bench.decision_regret: regret of a search's choices against its own converged values at fixed positions."""

from __future__ import annotations

import json

import pytest

from bench.decision_regret import agents_regret, build_reference, load_reference, main

REFERENCE = "expert_v3:samples=24,seconds=none,prune=none"  # the rollouts alone, as the bench's default


def test_the_reference_has_no_regret_against_itself_and_a_random_player_has_some(tmp_path):
    """The reference agent, seeded as when it built the reference, finds the same values and picks a best action
    (regret 0 at every position); ``random`` loses something somewhere; every regret is non-negative."""
    path = tmp_path / "reference.json"
    document = build_reference(path, count=6, seed=9101, min_talon=8, spec=REFERENCE, progress=False)
    assert len(document["positions"]) == 6
    assert all(entry["talon_size"] >= 8 and len(entry["values"]) >= 2 for entry in document["positions"])
    itself, random_player = agents_regret(document, [REFERENCE, "random"], seed=9101, progress=False)
    assert itself["regrets"] == [0.0] * 6 and itself["agreement"] == 1.0
    assert all(regret >= 0 for regret in random_player["regrets"]) and random_player["mean_regret"] > 0
    # The search reports its worlds per decision (no clock: every decision all 24); random has none to report.
    assert itself["median_worlds"] == 24 and random_player["median_worlds"] is None


def test_a_reference_resumes_and_is_refused_when_made_otherwise_or_malformed(tmp_path):
    path = tmp_path / "reference.json"
    build_reference(path, count=2, seed=9102, min_talon=8, spec=REFERENCE, progress=False)
    first = json.loads(path.read_text())
    # Cut back to one position: building again completes it with the same second position.
    first_only = dict(first, positions=first["positions"][:1])
    path.write_text(json.dumps(first_only))
    assert build_reference(path, count=2, seed=9102, min_talon=8, spec=REFERENCE, progress=False) == first
    with pytest.raises(ValueError, match="was made with"):
        build_reference(path, count=3, seed=9102, min_talon=8, spec=REFERENCE, progress=False)
    # A stored position these settings do not sample (here the second put first) is refused, not resumed after.
    swapped = dict(first, positions=[first["positions"][1]])
    path.write_text(json.dumps(swapped))
    with pytest.raises(ValueError, match="its position 0 is not the one these settings sample"):
        build_reference(path, count=2, seed=9102, min_talon=8, spec=REFERENCE, progress=False)
    (tmp_path / "bad.json").write_text("{\"format\": \"something else\"}")
    with pytest.raises(ValueError, match="not a decision-regret reference"):
        load_reference(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_reference(tmp_path / "broken.json")


def test_decision_regret_refuses_bad_arguments_by_name(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--reference", str(tmp_path / "r.json"), "--positions", "0"])
    assert "--positions" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("[]")
    assert main(["--reference", str(tmp_path / "bad.json"), "--no-progress"]) == 2
    assert "not a decision-regret reference" in capsys.readouterr().err


def test_one_distillation_label_per_position_is_measured_like_an_agent(tmp_path, capsys):
    """``--labels WORLDS:HIDDEN``: the best action of one label (train/distill.py ``label.worlds``/``label.hidden``)
    at each position, scored against the reference like an agent; labels from the decider's view with many worlds
    choose better than a random player; a malformed ``--labels`` is refused by name."""
    from bench.decision_regret import labels_regret

    path = tmp_path / "reference.json"
    document = build_reference(path, count=8, seed=9103, min_talon=2, spec=REFERENCE, progress=False, max_talon=6)
    view = labels_regret(document, 64, "view")
    true_deal = labels_regret(document, 4, "true_deal")
    (random_player,) = agents_regret(document, ["random"], seed=9103, progress=False)
    for result in (view, true_deal):
        assert result["positions"] == 8 and all(regret >= 0 for regret in result["regrets"])
    assert view["agent"] == "labels:worlds=64,hidden=view"
    assert view["mean_regret"] < random_player["mean_regret"]
    assert main(["--reference", str(path), "--labels", "16:oracle", "--no-progress"]) == 2
    assert "--labels must be WORLDS:HIDDEN" in capsys.readouterr().err
    assert main(["--reference", str(path), "--positions", "8", "--seed", "9103", "--min-talon", "2", "--max-talon",
                 "6", "--reference-spec", REFERENCE, "--labels", "8:view", "--no-progress"]) == 0
    assert "| `labels:worlds=8,hidden=view` |" in capsys.readouterr().out


def test_the_standard_errors_count_deals_not_the_positions_within_them():
    """Positions of one deal share its cards and history: a position repeated within its deal adds no evidence, so
    the standard error and the paired interval stay as they were."""
    import numpy as np

    from bench.decision_regret import paired_difference, summarised

    rng = np.random.default_rng(5)
    regrets, other = rng.uniform(0, 1, 20).tolist(), rng.uniform(0, 1, 20).tolist()
    deals = list(range(20))

    def row(values, deal_ids):
        return summarised("a", values, [1.0] * len(values), [0.001] * len(values), [], [4] * len(values), deal_ids)

    single, doubled = row(regrets, deals), row(regrets * 2, deals * 2)
    assert (single["deals"], doubled["deals"], doubled["positions"]) == (20, 20, 40)
    assert doubled["regret_se"] == pytest.approx(single["regret_se"])
    assert single["regret_se"] == pytest.approx(np.std(regrets, ddof=1) / np.sqrt(20))  # one position per deal
    first = paired_difference(row(other, deals), single)
    second = paired_difference(row(other * 2, deals * 2), doubled)
    assert (second.mean, second.half_width) == pytest.approx((first.mean, first.half_width))
