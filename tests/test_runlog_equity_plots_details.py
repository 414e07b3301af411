"""Details of train.runlog (scalars.csv and JSON-lines run logs), bench.bummerl_equity (R17), bench.luck_intervals,
bench.paired_spread and train.plots found by mutation testing, each checked against an independent computation."""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from agents import make_agent
from agents.match_equity import DEAL_RESULT_SHARES, bummerl_equity
from bench.bummerl_equity import paired, score_visits, summary
from bench.luck_intervals import entry
from bench.paired_spread import spread_ratios
from eval.deals import generate_deals
from reference_stats import t_interval
from sixtysix_env import Rules
from sixtysix_env.actions import NUM_ACTIONS
from train.plots import learning_curve_png, load_scalars
from train.plots import main as plots_main
from train.runlog import ScalarsCsv, truncate_log


# --- train.runlog ------------------------------------------------------------------------------------------------

def _csv_rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_a_scalars_table_appended_after_a_kill_drops_the_torn_last_row_first(tmp_path):
    """A run resumed without a step to keep through (keep_through None) appends to the table a kill left: a torn
    last row "2,a,0." was continued by the next row ("2,a,0.3,loss,0.25"), which load_scalars read as tag a's
    value 0.3 at step 2."""
    path = tmp_path / "scalars.csv"
    path.write_text("step,tag,value\r\n1,a,0.5\r\n2,a,0.", encoding="utf-8")
    with ScalarsCsv(path) as log:
        log.add(3, "loss", 0.25)
    assert _csv_rows(path) == [["step", "tag", "value"], ["1", "a", "0.5"], ["3", "loss", "0.25"]]
    path.write_text("ste", encoding="utf-8")  # a torn header: the table starts again with a whole one
    with ScalarsCsv(path) as log:
        log.add(1, "loss", 0.5)
    assert _csv_rows(path) == [["step", "tag", "value"], ["1", "loss", "0.5"]]
    assert [p.name for p in tmp_path.iterdir()] == ["scalars.csv"]  # no temporary file left
    with ScalarsCsv(tmp_path / "new.csv") as log:  # a new run's table
        log.add(0, "loss", 1.0)
    assert _csv_rows(tmp_path / "new.csv") == [["step", "tag", "value"], ["0", "loss", "1.0"]]


def test_truncating_a_log_keeps_a_row_at_the_step_and_rows_of_non_ascii_tags(tmp_path):
    path = tmp_path / "scalars.csv"
    rows = [["step", "tag", "value"], ["0", "eval/ümlaut/margin", "1.5"], ["3", "a", "2"], ["4", "a", "3"]]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    truncate_log(path, 3)
    assert _csv_rows(path) == rows[:3]
    truncate_log(path, 0)
    assert _csv_rows(path) == rows[:2]
    lines = tmp_path / "eval.jsonl"
    lines.write_text('{"step": 0, "x": "ü"}\n{"step": 2}\n{"step": 3}\n', encoding="utf-8")
    truncate_log(lines, 2, step_of=lambda line: json.loads(line)["step"])
    assert lines.read_text(encoding="utf-8") == '{"step": 0, "x": "ü"}\n{"step": 2}\n'


def test_a_row_without_a_step_number_is_refused_naming_its_first_cell(tmp_path):
    path = tmp_path / "scalars.csv"
    for cell in ("X5", "5-", "--5"):
        path.write_text(f"step,tag,value\n1,a,1\n{cell},a,1\n", encoding="utf-8")
        with pytest.raises(ValueError, match=re.escape(f"line 3 has no step to read (its first cell is not a step "
                                                       f"number: [{cell!r}])")):
            truncate_log(path, 3)


# --- bench.bummerl_equity (R17) ----------------------------------------------------------------------------------

