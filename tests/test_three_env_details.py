"""Details of the three-player environment layer (R21) that the other tests leave open: the dealer and learner
seat schedules, explicit decks in the random sequence, rewards, infos and masks per seat in the AEC env, the
Gymnasium env's arguments, opponents' seats and seeds, flags and table, the observation's relative pieces and
scales, and what a three-player information set holds and how it determinizes.

Positions come from explicit decks in the R21 deal order (``deck_from_seat_hands``, the hands of
tests/test_three_rules.py); with the dealer at seat 2, seat 0 is forehand and seat 1 middlehand.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from sixtysix_env.cards import CARD_NAMES, cards_of, mask_of, parse_card
from sixtysix_env.three import deck_from_seat_hands
from sixtysix_env.three_env import THREE_AGENTS, ThreePlayerGymEnv, ThreePlayerRawEnv
from sixtysix_env.three_infoset import ThreeInformationSet
from sixtysix_env.three_observation import THREE_OBSERVATION_SLICES as SLICES
from sixtysix_env.three_observation import encode_three_infoset, three_action_mask

from hidden_cards import card_tokens
from test_three_rules import DL, FH, HANDS_A, HANDS_B, MH, THREE, THREE_LATE, deal, name_trump_and_pass, play

DECK_A = deck_from_seat_hands(*(hand.split() for hand in HANDS_A))


def cards(mask: int) -> set[str]:
    return {CARD_NAMES[card] for card in cards_of(mask)}


def lowest_legal(environment: ThreePlayerGymEnv) -> int:
    return int(np.flatnonzero(environment.action_masks())[0])


# ------------------------------------------------------------------------------------------------ seat schedules
def test_R21_aec_dealer_rotates_to_the_left_after_a_seeded_reset():
    """R21 seats: the next dealer is the old forehand, ``(dealer + 1) % 3``; a seeded reset draws the first one
    again from the seed, whatever was dealt before."""
    environment = ThreePlayerRawEnv()
    environment.reset(seed=7)
    dealers = [environment.game.dealer]
    for _ in range(5):
        environment.reset()
        dealers.append(environment.game.dealer)
    assert dealers == [(dealers[0] + k) % 3 for k in range(6)]
    assert environment.game.forehand == (dealers[-1] + 1) % 3
    environment.reset(seed=7)
    assert environment.game.dealer == dealers[0]


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_fixed_dealer_and_learner_seat_stay_fixed(seat):
    """``dealer=0/1/2`` (and the Gymnasium ``learner_seat``) is the same seat every deal, seeded or not."""
    aec = ThreePlayerRawEnv(dealer=seat)
    gym = ThreePlayerGymEnv(dealer=seat, learner_seat=seat)
    for seed in (3, None, None, None, 4, None):
        aec.reset(seed=seed)
        gym.reset(seed=seed)
        assert aec.game.dealer == gym.game.dealer == gym.learner == seat


def test_random_dealer_is_drawn_every_deal_not_rotated():
    """``dealer="random"`` draws each deal's dealer (the same draws after the same seed), so they do not rotate."""
    sequences = []
    for _ in range(2):
        aec, gym = ThreePlayerRawEnv(dealer="random"), ThreePlayerGymEnv(dealer="random", learner_seat=0)
        aec.reset(seed=5)
        gym.reset(seed=5)
        dealers = [(aec.game.dealer, gym.game.dealer)]
        for _ in range(29):
            aec.reset()
            gym.reset()
            dealers.append((aec.game.dealer, gym.game.dealer))
        sequences.append(dealers)
    assert sequences[0] == sequences[1]
    for which in range(2):
        sequence = [pair[which] for pair in sequences[0]]
        assert set(sequence) == {0, 1, 2}
        assert any(after != (before + 1) % 3 for before, after in zip(sequence, sequence[1:]))


