"""bench.closing_premium: the clairvoyance premium of a search's closings (R10), measured by forking the true deal."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from agents.solver import solve_value
from bench import closing_premium
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE

SEARCH = "expert_v3:samples=24,seconds=none"  # a small clock-free rollout search without a network


def test_r10_every_row_is_a_legal_closing_of_the_searcher_solved_on_the_true_deal():
    """Each row is a lead of the searcher in its seat with closing legal and more than two talon cards (R10); its
    'solved' figure is the exact value of the true deal after the closing, its 'played' one a game result (R16),
    and its world figures are the twin search's over all its worlds."""
    rows = closing_premium.premium_rows(range(6), 200, SEARCH, "heuristic", progress=False)
    assert len(rows) >= 6
    for row in rows:
        game = Game.deal(Rules.preset("standard"), seed=200 + row["deal"], dealer=row["deal"] % 2)
        for action in row["history"]:
            game.apply(action)
        infoset = InformationSet(game, game.current_player)
        assert infoset.player == closing_premium.searcher_seat(row["deal"])
        assert CLOSE in infoset.legal_actions and game.talon_size == row["talon"] > 2
        game.apply(CLOSE)
        assert solve_value(game) == row["solved_true"]
        assert -3 <= row["honest_true"] <= 3 and row["honest_true"] != 0
        assert row["worlds"] == 24 and row["close_std"] >= 0 and -3 <= row["close_mean"] <= 3
    assert {closing_premium.searcher_seat(deal) for deal in range(4)} == {0, 1}


def test_rows_repeat_and_do_not_depend_on_the_worker_count():
    one = closing_premium.premium_rows(range(4), 201, SEARCH, "heuristic", workers=1, progress=False)
    two = closing_premium.premium_rows(range(4), 201, SEARCH, "heuristic", workers=2, progress=False)
    assert one == two and one


def test_summary_is_the_mean_and_the_least_squares_slope_of_the_premium():
    rows = [{"deal": deal, "close_mean": mean, "best_other": 0.0, "close_std": spread, "solved_true": solved,
             "honest_true": played, "closed": closed}
            for deal, (mean, spread, solved, played, closed) in enumerate(
                [(0.5, 0.0, 1, 1, True), (-0.5, 1.0, 2, -2, False), (2.0, 1.4, 1, -2, False),
                 (0.2, 0.5, -2, -2, True), (-0.8, 1.2, 3, 1, True)])]
    result = closing_premium.summary(rows, within=1.0)
    near = [row for row in rows if abs(row["close_mean"]) < 1.0]
    premium = [row["solved_true"] - row["honest_true"] for row in near]
    fit = stats.linregress([row["close_std"] for row in near], premium)
    assert result["near"]["leads"] == 4 and result["every_lead"]["leads"] == 5 and result["closed"]["leads"] == 3
    assert result["near"]["premium"] == pytest.approx(np.mean(premium))
    assert result["near"]["slope"] == pytest.approx(fit.slope)
    assert result["near"]["slope_low"] < fit.slope < result["near"]["slope_high"]
    assert result["world_calibration"]["mean"] == pytest.approx(np.mean([r["solved_true"] - r["close_mean"]
                                                                           for r in near]))
    assert sum(bin_["leads"] for bin_ in result["near_by_spread"]) == 4
    for bin_ in result["near_by_spread"]:  # each bin: its leads' mean premium and spread, with a t interval
        inside = [row for row in near if bin_["low"] <= row["close_std"] < (bin_["high"] or np.inf)]
        if inside:
            assert bin_["premium"] == pytest.approx(np.mean([r["solved_true"] - r["honest_true"] for r in inside]))
            assert bin_["mean_spread"] == pytest.approx(np.mean([r["close_std"] for r in inside]))
        if len(inside) > 1:
            assert bin_["premium_low"] <= bin_["premium"] <= bin_["premium_high"]


