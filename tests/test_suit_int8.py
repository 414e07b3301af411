"""The int8 suit networks (agents/suit_int8.py): the compiled pass computes exactly the rounded networks, the
rounding moves each weight by at most half a step, and the player keeps the float32 player's choices."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.base import MODELS_DIR
from agents.ppo import encode_infoset
from agents.registry import make_agent
from agents.suit import SuitEnsemble, SuitNetwork, load_suit_networks, suit_paths
from agents.suit_int8 import QuantizedSuitEnsemble, layer_names, quantize
from eval.play import play_deal
from sixtysix_env import Game, InformationSet, Rules

# suit_pair: a network of two rounds and one of three, so the kernel walks both layouts.
PAIR = f"{MODELS_DIR / 'suit_two_long_standard.npz'}+{MODELS_DIR / 'suit_three_standard.npz'}"


def _decisions(deals: int, seed: int) -> list[InformationSet]:
    """Information sets of random play (R4 deals from ``seed``), every decision with a choice."""
    found = []
    for deal in range(deals):
        game = Game.deal(Rules(), seed=seed + deal, dealer=deal & 1)
        rng = random.Random(seed + deal)
        while not game.is_over:
            legal = game.legal_actions()
            if len(legal) > 1:
                found.append(InformationSet(game, game.current_player))
            game.apply(rng.choice(legal))
    return found


def test_rounding_moves_each_weight_by_at_most_half_a_step_of_its_unit():
    weight = np.random.default_rng(3).normal(size=(16, 40)).astype(np.float32)
    weight[5] = 0.0  # a unit of zeros stays zeros
    quantized, scales = quantize(weight)
    assert quantized.dtype == np.int8 and quantized.shape == (40, 16) and scales.shape == (16,)
    assert np.abs(quantized).max() == 127  # each unit's largest weight uses the whole range
    restored = (quantized.astype(np.float32) * scales).T
    assert np.all(np.abs(restored - weight) <= scales[:, None] / 2 + 1e-7)
    assert np.all(restored[5] == 0.0)


def test_the_compiled_pass_computes_the_rounded_networks_exactly():
    """Over observations of random play, single and batched: the kernel's mean logits equal those of the rounded
    weights through the NumPy forward pass of agents/suit.py (to float rounding), for members of 2 and 3 rounds."""
    network, _rules = load_suit_networks(suit_paths(PAIR))
    quantized = QuantizedSuitEnsemble(network.members)
    assert [member.rounds for member in network.members] == [2, 3]
    assert [len(layer_names(member.rounds)) for member in network.members] == [10, 13]
    rounded = SuitEnsemble([SuitNetwork(weights) for weights in quantized.dequantized_weights()])
    observations = np.array([encode_infoset(infoset) for infoset in _decisions(6, 400)], dtype=np.float32)
    assert len(observations) > 50
    batched = quantized.logits(observations)
    assert batched.shape == (len(observations), 37)
    np.testing.assert_allclose(batched, rounded.logits(observations), atol=1e-4)
    np.testing.assert_allclose(quantized.logits(observations[7]), batched[7], atol=1e-6)
    # And the rounding itself is small against the float32 networks' spread of logits.
    difference = np.abs(batched - network.logits(observations)).max(axis=1)
    assert np.median(difference) < 0.05 * np.median(np.ptp(network.logits(observations), axis=1))


def test_the_int8_player_keeps_the_float32_players_choices_and_plays_whole_deals():
    """At 300+ decisions of random play the int8 ``suit_pair`` picks the float32 one's action almost always (the
    rounding decides only near-ties), and it plays deals to the end against ``heuristic``."""
    float_player, int8_player = make_agent("suit_pair", seed=0), make_agent("suit_pair:precision=int8", seed=0)
    decisions = _decisions(30, 900)
    assert len(decisions) > 300
    same = sum(float_player.act(infoset) == int8_player.act(infoset) for infoset in decisions)
    assert same >= 0.97 * len(decisions)
    for deal in range(3):
        result = play_deal(Game.deal(Rules(), seed=deal, dealer=deal & 1), [int8_player, make_agent("heuristic")])
        assert result.winner in (0, 1)


def test_an_unknown_precision_is_refused_by_name():
    with pytest.raises(ValueError, match="precision"):
        make_agent("suit_pair:precision=int4")
