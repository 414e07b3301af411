"""Inference of the opponent's hand from his play (agents/inference.py, ``pimc:inference=...``): from explicit
decks (R4), a lead without announcing (R11) or exchanging (R9) makes worlds where he held the pair or the trump
nine unlikely, by the hypergeometric chance that he held them then (R7 draws since); the lead model prefers worlds
where his lead was a cheap one; PIMC keeps worlds with that likelihood; bad option values are refused by name."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agents.pimc as pimc_module
from agents import make_agent
from agents.inference import RULE_FLOOR, InferredWorlds, OpponentModel, inferred
from agents.pimc import PimcAgent
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.cards import mask_of, parse_card

US, HIM = 0, 1  # dealer 0: player 1 is forehand and leads first (R5)

# R4: cards 1-3 and 7-9 to forehand (him), 4-6 and 10-12 to the dealer (us), the 13th is the trump card (clubs),
# the rest the talon, top first. He holds no pair and not the trump nine; the pairs and 9C are all unseen by us.
DECK = ["9D", "JD", "9S", "AD", "TD", "AS", "JS", "AH", "TH", "TS", "JH", "9H", "AC",
        "JC", "TC", "9C", "QC", "KC", "QD", "KD", "QH", "KH", "QS", "KS"]


def cards(*names: str) -> int:
    return mask_of([parse_card(name) for name in names])


def deal(*actions: str) -> Game:
    game = Game.deal(Rules.preset("standard"), deck=DECK, dealer=0)
    for action in actions:
        game.apply(game.parse_action(action))
    return game


def test_r11_r9_lead_without_announcing_makes_pair_and_nine_worlds_unlikely():
    """R11/R9: he led 9D with no card drawn since, so any pair he holds now he held then and could have announced
    (R11 standard: no trick needed), and the trump nine he could have exchanged (R9): each costs RULE_FLOOR."""
    infoset = InformationSet(deal("play 9D"), US)
    model = OpponentModel(infoset, "rules")
    assert model.informative
    assert model.likelihood(cards("JD", "9S", "JS", "AH", "TH")) == 1.0  # his real hand: nothing skipped
    assert model.likelihood(cards("QH", "KH", "9S", "JS", "AH")) == pytest.approx(RULE_FLOOR)
    assert model.likelihood(cards("QH", "KH", "QS", "KS", "AH")) == pytest.approx(RULE_FLOOR ** 2)
    assert model.likelihood(cards("9C", "JD", "9S", "JS", "AH")) == pytest.approx(RULE_FLOOR)
    # A lone King or Queen is no evidence.
    assert model.likelihood(cards("QH", "KS", "9S", "JS", "AH")) == 1.0


def test_r7_draws_since_the_lead_make_the_evidence_weaker():
    """R7: we won his 9D lead with TD and both drew one card. A pair he holds now was held at his lead only if his
    draw (one of his 6 cards but the 9D he led) was neither card: P(held) = C(4,1)/C(6,1) = 2/3, so the pair costs
    1 - 0.9 * 2/3 = 0.4; the trump nine (one card) 1 - 0.9 * 5/6 = 0.25."""
    game = deal("play 9D", "play TD")
    assert game.to_move == US and game.hands[US] >> parse_card("JC") & 1  # we drew JC, he drew TC
    model = OpponentModel(InformationSet(game, US), "rules")
    assert model.likelihood(cards("QH", "KH", "JD", "9S", "JS", "AH")) == pytest.approx(0.4)
    assert model.likelihood(cards("9C", "JD", "9S", "JS", "AH", "TH")) == pytest.approx(0.25)
    assert model.likelihood(cards("9C", "QH", "KH", "9S", "JS", "AH")) == pytest.approx(0.4 * 0.25)
    assert model.likelihood(cards("TC", "JD", "9S", "JS", "AH", "TH")) == 1.0  # his real hand


def test_r11_an_announced_marriage_is_no_evidence_against_other_pairs_that_turn():
    """R11: one marriage per turn, so a player who announced could not announce another pair: only the nine (R9)
    remains evidence at that lead."""
    deck = list(DECK)
    deck[0], deck[1], deck[20], deck[21] = "QH", "KH", "9D", "JD"  # he holds the heart pair
    game = Game.deal(Rules.preset("standard"), deck=deck, dealer=0)
    game.apply(game.parse_action("marry QH"))
    model = OpponentModel(InformationSet(game, US), "rules")
    assert model.likelihood(cards("KH", "QS", "KS", "9S", "JS")) == 1.0
    assert model.likelihood(cards("KH", "9C", "KS", "9S", "JS")) == pytest.approx(RULE_FLOOR)


def test_policy_lead_model_prefers_worlds_where_the_lead_was_cheap():
    """He led the jack of spades: likely when it was his cheapest card to give up, unlikely when he also held
    nines he could have led instead (his real hand)."""
    infoset = InformationSet(deal("play JS"), US)
    model = OpponentModel(infoset, "policy")
    rng = random.Random(0)
    nines_left = model.likelihood(cards("9D", "JD", "9S", "AH", "TH"), rng)
    jack_was_cheapest = model.likelihood(cards("QD", "KS", "TH", "KC", "AH"), rng)
    assert jack_was_cheapest > 2 * nines_left
    assert OpponentModel(infoset, "rules").likelihood(cards("9D", "JD", "9S", "AH", "TH")) == 1.0


def test_pimc_keeps_worlds_with_their_likelihood(monkeypatch):
    """With ``inference=rules`` the worlds PIMC evaluates after his 9D lead (R11) hold a pair far less often than
    the worlds ``determinize`` draws."""
    infoset = InformationSet(deal("play 9D"), US)
    pairs = [cards("QC", "KC"), cards("QD", "KD"), cards("QH", "KH"), cards("QS", "KS")]

    def share_with_pair(inference: str) -> float:
        hands = []

        def record(world, action, player, depth, alpha=-4, beta=4, weights=None):
            hands.append(world.hands[HIM])
            return 0

        monkeypatch.setattr(pimc_module, "action_value", record)
        agent = PimcAgent(seed=5, samples=400, seconds=None, prune=None, prior="none", inference=inference)
        agent.action_values(infoset)
        worlds = hands[:: len(infoset.legal_actions)]
        assert len(worlds) == 400
        return sum(any(hand & pair == pair for pair in pairs) for hand in worlds) / len(worlds)

    drawn = share_with_pair("none")
    kept = share_with_pair("rules")
    assert drawn > 0.3
    assert kept < 0.5 * drawn


def test_inferred_worlds_sample_by_likelihood_and_read_through():
    """The same through the wrapper any world-sampling agent can use (the heuristic prior's closing check, R10):
    after his 9D lead (R11, R9) a kept world rarely holds a pair or the trump nine."""
    infoset = InformationSet(deal("play 9D"), US)
    worlds = inferred(infoset, "rules")
    assert isinstance(worlds, InferredWorlds)
    assert worlds.legal_actions == infoset.legal_actions and worlds.player == US
    model = OpponentModel(infoset, "rules")
    rng = random.Random(3)
    kept = [worlds.determinize(rng).hands[HIM] for _ in range(300)]
    drawn = [infoset.determinize(rng).hands[HIM] for _ in range(300)]
    assert sum(model.likelihood(hand) < 1 for hand in kept) < 0.5 * sum(model.likelihood(hand) < 1 for hand in drawn)
    assert worlds.rejected > 0
    # Nothing to infer before he has played: the information set itself.
    assert inferred(InformationSet(deal(), HIM), "rules").__class__ is InformationSet


@pytest.mark.parametrize("spec", ["pimc:inference=oracle", "pimc:inference=1", "pimc:inference=true",
                                  "pimc:inference_in_prior=1", "pimc:inference_in_prior=yes"])
def test_bad_inference_values_name_the_parameter(spec):
    with pytest.raises(ValueError, match="inference"):
        make_agent(spec)
    with pytest.raises(ValueError, match="inference"):
        OpponentModel(InformationSet(deal("play 9D"), US), "oracle")


def test_inference_from_spec_and_default_unchanged():
    assert make_agent("pimc").inference == "none"
    assert make_agent("pimc:inference=rules").inference == "rules"
    assert make_agent("pimc:inference=Policy").inference == "policy"
    assert make_agent("pimc:inference=rules,inference_in_prior=true").inference_in_prior is True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.sampled_from(["standard", "paderborn", "scharf"]), deal_seed=st.integers(0, 2**31),
       play_seed=st.integers(0, 2**31), dealer=st.integers(0, 1))
def test_any_play_leaves_the_true_hand_possible_and_inferred_worlds_consistent(preset, deal_seed, play_seed,
                                                                               dealer):
    """Over random deals played at random (closings R10, exchanges R9, marriages R11 at any time): the opponent's
    true hand always keeps a likelihood in (0, 1] (the floors: any player may skip), and an inferred world is one
    ``determinize`` could draw (our hand, the cards known in his hand, his hand size)."""
    rng = random.Random(play_seed)
    game = Game.deal(Rules.preset(preset), seed=deal_seed, dealer=dealer)
    while not game.is_over:
        player = game.current_player
        infoset = InformationSet(game, player)
        for kind in ("rules", "policy"):
            assert 0 < OpponentModel(infoset, kind).likelihood(game.hands[1 - player], rng) <= 1
            world = inferred(infoset, kind).determinize(rng)
            assert world.hands[player] == game.hands[player]
            assert world.hands[1 - player] & infoset.opponent_known == infoset.opponent_known
            assert world.hands[1 - player].bit_count() == game.hands[1 - player].bit_count()
        game.apply(rng.choice(game.legal_actions()))


def test_prior_models_his_replies_with_inferred_hands():
    """With ``inference_in_prior`` the heuristic prior's hands for his replies (its lead model) come from the
    inferred worlds: after his 9D lead (R11) they hold a pair far less often."""
    from agents.rule_based import HeuristicAgent

    infoset = InformationSet(deal("play 9D"), US)
    pairs = [cards("QC", "KC"), cards("QD", "KD"), cards("QH", "KH"), cards("QS", "KS")]
    heuristic = HeuristicAgent(seed=2)
    with_pair = lambda hands: sum(any(h & p == p for p in pairs) for h in hands)  # noqa: E731
    uniform = [heuristic._sample_opponent_hand(infoset) for _ in range(300)]
    kept = [heuristic._sample_opponent_hand(inferred(infoset, "rules")) for _ in range(300)]
    assert with_pair(kept) < 0.5 * with_pair(uniform)


def test_the_resampled_fallback_keeps_inferred_worlds_near_their_posterior():
    """Where the opponent often leaves the heuristic's play, most worlds come from the fallback after 64 rejected
    draws. Keeping the likeliest of them skews the opponent's card-in-hand marginals; drawing one in proportion to its
    likelihood (``fallback="resample"``) keeps them near worlds drawn with tries enough that the fallback never
    triggers (bench.inference_fallback, docs/strength.md "Seeds of session 65")."""
    from bench.inference_fallback import deviating_position, marginals

    infoset = InformationSet(*deviating_position(11004, 3, 0.5))
    reference, from_fallback = marginals(infoset, 1500, 5000, "likeliest", 1)
    assert from_fallback < 15  # the reference's worlds are (almost) all accepted draws
    likeliest, likeliest_fallback = marginals(infoset, 1500, 64, "likeliest", 1)
    resampled, resampled_fallback = marginals(infoset, 1500, 64, "resample", 1)
    assert likeliest_fallback > 500 and resampled_fallback > 500
    likeliest_distance = np.abs(likeliest - reference).sum()
    resampled_distance = np.abs(resampled - reference).sum()
    assert resampled_distance < likeliest_distance / 2, (resampled_distance, likeliest_distance)
    with pytest.raises(ValueError, match="fallback must be one of likeliest, resample"):
        marginals(infoset, 1, 64, "best", 1)
    with pytest.raises(ValueError, match="inference_fallback must be one of likeliest, resample, got 'best'"):
        make_agent("expert:inference_fallback=best")


@pytest.mark.parametrize("spec", ["ismcts:iterations=50,seconds=none", "blend:samples=20,iterations=50,seconds=none"])
def test_an_agent_that_has_inferred_worlds_pickles_and_copies(spec):
    """Its world samplers read through to the information set: pickle and deepcopy (Ray, joblib, a copied env)
    looked that attribute up before it was set, and recursed without end."""
    import copy
    import pickle

    game = Game.deal(Rules.preset("standard"), seed=3)
    players = [make_agent(spec, seed=1), make_agent(spec, seed=2)]
    for seat, agent in enumerate(players):
        agent.start_deal(seat, game.rules)
    for _ in range(4):
        game.apply(players[game.to_move].act(InformationSet(game, game.to_move)))
    mover = game.to_move
    original = players[mover].act(InformationSet(game, mover))
    for clone in (pickle.loads(pickle.dumps(players[mover])), copy.deepcopy(players[mover])):
        clone.seed(5)
        players[mover].seed(5)
        assert clone.act(InformationSet(game, mover)) == players[mover].act(InformationSet(game, mover))
    assert original in game.legal_actions()
