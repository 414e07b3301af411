"""Three-player Sixty-six (R21) keeps the two-player API where the rules allow: information sets that hold only
what their seat may know and determinize to whole, consistent games; seats, seeds, options and actions refused
with the two-player environments' ValueErrors; an illegal learner action in the Gymnasium env that really ends
the deal.
"""

from __future__ import annotations

import pickle
import random
import warnings

import numpy as np
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

import sixtysix_env
from sixtysix_env import Game, InformationSet, Rules, SixtySixGymEnv
from sixtysix_env.cards import CARD_NAMES, CARD_POINTS, FULL_DECK_MASK, cards_of, mask_of
from sixtysix_env.env import raw_env
from sixtysix_env.three import ANNOUNCE, FOLLOW, LEAD, NAME_TRUMP, NAME_TRUMP_BASE, OVER, ThreePlayerGame
from sixtysix_env.three_env import ThreePlayerGymEnv, ThreePlayerRawEnv
from sixtysix_env.three_infoset import ThreeInformationSet
from sixtysix_env.three_observation import encode_three_infoset

THREE = Rules.preset("three")
RULE_SETS = (THREE, Rules.preset("three", three_player_early_marriage=False))
NOT_A_SEAT = (1.0, True, 3, -1, "0", None)
NOT_A_SEED = (-1, True, 1.5, "x")
NOT_AN_ACTION_ID = (None, "x", 1.5, 99, 45, -1, True, [0])


def conserved(game: ThreePlayerGame) -> bool:
    """R21: each of the 24 cards is in exactly one place: a hand, the current trick or a won trick."""
    places = list(game.hands) + [mask_of(game.trick_cards)] + list(game.won_cards)
    union = 0
    for mask in places:
        union |= mask
    return sum(mask.bit_count() for mask in places) == 24 and union == FULL_DECK_MASK


def played_by(game: ThreePlayerGame, seat: int) -> int:
    """The cards ``seat`` has played (public), from the trick log and the current trick."""
    cards = [trick[1][(seat - trick[0]) % 3] for trick in game.tricks]
    cards += [card for offset, card in enumerate(game.trick_cards) if (game.leader + offset) % 3 == seat]
    return mask_of(cards)


def naming_deal(seed: int = 0, dealer: int = 0) -> ThreePlayerGame:
    game = Game.deal(THREE, seed=seed, dealer=dealer)
    assert game.stage == NAME_TRUMP
    return game


# ------------------------------------------------------------------------------------------------ fix 1: leak
def test_R21_naming_forehand_information_set_holds_only_his_first_three_cards():
    """R21: forehand names trump after seeing only his first three cards, so his information set (its template
    game included) holds those three and nothing of his last five; determinize deals him five more at random."""
    game = naming_deal(seed=0, dealer=0)
    forehand = game.forehand
    info = InformationSet(game, forehand)
    assert info.hand == game.first_three and info.hand.bit_count() == 3
    assert info._template.hands == [info.hand if seat == forehand else 0 for seat in range(3)]
    assert info._template.deck is None and info._template.first_three == game.first_three
    rng = random.Random(1)
    other_fives = set()
    for _ in range(20):
        world = info.determinize(rng)
        assert conserved(world) and world.first_three == game.first_three
        assert world.hands[forehand] & game.first_three == game.first_three and world.hands[forehand].bit_count() == 8
        other_fives.add(world.hands[forehand] & ~game.first_three)
    assert len(other_fives) > 1  # drawn, not copied from the real deal
    for seat in range(3):  # no seat's template holds a card it has not seen, nor the order of forehand's cards
        view = InformationSet(game, seat)
        assert view._template.hands == [view.hand if other == seat else 0 for other in range(3)]
        assert view._template.first_three == (game.first_three if seat == forehand else 0)


