"""Three-seat duplicate tournaments (R21) and the CLI: every deal in all six seat permutations, the same outputs
as the two-player harness, per-agent margins and pairwise intervals, ratings."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from eval.three_tournament import PERMUTATIONS, generate_three_player_deals, run_three_tournament
from sixtysix_env import Rules

THREE = Rules.preset("three")


def test_every_deal_is_played_in_all_six_seatings(tmp_path):
    """Duplicate for three seats: per deal and trio six games, each agent once in every seat with every
    arrangement of the others; the outputs of the two-player harness are written."""
    deals = generate_three_player_deals(7, 4)
    assert [deal.dealer for deal in deals] == [0, 1, 2, 0]
    document = run_three_tournament(["heuristic", "greedy", "random"], THREE, deals, master_seed=7,
                                    out_dir=tmp_path, progress=False, bootstrap=50)
    for name in ("results.json", "results.csv", "table.md", "crosstable.png", "deals.json"):
        assert (tmp_path / name).stat().st_size > 0
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["summary"]["agents"].keys() == {"heuristic", "greedy", "random"}
    rows = (tmp_path / "results.csv").read_text().splitlines()
    assert len(rows) == 1 + 4 * 6
    seatings = [tuple(row.split(",")[2:5]) for row in rows[1:7]]
    assert sorted(seatings) == sorted(itertools.permutations(("heuristic", "greedy", "random")))
    for row in rows[1:]:
        game_points = [int(value) for value in row.split(",")[5:8]]
        assert sum(game_points) in (0, 1)  # R21: one game point to the top, none after a tie
    summary = document["summary"]
    margins = [summary["agents"][label]["margin"]["mean"] for label in ("heuristic", "greedy", "random")]
    assert sum(margins) == pytest.approx(0.0, abs=1e-9)  # margins against the other two seats are zero-sum
    assert {(pair["a"], pair["b"]) for pair in summary["pairs"]} == {
        ("heuristic", "greedy"), ("heuristic", "random"), ("greedy", "random")}
    assert summary["ratings"]["anchor"] == "random" and "# Three-player tournament results" in (tmp_path / "table.md").read_text()
    # Resume: the same settings replay nothing and give the same results; other settings are refused. A result
    # file a kill interrupted mid-write (its temp file, never renamed) is cleared at the start.
    stale = [tmp_path / ".journal.jsonl.a1b2.tmp", tmp_path / ".crosstable.png.c3d4.tmp"]
    for path in stale:
        path.write_bytes(b"half")
    again = run_three_tournament(["heuristic", "greedy", "random"], THREE, deals, master_seed=7, out_dir=tmp_path,
                                 progress=False, bootstrap=50)
    assert again["summary"]["agents"] == document["summary"]["agents"]
    assert len((tmp_path / "journal.jsonl").read_text().splitlines()) == 1 + 4
    assert not any(path.exists() for path in stale) and not list(tmp_path.glob(".*.tmp"))
    with pytest.raises(ValueError, match="other settings \\(master_seed: 7 there, 8 now\\)"):
        run_three_tournament(["heuristic", "greedy", "random"], THREE, deals, master_seed=8, out_dir=tmp_path,
                             progress=False)


def test_an_interrupted_run_continues_where_it_stopped(tmp_path):
    """Resume: a journal holding the first deal's unit (and a torn line) is continued with the other deals."""
    deals = generate_three_player_deals(11, 3)
    full = run_three_tournament(["greedy", "random", "random"], THREE, deals, master_seed=11, progress=False,
                                bootstrap=0)
    run_three_tournament(["greedy", "random", "random"], THREE, deals[:1], master_seed=11, out_dir=tmp_path,
                         progress=False, bootstrap=0)
    lines = (tmp_path / "journal.jsonl").read_text().splitlines()
    identity = json.loads(lines[0])
    identity.update(deals=3, deals_sha256=__import__("eval.deals", fromlist=["deals_digest"]).deals_digest(deals))
    (tmp_path / "journal.jsonl").write_text("\n".join([json.dumps(identity), lines[1], '{"torn']))
    for name in ("results.json", "results.csv", "table.md", "crosstable.png"):
        (tmp_path / name).unlink()
    resumed = run_three_tournament(["greedy", "random", "random"], THREE, deals, master_seed=11, out_dir=tmp_path,
                                   progress=False, bootstrap=0)
    assert resumed["summary"]["agents"] == full["summary"]["agents"]
    assert len((tmp_path / "journal.jsonl").read_text().splitlines()) == 1 + 3  # the torn line is gone
    run_three_tournament(["greedy", "random", "random"], THREE, deals, master_seed=11, out_dir=tmp_path,
                         progress=False, bootstrap=0)  # complete: nothing left to play, the journal reads cleanly