def _deals_per_bummerl(win_chance: float, target: int = 7) -> float:
    """The expected number of deals of a Bummerl from 0:0 (R17), by first-step analysis over the scores."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def deals_from(mine: int, theirs: int) -> float:
        if mine >= target or theirs >= target:
            return 0.0
        return 1.0 + sum(share * (win_chance * deals_from(mine + points, theirs)
                                  + (1 - win_chance) * deals_from(mine, theirs + points))
                         for points, share in enumerate(DEAL_RESULT_SHARES, start=1))

    return deals_from(0, 0)


class _FakeGame:
    """Stands in for Game in bench.bummerl_equity: records the deck and dealer each game is dealt from."""

    dealt: list = []

    @classmethod
    def deal(cls, rules, deck=None, dealer=0, seed=None):
        cls.dealt.append((list(deck), dealer))
        return ("game", len(cls.dealt) - 1)


def _fake_run(monkeypatch, deals: int, seed: int, win_chance: float, gains=(3, -2)):
    """bench.bummerl_equity.run with every game's result set: A gains ``gains[0]`` game points from seat 0 and
    ``gains[1]`` from seat 1 (negative: B gains them); returns the document and the recorded calls."""
    import bench.bummerl_equity as module

    calls = []

    def play_deal(game, seated, seeds, match_score=None):
        seat_a = len(calls) % 2  # the two games of a pair: A in seat 0, then in seat 1
        calls.append({"game": game, "seated": list(seated), "seeds": list(seeds), "match_score": match_score})
        returns = [0, 0]
        returns[seat_a], returns[1 - seat_a] = gains[seat_a], -gains[seat_a]
        return SimpleNamespace(returns=tuple(returns))

    _FakeGame.dealt = []
    monkeypatch.setattr(module, "Game", _FakeGame)
    monkeypatch.setattr(module, "play_deal", play_deal)
    document = module.run("heuristic", "random", deals=deals, seed=seed, progress=False, win_chance=win_chance)
    return document, calls


def test_a_bummerl_equity_run_values_each_game_by_the_equity_table_from_each_players_own_score(monkeypatch):
    """R17: each deal pair is played from one drawn score with the seats swapped (each agent keeping his score),
    from the same deck and dealer; a game is worth A's equity after it minus before, in the table of the chance
    given (agents.match_equity.bummerl_equity, indexed by the points each still needs)."""
    win_chance = 0.6
    document, calls = _fake_run(monkeypatch, deals=40, seed=77, win_chance=win_chance)
    table = bummerl_equity(7, win_chance=win_chance)

    def equity(mine, theirs):
        return table[max(7 - mine, 0), max(7 - theirs, 0)]

    deals = generate_deals(77, 40, Rules())
    assert len(document["rows"]) == 40 and len(calls) == 80
    assert document["win_chance"] == win_chance and document["agents"] == ["heuristic", "random"]
    assert document["deals_per_bummerl"] == pytest.approx(_deals_per_bummerl(win_chance))
    a_agent, b_agent = calls[0]["seated"]
    assert type(a_agent) is type(make_agent("heuristic")) and type(b_agent) is type(make_agent("random"))
    for index, row in enumerate(document["rows"]):
        first, second = calls[2 * index], calls[2 * index + 1]
        mine, theirs = row["score"]
        assert row["deal"] == index and 0 <= mine < 7 and 0 <= theirs < 7
        assert first["seated"] == [a_agent, b_agent] and second["seated"] == [b_agent, a_agent]
        assert first["match_score"] == (mine, theirs) and second["match_score"] == (theirs, mine)
        expected_deck = (list(deals[index].deck), deals[index].dealer)
        assert _FakeGame.dealt[2 * index] == _FakeGame.dealt[2 * index + 1] == expected_deck
        before = equity(mine, theirs)
        changes = [equity(mine + 3, theirs) - before, equity(mine, theirs + 2) - before]
        assert row["equity_change"] == pytest.approx(sum(changes) / 2)
        assert row["margin"] == pytest.approx((3 - 2) / 2)
    seeds = [seed for call in calls for seed in call["seeds"]]
    assert len(set(seeds)) == len(seeds)  # every agent in every game is seeded afresh
    again, _ = _fake_run(monkeypatch, deals=40, seed=77, win_chance=win_chance)
    assert again == document
    with pytest.raises(ValueError, match="win_chance must be a share"):
        _fake_run(monkeypatch, deals=2, seed=77, win_chance=1.0)
    assert _FakeGame.dealt == []  # refused before the first game


def test_score_visits_by_hand_when_every_deal_is_won_by_two_game_points():
    """R17: target 4, every deal worth 2 game points (R16): 0:0, then 2:0 or 0:2 half a time each, 2:2 after a
    split; odd scores are never visited. Target 2: the first deal ends the Bummerl."""
    def visited(target):
        return {score: count for score, count in score_visits(target, (0.0, 1.0, 0.0)).items() if count}

    assert visited(4) == pytest.approx({(0, 0): 1.0, (2, 0): 0.5, (0, 2): 0.5, (2, 2): 0.5})
    assert visited(2) == {(0, 0): 1.0}


def test_bummerl_equity_draws_the_scores_where_bummerls_pass(monkeypatch):
    """R17: the starting scores are drawn in proportion to how often a Bummerl between such players passes them
    (score_visits, checked against a first-step recursion for its total): a chi-square test of the drawn counts."""
    from scipy import stats

    document, _ = _fake_run(monkeypatch, deals=3000, seed=5, win_chance=0.5, gains=(1, 1))
    visits = score_visits()  # R17's target, 7, between equal players
    assert sum(visits.values()) == pytest.approx(_deals_per_bummerl(0.5))
    drawn = Counter(tuple(row["score"]) for row in document["rows"])
    assert set(drawn) <= set(visits)
    scores = sorted(visits)
    total = sum(visits.values())
    expected = np.array([visits[score] / total * 3000 for score in scores])
    observed = np.array([drawn.get(score, 0) for score in scores])
    assert stats.chisquare(observed, expected).pvalue > 1e-4
    assert drawn[(0, 0)] == pytest.approx(3000 / total, rel=0.2)  # 0:0 starts every Bummerl: the likeliest


def _numbers(text: str) -> list[float]:
    return [float(number) for number in re.findall(r"[-+]?\d+\.\d+", text)]


def _equity_document(rows: int, seed: int, win_chance: float, first_agent: str = "expert") -> dict:
    generator = np.random.default_rng(seed)
    changes, margins = generator.normal(0.02, 0.1, rows), generator.normal(0.3, 1.5, rows)
    return {"format": "sixtysix-bummerl-equity", "agents": [first_agent, "heuristic"], "seed": 95, "deals": rows,
            "win_chance": win_chance, "deals_per_bummerl": 8.25,
            "rows": [{"deal": k, "score": [0, 0], "equity_change": float(changes[k]), "margin": float(margins[k])}
                     for k in range(rows)]}


def test_bummerl_equity_summary_scales_the_per_deal_interval_by_the_deals_of_a_bummerl():
    """R17: the summary's intervals are t intervals of the rows (scipy), the per-Bummerl one that times the deals
    of a Bummerl, beside the table's chance at 0:0."""
    document = _equity_document(30, 1, 0.6)
    text = summary(document)
    lines = text.splitlines()
    assert lines[0].startswith("expert vs heuristic: 30 deal pairs (seed 95, A winning 0.6 ")
    change = t_interval([row["equity_change"] for row in document["rows"]])
    margin = t_interval([row["margin"] for row in document["rows"]])
    assert _numbers(lines[1]) == pytest.approx(change, abs=6e-5)
    per_bummerl = _numbers(lines[2])
    assert per_bummerl[0] == 8.25 and per_bummerl[1] == pytest.approx(bummerl_equity(7, win_chance=0.6)[7, 7],
                                                                       abs=6e-4)
    assert per_bummerl[2:] == pytest.approx([8.25 * value for value in change], abs=6e-4)
    assert _numbers(lines[3]) == pytest.approx(margin, abs=6e-4)
    assert "0:0, 0.500)" in summary(_equity_document(30, 1, 0.5))
    older = _equity_document(30, 1, 0.5)
    del older["win_chance"]  # a file of before --win-chance: equal players
    assert "A winning 0.5 of" in summary(older) and "0:0, 0.500)" in summary(older)


