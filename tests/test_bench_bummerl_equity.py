"""bench.bummerl_equity: deals from Bummerl scores, valued by the change of the chance to win the Bummerl (R17)."""

from __future__ import annotations

import pytest

from bench.bummerl_equity import equity_of, main, paired, run, score_visits


def test_R17_score_visits_by_hand_for_a_target_of_two_with_one_point_deals():
    """Target 2, one-point deals won half each: 0:0 once, 1:0 and 0:1 half a time each, 1:1 half a time (after a
    split); a Bummerl lasts 2 deals (two wins in a row, 1/2) or 3 (1/2): 2.5 deals."""
    visits = score_visits(2, (1.0, 0.0, 0.0))
    assert visits == pytest.approx({(0, 0): 1.0, (1, 0): 0.5, (0, 1): 0.5, (1, 1): 0.5})
    assert sum(visits.values()) == pytest.approx(2.5)


def test_R17_every_bummerl_ends_once_from_the_visited_scores():
    """The chance that a deal ends the Bummerl, summed over the visits, is 1 (R17: a Bummerl ends at 7)."""
    visits = score_visits(7)
    from agents.match_equity import DEAL_RESULT_SHARES
    ends = 0.0
    for (mine, theirs), count in visits.items():
        for points, share in enumerate(DEAL_RESULT_SHARES, start=1):
            ends += count * 0.5 * share * ((mine + points >= 7) + (theirs + points >= 7))
    assert ends == pytest.approx(1.0)
    assert equity_of(7, 3, 7) == 1.0 and equity_of(2, 9, 7) == 0.0 and equity_of(3, 3, 7) == pytest.approx(0.5)


def test_runs_reproduce_and_compare_only_on_the_same_deals(tmp_path, capsys):
    first = run("heuristic", "random", deals=3, seed=9103, progress=False)
    assert first == run("heuristic", "random", deals=3, seed=9103, progress=False)
    assert all(-1.0 <= row["equity_change"] <= 1.0 and max(row["score"]) < 7 for row in first["rows"])
    assert "minus" in paired(first, first)
    with pytest.raises(ValueError, match="same seed"):
        paired(first, run("heuristic", "random", deals=3, seed=9104, progress=False))
    (tmp_path / "bad.json").write_text("[]")
    assert main(["--minus", str(tmp_path / "bad.json"), str(tmp_path / "bad.json")]) == 2
    assert "not a file of bench.bummerl_equity" in capsys.readouterr().err
    # --minus writes nothing: an --out (or a run's options) beside it is refused, not silently dropped
    for extra in (["--out", str(tmp_path / "o.json")], ["--deals", "99"], ["heuristic", "random"]):
        with pytest.raises(SystemExit):
            main(["--minus", str(tmp_path / "bad.json"), str(tmp_path / "bad.json"), *extra])
        assert "--minus compares two result files; it takes no" in capsys.readouterr().err
    longer = run("heuristic", "random", deals=5, seed=9103, progress=False)
    assert "3 deal pairs (2 deal pair(s) of the longer run have no twin" in paired(longer, first)


def test_R17_score_visits_and_equity_of_a_stronger_player():
    """Target 2, one-point deals, A winning 0.6 of them: 1:0 is visited 0.6 of a time, 0:1 0.4, 1:1 after either
    split (0.48); from 0:0 he wins two in a row or one of the two after a split: 0.36 + 0.48 * 0.6."""
    visits = score_visits(2, (1.0, 0.0, 0.0), win_chance=0.6)
    assert visits == pytest.approx({(0, 0): 1.0, (1, 0): 0.6, (0, 1): 0.4, (1, 1): 0.48})
    from agents.match_equity import bummerl_equity
    assert bummerl_equity(2, (1.0, 0.0, 0.0), win_chance=0.6)[2, 2] == pytest.approx(0.36 + 0.48 * 0.6)
    assert equity_of(0, 0, 7, 0.6) > 0.5 and equity_of(6, 0, 7, 0.6) > equity_of(6, 0, 7)


def test_runs_in_different_tables_are_not_compared(tmp_path):
    equal = run("heuristic", "random", deals=2, seed=9105, progress=False)
    stronger = run("heuristic", "random", deals=2, seed=9105, progress=False, win_chance=0.6)
    assert stronger["win_chance"] == 0.6 and equal["win_chance"] == 0.5
    with pytest.raises(ValueError, match="same equity table"):
        paired(stronger, equal)
    with pytest.raises(ValueError, match="win_chance"):
        run("heuristic", "random", deals=2, seed=9105, progress=False, win_chance=1.0)