def test_a_run_killed_before_its_header_line_ended_starts_afresh_and_two_workers_give_the_same_results(tmp_path):
    """A journal holding only part of its first line (SIGKILL before the first unit) was "a run with other settings"
    for the same command; two worker processes play the same units as one."""
    deals = generate_three_player_deals(12, 2)
    alone = run_three_tournament(["greedy", "random", "heuristic"], THREE, deals, master_seed=12, progress=False,
                                 bootstrap=0)
    (tmp_path / "journal.jsonl").write_text('{"format": "sixtysix-three-tourn')
    shared = run_three_tournament(["greedy", "random", "heuristic"], THREE, deals, master_seed=12, out_dir=tmp_path,
                                  progress=False, bootstrap=0, workers=2)
    assert shared["summary"]["agents"] == alone["summary"]["agents"]
    assert len((tmp_path / "journal.jsonl").read_text().splitlines()) == 1 + 2  # the header, one unit per deal


def test_a_killed_worker_ends_the_run_instead_of_waiting_for_it(tmp_path, monkeypatch):
    """multiprocessing.Pool replaced a killed worker silently and waited for its units forever (three players);
    the runner both harnesses share raises WorkerDied."""
    from eval.tournament import WorkerDied, play_in_processes

    (tmp_path / "dies_once.py").write_text(
        "import os, signal\nfrom pathlib import Path\n\n\ndef play(task):\n"
        "    try:\n        Path(os.environ['SIXTYSIX_TEST_KILL_MARKER']).unlink()\n"
        "    except FileNotFoundError:\n        return task\n    os.kill(os.getpid(), signal.SIGKILL)\n")
    marker = tmp_path / "kill-next"
    marker.write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("SIXTYSIX_TEST_KILL_MARKER", str(marker))
    import dies_once

    with pytest.raises(WorkerDied, match="a tournament worker process died \\(exit code -9\\)"):
        list(play_in_processes(dies_once.play, list(range(8)), 2))
    assert sorted(play_in_processes(dies_once.play, list(range(8)), 2)) == list(range(8))  # marker gone: all played


def test_match_mode_plays_bummerls_to_seven():
    """--match with three seats: each seating plays a Bummerl to 7 game points (R17 with R21)."""
    document = run_three_tournament(["greedy", "random", "random"], THREE, generate_three_player_deals(3, 1),
                                    progress=False, match=True, bootstrap=0)
    assert document["settings"]["mode"] == "match"
    assert document["settings"]["labels"] == ["greedy", "random", "random#2"]
    assert len(PERMUTATIONS) == 6


def test_cli_three_player_tournament(tmp_path, capsys):
    """`sixtysix tournament --rules three --agents heuristic,greedy,random` works; bad input exits 2."""
    from sixtysix_cli import main

    code = main(["tournament", "--rules", "three", "--agents", "heuristic,greedy,random", "--deals", "3",
                 "--out", str(tmp_path / "run"), "--no-progress", "--bootstrap", "20"])
    assert code == 0 and "Three-player tournament" in capsys.readouterr().out
    assert (tmp_path / "run" / "crosstable.png").exists()
    code = main(["tournament", "--rules", "three", "--agents", "heuristic,greedy", "--deals", "2",
                 "--out", str(tmp_path / "bad"), "--no-progress"])
    assert code == 2 and "needs at least three agents" in capsys.readouterr().err


def test_cli_rule_override_selects_three_players(tmp_path, capsys):
    """`--rule players=3` on the default preset runs the three-seat harness too; a contradictory mix exits 2."""
    from sixtysix_cli import main

    assert main(["tournament", "--rule", "players=3", "--agents", "greedy,random,random", "--deals", "2",
                 "--out", str(tmp_path / "run"), "--no-progress", "--quiet", "--bootstrap", "0"]) == 0
    assert json.loads((tmp_path / "run" / "results.json").read_text())["settings"]["rules"]["players"] == 3
    assert main(["tournament", "--rules", "three", "--rule", "players=2", "--agents", "greedy,random",
                 "--out", str(tmp_path / "bad"), "--no-progress"]) == 2
    assert "applies only with players=3" in capsys.readouterr().err


def _tampered(line: str, change) -> str:
    unit = json.loads(line)
    change(unit)
    return json.dumps(unit)


def _set_game(index: int, key: str, value):
    def change(unit):
        unit["games"][index][key] = value
    return change


