"""``sixtysix play`` through a pseudo-terminal (pexpect): a whole deal typed move by move, a hint, a move by name,
bad input, the saved record replayed by ``sixtysix replay``. A mirror session with the same seed predicts every
position, so the test knows which moves are legal and what the record must contain."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

from play.session import PlaySession, SessionSettings  # noqa: E402
from sixtysix_env.actions import ACTION_NAMES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SEED = 7


def _spawn(tmp_path: Path) -> "pexpect.spawn":
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "200"}
    return pexpect.spawn(
        sys.executable,
        ["-m", "sixtysix_cli", "play", "--opponent", "heuristic", "--seed", str(SEED), "--records", str(tmp_path),
         "--hint-seconds", "0.1", "--analysis-seconds", "2"],
        cwd=str(tmp_path), env=env, encoding="utf-8", timeout=60, dimensions=(50, 200),
    )


def test_ctrl_c_skips_a_hint_and_the_game_goes_on(tmp_path, monkeypatch):
    """As in the analysis: a hint changes nothing in the game, so Ctrl-C during it skips it instead of ending the
    session (the search is interrupted here in-process: a real hint at the default budget is over too soon)."""
    import io

    from rich.console import Console

    from play.terminal import PlayArgs, TerminalGame

    typed = iter(["hint", "quit"])
    output = io.StringIO()
    args = PlayArgs(opponent="heuristic", seed=SEED, records=str(tmp_path), analysis_seconds=0)
    terminal = TerminalGame(args, console=Console(file=output, width=200), read=lambda prompt: next(typed))

    def interrupted_search(seconds=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(terminal.session, "hint", interrupted_search)
    try:
        code = terminal.run()
    except KeyboardInterrupt:  # not left to stop the whole test run
        pytest.fail("Ctrl-C during the hint ended the session")
    assert code == 0  # "quit" after the skipped hint: the session went on to read it
    assert "(hint skipped)" in output.getvalue() and "bye" in output.getvalue()


def test_terminal_plays_a_whole_deal_with_hint_and_named_move(tmp_path):
    mirror = PlaySession(SessionSettings(opponent="heuristic", seed=SEED, match=False))
    mirror.run_agent()
    child = _spawn(tmp_path)
    transcript = []
    child.expect("your move: ")
    transcript.append(child.before)
    screen = ANSI.sub("", child.before)
    assert "your hand:" in screen and "talon" in screen and "trump" in screen
    assert re.search("[♣♦♥♠]", screen), "cards are drawn with suit symbols"

    child.sendline("hint")
    child.expect("your move: ")
    hint_screen = ANSI.sub("", child.before)
    assert "hint" in hint_screen and "worlds" in hint_screen
    legal = mirror.legal_moves()
    assert len(re.findall(r"[+-]\d\.\d\d", hint_screen)) == len(legal), "one value per legal move"

    child.sendline("play ZZ")
    child.expect("your move: ")
    assert "malformed card" in ANSI.sub("", child.before)

    # A move by name (the last legal move), then the first listed move every turn.
    named = legal[-1]
    child.sendline(ACTION_NAMES[named])
    mirror.play(named)
    mirror.run_agent()
    while True:
        index = child.expect(["your move: ", r"record saved: (\S+\.json)"])
        if index == 1:
            break
        assert not mirror.game.is_over
        mirror.play(mirror.legal_moves()[0])
        mirror.run_agent()
        child.sendline("1")
    assert mirror.game.is_over
    saved = Path(child.match.group(1))
    child.expect("Could I have won\\?")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    record = json.loads(saved.read_text())
    assert record == mirror.deal_record(1), "the saved record is the deal the mirror session played"
    replay = subprocess.run([sys.executable, "-m", "sixtysix_cli", "replay", str(saved)], cwd=str(ROOT),
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60)
    assert replay.returncode == 0, replay.stderr
    result = record["result"]
    assert f"result: player {result['winner']} wins {result['game_points']} game point" in replay.stdout


def test_terminal_quit_and_bad_options(tmp_path):
    child = _spawn(tmp_path)
    child.expect("your move: ")
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    bad = subprocess.run([sys.executable, "-m", "sixtysix_cli", "play", "--opponent", "nosuch"], cwd=str(ROOT),
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown agent 'nosuch'" in bad.stderr and "Traceback" not in bad.stderr


def test_terminal_plays_a_whole_bummerl(tmp_path):
    """R17: ``--match`` deals until one side has 7 game points, the dealer alternating (R3); every deal's record is
    saved and replays, and their results add up to the Bummerl the terminal announces, Schneider or not."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "200"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "sixtysix_cli", "play", "--opponent", "random", "--match", "--seed", "3", "--records", str(tmp_path),
         "--analysis-seconds", "0"],
        cwd=str(tmp_path), env=env, encoding="utf-8", timeout=60, dimensions=(50, 200))
    saved = []
    while True:
        index = child.expect(["your move: ", r"record saved: (\S+\.json)", "press Enter for the next deal",
                              r"The Bummerl is over: (you win|the opponent wins)\.([^\r\n]*)\r?\n"])
        if index == 0:
            child.sendline("1")
        elif index == 1:
            saved.append(Path(child.match.group(1)))
        elif index == 2:
            child.sendline("")
        else:
            announced, after = child.match.group(1), ANSI.sub("", child.match.group(2))
            break
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    from sixtysix_env.record import load_record, record_to_game

    games = [record_to_game(load_record(path)) for path in saved]
    assert len(games) >= 2 and all(game.is_over for game in games)
    assert all(a.dealer != b.dealer for a, b in zip(games, games[1:]))  # R3
    totals = [sum(game.result.returns()[seat] > 0 and game.result.game_points for game in games) for seat in (0, 1)]
    assert max(totals) >= 7 and min(totals) < 7
    assert announced == ("you win" if totals[0] >= 7 else "the opponent wins")
    assert ("Schneider" in after) is (min(totals) == 0)  # R17: a Bummerl lost with no game point counts double


def test_bytes_that_are_not_text_get_a_malformed_move_answer_and_the_game_goes_on(tmp_path):
    """Under a strict UTF-8 locale a line of other bytes ended the game with a decoding error, and what was typed
    after it was lost; it is now read as U+FFFD and answered as a malformed move."""
    played = subprocess.run(
        [sys.executable, "-m", "sixtysix_cli", "play", "--opponent", "random", "--seed", "3", "--records",
         str(tmp_path / "records")], cwd=str(ROOT), input=b"\xff\xfe\nquit\n", capture_output=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", "COLUMNS": "200"})
    output = played.stdout.decode("utf-8", "replace")
    assert played.returncode == 0, played.stderr
    assert "malformed card" in output and output.rstrip().endswith("bye")


def test_an_empty_records_folder_is_refused():
    """``--records ""`` was the current folder: records landed wherever the game was started."""
    from play.terminal import parse_args

    with pytest.raises(ValueError, match="--records must name a folder, got ''"):
        parse_args(["--records", ""])
    assert parse_args(["--records", "mine"]).records == "mine"