def test_command_writes_rows_and_summary_and_refuses_bad_arguments(tmp_path, capsys):
    out = tmp_path / "premium.json"
    assert closing_premium.main(["--deals", "2", "--agent", SEARCH, "--out", str(out), "--no-progress"]) == 0
    written = json.loads(out.read_text())
    assert written["summary"]["every_lead"]["leads"] == len(written["rows"])
    again, plot = tmp_path / "again.json", tmp_path / "premium.png"
    assert closing_premium.main(["--from", str(out), "--plot", str(plot), "--out", str(again)]) == 0
    assert json.loads(again.read_text()) == written  # the same rows summed up again
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**written, "rows": [{"close_mean": 1.0}]}))
    dealless = tmp_path / "dealless.json"  # every key but the deal, which the intervals over deals need
    dealless.write_text(json.dumps({**written, "rows": [{key: value for key, value in row.items() if key != "deal"}
                                                        for row in written["rows"]]}))
    assert written["rows"], "the two deals gave no lead to strip"
    with pytest.raises(SystemExit):
        closing_premium.main(["--from", str(dealless), "--no-progress"])
    assert "row 0 lacks deal" in capsys.readouterr().err
    # A value of the wrong kind is refused by row and key, not met by a traceback in the summary.
    for key, value, wanted in (("close_std", "0.5", "a finite number"), ("deal", None, "a finite number"),
                               ("solved_true", True, "a finite number"), ("closed", 1, "true or false")):
        mistyped = tmp_path / "mistyped.json"
        mistyped.write_text(json.dumps({**written, "rows": [{**written["rows"][0], key: value}]}))
        with pytest.raises(SystemExit):
            closing_premium.main(["--from", str(mistyped), "--no-progress"])
        assert f"row 0: {key} must be {wanted}, got {value!r}" in capsys.readouterr().err
    listless = tmp_path / "listless.json"
    listless.write_text(json.dumps({**written, "rows": {"0": written["rows"][0]}}))
    with pytest.raises(SystemExit):
        closing_premium.main(["--from", str(listless), "--no-progress"])
    assert "its rows are not a list" in capsys.readouterr().err
    numbers = tmp_path / "numbers.json"  # rows that are not objects: named by row, not a bare TypeError
    numbers.write_text(json.dumps({**written, "rows": [written["rows"][0], 7]}))
    with pytest.raises(SystemExit):
        closing_premium.main(["--from", str(numbers), "--no-progress"])
    assert "row 1 is not an object of " in capsys.readouterr().err
    # The file says which deals were played and by whom: a value given beside it would be silently replaced.
    for option, value in (("--deals", "5"), ("--seed", "201"), ("--first", "0"), ("--agent", SEARCH),
                          ("--opponent", "heuristic")):
        with pytest.raises(SystemExit):
            closing_premium.main(["--from", str(out), option, value, "--no-progress"])
        assert f"{option} is read from the --from file" in capsys.readouterr().err
    for bad in (["--deals", "0"], ["--workers", "0"], ["--within", "0"], ["--agent", "heuristic"],
                ["--opponent", "nobody"], ["--from", str(broken)], ["--from", str(tmp_path / "missing.json")]):
        with pytest.raises(SystemExit):
            closing_premium.main(bad + ["--no-progress"])


def test_the_intervals_count_deals_not_the_leads_within_them():
    """A deal's leads share its cards and its play: each lead repeated within its deal adds no evidence, so the
    premium's interval and the slope's stay as they were (they would narrow by about a root of two were the leads
    counted as independent)."""
    rng = np.random.default_rng(3)
    single = [{"deal": deal, "close_mean": 0.0, "best_other": 0.0, "close_std": float(rng.uniform(0, 2)),
               "solved_true": int(rng.integers(-3, 4)), "honest_true": int(rng.integers(-3, 4)), "closed": True}
              for deal in range(30)]
    doubled = [dict(row) for row in single for _ in range(2)]
    one, two = closing_premium.summary(single)["every_lead"], closing_premium.summary(doubled)["every_lead"]
    assert (one["leads"], one["deals"], two["leads"], two["deals"]) == (30, 30, 60, 30)
    assert two["premium"] == pytest.approx(one["premium"])
    assert two["premium_high"] - two["premium_low"] == pytest.approx(one["premium_high"] - one["premium_low"])
    assert two["slope"] == pytest.approx(one["slope"])
    width_one, width_two = one["slope_high"] - one["slope_low"], two["slope_high"] - two["slope_low"]
    assert width_two == pytest.approx(width_one, rel=0.05)
    # With one lead per deal the cluster standard error is close to the textbook one (linregress).
    premium = [row["solved_true"] - row["honest_true"] for row in single]
    fit = stats.linregress([row["close_std"] for row in single], premium)
    assert width_one / 2 == pytest.approx(stats.t.ppf(0.975, 28) * fit.stderr, rel=0.5)