def _set_deal_actions(change):
    def apply(unit):
        actions = unit["games"][0]["deals"][0]["actions"]
        unit["games"][0]["deals"][0]["actions"] = change(actions)
    return apply


TAMPERINGS = [
    (lambda unit: unit.pop("games"), "missing key 'games'"),
    (lambda unit: unit.update(trio=[0, 1, 5]), "trio must be three ascending agent indices below 3"),
    (lambda unit: unit.update(deal=7), "deal must be an integer 0..1"),
    (lambda unit: unit.update(games=unit["games"][:5]), "games must be a list of 6"),
    (_set_game(0, "seats", [0, 0, 1]), "seats [0, 0, 1] are not the trio"),
    (lambda unit: unit["games"].__setitem__(1, unit["games"][0]), "each of the six permutations once"),
    (_set_game(0, "game_points", [1, 1, 0]), "do not name one winner"),
    (_set_game(0, "game_points", [2, 0, 0]), "game_points must be an integer 0..1"),  # R21: a deal's winner scores 1
    (_set_game(0, "decisions", [3, -1, 2]), "decisions must be an integer >= 0"),
    (_set_game(0, "timing", [0.1, "fast", 0.1]), "timing must be a finite number"),
    (_set_game(0, "points", [60, 30]), "points must be a list of three"),
    # Replayed from the deal (R4 deck order): values in range that the actions do not give are refused too.
    (lambda unit: unit["games"][0]["points"].__setitem__(0, unit["games"][0]["points"][0] + 1),
     "do not match the replay"),
    (lambda unit: unit["games"][0].update(game_points=[0, 0, 0]), "do not match the replay"),
    (lambda unit: unit["games"][0]["decisions"].__setitem__(0, unit["games"][0]["decisions"][0] + 1),
     "game 0: decisions"),
    (_set_deal_actions(lambda actions: actions[:-1]), "game 0: deal 0: the actions stop before the end of the deal"),
    (_set_deal_actions(lambda actions: [*actions, 0]), "actions go on after the end of the deal"),
    (_set_deal_actions(lambda actions: [actions[1], *actions[1:]]), "is illegal"),
    (_set_deal_actions(lambda actions: [*actions[:-1], "play AH"]), "action must be an integer"),
    (_set_game(0, "deals", []), "deals is empty"),
    (lambda unit: unit["games"][0]["deals"].append(unit["games"][0]["deals"][0]),
     "a game of a deal tournament holds one"),
    (lambda unit: unit["games"][0]["deals"][0].update(dealer=(unit["games"][0]["deals"][0]["dealer"] + 1) % 3),
     "game 0: deal 0: dealer"),
    (lambda unit: unit["games"][0]["deals"][0].pop("actions"), "missing key 'actions'"),
]


@pytest.mark.parametrize("change, fragment", TAMPERINGS)
def test_a_tampered_journal_unit_is_refused_naming_its_line(tmp_path, change, fragment):
    """Every field of a three-player journal unit is checked on resume, and every game is replayed from its deal
    (R4 deck order, R21): a unit that play_unit could not have written is refused by line, never summed."""
    deals = generate_three_player_deals(5, 2)
    run = dict(rules=THREE, deals=deals, master_seed=5, out_dir=tmp_path, progress=False, bootstrap=0)
    run_three_tournament(["greedy", "random", "random"], **run)
    journal = tmp_path / "journal.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join([lines[0], _tampered(lines[1], change), lines[2]]) + "\n")
    with pytest.raises(ValueError, match=r"journal.jsonl' line 2 is not a unit of this run \(.*"
                       + re.escape(fragment)):
        run_three_tournament(["greedy", "random", "random"], **run)


def test_a_tampered_bummerl_is_refused_and_an_old_journal_is_named(tmp_path):
    """Match mode (R17 with R21): each seating's Bummerl is replayed deal by deal to its end; a journal of the
    version that kept no actions is refused by its version, not as a run with other settings."""
    match = dict(rules=THREE, deals=generate_three_player_deals(5, 1), master_seed=5, out_dir=tmp_path,
                 progress=False, bootstrap=0, match=True)
    run_three_tournament(["greedy", "random", "random"], **match)
    journal = tmp_path / "journal.jsonl"
    header, unit = journal.read_text().splitlines()
    assert len(json.loads(unit)["games"][0]["deals"]) >= 2  # a Bummerl to 7 needs several deals
    for change, fragment in [
        (lambda unit: unit["games"][0]["deals"].pop(), "the deals stop before the end of the Bummerl"),
        (lambda unit: unit["games"][0]["deals"].append(unit["games"][0]["deals"][-1]),
         "follows the end of the Bummerl"),
        (lambda unit: unit["games"][0].update(game_points=unit["games"][0]["game_points"][::-1]),
         "do not match the replay|do not name one winner"),
    ]:
        journal.write_text(header + "\n" + _tampered(unit, change) + "\n")
        with pytest.raises(ValueError, match=r"line 2 is not a unit of this run \(.*(" + fragment + ")"):
            run_three_tournament(["greedy", "random", "random"], **match)
    old = json.loads(header)
    del old["version"]
    journal.write_text(json.dumps(old) + "\n")
    with pytest.raises(ValueError, match=r"journal of another version \(1, this run writes 2"):
        run_three_tournament(["greedy", "random", "random"], **match)


