"""Three-player Sixty-six (R21): details of the engine ``sixtysix_env/three.py`` that a mutation review found
unpinned by ``tests/test_three_rules.py`` and the other three-player tests.

Every position is dealt from an explicit deck in the R21 deal order (``deck_from_seat_hands``, through the helpers of
``tests/test_three_rules.py``); unless a test says otherwise seat 2 deals, so seat 0 is forehand and seat 1
middlehand.
"""

from __future__ import annotations

import pytest

from sixtysix_env.actions import PASS
from sixtysix_env.cards import parse_card
from sixtysix_env.three import (
    ANNOUNCE, FOLLOW, LEAD, OVER, ThreePlayerGame, parse_three_player_action, three_player_action_name,
)
from test_three_rules import DL, FH, HANDS_A, HANDS_B, MH, THREE, THREE_LATE, deal, hand, legal, play

# Forehand holds five spades, middlehand neither spades nor diamonds, the dealer one spade and three clubs.
HANDS_C = ("AS TS KS QS JS AD TD KD", "AC TC KC AH TH KH QH JH", "9S QC JC 9C QD JD 9D 9H")


def snapshot(game: ThreePlayerGame) -> tuple:
    """Every mutable part of a game's state, copied."""
    return (list(game.hands), game.stage, game.to_move, game.leader, list(game.trick_cards), game.best_card,
            game.best_player, list(game.trick_points), list(game.marriage_points), list(game.tricks_won),
            list(game.won_cards), list(game.history), list(game.tricks), list(game.marriages), game.result,
            game.is_over, game.announced, game.announcers_left)


# ------------------------------------------------------------------------------------------------ action names
@pytest.mark.parametrize("action", [-1, 45, 46])
def test_R21_action_ids_outside_0_to_44_are_refused_with_a_value_error(action):
    """R21 actions are the ids 0..44 (45 = NUM_ACTIONS_THREE is not one): anything else is a ValueError naming the
    range, never an IndexError or a wrapped-around name."""
    assert three_player_action_name(44) == "announce S"
    with pytest.raises(ValueError, match=r"malformed action .*0\.\.44"):
        three_player_action_name(action)


def test_R21_pass_is_parsed_in_any_case():
    """R21: 'pass' (ending a player's turn in the early-marriage round) is read like the other words, in any case."""
    for text in ("pass", "PASS", "Pass", " pass "):
        assert parse_three_player_action(text) == PASS


# ------------------------------------------------------------------------------------------------ the deal
def test_R21_deal_refuses_rules_that_are_not_a_rules_object():
    """R21: the three-player deal takes a Rules object (players=3) and names anything else by its type."""
    with pytest.raises(ValueError, match="rules must be a Rules object, got str"):
        ThreePlayerGame.deal("three", seed=1)


def test_R21_deal_takes_an_explicit_deck_or_a_seed_not_both():
    """R21: a deal comes from an explicit deck in the R21 order or from a seed; both at once are refused, and the
    explicit deck alone deals exactly its cards."""
    game = deal(HANDS_A)
    with pytest.raises(ValueError, match="give either an explicit deck or a seed, not both"):
        ThreePlayerGame.deal(THREE, deck=list(game.deck), seed=7)
    again = ThreePlayerGame.deal(THREE, deck=list(game.deck), dealer=DL)
    assert again.deck == game.deck and again.hands == game.hands


# ------------------------------------------------------------------------------------------------ following
def test_R21_follow_the_suit_led_not_the_suit_of_the_second_card():
    """R21: a follower must follow the suit *led*: after a spade lead and a club discard by middlehand (void in
    spades and trumps), the dealer must play his spade, not a club."""
    game = deal(HANDS_C, rules=THREE_LATE)
    play(game, "name trump D", "play AS")
    assert legal(game) == {f"play {card}" for card in HANDS_C[1].split()}  # void in spades and diamonds: anything
    play(game, "play AC")
    assert game.current_player == DL and legal(game) == {"play 9S"}
    with pytest.raises(ValueError, match="illegal action 'play QC'"):
        play(game, "play QC")
    play(game, "play 9S")
    assert game.tricks[-1][2] == FH and game.points(FH) == 11 + 11 + 0


