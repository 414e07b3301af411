"""The single-agent Gymnasium environment (sixtysix_env/gym_env.py): Gymnasium's env checker, determinism, the
embedded opponent, masks for sb3-contrib, rewards (R16) and illegal actions (R8 Renonce)."""

from __future__ import annotations

import random
import re

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agents.base import RandomAgent
from sixtysix_env import OBSERVATION_SIZE, Game, Rules, SixtySixGymEnv, parse_action
from sixtysix_env.cards import CARD_NAMES, cards_of, mask_of
from sixtysix_env.gym_env import UniformRandomOpponent
from sixtysix_env.infoset import InformationSet
from sixtysix_env.record import deck_from_hands


def play_out(environment: SixtySixGymEnv, rng: random.Random) -> tuple[float, int]:
    """Random legal learner actions until the deal ends; returns (final reward, learner decisions)."""
    decisions = 0
    while True:
        legal = np.flatnonzero(environment.action_masks())
        _obs, reward, terminated, truncated, _info = environment.step(int(legal[rng.randrange(len(legal))]))
        decisions += 1
        assert not truncated
        if terminated:
            return reward, decisions
        assert reward == 0.0


@pytest.mark.filterwarnings("ignore:.*not having a spec")
@pytest.mark.parametrize("options", [
    {}, {"dict_observation": True}, {"rules": "paderborn", "learner_seat": 1},
    {"rules": "scharf", "render_mode": "ansi"},
])
def test_gymnasium_check_env(options):
    check_env(SixtySixGymEnv(**options))


def test_check_env_through_gymnasium_make_and_its_render_modes():
    environment = gymnasium.make("SixtySix-v0", learner_seat="random")
    check_env(environment.unwrapped)
    assert environment.unwrapped.learner in (0, 1)


def test_spaces_and_observation():
    flat = SixtySixGymEnv()
    observation, info = flat.reset(seed=0)
    assert flat.observation_space.shape == (OBSERVATION_SIZE,) and observation.dtype == np.float32
    assert observation in flat.observation_space and flat.action_space.n == 37
    assert info["learner"] == flat.learner and np.array_equal(info["action_mask"], flat.action_masks())
    with_dict = SixtySixGymEnv(dict_observation=True)
    observation, _info = with_dict.reset(seed=0)
    assert set(observation) == {"observation", "action_mask"} and observation["action_mask"].dtype == np.int8
    assert np.array_equal(observation["action_mask"].astype(bool), with_dict.action_masks())


def test_reset_seed_makes_whole_episodes_reproducible():
    def episode(environment, seed):
        observations = [environment.reset(seed=seed)[0]]
        rng = random.Random(seed)
        rewards = []
        while True:
            legal = np.flatnonzero(environment.action_masks())
            observation, reward, terminated, _truncated, _info = environment.step(int(legal[rng.randrange(len(legal))]))
            observations.append(observation)
            rewards.append(reward)
            if terminated:
                return np.array(observations), rewards, environment.game.history[:]

    first, second = SixtySixGymEnv(), SixtySixGymEnv()
    for seed in (0, 1, 2):
        one, two = episode(first, seed), episode(second, seed)
        assert np.array_equal(one[0], two[0]) and one[1] == two[1] and one[2] == two[2]
    assert episode(first, 3)[2] != episode(first, 4)[2]


def test_opponent_plays_until_the_learner_must_act_and_reward_is_the_learners():
    """R16: the reward is the learner's side of the deal's game points."""
    rng = random.Random(1)
    for seat in (0, 1):
        environment = SixtySixGymEnv(learner_seat=seat)
        for seed in range(10):
            environment.reset(seed=seed)
            game = environment.game
            assert game.to_move == seat and environment.learner == seat
            while True:
                legal = np.flatnonzero(environment.action_masks())
                assert list(legal) == game.legal_actions()
                _obs, reward, terminated, _truncated, info = environment.step(int(legal[rng.randrange(len(legal))]))
                if terminated:
                    assert reward == game.result.returns()[seat] and info["result"] == game.result
                    assert not environment.action_masks().any()
                    break
                assert game.to_move == seat, "control returns to the learner"