def test_gym_learner_seat_rotates_by_default_and_restarts_with_a_seed():
    """docs/observation.md: ``ThreePlayerGymEnv(..., learner_seat="rotate")`` is the default: drawn after a seeded
    reset, then the next seat to the left each deal."""
    environment = ThreePlayerGymEnv()
    environment.reset(seed=9)
    learners = [environment.learner]
    for _ in range(5):
        _observation, info = environment.reset()
        assert info["learner"] == environment.learner
        learners.append(environment.learner)
    assert learners == [(learners[0] + k) % 3 for k in range(6)]


def test_seats_refuse_booleans_and_the_other_illegal_modes():
    """Seats are 0, 1, 2: ``True``/``False`` are refused (not taken as 1/0), as are the modes the env lacks."""
    for bad in (True, False):
        with pytest.raises(ValueError, match="dealer must be 'rotate', 'random', 0, 1 or 2"):
            ThreePlayerRawEnv(dealer=bad)
        with pytest.raises(ValueError, match="learner_seat must be"):
            ThreePlayerGymEnv(learner_seat=bad)
        for environment in (ThreePlayerRawEnv(), ThreePlayerGymEnv()):
            with pytest.raises(ValueError, match=r"options\['dealer'\] must be 0, 1 or 2"):
                environment.reset(options={"dealer": bad})
        with pytest.raises(ValueError, match=r"options\['learner_seat'\] must be 0, 1 or 2"):
            ThreePlayerGymEnv().reset(options={"learner_seat": bad})
    for mode in ("warn", "renonce"):
        with pytest.raises(ValueError, match="illegal_action must be 'forfeit' or 'raise'"):
            ThreePlayerGymEnv(illegal_action=mode)
    with pytest.raises(ValueError, match="dict_observation must be true or false, got 1"):
        ThreePlayerGymEnv(dict_observation=1)
    with pytest.raises(ValueError, match="opponents must be two agents .* got 1"):
        ThreePlayerGymEnv(opponents=[None])


@pytest.mark.parametrize("score", [0, (), "", False, [], 0.0])
def test_R21_any_match_score_but_none_is_refused(score):
    """R21: no three-player observation shows a Bummerl score, so ``match_score`` may only be None: a falsy value
    is refused like any other (it is not None)."""
    for environment in (ThreePlayerRawEnv(), ThreePlayerGymEnv()):
        with pytest.raises(ValueError, match=r"options\['match_score'\] must be None"):
            environment.reset(options={"match_score": score})


# ------------------------------------------------------------------------------------------------ AEC env
def test_an_explicit_deck_keeps_the_aec_envs_random_sequence():
    """The module docstring: the deal seed is drawn even for an explicit deck, so the deals after it are those the
    same seed gives without it."""
    with_deck, without = ThreePlayerRawEnv(), ThreePlayerRawEnv()
    with_deck.reset(seed=11)
    without.reset(seed=11)
    with_deck.reset(options={"deck": DECK_A})
    without.reset()
    assert [CARD_NAMES[card] for card in with_deck.game.deck] == DECK_A
    for _ in range(2):
        with_deck.reset()
        without.reset()
        assert with_deck.game.deck == without.game.deck and with_deck.game.dealer == without.game.dealer


def test_R21_aec_rewards_infos_and_flags_go_to_the_right_seats():
    """R21: the seat with the most points (here forehand, seat 0, 76 : 44 : 0) gets reward 1, the others 0; every
    agent is terminated (not truncated) and its info holds the result."""
    raw = ThreePlayerRawEnv()
    raw.reset(options={"deck": DECK_A, "dealer": DL})
    seen = {}
    for agent in raw.agent_iter():
        observation, reward, termination, truncation, info = raw.last()
        if termination or truncation:
            seen[agent] = (reward, termination, truncation, info)
            raw.step(None)
        else:
            raw.step(int(np.flatnonzero(observation["action_mask"])[0]))
    result = raw.game.result
    assert result.winner == FH and result.points == (76, 44, 0)
    assert {agent: value[:3] for agent, value in seen.items()} == {
        "player_0": (1.0, True, False), "player_1": (0.0, True, False), "player_2": (0.0, True, False)}
    assert all(value[3]["result"] is result for value in seen.values())


