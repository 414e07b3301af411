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
