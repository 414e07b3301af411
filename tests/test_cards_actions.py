"""Card notation (R1), card masks, and the fixed Discrete(37) action layout (docs/actions.md)."""

from __future__ import annotations

import pytest

from sixtysix_env import ACTION_NAMES, NUM_ACTIONS, Game, action_name, parse_action
from sixtysix_env.actions import CLOSE, DECLARE, DRAW, EXCHANGE, MARRY_BASE, PASS, marry_action, marry_card
from sixtysix_env.cards import (
    CARD_NAMES, HIGHER_IN_SUIT, SUIT_MASKS, card_name, card_rank, card_suit, cards_of, mask_of, names_of, parse_card,
)


def test_card_ids_are_suit_times_six_plus_rank():
    """Card id = suit*6 + rank, suits C D H S, ranks 9 J Q K T A (R1)."""
    assert [CARD_NAMES[i] for i in (0, 5, 6, 17, 23)] == ["9C", "AC", "9D", "AH", "AS"]
    for card in range(24):
        assert parse_card(card_name(card)) == card
        assert card == card_suit(card) * 6 + card_rank(card)


def test_card_masks_round_trip():
    cards = [0, 7, 13, 23]
    assert cards_of(mask_of(cards)) == cards
    assert cards_of(0) == [] and cards_of((1 << 24) - 1) == list(range(24))
    assert names_of(mask_of(cards)) == ["9C", "JD", "JH", "AS"]
    assert SUIT_MASKS[2] == mask_of(range(12, 18))
    assert cards_of(HIGHER_IN_SUIT[parse_card("KH")]) == [parse_card("TH"), parse_card("AH")]
    assert HIGHER_IN_SUIT[parse_card("AS")] == 0


def test_action_layout_is_fixed():
    """0..23 play, 24..31 marry (24 + 2*suit + King), 32 exchange, 33 close, 34 declare, 35 draw, 36 pass."""
    assert NUM_ACTIONS == len(ACTION_NAMES) == 37
    assert ACTION_NAMES[0] == "play 9C" and ACTION_NAMES[23] == "play AS"
    assert ACTION_NAMES[24] == "marry QC" and ACTION_NAMES[25] == "marry KC" and ACTION_NAMES[31] == "marry KS"
    assert (EXCHANGE, CLOSE, DECLARE, DRAW, PASS) == (32, 33, 34, 35, 36)
    assert [ACTION_NAMES[a] for a in range(32, 37)] == ["exchange", "close", "declare", "draw", "pass"]
    for suit in range(4):
        queen, king = suit * 6 + 2, suit * 6 + 3
        assert marry_action(queen) == MARRY_BASE + 2 * suit and marry_action(king) == MARRY_BASE + 2 * suit + 1
        assert marry_card(marry_action(queen)) == queen and marry_card(marry_action(king)) == king


def test_action_names_round_trip():
    for action in range(NUM_ACTIONS):
        assert parse_action(action_name(action)) == action
        assert Game.parse_action(ACTION_NAMES[action]) == action
    assert parse_action("  Play  ah ") == parse_action("play AH")
    assert parse_action("CLOSE") == CLOSE


@pytest.mark.parametrize("text", ["", "play", "play XX", "marry AH", "marry 9C", "jump", "play AH now", None, 3])
def test_malformed_action_text_is_rejected(text):
    with pytest.raises(ValueError, match="malformed"):
        parse_action(text)


@pytest.mark.parametrize("action", [-1, 37, True, 1.0, "0"])
def test_malformed_action_id_is_rejected(action):
    with pytest.raises(ValueError, match="malformed action"):
        action_name(action)


@pytest.mark.parametrize("card", [-1, 24, 99, True, 1.0, "AH", None])
def test_malformed_card_id_is_rejected_by_name(card):
    """R1: card ids are 0..23; a negative id must not wrap around to the last card."""
    with pytest.raises(ValueError, match="malformed card id"):
        card_name(card)
    with pytest.raises(ValueError, match="malformed card id"):
        names_of([0, card])


@pytest.mark.parametrize("mask", [True, False, -1, 1 << 24])
def test_a_malformed_card_mask_is_rejected_by_name(mask):
    """R1: a mask holds bits 0..23 only; a bool is not a mask (it was read as the nine of clubs)."""
    with pytest.raises(ValueError, match=r"malformed card mask"):
        names_of(mask)
    assert names_of((1 << 24) - 1)[-1] == "AS" and names_of(0) == []


def test_card_names_take_numpy_integers():
    import numpy as np

    assert card_name(np.int64(17)) == "AH"
    assert names_of(np.array([0, 23])) == ["9C", "AS"]


@pytest.mark.parametrize("text", [None, 3, "jump"])
def test_the_engine_parses_actions_with_a_value_error_in_either_build(text):
    """``Game.parse_action`` (compiled with mypyc or not) refuses a non-string as the module function does."""
    with pytest.raises(ValueError, match="malformed action"):
        Game.parse_action(text)


def test_game_player_and_viewer_arguments_are_checked():
    game = Game.deal(seed=3)
    assert game.hand(0) == cards_of(game.hands[0])
    for player in (-1, 2, "0", True):
        with pytest.raises(ValueError, match="player"):
            game.hand(player)
    for viewer in (-1, 5, "1"):
        with pytest.raises(ValueError, match="viewer"):
            game.render(viewer=viewer)
    assert game.render(viewer=None).count(" ") > 0 and game.render(viewer=0) != game.render(viewer=1)
    for action in ("x", None, 2.0, "play AH"):
        assert game.is_legal(action) is False
    assert game.is_legal(game.legal_actions()[0]) is True
