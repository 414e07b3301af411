"""Bad command-line input to the benchmark tools (bench/) is refused before any work: a short ``error: ...`` naming
the bad value or file, exit code 2, no traceback, and no output file written (not even one of several).

Each case runs the tool's ``main`` in this process with arguments that would be cheap even if the check were
missing, so a tool that skips a check fails its case quickly (a traceback or a file written) instead of hanging;
the one input that used to hang (a talon range without positions) runs in a child process with a timeout."""

from __future__ import annotations

import importlib
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY_REFERENCE = "expert_v3:samples=4,seconds=none,prune=none"  # a reference of one position takes a moment
UNKNOWN_AGENT = "unknown agent 'nosuch'"


def made_files(tmp_path: Path) -> dict[str, str]:
    """The files and folders the cases name, by the placeholder their arguments use."""
    folder = tmp_path / "a-folder"
    folder.mkdir()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    (tmp_path / "sb.md").mkdir()  # strength_budget's second output is a folder: the first must not be written
    text_npz, text_zip = tmp_path / "text.npz", tmp_path / "text.zip"
    text_npz.write_text("not an archive")
    text_zip.write_text("not an archive")
    truncated_npz, truncated_zip = tmp_path / "truncated.npz", tmp_path / "truncated.zip"
    truncated_npz.write_bytes((ROOT / "models" / "suit_a_standard.npz").read_bytes()[:300])
    truncated_zip.write_bytes((ROOT / "models" / "ppo_standard.zip").read_bytes()[:5000])
    bare_reference = tmp_path / "bare_reference.json"
    bare_reference.write_text(json.dumps({"format": "sixtysix-decision-regret-reference"}))
    bare_equity = tmp_path / "bare_equity.json"
    bare_equity.write_text(json.dumps({"format": "sixtysix-bummerl-equity"}))
    record = {"opponent": "heuristic", "epoch": 1, "margin": 0.1, "margin_ci_low": 0.0, "margin_ci_high": 0.2}
    curves = {}
    for name, dropped in (("curve", None), ("no_epoch", "epoch"), ("no_margin", "margin")):
        curves[name] = tmp_path / f"{name}.jsonl"
        curves[name].write_text(json.dumps({key: value for key, value in record.items() if key != dropped}) + "\n")
    curves["nested"] = tmp_path / "nested.jsonl"
    curves["nested"].write_text("[" * 100_000 + "]" * 100_000 + "\n")  # was a RecursionError traceback
    return {"tmp": str(tmp_path), "folder": str(folder), "file": str(blocker), "text_npz": str(text_npz),
            "text_zip": str(text_zip), "truncated_npz": str(truncated_npz), "truncated_zip": str(truncated_zip),
            "bare_reference": str(bare_reference), "bare_equity": str(bare_equity),
            **{name: str(path) for name, path in curves.items()}}


IS_A_FOLDER = "{option} '{{folder}}': is a folder, not a file"
UNDER_A_FILE = "'{{file}}' is a file, not a folder"
REGRET = f"--reference {{tmp}}/r.json --positions 1 --reference-spec {TINY_REFERENCE} --no-progress"