def test_learner_seat_modes():
    alternate = SixtySixGymEnv(learner_seat="alternate")
    alternate.reset(seed=0)
    seats = [alternate.learner]
    for _ in range(5):
        alternate.reset()
        seats.append(alternate.learner)
    assert all(seats[i] != seats[i + 1] for i in range(5))
    drawn = SixtySixGymEnv(learner_seat="random")
    drawn.reset(seed=0)
    assert {drawn.reset()[1]["learner"] for _ in range(30)} == {0, 1}
    fixed = SixtySixGymEnv(learner_seat=1)
    assert {fixed.reset(seed=s)[1]["learner"] for s in range(5)} == {1}
    forced = SixtySixGymEnv()
    assert forced.reset(seed=0, options={"learner_seat": 1})[1]["learner"] == 1
    with pytest.raises(ValueError, match="learner_seat"):
        SixtySixGymEnv(learner_seat="left")


def test_callable_and_agent_opponents_get_their_own_information_set():
    seen: list[InformationSet] = []

    def cautious(infoset: InformationSet) -> int:
        seen.append(infoset)
        return infoset.legal_actions[0]

    environment = SixtySixGymEnv(opponent=cautious, learner_seat=0)
    environment.reset(seed=5)
    play_out(environment, random.Random(0))
    assert seen and all(info.player == 1 for info in seen)
    assert all(info.legal_actions == sorted(info.legal_actions) and info.legal_actions for info in seen)

    class Recording(RandomAgent):
        def __init__(self, seed=None):
            super().__init__(seed)
            self.deals, self.seeds = [], []

        def start_deal(self, player, rules):
            self.deals.append((player, rules))

        def seed(self, seed):
            self.seeds.append(seed)
            super().seed(seed)

    agent = Recording()
    environment = SixtySixGymEnv(opponent=agent, learner_seat=1, rules="paderborn")
    environment.reset(seed=2)
    play_out(environment, random.Random(0))
    assert agent.deals == [(0, Rules.preset("paderborn"))] and len(agent.seeds) == 1
    first_seed = agent.seeds[0]
    environment.reset(seed=2)
    assert agent.seeds[-1] == first_seed, "the opponent is re-seeded from the environment's generator"
    with pytest.raises(ValueError, match="opponent"):
        SixtySixGymEnv(opponent=42)


def test_an_agent_class_given_as_opponent_is_refused_asking_for_an_instance():
    """A class is callable, so it passed the check and failed at reset() with a TypeError of its seed method."""
    from agents.rule_based import HeuristicAgent
    from sixtysix_env import ThreePlayerGymEnv, vector_env

    expected = r"got the class HeuristicAgent: pass an instance, e.g. HeuristicAgent\(\)"
    for build in (lambda: SixtySixGymEnv(opponent=HeuristicAgent), lambda: vector_env(2, opponent=HeuristicAgent),
                  lambda: ThreePlayerGymEnv(opponents=HeuristicAgent)):
        with pytest.raises(ValueError, match=expected):
            build().reset(seed=0)


def test_default_opponent_fast_path_chooses_as_act_would():
    """The default random opponent skips building the information set; its choices equal act(infoset)'s."""

    class ThroughInformationSet(UniformRandomOpponent):  # not the exact type: the environment calls act(infoset)
        pass

    fast = SixtySixGymEnv(learner_seat="alternate")
    slow = SixtySixGymEnv(learner_seat="alternate", opponent=ThroughInformationSet())
    for seed in range(8):
        fast.reset(seed=seed)
        slow.reset(seed=seed)
        play_out(fast, random.Random(seed))
        play_out(slow, random.Random(seed))
        assert fast.game.history == slow.game.history


