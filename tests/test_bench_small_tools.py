"""bench.open_solve and bench.inference_calibration: what they print is what they claim to measure, and bad
arguments are refused before any work; bench.strength_budget reads its budgets in order."""

from __future__ import annotations

import random
import re

import pytest

import agents.inference as inference
from bench import inference_calibration, open_solve
from play.analysis import OpenSolver
from refusals import refused_before
from sixtysix_env import Game, Rules


def test_open_solve_prints_the_open_value_of_each_deal(capsys):
    """The value printed for seed 7 is the open solve of ``Game.deal(Rules(), seed=7, dealer=1)`` for player 1,
    as the docstring says, and the summary counts one solved deal."""
    assert open_solve.main(["--deals", "1", "--first-seed", "7", "--budget", "120"]) == 0
    output = capsys.readouterr()
    expected = OpenSolver(1, seconds=120).value(Game.deal(Rules(), seed=7, dealer=1))
    assert re.search(rf"seed 7: value {re.escape(str(expected))}, \d+ nodes", output.out + output.err)
    assert "1 deals, median" in output.out and "0 not solved within 120 s" in output.out


@pytest.mark.parametrize("arguments, message", [
    (["--deals", "0"], "--deals must be at least 1, got 0"),
    (["--budget", "0"], "--budget must be a positive number of seconds, got 0"),
    (["--budget", "nan"], "--budget"),
])
def test_open_solve_refuses_bad_arguments_by_name(monkeypatch, capsys, arguments, message):
    assert message in refused_before(monkeypatch, capsys, open_solve.main, arguments, open_solve, "OpenSolver",
                                     "a deal was solved")


@pytest.mark.parametrize("arguments, message", [
    (["--deals", "0"], "--deals and --worlds must be positive"),
    (["--worlds", "0"], "--deals and --worlds must be positive"),
    (["--scales", "1,x"], "must be comma-separated numbers"),
    (["--scales", "0"], "--scales must be finite numbers above 0, got 0.0"),
    (["--scales", "inf"], "--scales must be finite numbers above 0, got inf"),
    (["--mixes", "1.5"], "--mixes must be finite numbers in [0, 1], got 1.5"),
    (["--mixes", "nan"], "--mixes must be finite numbers in [0, 1], got nan"),
    (["--floors", "0"], "--floors must be finite numbers in (0, 1], got 0.0"),
    (["--agent", "nosuchagent"], "--agent 'nosuchagent'"),
    (["--agreement", "pimc:nosuchparameter=1"], "--agreement 'pimc:nosuchparameter=1'"),
])
def test_inference_calibration_refuses_bad_arguments_before_the_self_play(monkeypatch, capsys, arguments, message):
    assert message in refused_before(monkeypatch, capsys, inference_calibration.main, arguments,
                                     inference_calibration, "positions", "self-play started")


def test_the_true_hand_against_itself_has_ratio_one_and_the_positions_hold_the_true_hand():
    """The calibration's figure is (likelihood of the true hand) / (mean likelihood of the sampled worlds): with
    the true hand as the only world it is exactly 1. Each position's hand is the opponent's real hand, which is
    one of the hands the information set can determinize to (the unseen cards hold it)."""
    found = inference_calibration.positions("heuristic", 2, 610)
    assert found and all(infoset.player in (0, 1) for infoset, _hand in found)
    for infoset, true_hand in found:
        world = infoset.determinize(random.Random(0))
        assert true_hand.bit_count() == world.hands[1 - infoset.player].bit_count()
        assert not true_hand & infoset.hand  # his cards, not the observer's
    ratio, count = inference_calibration.geometric_ratio("rules", found, [[hand] for _infoset, hand in found],
                                                         random.Random(0))
    assert count > 0 and ratio == pytest.approx(1.0, abs=1e-12)
    # No decision with evidence (here: none given) is a figure of no decisions, not a ZeroDivisionError.
    ratio, count = inference_calibration.geometric_ratio("rules", [], [], random.Random(0))
    assert count == 0 and ratio != ratio


def test_inference_calibration_restores_the_shipped_model_constants(capsys):
    """The run varies the module's floor, temperatures and mix to compare them; it must leave the shipped values as
    it found them, since the search agents in the same process read them."""
    shipped = (inference.RULE_FLOOR, inference.LEAD_TEMPERATURE, inference.FOLLOW_TEMPERATURE, inference.PLAY_MIX)
    assert inference_calibration.main(["--deals", "1", "--seed", "611", "--worlds", "3", "--scales", "0.5,2",
                                       "--mixes", "0.25", "--floors", "0.5"]) == 0
    out = capsys.readouterr().out
    assert (inference.RULE_FLOOR, inference.LEAD_TEMPERATURE, inference.FOLLOW_TEMPERATURE,
            inference.PLAY_MIX) == shipped
    assert "rules: geometric mean ratio" in out and "rules at floor 0.5:" in out
    # One line per scale and mix, at the temperatures asked for.
    lead, follow = inference.LEAD_TEMPERATURE, inference.FOLLOW_TEMPERATURE
    for scale in (0.5, 2):
        assert f"policy (lead {lead * scale:.3g}, follow {follow * scale:.3g} card points, mix 0.25)" in out


def test_the_fit_reports_each_kind_of_play_once_per_temperature_and_mix(capsys):
    """``--fit`` prints, for leads and for follows, the uniform baseline and one log-likelihood per temperature and
    mix; with mix 1 the model is the uniform one, so its figure is the uniform baseline."""
    assert inference_calibration.main(["--fit", "--deals", "2", "--seed", "611", "--scales", "1",
                                       "--mixes", "0.5,1"]) == 0
    out = capsys.readouterr().out
    for name in ("lead", "follow"):
        assert re.search(rf"\d+ {name}s; the model's best is the agent's in \d+%; uniform: -?\d\.\d+ nats", out)
    figures = [float(value) for value in re.findall(r"mix [\d.]+: (-?\d+\.\d+) nats", out)]
    uniform = [float(value) for value in re.findall(r"uniform: (-?\d+\.\d+) nats", out)]
    assert len(figures) == 4 and len(uniform) == 2
    # Mix 1 is the uniform model itself: its figure equals the uniform baseline, for leads and for follows.
    assert figures[1] == pytest.approx(uniform[0], abs=1e-3) and figures[3] == pytest.approx(uniform[1], abs=1e-3)


def test_strength_budget_reads_its_budgets_smallest_first():
    from bench.strength_budget import parse_budgets

    assert parse_budgets("1,0.01, 0.3,") == [0.01, 0.3, 1.0]
