"""Agents in three-player Sixty-six (R21): the same spec names (``random``, ``greedy``, ``heuristic``, ``pimc``)
play three seats from the information set alone, always legally, reproducibly from their seed."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agents.registry import make_agent
from agents.three_players import heuristic_action, trump_by_count, trump_by_strength
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.cards import mask_of, parse_card
from sixtysix_env.three import NAME_TRUMP_BASE, ThreePlayerGame, deck_from_seat_hands
from sixtysix_env.three_infoset import ThreeInformationSet

THREE = Rules.preset("three")
THREE_MODEL = Path(__file__).resolve().parent.parent / "models" / "ppo_three.zip"
SPECS = ("random", "greedy", "heuristic", "pimc:samples=4,seconds=none")


def play(specs, seed: int, dealer: int, rules: Rules = THREE) -> ThreePlayerGame:
    agents = [make_agent(spec, seed=seed * 3 + seat) for seat, spec in enumerate(specs)]
    game = Game.deal(rules, seed=seed, dealer=dealer)
    for seat, agent in enumerate(agents):
        agent.start_deal(seat, rules)
    while not game.is_over:
        seat = game.current_player
        info = InformationSet(game, seat)
        assert isinstance(info, ThreeInformationSet)
        action = agents[seat].act(info)
        assert action in game.legal_actions(), (specs[seat], game.render(), action)
        game.apply(action)
    return game


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("rules", [THREE, Rules.preset("three", three_player_early_marriage=False)])
def test_agent_plays_legally_and_reproducibly(spec, rules):
    """Every agent finishes three-player deals with legal actions only; the same seeds give the same play."""
    for seed in range(4):
        first = play((spec, "random", spec), seed, seed % 3, rules)
        again = play((spec, "random", spec), seed, seed % 3, rules)
        assert first.history == again.history and first.is_over


def test_trump_naming_reads_only_the_first_three_cards():
    """R21: the agents name trump from forehand's first three cards (the information set holds no more)."""
    three = mask_of([parse_card("AH"), parse_card("TH"), parse_card("9C")])
    assert trump_by_count(three) == 2 and trump_by_strength(three) == 2
    pair = mask_of([parse_card("KS"), parse_card("QS"), parse_card("AD")])
    assert trump_by_strength(pair) == 3  # a King-Queen pair makes a 40 marriage in trump (R11)
    deck = deck_from_seat_hands("AH TH 9C AC TC KC QC JC".split(), "9H JH QH KH 9D JD QD KD".split(),
                                "TD AD 9S JS QS KS TS AS".split())
    game = Game.deal(THREE, deck=deck, dealer=2)
    # Forehand holds six clubs, but he may only look at AH TH 9C: hearts.
    assert heuristic_action(ThreeInformationSet(game, 0), random.Random(0)) == NAME_TRUMP_BASE + 2


def test_heuristic_takes_a_full_trick_as_last_player_and_throws_cheaply_otherwise():
    """The heuristic, last to play, wins a trick with points by following suit higher (R21), and when it cannot
    win it throws its cheapest card."""
    deck = deck_from_seat_hands("AC 9C JC QD KD 9H JH 9S".split(), "TC KC QC 9D JD QH KH JS".split(),
                                "AD TD AH TH QS KS TS AS".split())
    game = Game.deal(Rules.preset("three", three_player_early_marriage=False), deck=deck, dealer=2)
    game.apply(NAME_TRUMP_BASE + 0)  # clubs
    game.apply(parse_card("QD"))  # forehand leads QD
    game.apply(parse_card("JD"))  # middlehand follows low
    action = heuristic_action(ThreeInformationSet(game, 2), random.Random(0))
    assert action == parse_card("TD")  # the dealer banks his ten, keeping the master ace


def test_two_player_only_agents_refuse_three_players_clearly():
    """ismcts and the shipped two-player ppo model name the problem instead of failing inside."""
    game = Game.deal(THREE, seed=1, dealer=0)
    info = InformationSet(game, game.current_player)
    with pytest.raises(ValueError, match="two-player game only"):
        make_agent("ismcts:seconds=none,iterations=10", seed=0).act(info)
    with pytest.raises(ValueError, match="cannot play 'three'"):
        make_agent("ppo", seed=0).act(info)


@pytest.mark.parametrize("spec, named", [
    ("pimc:depth=4", "depth"), ("pimc:inference=policy", "inference"), ("pimc:prune=none", "prune"),
    ("pimc:close_min_value=none,full_solve_talon=11", "close_min_value, full_solve_talon"),
    ("pimc:close_min_win=0.1", "close_min_win"),
])
def test_pimc_refuses_the_parameters_only_its_two_player_search_reads(spec, named):
    """R21's search reads samples, seconds, override_margin and prior; the others changed nothing in play, and are
    now refused by name where the agent meets the rules (agent_for_rules, as every tool checks its specs)."""
    from agents.registry import agent_for_rules

    with pytest.raises(ValueError, match=f"{named} would be ignored"):
        agent_for_rules(spec, THREE)
    agent_for_rules(spec, Rules())  # the two-player game reads them
    agent_for_rules("pimc:samples=4,seconds=none,override_margin=0.2", THREE)
    agent_for_rules("pimc:samples=4,seconds=none,prior=none", THREE)