def test_illegal_learner_action_renonce_or_raise():
    """R8/R16: Renonce ends the deal, the opponent scoring 3; or a ValueError naming the action."""
    renonce = SixtySixGymEnv(learner_seat=0)
    renonce.reset(seed=3)
    illegal = next(a for a in range(37) if not renonce.action_masks()[a])
    _obs, reward, terminated, _truncated, info = renonce.step(illegal)
    assert terminated and reward == -3.0 and info["result"].reason == "renonce"
    with pytest.raises(ValueError, match="reset"):
        renonce.step(0)
    strict = SixtySixGymEnv(learner_seat=0, illegal_action="raise")
    strict.reset(seed=3)
    illegal = next(a for a in range(37) if not strict.action_masks()[a])
    history = list(strict.game.history)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(illegal)
    assert strict.game.history == history and strict.game.to_move == 0  # unchanged: the learner may act again
    with pytest.raises(ValueError, match="not an action id"):
        renonce.reset(seed=3)
        renonce.step(40)


def test_illegal_opponent_action_raises():
    environment = SixtySixGymEnv(opponent=lambda infoset: 36, learner_seat=0)  # "pass" is never legal here
    with pytest.raises(ValueError, match=r"opponent .* \(player 1\) made an illegal move: illegal action 'pass'"):
        environment.reset(seed=1)  # the opponent may move first, as forehand
        play_out(environment, random.Random(0))


def test_an_opponent_that_would_declare_as_forehand_cannot_end_the_episode_before_the_learner_acts():
    """R13 allow_false_declaration: a declaration, even a false one, comes only after winning a trick, so an
    opponent that declares whenever it may cannot do so at forehand's first lead: every episode starts with a
    decision of the learner, and an explicit deck deals that very deal."""
    rules = Rules.preset("standard", allow_false_declaration=True)
    first_leads = []

    def declare_when_offered(infoset):
        if not infoset.history and infoset.forehand == infoset.player:
            first_leads.append(parse_action("declare") in infoset.legal_actions)
        return parse_action("declare") if parse_action("declare") in infoset.legal_actions else infoset.legal_actions[0]

    environment = SixtySixGymEnv(rules=rules, opponent=declare_when_offered, learner_seat=0, dealer="random")
    environment.reset(seed=0)
    for _ in range(10):
        environment.reset()
        assert not environment.game.is_over and environment.action_masks().any()
    assert first_leads and not any(first_leads)
    assert environment.deals == 11
    deck = deck_from_hands("9C JC QC KC TC AC".split(), "9D JD QD KD TD AD".split(), "AH")
    environment.reset(seed=0, options={"deck": deck, "dealer": 0})
    assert environment.game.deck == Game.deal(rules, deck=deck, dealer=0).deck and not environment.game.is_over


def test_reset_options_and_bad_input():
    environment = SixtySixGymEnv(learner_seat=1)
    deck = deck_from_hands("9C JC QC KC TC AC".split(), "9D JD QD KD TD AD".split(), "AH")
    environment.reset(seed=0, options={"deck": deck, "dealer": 0, "match_score": (3, 1)})
    assert environment.game.dealer == 0 and environment.learner == 1
    with pytest.raises(ValueError, match="unknown reset option"):
        environment.reset(options={"seats": 1})
    with pytest.raises(ValueError, match="dict_observation"):
        SixtySixGymEnv(dict_observation="yes")
    with pytest.raises(ValueError, match="illegal_action"):
        SixtySixGymEnv(illegal_action="warn")


