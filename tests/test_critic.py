"""Critics of the network's own play (train/critic.py): what they read of a sampled world
(sixtysix_env.core.critic_inputs), the self-play positions they are fitted on, their files, and a search whose cut
rollouts they value (rollout:leaf_value)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.cards import NUM_CARDS, parse_card
from sixtysix_env.core.critic_inputs import TALON_ORDER_SLOTS, critic_features, critic_input_size
from sixtysix_env.actions import CLOSE
from sixtysix_env.core.layout import BOTTOM_CARD, CLOSED_BY, HAND0, STATE_SIZE, TO_MOVE, TRICK_COUNT
from sixtysix_env.core.state import legal_actions, state_from_game
from sixtysix_env.observation import OBSERVATION_SIZE, OBSERVATION_SLICES, encode_observation

# R4 order, dealer 0: forehand (player 1) holds cards 1-3 and 7-9, the dealer 4-6 and 10-12, the trump card is 13,
# the face-down talon 14-24 (top first).
DECK = ["AC", "TC", "KC", "AS", "TS", "KS", "QC", "JC", "9C", "QS", "JS", "9S", "9H",
        "AH", "9D", "TH", "KH", "QH", "JH", "AD", "TD", "KD", "QD", "JD"]


def _mask(cards: list[str]) -> int:
    return sum(1 << parse_card(card) for card in cards)


def test_r4_critic_features_read_the_opponents_hand_and_the_talon_in_draw_order():
    """From an explicit deck (R4): the "full" inputs are the mover's observation (its Bummerl score zeroed, R17),
    his opponent's hand as card bits, then the face-down talon from the next card drawn (R7), one card per slot;
    after the first trick two cards are gone from the talon and the slots move up."""
    rules = Rules()
    game = Game.deal(rules, deck=DECK, dealer=0)
    state = state_from_game(game)
    observation = encode_observation(game, 1, match_score=(3, 5))[None]
    features = critic_features(observation, state[None], "full")
    assert features.shape == (1, critic_input_size("full"))
    assert critic_input_size("full") == OBSERVATION_SIZE + NUM_CARDS * (1 + TALON_ORDER_SLOTS)
    plain = encode_observation(game, 1)
    np.testing.assert_array_equal(features[0, :OBSERVATION_SIZE], plain)  # the score pieces are zero
    assert observation[0, OBSERVATION_SLICES["my_game_points"]].sum() > 0  # ... though the observation had them
    dealer_hand = features[0, OBSERVATION_SIZE:OBSERVATION_SIZE + NUM_CARDS]
    assert {card for card in range(NUM_CARDS) if dealer_hand[card]} == {
        parse_card(card) for card in DECK[3:6] + DECK[9:12]}
    slots = features[0, OBSERVATION_SIZE + NUM_CARDS:].reshape(TALON_ORDER_SLOTS, NUM_CARDS)
    assert [int(np.flatnonzero(row)[0]) for row in slots] == [parse_card(card) for card in DECK[13:]]
    assert slots.sum() == TALON_ORDER_SLOTS
    hand_only = critic_features(observation, state[None], "opponent_hand")
    np.testing.assert_array_equal(hand_only, features[:, :critic_input_size("opponent_hand")])
    # One trick on: both players drew (R7), so the talon's first two cards are in hands and the rest moved up.
    while state_from_game(game)[TRICK_COUNT] == 0:
        game.apply(min(action for action in game.legal_actions() if action != CLOSE))
    later = state_from_game(game)
    mover = int(later[TO_MOVE])
    rows = critic_features(encode_observation(game, mover)[None], later[None], "full")
    talon = rows[0, OBSERVATION_SIZE + NUM_CARDS:].reshape(TALON_ORDER_SLOTS, NUM_CARDS)
    assert [int(np.flatnonzero(row)[0]) for row in talon[:9]] == [parse_card(card) for card in DECK[15:]]
    assert not talon[9:].any()
    other_hand = rows[0, OBSERVATION_SIZE:OBSERVATION_SIZE + NUM_CARDS]
    assert sum(1 << card for card in range(NUM_CARDS) if other_hand[card]) == int(later[HAND0 + 1 - mover])


def test_critic_features_refuse_unknown_inputs_and_mismatched_states():
    with pytest.raises(ValueError, match="inputs must be one of observation, opponent_hand, full"):
        critic_features(np.zeros((1, OBSERVATION_SIZE), np.float32), np.zeros((1, STATE_SIZE)), "talon")
    with pytest.raises(ValueError, match="one core state .* per observation"):
        critic_features(np.zeros((2, OBSERVATION_SIZE), np.float32), np.zeros((1, STATE_SIZE)), "full")


def test_r16_self_play_positions_are_phase1_choices_scored_for_their_mover():
    """train.critic's self-play: every kept position is a phase-1 decision with a choice (talon open and not closed,
    R7, R10), its return is the game points (R16) the mover scored, so the two seats of a deal have opposite returns
    of 1 to 3, and the same seed gives the same positions."""
    from train.critic import self_play_positions

    first = self_play_positions("suit_iterated", 12, seed=5, chunk=5)
    again = self_play_positions("suit_iterated", 12, seed=5, chunk=5)
    for name in ("observations", "states", "returns", "deals"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    states = first.states.astype(np.int64)
    assert (states[:, CLOSED_BY] == -1).all() and (states[:, BOTTOM_CARD] != -1).all()
    assert all(len(legal_actions(state.copy())) > 1 for state in states)
    assert set(np.unique(np.abs(first.returns))) <= {1.0, 2.0, 3.0}
    assert set(first.deals) == set(range(12))
    for deal in range(12):
        rows = first.deals == deal
        movers = states[rows, TO_MOVE]
        for seat in (0, 1):
            if (movers == seat).any() and (movers == 1 - seat).any():
                assert first.returns[rows][movers == seat][0] == -first.returns[rows][movers == 1 - seat][0]
    assert np.ptp(first.returns[first.deals == 0]) in (0.0, 2.0, 4.0, 6.0)  # one deal: one result, two signs


@pytest.fixture(scope="module")
def tiny_critic(tmp_path_factory):
    """A critic fitted on a few self-play deals by the command itself (tiny, so it says little: the file is the
    point)."""
    pytest.importorskip("torch")
    from train.critic import main

    out = tmp_path_factory.mktemp("critic") / "critic.npz"
    assert main(["--deals", "40", "--val-deals", "10", "--epochs", "2", "--hidden", "16", "--inputs", "full",
                 "--out", str(out), "--no-progress"]) == 0
    return out


def test_train_critic_writes_a_critic_file_that_load_critic_reads(tiny_critic):
    from agents.ppo import load_critic

    critic, rules = load_critic(tiny_critic)
    assert rules == Rules.preset("standard") and critic.inputs == "full"
    assert critic.input_size == critic_input_size("full") and critic.output_size == 1
    figures = json.loads(tiny_critic.with_suffix(".json").read_text())
    assert figures["figures"]["positions"] > 40 and len(figures["epochs"]) == 2
    assert -1.0 <= figures["figures"]["r"] <= 1.0


def test_load_critic_refuses_bad_critic_files_by_name(tiny_critic, tmp_path):
    from agents.ppo import ActorNetwork, load_critic

    network, metadata = ActorNetwork.load_npz(tiny_critic)
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        load_critic(tmp_path / "missing.npz")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="garbage.npz.* cannot be read"):
        load_critic(garbage)
    for name, change, message in (("format.npz", {"format": "sixtysix-ppo"}, "is not a sixtysix critic"),
                                  ("version.npz", {"format_version": 99}, "critic format version 99"),
                                  ("inputs.npz", {"inputs": "talon"}, "inputs must be one of"),
                                  ("size.npz", {"inputs": "observation"}, "maps 569 inputs")):
        path = tmp_path / name
        network.save_npz(path, {**metadata, **change})
        with pytest.raises(ValueError, match=message):
            load_critic(path)
    # no rules at all: what was found is named, not the bare key 'rules'
    path = tmp_path / "no_rules.npz"
    network.save_npz(path, {key: value for key, value in metadata.items() if key != "rules"})
    with pytest.raises(ValueError, match="no_rules.npz'.*unusable metadata: rules must be a mapping of switch names "
                                         "to values, got NoneType"):
        load_critic(path)


@pytest.mark.parametrize("model", ["ppo_vector_standard.zip", "ppo_vector_heuristic_standard.zip",
                                   "ppo_distilled_heuristic_standard.zip"])
def test_a_vector_ppo_model_is_no_critic(model):
    """train/vector_ppo.py keeps its critic apart: these models' value networks are their start models' (the three
    equal ppo_standard's or distilled_standard's to the last weight), and read as critics they gave those values."""
    from agents.ppo import load_critic

    path = Path(__file__).resolve().parent.parent / "models" / model
    with pytest.raises(ValueError, match=f"{model}'.*its value network was not trained with its policy"):
        load_critic(path)
    critic, _ = load_critic(path.parent / "ppo_standard.zip")  # a model trained with its own critic still reads
    assert critic.output_size == 1


def test_rollout_leaves_valued_by_a_world_critic_play_legally_and_repeat(tiny_critic):
    """rollout:leaf_value=CRITIC.npz: a search whose cut rollouts (R7) a critic of the world values picks a legal
    action, and a twin seeded alike picks the same one."""
    from agents import make_agent

    spec = f"expert:seconds=none,samples=16,threads=1,leaf_tricks=1,leaf_value={tiny_critic}"
    game = Game.deal(Rules.preset("standard"), seed=7501)
    infoset = InformationSet(game, game.current_player)
    choices = {make_agent(spec, seed=4).act(infoset) for _twin in range(2)}
    assert len(choices) == 1 and choices <= set(infoset.legal_actions)


@pytest.mark.parametrize("argv, message", [
    (["--inputs", "talon"], "inputs must be one of observation, opponent_hand, full"),
    (["--hidden", "64,x"], "--hidden must be comma-separated layer widths"),
    (["--deals", "0"], "--deals must be at least 1"),
    (["--learning-rate", "0"], "--learning-rate must be a positive number"),
    (["--learning-rate", "inf"], "--learning-rate must be a positive number, got inf"),
    (["--learning-rate", "nan"], "--learning-rate must be a positive number, got nan"),
    (["--out", "critic.zip"], "--out must be an .npz path"),
    (["--network", "missing.npz", "--out", "{tmp}/critic.npz"], "--network"),
    ([], "--out is required"),  # no default: a run never replaces the shipped critic unasked
    (["--seed", "5", "--val-seed", "5", "--deals", "2", "--val-deals", "2", "--out", "{tmp}/critic.npz"],
     "--val-seed must differ from --seed (5)"),  # held-out deals not fitted (a tiny run in tmp should it pass)
])
def test_train_critic_refuses_bad_arguments_by_name(argv, message, capsys, tmp_path):
    from train.critic import main

    with pytest.raises(SystemExit) as stopped:
        main([arg.replace("{tmp}", str(tmp_path)) for arg in argv])
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_compact_features_are_the_critic_inputs_in_half_precision():
    """train.critic keeps millions of input rows as float16, block by block: the same rows as critic_features to
    float16's rounding, card bits exact."""
    from train.critic import compact_features, self_play_positions

    data = self_play_positions("suit_iterated", 6, seed=8)
    exact = critic_features(data.observations, data.states, "full")
    compact = compact_features(data, "full", block=7)
    assert compact.dtype == np.float16 and compact.shape == exact.shape
    np.testing.assert_allclose(compact.astype(np.float32), exact, rtol=1e-3, atol=1e-3)
    cards = slice(OBSERVATION_SIZE, None)  # the opponent's hand and the talon: bits
    np.testing.assert_array_equal(compact[:, cards].astype(np.float32), exact[:, cards])


