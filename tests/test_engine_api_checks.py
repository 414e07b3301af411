"""The engine's small public helpers refuse what they cannot mean, by name, and take numpy integers where the game
does: marriages (R11), the Bummerl bookkeeping (R17, R21's dealer sitting out), strict JSON and atomic writes, replay
sources."""

from __future__ import annotations

import math
import os
import stat

import numpy as np
import pytest

from eval.records import split_replay_source
from sixtysix_env import Game, Rules
from sixtysix_env.actions import ACTION_NAMES, marry_action, marry_card
from sixtysix_env.fileio import write_json_atomic
from sixtysix_env.match import DealerSitsOutMatch, Match
from sixtysix_env.record import deck_from_hands
from sixtysix_env.schema import read_json_file
from sixtysix_env.three import three_player_action_name


def test_marriage_actions_take_only_queens_kings_and_marry_actions():
    """R11: a marriage is announced with a Queen or King; marry_action(9C) was 'marry QC', marry_card(0) -70."""
    for action in range(24, 32):
        assert marry_action(marry_card(action)) == action
        assert ACTION_NAMES[action].endswith(("Q" + ACTION_NAMES[action][-1], "K" + ACTION_NAMES[action][-1]))
    for card in (0, 30, -1, True, 2.0):
        with pytest.raises(ValueError, match="marry_action needs a Queen or King"):
            marry_action(card)
    for action in (0, 23, 32, 34, -70):
        with pytest.raises(ValueError, match="marry_card needs a marry action"):
            marry_card(action)
    assert marry_card(np.int64(24)) == marry_card(24)


def test_the_two_player_match_refuses_three_player_rules_before_a_deal():
    with pytest.raises(ValueError, match="for three players \\(R21\\) use ThreePlayerMatch"):
        Match(Rules.preset("three"))


def test_dealer_sits_out_match_refuses_a_deal_dealt_from_the_other_seat():
    """R21's last sentence: the engine deal is always dealt with seat 0 as the dealer; a deal dealt by seat 1 would
    give forehand's game points to the dealer's seat."""
    match = DealerSitsOutMatch(first_dealer=0)
    game = Game.deal(Rules(), seed=4, dealer=1)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    with pytest.raises(ValueError, match="dealt by engine seat 1"):
        match.record_deal(game)
    assert match.deals == [] and list(match.scores) == [0, 0, 0]


def test_json_written_atomically_never_holds_what_the_strict_reader_refuses(tmp_path):
    path = tmp_path / "state.json"
    for value in (math.nan, math.inf):
        with pytest.raises(ValueError):
            write_json_atomic(path, {"loss": value})
        assert not path.exists() and list(tmp_path.iterdir()) == []  # nothing half-written, no temp file left
    write_json_atomic(path, {"loss": 1.5})
    assert read_json_file(path, "a state file") == {"loss": 1.5}


def test_an_atomic_rewrite_keeps_the_file_mode_and_leaves_the_umask_alone(tmp_path):
    path = tmp_path / "private.json"
    umask = os.umask(0o022)
    os.umask(umask)
    write_json_atomic(path, {"step": 1})
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # a new file: the usual permissions
    path.chmod(0o600)  # the owner made it private
    umask_before = os.umask(0o027)
    try:
        write_json_atomic(path, {"step": 2})
        assert os.umask(0o027) == 0o027  # the write did not leave another umask behind
    finally:
        os.umask(umask_before)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and read_json_file(path, "a state file") == {"step": 2}


def test_a_replay_deal_number_that_is_not_ascii_digits_is_named():
    for number in ("²", "٣", "1a"):
        with pytest.raises(ValueError, match="after '#' comes a deal number"):
            split_replay_source(f"missing.json#{number}")
    assert split_replay_source("missing.json#3") == ("missing.json", 3)


def test_numpy_integers_are_taken_where_the_game_takes_them():
    assert three_player_action_name(np.int64(3)) == three_player_action_name(3)
    hands = {"forehand": [np.int64(card) for card in (0, 1, 2, 3, 4, 5)],
             "dealer": [6, 7, 8, 9, 10, 11], "trump_card": np.int64(12)}
    assert deck_from_hands(**hands) == deck_from_hands(forehand=list(range(6)), dealer=list(range(6, 12)),
                                                       trump_card=12)
    with pytest.raises(ValueError, match="malformed card True"):
        deck_from_hands(forehand=[True, 1, 2, 3, 4, 5], dealer=list(range(6, 12)), trump_card=12)


def test_atomic_write_syncs_a_temp_file_beside_the_target_before_the_rename(tmp_path, monkeypatch):
    """fileio: "temp file in the same folder + os.replace": the temp file lies in the target's folder (a rename
    across file systems is not atomic) and its data is synced to disk before the rename replaces the target."""
    from sixtysix_env import fileio

    calls = []
    real_fsync, real_replace = fileio.os.fsync, fileio.os.replace
    monkeypatch.setattr(fileio.os, "fsync", lambda fd: (calls.append(("fsync", fd)), real_fsync(fd))[1])
    monkeypatch.setattr(fileio.os, "replace",
                        lambda src, dst: (calls.append(("replace", src, dst)), real_replace(src, dst))[1])
    target = tmp_path / "out" / "result.json"
    fileio.write_json_atomic(target, {"a": 1})
    assert [call[0] for call in calls] == ["fsync", "replace"]
    source = calls[1][1]
    assert fileio.Path(source).parent == target.parent and fileio.Path(source).name.startswith(".result.json.")
    assert target.read_text() == '{\n  "a": 1\n}\n'


def test_a_failed_atomic_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    """A write that fails before its rename leaves the previous file whole and removes its temp file, so no
    ``.NAME.XXXX.tmp`` piles up beside the target."""
    from sixtysix_env import fileio

    target = tmp_path / "state.json"
    fileio.write_json_atomic(target, {"step": 1})

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio.os, "replace", refuse)
    with pytest.raises(OSError):
        fileio.write_json_atomic(target, {"step": 2})
    assert sorted(path.name for path in tmp_path.iterdir()) == ["state.json"]
    assert target.read_text() == '{\n  "step": 1\n}\n'


def test_remove_stale_temp_files_removes_only_the_writers_hidden_temp_files(tmp_path):
    """remove_stale_temp_files deletes the ``.NAME.XXXX.tmp`` files write_bytes_atomic leaves when killed, and
    nothing else: a user's own ``notes.tmp`` stays."""
    from sixtysix_env.fileio import remove_stale_temp_files

    stale = tmp_path / ".run.json.k2j4x.tmp"
    own = tmp_path / "notes.tmp"
    for path in (stale, own):
        path.write_text("x")
    assert remove_stale_temp_files(tmp_path) == [stale]
    assert own.exists() and not stale.exists()


def test_read_npz_arrays_skips_requested_names_the_archive_lacks(tmp_path):
    """read_npz_arrays(names=...): "only ``names`` if given, those present": a missing name is left out, not a
    KeyError."""
    from sixtysix_env.fileio import read_npz_arrays

    path = tmp_path / "arrays.npz"
    np.savez(path, a=np.arange(3), b=np.ones(2))
    arrays = read_npz_arrays(path, "the test archive", names=["a", "missing"])
    assert list(arrays) == ["a"] and arrays["a"].tolist() == [0, 1, 2]
