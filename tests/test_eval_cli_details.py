"""Details of ``sixtysix match`` and ``sixtysix tournament`` (eval/cli.py) that the broader tournament tests leave
open: the defaults the help text states, every option handed on to the runner, ``--rule`` parsing, the refusals of
bad numbers, deal files cut with ``--deals``, what is printed on success, and the exit codes and messages of a stop
or a killed worker. Most tests replace the runner by a recorder (the options it receives are the observable
contract); a few play one or two deals of random against greedy to check the files and the printed lines."""

from __future__ import annotations

import json

import pytest

import sixtysix_cli
from eval.deals import generate_deals, load_deals
from sixtysix_env import Rules

QUICK = ["--no-progress", "--quiet", "--bootstrap", "0"]


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``sixtysix ARGV`` (in this process)."""
    code = sixtysix_cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_refused(code: int, error: str, *fragments: str) -> None:
    assert code == 2, error
    assert "error:" in error and "Traceback" not in error, error
    for fragment in fragments:
        assert fragment in error, (fragment, error)


def argparse_refusal(capsys, *argv: str) -> str:
    """stderr of a command that argparse refuses (exit status 2)."""
    with pytest.raises(SystemExit) as exit_:
        sixtysix_cli.main(list(argv))
    assert exit_.value.code == 2
    return capsys.readouterr().err


class RunnerCalls:
    """What the command handed to the two-player runner (settings and keyword arguments) or the three-player one
    (parsed options, agent specs and rules)."""

    def __init__(self) -> None:
        self.settings = None
        self.options: dict = {}
        self.three: tuple | None = None


@pytest.fixture
def runner(monkeypatch):
    """Replace both tournament runners by recorders that play nothing and return an empty document (whose table
    is a placeholder)."""
    import eval.report
    import eval.three_tournament
    import eval.tournament

    calls = RunnerCalls()

    def record_two(settings, **options):
        calls.settings, calls.options = settings, options
        return {}

    def record_three(args, specs, rules):
        calls.three = (args, list(specs), rules)
        return {}

    monkeypatch.setattr(eval.tournament, "run_tournament", record_two)
    monkeypatch.setattr(eval.three_tournament, "three_player_cli", record_three)
    monkeypatch.setattr(eval.report, "markdown_table", lambda document: "(the table)")
    return calls


@pytest.fixture
def saved_deals(tmp_path, capsys):
    """A deal file of three standard deals from master seed 11 (written by ``--save-deals``)."""
    path = tmp_path / "three-deals.json"
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals", "3", "--seed", "11", "--save-deals",
                             str(path), *QUICK)
    assert code == 0, error
    return path


# --------------------------------------------------------------------------- defaults and options handed on
def test_match_defaults_are_the_documented_ones(runner, capsys):
    """--help: 100 deals, master seed 0, 1000 bootstrap resamples, one worker, processes on this machine, deal mode,
    nothing written."""
    code, out, error = run_cli(capsys, "match", "random", "greedy", "--quiet")
    assert (code, out) == (0, ""), error
    settings = runner.settings
    assert settings.agents == ("random", "greedy")
    assert settings.deals == tuple(generate_deals(0, 100, Rules()))
    assert (settings.master_seed, settings.bootstrap, settings.match, settings.imports) == (0, 1000, False, ())
    assert settings.rules == Rules.preset("standard")
    assert settings.deals_source == "generated from master seed 0"
    assert runner.options == {"out_dir": None, "workers": 1, "progress": False, "overwrite": False,
                              "records_dir": None, "backend": "multiprocessing", "address": None}


def test_every_match_option_reaches_the_runner(runner, tmp_path, capsys, monkeypatch):
    (tmp_path / "extra_agents_a.py").write_text("IMPORTED = True\n")
    (tmp_path / "extra_agents_b.py").write_text("IMPORTED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out, records = tmp_path / "out", tmp_path / "records"
    code, _, error = run_cli(capsys, "match", "greedy", "random", "--deals", "2", "--seed", "5", "--match",
                             "--bootstrap", "7", "--workers", "3", "--import", "extra_agents_a", "--import",
                             "extra_agents_b", "--out", str(out), "--records", str(records), "--overwrite",
                             "--rules", "paderborn", "--quiet")
    assert code == 0, error
    settings = runner.settings
    assert settings.agents == ("greedy", "random")  # A then B, as given
    assert settings.rules == Rules.preset("paderborn")
    assert settings.deals == tuple(generate_deals(5, 2, Rules.preset("paderborn")))
    assert (settings.master_seed, settings.bootstrap, settings.match) == (5, 7, True)
    assert settings.imports == ("extra_agents_a", "extra_agents_b")
    assert settings.deals_source == "generated from master seed 5"
    assert runner.options == {"out_dir": str(out), "workers": 3, "progress": False, "overwrite": True,
                              "records_dir": str(records), "backend": "multiprocessing", "address": None}


@pytest.mark.parametrize("flags, progress", [([], True), (["--no-progress"], False), (["--quiet"], False)])
def test_the_progress_bar_shows_unless_no_progress_or_quiet(runner, capsys, flags, progress):
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", *flags)
    assert code == 0, error
    assert runner.options["progress"] is progress


def test_a_ray_cluster_address_reaches_the_runner(runner, capsys):
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--backend", "ray", "--address",
                             "10.0.0.1:6379", "--quiet")
    assert code == 0, error
    assert (runner.options["backend"], runner.options["address"]) == ("ray", "10.0.0.1:6379")


PARAMETER_AGENT_MODULE = """
from agents import register
from agents.base import RandomAgent



