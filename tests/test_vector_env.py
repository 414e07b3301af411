"""The batched environments (sixtysix_env.vector, core/batch.py) and the core's observation kernel
(core/observation.py): bit-identical to the Python encoder and to SixtySixGymEnv, autoreset, self-play, errors.

The numba kernels compile once per process (and are cached on disk), so these tests share module-level envs
sparingly and keep batches small."""

from __future__ import annotations

import random

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from hypothesis import given, settings
from hypothesis import strategies as st

import sixtysix_env
from sixtysix_env import Game, Rules, SixtySixGymEnv
from sixtysix_env.core import state_from_game
from sixtysix_env.core.layout import OVER, STAGE
from sixtysix_env.core.observation import encode_state, mask_row
from sixtysix_env.observation import OBSERVATION_SIZE, ObservationEncoder, action_mask
from sixtysix_env.vector import SixtySixSelfPlayVectorEnv, SixtySixVectorEnv

PRESETS = ("standard", "paderborn", "scharf")


def first_legal(masks: np.ndarray) -> np.ndarray:
    """Each environment's first legal action (any action where a deal is over and its mask empty)."""
    return np.array([np.flatnonzero(mask)[0] if mask.any() else 0 for mask in masks])


def random_legal_actions(masks: np.ndarray, rng: np.random.Generator, illegal_rate: float = 0.0) -> np.ndarray:
    """One uniformly random legal action per row (any action id where the mask is empty); with ``illegal_rate``
    some rows get an illegal action instead (Renonce tests)."""
    actions = np.zeros(len(masks), dtype=np.int64)
    for index, row in enumerate(masks):
        legal = np.flatnonzero(row)
        illegal = np.flatnonzero(~row.astype(bool))
        if len(legal) and not (illegal_rate and rng.random() < illegal_rate):
            actions[index] = rng.choice(legal)
        else:
            actions[index] = rng.choice(illegal)
    return actions


# ---------------------------------------------------------------------------------------- observation kernel
def check_observation_kernel(preset: str, deals: int) -> int:
    """Every position of ``deals`` random deals played with random actions (R4-R16), with a random match score
    (R17): the kernel's vector equals ObservationEncoder.encode byte for byte for both players, its mask equals
    action_mask. Returns the number of (position, player) pairs checked."""
    rules = Rules.preset(preset)
    rng = random.Random(f"obs-{preset}-{deals}")
    mask = np.zeros(37, dtype=np.int8)
    positions = 0
    for deal in range(deals):
        score = (rng.randrange(0, 10), rng.randrange(0, 10))
        encoder = ObservationEncoder(rules, score)
        game = Game.deal(rules, seed=rng.getrandbits(32), dealer=deal & 1)
        while True:
            state = state_from_game(game)
            for player in (0, 1):
                expected = encoder.encode(game, player)
                vector = encode_state(state, player, score, rules.bummerl_target)
                assert vector.dtype == np.float32 and vector.shape == (OBSERVATION_SIZE,)
                assert vector.tobytes() == expected.tobytes(), (preset, deal, player, np.flatnonzero(vector != expected))
                mask_row(state, player, mask)
                assert np.array_equal(mask, action_mask(game, player))
                positions += 1
            if game.is_over:
                break
            game.apply(rng.choice(game.legal_actions()))
    return positions


@pytest.mark.parametrize("preset", PRESETS)
def test_core_observation_and_mask_are_bit_identical_to_the_python_encoder(preset):
    """350 deals per preset: over 5,000 positions, both players each."""
    assert check_observation_kernel(preset, 350) > 10_000


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_core_observation_is_bit_identical_over_many_deals(preset):
    """10,000 deals per preset: some 300,000 (position, player) pairs each."""
    assert check_observation_kernel(preset, 10_000) > 250_000


def test_encode_state_rejects_a_bad_player():
    state = sixtysix_env.core.new_state(Rules(), seed=1)
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        encode_state(state, 2)