# (case, tool, arguments, the error's fragment or fragments): placeholders of made_files in braces.
CASES = [
    # Unusable output paths (a folder, or under a file), refused before the work.
    ("bummerl_equity --out", "bummerl_equity", "heuristic random --deals 1 --no-progress --out {file}/x.json",
     UNDER_A_FILE.format()),
    ("core_bench --json", "core_bench", "--only phase2_solve_ms --positions 1 --json {folder}",
     IS_A_FOLDER.format(option="--json")),
    ("decision_regret --json", "decision_regret", REGRET + " --json {folder}", IS_A_FOLDER.format(option="--json")),
    ("decision_regret --reference", "decision_regret", REGRET.replace("{tmp}", "{file}"), UNDER_A_FILE.format()),
    ("leaf_calibration --out", "leaf_calibration", "--deals 1 --no-progress --critic ppo_true_world --out {folder}",
     IS_A_FOLDER.format(option="--out")),
    ("luck_intervals --json", "luck_intervals", "--entry a={tmp}/run --json {folder}",
     IS_A_FOLDER.format(option="--json")),
    ("luck_intervals --plot", "luck_intervals", "--entry a={tmp}/run --plot {file}/p.png", UNDER_A_FILE.format()),
    ("plot_networks --out", "plot_networks", "--curve a={curve} --out {folder}", IS_A_FOLDER.format(option="--out")),
    ("play_load --out", "play_load", "--games 1 --search-games 0 --timeout 10 --out {file}/load.json",
     UNDER_A_FILE.format()),
    ("strength_budget --out (its .md)", "strength_budget", "--budgets 0.01 --deals 2 --out {tmp}/sb --runs {tmp}/runs",
     "--out '{tmp}/sb.md': is a folder, not a file"),
    ("vector_bench --json", "vector_bench", "--num-envs 1 --seconds 0.01 --repeats 1 --json {file}/v.json",
     UNDER_A_FILE.format()),
    ("vector_bench --plot format", "vector_bench", "--num-envs 1 --seconds 0.01 --repeats 1 --plot {tmp}/v.xyz",
     "matplotlib writes no 'xyz' images"),
    # A plot is written in the format of its suffix: one matplotlib does not write is refused before the work (the
    # other tools wrote a PNG under any name, or refused all but .png).
    ("luck_intervals --plot format", "luck_intervals", "--entry a={tmp}/run --plot {tmp}/p.xyz",
     "--plot '{tmp}/p.xyz': matplotlib writes no 'xyz' images"),
    ("closings --plot format", "closings", "{tmp}/no-run --plot {tmp}/p.txt",
     "--plot '{tmp}/p.txt': matplotlib writes no 'txt'"),
    ("closing_premium --plot format", "closing_premium",
     "--deals 1 --agent expert:seconds=none,samples=8,threads=1 --no-progress --plot {tmp}/p.doc",
     "--plot '{tmp}/p.doc': matplotlib writes no 'doc'"),
    ("plot_networks --out format", "plot_networks", "--curve a={curve} --out {tmp}/p.xyz",
     "--out '{tmp}/p.xyz': matplotlib writes no 'xyz' images"),
    ("run --json", "run", "--seconds 0.01 --repeats 1 --no-peers --no-core --json {folder}",
     IS_A_FOLDER.format(option="--json")),
    ("closing_premium --plot", "closing_premium",
     "--deals 1 --agent expert:seconds=none,samples=8,threads=1 --no-progress --plot {folder}",
     IS_A_FOLDER.format(option="--plot")),
    ("closings --out", "closings", "{tmp}/no-run --out {folder}", IS_A_FOLDER.format(option="--out")),
    ("decision_time --json", "decision_time", "--agent random --deals 1 --repeats 1 --no-progress --json {folder}",
     IS_A_FOLDER.format(option="--json")),
    # 1. oracle_bounds: every agent spec
    ("oracle_bounds sees-hand", "oracle_bounds", "sees-hand nosuch --deals 2", f"sees-hand 'nosuch': {UNKNOWN_AGENT}"),
    ("oracle_bounds --opponent", "oracle_bounds", "clairvoyant --opponent nosuch --deals 2",
     f"--opponent 'nosuch': {UNKNOWN_AGENT}"),
    ("oracle_bounds clairvoyant argument", "oracle_bounds", "clairvoyant expert --deals 2",
     "clairvoyant takes no argument (its honest peer of --paired is --base), got 'expert'"),
    ("oracle_bounds --base", "oracle_bounds", "oracle phase1 --base heuristic:bogus=1 --deals 2",
     "--base 'heuristic:bogus=1': unknown parameter 'bogus'"),
    # 2. quick_strength
    ("quick_strength agent", "quick_strength", "nosuch heuristic --deals 2", f"agent_a 'nosuch': {UNKNOWN_AGENT}"),
    ("quick_strength --preset", "quick_strength", "heuristic greedy --deals 2 --preset bogus",
     "--preset: invalid choice: 'bogus'"),
    # flags named (the messages said 'deals' and 'win_chance')
    ("decision_time --deals -1", "decision_time", "--deals -1", "--deals must be at least 1, got -1"),
    ("bummerl_equity --win-chance 1.5", "bummerl_equity", "heuristic random --deals 1 --win-chance 1.5",
     "--win-chance: win_chance must be a share of scored deals strictly between 0 and 1, got 1.5"),
    # 3. inference_calibration: --agreement is checked before the measuring, not after it; so are the grids, which
    # failed after the self-play (a ZeroDivisionError, a math domain error) or printed nan
    ("inference_calibration --scales 0", "inference_calibration", "--deals 1 --scales 0",
     "--scales must be finite numbers above 0, got 0.0"),
    ("inference_calibration --scales nan", "inference_calibration", "--deals 1 --scales nan",
     "--scales must be finite numbers above 0, got nan"),
    ("inference_calibration --mixes 2", "inference_calibration", "--deals 1 --mixes 2",
     "--mixes must be finite numbers in [0, 1], got 2.0"),
    ("inference_calibration --floors -1", "inference_calibration", "--deals 1 --floors -1",
     "--floors must be finite numbers in (0, 1], got -1.0"),
    ("inference_calibration --agent", "inference_calibration", "--agent nosuch --deals 1",
     f"--agent 'nosuch': {UNKNOWN_AGENT}"),
    ("inference_calibration --agreement", "inference_calibration",
     "--agreement nosuch --deals 1 --worlds 1 --scales 1 --mixes 0.5", f"--agreement 'nosuch': {UNKNOWN_AGENT}"),
    # 4. inference_overlap
    ("inference_overlap --agent", "inference_overlap", "--agent nosuch --deals 1 --worlds 1",
     f"--agent 'nosuch': {UNKNOWN_AGENT}"),
    # 4a. float options that are not finite: "nan" passed one-sided checks such as "<= 0"
    ("open_solve --budget nan", "open_solve", "--deals 1 --budget nan", "argument --budget: not a finite number: 'nan'"),
    ("run --seconds inf", "run", "--seconds inf", "argument --seconds: not a finite number: 'inf'"),
    ("inference_overlap --lead-floor nan", "inference_overlap", "--deals 1 --lead-floor nan",
     "argument --lead-floor: not a finite number"),
    ("inference_overlap nothing measured", "inference_overlap", "--where closed --deals 1 --worlds 1",
     "no decision of 1 deal(s) was measured"),
    ("inference_fallback --deviate nan", "inference_fallback", "--worlds 1 --deviate nan",
     "argument --deviate: not a finite number"),
    ("inference_fallback --seeds", "inference_fallback", "--worlds 1 --seeds 3,x", "--seeds must be integers"),
    ("inference_fallback --tricks", "inference_fallback", "--worlds 1 --tricks 9", "--tricks must lie in 1..5"),
    ("inference_fallback --worlds", "inference_fallback", "--worlds 0", "--worlds, --tries and --reference-tries"),
    # 4b. an agent that cannot play the tool's rules (a network fitted for others, R19-R21) is refused up front too
    ("inference_overlap --agent three-player", "inference_overlap",
     f"--agent ppo:path={ROOT}/models/ppo_three.zip --deals 1 --worlds 1",
     "ppo_three.zip' was trained for rules 'three' and cannot play 'standard'"),
    ("inference_calibration --agent three-player", "inference_calibration",
     f"--agent ppo:path={ROOT}/models/ppo_three.zip --deals 1", "was trained for rules 'three'"),
    # Only the rollout search keeps the per-world values the premium is read from: pimc failed with an
    # AttributeError at the first lead where closing was legal.
    ("closing_premium --agent not a rollout search", "closing_premium",
     "--deals 6 --agent pimc:samples=9 --no-progress",
     "--agent 'pimc:samples=9': not a rollout search (rollout:..., expert)"),
    # a search without the prune parameter is told the same, not that its twin's prune=none is unknown
    ("closing_premium --agent blend", "closing_premium", "--deals 6 --agent blend --no-progress",
     "--agent 'blend': not a rollout search (rollout:..., expert)"),
    ("closing_premium --opponent three-player", "closing_premium",
     f"--opponent ppo:path={ROOT}/models/ppo_three.zip --deals 1", "was trained for rules 'three'"),
    ("quick_strength expert under scharf", "quick_strength", "expert heuristic --deals 2 --preset scharf",
     "agent_a 'expert': rollout's prior 'suit_iterated' was fitted for the rules 'standard', not 'scharf'"),
    # 5. leaf_calibration: network files that are missing, folders, not archives or cut short (what is wrong with
    # them is the loaders' to say, agents/ppo.py; here that the option and the file are named)
    ("leaf_calibration --prior missing", "leaf_calibration", "--deals 1 --prior {tmp}/nope.npz",
     ("--prior", "'{tmp}/nope.npz'")),
    ("leaf_calibration --prior text", "leaf_calibration", "--deals 1 --prior {text_npz}", ("--prior", "'{text_npz}'")),
    ("leaf_calibration --prior truncated", "leaf_calibration", "--deals 1 --prior {truncated_npz}",
     ("--prior", "'{truncated_npz}'")),
    ("leaf_calibration --prior folder", "leaf_calibration", "--deals 1 --prior {folder}",
     "--prior '{folder}' is a folder, not a network file"),
    ("leaf_calibration --critic text zip", "leaf_calibration", "--deals 1 --critic {text_zip}",
     "--critic '{text_zip}': "),
    ("leaf_calibration --critic truncated", "leaf_calibration", "--deals 1 --critic {truncated_zip}",
     "--critic '{truncated_zip}': "),
    ("leaf_calibration --critic missing", "leaf_calibration", "--deals 1 --critic {tmp}/nope.zip",
     "--critic '{tmp}/nope.zip': "),
    ("leaf_calibration --critic text npz", "leaf_calibration", "--deals 1 --critic {text_npz}",
     "--critic '{text_npz}': "),
    # 6. decision_regret: the agents before the reference is built and saved; a reference lacking its keys
    ("decision_regret --agent", "decision_regret", REGRET + " --agent nosuch", f"--agent 'nosuch': {UNKNOWN_AGENT}"),
    ("decision_regret bare reference", "decision_regret", "--reference {bare_reference} --no-progress",
     "regret reference '{bare_reference}' lacks its settings or its list of positions"),
    # 7. bummerl_equity --minus of files lacking the fields it compares
    ("bummerl_equity --minus", "bummerl_equity", "--minus {bare_equity} {bare_equity}",
     "bummerl equity results '{bare_equity}' lack agents, seed, deals_per_bummerl, rows"),
    # 8. core_bench
    ("core_bench --positions 0", "core_bench", "--only phase2_solve_ms --positions 0",
     "--positions must be at least 1, got 0"),
    ("core_bench --positions -3", "core_bench", "--only phase2_solve_ms --positions -3",
     "--positions must be at least 1, got -3"),
    # 8a. solver_bench: each kind needs a position; the three-player game has no closing and no solver here
    ("solver_bench --positions 2", "solver_bench", "--positions 2 --preset standard", "--positions must be at least 3"),
    ("solver_bench --preset three", "solver_bench", "--positions 3 --preset three", "--preset must be one of"),
    # 9. open_solve
    ("open_solve --deals 0", "open_solve", "--deals 0", "--deals must be at least 1, got 0"),
    ("open_solve --deals -1", "open_solve", "--deals -1", "--deals must be at least 1, got -1"),
    ("open_solve --budget 0", "open_solve", "--deals 1 --budget 0", "--budget must be a positive number"),
    ("open_solve --budget -1", "open_solve", "--deals 1 --budget -1", "--budget must be a positive number"),
    # 10. run (sixtysix bench)
    ("run --seconds 0", "run", "--seconds 0 --no-peers --no-core", "--seconds must be positive, got 0"),
    ("run --repeats -1", "run", "--seconds 0.01 --repeats -1 --no-peers --no-core", "--repeats must be at least 1"),
    ("run --rules", "run", "--seconds 0.01 --repeats 1 --no-peers --no-core --rules bogus",
     "--rules must be a two-player preset"),
    # 11. vector_bench
    ("vector_bench --num-envs 0", "vector_bench", "--num-envs 0 --seconds 0.01 --repeats 1",
     "--num-envs must be at least 1, got 0"),
    ("vector_bench --repeats 0", "vector_bench", "--num-envs 1 --seconds 0.01 --repeats 0",
     "--repeats must be at least 1, got 0"),
    ("vector_bench --seconds -1", "vector_bench", "--num-envs 1 --seconds -1 --repeats 1",
     "--seconds must be positive, got -1"),
    ("vector_bench --rules", "vector_bench", "--num-envs 1 --seconds 0.01 --repeats 1 --rules bogus",
     "--rules must be a two-player preset"),
    # 12. strength_budget: counts, budgets and specs (the agent must take seconds) before any match
    ("strength_budget --deals 1", "strength_budget", "--deals 1 --out {tmp}/o --runs {tmp}/runs",
     "--deals must be at least 2, got 1"),
    ("strength_budget --budgets x", "strength_budget", "--budgets x --deals 2 --out {tmp}/o --runs {tmp}/runs",
     "--budgets must be comma-separated seconds"),
    ("strength_budget --budgets -1", "strength_budget", "--budgets -1 --deals 2 --out {tmp}/o --runs {tmp}/runs",
     "--budgets must be positive finite seconds, got '-1'"),
    ("strength_budget --budgets twice", "strength_budget", "--budgets 0.1,1,0.10 --deals 2 --out {tmp}/o "
     "--runs {tmp}/runs", "--budgets names 0.1 more than once, got '0.1,1,0.10'"),
    ("strength_budget --agent", "strength_budget", "--agent nosuch --budgets 0.01 --deals 2 --out {tmp}/o "
     "--runs {tmp}/runs", UNKNOWN_AGENT),
    ("strength_budget --opponent", "strength_budget", "--opponent nosuch --budgets 0.01 --deals 2 --out {tmp}/o "
     "--runs {tmp}/runs", f"--opponent 'nosuch': {UNKNOWN_AGENT}"),
    ("strength_budget agent without seconds", "strength_budget", "--agent heuristic --budgets 0.01 --deals 2 "
     "--out {tmp}/o --runs {tmp}/runs", "unknown parameter 'seconds' for agent 'heuristic'"),
    # 13. play_load: argparse's error and exit code, and the specs before the server starts
    ("play_load no games", "play_load", "--games 0 --search-games 0 --out {tmp}/load.json", "need at least one game"),
    ("play_load too many games", "play_load", "--games 500 --out {tmp}/load.json",
     "bounded load test: at most 400 games"),
    ("play_load --opponent", "play_load", "--games 1 --search-games 0 --opponent nosuch --out {tmp}/load.json",
     f"--opponent 'nosuch': {UNKNOWN_AGENT}"),
    ("play_load --out png", "play_load", "--games 1 --search-games 0 --out {tmp}/load.png",
     "--out names the JSON table (its plot is written beside it as .png)"),
    # 14. plot_networks: evaluation records lacking a field the plot reads
    ("plot_networks no epoch", "plot_networks", "--curve a={no_epoch} --out {tmp}/p.png",
     "'{no_epoch}' line 1 is not an evaluation record: it lacks epoch"),
    ("plot_networks no margin", "plot_networks", "--curve a={no_margin} --out {tmp}/p.png",
     "'{no_margin}' line 1 is not an evaluation record: it lacks margin"),
    ("plot_networks nested", "plot_networks", "--curve a={nested} --out {tmp}/p.png",
     "'{nested}' line 1 is not an evaluation record"),
]