def tuned_random(seed=None, depth: int = 1, width: int = 1):
    return RandomAgent(seed=seed)  # two parameters, so a spec can carry a list of them


register("tuned-random", tuned_random)
"""


def test_tournament_takes_agent_lists_and_single_agents_in_order(runner, tmp_path, capsys, monkeypatch):
    """A bare key=value piece of --agents continues the previous spec's parameters (module docstring and epilog)."""
    (tmp_path / "tuned_random_agent.py").write_text(PARAMETER_AGENT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, _, error = run_cli(capsys, "tournament", "--import", "tuned_random_agent", "--agents",
                             "random,tuned-random:depth=2,width=3", "--agent", "greedy", "--agent", "heuristic",
                             "--deals", "1", "--out", str(tmp_path / "out"), "--quiet")
    assert code == 0, error
    assert runner.settings.agents == ("random", "tuned-random:depth=2,width=3", "greedy", "heuristic")
    assert runner.options["out_dir"] == str(tmp_path / "out")


def test_tournament_needs_out_and_two_agents(capsys, tmp_path):
    error = argparse_refusal(capsys, "tournament", "--agents", "random,greedy", "--deals", "1")
    assert "the following arguments are required: --out" in error
    error = argparse_refusal(capsys, "tournament", "--agents", "random", "--deals", "1", "--out", str(tmp_path))
    assert "give at least two agents with --agents and/or --agent" in error


def test_an_unknown_rules_preset_is_refused_by_argparse_naming_the_choices(capsys):
    error = argparse_refusal(capsys, "match", "random", "greedy", "--rules", "nosuch")
    assert "argument --rules: invalid choice: 'nosuch'" in error and "standard" in error


# --------------------------------------------------------------------------- --rule
def test_rule_overrides_are_read_case_and_space_tolerant_and_all_apply(runner, capsys):
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--rule", " bummerl_target = 5 ",
                             "--rule", " schneider_bummerl = FALSE ", "--rule", "close_draw_option=True", "--quiet")
    assert code == 0, error
    rules = runner.settings.rules
    assert rules == Rules.preset("standard", bummerl_target=5, schneider_bummerl=False, close_draw_option=True)
    assert type(rules.bummerl_target) is int
    assert runner.settings.deals == tuple(generate_deals(0, 1, rules))


@pytest.mark.parametrize("override, message", [
    ("=5", "--rule expects SWITCH=VALUE (e.g. schneider_bummerl=false), got '=5'"),
    ("schneider_bummerl", "--rule expects SWITCH=VALUE (e.g. schneider_bummerl=false), got 'schneider_bummerl'"),
    ("bummerl_target=seven", "--rule 'bummerl_target=seven': value must be true, false or an integer"),
])
def test_a_malformed_rule_override_is_refused_naming_it(runner, capsys, override, message):
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--rule", override, *QUICK)
    assert_refused(code, error, message)
    assert runner.settings is None