# ---------------------------------------------------------------------------------------- identity with gym
class ReplayOpponent:
    """Plays the actions queued from the vector env's opponent log (and checks they run out exactly)."""

    def __init__(self):
        self.queue: list[int] = []

    def act(self, infoset):
        assert self.queue, "SixtySixGymEnv asks for an opponent move the vector env's opponent did not make"
        return self.queue.pop(0)


def _gym_reset(gym_env, replay, vector, index):
    deck_size = vector.rules.deck
    replay.queue = list(vector.opponent_actions[index])
    observation, info = gym_env.reset(options={
        "deck": [int(card) for card in vector.deal_cards[index, :deck_size]],
        "dealer": int(vector.dealers[index]), "learner_seat": int(vector.learner_seats[index])})
    assert not replay.queue
    return observation, info


def _assert_same(vector_observation, vector_mask, observation, info, where):
    assert vector_observation.tobytes() == observation.tobytes(), where
    assert np.array_equal(vector_mask, info["action_mask"]), where


def _replay_in_gym(vector: SixtySixVectorEnv, steps: int, seed: int, illegal_rate: float) -> int:
    """Drive ``vector`` with random (sometimes illegal) actions and replay every environment in its own
    SixtySixGymEnv; returns the number of deals that ended."""
    rng = np.random.default_rng(seed)
    gyms = [(SixtySixGymEnv(rules=vector.rules, opponent=(replay := ReplayOpponent())), replay)
            for _ in range(vector.num_envs)]
    observations, infos = vector.reset(seed=seed)
    for index, (gym_env, replay) in enumerate(gyms):
        observation, info = _gym_reset(gym_env, replay, vector, index)
        _assert_same(observations[index], infos["action_mask"][index], observation, info, ("reset", index))
        assert infos["learner"][index] == info["learner"]
    assert vector.autoreset_mode == AutoresetMode.NEXT_STEP  # the opponent log then belongs to one deal
    ended = 0
    dealing = np.zeros(vector.num_envs, dtype=bool)
    for step in range(steps):
        actions = random_legal_actions(infos["action_mask"], rng, illegal_rate)
        observations, rewards, terminations, truncations, infos = vector.step(actions)
        assert not truncations.any()
        for index, (gym_env, replay) in enumerate(gyms):
            where = (step, index)
            if dealing[index]:  # next-step autoreset: this step dealt a new deal
                observation, info = _gym_reset(gym_env, replay, vector, index)
                assert rewards[index] == 0.0 and not terminations[index]
                _assert_same(observations[index], infos["action_mask"][index], observation, info, where)
                continue
            replay.queue = list(vector.opponent_actions[index])
            observation, reward, terminated, truncated, info = gym_env.step(int(actions[index]))
            assert not replay.queue, where
            assert (reward, terminated, truncated) == (rewards[index], terminations[index], False), where
            _assert_same(observations[index], infos["action_mask"][index], observation, info, where)
            ended += terminated
        dealing = terminations.copy()
    return ended


@pytest.mark.parametrize("preset", PRESETS)
def test_vector_env_equals_sixtysix_gym_env_deal_by_deal(preset):
    """Random opponent in the core, next-step autoreset, 3% illegal learner actions (Renonce, R8/R16): every
    observation, mask, reward and termination equals SixtySixGymEnv's replaying the same deals and opponent
    moves."""
    vector = sixtysix_env.vector_env(6, rules=preset)
    ended = _replay_in_gym(vector, steps=160, seed=11, illegal_rate=0.03)
    assert ended > 30


class HighestAction:
    """A deterministic Python opponent: the highest legal action id."""

    def act(self, infoset):
        return max(infoset.legal_actions)


def test_vector_env_with_a_python_opponent_equals_sixtysix_gym_env():
    """An agent object (act(infoset)) as opponent: the vector env builds information sets from mirror games;
    replayed in SixtySixGymEnv it gives the same observations, masks and rewards."""
    vector = sixtysix_env.vector_env(4, rules="paderborn", opponent=HighestAction(), learner_seat="random")
    assert _replay_in_gym(vector, steps=120, seed=5, illegal_rate=0.02) > 10


