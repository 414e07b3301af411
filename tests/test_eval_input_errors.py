"""Bad input to the evaluation and play commands gets a clear error naming what is wrong (exit code 2, no
traceback) and nothing half-written: damaged or incomplete runs given to ``python -m eval.pool``, a bad agent
or records folder before ``--save-deals`` writes, ``sixtysix play --records`` that cannot be written, the checks
the three-player tournament (R21) shares with the two-player one, and a deal file replayed without ``#N``."""

from __future__ import annotations

import csv
import shutil

import pytest

import sixtysix_cli
from eval import pool

QUICK = ["--no-progress", "--quiet", "--bootstrap", "0"]


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    """Exit code and stderr of ``sixtysix ARGV`` (in this process)."""
    code = sixtysix_cli.main(list(argv))
    return code, capsys.readouterr().err


def assert_refused(code: int, error: str, *fragments: str) -> None:
    assert code == 2, error
    assert "error:" in error and "Traceback" not in error, error
    for fragment in fragments:
        assert fragment in error, (fragment, error)


@pytest.fixture(scope="module")
def good_run(tmp_path_factory):
    """A finished two-deal match of random against greedy (``sixtysix match --out``)."""
    out = tmp_path_factory.mktemp("pool") / "run"
    assert sixtysix_cli.main(["match", "random", "greedy", "--deals", "2", "--out", str(out), *QUICK]) == 0
    return out


def damaged_copy(good_run, tmp_path, keep_lines: int | None = None, text: bytes | None = None):
    """A copy of ``good_run`` whose results.csv keeps its first ``keep_lines`` lines, or holds ``text``."""
    run = tmp_path / "damaged"
    shutil.copytree(good_run, run)
    lines = (good_run / "results.csv").read_bytes().splitlines(keepends=True)
    (run / "results.csv").write_bytes(text if text is not None else b"".join(lines[:keep_lines]))
    return run


# --------------------------------------------------------------------------- eval.pool
def test_pool_still_pools_a_complete_run(good_run, capsys):
    assert pool.main([str(good_run)]) == 0
    printed = capsys.readouterr().out
    assert "random vs greedy: 2 duplicate deal pairs from 1 runs" in printed and "inf" not in printed


def test_pool_names_file_and_line_of_a_row_with_too_few_fields(good_run, tmp_path, capsys):
    header_and_first = (good_run / "results.csv").read_bytes().splitlines(keepends=True)[:2]
    run = damaged_copy(good_run, tmp_path, text=b"".join(header_and_first) + b"random,greedy,1\n")
    code = pool.main([str(run)])
    assert_refused(code, capsys.readouterr().err, "results.csv' line 3 has 3 fields", "a damaged row")


def test_pool_names_a_results_file_that_is_not_text(good_run, tmp_path, capsys):
    run = damaged_copy(good_run, tmp_path, text=b"\xff\xfe\x00\x01 binary")
    code = pool.main([str(run)])
    assert_refused(code, capsys.readouterr().err, f"{str(run / 'results.csv')!r} is not UTF-8 text")


def test_pool_refuses_a_truncated_run_naming_the_missing_deal(good_run, tmp_path, capsys):
    run = damaged_copy(good_run, tmp_path, keep_lines=3)  # header and deal 0 with both seatings
    code = pool.main([str(run)])
    assert_refused(code, capsys.readouterr().err, "results.csv' is incomplete",
                   "results.json' says the run played 2 deal(s)", "lacks 1 of them (deal 1)")
    (run / "results.json").unlink()  # without results.json, deals.json tells how many deals were played
    code = pool.main([str(run)])
    assert_refused(code, capsys.readouterr().err, "deals.json' says the run played 2 deal(s)")


def test_pool_refuses_a_deal_played_with_one_seating_only(good_run, tmp_path, capsys):
    run = damaged_copy(good_run, tmp_path, keep_lines=4)  # deal 1 lacks its swapped seating
    code = pool.main([str(run)])
    assert_refused(code, capsys.readouterr().err, "1 deal(s) played with one seating only (deal 1)")


# --------------------------------------------------------------------------- sixtysix match / tournament
def test_a_bad_agent_is_refused_before_the_deals_are_saved(tmp_path, capsys):
    saved = tmp_path / "sd.json"
    code, error = run_cli(capsys, "match", "nosuch", "random", "--deals", "1", "--save-deals", str(saved), *QUICK)
    assert_refused(code, error, "unknown agent 'nosuch'")
    assert not saved.exists()