def test_R21_aec_mask_only_for_the_seat_to_move_and_each_seat_sees_its_own_set():
    """docs/observation.md: the action mask is all zero for a seat not to move; each agent's vector is its own
    information set's."""
    environment = ThreePlayerRawEnv()
    environment.reset(options={"deck": DECK_A, "dealer": DL})
    game = environment.game
    for _ in range(6):
        mover = game.current_player
        for seat, agent in enumerate(THREE_AGENTS):
            observed = environment.observe(agent)
            expected = np.zeros(45, dtype=np.int8)
            if seat == mover:
                expected[game.legal_actions()] = 1
            assert np.array_equal(observed["action_mask"], expected), (seat, mover)
            assert observed["action_mask"].dtype == np.int8
            assert np.array_equal(observed["observation"], encode_three_infoset(ThreeInformationSet(game, seat)))
        environment.step(game.legal_actions()[0])


# ------------------------------------------------------------------------------------------------ Gymnasium env
class Recorder:
    """An opponent that plays its lowest legal action and records its seed, its seat and the seats it acts for."""

    def __init__(self):
        self.seeds, self.started, self.acted = [], [], set()

    def seed(self, seed):
        self.seeds.append(seed)

    def start_deal(self, player, rules):
        self.started.append(player)

    def act(self, infoset):
        self.acted.add(infoset.player)
        return infoset.legal_actions[0]


@pytest.mark.parametrize("learner", [0, 1, 2])
def test_opponent_0_sits_left_of_the_learner_and_opponent_1_right(learner):
    """``ThreePlayerGymEnv._opponent_index``: opponent 0 plays ``(learner + 1) % 3`` (after the learner), opponent 1
    ``(learner + 2) % 3``; each is started on, and asked for, its own seat only."""
    left, right = Recorder(), Recorder()
    environment = ThreePlayerGymEnv(opponents=[left, right], learner_seat=learner)
    environment.reset(seed=1, options={"deck": DECK_A, "dealer": DL})
    done = False
    while not done:
        _observation, _reward, done, _truncated, _info = environment.step(lowest_legal(environment))
    assert left.started == [(learner + 1) % 3] and left.acted == {(learner + 1) % 3}
    assert right.started == [(learner + 2) % 3] and right.acted == {(learner + 2) % 3}


def test_the_two_opponents_are_seeded_apart_and_reproducibly():
    """Each embedded opponent gets its own seed from the env's generator (two random opponents do not play one
    random stream), the same after the same reset seed."""
    first, second = Recorder(), Recorder()
    environment = ThreePlayerGymEnv(opponents=[first, second])
    environment.reset(seed=2)
    environment.reset(seed=2)
    environment.reset(seed=3)
    assert first.seeds[0] == first.seeds[1] and second.seeds[0] == second.seeds[1]
    assert first.seeds[0] != second.seeds[0] and first.seeds[2] != second.seeds[2]
    assert first.seeds[2] != first.seeds[0]


@pytest.mark.parametrize("mode", ["forfeit", "raise"])
def test_gym_flags_reward_and_a_step_after_the_end(mode):
    """R21: the learner's reward is its game point when the deal ends; an episode ends terminated, never
    truncated; a step after the end asks for a reset (both illegal-action modes)."""
    environment = ThreePlayerGymEnv(opponents=[Recorder(), Recorder()], illegal_action=mode, learner_seat=FH)
    environment.reset(seed=0, options={"deck": DECK_A, "dealer": DL})
    done = False
    while not done:
        _observation, reward, done, truncated, info = environment.step(lowest_legal(environment))
        assert truncated is False
        assert reward == (1.0 if done else 0.0)  # forehand wins this deal 76 : 44 : 0
    assert info["result"].winner == FH
    with pytest.raises(ValueError, match=r"call reset\(\) before step\(\)"):
        environment.step(0)


