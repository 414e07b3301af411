"""eval.pool: the duplicate deal pairs of several match runs pooled into one margin per deal with a t interval,
and runs that cannot be pooled (another agent pair, Bummerls, a missing or foreign file) refused by name."""

from __future__ import annotations

import csv

import pytest

from eval.pool import POOLED_COLUMNS, main, paired, paired_pool, pool
from eval.report import CSV_COLUMNS
from eval.stats import mean_interval


def write_run(directory, margins_by_deal, agent_a="a", agent_b="b", bummerl=False, deals=0, rules="standard"):
    """A run folder of ``sixtysix match``: ``results.csv`` with these margins and a real ``deals.json``, the deals of
    seed ``deals`` under ``rules`` (runs given the same seed and deal count played the same deals)."""
    from eval import generate_deals, save_deals
    from sixtysix_env import Rules

    directory.mkdir()
    save_deals(directory / "deals.json", generate_deals(deals, len(margins_by_deal), Rules.preset(rules)),
               Rules.preset(rules), deals)
    with open(directory / "results.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for deal, margins in margins_by_deal.items():
            for seat, margin in enumerate(margins):
                writer.writerow({"agent_a": agent_a, "agent_b": agent_b, "deal": deal, "seat_a": seat,
                                 "bummerl_game": 1 if bummerl else "", "margin_a": margin})
    return directory


def test_units_are_deal_pairs_pooled_over_runs(tmp_path):
    first = write_run(tmp_path / "s31", {0: [1, 3], 1: [-2, 0]}, deals=31)
    second = write_run(tmp_path / "s32", {0: [2, 2], 1: [0, -1], 2: [3, -3]}, deals=32)
    pair, interval = pool([first, second])
    assert pair == ("a", "b")
    expected = mean_interval([2.0, -1.0, 2.0, -0.5, 0.0])
    assert interval.n == 5 and interval.mean == pytest.approx(0.5)
    assert interval.half_width == pytest.approx(expected.half_width)


def test_runs_that_cannot_be_pooled_are_refused_by_name(tmp_path, capsys):
    ours = write_run(tmp_path / "ours", {0: [1, -1]})
    other = write_run(tmp_path / "other", {0: [1, -1]}, agent_a="c")
    with pytest.raises(ValueError, match="not of a vs b"):
        pool([ours, other])
    bummerls = write_run(tmp_path / "bummerls", {0: [1, -1]}, bummerl=True)
    with pytest.raises(ValueError, match="Bummerls"):
        pool([bummerls])
    assert main([str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "results.csv").write_text("x,y\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no agent_a, agent_b, deal, seat_a, margin_a column"):
        pool([tmp_path / "foreign"])
    assert set(POOLED_COLUMNS) <= set(CSV_COLUMNS)  # what a match writes has every column pooling reads
    # margins without the agents' names: a KeyError traceback before, now the columns it lacks
    (tmp_path / "nameless").mkdir()
    (tmp_path / "nameless" / "results.csv").write_text("deal,seat_a,margin_a\n0,0,1\n0,1,-1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"nameless/results.csv' is not the results.csv of a match \(no agent_a, "
                                         r"agent_b column\)"):
        pool([tmp_path / "nameless"])
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "results.csv").write_text("agent_a,agent_b,deal,seat_a,margin_a\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"not the results.csv of a match \(no rows\)"):
        pool([tmp_path / "empty"])


def test_two_agents_are_compared_paired_by_deal(tmp_path, capsys):
    new = write_run(tmp_path / "new", {0: [1, 3], 1: [-2, 0], 2: [3, 3]}, agent_a="new")
    old = write_run(tmp_path / "old", {0: [0, 0], 1: [-3, -1], 2: [1, 3]}, agent_a="old")
    first, second, opponent, interval = paired(new, old)
    assert (first, second, opponent) == ("new", "old", "b")
    expected = mean_interval([2.0, 1.0, 1.0])  # per deal pair: (1+3)/2 - 0, (-2+0)/2 - (-2), 3 - 2
    assert interval.n == 3 and interval.mean == pytest.approx(4 / 3)
    assert interval.half_width == pytest.approx(expected.half_width)
    assert main([str(new), "--minus", str(old)]) == 0
    printed = capsys.readouterr().out
    assert "new minus old (both against b): 3 duplicate deal pairs, difference per deal +1.333" in printed


def test_a_paired_comparison_needs_the_same_opponent_and_deals(tmp_path, capsys):
    ours = write_run(tmp_path / "ours", {0: [1, -1], 1: [0, 0]}, agent_a="x")
    other_opponent = write_run(tmp_path / "opp", {0: [1, -1], 1: [0, 0]}, agent_a="y", agent_b="c")
    with pytest.raises(ValueError, match="same opponent"):
        paired(ours, other_opponent)
    other_deals = write_run(tmp_path / "deals", {0: [1, -1], 1: [0, 0]}, agent_a="y", deals=1)
    with pytest.raises(ValueError, match="did not play the same deals"):
        paired(ours, other_deals)
    fewer = write_run(tmp_path / "fewer", {0: [1, -1]}, agent_a="y")
    with pytest.raises(ValueError, match="did not play the same deals"):
        paired(ours, fewer)
    (tmp_path / "fewer" / "deals.json").unlink()
    assert main([str(ours), "--minus", str(tmp_path / "fewer")]) == 2
    assert "deals.json" in capsys.readouterr().err
    assert main([str(ours), "--minus", str(tmp_path / "." / "ours")]) == 2  # a run minus itself measures nothing
    assert f"{str(ours)!r} minus itself" in capsys.readouterr().err


def test_paired_comparisons_of_several_seeds_are_pooled_run_by_run(tmp_path, capsys):
    """``A1 A2 --minus B1 B2``: run i paired with run i (its own deals), the differences pooled; the counts must
    match and every pair must compare the same agents against the same opponent."""
    new1 = write_run(tmp_path / "new1", {0: [1, 3], 1: [-2, 0]}, agent_a="new", deals=1)
    old1 = write_run(tmp_path / "old1", {0: [0, 0], 1: [-3, -1]}, agent_a="old", deals=1)
    new2 = write_run(tmp_path / "new2", {0: [3, 3]}, agent_a="new", deals=2)
    old2 = write_run(tmp_path / "old2", {0: [1, 3]}, agent_a="old", deals=2)
    first, second, opponent, interval = paired_pool([new1, new2], [old1, old2])
    assert (first, second, opponent) == ("new", "old", "b")
    expected = mean_interval([2.0, 1.0, 1.0])
    assert interval.n == 3 and interval.mean == pytest.approx(4 / 3)
    assert interval.half_width == pytest.approx(expected.half_width)
    assert main([str(new1), str(new2), "--minus", str(old1), str(old2)]) == 0
    assert "3 duplicate deal pairs from 2 pairs of runs, difference per deal +1.333" in capsys.readouterr().out
    with pytest.raises(ValueError, match="did not play the same deals"):
        paired_pool([new1, new2], [old2, old1])  # crossed: other deals
    with pytest.raises(ValueError, match="one to one"):
        paired_pool([new1, new2], [old1])
    stranger = write_run(tmp_path / "stranger", {0: [3, 3]}, agent_a="stranger", deals=2)
    with pytest.raises(ValueError, match="not new with old"):
        paired_pool([new1, stranger], [old1, old2])
    assert main([str(new1), "--minus", str(old1), str(old2)]) == 2
    assert "one to one" in capsys.readouterr().err


def append_rows(run, rows):
    """Append (deal, seat of A, margin) rows of a vs b to a run's results.csv."""
    with open(run / "results.csv", "a", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        for deal, seat_a, margin in rows:
            writer.writerow({"agent_a": "a", "agent_b": "b", "deal": deal, "seat_a": seat_a, "bummerl_game": "",
                             "margin_a": margin})


def test_a_game_listed_twice_is_refused_by_name(tmp_path):
    run = write_run(tmp_path / "twice", {0: [1, -1]})
    append_rows(run, [(0, 1, 2)])
    with pytest.raises(ValueError, match="deal 0 with A in seat 1 appears twice"):
        pool([run])


def write_seeded_run(directory, seed, margins_by_deal, rules="standard", commit=None, **names):
    """A run whose deals.json is a real deal file: the deals of ``seed`` under ``rules``."""
    import json

    run = write_run(directory, margins_by_deal, deals=seed, rules=rules, **names)
    if commit is not None:
        (run / "results.json").write_text(json.dumps({"settings": {"deals": len(margins_by_deal)},
                                                      "versions": {"git_commit": commit}}), encoding="utf-8")
    return run


def test_runs_that_share_deals_or_rules_differ_are_not_pooled(tmp_path, capsys):
    """Pooled, a deal played in two runs would count as two independent deal pairs and narrow the interval without
    new evidence: the same run twice, a copy or a seed run again are refused, and so are runs under other rules."""
    seed31 = write_seeded_run(tmp_path / "s31", 31, {0: [1, 3], 1: [-2, 0]})
    seed32 = write_seeded_run(tmp_path / "s32", 32, {0: [2, 2], 1: [0, -1]})
    assert pool([seed31, seed32])[1].n == 4
    with pytest.raises(ValueError, match="given twice"):
        pool([seed31, seed32, tmp_path / "s31"])
    again = write_seeded_run(tmp_path / "again", 31, {0: [1, 3], 1: [-2, 0], 2: [1, 1]})
    with pytest.raises(ValueError, match=r"'.*again' deal 0 is deal 0 of '.*s31' \(the same deck and dealer\)"):
        pool([seed31, again])
    paderborn = write_seeded_run(tmp_path / "paderborn", 33, {0: [1, 3]}, rules="paderborn")
    with pytest.raises(ValueError, match="rules 'paderborn'.*'standard'.*switches differ: exchange_needs_trick"):
        pool([seed31, paderborn])
    assert main([str(seed31), str(again)]) == 2
    assert "count twice" in capsys.readouterr().err
    # A deal file that does not read would turn these checks off unseen: it is refused by name instead.
    damaged = write_seeded_run(tmp_path / "damaged", 34, {0: [1, 3]})
    (damaged / "deals.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"deal file '.*damaged.deals\.json'.*the check that pooled runs share no"):
        pool([seed31, damaged])
    # --minus pools pairs of runs: the first runs of the pairs must not share deals either.
    old31 = write_seeded_run(tmp_path / "old31", 31, {0: [0, 0], 1: [0, 0]}, agent_a="old")
    with pytest.raises(ValueError, match="deal 0 is deal 0"):
        paired_pool([seed31, again], [old31, old31])


def test_a_margin_that_is_not_a_finite_number_is_refused_by_line(tmp_path):
    for value in ("nan", "inf", "-inf"):
        run = write_run(tmp_path / value, {0: [1, -1], 1: [value, 0]})
        with pytest.raises(ValueError, match=f"line 4: margin '{value}' is not a finite number"):
            pool([run])


def test_runs_of_several_code_versions_are_pooled_with_a_note(tmp_path, capsys):
    first = write_seeded_run(tmp_path / "s31", 31, {0: [1, 3]}, commit="a" * 40)
    second = write_seeded_run(tmp_path / "s32", 32, {0: [2, 2]}, commit="b" * 40)
    third = write_seeded_run(tmp_path / "s33", 33, {0: [0, 2]}, commit="b" * 40)
    assert main([str(first), str(second), str(third)]) == 0
    captured = capsys.readouterr()
    assert "3 duplicate deal pairs from 3 runs" in captured.out
    assert "2 versions of the code: aaaaaaaaaa (1 run), bbbbbbbbbb (2 runs)" in captured.err
    assert main([str(second), str(third)]) == 0
    assert "versions of the code" not in capsys.readouterr().err


# ------------------------------------------------------------------ found by a mutation review of eval/ (session 72)
def generate_other_deal(deal):
    """The deal with its deck reversed: another deal of the same rules."""
    import dataclasses

    return dataclasses.replace(deal, deck=deal.deck[::-1])


def test_a_deal_is_its_deck_and_dealer_wherever_it_stands_in_the_file(tmp_path):
    """R4: two runs share a deal when a deck and its dealer appear in both, at any position of their deal files;
    the same deck with the other dealer is another deal."""
    import dataclasses

    from eval import load_deals, save_deals

    first = write_seeded_run(tmp_path / "first", 41, {0: [1, 3], 1: [-2, 0]})
    deals, rules = load_deals(first / "deals.json")
    moved = write_seeded_run(tmp_path / "moved", 42, {0: [2, 2], 1: [0, -1]})
    save_deals(moved / "deals.json", [generate_other_deal(deals[0]), deals[0]], rules)
    with pytest.raises(ValueError, match=r"'.*moved' deal 1 is deal 0 of '.*first'"):
        pool([first, moved])
    redealt = write_seeded_run(tmp_path / "redealt", 43, {0: [2, 2]})
    save_deals(redealt / "deals.json", [dataclasses.replace(deals[0], dealer=1 - deals[0].dealer)], rules)
    assert pool([first, redealt])[1].n == 3


def test_results_that_do_not_fit_the_run_are_refused_by_name(tmp_path):
    """A seat other than 0 or 1, a deal beyond the run's deals, and an unfinished run (its results.json says
    complete: false) are refused: each would pool games that are not the run's duplicate deal pairs."""
    import json

    seat = write_run(tmp_path / "seat", {0: [1, -1]})
    append_rows(seat, [(0, 2, 1)])
    with pytest.raises(ValueError, match="deal 0 with A in seat 2 .*seats are 0 and 1"):
        pool([seat])
    beyond = write_run(tmp_path / "beyond", {0: [1, -1], 1: [2, 0]})
    append_rows(beyond, [(5, 0, 1), (5, 1, 1)])
    (beyond / "deals.json").unlink()
    (beyond / "results.json").write_text(json.dumps({"settings": {"deals": 2}}), encoding="utf-8")
    with pytest.raises(ValueError, match="holds deal 5, but .* played only deals 0..1"):
        pool([beyond])
    unfinished = write_run(tmp_path / "unfinished", {0: [1, -1]})
    (unfinished / "results.json").write_text(json.dumps({"settings": {"deals": 1, "complete": False}}),
                                             encoding="utf-8")
    with pytest.raises(ValueError, match="describe an incomplete run"):
        pool([unfinished])