def files_under(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("tool, arguments, fragments", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_is_refused_by_name_before_any_work(tool, arguments, fragments, tmp_path, monkeypatch, capsys):
    names = made_files(tmp_path)
    monkeypatch.chdir(tmp_path)  # an output a tool puts in the current folder by default lands here too
    before = files_under(tmp_path)
    main = importlib.import_module(f"bench.{tool}").main
    try:
        code = main(shlex.split(arguments.format(**names)))
    except SystemExit as exit:
        code = exit.code
    error = capsys.readouterr().err
    assert code == 2, error
    assert "error:" in error and "Traceback" not in error, error
    for fragment in (fragments,) if isinstance(fragments, str) else fragments:
        assert fragment.format(**names) in error, error
    assert files_under(tmp_path) == before  # nothing written, not even the first of several outputs


@pytest.mark.parametrize("talons", ["--min-talon 13", "--min-talon 10 --max-talon 8", "--min-talon 9 --max-talon 9"])
def test_decision_regret_refuses_a_talon_range_without_positions_promptly(talons, tmp_path):
    """No phase-1 decision has such a talon (12, 10, ..., 2 cards): sampling positions would search for ever."""
    reference = tmp_path / "r.json"
    completed = subprocess.run([sys.executable, "-m", "bench.decision_regret", "--reference", str(reference),
                                "--no-progress", *talons.split()],
                               cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2, completed.stderr
    assert "holds no talon size of a position" in completed.stderr and "Traceback" not in completed.stderr
    assert not reference.exists()


def test_play_load_stops_waiting_for_a_server_that_exited_and_shows_its_last_output(tmp_path):
    from bench import play_load

    log = tmp_path / "server.log"
    with open(log, "wb") as log_file:
        server = subprocess.Popen([sys.executable, "-c", "import sys; sys.stderr.write('cannot serve: nosuch\\n'); "
                                   "sys.exit(3)"], stderr=log_file)
    started = time.monotonic()
    failure = play_load.server_failure(server, f"http://127.0.0.1:{play_load._free_port()}", log)
    assert time.monotonic() - started < 10  # not the 20 s of polling a server that is starting
    assert "exited with code 3" in failure and "cannot serve: nosuch" in failure


def test_strength_budget_checks_every_budgets_run_folder_before_the_first_match(tmp_path, capsys):
    """A later budget's folder holding another run failed only after the earlier budgets had played (a traceback
    that named --out and --overwrite, which the tool does not have)."""
    from bench import strength_budget

    later = tmp_path / "runs" / "0.03"
    later.mkdir(parents=True)
    (later / "journal.jsonl").write_text('{"format": "sixtysix-tournament-journal", "master_seed": 1}\n')
    with pytest.raises(SystemExit) as exit_info:
        strength_budget.main(["--agent", "pimc:samples=4", "--budgets", "0.01,0.03", "--deals", "2", "--out",
                              str(tmp_path / "sb"), "--runs", str(tmp_path / "runs")])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and f"--runs {str(tmp_path / 'runs')!r}: " in error and "Traceback" not in error
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == ["0.03"]  # 0.01 never played


def test_closing_premium_takes_a_plain_agent_name(capsys):
    """``--agent expert`` became 'expert,prune=none', an unknown agent; 'expert:prune=none' gave prune twice."""
    from bench import closing_premium

    for agent in ("expert", "expert:prune=none"):
        with pytest.raises(SystemExit):
            closing_premium.main(["--agent", agent, "--opponent", "nosuch"])
        message = capsys.readouterr().err.strip().splitlines()[-1]  # the error line, after the usage
        assert "--opponent 'nosuch'" in message and "--agent" not in message, message