def test_gym_table_hides_the_other_hands_until_the_end():
    """RULES "What a player may know": the Gymnasium table shows the learner's hand and not the others' until the
    deal is over; then every hand."""
    environment = ThreePlayerGymEnv(render_mode="ansi", learner_seat=MH)
    environment.reset(seed=0, options={"deck": DECK_A, "dealer": DL})
    game = environment.game
    while not game.is_over:
        shown = card_tokens(environment.render())
        assert cards(game.hands[MH]) <= shown
        for seat in (FH, DL):
            assert not cards(game.hands[seat]) & shown, seat
        environment.step(lowest_legal(environment))
    assert "result:" in environment.render()


# ------------------------------------------------------------------------------------------------ observation
def marriages_and_two_tricks(rules=THREE):
    """HANDS_A, dealer seat 2: forehand names clubs; before the first lead (early marriage, R21) forehand shows
    clubs (40, trump), middlehand hearts, the dealer spades (20 each); middlehand wins TD AD QD (24) and AH 9S 9H
    (11; the dealer, void in hearts and in trumps, discards, R21), leads KH and the dealer discards JS."""
    game = deal(HANDS_A, rules)
    play(game, "name trump C", "announce C", "pass", "announce H", "pass", "announce S", "pass",
         "play TD", "play AD", "play QD", "play AH", "play 9S", "play 9H", "play KH", "play JS")
    return game


def piece(vector: np.ndarray, name: str) -> list[float]:
    return [float(value) for value in vector[SLICES[name]]]


def card_piece(names: str) -> list[float]:
    chosen = {parse_card(name) for name in names.split()}
    return [1.0 if card in chosen else 0.0 for card in range(24)]


def suit_flags(suits: str) -> list[float]:
    return [1.0 if suit in suits else 0.0 for suit in "CDHS"]


@pytest.mark.parametrize("viewer", [FH, MH, DL])
def test_R21_every_piece_of_the_observation_is_relative_to_the_viewer(viewer):
    """docs/observation.md, three players: ``self`` is the viewer, ``left`` the seat after him ``(seat + 1) % 3``,
    ``right`` the one after that; positions forehand, middlehand, dealer; points / 240, marriage points / 100,
    tricks / 8 (R12: middlehand's 20 count, having won a trick; the others' marriages wait)."""
    game = marriages_and_two_tricks()
    vector = encode_three_infoset(ThreeInformationSet(game, viewer))
    left, right = (viewer + 1) % 3, (viewer + 2) % 3
    relative = (viewer, left, right)
    hands = {FH: "AC TC KC QC JD JH", MH: "9C JC TH QH 9D", DL: "AS TS KS QS KD"}
    won = {FH: "", MH: "TD AD QD AH 9H 9S", DL: ""}
    table = {MH: "KH", DL: "JS", FH: ""}
    known = {FH: "KC QC", MH: "QH", DL: "KS QS"}  # shown pairs, less KH now on the table (R11)
    voids = {FH: "", MH: "", DL: "HC"}  # the dealer neither followed hearts nor trumped (R21)
    shown = {FH: "C", MH: "H", DL: "S"}
    assert piece(vector, "hand") == card_piece(hands[viewer])
    assert piece(vector, "trump_suit") == [1.0, 0.0, 0.0, 0.0]  # clubs
    assert piece(vector, "stage") == [0.0, 0.0, 0.0, 1.0, 0.0]  # follow
    assert piece(vector, "my_position") == [1.0 if seat == viewer else 0.0 for seat in (FH, MH, DL)]
    assert piece(vector, "to_move") == [1.0 if seat == FH else 0.0 for seat in relative]
    for who, seat in zip(("self", "left", "right"), relative):
        assert piece(vector, f"table_{who}") == card_piece(table[seat]), who
        assert piece(vector, f"won_{who}") == card_piece(won[seat]), who
        assert piece(vector, f"marriages_{who}") == suit_flags(shown[seat]), who
    for who, seat in (("left", left), ("right", right)):
        assert piece(vector, f"known_{who}") == card_piece(known[seat]), who
        assert piece(vector, f"void_{who}") == suit_flags(voids[seat]), who
    seen = set(hands[viewer].split()) | set(" ".join(won.values()).split()) | {"KH", "JS"}
    seen |= {card for seat in (left, right) for card in known[seat].split()}
    assert piece(vector, "unseen") == [0.0 if CARD_NAMES[card] in seen else 1.0 for card in range(24)]
    assert piece(vector, "early_marriage") == [1.0]
    points = {FH: 0, MH: 24 + 11 + 20, DL: 0}
    marriages = {FH: 40, MH: 20, DL: 20}
    tricks = {FH: 0, MH: 2, DL: 0}
    assert piece(vector, "points") == pytest.approx([points[seat] / 240 for seat in relative])
    assert piece(vector, "marriage_points") == pytest.approx([marriages[seat] / 100 for seat in relative])
    assert piece(vector, "tricks_won") == pytest.approx([tricks[seat] / 8 for seat in relative])