@pytest.mark.parametrize("learner_seat", [0, "random"])
@pytest.mark.parametrize("opponent", [None, HighestAction()], ids=["core-random", "python-agent"])
def test_same_step_autoreset_gives_the_final_observation_in_infos(opponent, learner_seat):
    """SAME_STEP: a terminal step returns the new deal's observation, the ended deal's in infos['final_obs'] and its
    infos in infos['final_info'] (equal to what the next-step env shows at the same end: the ended deal's learner
    seat, which the new deal's infos no longer show, and no legal action), with reward and termination."""
    seed = 3
    next_env = sixtysix_env.vector_env(8, autoreset_mode=AutoresetMode.NEXT_STEP, learner_seat=learner_seat,
                                       opponent=opponent)
    same_env = sixtysix_env.vector_env(8, autoreset_mode="SameStep", learner_seat=learner_seat, opponent=opponent)
    assert same_env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    rng = np.random.default_rng(0)
    next_obs, next_infos = next_env.reset(seed=seed)
    same_obs, same_infos = same_env.reset(seed=seed)
    finals = 0
    for _ in range(12):  # within the first deal of every environment (deals last at least 5 learner steps)
        actions = random_legal_actions(next_infos["action_mask"], rng)
        next_obs, next_rewards, next_terms, _, next_infos = next_env.step(actions)
        same_obs, same_rewards, same_terms, _, same_infos = same_env.step(actions)
        assert np.array_equal(next_rewards, same_rewards) and np.array_equal(next_terms, same_terms)
        if next_terms.any():
            assert np.array_equal(same_infos["_final_obs"], next_terms)
            assert np.array_equal(same_infos["final_obs"][next_terms], next_obs[next_terms])
            assert same_infos["action_mask"][next_terms].any(axis=1).all()  # the new deals' masks
            assert not next_infos["action_mask"][next_terms].any()  # the ended deals' masks
            final_info = same_infos["final_info"]
            assert np.array_equal(same_infos["_final_info"], next_terms)
            assert np.array_equal(final_info["_learner"], next_terms)
            assert np.array_equal(final_info["learner"][next_terms], next_infos["learner"][next_terms])
            assert not final_info["action_mask"][next_terms].any()
            finals += int(next_terms.sum())
            break
        assert np.array_equal(next_obs, same_obs)
    assert finals > 0


@pytest.mark.parametrize("illegal_action", ["renonce", "raise"])
def test_next_step_autoreset_deals_on_the_step_after_the_end_and_ignores_its_action(illegal_action):
    envs = sixtysix_env.vector_env(16, learner_seat="alternate", illegal_action=illegal_action)
    rng = np.random.default_rng(1)
    observations, infos = envs.reset(seed=2)
    deals = envs.deals
    resets_seen = 0
    terminated_before = np.zeros(16, dtype=bool)
    for _ in range(60):
        actions = random_legal_actions(infos["action_mask"], rng)
        actions[terminated_before] = 99  # ignored: those environments deal instead
        observations, rewards, terminations, _, infos = envs.step(actions)
        assert (rewards[terminated_before] == 0).all() and not terminations[terminated_before].any()
        assert infos["action_mask"][terminated_before].any(axis=1).all()
        resets_seen += int(terminated_before.sum())
        assert not infos["action_mask"][terminations].any()  # final observation: nothing to do
        terminated_before = terminations
    assert envs.deals == deals + resets_seen and resets_seen > 10


def test_disabled_autoreset_needs_a_masked_reset():
    envs = sixtysix_env.vector_env(4, autoreset_mode="Disabled")
    rng = np.random.default_rng(4)
    _observations, infos = envs.reset(seed=0)
    while True:
        _observations, _rewards, terminations, _, infos = envs.step(random_legal_actions(infos["action_mask"], rng))
        if terminations.any():
            break
    with pytest.raises(ValueError, match="is over: reset it"):
        envs.step(random_legal_actions(infos["action_mask"], rng))
    before = envs.core_states()
    _observations, infos = envs.reset(options={"reset_mask": terminations})
    after = envs.core_states()
    assert np.array_equal(before[~terminations], after[~terminations])
    assert (after[terminations, STAGE] != OVER).all()
    assert infos["action_mask"].any(axis=1).all()