def test_R21_a_negative_id_while_following_is_an_illegal_action_and_changes_nothing():
    """R21: a follower's move is a card of his hand that follows the rules; a negative id is refused as an illegal
    action, the state unchanged."""
    game = deal(HANDS_A)
    play(game, "name trump C", "pass", "pass", "pass", "play TD")
    assert game.stage == FOLLOW
    before = snapshot(game)
    with pytest.raises(ValueError, match="illegal action -1"):
        game.apply(-1)
    assert snapshot(game) == before


def test_R21_the_leader_cannot_lead_a_card_he_does_not_hold():
    """R21: the leader leads a card of his own hand; another player's card is refused, the state unchanged."""
    game = deal(HANDS_A)
    play(game, "name trump C", "pass", "pass", "pass")
    assert game.stage == LEAD and game.current_player == FH
    before = snapshot(game)
    for card in ("AH", "AS"):  # middlehand's and the dealer's
        with pytest.raises(ValueError, match=f"illegal action 'play {card}' for player {FH}"):
            play(game, f"play {card}")
    assert snapshot(game) == before


def test_R21_is_legal_takes_only_integer_ids():
    """R21: ``is_legal`` answers for action ids (Python ints); a bool or a float equal to a legal id is not one."""
    game = deal(HANDS_A)
    play(game, "name trump C", "pass", "pass", "pass", "play QC")
    assert game.current_player == MH and legal(game) == {"play 9C", "play JC"}  # card ids 0 and 1
    assert game.is_legal(0) and game.is_legal(1)
    for junk in (True, False, 1.0, 0.0):
        assert game.is_legal(junk) is False


# ------------------------------------------------------------------------------------------------ clone
def test_R21_a_clone_in_the_early_marriage_round_continues_that_round_independently():
    """R21 (early marriage): a clone taken in the announcement round keeps who has announced and who still speaks;
    playing it out leaves the original untouched."""
    game = deal(HANDS_A)
    play(game, "name trump C", "announce C")
    twin = game.clone()
    assert legal(twin) == {"pass"}  # clubs already shown: not again
    play(twin, "pass")  # forehand done; middlehand and the dealer still speak
    twin2 = twin.clone()
    play(twin2, "announce H", "pass")
    assert twin2.stage == ANNOUNCE and twin2.current_player == DL
    play(twin2, "pass")
    assert twin2.stage == LEAD and twin2.current_player == FH
    assert twin.stage == ANNOUNCE and twin.current_player == MH and twin.marriage_points == [40, 0, 0]
    before = snapshot(game)
    play(twin, "pass", "announce S", "pass")
    while not twin.is_over:
        twin.apply(twin.legal_actions()[0])
    assert snapshot(game) == before
    assert game.stage == ANNOUNCE and game.marriage_points == [40, 0, 0] and hand(game, FH) == set(HANDS_A[0].split())


def test_R21_a_clone_in_the_middle_of_a_trick_is_independent():
    """R21: a clone taken with cards on the table finishes that trick on its own; the original keeps its trick."""
    game = deal(HANDS_A, rules=THREE_LATE)
    play(game, "name trump S", "play TD")
    twin = game.clone()
    play(twin, "play AD", "play KD")
    assert twin.stage == LEAD and twin.points(MH) == 25 and twin.trick_points == [0, 25, 0]
    assert game.stage == FOLLOW and game.trick_cards == [parse_card("TD")] and game.trick_points == [0, 0, 0]
    assert hand(game, MH) == set(HANDS_A[1].split()) and game.current_player == MH
    play(game, "play 9D", "play QD")
    assert game.points(FH) == 10 + 0 + 3 and twin.points(FH) == 0


def test_R21_a_clone_after_naming_trump_keeps_the_trump_suit_for_tricks():
    """R21 with R6: in a clone taken after diamonds are named trump, middlehand's diamond (void in spades, he must
    trump) still beats forehand's spade Ace."""
    game = deal(HANDS_B, rules=THREE_LATE)
    play(game, "name trump D")
    twin = game.clone()
    play(twin, "play AS", "play TD", "play 9D")
    assert twin.tricks[-1][2] == MH and twin.points(MH) == 11 + 10 + 0 and twin.current_player == MH


