"""A reset that is refused changes nothing: every option is checked before the env deals, draws or reseeds, so
after the error the deal in progress, the seats and the generators are as they were (R3 dealer, R4 deck, R17
score, R21 three players)."""

from __future__ import annotations

import pickle

import pytest

import sixtysix_env
from sixtysix_env import SixtySixGymEnv, ThreePlayerGymEnv

BAD_TWO_PLAYER = [
    ({"match_score": (-1, 0)}, "match_score"),
    ({"match_score": (1, -2)}, "match_score"),
    ({"deck": ["AH", "AH"]}, "options\\['deck'\\]: malformed deck"),
    # R4: the bad card is named with its position in the deck, like a bad card id
    ({"deck": ["AH", "Z9"] + ["TH"] * 18}, "options\\['deck'\\]: malformed deck: position 2: malformed card 'Z9'"),
    ({"dealer": 2}, "options\\['dealer'\\]"),
]
BAD_THREE_PLAYER = [
    ({"deck": ["AH"] * 24}, "options\\['deck'\\]: malformed deck: card AH appears twice"),
    ({"deck": ["9C"] * 5 + ["10H"]}, "options\\['deck'\\]: malformed deck: position 6: malformed card '10H'"),
    ({"dealer": 3}, "options\\['dealer'\\]"),
]


def _aec_state(env):
    raw = env.unwrapped
    return pickle.dumps((raw.game.history, raw.game.dealer, raw.agent_selection, raw._rng.getstate(),
                         getattr(raw, "_encoder", None) and raw._encoder.match_score))


def _gym_state(env):
    return pickle.dumps((env.game.history, env.game.dealer, env.learner, env.np_random.bit_generator.state,
                         getattr(env, "_encoder", None) and env._encoder.match_score))


@pytest.mark.parametrize("options, message", BAD_TWO_PLAYER)
def test_a_refused_reset_leaves_the_two_player_aec_env_as_it_was(options, message):
    env = sixtysix_env.env()
    env.reset(seed=0, options={"match_score": (2, 3)})
    before = _aec_state(env)
    for seed in (None, 5):
        with pytest.raises(ValueError, match=message):
            env.reset(seed=seed, options=options)
        assert _aec_state(env) == before
    env.step(int(env.observe(env.agent_selection)["action_mask"].nonzero()[0][0]))  # and it plays on


@pytest.mark.parametrize("options, message", BAD_TWO_PLAYER + [({"learner_seat": 5}, "learner_seat")])
def test_a_refused_reset_leaves_the_gym_env_as_it_was(options, message):
    env = SixtySixGymEnv()
    env.reset(seed=0, options={"learner_seat": 1})
    before = _gym_state(env)
    for seed in (None, 5):
        with pytest.raises(ValueError, match=message):
            env.reset(seed=seed, options=options)
        assert _gym_state(env) == before
    assert env.action_masks().any()  # still the learner's turn
    env.step(int(env.action_masks().nonzero()[0][0]))


@pytest.mark.parametrize("options, message", BAD_THREE_PLAYER)
def test_a_refused_reset_leaves_the_three_player_envs_as_they_were(options, message):
    aec = sixtysix_env.env(rules="three")
    aec.reset(seed=0)
    gym = ThreePlayerGymEnv()
    gym.reset(seed=0)
    before = _aec_state(aec), _gym_state(gym)
    for seed in (None, 5):
        with pytest.raises(ValueError, match=message):
            aec.reset(seed=seed, options=options)
        with pytest.raises(ValueError, match=message):
            gym.reset(seed=seed, options=options)
        assert (_aec_state(aec), _gym_state(gym)) == before
    with pytest.raises(ValueError, match="learner_seat"):
        gym.reset(options={"learner_seat": 3})
    assert _gym_state(gym) == before[1]