def test_seeding_reproduces_and_each_environment_depends_only_on_its_seed_and_index():
    first = sixtysix_env.vector_env(3)
    second = sixtysix_env.vector_env(5)
    observations_3, _ = first.reset(seed=9)
    observations_5, _ = second.reset(seed=9)
    assert np.array_equal(observations_3, observations_5[:3])
    assert np.array_equal(first.deal_cards, second.deal_cards[:3])
    again, _ = first.reset(seed=9)
    assert np.array_equal(again, observations_3)
    other, _ = first.reset(seed=10)
    assert not np.array_equal(other, observations_3)


def test_the_deals_do_not_depend_on_how_the_learner_plays():
    """Two policies reset with the same seed meet the same deals (R4 decks, dealers, seats) in every environment, as
    in SixtySixGymEnv: the core's random opponent draws from its own generator, so the number of its moves, which
    the learner's play decides, does not shift the deals that follow."""
    sequences = []
    for pick in (0, -1):  # always the first legal action, or always the last
        envs = sixtysix_env.vector_env(4, learner_seat="random", dealer="random", autoreset_mode="SameStep")
        _observations, infos = envs.reset(seed=0)
        deals = [[(tuple(cards), dealer, seat)] for cards, dealer, seat
                 in zip(envs.deal_cards, envs.dealers, envs.learner_seats)]
        while min(len(per_env) for per_env in deals) < 6:
            actions = np.array([np.flatnonzero(mask)[pick] for mask in infos["action_mask"]])
            _observations, _rewards, terminations, _, infos = envs.step(actions)
            for index in np.flatnonzero(terminations):
                deals[index].append((tuple(envs.deal_cards[index]), envs.dealers[index], envs.learner_seats[index]))
        sequences.append([per_env[:6] for per_env in deals])
    assert sequences[0] == sequences[1]


def test_seat_schedules_alternate_or_stay_fixed_per_environment():
    """As SixtySixGymEnv's schedules: 'alternate' draws the first seat after a seeded reset, then alternates deal
    by deal (R3 for the dealer); a fixed seat stays."""
    envs = sixtysix_env.vector_env(8, learner_seat="alternate", dealer=1, autoreset_mode="SameStep")
    rng = np.random.default_rng(2)
    _observations, infos = envs.reset(seed=4)
    seats = [envs.learner_seats]
    assert set(seats[0]) == {0, 1}  # drawn per environment
    deals_seen = np.zeros(8, dtype=int)
    for _ in range(80):
        _observations, _rewards, terminations, _, infos = envs.step(random_legal_actions(infos["action_mask"], rng))
        assert (envs.dealers == 1).all()
        now = envs.learner_seats
        assert np.array_equal(now[terminations], 1 - seats[-1][terminations])
        assert np.array_equal(now[~terminations], seats[-1][~terminations])
        seats.append(now)
        deals_seen += terminations
    assert deals_seen.min() >= 2


def test_match_score_option_appears_in_the_observations():
    """R17: the game points of the Bummerl shown as in ObservationEncoder with match_score."""
    envs = sixtysix_env.vector_env(2, learner_seat=0)
    observations, _ = envs.reset(seed=1, options={"match_score": [[3, 5], [7, 0]]})
    for index, score in enumerate([(3, 5), (7, 0)]):
        game = Game.deal(envs.rules, deck=[int(c) for c in envs.deal_cards[index]], dealer=int(envs.dealers[index]))
        for action in envs.opponent_actions[index]:
            game.apply(action)
        assert observations[index].tobytes() == ObservationEncoder(envs.rules, score).encode(game, 0).tobytes()