def test_an_agent_that_cannot_play_the_rules_is_refused_before_anything_is_written(tmp_path, capsys):
    """A network fitted for other rules (played, or searched with as a prior: R19, R20), or a two-player search in a
    three-player tournament (R21), is refused by name before --save-deals, --out or --records writes anything (it
    used to fail at the first deal)."""
    saved, out, records = tmp_path / "sd.json", tmp_path / "out", tmp_path / "records"
    written = ["--save-deals", str(saved), "--out", str(out), "--records", str(records)]
    code, error = run_cli(capsys, "match", "ppo:path=models/ppo_three.zip", "random", "--deals", "1", *written,
                          *QUICK)
    assert_refused(code, error, "ppo_three.zip' was trained for rules 'three' and cannot play 'standard'")
    code, error = run_cli(capsys, "match", "expert", "random", "--rules", "scharf", "--deals", "1", *written, *QUICK)
    assert_refused(code, error, "rollout's prior 'suit_iterated' was fitted for the rules 'standard', not 'scharf'")
    code, error = run_cli(capsys, "match", "ismcts:prior=suit_iterated", "random", "--rules", "paderborn", "--deals",
                          "1", *written, *QUICK)
    assert_refused(code, error, "ismcts's prior 'suit_iterated' was fitted for the rules 'standard', not 'paderborn'")
    code, error = run_cli(capsys, "match", "expert", "random", "--rule", "bummerl_target=11", "--deals", "1",
                          *written, *QUICK)  # a preset with a switch overridden is named as such, with the switch
    assert_refused(code, error, "not 'a custom rule set' (switches differ: bummerl_target)")
    code, error = run_cli(capsys, "tournament", "--rules", "three", "--agents", "greedy,random,expert", "--deals",
                          "1", *written, *QUICK)
    assert_refused(code, error, "rollout (and expert, its alias) plays the two-player game only", "R21")
    assert not saved.exists() and not out.exists() and not records.exists()


def test_an_unwritable_records_folder_is_refused_before_anything_is_written(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    saved, out = tmp_path / "sd.json", tmp_path / "out"
    code, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--save-deals", str(saved),
                          "--out", str(out), "--records", str(blocker / "records"), *QUICK)
    assert_refused(code, error, f"game records folder {str(blocker / 'records')!r}: cannot write files there")
    assert not saved.exists() and not out.exists()


@pytest.mark.parametrize("players", [2, 3])
def test_a_save_deals_folder_is_refused_by_name_before_anything_is_written(players, tmp_path, capsys):
    folder, out, records = tmp_path / "deals-folder", tmp_path / "out", tmp_path / "records"
    folder.mkdir()
    agents = ["tournament", "--rules", "three", "--agents", "random,greedy,random"] if players == 3 else [
        "match", "random", "greedy"]
    code, error = run_cli(capsys, *agents, "--deals", "1", "--save-deals", str(folder), "--out", str(out),
                          "--records", str(records), *QUICK)
    assert_refused(code, error, f"--save-deals {str(folder)!r}: is a folder, not a file")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["deals-folder"] and not list(folder.iterdir())