# ------------------------------------------------------------------------------------------------ fix 2: worlds
@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_R21_determinized_naming_world_gives_forehand_his_first_three_cards(dealer):
    """R21: a world drawn by middlehand or the dealer while trump is being named is a valid deal: forehand holds
    eight cards, three of them his first three, and his information set in it shows those three and offers the
    four trump suits."""
    game = naming_deal(seed=7, dealer=dealer)
    forehand = game.forehand
    for viewer in (game.middlehand, game.dealer):
        info = InformationSet(game, viewer)
        for world_seed in range(10):
            world = info.determinize(random.Random(world_seed))
            assert conserved(world) and world.stage == NAME_TRUMP
            assert world.hands[viewer] == game.hands[viewer]
            assert world.first_three.bit_count() == 3 and world.first_three & ~world.hands[forehand] == 0
            forehand_view = InformationSet(world, forehand)
            assert forehand_view.hand == world.first_three and forehand_view.naming
            assert forehand_view.legal_actions == [NAME_TRUMP_BASE + suit for suit in range(4)]
            assert forehand_view.unseen.bit_count() == 21


def test_R21_determinized_world_after_naming_keeps_a_first_three_of_forehands_dealt_cards():
    """R21: in every drawn world forehand's first three cards are three of the eight he was dealt (still held or
    played), as in a real deal, so the world replays and renders like one."""
    game = Game.deal(THREE, seed=12, dealer=1)
    rng = random.Random(12)
    while game.stage not in (FOLLOW, OVER) or len(game.tricks) < 2:
        game.apply(rng.choice(game.legal_actions()))
    for viewer in range(3):
        world = InformationSet(game, viewer).determinize(rng)
        dealt = world.hands[game.forehand] | played_by(world, game.forehand)
        assert dealt.bit_count() == 8
        assert world.first_three.bit_count() == 3 and world.first_three & ~dealt == 0
        if viewer == game.forehand:
            assert world.first_three == game.first_three  # his own first three he has seen


# ------------------------------------------------------------------------------------------------ fix 3: seats
def test_R21_information_set_checks_the_player_like_the_two_player_one():
    """R21 seats are 0, 1, 2: anything else is a ValueError naming the player at the boundary (as
    ``check_player`` does for two players), numpy seats become ints, and a match score is refused by name."""
    game = naming_deal(seed=3)
    for bad in NOT_A_SEAT:
        with pytest.raises(ValueError, match="player must be 0, 1 or 2"):
            InformationSet(game, bad)
        with pytest.raises(ValueError, match="player must be 0, 1 or 2"):
            ThreeInformationSet(game, bad)
    info = InformationSet(game, np.int64(1))
    assert type(info.player) is int and info.player == 1 and info.hand == InformationSet(game, 1).hand
    for score in ("junk", (0, 0), (1, 2, 3)):
        with pytest.raises(ValueError, match="match_score"):
            ThreeInformationSet(game, 1, match_score=score)
        with pytest.raises(ValueError, match="match_score"):  # also through the generic entry point
            InformationSet(game, 1, match_score=score)
    assert ThreeInformationSet(game, 1, match_score=None).player == 1
    with pytest.raises(ValueError, match="three-player information set is built from a ThreePlayerGame, got Game"):
        ThreeInformationSet(Game.deal(seed=3), 1)


def test_R21_pettingzoo_information_set_checks_the_agent():
    """R21: ``information_set`` takes an agent name or a seat 0..2 (numpy too); ``1.0`` or ``True`` is a
    ValueError naming the agent, not a TypeError later."""
    environment = ThreePlayerRawEnv()
    environment.reset(seed=2)
    for bad in (1.0, True, 3, "player_3", None):
        with pytest.raises(ValueError, match="agent must be 0, 1, 2 or an agent name"):
            environment.information_set(bad)
    assert environment.information_set(np.int64(2)).player == 2 == environment.information_set("player_2").player