def test_a_python_opponent_is_told_the_bummerl_score_of_its_environment():
    """R17: a Python opponent's information set carries its environment's given score, as the AEC env's do (it
    read None); a score at the Bummerl's target is only clipped in the observation, so it carries None."""
    told = {}

    def opponent(infoset):
        told.setdefault(infoset.match_score, 0)
        told[infoset.match_score] += 1
        return infoset.legal_actions[0]

    envs = sixtysix_env.vector_env(2, opponent=opponent, learner_seat=1)
    _, infos = envs.reset(seed=3, options={"match_score": [[3, 5], [7, 0]]})
    for _ in range(40):
        _, _, _, _, infos = envs.step(first_legal(infos["action_mask"]))
    assert set(told) == {(3, 5), None} and told[(3, 5)] > 1

# ---------------------------------------------------------------------------------------- self-play
@pytest.mark.parametrize("preset", PRESETS)
def test_self_play_rows_are_the_mover_view_and_rewards_are_zero_sum(preset):
    """Both seats played by the caller: each row is the seat to move's observation of a mirror Game driven by
    the same actions (bit-identical), the mask is never empty before the end (R5-R16), the rewards are zero
    except at the end and zero-sum (R16)."""
    rules = Rules.preset(preset)
    envs = sixtysix_env.vector_env(6, rules=preset, self_play=True)
    assert isinstance(envs, SixtySixSelfPlayVectorEnv)
    rng = np.random.default_rng(7)
    encoder = ObservationEncoder(rules)
    observations, infos = envs.reset(seed=1)
    games = [None] * envs.num_envs
    ended = 0
    for step in range(150):
        for index in range(envs.num_envs):
            if games[index] is None:
                games[index] = Game.deal(rules, deck=[int(c) for c in envs.deal_cards[index, :rules.deck]],
                                         dealer=int(envs.dealers[index]))
            game, seat = games[index], int(infos["seat"][index])
            assert observations[index].tobytes() == encoder.encode(game, seat).tobytes(), (step, index)
            assert np.array_equal(infos["action_mask"][index], action_mask(game, seat, dtype=np.bool_))
            if not game.is_over:
                assert seat == game.to_move and infos["action_mask"][index].any()
        actions = random_legal_actions(infos["action_mask"], rng)
        observations, rewards, terminations, _, infos = envs.step(actions)
        assert rewards.shape == (envs.num_envs, 2) and (rewards.sum(axis=1) == 0).all()
        for index in range(envs.num_envs):
            game = games[index]
            if game.is_over:  # next-step autoreset dealt
                assert not terminations[index] and not rewards[index].any()
                games[index] = None
                continue
            game.apply(int(actions[index]))
            assert terminations[index] == game.is_over
            if game.is_over:
                ended += 1
                assert tuple(rewards[index]) == tuple(float(value) for value in game.result.returns())
            else:
                assert not rewards[index].any()
    assert ended > 20


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**63), preset=st.sampled_from(PRESETS), self_play=st.booleans())
def test_masks_are_never_empty_before_the_end_and_cards_are_conserved(seed, preset, self_play):
    """Property over seeds: every row not at a deal's end has a legal action (R5-R16), and every state holds
    each card of the deck exactly once (R1, R2, R4; core.check_state)."""
    from sixtysix_env.core import check_state

    envs = sixtysix_env.vector_env(4, rules=preset, self_play=self_play)
    rng = np.random.default_rng(seed % 2**32)
    _observations, infos = envs.reset(seed=seed)
    terminations = np.zeros(4, dtype=bool)
    for _ in range(30):
        assert (infos["action_mask"].any(axis=1) | terminations).all()
        for state in envs.core_states():
            check_state(state)
        _observations, _rewards, terminations, _, infos = envs.step(random_legal_actions(infos["action_mask"], rng))