def test_R21_the_observation_at_the_end_and_without_early_marriage():
    """The stage piece shows "over" and ``to_move`` is all zero once the deal is over; the early-marriage flag is
    the switch (R21), 0 for ``three_player_early_marriage=False``."""
    game = marriages_and_two_tricks()
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    for seat in range(3):
        info = ThreeInformationSet(game, seat)
        vector = encode_three_infoset(info)
        assert piece(vector, "stage") == [0.0, 0.0, 0.0, 0.0, 1.0] and piece(vector, "to_move") == [0.0] * 3
        assert info.to_move is None and not three_action_mask(game, seat).any()
    late = deal(HANDS_A, THREE_LATE)
    play(late, "name trump D")
    assert piece(encode_three_infoset(ThreeInformationSet(late, MH)), "early_marriage") == [0.0]
    assert piece(encode_three_infoset(ThreeInformationSet(late, MH)), "trump_suit") == [0.0, 1.0, 0.0, 0.0]


def test_three_action_mask_checks_the_seat_and_is_zero_for_the_others():
    """docs/observation.md: the mask is over the 45 actions, all zero for a seat not to move; a seat that is not
    0, 1 or 2 (an agent name, 5, True) is refused rather than given an all-zero mask."""
    game = deal(HANDS_A)
    play(game, "name trump C", "pass")
    assert game.current_player == MH
    assert list(np.flatnonzero(three_action_mask(game, MH))) == game.legal_actions()
    assert list(np.flatnonzero(three_action_mask(game))) == game.legal_actions()
    for seat in (FH, DL):
        assert not three_action_mask(game, seat).any()
    for bad in ("player_1", 5, True, -1):
        with pytest.raises(ValueError, match="player must be 0, 1 or 2"):
            three_action_mask(game, bad)


# ------------------------------------------------------------------------------------------------ information set
def suit_mask(suits: str) -> int:
    return mask_of([parse_card(rank + suit) for suit in suits for rank in "9JQKTA"])