# ------------------------------------------------------------------------------------------------ fix 4: AEC reset
def test_R21_pettingzoo_reset_checks_seed_and_options_like_the_two_player_env():
    """R21 environment, two-player checks: a seed is None or a non-negative integer (numpy too), options a dict;
    an unknown option is warned about and ignored; a match score (none is shown for three) is refused unless
    None."""
    for environment in (ThreePlayerRawEnv(), raw_env()):
        for bad in NOT_A_SEED:
            with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
                environment.reset(seed=bad)
        with pytest.raises(ValueError, match="options must be a dict"):
            environment.reset(options="x")
        with pytest.warns(UserWarning, match="unknown reset option 'Deck'"):
            environment.reset(options={"Deck": list(range(24))})
    environment = ThreePlayerRawEnv()
    environment.reset(seed=np.int64(5))
    numpy_deck = environment.game.deck
    environment.reset(seed=5)
    assert environment.game.deck == numpy_deck
    with pytest.raises(ValueError, match=r"options\['match_score'\] must be None"):
        environment.reset(options={"match_score": "junk"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the options it knows give no warning
        environment.reset(seed=5, options={"dealer": 0, "match_score": None})
    assert environment.game.dealer == 0


# ------------------------------------------------------------------------------------------------ fix 5: Gym reset
def test_R21_gymnasium_reset_checks_seed_and_options_like_the_two_player_env():
    """R21 single-agent env, two-player checks: options must be a dict (named so), a seed a non-negative integer
    (a numpy one deals as the int does), unknown options and a match score are refused."""
    for environment in (ThreePlayerGymEnv(), SixtySixGymEnv()):
        with pytest.raises(ValueError, match="options must be a dict, got str"):
            environment.reset(options="x")
        for bad in NOT_A_SEED:
            with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
                environment.reset(seed=bad)
        with pytest.raises(ValueError, match="unknown reset option 'Deck'"):
            environment.reset(options={"Deck": list(range(24))})
    environment = ThreePlayerGymEnv()
    numpy_observation, numpy_info = environment.reset(seed=np.int64(5))
    numpy_deck, numpy_learner = environment.game.deck, environment.learner
    observation, info = environment.reset(seed=5)
    assert environment.game.deck == numpy_deck and environment.learner == numpy_learner == info["learner"]
    assert np.array_equal(observation, numpy_observation)
    with pytest.raises(ValueError, match=r"options\['match_score'\] must be None"):
        environment.reset(options={"match_score": (0, 0)})


# ------------------------------------------------------------------------------------------------ fix 6: forfeit
def test_R21_gymnasium_illegal_action_ends_the_deal_unscored():
    """R21 names no Renonce for three: an illegal learner action costs the learner -1 (the environment's penalty)
    and ends the deal unscored, so the mask is all false, info has the result (no winner) and step refuses."""
    environment = ThreePlayerGymEnv()
    environment.reset(seed=4)
    game = environment.game
    mask = environment.action_masks()
    illegal = int(np.flatnonzero(~mask)[0])
    history = list(game.history)
    _observation, reward, terminated, truncated, info = environment.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert game.is_over and game.stage == OVER and game.current_player is None and game.history == history
    assert not environment.action_masks().any() and not info["action_mask"].any()
    result = info["result"]
    assert result.winner is None and result.returns() == (0, 0, 0) and "illegal action" in result.reason
    assert result.points == tuple(game.points(seat) for seat in range(3))
    assert "illegal action" in info["illegal_action"]
    assert environment.information_set().legal_actions == []
    with pytest.raises(ValueError, match="the deal is over"):
        environment.step(int(np.flatnonzero(mask)[0]))
    environment.reset(seed=5)
    assert environment.action_masks().any() and not environment.game.is_over


@pytest.mark.parametrize("seed", [4, 9, 17])
def test_R21_a_deal_ended_by_an_illegal_action_has_a_record_that_replays(seed):
    """The record of a deal the Gymnasium environment ended unscored names the offender (the seat to move) and
    replays to the same result; a record that says otherwise is refused by name (it could be written, not read,
    before session 67)."""
    import json

    from sixtysix_env.record import game_to_record, record_to_game, render_record

    environment = ThreePlayerGymEnv()
    environment.reset(seed=seed)
    for _ in range(seed % 5):  # some legal moves first, so the deal ends at different points
        environment.step(int(np.flatnonzero(environment.action_masks())[0]))
    game = environment.game
    offender = game.current_player
    environment.step(int(np.flatnonzero(~environment.action_masks())[0]))
    record = json.loads(json.dumps(game_to_record(game)))
    assert record["forfeit"] == {"offender": offender, "reason": "illegal action"}
    replay = record_to_game(record)
    assert replay.result == game.result and replay.history == game.history and replay.is_over
    assert render_record(record).splitlines()[-1].startswith(
        f"result: not scored: player {offender} ends the deal by an illegal action")  # not shown as a tie
    for forfeit, message in (({"offender": (offender + 1) % 3, "reason": "illegal action"}, "is not to move"),
                             ({"offender": offender, "reason": "renonce"}, "ends early only by an 'illegal action'"),
                             ({"offender": 3, "reason": "illegal action"}, "offender must be 0, 1 or 2")):
        with pytest.raises(ValueError, match=message):
            record_to_game({**record, "forfeit": forfeit})


# ------------------------------------------------------------------------------------------------ fix 7: junk
def test_R21_gymnasium_junk_actions_raise_in_either_mode():
    """R21 single-agent env, like the two-player one: anything that is not an action id 0..44 is a ValueError
    naming it, in the forfeit mode too, and leaves the deal as it was (only legal-range ids are punished)."""
    for mode in ("forfeit", "raise"):
        environment = ThreePlayerGymEnv(illegal_action=mode)
        environment.reset(seed=6)
        history = list(environment.game.history)
        for junk in NOT_AN_ACTION_ID:
            with pytest.raises(ValueError, match=r"learner \(player \d\): illegal action .*not an action id 0\.\.44"):
                environment.step(junk)
            assert environment.game.history == history and not environment.game.is_over
    two_player = SixtySixGymEnv(illegal_action="renonce")
    two_player.reset(seed=6)
    for junk in NOT_AN_ACTION_ID:
        with pytest.raises(ValueError, match="not an action id"):
            two_player.step(junk)
    legal = int(np.flatnonzero(environment.action_masks())[0])
    assert environment.step(np.int64(legal))[1] in (0.0, 1.0)  # a numpy id plays


# ------------------------------------------------------------------------------------------------ fix 8: arguments
def test_R21_pettingzoo_takes_the_two_player_arguments_that_fit_three_players():
    """R21 AEC env: ``illegal_action="raise"`` (the two-player default, the only mode for three) and
    ``render_view`` / ``table_text(viewer)`` with seats 0..2 are accepted; ``"renonce"`` and bad views are
    ValueErrors naming the argument."""
    environment = sixtysix_env.env(rules="three", illegal_action="raise")
    environment.reset(seed=8)
    with pytest.raises(ValueError, match="player_.*illegal action"):
        environment.step(int(np.flatnonzero(~environment.observe(environment.agent_selection)["action_mask"])[0]))
    with pytest.raises(ValueError, match="illegal_action must be 'raise' in the three-player environment"):
        sixtysix_env.env(rules="three", illegal_action="renonce")
    for bad in (3, True, 1.0, "player_3", "everyone"):
        with pytest.raises(ValueError, match="render_view must be None, 'current', 0, 1, 2 or an agent name"):
            ThreePlayerRawEnv(render_view=bad)
    raw = ThreePlayerRawEnv(render_mode="ansi", render_view=0, dealer=2)
    raw.reset(seed=8)  # dealer 2: seat 0 is forehand, naming trump
    game = raw.game
    first_three = " ".join(CARD_NAMES[card] for card in cards_of(game.first_three))
    text = raw.render()
    assert f"player 0: {first_three}  points" in text  # R21: he sees only his first three cards
    assert "player 1: 8 hidden cards" in text and "player 2: 8 hidden cards" in text
    assert raw.table_text(0) == text
    assert raw.table_text(np.int64(1)) == raw.table_text("player_1") and "player 0: 8 hidden cards" in raw.table_text(1)
    assert "hidden" not in raw.table_text(None)
    assert pickle.loads(pickle.dumps(raw)).render_view == 0
    for bad in (3, 1.0, True, "player_9"):
        with pytest.raises(ValueError, match="viewer must be None, 'current', 0, 1, 2 or an agent name"):
            raw.table_text(bad)
    current = ThreePlayerRawEnv(render_mode="ansi", render_view="current", dealer=2)
    current.reset(seed=8)
    assert current.render() == text


# ------------------------------------------------------------------------------------------------ property
OWN_FIELDS = ("hand", "legal_actions", "stage", "to_move", "leader", "trump_suit", "naming", "trick_cards",
              "lead_card", "tricks", "marriages", "points", "marriage_points", "tricks_won", "hand_sizes", "known",
              "void", "played", "won_cards", "unseen", "history", "is_over", "result", "dealer", "forehand")


def check_world(game: ThreePlayerGame, seat: int, rng: random.Random, play_out: bool) -> None:
    info = ThreeInformationSet(game, seat)
    world = info.determinize(rng)
    assert conserved(world) and world.history == game.history and world.stage == game.stage
    again = ThreeInformationSet(world, seat)
    for field in OWN_FIELDS:  # the seat's own view of the world is its view of the real deal
        assert getattr(again, field) == getattr(info, field), field
    assert np.array_equal(encode_three_infoset(again), encode_three_infoset(info))
    naming = game.stage == NAME_TRUMP
    forehand = game.forehand
    dealt = world.hands[forehand] | played_by(world, forehand)
    assert dealt.bit_count() == 8 and world.first_three.bit_count() == 3 and world.first_three & ~dealt == 0
    for other in range(3):  # every seat's view of the world is well-formed
        view = ThreeInformationSet(world, other)
        if naming and other == forehand:
            assert view.hand == world.first_three  # R21: forehand holds his first three while naming
        else:
            assert view.hand == world.hands[other] and view.hand.bit_count() == game.hands[other].bit_count()
        assert view.hand_sizes == info.hand_sizes
        if other == game.current_player:
            assert view.legal_actions and all(action >= 24 or view.hand >> action & 1 for action in view.legal_actions)
        else:
            assert view.legal_actions == []
        if other != seat:
            assert world.hands[other] & info.void[other] == 0, "a shown void is broken"
            assert world.hands[other] & info.known[other] == info.known[other], "a shown marriage card is missing"
    if play_out:  # the world plays to a proper end: 120 card points, no last-trick bonus (R21)
        while not world.is_over:
            world.apply(rng.choice(world.legal_actions()))
        counted_marriages = sum(world.marriage_points[s] for s in range(3) if world.tricks_won[s])
        assert sum(world.result.points) == sum(CARD_POINTS) + counted_marriages and conserved(world)


@seed(21)
@settings(max_examples=100, deadline=None)
@given(deal_seed=st.integers(0, 2**40), dealer=st.integers(0, 2), rules=st.sampled_from(RULE_SETS),
       play_seed=st.integers(0, 2**20))
def test_R21_determinize_agrees_with_every_seat_at_every_stage(deal_seed, dealer, rules, play_seed):
    """R21, over random deals: at every position (trump naming, announcing, leading, following, over) and for
    every seat, a determinized world gives that seat exactly its real information set, and every seat's
    information set in it is well-formed (hand sizes, forehand's first three while naming, voids and shown
    marriages kept); the naming-stage worlds play to a proper end."""
    rng = random.Random(play_seed)
    game = Game.deal(rules, seed=deal_seed, dealer=dealer)
    stages = set()
    while True:
        stages.add(game.stage)
        for seat in range(3):
            check_world(game, seat, rng, play_out=game.stage == NAME_TRUMP)
        if game.is_over:
            break
        game.apply(rng.choice(game.legal_actions()))
    assert {NAME_TRUMP, LEAD, FOLLOW, OVER} <= stages and (ANNOUNCE in stages) == rules.three_player_early_marriage



def test_R21_determinize_refuses_what_is_not_a_random_generator_like_the_two_player_one():
    """R21 information sets at naming (forehand's own) and in play refuse ``None`` and a numpy generator by name,
    as two-player ones do, instead of an AttributeError or a numpy generator used for some seats only."""
    game = naming_deal(seed=4, dealer=2)  # seat 0 is forehand, naming trump
    playing = game.clone()
    playing.apply(playing.legal_actions()[0])
    for info in (InformationSet(game, 0), InformationSet(game, 1), InformationSet(playing, 2)):
        for bad in (None, np.random.default_rng(0), 7):
            with pytest.raises(ValueError, match=f"rng must be a random.Random, got {type(bad).__name__}"):
                info.determinize(bad)
        assert conserved(info.determinize(random.Random(0)))


def test_R21_encode_infoset_gives_the_three_player_encoding_like_encode_observation():
    """``encode_infoset`` of a three-player information set (R21) is its own encoding, as ``encode_observation``
    of the game is; a match score and the two-player history planes are refused by name."""
    from sixtysix_env.observation import encode_extended_infoset, encode_infoset, encode_observation

    game = naming_deal(seed=5)
    game.apply(game.legal_actions()[0])
    for seat in range(3):
        info = InformationSet(game, seat)
        np.testing.assert_array_equal(encode_infoset(info), encode_three_infoset(info))
        np.testing.assert_array_equal(encode_infoset(info), encode_observation(game, seat))
    with pytest.raises(ValueError, match="match_score: the three-player game"):
        encode_infoset(InformationSet(game, 0), (1, 2))
    with pytest.raises(ValueError, match="history planes are two-player only"):
        encode_extended_infoset(InformationSet(game, 0))


def test_R21_environments_take_the_two_player_arguments_in_the_two_player_order():
    """Positional arguments mean the same in both engines' environments (rules, illegal_action, render_mode, ...
    for PettingZoo; rules, opponent(s), learner_seat, illegal_action, dict_observation, ... for Gymnasium)."""
    two = raw_env("standard", "raise", "ansi", 1)
    three = ThreePlayerRawEnv("three", "raise", "ansi", 1)
    assert (three.illegal_action, three.render_mode) == (two.illegal_action, two.render_mode) == ("raise", "ansi")
    assert pickle.loads(pickle.dumps(three)).render_mode == "ansi"
    two_gym = SixtySixGymEnv("standard", None, 0, "raise", True)
    three_gym = ThreePlayerGymEnv("three", None, 0, "raise", True)
    assert (three_gym.illegal_action, three_gym.dict_observation) == (two_gym.illegal_action, True)


def test_R21_games_and_information_sets_declare_their_players_and_actions_alike():
    """Generic code reads ``num_players`` and ``num_actions`` from either engine's game and information set (R21:
    three seats and 45 actions; two and 37 otherwise), and the three-player classes are exported beside the
    two-player ones."""
    from sixtysix_env.actions import NUM_ACTIONS

    two, three = Game.deal(seed=6), Game.deal(THREE, seed=6)
    for thing, players, actions in ((two, 2, NUM_ACTIONS), (InformationSet(two, 1), 2, NUM_ACTIONS),
                                    (three, 3, sixtysix_env.NUM_ACTIONS_THREE), (InformationSet(three, 2), 3, 45)):
        assert (thing.num_players, thing.num_actions) == (players, actions)
    assert max(two.legal_actions()) < two.num_actions
    assert sixtysix_env.ThreePlayerRawEnv is ThreePlayerRawEnv
    assert isinstance(InformationSet(three, 0), sixtysix_env.ThreeInformationSet)


def test_R21_deck_from_seat_hands_names_the_hand_of_a_malformed_card_like_deck_from_hands():
    """A scenario's bad card is named by its hand (as the two-player ``deck_from_hands`` names it), not by the deck
    position it would have taken (R21's deal order); ids and names mix as in a deck."""
    from sixtysix_env.record import deck_from_hands
    from sixtysix_env.three import deck_from_seat_hands

    middle, dealer = "9H JH QH KH 9D JD QD KD".split(), "TD AD 9S JS QS KS TS AS".split()
    with pytest.raises(ValueError, match="^middlehand hand: malformed card 'XX'"):
        deck_from_seat_hands("AH TH 9C AC TC KC QC JC", "9H XX QH KH 9D JD QD KD", dealer)
    with pytest.raises(ValueError, match="^dealer hand: malformed card 24"):
        deck_from_seat_hands("AH TH 9C AC TC KC QC JC", middle, dealer[:7] + [24])
    with pytest.raises(ValueError, match="^forehand hand: expected a list of cards, got 7"):
        deck_from_seat_hands(7, middle, dealer)
    with pytest.raises(ValueError, match="^dealer hand: malformed card 'XX'"):
        deck_from_hands("AC TC KC QC JC 9C", "AD XX KD QD JD 9D", "JH")
    ids = [CARD_NAMES.index(name) for name in "AH TH 9C AC TC KC QC JC".split()]
    assert deck_from_seat_hands(ids, middle, dealer) == deck_from_seat_hands("AH TH 9C AC TC KC QC JC", middle, dealer)


def test_R21_parse_action_knows_only_three_player_moves():
    """R21 has no talon and no declaring: ``exchange``, ``close``, ``declare`` and ``draw`` (ids 32-35, which
    never occur) are refused, and the error lists the three-player moves only; every action that occurs parses
    back from its name."""
    from sixtysix_env.three import ACTION_NAMES_THREE, PASS

    for text in ("exchange", "close", "declare", "draw", "foo", 5):
        with pytest.raises(ValueError, match=r"expected 'play XY', 'marry XY' .*'pass', 'name trump X' or "
                                             r"'announce X' .*\(three players, R21\)$") as raised:
            ThreePlayerGame.parse_action(text)
        assert "'close'" not in str(raised.value).split("expected", 1)[1]
    assert ThreePlayerGame.parse_action(" Pass ") == PASS
    for action, name in enumerate(ACTION_NAMES_THREE):
        if action not in range(32, 36):
            assert ThreePlayerGame.parse_action(name) == action


def test_R21_the_table_shows_the_last_trick_and_the_movers_legal_moves_as_the_two_player_table_does():
    """R21 text table: once a trick is complete, a "last trick" line names its leader, every card in seat order and
    the winner (R16: every card of it was seen by all); "legal:" lists the mover's moves, shown to the mover and to an
    open view (None) but never to another seat. The two-player table (R7/R16) does the same."""
    from sixtysix_env.three import three_player_action_name
    raw = ThreePlayerRawEnv(render_mode="ansi", dealer=2)
    raw.reset(seed=8)
    game = raw.game
    assert "last trick" not in raw.table_text(None)
    while not game.tricks:
        raw.step(game.legal_actions()[0])
    leader, cards, winner = game.tricks[-1]
    seats = [(leader + offset) % 3 for offset in range(3)]
    expected = (f"last trick: player_{seats[0]} led {CARD_NAMES[cards[0]]}, player_{seats[1]} played "
                f"{CARD_NAMES[cards[1]]}, player_{seats[2]} played {CARD_NAMES[cards[2]]}, won by player_{winner}")
    mover = game.current_player
    legal = "legal: " + ", ".join(three_player_action_name(action) for action in game.legal_actions())
    for viewer in (None, mover, (mover + 1) % 3, (mover + 2) % 3):
        lines = raw.table_text(viewer).splitlines()
        assert expected in lines
        assert (legal in lines) == (viewer in (None, mover)), viewer
        assert any(line.startswith("legal:") for line in lines) == (viewer in (None, mover)), viewer

    two = raw_env(render_mode="ansi")
    two.reset(seed=8)
    two_game = two.game
    while not two_game.tricks:
        two.step(two_game.legal_actions()[0])
    two_leader, lead, follow, two_winner, _phase2 = two_game.tricks[-1]
    two_lines = two.table_text(None).splitlines()
    assert (f"last trick: player_{two_leader} led {CARD_NAMES[lead]}, player_{1 - two_leader} played "
            f"{CARD_NAMES[follow]}, won by player_{two_winner}") in two_lines
    assert any(line.startswith("legal:") for line in two_lines)
    assert not any(line.startswith("legal:") for line in two.table_text(1 - two_game.current_player).splitlines())