def test_pimc_refuses_a_three_player_override_margin_no_world_value_can_reach():
    """R21's worlds are worth 1 for a deal won (and a tie 0.5, plus a point share below 0.1), so a margin above 1
    would never let another action override the heuristic's: refused, where two players take game points 0..6."""
    from agents.registry import agent_for_rules

    with pytest.raises(ValueError, match="override_margin with three players .* 0..1 .* got 5"):
        agent_for_rules("pimc:override_margin=5", THREE)
    agent_for_rules("pimc:override_margin=5", Rules())
    agent_for_rules("pimc:override_margin=1", THREE)


@pytest.mark.parametrize("phase2", ["solver", "endgame", "exhausted"])
def test_a_three_player_network_hands_no_phase_2_to_the_search(phase2):
    """R21 has no talon, so no phase 2 (R8) to hand to the two-player search: the hybrid modes are refused when the
    agent is made (they crashed at its first decision); the network playing every decision is what it does."""
    with pytest.raises(ValueError, match=f"phase2={phase2} .* use phase2=policy"):
        make_agent(f"ppo:path={THREE_MODEL},phase2={phase2}")
    game = play([f"ppo:path={THREE_MODEL},phase2=policy", "random", "greedy"], seed=4, dealer=0)
    assert game.is_over


def test_the_heuristic_in_the_middle_weighs_the_seat_still_to_play(monkeypatch):
    """R21, a trick of three: the second to play asks whether the third, still to play, may beat his card, not the
    leader, who has played (it asked about the leader until session 67)."""
    import agents.three_players as three_players

    asked = []
    real = three_players.likely_beaten

    def recording(infoset, card, seat, lead_suit):
        asked.append((infoset.player, infoset.leader, len(infoset.trick_cards), seat))
        return real(infoset, card, seat, lead_suit)

    monkeypatch.setattr(three_players, "likely_beaten", recording)
    for seed in range(8):
        play(["heuristic"] * 3, seed=seed, dealer=seed % 3)
    assert len(asked) > 20
    for player, leader, cards_on_table, seat in asked:
        assert cards_on_table == 1 and leader == (player + 2) % 3  # the middle of a trick
        assert seat == (player + 1) % 3  # the one seat still to play


def test_pimc_counts_its_prior_s_time_inside_the_budget(monkeypatch):
    """With three players, as with two, the heuristic prior's time is part of ``seconds``: the worlds get the rest."""
    import time

    import agents.pimc as pimc_module

    given = []
    monkeypatch.setattr(pimc_module, "pimc_action", lambda infoset, rng, samples, seconds, margin, prior:
                        given.append(seconds) or infoset.legal_actions[0])
    agent = make_agent("pimc:seconds=0.5", seed=1)
    real_prior = agent._prior_agent.act
    agent._prior_agent.act = lambda infoset: time.sleep(0.2) or real_prior(infoset)
    game = Game.deal(THREE, seed=3, dealer=0)
    agent.start_deal(game.current_player, THREE)
    game.apply(game.legal_actions()[0])  # trump named; the agent's next decision has a choice
    while len(game.legal_actions()) < 2:
        game.apply(game.legal_actions()[0])
    agent.act(InformationSet(game, game.current_player))
    assert given and given[0] <= 0.5 - 0.2


def test_a_three_player_network_plays_any_bummerl_target_a_two_player_one_does_not():
    """R17, R21: the three-player observation holds no match score, so ``ppo_three`` plays a Bummerl to 3 as well
    (it was refused, "switches differ: bummerl_target", found by a sweep); the two-player observation scales the
    match score by the target, so ``ppo`` still refuses another target."""
    from agents.base import unread_switches
    from agents.registry import agent_for_rules

    three_to_three = Rules.preset("three", bummerl_target=3)
    agent = agent_for_rules("ppo_three", three_to_three)
    game = ThreePlayerGame.deal(three_to_three, seed=4)
    agent.start_deal(game.to_move, three_to_three)
    assert agent.act(ThreeInformationSet(game, game.to_move)) in game.legal_actions()
    assert "bummerl_target" in unread_switches(Rules.preset("three"))
    assert "bummerl_target" not in unread_switches(Rules.preset("standard"))
    with pytest.raises(ValueError, match="switches differ: bummerl_target"):
        agent_for_rules("ppo", Rules.preset("standard", bummerl_target=3))
    with pytest.raises(ValueError, match="switches differ: three_player_early_marriage"):  # an input reads it
        agent_for_rules("ppo_three", Rules.preset("three", three_player_early_marriage=False))