@pytest.mark.parametrize("command", [
    ("match", "random", "greedy"), ("match", "random", "greedy", "--match"),
    ("tournament", "--agents", "random,greedy", "--match"),
    ("tournament", "--rules", "three", "--agents", "random,greedy,heuristic"),
])
def test_a_partie_switch_is_refused_since_no_runner_plays_a_partie(runner, tmp_path, capsys, command):
    """R18: the runners play single deals or single Bummerls (R17); --rule partie_bummerl=3 was accepted and changed
    nothing in the results."""
    code, _, error = run_cli(capsys, *command, "--deals", "1", "--rule", "partie_bummerl=3", "--out",
                             str(tmp_path / "out"), *QUICK)
    assert_refused(code, error, "--rule partie_bummerl would be ignored", "never a Partie (R18)")
    assert runner.settings is None and not (tmp_path / "out").exists()


def test_three_player_rule_overrides_reach_the_three_player_runner(runner, tmp_path, capsys):
    code, _, error = run_cli(capsys, "tournament", "--rule", "players=3", "--rule",
                             "three_player_early_marriage=true", "--agents", "random,greedy,heuristic", "--deals",
                             "1", "--out", str(tmp_path / "out"), "--quiet")
    assert code == 0, error
    _, specs, rules = runner.three
    assert specs == ["random", "greedy", "heuristic"]
    assert rules.players == 3 and rules.three_player_early_marriage is True


# --------------------------------------------------------------------------- numbers that are refused
@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("option, value, message", [
    ("--deals", "0", "--deals must be at least 1, got 0"),
    ("--bootstrap", "-1", "--bootstrap must be 0 or more, got -1"),
    ("--workers", "0", "--workers must be at least 1, got 0"),
])
def test_counts_below_their_minimum_are_refused_by_name(runner, tmp_path, capsys, players, option, value, message):
    command = ["tournament", "--rules", "three", "--agents", "random,greedy,random"] if players == 3 else [
        "match", "random", "greedy"]
    saved = tmp_path / "deals.json"
    arguments = [option, value] + ([] if option == "--deals" else ["--deals", "1"])
    code, _, error = run_cli(capsys, *command, *arguments, "--out", str(tmp_path / "out"), "--save-deals",
                             str(saved), "--no-progress", "--quiet")
    assert_refused(code, error, message)
    assert runner.settings is None and runner.three is None and not saved.exists()


def test_an_address_needs_the_ray_backend(runner, capsys):
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--address", "10.0.0.1:6379",
                             *QUICK)
    assert_refused(code, error, "an address names a Ray cluster: use it with backend 'ray'")
    assert runner.settings is None


@pytest.mark.parametrize("backend", [["--backend", "ray"], ["--address", "10.0.0.1:6379"]])
def test_three_players_refuse_ray_and_an_address(runner, tmp_path, capsys, backend):
    code, _, error = run_cli(capsys, "tournament", "--rules", "three", "--agents", "random,greedy,random", "--deals",
                             "1", *backend, "--out", str(tmp_path / "out"), *QUICK)
    assert_refused(code, error, "three-player tournaments run on worker processes only: drop --backend/--address")
    assert runner.three is None


def test_a_bad_second_agent_or_agent_module_is_refused_before_the_deals_are_saved(runner, tmp_path, capsys):
    saved = tmp_path / "deals.json"
    code, _, error = run_cli(capsys, "match", "random", "nosuch", "--deals", "1", "--save-deals", str(saved), *QUICK)
    assert_refused(code, error, "unknown agent 'nosuch'")
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--import", "no_such_agents_module_xyz", "--deals",
                             "1", "--save-deals", str(saved), *QUICK)
    assert_refused(code, error, "cannot import agent module 'no_such_agents_module_xyz'")
    assert not saved.exists() and runner.settings is None


# --------------------------------------------------------------------------- deal files
def test_a_deal_file_is_played_whole_by_default_and_cut_by_deals(runner, saved_deals, capsys):
    file_deals, _ = load_deals(saved_deals)
    for deals_option, expected in (([], 3), (["--deals", "3"], 3), (["--deals", "2"], 2)):
        code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals-file", str(saved_deals),
                                 *deals_option, "--seed", "4", *QUICK)
        assert code == 0, error
        assert runner.settings.deals == tuple(file_deals[:expected])
        assert runner.settings.deals_source == f"file {saved_deals}"
        assert runner.settings.master_seed == 4  # the agents' seeds still come from --seed
    runner.settings = None
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals-file", str(saved_deals), "--deals", "4",
                             *QUICK)
    assert_refused(code, error, f"--deals 4 but deal file {str(saved_deals)!r} holds only 3 deals")
    assert runner.settings is None