def test_three_player_tournament_checks_bootstrap_deal_count_and_out_before_its_records(tmp_path, capsys):
    three = ["tournament", "--rules", "three", "--agents", "random,greedy,random"]
    saved, out = tmp_path / "deals3.json", tmp_path / "good"
    code, error = run_cli(capsys, *three, "--deals", "1", "--out", str(out), "--save-deals", str(saved), *QUICK)
    assert code == 0, error
    with open(out / "results.csv", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 6  # one deal in all six seat permutations (R21)
    code = pool.main([str(out)])  # eval.pool pools two-player runs: a three-player one is named as such
    assert_refused(code, capsys.readouterr().err, "results.csv' is the results.csv of a three-player tournament")

    refused = tmp_path / "refused"
    code, error = run_cli(capsys, *three, "--deals", "1", "--out", str(refused), "--no-progress", "--quiet",
                          "--bootstrap", "-1")
    assert_refused(code, error, "--bootstrap must be 0 or more, got -1")
    code, error = run_cli(capsys, *three, "--deals", "5", "--deals-file", str(saved), "--out", str(refused), *QUICK)
    assert_refused(code, error, f"--deals 5 but deal file {str(saved)!r} holds only 1 deals")
    # The three-player deal file given to the two-player runner (no --rules three) is named, not an IndexError.
    code, error = run_cli(capsys, "match", "greedy", "random", "--deals-file", str(saved), "--out", str(refused),
                          *QUICK)
    assert_refused(code, error, f"deal file {str(saved)!r} holds three-player deals (R21)", "--rules three")
    # sixtysix tournament without --rules plays the rules stored in the deal file, as its help says: three seats.
    played = tmp_path / "from-file"
    code, error = run_cli(capsys, "tournament", "--agents", "random,greedy,random", "--deals-file", str(saved),
                          "--out", str(played), *QUICK)
    assert code == 0, error
    with open(played / "results.csv", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 6  # the file's one deal in all six seat permutations (R21)
    code, error = run_cli(capsys, "tournament", "--agents", "random,greedy", "--deals-file", str(saved),
                          "--out", str(refused), *QUICK)
    assert_refused(code, error, "a three-player tournament needs at least three agents, got 2")
    for rules in (["--rules", "three"], ["--rule", "players=3"]):  # sixtysix match seats two agents only
        code, error = run_cli(capsys, "match", "greedy", "random", *rules, "--out", str(refused), *QUICK)
        assert code == 2 and "sixtysix match plays two agents; for three players (R21) run sixtysix tournament" in error
    # An --out holding a run with other settings is refused before the --records folder is made.
    records = tmp_path / "records"
    code, error = run_cli(capsys, *three, "--deals", "1", "--seed", "9", "--out", str(out), "--records", str(records),
                          *QUICK)
    assert_refused(code, error, "other settings (master_seed: 0 there, 9 now; deals_sha256: ")
    assert not refused.exists() and not records.exists()


def test_three_player_bad_agent_is_refused_before_the_deals_are_saved(tmp_path, capsys):
    saved = tmp_path / "sd.json"
    code, error = run_cli(capsys, "tournament", "--rules", "three", "--agents", "random,greedy,nosuch", "--deals",
                          "1", "--save-deals", str(saved), "--out", str(tmp_path / "out"), *QUICK)
    assert_refused(code, error, "unknown agent 'nosuch'")
    assert not saved.exists()


def test_an_out_folder_of_another_run_is_refused_before_the_deals_are_saved(good_run, tmp_path, capsys):
    saved = tmp_path / "sd.json"
    # good_run is random against greedy on two deals: three deals are other settings
    code, error = run_cli(capsys, "match", "random", "greedy", "--deals", "3", "--save-deals", str(saved),
                          "--out", str(good_run), *QUICK)
    assert_refused(code, error, f"output directory {str(good_run)!r} holds a run with different settings")
    assert not saved.exists()
    journal = good_run / "journal.jsonl"
    assert journal.read_bytes().count(b"\n") == 3  # the header and a line per deal pair: untouched


def test_a_whole_first_line_that_is_not_json_is_not_a_journal(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "journal.jsonl").write_text("some other program's notes\n")
    code, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--out", str(out), *QUICK)
    assert_refused(code, error, "is not a tournament journal")
    assert (out / "journal.jsonl").read_text() == "some other program's notes\n"  # not deleted as a torn header


def test_three_player_out_folder_of_another_run_is_refused_before_the_deals_are_saved(tmp_path, capsys):
    three = ["tournament", "--rules", "three", "--agents", "random,greedy,random"]
    out, saved = tmp_path / "out", tmp_path / "sd.json"
    code, error = run_cli(capsys, *three, "--deals", "1", "--out", str(out), *QUICK)
    assert code == 0, error
    code, error = run_cli(capsys, *three, "--deals", "1", "--seed", "9", "--out", str(out), "--save-deals",
                          str(saved), *QUICK)
    assert_refused(code, error, "belongs to a run with other settings (master_seed")
    assert not saved.exists()
    code, error = run_cli(capsys, *three, "--deals", "1", "--out", str(out), "--rule",
                          "three_player_early_marriage=false", *QUICK)  # the switch that differs, not "(rules)"
    assert_refused(code, error, "(rules.three_player_early_marriage: true there, false now)")


def test_a_rules_difference_names_the_switch(good_run, capsys):
    """The rules were shown cut to their first 80 characters, the same there and now."""
    code, error = run_cli(capsys, "match", "random", "greedy", "--deals", "2", "--out", str(good_run), "--rule",
                          "schneider_bummerl=false", *QUICK)
    assert_refused(code, error, "(rules.schneider_bummerl: true there, false now)")


# --------------------------------------------------------------------------- sixtysix play
def test_play_refuses_an_unwritable_records_folder_or_an_unfit_opponent_at_start(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    wanted = str(blocker / "records")
    code, error = run_cli(capsys, "play", "--opponent", "random", "--seed", "1", "--records", wanted)
    assert_refused(code, error, f"--records {wanted!r}: cannot write files there")
    records = tmp_path / "records"  # an opponent that cannot play the rules is refused before the folder is made
    code, error = run_cli(capsys, "play", "--opponent", "ppo:path=models/ppo_three.zip", "--records", str(records))
    assert_refused(code, error, "was trained for rules 'three' and cannot play 'standard'")
    assert not records.exists()


@pytest.mark.parametrize("command, option, value", [
    ("play", "--hint-seconds", "nan"), ("play", "--analysis-seconds", "nan"), ("play", "--hint-seconds", "inf"),
    ("serve", "--hint-seconds", "nan"), ("serve", "--analysis-seconds", "nan"), ("serve", "--idle-minutes", "nan"),
    ("serve", "--idle-minutes", "inf"),
])
def test_play_and_serve_refuse_durations_that_are_not_finite(command, option, value, capsys):
    """argparse reads "nan" and "inf" as floats, and NaN passed the "<= 0" check: a hint or an expiry that never
    ends. Refused by name before the game or the server starts."""
    code, error = run_cli(capsys, command, option, value)
    assert_refused(code, error, option, "must be a positive")


# --------------------------------------------------------------------------- sixtysix replay
def test_replaying_a_deal_file_without_a_deal_number_says_to_pick_one(good_run, capsys):
    deals = str(good_run / "deals.json")
    code, error = run_cli(capsys, "replay", deals)
    assert_refused(code, error, "is a deal file holding 2 deal(s)", f"pick a deal with FILE#N, e.g. {deals}#0")
    assert "missing key" not in error
    assert sixtysix_cli.main(["replay", deals + "#1"]) == 0  # a deal picked by number still shows
    assert "trump card" in capsys.readouterr().out


def test_writable_folder_creates_the_folder_leaves_nothing_and_names_a_folder_it_cannot_use(tmp_path):
    from sixtysix_env.fileio import writable_folder

    target = tmp_path / "a" / "b"
    assert writable_folder(target, "the test folder") == target
    assert target.is_dir() and list(target.iterdir()) == []  # the probe file is gone
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match=r"the test folder: cannot write files there \(Not a directory\)"):
        writable_folder(blocker / "records", "the test folder")


def test_writable_file_refuses_a_folder_or_a_parent_that_is_a_file_and_writes_nothing(tmp_path):
    from sixtysix_env.fileio import writable_file

    assert writable_file(tmp_path / "new" / "deeper" / "out.json", "--out") == tmp_path / "new" / "deeper" / "out.json"
    assert list(tmp_path.iterdir()) == []  # nothing made: a later refusal of the same command leaves no folder
    (tmp_path / "new").mkdir()
    with pytest.raises(ValueError, match="--out: is a folder, not a file"):
        writable_file(tmp_path / "new", "--out")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match=r"--out: '.*file' is a file, not a folder"):
        writable_file(blocker / "out.json", "--out")
    with pytest.raises(ValueError, match=r"--out: cannot write files there \(Not a directory: '.*file' is a file\)"):
        writable_file(blocker / "deeper" / "out.json", "--out")


def test_strict_json_names_a_number_beyond_the_digit_limit_in_every_reader(tmp_path):
    """Python's own error for an overlong number names neither the number nor the field; every strict reader (deal
    files, records, journals, the browser app's bodies) goes through loads_json, which names the field."""
    import sys

    from sixtysix_env.schema import loads_json, read_json_file

    digits = sys.get_int_max_str_digits() + 1
    with pytest.raises(ValueError, match=rf"deal file: field 'seed' has more than {digits - 1} digits"):
        loads_json('{"format": "x", "seed": ' + "9" * digits + "}", "deal file")
    path = tmp_path / "deals.json"
    path.write_text("[1, " + "9" * digits + "]")
    with pytest.raises(ValueError, match=rf"deal file '.*deals.json': a number has more than {digits - 1} digits"):
        read_json_file(path, "deal file")


@pytest.mark.timeout(20)  # the old search took about 30 s on this body (and hours on a 4 MB one)
def test_the_field_of_an_overlong_number_is_found_in_linear_time():
    """A security review: the pattern that found the field was searched from every position and went quadratic on a
    string of escaped quotes before the number, so one 100 KB request held the browser app's event loop for 30 s.
    The field is still named: after a string value, inside nested objects, and as an array item."""
    import sys

    from sixtysix_env.schema import loads_json

    digits = "1" * (sys.get_int_max_str_digits() + 1)
    quotes = '\\"' * 50_000
    with pytest.raises(ValueError, match="body: field 'x' has more than"):
        loads_json('{"record": {"a": "' + quotes + '"}, "x": ' + digits + "}", "body")
    with pytest.raises(ValueError, match="body: field 'seed' has more than"):
        loads_json('{"a": {"b": [1, "s", {"seed": -' + digits + "}]}}", "body")
    with pytest.raises(ValueError, match="body: a number has more than"):
        loads_json('{"a": "k", "b": [2, ' + digits + "]}", "body")
    with pytest.raises(ValueError, match=r"body: field 'q\\\\\"' has more than"):  # the name as written
        loads_json('{"q\\"": ' + digits + "}", "body")


def test_deal_file_options_and_three_player_imports_are_refused_by_name(tmp_path, capsys):
    """--rule with --deals-file changes a preset's switches, so it needs --rules; --import cannot reach the
    three-player workers (R21). Both are named instead of an unknown preset None or a silently ignored option."""
    saved = tmp_path / "deals.json"
    code, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--save-deals", str(saved),
                          "--out", str(tmp_path / "first"), *QUICK)
    assert code == 0, error
    code, error = run_cli(capsys, "match", "random", "greedy", "--deals-file", str(saved), "--rule",
                          "bummerl_target=5", "--out", str(tmp_path / "second"), *QUICK)
    assert_refused(code, error, "--rule with --deals-file needs --rules too")
    code, error = run_cli(capsys, "tournament", "--rules", "three", "--agents", "random,greedy,heuristic", "--deals",
                          "1", "--import", "no_such_module_xyz", "--out", str(tmp_path / "three"), *QUICK)
    assert_refused(code, error, "--import is not supported with three players (R21)")
    assert not (tmp_path / "second").exists() and not (tmp_path / "three").exists()