@pytest.mark.parametrize("match", [False, True])
def test_records_replay_to_the_journal_and_a_resume_writes_those_of_earlier_units(tmp_path, match):
    """--records with three seats (R21): one game record per deal and seating (per Bummerl deal in match mode,
    R17), each replaying to the game points the results list; a resumed run writes those of units finished before
    it, and a damaged record is written again."""
    from sixtysix_env.record import load_record, record_to_game

    deals = generate_three_player_deals(13, 2)
    run = dict(rules=THREE, master_seed=13, out_dir=tmp_path / "run", progress=False, bootstrap=0, match=match)
    run_three_tournament(["greedy", "random", "heuristic"], deals=deals[:1], **run)
    (tmp_path / "run" / "journal.jsonl").write_text(  # the first deal's unit, under the two-deal run's header
        "\n".join([json.dumps(__import__("eval.three_tournament", fromlist=["run_identity"]).run_identity(
            ["greedy", "random", "heuristic"], THREE, deals, 13, match)),
            (tmp_path / "run" / "journal.jsonl").read_text().splitlines()[1]]) + "\n")
    for name in ("results.json", "results.csv", "table.md", "crosstable.png"):
        (tmp_path / "run" / name).unlink()
    records = tmp_path / "records"
    document = run_three_tournament(["greedy", "random", "heuristic"], deals=deals, records_dir=records, **run)
    files = sorted(records.iterdir())
    seatings = {tuple(path.name.split("_bummerl")[0].removesuffix(".json").split("_", 1)[1].split("_vs_"))
                for path in files}
    assert seatings == set(itertools.permutations(("greedy", "random", "heuristic")))
    assert {path.name[:8] for path in files} == {"deal0000", "deal0001"}
    totals = {label: 0 for label in ("greedy", "random", "heuristic")}
    for path in files:
        record = load_record(path)  # replays, and its result is checked against the replay
        game = record_to_game(record)
        assert game.is_over and record["rules"]["players"] == 3
        if not match:
            seats = path.name.removesuffix(".json").split("_", 1)[1].split("_vs_")
            for seat, label in enumerate(seats):
                totals[label] += game.returns()[seat]
    if match:
        assert len(files) > 2 * 6  # a Bummerl is several deals
        assert all("_bummerl" in path.name for path in files)
    else:
        assert len(files) == 2 * 6
        for label, total in totals.items():  # the records' game points are the results' (R21)
            assert total == pytest.approx(document["summary"]["agents"][label]["game_points"]["mean"] * 2 * 6)
    damaged = files[0]
    damaged.write_text("{")
    run_three_tournament(["greedy", "random", "heuristic"], deals=deals, records_dir=records, **run)
    assert load_record(damaged)["format"] == "sixtysix-record"


def test_replay_shows_a_three_player_record(tmp_path, capsys):
    """`sixtysix tournament --rules three --records DIR` writes records that `sixtysix replay` shows (R21)."""
    from sixtysix_cli import main

    assert main(["tournament", "--rules", "three", "--agents", "greedy,random,random", "--deals", "1",
                 "--out", str(tmp_path / "run"), "--records", str(tmp_path / "records"), "--no-progress",
                 "--bootstrap", "0"]) == 0
    assert f"game records written to {tmp_path / 'records'}/" in capsys.readouterr().out
    record = tmp_path / "records" / "deal0000_greedy_vs_random_vs_random-2.json"  # seats 0, 1, 2 (R21)
    assert len(list((tmp_path / "records").iterdir())) == 6 and record.exists()
    assert main(["replay", str(record)]) == 0
    shown = capsys.readouterr().out
    assert "Sixty-six for three (R21)" in shown and "trick 8:" in shown and "result: " in shown, shown