def test_bummerl_equity_minus_takes_the_pair_by_pair_difference_of_the_common_deals():
    """R17: --minus compares deal pair k of one run with deal pair k of the other (the same deals and scores); the
    longer run's extra pairs are left out and counted."""
    first, second = _equity_document(12, 2, 0.5), _equity_document(10, 3, 0.5, first_agent="expert_v3")
    text = paired(first, second)
    lines = text.splitlines()
    assert lines[0] == ("expert minus expert_v3 (both against heuristic), 10 deal pairs (2 deal pair(s) of the "
                        "longer run have no twin and are left out):")
    differences = [first["rows"][k]["equity_change"] - second["rows"][k]["equity_change"] for k in range(10)]
    margins = [first["rows"][k]["margin"] - second["rows"][k]["margin"] for k in range(10)]
    change = t_interval(differences)
    assert _numbers(lines[1]) == pytest.approx([*change, *(8.25 * value for value in change)], abs=6e-4)
    assert _numbers(lines[2]) == pytest.approx(t_interval(margins), abs=6e-4)
    assert paired(first, _equity_document(12, 4, 0.5)).splitlines()[0] == (
        "expert minus expert (both against heuristic), 12 deal pairs:")
    older = _equity_document(10, 3, 0.5)
    del older["win_chance"]  # a file of before --win-chance: equal players
    assert "10 deal pairs" in paired(older, first) and "10 deal pairs" in paired(first, older)
    for one, other in ((first, _equity_document(12, 4, 0.6)), (_equity_document(12, 4, 0.6), first),
                       (older, _equity_document(12, 4, 0.6))):
        with pytest.raises(ValueError, match="same equity table"):
            paired(one, other)
    other_opponent = {**second, "agents": ["expert_v3", "random"]}
    with pytest.raises(ValueError, match="same opponent"):
        paired(first, other_opponent)