def test_a_three_player_run_with_a_negative_seed_has_ratings_and_labels_bummerl_points(tmp_path, capsys):
    """A negative --seed is a valid run seed; the ratings' bootstrap takes it too. With --match a seating's points
    are its game points at the Bummerl's end (R17), and the table says so."""
    out = tmp_path / "three"
    code, error = run_cli(capsys, "tournament", "--rules", "three", "--agents", "random,greedy,heuristic", "--deals",
                          "2", "--seed", "-1", "--match", "--out", str(out), "--no-progress", "--quiet",
                          "--bootstrap", "5")
    assert code == 0, error
    import json

    ratings = json.loads((out / "results.json").read_text())["summary"]["ratings"]
    assert "error" not in ratings and set(ratings["agents"]) == {"random", "greedy", "heuristic"}
    table = (out / "table.md").read_text()
    assert "game points at the Bummerl end" in table and "card points" not in table


def test_save_deals_refuses_what_load_deals_would_before_writing(tmp_path):
    """save_deals wrote files that load_deals then refused (no deals, a 24-card deck under the 20-card rules, R2, a
    master seed that is text, a dealer who is no seat); a card id outside the deck raised an IndexError."""
    import numpy as np

    from eval.deals import Deal, generate_deals, load_deals, save_deals
    from sixtysix_env import Rules

    path = tmp_path / "deals.json"
    standard = Rules()
    deck = generate_deals(0, 1, standard)[0].deck
    for deals, rules, seed, message in (
            ([], standard, None, "'deals' must be a non-empty list"),
            (generate_deals(0, 1, standard), Rules.preset("scharf"), None, "the 20-card game needs 20"),
            (generate_deals(0, 1, standard), standard, "x", "master_seed must be an integer, got 'x'"),
            ([Deal(5, deck)], standard, None, "deal 0: dealer must be 0 or 1, got 5"),
            ([Deal(0, (99,))], standard, None, "deal 0 is not a deal of card ids 0..23"),
            (generate_deals(0, 1, standard), "standard", None, "rules must be a Rules object")):
        with pytest.raises(ValueError, match=f"deals to write to '{path}': .*{message}"):
            save_deals(path, deals, rules, seed)
        assert not path.exists()
    three = Rules.preset("three")
    save_deals(path, generate_deals(3, 2, three), three, np.int64(3))  # three seats deal (R21); a numpy seed
    assert load_deals(path, three)[0] == generate_deals(3, 2, three)