def test_r16_the_shipped_critic_loads_and_values_a_strong_hand_above_a_weak_one():
    """models/critic_full_standard.npz (``rollout:leaf_value``, docs/training.md "Session 56"): it loads for the
    standard rules with the "full" inputs, and from an explicit deck (R4, dealer 0) it values forehand's opening
    with the trump ace, ten and marriage and two more aces (R11, R16) as a win and, with the hands swapped, as a
    loss."""

    from agents.ppo import load_critic

    critic, rules = load_critic(Path(__file__).resolve().parent.parent / "models" / "critic_full_standard.npz")
    assert rules == Rules() and critic.inputs == "full"
    strong, weak = ["AH", "TH", "KH", "QH", "AC", "AS"], ["9C", "JC", "9S", "JS", "9D", "JD"]
    talon = ["9H", "TC", "KC", "QC", "TS", "KS", "QS", "AD", "TD", "KD", "QD"]
    values = []
    for forehand, dealer in ((strong, weak), (weak, strong)):
        deck = forehand[:3] + dealer[:3] + forehand[3:] + dealer[3:] + ["JH"] + talon  # the trump card JH: hearts
        game = Game.deal(rules, deck=deck, dealer=0)
        assert game.current_player == 1 and sorted(game.hand(1)) == sorted(parse_card(card) for card in forehand)
        features = critic_features(encode_observation(game, 1)[None], state_from_game(game)[None], "full")
        values.append(float(critic.logits(features[0]).reshape(-1)[0]))
    assert all(np.isfinite(values)) and values[0] > 1.0 and values[1] < -1.0, values