# ---------------------------------------------------------------------------------------- contract and errors
def test_spaces_metadata_and_a_gymnasium_vector_wrapper():
    envs = sixtysix_env.vector_env(4, rules="scharf")
    assert isinstance(envs, gymnasium.vector.VectorEnv)
    assert "num_envs=4 rules=scharf autoreset_mode=NextStep" in repr(envs)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs.single_observation_space.shape == (OBSERVATION_SIZE,)
    assert envs.single_action_space == gymnasium.spaces.Discrete(37)
    assert envs.observation_space.shape == (4, OBSERVATION_SIZE) and envs.action_space.shape == (4,)
    wrapped = gymnasium.wrappers.vector.RecordEpisodeStatistics(envs)
    observations, infos = wrapped.reset(seed=0)
    assert envs.observation_space.contains(observations)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(40):
        observations, rewards, terminations, truncations, infos = wrapped.step(
            random_legal_actions(infos["action_mask"], rng))
        assert envs.observation_space.contains(observations)
        if "episode" in infos:
            episodes += int(infos["_episode"].sum())
            assert np.array_equal(infos["episode"]["r"][infos["_episode"]], rewards[infos["_episode"]])
    assert episodes > 0
    assert np.array_equal(envs.action_masks(), infos["action_mask"])
    assert infos["_action_mask"].all() and infos["_learner"].all()
    listed = gymnasium.wrappers.vector.DictInfoToList(envs)  # Gymnasium's per-environment info dicts
    _observations, info_list = listed.reset(seed=1)
    assert len(info_list) == 4 and set(info_list[0]) == {"action_mask", "learner"}
    assert info_list[2]["learner"] == envs.learner_seats[2]


def test_copy_false_hands_out_the_buffers():
    envs = sixtysix_env.vector_env(2, copy=False)
    first, _ = envs.reset(seed=0)
    second, _ = envs.reset(seed=1)
    assert first is second


@pytest.mark.parametrize("arguments, message", [
    (dict(num_envs=0), "num_envs must be a positive integer"),
    (dict(num_envs=2.5), "num_envs must be a positive integer"),
    (dict(num_envs=2, rules={"auto_declare": False}), "auto_declare"),
    (dict(num_envs=2, rules="nonsense"), "nonsense"),
    (dict(num_envs=2, rules="three"), r"two-player game only; three players \(R21\) are played by .*ThreePlayerGymEnv"),
    (dict(num_envs=2, opponent="greedy"), "opponent must be None, 'random', an agent"),
    (dict(num_envs=2, opponent=[None]), "one per environment: 2, got 1"),
    (dict(num_envs=2, opponent=42), "opponent must be a callable"),
    (dict(num_envs=2, learner_seat=2), "learner_seat must be"),
    (dict(num_envs=2, dealer="left"), "dealer must be"),
    (dict(num_envs=2, autoreset_mode="sometimes"), "autoreset_mode must be"),
    (dict(num_envs=2, illegal_action="ignore"), "illegal_action must be"),
    (dict(num_envs=2, copy="yes"), "copy must be true or false"),
    (dict(num_envs=2, self_play="yes"), "self_play must be true or false"),
    (dict(num_envs=2, self_play=True, opponent="random"), "give no opponent"),
    (dict(num_envs=2, self_play=True, learner_seat=0), "give no learner_seat"),
])
def test_bad_construction_arguments_raise_naming_the_problem(arguments, message):
    with pytest.raises(ValueError, match=message):
        sixtysix_env.vector_env(**arguments)


def test_bad_step_and_reset_input_raise_naming_the_problem():
    envs = sixtysix_env.vector_env(3, illegal_action="raise")
    with pytest.raises(ValueError, match="call reset"):
        envs.step(np.zeros(3, dtype=np.int64))
    _observations, infos = envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        envs.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="integer action ids"):
        envs.step(np.zeros(3, dtype=np.float32))
    with pytest.raises(ValueError, match="malformed action 37"):
        envs.step(np.array([37, 0, 0]))
    illegal = np.array([int(np.flatnonzero(~row)[0]) for row in infos["action_mask"]])
    before = envs.core_states()
    with pytest.raises(ValueError, match="environment 0: illegal action .* legal: "):
        envs.step(illegal)
    assert np.array_equal(before, envs.core_states())  # nothing was played
    with pytest.raises(ValueError, match="unknown reset option 'deck'"):
        envs.reset(options={"deck": [0]})
    with pytest.raises(ValueError, match="match_score"):
        envs.reset(options={"match_score": (1, -1)})
    with pytest.raises(ValueError, match="match_score"):
        envs.reset(options={"match_score": [[1, 2]] * 2})
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": [True, False]})
    with pytest.raises(ValueError, match="seed must be"):
        envs.reset(seed=-1)
    states = envs.core_states()
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(seed=5, options={"reset_mask": np.ones(2, dtype=bool)})
    assert np.array_equal(states, envs.core_states())  # a refused reset changes nothing