def test_R21_a_clone_taken_after_the_lead_knows_the_leaders_card_is_best_so_far():
    """R21 with R6: a clone taken right after the lead gives the trick to the leader when nobody beats his card
    (middlehand follows low in clubs, the dealer, void in clubs and in hearts, the trumps, discards)."""
    game = deal(HANDS_A, rules=THREE_LATE)
    play(game, "name trump H", "play AC")
    twin = game.clone()
    play(twin, "play 9C", "play KD")
    assert twin.tricks[-1][2] == FH and twin.points(FH) == 11 + 0 + 4 and twin.points(DL) == 0
    assert twin.current_player == FH and twin.tricks_won == [1, 0, 0]


@pytest.mark.parametrize("rules", [THREE, THREE_LATE])
@pytest.mark.parametrize("dealer", [0, 1])
def test_R21_a_clone_at_any_point_plays_on_exactly_like_a_replay_of_the_deal(rules, dealer):
    """R21: a clone is the same deal: at every point of a deal (naming, announcing, leading, following), the clone
    played on gives the same tricks, marriages and result as the deal replayed from its deck and history."""
    def play_out(game: ThreePlayerGame) -> tuple:
        while not game.is_over:
            actions = game.legal_actions()
            game.apply(actions[len(game.history) % len(actions)])
        return game.tricks, game.marriages, game.result

    game = deal(HANDS_B, rules=rules, dealer=dealer)
    while not game.is_over:
        replay = ThreePlayerGame.deal(rules, deck=list(game.deck), dealer=dealer)
        for action in game.history:
            replay.apply(action)
        assert play_out(game.clone()) == play_out(replay)
        actions = game.legal_actions()
        game.apply(actions[-1 - len(game.history) % len(actions)])


# ------------------------------------------------------------------------------------------------ display
def test_R21_forehand_sees_his_whole_hand_once_trump_is_named():
    """R21: forehand names trump from his first three cards, then takes up the rest: his view of the table shows
    those three before naming and all eight after."""
    game = deal(HANDS_A)

    def forehands_cards() -> set[str]:
        line = game.render(viewer=FH).splitlines()[1 + FH]
        assert line.startswith(f"player {FH}: ")
        return set(line.split(":", 1)[1].split("points")[0].split())

    assert forehands_cards() == {"AC", "TC", "KC"}
    play(game, "name trump C")
    assert forehands_cards() == set(HANDS_A[0].split())


def test_R21_the_table_names_the_leader_of_the_trick_on_it():
    """R21: the table shows the cards of the trick being played and who led it: the winner of the last trick."""
    game = deal(HANDS_A, rules=THREE_LATE)
    play(game, "name trump S", "play TD")
    assert "on the table: TD led by player 0" in game.render()
    play(game, "play AD", "play KD", "play KH")  # middlehand wins with AD and leads
    assert "on the table: KH led by player 1" in game.render(viewer=DL)


# ------------------------------------------------------------------------------------------------ illegal-action end
def test_R21_an_illegal_action_end_names_no_winner_and_only_the_player_to_move_can_make_it():
    """R21 names no Renonce for three: a deal ended by an illegal action has no winner and no game point; only the
    player to move can be the offender, and a deal that is over cannot end again."""
    game = deal(HANDS_A)
    play(game, "name trump C", "pass", "pass", "pass")
    with pytest.raises(ValueError, match="player 1 is not to move"):
        game.end_after_illegal_action(MH)
    assert not game.is_over
    game.end_after_illegal_action(FH)
    assert game.stage == OVER and game.result.winner is None and game.result.game_points == 0
    assert game.returns() == (0, 0, 0) and game.result.reason == "illegal action by player 0 (not scored)"
    with pytest.raises(ValueError, match="the deal is over; it cannot end again"):
        game.end_after_illegal_action(FH)