def test_R21_voids_shown_in_the_current_trick_and_only_trumps_that_were_not_played():
    """R21 follow rule, read back: a follower who does not follow suit is void in it; one who trumps is not void
    in trumps, one who neither follows nor trumps is void in both. A void counts from the card that shows it, also
    with the trick still on the table, and is kept for the other seats only (a seat's own entry is 0)."""
    game = deal(HANDS_B)  # middlehand and the dealer hold no spade
    name_trump_and_pass(game, "H")
    play(game, "play AS", "play QH")  # middlehand trumps: void in spades, not in hearts
    for viewer in (FH, DL):
        assert ThreeInformationSet(game, viewer).void == tuple(
            suit_mask("S") if seat == MH else 0 for seat in range(3)), viewer
    assert ThreeInformationSet(game, MH).void == (0, 0, 0)
    play(game, "play JH")  # the dealer trumps too
    assert ThreeInformationSet(game, FH).void == (0, suit_mask("S"), suit_mask("S"))
    assert ThreeInformationSet(game, DL).void == (0, suit_mask("S"), 0)

    game = deal(HANDS_A)
    name_trump_and_pass(game, "C")
    play(game, "play 9H", "play AH", "play 9S")  # the dealer: no heart, no club (trump) -> void in both
    assert ThreeInformationSet(game, MH).void == (0, 0, suit_mask("HC"))
    assert ThreeInformationSet(game, DL).void == (0, 0, 0)


def test_the_information_set_names_the_lead_card_the_mover_and_the_counted_points():
    """``lead_card`` is the card led to the current trick, -1 before a lead; ``legal_actions`` only for the seat to
    move; ``points`` are counted points (R12: middlehand's marriage counts once he has a trick, the others' wait);
    ``describe`` names the trump and the points."""
    game = marriages_and_two_tricks()
    info = ThreeInformationSet(game, DL)
    assert info.lead_card == parse_card("KH") and info.trick_cards == (parse_card("KH"), parse_card("JS"))
    assert info.legal_actions == [] and ThreeInformationSet(game, FH).legal_actions == game.legal_actions()
    assert info.points == (0, 55, 0) and info.marriage_points == (40, 20, 20) and info.tricks_won == (0, 2, 0)
    assert "trump C" in info.describe() and "points 0:55:0" in info.describe()
    assert [(m.player, m.suit) for m in info.marriages] == [(FH, 0), (MH, 2), (DL, 3)]
    assert info.hand_sizes == (6, 5, 5)
    play(game, "play JH")  # forehand follows hearts; middlehand wins with KH and leads next
    info = ThreeInformationSet(game, DL)
    assert info.trick_cards == () and info.lead_card == -1 and info.to_move == MH


def test_R21_determinize_splits_the_free_cards_at_random():
    """``determinize`` draws the split of the unconstrained unseen cards uniformly: over many draws every free card
    lands with either other seat, and the worlds differ."""
    game = deal(HANDS_A)
    name_trump_and_pass(game, "C")
    info = ThreeInformationSet(game, MH)
    unseen = cards_of(info.unseen)
    assert len(unseen) == 16
    holders = {card: set() for card in unseen}
    worlds = set()
    rng = random.Random(4)
    for _ in range(60):
        world = info.determinize(rng)
        worlds.add(world.hands[FH])
        assert world.hands[MH] == game.hands[MH]
        for card in unseen:
            holders[card].add(FH if world.hands[FH] >> card & 1 else DL)
    assert len(worlds) > 30
    assert all(seats == {FH, DL} for seats in holders.values())


def test_R21_dealt_hand_counts_the_cards_played_and_the_one_on_the_table():
    """``dealt_hand``: the eight cards a seat was dealt (R21 deal order), those still held and those played, the
    card it has just put on the table included; a drawn world's first three of forehand are three of them."""
    from sixtysix_env.three_infoset import dealt_hand

    game = marriages_and_two_tricks()  # the dealer's JS is the last card on the table, middlehand's KH the first
    for seat, text in zip((FH, MH, DL), HANDS_A):
        assert cards(dealt_hand(game, seat)) == set(text.split()), seat
    play(game, "play JH", "play 9D")  # the trick is complete; middlehand leads the next
    assert len(game.tricks) == 3 and len(game.trick_cards) == 1
    for seat, text in zip((FH, MH, DL), HANDS_A):
        assert cards(dealt_hand(game, seat)) == set(text.split()), seat