@pytest.mark.parametrize("change, fragment", [
    ({"rows": [{"equity_change": "0.1", "margin": 1}]}, "row 0 equity_change must be a finite number, got '0.1'"),
    ({"rows": [{"equity_change": 0.1, "margin": 1}, {"equity_change": 0.1, "margin": None}]},
     "row 1 margin must be a finite number, got None"),
    ({"deals_per_bummerl": "many"}, "deals_per_bummerl must be a positive number, got 'many'"),
    ({"deals_per_bummerl": 0}, "deals_per_bummerl must be a positive number, got 0"),
    ({"win_chance": 1.5}, "win_chance must be a share of scored deals strictly between 0 and 1, got 1.5"),
    ({"agents": ["expert", 7]}, "agents must be two agent specs, got ['expert', 7]"),
    ({"agents": ["expert"]}, "need two agents and at least one row"),
    ({"agents": "expert"}, "need two agents and at least one row"),
    ({"rows": []}, "need two agents and at least one row"),
    ({"rows": {"0": 1}}, "need two agents and at least one row"),
    ({"rows": [{"margin": 1}]}, "row 0 lacks equity_change"),
    ({"rows": [{"equity_change": 0.1, "margin": 1}, [0.1, 1]]}, "row 1 lacks equity_change, margin"),
])
def test_bummerl_equity_minus_refuses_a_results_file_with_a_value_of_the_wrong_kind(change, fragment, tmp_path,
                                                                                    capsys):
    """A results file whose numbers are text (or missing) was read, then failed in the arithmetic with a TypeError
    traceback; it is refused by file, row and key."""
    from bench.bummerl_equity import main

    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(_equity_document(3, 1, 0.5)))
    bad.write_text(json.dumps({**_equity_document(3, 1, 0.5), **change}))
    assert main(["--minus", str(good), str(good)]) == 0
    capsys.readouterr()
    assert main(["--minus", str(bad), str(good)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: bummerl equity results {str(bad)!r}") and fragment in error
    assert "Traceback" not in error


def test_bummerl_equity_writes_a_run_that_minus_reads_back_and_compares(monkeypatch, tmp_path, capsys):
    """R17: a run's --out file is the document run() made, which --minus reads back (FIRST minus SECOND)."""
    from bench.bummerl_equity import load, main

    _fake_run(monkeypatch, deals=1, seed=1, win_chance=0.5)  # the fakes of play and deal
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert main(["heuristic", "random", "--deals", "3", "--seed", "6", "--win-chance", "0.6", "--no-progress",
                 "--out", str(first)]) == 0
    document = load(first)
    assert document["agents"] == ["heuristic", "random"] and document["seed"] == 6 and document["deals"] == 3
    assert document["win_chance"] == 0.6 and len(document["rows"]) == 3
    assert capsys.readouterr().out == summary(document) + "\n"
    assert main(["greedy", "random", "--deals", "3", "--seed", "6", "--win-chance", "0.6", "--no-progress",
                 "--out", str(second)]) == 0
    capsys.readouterr()
    assert main(["--minus", str(second), str(first)]) == 0
    assert capsys.readouterr().out == paired(load(second), document) + "\n"
    assert main(["--deals", "2", "--no-progress", "heuristic", "random"]) == 0
    assert "heuristic vs random: 2 deal pairs (seed 0, A winning 0.5 " in capsys.readouterr().out


@pytest.mark.parametrize("arguments, fragment", [
    (["heuristic"], "give two agents (A and B), or --minus FIRST SECOND"),
    (["heuristic", "random", "--deals", "0"], "--deals must be positive"),
    (["nosuch", "random", "--deals", "1"], "agent A 'nosuch': "),
    (["random", "nosuch", "--deals", "1"], "agent B 'nosuch': "),
    (["heuristic", "random", "--win-chance", "0"], "--win-chance: "),
    (["heuristic", "--minus", "a.json", "b.json"], "it takes no agents"),
    (["--minus", "a.json", "b.json", "--out", "c.json", "--seed", "3"], "it takes no --out, --seed"),
    (["--minus", "a.json", "b.json", "--win-chance", "0.6"], "it takes no --win-chance"),
    (["heuristic", "random", "--deals", "1", "--out", "."], "--out '.': "),
])
def test_bummerl_equity_refuses_a_bad_command_line_naming_what_is_wrong(arguments, fragment, monkeypatch, capsys):
    from bench.bummerl_equity import main

    _fake_run(monkeypatch, deals=1, seed=1, win_chance=0.5)
    _FakeGame.dealt = []
    with pytest.raises(SystemExit) as stopped:
        main(arguments)
    assert stopped.value.code == 2 and fragment in capsys.readouterr().err and _FakeGame.dealt == []


# --- bench.luck_intervals --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["x=a,", "x=,a", "x=a,b,c", "x=a,,"])
def test_an_intervals_entry_with_an_empty_or_third_run_is_refused_by_name(text):
    """An empty part was turned into Path('.') (the working folder) before it was checked, so it passed."""
    with pytest.raises(argparse.ArgumentTypeError, match="expected one run or two runs"):
        entry(text)
    assert entry("x=a,b") == ("x", [Path("a"), Path("b")])
    for text in ("=a", "x=", "no-equals-sign"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected LABEL=RUN or LABEL=RUN,RUN2"):
            entry(text)
    assert entry("seed 1=a") == ("seed 1", [Path("a")])


class _Luck:
    """Stands in for eval.luck.LuckAdjustment in bench.luck_intervals: records how it was made."""

    made: list = []

    def __init__(self, *args):
        _Luck.made.append(args)


def _fake_margins(monkeypatch, raw: dict, adjusted: dict):
    """bench.luck_intervals reading ``raw[run]`` / ``adjusted[run]`` for a run's margins (a paired entry: the
    difference, first minus second, deal by deal); returns the calls of the paired reader."""
    import bench.luck_intervals as module

    paired_calls = []

    def unit_margins(run, adjustment):
        if str(run) not in raw:
            raise ValueError(f"{str(run)!r} is not a match run")
        return ("A", "B"), list((raw if adjustment is None else adjusted)[str(run)])

    def paired_differences(first, second, adjustment):
        paired_calls.append((str(first), str(second), adjustment))
        table = raw if adjustment is None else adjusted
        return "A", "A2", "B", list(np.subtract(table[str(first)], table[str(second)]))

    monkeypatch.setattr(module, "unit_margins", unit_margins)
    monkeypatch.setattr(module, "paired_differences", paired_differences)
    monkeypatch.setattr(module, "LuckAdjustment", _Luck)
    return paired_calls


def test_luck_intervals_rows_are_t_intervals_of_the_raw_and_adjusted_margins(monkeypatch, tmp_path, capsys):
    """Each entry's raw and luck-adjusted intervals are t intervals of its margins (scipy), a paired entry's of the
    differences first minus second, and the variance ratio is var(adjusted) / var(raw)."""
    from bench.luck_intervals import main

    generator = np.random.default_rng(8)
    raw = {"r1": generator.normal(0.4, 2.0, 40), "r2": generator.normal(0.1, 2.0, 40)}
    adjusted = {"r1": raw["r1"] * 0.5 + 0.1, "r2": raw["r2"] * 0.6}
    paired_calls = _fake_margins(monkeypatch, raw, adjusted)
    _Luck.made = []
    out = tmp_path / "rows.json"
    assert main(["--entry", "one=r1", "--entry", "two=r1,r2", "--orders", "6", "--workers", "3",
                 "--json", str(out)]) == 0
    assert _Luck.made == [(6, 0, 3)]
    assert [call[:2] for call in paired_calls] == [("r1", "r2"), ("r1", "r2")]
    assert paired_calls[0][2] is None and isinstance(paired_calls[1][2], _Luck)
    document = json.loads(out.read_text())
    assert document["orders"] == 6
    one, two = document["rows"]
    assert one["label"] == "one" and one["runs"] == ["r1"] and two["runs"] == ["r1", "r2"]
    for row, raw_values, adjusted_values in ((one, raw["r1"], adjusted["r1"]),
                                             (two, raw["r1"] - raw["r2"], adjusted["r1"] - adjusted["r2"])):
        for name, values in (("raw", raw_values), ("adjusted", adjusted_values)):
            mean, low, high = t_interval(values)
            assert row[name]["n"] == 40
            assert [row[name][key] for key in ("mean", "low", "high")] == pytest.approx([mean, low, high])
            assert row[name]["std"] == pytest.approx(np.std(values, ddof=1))
        assert row["variance_ratio"] == pytest.approx(np.var(adjusted_values, ddof=1) / np.var(raw_values, ddof=1))
    printed = capsys.readouterr().out.splitlines()
    assert printed[2].startswith("| one | 40 | ") and printed[2].endswith(f" | {one['variance_ratio']:.2f} |")
    assert len(printed) == 4


def test_luck_intervals_give_no_variance_ratio_without_raw_spread_and_report_a_bad_run(monkeypatch, tmp_path,
                                                                                       capsys):
    from bench.luck_intervals import main
    from eval.luck import DEFAULT_ORDERS

    narrow = np.array([2.0, 2.1, 1.9, 2.0, 2.0])  # a raw spread below 1 still gives a ratio
    _fake_margins(monkeypatch, {"flat": np.full(5, 2.0), "narrow": narrow},
                  {"flat": np.array([1.0, 2.0, 3.0, 2.0, 2.0]), "narrow": narrow / 2})
    out = tmp_path / "rows.json"
    _Luck.made = []
    assert main(["--entry", "flat=flat", "--entry", "narrow=narrow", "--json", str(out)]) == 0
    assert _Luck.made == [(DEFAULT_ORDERS, 0, 1)] and json.loads(out.read_text())["orders"] == DEFAULT_ORDERS
    row, narrow_row = json.loads(out.read_text())["rows"]
    assert row["raw"]["std"] == 0.0 and row["variance_ratio"] is None
    assert narrow_row["variance_ratio"] == pytest.approx(0.25)
    assert main(["--entry", "flat=flat"]) == 0  # no --json, no --plot: the table alone
    assert capsys.readouterr().out.splitlines()[2].endswith(" | - |")
    assert main(["--entry", "missing=nosuch", "--json", str(tmp_path / "other.json")]) == 2
    assert "error: 'nosuch' is not a match run" in capsys.readouterr().err and not (tmp_path / "other.json").exists()
    with pytest.raises(SystemExit):
        main(["--orders", "4"])
    assert "--entry" in capsys.readouterr().err


def test_the_luck_intervals_plot_draws_each_entrys_raw_and_adjusted_interval_first_entry_on_top(monkeypatch,
                                                                                                   tmp_path):
    import bench.luck_intervals as module

    figures = []
    monkeypatch.setattr(module, "write_figure",
                        lambda figure, path, dpi=None: figures.append(figure) or path.write_bytes(b"png"))
    rows = [{"label": "first", "raw": {"mean": 0.5, "low": -0.5, "high": 1.5},
             "adjusted": {"mean": 0.25, "low": 0.0, "high": 0.5}},
            {"label": "second", "raw": {"mean": -1.0, "low": -3.0, "high": 1.0},
             "adjusted": {"mean": -0.75, "low": -1.25, "high": -0.25}},
            {"label": "third", "raw": {"mean": 2.0, "low": 1.0, "high": 3.0},
             "adjusted": {"mean": 1.75, "low": 1.5, "high": 2.0}}]
    module.plot(rows, tmp_path / "plot.png", orders=32)
    assert (tmp_path / "plot.png").read_bytes() == b"png"
    (axis,) = figures[0].axes
    assert [label.get_text() for label in axis.get_yticklabels()] == ["third", "second", "first"]
    assert "32 talon orders" in axis.get_title()
    drawn = []
    for container in axis.containers:
        (x,), (y,) = container.lines[0].get_xdata(), container.lines[0].get_ydata()
        (segment,) = container.lines[2][0].get_segments()
        drawn.append((round(y, 2), x, segment[0][0], segment[1][0]))
    expected = []
    for position, row in enumerate(reversed(rows)):  # the first entry at the top
        for offset, name in ((0.13, "raw"), (-0.13, "adjusted")):
            value = row[name]
            expected.append((round(position + offset, 2), value["mean"], value["low"], value["high"]))
    assert sorted(drawn) == sorted(expected)
    assert [text.get_text() for text in axis.get_legend().get_texts()] == ["raw", "adjusted"]


# --- train.plots -------------------------------------------------------------------------------------------------

def _scalars_run(tmp_path: Path, rows: list[tuple[int, str, float]]) -> Path:
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    with open(run / "scalars.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["step", "tag", "value"])
        writer.writerows(rows)
    return run


def _by_tag(rows) -> dict:
    series: dict = {}
    for step, tag, value in rows:
        series.setdefault(tag, []).append((step, value))
    return {tag: sorted(points) for tag, points in series.items()}


def test_load_scalars_groups_a_tables_rows_by_tag_sorted_by_step(tmp_path):
    rows = [(30, "losses/entropy", 0.5), (10, "losses/entropy", 0.75), (20, "eval/x/margin", -0.25),
            (20, "losses/entropy", 0.625), (10, "eval/x/margin", 1.5)]
    loaded = load_scalars(_scalars_run(tmp_path, rows))
    expected = _by_tag(rows)
    assert sorted(loaded) == sorted(expected)
    for tag, points in expected.items():
        steps, values = loaded[tag]
        assert steps.tolist() == [step for step, _ in points] and values.tolist() == [value for _, value in points]


def test_load_scalars_reads_every_tensorboard_event_file_of_a_run_without_a_table(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    rows = [(5, "losses/entropy", 0.5), (1, "losses/entropy", 0.25), (3, "eval/x/margin", 2.0)]
    later = [(9, "losses/entropy", 0.125), (7, "eval/x/margin", -1.0)]
    for index, part in enumerate((rows, later)):
        writer = SummaryWriter(str(tmp_path / "run" / "tb"), filename_suffix=f".{index}")
        for step, tag, value in part:
            writer.add_scalar(tag, value, step)
        writer.close()
    assert len(list((tmp_path / "run" / "tb").glob("events.out.tfevents.*"))) == 2
    loaded = load_scalars(tmp_path / "run")
    for tag, points in _by_tag(rows + later).items():
        steps, values = loaded[tag]
        assert steps.tolist() == [step for step, _ in points]
        assert values.tolist() == pytest.approx([value for _, value in points])


MODEL_SPEC = "ppo:path=models/ppo_standard.zip"  # an opponent whose spec holds a "/"


def test_the_learning_curve_draws_each_opponents_margin_band_and_the_smoothed_training_returns(tmp_path,
                                                                                                monkeypatch):
    """Left: each evaluation opponent's margin and its 95 % band; right: each pool opponent's training return as a
    moving mean over 9 rollouts (all of them if fewer), ending at the last rollout's step, and the entropy. An
    opponent's spec may hold "/" (a model path): it was cut at the first one, and the plot failed on a KeyError."""
    import eval.report

    generator = np.random.default_rng(4)
    steps = list(range(100, 1500, 100))  # 14 rollouts
    returns = generator.normal(0.0, 1.0, len(steps))
    short = [0.5, -0.5, 1.0]
    rows = [(step, "opponents/self/return", float(value)) for step, value in zip(steps, returns)]
    rows += [(step, f"opponents/{MODEL_SPEC}/return", value) for step, value in zip(steps, short)]
    rows += [(step, "losses/entropy", 1.0 / step) for step in steps]
    for opponent, shift in (("random", 1.0), (MODEL_SPEC, -0.5)):
        for step in (500, 1000):
            margin = shift + step / 1000
            rows += [(step, f"eval/{opponent}/margin", margin), (step, f"eval/{opponent}/margin_ci_low", margin - 0.25),
                     (step, f"eval/{opponent}/margin_ci_high", margin + 0.5)]
    figures = []
    monkeypatch.setattr(eval.report, "png_bytes", lambda figure, dpi=None: figures.append(figure) or b"png")
    assert learning_curve_png(_scalars_run(tmp_path, rows), title="a run", step_label="rollout steps") == b"png"
    (figure,) = figures
    left, right = figure.axes
    assert figure._suptitle.get_text() == "a run" and left.get_xlabel() == right.get_xlabel() == "rollout steps"
    drawn = {line.get_label(): line for line in left.lines if not line.get_label().startswith("_")}
    assert sorted(drawn) == [f"vs {MODEL_SPEC}", "vs random"]
    for opponent, shift in (("random", 1.0), (MODEL_SPEC, -0.5)):
        line = drawn[f"vs {opponent}"]
        assert line.get_xdata().tolist() == [500, 1000]
        assert line.get_ydata().tolist() == pytest.approx([shift + 0.5, shift + 1.0])
    bands = [collection.get_paths()[0].vertices for collection in left.collections]
    assert len(bands) == 2
    for vertices in bands:  # each band spans from the low bound to the high one at each step
        for step in (500, 1000):
            at_step = vertices[vertices[:, 0] == step][:, 1]
            assert at_step.max() - at_step.min() == pytest.approx(0.75)
    curves = {line.get_label(): line for line in right.lines if not line.get_label().startswith("_")}
    smooth = np.convolve(returns, np.ones(9) / 9, mode="valid")  # the mean of each 9 consecutive returns
    assert np.allclose(smooth, [returns[k:k + 9].mean() for k in range(len(returns) - 8)])
    line = curves["return vs self (training)"]
    assert line.get_xdata().tolist() == steps[8:] and line.get_ydata() == pytest.approx(smooth)
    line = curves[f"return vs {MODEL_SPEC} (training)"]
    assert line.get_xdata().tolist() == [steps[2]] and line.get_ydata() == pytest.approx([np.mean(short)])
    line = curves["policy entropy"]
    assert line.get_xdata().tolist() == steps and line.get_ydata() == pytest.approx([1.0 / step for step in steps])
    assert [list(line.get_ydata()) for axis in (left, right) for line in axis.lines
            if line.get_label().startswith("_")] == [[0.0, 0.0], [0.0, 0.0]]  # the zero lines


def test_the_plot_tool_writes_the_learning_curve_of_a_run(tmp_path, capsys):
    rows = [(step, "losses/entropy", 1.0 / step) for step in (1, 2, 3)]
    rows += [(2, "eval/random/margin", 0.5), (2, "eval/random/margin_ci_low", 0.0),
             (2, "eval/random/margin_ci_high", 1.0)]
    run = _scalars_run(tmp_path, rows)
    out = tmp_path / "curve.png"
    assert plots_main([str(run), str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and capsys.readouterr().out == f"wrote {out}\n"


# --- bench.paired_spread -----------------------------------------------------------------------------------------

class _FakeSearcher:
    """Stands in for the rollout search in bench.paired_spread: values every legal action in 30 worlds with a
    common world effect (so pairing narrows the spread); of every four searches the third keeps two actions and
    the fourth one (the others pruned), and every fifth values all alike in every world (no spread)."""

    def __init__(self):
        self.generator = np.random.default_rng(12)
        self.searches: list = []
        self.world_values = np.zeros((0, NUM_ACTIONS))
        self.started = 0

    def start_deal(self, player, rules):
        self.started += 1

    def action_values(self, infoset, seconds):
        assert seconds is None
        legal = list(infoset.legal_actions)
        count = len(self.searches)
        scores = np.zeros((30, NUM_ACTIONS))
        if count % 5 != 4:
            scores[:, legal] = (self.generator.normal(0, 0.3, (30, 1)) + self.generator.normal(0, 0.2, (30, len(legal)))
                                + self.generator.normal(0, 0.3, len(legal)))  # spreads below 1
        values = {action: float(scores[:, action].mean()) for action in legal}
        if count % 4 >= 2:  # two actions kept, or one
            values = dict(list(values.items())[:4 - count % 4])
        self.world_values = scores
        self.searches.append((infoset, values, scores))
        return values


def test_spread_ratios_compare_the_two_best_actions_at_each_open_talon_decision(monkeypatch):
    """R7: only decisions with two or more actions while the talon is open and not closed are searched; each
    gives the spread of the two best actions' world-by-world difference over sqrt(var a + var b)."""
    import bench.paired_spread as module
    from agents import make_agent

    searcher, acted, made, dealt, started = _FakeSearcher(), [], [], [], []

    class Recording:
        def __init__(self, inner):
            self.inner = inner

        def start_deal(self, seat, rules):
            started.append(seat)
            self.inner.start_deal(seat, rules)

        def act(self, infoset):
            acted.append(infoset)
            return self.inner.act(infoset)

    def fake_make_agent(spec, seed=None):
        made.append((spec, seed))
        return searcher if spec.startswith("expert:") else Recording(make_agent(spec, seed=seed))

    real_deal = module.Game.deal

    class GameSpy:
        @staticmethod
        def deal(rules, seed=None, dealer=0):
            dealt.append((seed, dealer))
            return real_deal(rules, seed=seed, dealer=dealer)

    monkeypatch.setattr(module, "make_agent", fake_make_agent)
    monkeypatch.setattr(module, "Game", GameSpy)
    ratios = spread_ratios(deals=3, worlds=30, seed=40, progress=False)
    assert dealt == [(40, 0), (41, 1), (42, 0)]
    assert started == [0, 1] * 3 and searcher.started == 3  # every agent told each deal starts
    assert made[0] == ("expert:seconds=none,samples=30,prune=none", 40)
    assert len(made) == 7 and all(made[k][1] != made[k + 1][1] for k in (1, 3, 5))  # a deal's players: two seeds
    player_seeds = [seed for spec, seed in made[1:]]
    assert len(set(player_seeds)) == 6  # and no deal's player shares a seed with another deal's
    open_decisions = [infoset for infoset in acted
                      if len(infoset.legal_actions) > 1 and infoset.talon_size > 0 and infoset.closed_by is None]
    assert [infoset for infoset, _, _ in searcher.searches] == open_decisions and len(open_decisions) > 10
    expected = []
    for _, values, scores in searcher.searches:
        if len(values) < 2:
            continue
        first, second = sorted(values.items(), key=lambda item: item[1], reverse=True)[:2]
        a, b = scores[:, first[0]], scores[:, second[0]]
        unpaired = math.sqrt(statistics.pvariance(a) + statistics.pvariance(b))
        if unpaired > 0:
            expected.append(statistics.pstdev(a - b) / unpaired)
    assert len(expected) < len(searcher.searches) and ratios == pytest.approx(expected)


def test_paired_spread_prints_the_quartiles_and_the_share_of_worlds_a_paired_test_needs(monkeypatch, capsys):
    import bench.paired_spread as module

    ratios = [0.1, 1.3, 0.2, 0.72, 0.9, 0.6]  # quartiles 0.30, 0.66, 1.20 (26 % and 51 % would differ)
    asked = []
    monkeypatch.setattr(module, "spread_ratios", lambda *args: asked.append(args) or list(ratios))
    assert module.main(["--deals", "3", "--worlds", "9", "--seed", "4", "--no-progress"]) == 0
    assert asked == [(3, 9, 4, False)]
    low, median, high = statistics.quantiles(ratios, n=4, method="inclusive")
    assert capsys.readouterr().out == (
        f"6 decisions: paired / unpaired standard deviation of the two best actions' difference, median {median:.2f} "
        f"(quartiles {low:.2f}, {high:.2f}); a paired test needs about "
        f"{statistics.median(r * r for r in ratios):.2f} of the worlds\n")
    assert module.main(["--deals", "1", "--worlds", "2"]) == 0 and asked[-1] == (1, 2, 700, True)
    monkeypatch.setattr(module, "spread_ratios", lambda *args: asked.append(args) or [])
    assert module.main([]) == 1 and capsys.readouterr().out.endswith("no decision with two valued actions\n")
    assert asked[-1] == (40, 400, 700, True)  # the defaults the module's docstring runs with


def test_the_learning_curve_of_a_run_with_no_evaluation_draws_without_a_legend_warning(tmp_path):
    """Before its first evaluation a run has training scalars only: the plot is drawn, and matplotlib is not asked for
    a legend with no entries (it warns "No artists with labels")."""
    import warnings

    from train.plots import learning_curve_png

    (tmp_path / "scalars.csv").write_text("step,tag,value\n1,losses/entropy,1.5\n2,losses/entropy,1.4\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert learning_curve_png(tmp_path)[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "scalars.csv").write_text("step,tag,value\n1,time/fps,10\n")  # neither side has a labelled line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert learning_curve_png(tmp_path)[:8] == b"\x89PNG\r\n\x1a\n"