def test_rules_given_with_a_deal_file_must_be_the_files_and_rule_overrides_count(runner, tmp_path, capsys):
    saved = tmp_path / "no-schneider.json"
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals", "2", "--rule", "schneider_bummerl=false",
                             "--save-deals", str(saved), *QUICK)
    assert code == 0, error
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals-file", str(saved), "--rules", "standard",
                             "--rule", "schneider_bummerl=false", *QUICK)
    assert code == 0, error
    assert runner.settings.rules == Rules.preset("standard", schneider_bummerl=False)
    runner.settings = None
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals-file", str(saved), "--rules", "standard",
                             *QUICK)
    assert_refused(code, error, str(saved))
    assert runner.settings is None


def test_save_deals_records_the_master_seed_only_for_generated_deals(saved_deals, tmp_path, capsys):
    assert json.loads(saved_deals.read_text())["master_seed"] == 11
    again = tmp_path / "again.json"
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals-file", str(saved_deals), "--deals", "2",
                             "--save-deals", str(again), *QUICK)
    assert code == 0, error
    document = json.loads(again.read_text())
    assert document.get("master_seed") is None  # the file's deals need not come from this run's --seed
    assert load_deals(again)[0] == load_deals(saved_deals)[0][:2]


# --------------------------------------------------------------------------- what a run prints and writes
def test_a_run_prints_its_table_and_where_it_wrote_unless_quiet(tmp_path, capsys):
    out, records = tmp_path / "out", tmp_path / "records"
    code, printed, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--seed", "3", "--out",
                                   str(out), "--records", str(records), "--no-progress", "--bootstrap", "0")
    assert code == 0, error
    assert "# Tournament results" in printed and "master seed 3" in printed
    assert f"results written to {out}/ (results.json, results.csv, table.md, crosstable.png)" in printed
    assert f"game records written to {records}/ (one per deal and seating; `sixtysix replay FILE`)" in printed
    settings = json.loads((out / "results.json").read_text())["settings"]
    assert (settings["agents"], settings["master_seed"], settings["mode"]) == (["random", "greedy"], 3, "deal")
    assert len(list(records.iterdir())) == 2  # one deal, two seatings

    quiet_out = tmp_path / "quiet"
    code, printed, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--out", str(quiet_out),
                                   *QUICK)
    assert (code, printed, error) == (0, "", "")
    assert (quiet_out / "results.json").exists()


def test_a_run_without_out_or_records_says_nothing_about_files(capsys):
    code, printed, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--no-progress",
                                   "--bootstrap", "0")
    assert code == 0, error
    assert "# Tournament results" in printed and "written to" not in printed


def test_overwrite_replaces_a_run_with_other_settings(tmp_path, capsys):
    out = tmp_path / "out"
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--out", str(out), *QUICK)
    assert code == 0, error
    code, _, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--seed", "9", "--out", str(out),
                             "--overwrite", *QUICK)
    assert code == 0, error
    assert json.loads((out / "results.json").read_text())["settings"]["master_seed"] == 9


# --------------------------------------------------------------------------- stops and killed workers
def test_a_stop_without_out_exits_130_with_advice_on_stderr(monkeypatch, capsys):
    import eval.tournament

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(eval.tournament, "run_tournament", stopped)
    try:
        code, printed, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--no-progress")
    except KeyboardInterrupt:  # would end the whole test session instead of failing this test
        pytest.fail("the stop escaped the command as a KeyboardInterrupt")
    assert (code, printed) == (130, "")
    assert error == "interrupted; run the same command again to continue\n"


@pytest.mark.parametrize("with_out", [True, False])
def test_a_killed_worker_exits_1_naming_the_first_clause_and_where_work_is_kept(monkeypatch, tmp_path, capsys,
                                                                                 with_out):
    import eval.tournament

    def worker_died(*args, **kwargs):
        raise eval.tournament.WorkerDied("worker process 2 ended with exit code -9; internal detail")

    monkeypatch.setattr(eval.tournament, "run_tournament", worker_died)
    out = tmp_path / "out"
    code, printed, error = run_cli(capsys, "match", "random", "greedy", "--deals", "1", "--no-progress",
                                   *(["--out", str(out)] if with_out else []))
    assert (code, printed) == (1, "")
    kept = f"; finished tasks are kept in {out}" if with_out else ""
    assert error == (f"error: worker process 2 ended with exit code -9{kept}; run the same command again to "
                     "continue\n")