def test_a_journal_unit_twice_or_not_json_is_refused_and_a_match_journal_resumes(tmp_path):
    deals = generate_three_player_deals(5, 2)
    run = dict(rules=THREE, deals=deals, master_seed=5, out_dir=tmp_path / "deal", progress=False, bootstrap=0)
    run_three_tournament(["greedy", "random", "random"], **run)
    journal = tmp_path / "deal" / "journal.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join([lines[0], lines[1], lines[1], lines[2]]) + "\n")
    with pytest.raises(ValueError, match=r"line 3 repeats trio \[0, 1, 2\] on deal 0"):
        run_three_tournament(["greedy", "random", "random"], **run)
    journal.write_text("\n".join([lines[0], lines[1].replace('"timing": [', '"timing": [NaN, ', 1), lines[2]]) + "\n")
    with pytest.raises(ValueError, match="line 2 is not JSON"):  # strict: NaN is not JSON
        run_three_tournament(["greedy", "random", "random"], **run)
    journal.write_bytes(b"\xff\xfe not text\n")
    with pytest.raises(ValueError, match="not a three-player tournament journal \\(not UTF-8 text\\)"):
        run_three_tournament(["greedy", "random", "random"], **run)
    # A Bummerl journal (R17 with R21: the winner 1, the others 0) passes its own checks on resume.
    match = dict(rules=THREE, deals=deals[:1], master_seed=5, out_dir=tmp_path / "match", progress=False,
                 bootstrap=0, match=True)
    first = run_three_tournament(["greedy", "random", "random"], **match)
    assert run_three_tournament(["greedy", "random", "random"], **match)["summary"] == first["summary"]


def test_with_four_agents_the_intervals_are_over_deals(tmp_path):
    """Four agents make four trios, so each deal gives an agent three values (one per trio it sits in) that share
    the deal's cards: they are averaged within the deal, and the interval is a t interval over the deals."""
    from eval import stats

    deals = generate_three_player_deals(11, 6)
    labels = ["greedy", "random", "heuristic", "random#2"]
    document = run_three_tournament(["greedy", "random", "heuristic", "random"], THREE, deals, master_seed=11,
                                    out_dir=tmp_path, progress=False, bootstrap=0)
    rows = (tmp_path / "results.csv").read_text().splitlines()[1:]
    per_deal: dict[str, dict[int, list[float]]] = {label: {} for label in labels}
    pair_per_deal: dict[int, list[float]] = {}
    for start in range(0, len(rows), 6):  # one trio's six seatings of one deal
        block = [row.split(",") for row in rows[start:start + 6]]
        deal = int(block[0][0])
        totals: dict[str, float] = {}
        for row in block:
            for seat in range(3):
                totals[row[2 + seat]] = totals.get(row[2 + seat], 0.0) + int(row[5 + seat]) / 6
        for label, value in totals.items():
            per_deal[label].setdefault(deal, []).append(value)
        if {"greedy", "heuristic"} <= totals.keys():
            pair_per_deal.setdefault(deal, []).append(totals["greedy"] - totals["heuristic"])
    for label in labels:
        expected = stats.mean_interval([sum(values) / len(values) for values in per_deal[label].values()])
        figure = document["summary"]["agents"][label]["game_points"]
        assert figure["n"] == len(deals)
        assert (figure["mean"], figure["half_width"]) == pytest.approx((expected.mean, expected.half_width))
    expected = stats.mean_interval([sum(values) / len(values) for values in pair_per_deal.values()])
    pair = next(pair for pair in document["summary"]["pairs"] if (pair["a"], pair["b"]) == ("greedy", "heuristic"))
    assert pair["game_points_difference"]["n"] == len(deals)
    assert pair["game_points_difference"]["half_width"] == pytest.approx(expected.half_width)


@pytest.mark.parametrize("rules", ["three", "standard"])
def test_a_batch_stop_sigterm_ends_a_tournament_as_ctrl_c_does(tmp_path, rules):
    """SIGTERM (a batch system stopping the job) closes the journal and exits 130 with the advice to run the same
    command again, for three players as for two (the three-player run was killed outright before session 67)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    agents = "heuristic,greedy,random" if rules == "three" else "heuristic,greedy"
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "sixtysix_cli", "tournament", "--rules", rules, "--agents", agents, "--deals", "20000",
         "--seed", "5", "--workers", "1", "--no-progress", "--out", str(out)],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / "journal.jsonl").exists() or len((out / "journal.jsonl").read_text().splitlines()) < 2:
            assert process.poll() is None and time.monotonic() < deadline, "the run did not start"
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        _, error = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, error
    assert "interrupted" in error and "run the same command again to continue" in error