def test_a_python_opponent_making_an_illegal_move_is_named():
    envs = sixtysix_env.vector_env(2, opponent=lambda infoset: 36, learner_seat=0, dealer=0)
    with pytest.raises(ValueError, match="opponent .* of environment 0 made an illegal move"):
        envs.reset(seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_vector_env_equals_sixtysix_gym_env_over_many_deals(preset):
    vector = sixtysix_env.vector_env(32, rules=preset, dealer="alternate", learner_seat="random")
    assert _replay_in_gym(vector, steps=1500, seed=100, illegal_rate=0.01) > 3000


# ---------------------------------------------------------------------------------------- the AEC env's core path
@pytest.mark.parametrize("preset", PRESETS)
def test_aec_env_observes_through_the_core_exactly_as_the_python_encoder(preset):
    """The PettingZoo env encodes in the core (CoreObserver): at every step of random deals, with a match score
    (R17), Renonces (R8/R16) and actions applied to env.game directly, both agents' observations and masks equal
    ObservationEncoder.encode and action_mask of the env's game."""
    from sixtysix_env.env import raw_env

    environment = raw_env(rules=preset, illegal_action="renonce")
    assert environment.observe_with_core
    rng = random.Random(f"aec-{preset}")
    checked = 0
    for episode in range(40):
        score = (rng.randrange(7), rng.randrange(7))
        environment.reset(seed=episode, options={"match_score": score})
        encoder = ObservationEncoder(environment.rules, score)
        game = environment.game
        while True:
            for player, agent in enumerate(("player_0", "player_1")):
                seen = environment.observe(agent)
                assert seen["observation"].tobytes() == encoder.encode(game, player).tobytes()
                assert np.array_equal(seen["action_mask"], action_mask(game, player))
                checked += 1
            if game.is_over:
                break
            legal = game.legal_actions()
            roll = rng.random()
            if roll < 0.01:
                environment.step(next(a for a in range(37) if a not in legal))  # a Renonce
            elif roll < 0.1:
                game.apply(rng.choice(legal))  # behind the env's back: the mirror catches up
                environment.agent_selection = ("player_0", "player_1")[game.to_move] if not game.is_over \
                    else environment.agent_selection
            else:
                environment.step(rng.choice(legal))
    assert checked > 1000


def test_aec_env_falls_back_to_the_python_encoder_for_rules_the_core_lacks():
    from sixtysix_env.env import raw_env

    environment = raw_env(rules={"auto_declare": False})
    assert not environment.observe_with_core
    environment.reset(seed=3)
    seen = environment.observe(environment.agent_selection)
    assert seen["observation"].tobytes() == ObservationEncoder(environment.rules).encode(
        environment.game, environment.game.to_move).tobytes()
    # The mask there too: the mover's legal actions, all zeros for the agent not to move.
    from sixtysix_env import action_mask

    mover = environment.game.to_move
    np.testing.assert_array_equal(seen["action_mask"], action_mask(environment.game, mover))
    assert seen["action_mask"].any() and not environment.observe(f"player_{1 - mover}")["action_mask"].any()


def test_reset_takes_a_numpy_seed_and_names_options_that_are_not_a_dict():
    """A numpy integer seed is a seed (Gymnasium itself takes Python integers only); options must be a dict."""
    import sixtysix_env

    environment = sixtysix_env.vector_env(2)
    first, _ = environment.reset(seed=np.int64(3))
    again, _ = sixtysix_env.vector_env(2).reset(seed=3)
    np.testing.assert_array_equal(first, again)
    for options in ([1], "abc"):
        with pytest.raises(ValueError, match="options must be a dict"):
            environment.reset(options=options)


def test_an_unsigned_action_beyond_int64_is_named_as_given():
    import sixtysix_env

    environment = sixtysix_env.vector_env(2)
    environment.reset(seed=1)
    actions = np.array([2**63, 0], dtype=np.uint64)
    with pytest.raises(ValueError, match=f"environment 0: malformed action {2**63}: expected an action id"):
        environment.step(actions)


def test_info_presence_flags_are_writable_so_gymnasium_can_merge_infos():
    """Gymnasium's vector wrappers merge infos with VectorEnv._add_info, which writes into the ``_k`` arrays: with
    copy=True (the default) every flag array is the env's to give away."""
    envs = sixtysix_env.vector_env(3)
    _observations, infos = envs.reset(seed=1)
    assert infos["_learner"] is not infos["_action_mask"] and infos["_learner"].flags.writeable
    merged = envs._add_info(infos, {"learner": 1}, 2)
    assert merged["_learner"].all()
    _observations, _rewards, _terminations, _truncations, infos = envs.step(first_legal(infos["action_mask"]))
    assert infos["_learner"].flags.writeable


def test_vector_reset_names_the_option_of_a_negative_match_score():
    """docs/vector_env.md reset: ``options['match_score']`` must hold non-negative game points (R17); a negative
    one is refused with an error naming the option, as every bad reset input is."""
    envs = sixtysix_env.vector_env(2)
    envs.reset(seed=0)
    for bad in ((-1, 0), [[0, 1], [2, -3]]):
        with pytest.raises(ValueError, match=r"options\['match_score'\]"):
            envs.reset(options={"match_score": bad})


def test_vector_python_opponents_start_each_deal_in_their_own_seat():
    """A Python opponent's optional start_deal(player, rules) is told the opponent's seat, 1 - the learner's, as in
    SixtySixGymEnv, for every environment and every deal."""
    class Recorder:
        def __init__(self):
            self.seats = []

        def start_deal(self, player, rules):
            self.seats.append(player)

        def act(self, infoset):
            assert infoset.player == self.seats[-1]
            return infoset.legal_actions[0]

    opponents = [Recorder(), Recorder()]
    envs = sixtysix_env.vector_env(2, opponent=opponents, learner_seat="alternate")
    _, infos = envs.reset(seed=5)
    seen = [envs.learner_seats.tolist()]
    for _ in range(60):
        _, _, _, _, infos = envs.step(first_legal(infos["action_mask"]))
        seen.append(envs.learner_seats.tolist())
    for index, opponent in enumerate(opponents):
        assert len(opponent.seats) >= 2
        learners = [row[index] for row in seen]
        assert set(opponent.seats) == {0, 1} and all(1 - seat in learners for seat in opponent.seats)


def test_vector_deals_count_a_next_step_deal_on_the_step_that_deals_it():
    """``deals`` counts deals dealt since construction: with NEXT_STEP autoreset a finished deal is replaced on the
    following step, so the count grows on that step, by the environments that were over before it."""
    envs = sixtysix_env.vector_env(4, learner_seat=0)
    _, infos = envs.reset(seed=8)
    assert envs.deals == 4
    expected, over = 4, np.zeros(4, dtype=bool)
    for _ in range(40):
        _, _, terminations, _, infos = envs.step(first_legal(infos["action_mask"]))
        expected += int(over.sum())
        assert envs.deals == expected
        over = terminations
    assert expected > 4


def test_vector_action_masks_is_a_copy_the_caller_may_change():
    """action_masks() returns the masks for the caller (sb3-contrib): changing the returned array leaves the
    environment's masks, and its "raise" check of the next step, as they were."""
    envs = sixtysix_env.vector_env(3, illegal_action="raise")
    envs.reset(seed=1)
    masks = envs.action_masks()
    legal = first_legal(masks)
    masks[:] = False
    assert envs.action_masks().any(axis=1).all()
    envs.step(legal)