@pytest.mark.filterwarnings("ignore:.*not in the possible render_modes")  # gymnasium.make's own, expected here
@pytest.mark.parametrize("env_id", ["SixtySix-v0", "SixtySixThree-v0"])
def test_stable_baselines_make_vec_env_builds_the_registered_ids(env_id):
    """stable-baselines3's make_vec_env asks a registered id for render_mode='rgb_array' and retries only on a
    TypeError: these text-rendering envs take it as no rendering, with a warning, as gymnasium.make warns about an
    unlisted mode; a mode that is no tool's default is still refused by name."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    with pytest.warns(UserWarning, match="render_mode='rgb_array' is not offered"):
        vector = make_vec_env(env_id, n_envs=2, seed=0)
    observations = vector.reset()
    assert observations.shape[0] == 2 and all(mask.any() for mask in vector.env_method("action_masks"))
    assert vector.get_attr("render_mode") == [None, None]
    with pytest.raises(ValueError, match="render_mode must be one of \\['ansi', 'human'\\] or None, got 'ansii'"):
        gymnasium.make(env_id, render_mode="ansii")


def test_action_masks_reach_through_a_vector_env():
    vector = gymnasium.vector.SyncVectorEnv([lambda: SixtySixGymEnv(), lambda: SixtySixGymEnv(learner_seat=1)])
    vector.reset(seed=0)
    masks = vector.call("action_masks")
    assert len(masks) == 2 and all(mask.dtype == np.bool_ and mask.any() for mask in masks)
    for mask, environment in zip(masks, vector.envs):
        assert list(np.flatnonzero(mask)) == environment.unwrapped.game.legal_actions()


@pytest.mark.slow
def test_maskable_ppo_learns_a_few_steps_in_vector_envs():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.env_util import make_vec_env

    vector = make_vec_env(SixtySixGymEnv, n_envs=2, seed=0)
    model = sb3_contrib.MaskablePPO("MlpPolicy", vector, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=64)
    observation = vector.reset()
    masks = np.array(vector.env_method("action_masks"))
    actions, _state = model.predict(observation, action_masks=masks)
    assert all(masks[i][action] for i, action in enumerate(actions))


@pytest.mark.parametrize("seed", range(8))
def test_render_ansi_hides_the_opponent_hand(seed):
    """Until the deal is over, no card of the opponent's hand and no face-down talon card is named in the text
    (the learner's own hand and legal actions are)."""
    environment = SixtySixGymEnv(render_mode="ansi", learner_seat=seed % 2)
    environment.reset(seed=seed)
    rng = random.Random(seed)
    checked = 0
    while True:
        game = environment.game
        text = environment.render()
        words = set(re.findall(r"\b[9JQKTA][CDHS]\b", text))
        if game.is_over:
            break
        hidden = game.hands[1 - environment.learner] | mask_of(game.stock[game.stock_pos:])
        named = {CARD_NAMES[card] for card in cards_of(hidden)} & words
        assert not named, f"the text names hidden cards {sorted(named)}:\n{text}"
        assert f"{game.hands[1 - environment.learner].bit_count()} hidden cards" in text
        assert {CARD_NAMES[card] for card in cards_of(game.hands[environment.learner])} <= words
        checked += 1
        legal = game.legal_actions()
        _observation, _reward, terminated, _truncated, _info = environment.step(rng.choice(legal))
        if terminated:
            break
    assert checked >= 3


def test_the_embedded_opponent_and_the_learner_see_the_given_bummerl_score():
    """R17: the score before a deal is public, so the opponent's information set carries the given match_score as
    the AEC env's do (an opponent that plays for the Bummerl, such as ``expert``, read None before); a deal on its
    own, or a score at the target, gives None."""
    told = []

    def opponent(infoset):
        told.append(infoset.match_score)
        return infoset.legal_actions[0]

    env = SixtySixGymEnv(opponent=opponent, learner_seat=1)  # seat 1: forehand is the opponent on some deals
    for seed, given, expected in [(0, (3, 5), (3, 5)), (1, None, None), (2, (7, 2), None), (3, [0, 0], (0, 0))]:
        told.clear()
        env.reset(seed=seed, options={} if given is None else {"match_score": given})
        assert env.information_set().match_score == expected
        while not env.game.is_over:
            env.step(int(np.flatnonzero(env.action_masks())[0]))
        assert told and set(told) == {expected}


def test_gym_seeded_reset_restarts_the_alternating_dealer():
    """R3 with dealer="alternate": the first dealer after a seeded reset is drawn from the seed, so the same seed
    gives the same dealer and deal however many deals came before."""
    environment = SixtySixGymEnv(dealer="alternate", learner_seat=0)
    environment.reset(seed=11)
    first = (environment.game.dealer, list(environment.game.deck))
    for _ in range(3):
        environment.reset(seed=11)
        assert (environment.game.dealer, list(environment.game.deck)) == first


