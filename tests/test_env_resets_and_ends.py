"""The PettingZoo and Gymnasium environments, where a mutation review of sixtysix_env/ (session 72) found
behaviour no test pinned: the seeding of a reset with an explicit deck, the Bummerl score given at reset (R17) in
the AEC information set and in the Gymnasium observation, and whose turn it is once the deal is over."""

from __future__ import annotations

import pytest

from sixtysix_env import OBSERVATION_SLICES, SixtySixGymEnv, describe_observation
from sixtysix_env.env import raw_env


def test_a_reset_with_an_explicit_deck_keeps_the_seeded_sequence_of_later_deals():
    """R4: a deal given by ``options={"deck": ...}`` still draws its seed, so the deals after it are those the seeded
    sequence would have dealt anyway."""
    plain = raw_env()
    plain.reset(seed=1)
    plain.reset()
    plain.reset()
    given = raw_env()
    given.reset(seed=1)
    given.reset(options={"deck": list(given.game.deck)})
    given.reset()
    assert given.game.deck == plain.game.deck


def test_the_aec_information_set_holds_the_bummerl_score_given_at_reset():
    """R17: ``match_score`` at reset is public, so each agent's information set holds it (in seat order, as
    ``InformationSet`` takes it); a reset without it starts a lone deal, with no running score."""
    environment = raw_env()
    environment.reset(seed=0, options={"match_score": (3, 4)})
    assert environment.information_set("player_0").match_score == (3, 4)
    assert environment.information_set("player_1").match_score == (3, 4)
    environment.reset(seed=0)
    assert environment.information_set("player_0").match_score is None


def test_the_gymnasium_observation_shows_the_bummerl_score_from_the_learners_side():
    """R17: the score given at reset is in the observation, scaled by the Bummerl target of 7: seat 1 learns with
    5:2 against it as (its 2, the opponent's 5)."""
    environment = SixtySixGymEnv(learner_seat=1)
    observation, _ = environment.reset(seed=0, options={"match_score": (5, 2)})
    vector = observation["observation"] if isinstance(observation, dict) else observation
    described = describe_observation(vector)
    assert (described["my_game_points"], described["opponent_game_points"]) == (2, 5)
    assert vector[OBSERVATION_SLICES["my_game_points"]].max() == pytest.approx(2 / 7)


def test_after_the_last_move_the_other_agent_is_selected_to_see_the_end():
    """PettingZoo: after the deal's last move every agent is terminated and must step with None; the one selected
    first is the agent who did not make the last move."""
    environment = raw_env()
    environment.reset(seed=0)
    game = environment.game
    while not game.is_over:
        last_mover = game.to_move
        environment.step(game.legal_actions()[0])
    assert all(environment.terminations.values())
    assert environment.agent_selection == f"player_{1 - last_mover}"
