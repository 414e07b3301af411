"""Details of train/selfplay.py that the end-to-end runs of tests/test_train.py do not pin down: the pool's draw
weights and manifest re-reads, the duplicate margins recomputed by hand from games played with the engine, the
mask cache, the random states of a checkpoint, the learning-rate schedule, the model's hyperparameters, the
callback's schedule of snapshots, evaluations and checkpoints, and the run directory's bookkeeping."""

from __future__ import annotations

import json
import math
import os
import pickle
import random
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

for _module in ("yaml", "torch", "stable_baselines3", "sb3_contrib"):
    pytest.importorskip(_module, reason="training needs the 'train' extra")

from agents.ppo import ActorNetwork, model_metadata, spaces_for  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from eval.deals import Deal, derive_seed, generate_deals  # noqa: E402
from eval.play import play_deal  # noqa: E402
from play_helpers import ClosesAtOnce  # noqa: E402
from reference_stats import t_interval  # noqa: E402
from sixtysix_env import Game, InformationSet, Rules  # noqa: E402
from train import selfplay  # noqa: E402
from train.config import load_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "ppo_smoke.yaml"
STANDARD = Rules.preset("standard")
# R4 order: forehand 1-3, dealer 4-6, forehand 7-9, dealer 10-12, trump card 13, talon 14-24
DECK = [
    "QH", "KH", "AH",  # forehand 1-3
    "JS", "QS", "KS",  # dealer 4-6
    "TC", "AC", "9D",  # forehand 7-9
    "JD", "QD", "KD",  # dealer 10-12
    "9H",  # trump card 13
    "9S", "TS", "AS", "9C", "JC", "QC", "KC", "TD", "AD", "JH", "TH",  # talon 14-24
]


def _snapshot(path: Path, rules: Rules = STANDARD, seed: int = 0, hidden: int = 8) -> Path:
    """A snapshot file of a small random actor for ``rules`` (the pool's .npz format)."""
    observation_size, num_actions = spaces_for(rules)
    rng = np.random.default_rng(seed)
    layers = [(rng.normal(size=(hidden, observation_size)), rng.normal(size=hidden)),
              (rng.normal(size=(num_actions, hidden)), rng.normal(size=num_actions))]
    ActorNetwork(layers, "tanh").save_npz(path, model_metadata(rules, "tanh", [hidden]))
    return path


def _pool(pool_dir: Path, baselines=None, snapshot_weight=1.0, share=0.5, seed=3, rules=STANDARD):
    return selfplay.PoolOpponent(pool_dir, {"greedy": 1.0} if baselines is None else baselines, snapshot_weight,
                                 share, snapshot_deterministic=False, rules=rules, seed=seed)


def _manifest(pool_dir: Path, files) -> None:
    selfplay.write_pool_manifest(pool_dir, [{"file": name, "step": index} for index, name in enumerate(files)])


# ------------------------------------------------------------------------------------------ the opponent pool
def test_pool_weights_share_the_snapshot_weight_between_all_snapshots_and_the_newest(tmp_path):
    pool = _pool(tmp_path, {"random": 2.0, "greedy": 0.0, "heuristic": 1.0}, snapshot_weight=0.6, share=0.25)
    assert pool.weights() == (["random", "heuristic"], [2.0, 1.0])  # before any read; a zero weight is no member
    assert (pool.current, pool.current_label, pool.current_member) == (None, "", "")
    files = ["snap_0000000001.npz", "snap_0000000002.npz", "snap_0000000003.npz"]
    _manifest(tmp_path, files)
    pool.refresh()
    members, weights = pool.weights()
    spread = 0.6 * (1 - 0.25) / 3
    assert members == ["random", "heuristic", *files]
    assert weights == pytest.approx([2.0, 1.0, spread, spread, spread + 0.6 * 0.25])
    assert sum(weights[2:]) == pytest.approx(0.6)  # the snapshots together weigh snapshot_weight
    one = _pool(tmp_path, {"random": 1.0}, snapshot_weight=0.5, share=0.0)
    one.refresh()
    assert one.weights()[1] == pytest.approx([1.0, 0.5 / 3, 0.5 / 3, 0.5 / 3])
    none = _pool(tmp_path, {"random": 1.0}, snapshot_weight=0.0)
    none.refresh()
    assert none.weights() == (["random"], [1.0])  # no snapshot weight: snapshots are never drawn
    (tmp_path / "pool.json").unlink()
    pool.refresh()
    assert pool.snapshot_files == [] and pool.weights() == (["random", "heuristic"], [2.0, 1.0])


def test_pool_rereads_its_manifest_only_when_the_file_changes_and_forgets_dropped_snapshots(tmp_path):
    first, second = (_snapshot(tmp_path / f"snap_000000000{i}.npz", seed=i).name for i in (1, 2))
    pool = _pool(tmp_path, {"random": 1e-12}, snapshot_weight=1.0, share=1.0)
    _manifest(tmp_path, [first])
    pool.start_deal(0, STANDARD)  # start_deal reads the new manifest itself
    assert (pool.current_label, pool.current_member) == ("snapshot", first)
    assert set(pool._snapshot_agents) == {first}
    manifest = tmp_path / "pool.json"
    stat = manifest.stat()
    manifest.write_text(manifest.read_text().replace(first, second))  # same size; mtime set back below
    os.utime(manifest, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    pool.refresh()
    assert pool.snapshot_files == [first]  # an unchanged (mtime, size) is not read again
    _manifest(tmp_path, [second])
    pool.start_deal(1, STANDARD)
    assert (pool.current_label, pool.current_member) == ("snapshot", second)
    assert set(pool._snapshot_agents) == {second}  # the dropped snapshot's agent is forgotten


def test_pool_draws_members_by_weight_and_replays_with_its_seed(tmp_path):
    files = [_snapshot(tmp_path / "snap_0000000001.npz").name]
    _manifest(tmp_path, files)
    counts = {"random": 0, "greedy": 0, "snapshot": 0}
    pool = _pool(tmp_path, {"random": 1.0, "greedy": 3.0, "heuristic": 0.0}, snapshot_weight=4.0, seed=11)
    labels = []
    for _ in range(800):
        pool.start_deal(0, STANDARD)
        counts[pool.current_label] += 1
        labels.append(pool.current_member)
    assert counts["random"] / 800 == pytest.approx(1 / 8, abs=0.04)
    assert counts["greedy"] / 800 == pytest.approx(3 / 8, abs=0.05)
    assert counts["snapshot"] / 800 == pytest.approx(4 / 8, abs=0.05)
    again = _pool(tmp_path, {"random": 1.0, "greedy": 3.0, "heuristic": 0.0}, snapshot_weight=4.0, seed=11)
    replay = []
    for _ in range(800):
        again.start_deal(0, STANDARD)
        replay.append(again.current_member)
    assert replay == labels


def test_pool_plays_a_deal_it_was_not_told_of_and_its_snapshot_checks_the_deals_rules(tmp_path):
    pool = _pool(tmp_path, {"greedy": 1.0})
    game = Game.deal(STANDARD, deck=DECK, dealer=0)
    action = pool.act(InformationSet(game, game.current_player))  # no start_deal: it draws one itself
    assert action in game.legal_actions() and pool.current_label == "greedy"
    _manifest(tmp_path, [_snapshot(tmp_path / "snap_0000000001.npz").name])
    only_snapshots = _pool(tmp_path, {"greedy": 1e-12}, snapshot_weight=1.0)
    with pytest.raises(ValueError, match="snapshot snap_0000000001.npz was trained for rules 'standard' and cannot "
                       "play 'paderborn'"):
        only_snapshots.start_deal(1, Rules.preset("paderborn"))  # the snapshot is told of the deal, and refuses it


def test_snapshot_opponents_play_their_policy_deterministically_when_asked(tmp_path):
    name = _snapshot(tmp_path / "snap_0000000001.npz", seed=5).name
    _manifest(tmp_path, [name])
    network, _ = ActorNetwork.load_npz(tmp_path / name)
    for deterministic, phase2 in ((True, "policy"), (False, "solver")):
        pool = selfplay.PoolOpponent(tmp_path, {"greedy": 1e-12}, 1.0, 0.5, deterministic, STANDARD, seed=1,
                                     phase2=phase2)
        snapshot = pool._snapshot_agent(name)
        assert (snapshot.deterministic, snapshot.phase2) == (deterministic, phase2)  # as the learner plays
    from agents.ppo import PolicyAgent

    pool = selfplay.PoolOpponent(tmp_path, {"greedy": 1e-12}, 1.0, 0.5, True, STANDARD, seed=1)
    reference = PolicyAgent(network, STANDARD, deterministic=True)
    game = Game.deal(STANDARD, deck=DECK, dealer=0)
    pool.start_deal(game.current_player, STANDARD)
    infoset = InformationSet(game, game.current_player)
    assert pool.act(infoset) == reference.act(infoset)


# ------------------------------------------------------------------------------------------ duplicate margins
def _wilson(successes, trials):
    z = 1.959963984540054
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def _assert_figures(figures, deal_values, wins, games):
    """A margin's figures against the t interval of the deals' values and the Wilson interval of the wins."""
    mean, low, high = t_interval(deal_values)
    assert figures["pairs"] == len(deal_values)
    assert figures["margin"] == pytest.approx(mean)
    assert (figures["margin_ci_low"], figures["margin_ci_high"]) == pytest.approx((low, high))
    assert figures["win_rate"] == pytest.approx(wins / games)
    assert (figures["win_rate_ci_low"], figures["win_rate_ci_high"]) == pytest.approx(_wilson(wins, games))


def test_duplicate_margin_is_the_mean_pair_value_of_deals_played_in_both_seats():
    deals = [Deal(dealer=0, deck=tuple(Game.deal(STANDARD, deck=DECK, dealer=0).deck)),
             *generate_deals(31, 4, STANDARD)]
    learner, opponent = make_agent("heuristic", seed=0), make_agent("random", seed=0)
    figures = selfplay.duplicate_margin(learner, opponent, STANDARD, deals, seed=9)
    pairs, wins = [], 0.0
    for index, deal in enumerate(deals):
        returns = []
        for learner_seat in (0, 1):
            seats = [make_agent("heuristic"), make_agent("random")]
            if learner_seat == 1:
                seats.reverse()
            outcome = play_deal(Game.deal(STANDARD, deck=list(deal.deck), dealer=deal.dealer), seats,
                                [derive_seed(9, index, learner_seat, seat) for seat in (0, 1)])
            returns.append(outcome.returns[learner_seat])
        pairs.append(sum(returns) / 2)
        wins += sum(1.0 if value > 0 else 0.5 if value == 0 else 0.0 for value in returns)
    _assert_figures(figures, pairs, wins, 2 * len(deals))
    assert figures["margin"] > 0  # the heuristic beats random: the seats are not mixed up


def test_duplicate_margin_of_an_agent_against_itself_is_zero_and_ties_count_half():
    """Two copies of one deterministic agent: each pair's two deals cancel exactly (a duplicate's point)."""
    deals = generate_deals(5, 3, STANDARD)
    figures = selfplay.duplicate_margin(make_agent("greedy", seed=0), make_agent("greedy", seed=0), STANDARD,
                                        deals, seed=1)
    wins = 0.0
    for deal in deals:
        for learner_seat in (0, 1):
            outcome = play_deal(Game.deal(STANDARD, deck=list(deal.deck), dealer=deal.dealer),
                                [make_agent("greedy", seed=0), make_agent("greedy", seed=0)], [0, 0])
            value = outcome.returns[learner_seat]
            wins += 1.0 if value > 0 else 0.5 if value == 0 else 0.0
    assert figures["margin"] == figures["margin_ci_low"] == figures["margin_ci_high"] == 0.0
    assert figures["win_rate"] == pytest.approx(wins / 6)


def test_three_player_margin_is_the_learners_points_minus_the_others_mean_in_every_seat():
    rules = Rules.preset("three")
    deals = generate_deals(4, 4, rules)
    figures = selfplay.duplicate_margin(make_agent("greedy", seed=0), make_agent("random", seed=0), rules, deals, 6)
    values, wins = [], 0.0
    for index, deal in enumerate(deals):
        total = 0.0
        for learner_seat in range(3):
            seats = [make_agent("greedy" if seat == learner_seat else "random") for seat in range(3)]
            for seat, agent in enumerate(seats):
                agent.seed(derive_seed(6, index, learner_seat, seat))
                agent.start_deal(seat, rules)
            game = Game.deal(rules, deck=list(deal.deck), dealer=deal.dealer)
            while not game.is_over:
                game.apply(seats[game.current_player].act(InformationSet(game, game.current_player)))
            returns = game.returns()
            total += returns[learner_seat] - sum(returns[seat] for seat in range(3) if seat != learner_seat) / 2
            winner, points = game.result.winner, game.result.points
            tied = [seat for seat in range(3) if points[seat] == max(points)]
            if winner is None:  # a tie at the top: the tied seats share the win
                wins += 1 / len(tied) if learner_seat in tied else 0.0
            else:
                wins += 1.0 if winner == learner_seat else 0.0
        values.append(total / 3)
    _assert_figures(figures, values, wins, 3 * len(deals))


# ------------------------------------------------------------------------------------------ random states, schedule
def test_captured_random_states_restore_python_numpy_and_torch():
    import torch

    states = selfplay.capture_rng_states()
    json.dumps(states)  # a checkpoint's JSON holds them
    first = (random.random(), float(np.random.random()), float(torch.rand(1)))
    selfplay.restore_rng_states(states)
    assert (random.random(), float(np.random.random()), float(torch.rand(1))) == first


def test_linear_schedule_decays_to_zero_and_pickles():
    schedule = pickle.loads(pickle.dumps(selfplay._LinearSchedule(3e-4)))
    assert [schedule(progress) for progress in (1.0, 0.5, 0.0)] == pytest.approx([3e-4, 1.5e-4, 0.0])


def test_a_pool_opponents_play_in_a_deal_depends_only_on_the_pools_draws(tmp_path):
    """Each deal re-seeds the drawn agent from the pool's generator, so what the agent played before (here: moves
    of another game) does not change its play in the next deal."""
    game = Game.deal(STANDARD, deck=DECK, dealer=0)
    played = []
    for warm_up in (0, 25):
        pool = _pool(tmp_path, {"random": 1.0}, seed=4)
        pool.start_deal(game.current_player, STANDARD)
        for _ in range(warm_up):
            pool.act(InformationSet(game, game.current_player))
        pool.start_deal(game.current_player, STANDARD)
        played.append([pool.act(InformationSet(game, game.current_player)) for _ in range(30)])
    assert played[0] == played[1]


# ------------------------------------------------------------------------------------------ environments
def _config(tmp_path: Path, *overrides: str, path: Path = SMOKE):
    return load_config(path, [f"run.out_dir={tmp_path}", *overrides])


def test_the_mask_cache_answers_with_each_environments_own_mask_also_after_a_deal_ends(tmp_path):
    config = _config(tmp_path, "run.n_envs=3")
    vec = selfplay.build_vec_env(config, tmp_path / "pool", seed=2)
    try:
        direct = vec.venv.venv  # VecMonitor(MaskCachingVecEnv(DummyVecEnv))
        assert isinstance(vec.venv, selfplay.MaskCachingVecEnv)
        asked = []
        ask = direct.env_method
        direct.env_method = lambda *args, **kwargs: asked.append((args, kwargs)) or ask(*args, **kwargs)

        def own_masks():
            return [env.action_masks().tolist() for env in direct.envs]

        assert [mask.tolist() for mask in vec.env_method("action_masks")] == own_masks()
        assert len(asked) == 1  # before any reset the cache is empty: the environments are asked
        vec.reset()
        rng = random.Random(0)
        deals = 0
        for _ in range(40):
            cached = vec.env_method("action_masks")
            assert [mask.tolist() for mask in cached] == own_masks()
            actions = [rng.choice(list(np.flatnonzero(mask))) for mask in cached]
            _obs, _rewards, dones, _infos = vec.step(np.array(actions))
            deals += int(dones.sum())
        assert deals >= 3  # the masks after a deal's end are the next deal's
        assert len(asked) == 1  # ... all from the cache, without a round trip to the environments
        assert [mask.tolist() for mask in vec.env_method("action_masks", indices=[1])] == [own_masks()[1]]
        assert vec.env_method("get_wrapper_attr", "deals") == [env.unwrapped.deals for env in direct.envs]
        assert len(asked) == 3  # other questions go to the environments
    finally:
        vec.close()


def test_training_environments_deal_by_their_seed_and_rank(tmp_path):
    config = _config(tmp_path, "run.n_envs=2")
    observations = []
    for seed in (5, 5, 6):
        vec = selfplay.build_vec_env(config, tmp_path / "pool", seed=seed)
        observations.append(vec.reset())
        vec.close()
    assert np.array_equal(observations[0], observations[1])
    assert not np.array_equal(observations[0], observations[2])
    assert not np.array_equal(observations[0][0], observations[0][1])  # each rank its own deals


def test_a_subproc_run_builds_its_environments_in_worker_processes_and_a_dummy_run_in_its_own(tmp_path,
                                                                                                monkeypatch):
    from stable_baselines3.common import vec_env as sb3_vec_env

    made = []

    class Workers(sb3_vec_env.DummyVecEnv):  # stands in for SubprocVecEnv's worker processes
        def __init__(self, env_fns):
            made.append(len(env_fns))
            super().__init__(env_fns)

    monkeypatch.setattr(sb3_vec_env, "SubprocVecEnv", Workers)
    for vec_env, expected in (("subproc", Workers), ("dummy", sb3_vec_env.DummyVecEnv)):
        vec = selfplay.build_vec_env(_config(tmp_path, "run.n_envs=2", f"run.vec_env={vec_env}"), tmp_path / "pool", 4)
        try:
            assert type(vec.venv.venv) is expected and vec.num_envs == 2
        finally:
            vec.close()
    assert made == [2]


def test_the_labelled_env_reports_the_opponent_and_the_deals_whole_return(tmp_path):
    config = _config(tmp_path, "pool.baselines={greedy: 1.0}")
    env = selfplay.make_env(config.to_dict(), str(tmp_path / "pool"), seed=3)
    assert isinstance(env, selfplay.OpponentLabel) and not isinstance(env.env, selfplay.SolverPlaysEndgame)
    rng = random.Random(1)
    for deal in range(4):
        env.reset(seed=100 + deal)
        total, done, info = 0.0, False, {}
        while not done:
            action = int(rng.choice(list(np.flatnonzero(env.action_masks()))))
            _obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            assert ("opponent" in info) == done
            total += reward
        base = env.unwrapped
        assert info["opponent"] == "greedy"
        assert info["deal_return"] == total == base.game.result.returns()[base.learner]


def test_make_env_wraps_the_search_and_seats_two_pool_opponents_for_three_players(tmp_path):
    config = _config(tmp_path, "env.phase2=endgame", "env.illegal=renonce")
    env = selfplay.make_env(config.to_dict(), str(tmp_path / "pool"), seed=3)
    assert isinstance(env.env, selfplay.SolverPlaysEndgame) and env.env.mode == "endgame"
    assert env.unwrapped.illegal_action == "renonce" and env.unwrapped.rules == STANDARD
    assert env.pool is env.unwrapped.opponent
    three = _config(tmp_path, path=ROOT / "configs" / "ppo_three_smoke.yaml")
    for illegal, expected in (("raise", "raise"), ("renonce", "forfeit")):
        three.env.illegal = illegal
        env = selfplay.make_env(three.to_dict(), str(tmp_path / "pool"), seed=3)
        first, second = env.unwrapped.opponents
        assert env.unwrapped.illegal_action == expected and env.pool is first
        assert isinstance(second, selfplay.PoolOpponent) and second is not first
        assert [first.rng.random() for _ in range(3)] != [second.rng.random() for _ in range(3)]
        assert first.weights() == second.weights() == (["random", "greedy"], [1.0, 1.0])
    # a deal's end names both opponents it was played against (it named the first seat's alone)
    env = selfplay.make_env(three.to_dict(), str(tmp_path / "pool"), seed=3)
    assert env.pools == tuple(env.unwrapped.opponents)
    rng, seen = random.Random(2), set()
    for deal in range(8):
        env.reset(seed=200 + deal)
        done, info = False, {}
        while not done:
            _obs, _reward, terminated, truncated, info = env.step(int(rng.choice(list(np.flatnonzero(
                env.action_masks())))))
            done = terminated or truncated
        labels = sorted(opponent.current_label for opponent in env.unwrapped.opponents)
        assert info["opponent"] == "+".join(labels)
        seen.add(info["opponent"])
    assert len(seen) > 1 and "greedy+random" in seen  # two draws: both labels in one name


def test_make_env_builds_the_configs_rules_and_search_and_seeds_each_pool_opponent_from_the_envs_seed(
        tmp_path, monkeypatch):
    made = []

    class Recorded(selfplay.PoolOpponent):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append((kwargs.get("seed"), self))

    monkeypatch.setattr(selfplay, "PoolOpponent", Recorded)
    scharf = Rules.preset("scharf")
    config = _config(tmp_path, "env.rules=scharf", "env.illegal=raise", "env.phase2=solver")
    env = selfplay.make_env(config.to_dict(), str(tmp_path / "pool"), seed=5)
    assert env.unwrapped.rules == scharf and env.unwrapped.illegal_action == "raise"
    assert [seed for seed, _pool in made] == [derive_seed("opponent", 5)]
    assert env.pool is made[0][1] and (env.pool.rules, env.pool.phase2) == (scharf, "solver")
    made.clear()
    three = _config(tmp_path, path=ROOT / "configs" / "ppo_three_smoke.yaml")  # env.phase2 stays 'policy' (R21)
    env = selfplay.make_env(three.to_dict(), str(tmp_path / "pool"), seed=5)
    assert [seed for seed, _pool in made] == [derive_seed("opponent", 5), derive_seed("opponent", "second", 5)]
    assert [pool for _seed, pool in made] == list(env.unwrapped.opponents)
    assert [pool.rules for _seed, pool in made] == [Rules.preset("three")] * 2


# ------------------------------------------------------------------------------------------ the callback
class _Logger:
    def __init__(self):
        self.records: dict[str, object] = {}
        self.dumps: list[int] = []

    def record(self, key, value):
        self.records[key] = value

    def dump(self, step=0):
        self.dumps.append(step)


class _StubTrainer:
    """What SelfPlayCallback asks of a Trainer, recording the calls."""

    def __init__(self, config):
        self.config, self.quiet, self.run_dir = config, True, Path("unused")
        self.state = {"pool": [], "next_snapshot": config.pool.snapshot_every,
                      "next_eval": 0 if config.eval.every else None, "next_checkpoint": config.checkpoint.every}
        self.eval_history: list[dict] = []
        self.calls: list[tuple[str, int]] = []

    def add_snapshot(self, model, steps):
        self.state["pool"].append({"file": f"snap_{steps:010d}.npz", "step": steps})
        self.calls.append(("snapshot", steps))

    def evaluate(self, model, steps):
        records = [{"step": steps, "opponent": spec, "margin": 0.5, "margin_ci_low": 0.25, "margin_ci_high": 0.75,
                    "win_rate": 0.6} for spec in self.config.eval.opponents]
        self.eval_history.extend(records)
        self.calls.append(("eval", steps))
        return records

    def save_checkpoint(self, model, steps):
        self.calls.append(("checkpoint", steps))

    def save_model(self, model, path, steps):
        self.calls.append(("final", steps))


def _schedule(config, rollout_starts, end):
    """The callback's calls when rollouts start at ``rollout_starts`` and training ends at ``end``."""
    trainer = _StubTrainer(config)
    callback = selfplay.SelfPlayCallback(trainer)
    model = SimpleNamespace(num_timesteps=0, logger=_Logger())
    callback.model, callback.num_timesteps, callback._bar_position = model, 0, 0
    for steps in rollout_starts:
        model.num_timesteps = steps
        callback._on_rollout_start()
    model.num_timesteps = end
    callback._on_training_end()
    callback.finish(model)  # a second finish does nothing
    return trainer.calls, model.logger


def _expected(every, first, starts, end):
    """Calls due by the definition: at a rollout's start (or the end) once the next due step is reached; the next
    due step is then the first multiple of ``every`` after it."""
    due, calls = first, []
    for steps in [*starts, end]:
        if due is not None and steps >= due:
            calls.append(steps)
            while due <= steps:
                due += every
    return calls


@pytest.mark.parametrize("snapshot_every, eval_every, checkpoint_every", [(100, 128, 96), (64, 0, 200), (1, 1, 1)])
def test_the_callback_snapshots_evaluates_and_checkpoints_when_due_and_at_the_end(
        tmp_path, snapshot_every, eval_every, checkpoint_every):
    config = _config(tmp_path, f"pool.snapshot_every={snapshot_every}", f"eval.every={eval_every}",
                     f"checkpoint.every={checkpoint_every}")
    starts, end = [0, 64, 128, 192, 256, 320], 352
    calls, logger = _schedule(config, starts, end)
    kinds = {kind: [steps for name, steps in calls if name == kind] for kind in ("snapshot", "eval", "checkpoint")}
    assert kinds["snapshot"] == _expected(snapshot_every, snapshot_every, starts, end)
    evals = _expected(eval_every, 0, starts, end) if eval_every else []
    assert kinds["eval"] == evals + ([] if end in evals else [end])  # the end is always evaluated, once
    checkpoints = _expected(checkpoint_every, checkpoint_every, starts, end)
    assert kinds["checkpoint"] == checkpoints + ([] if end in checkpoints else [end])
    assert calls[-1] == ("final", end) and [name for name, _ in calls].count("final") == 1
    assert logger.dumps == kinds["eval"]
    assert logger.records["eval/greedy/margin_ci_high"] == 0.75 and logger.records["eval/random/win_rate"] == 0.6
    assert logger.records["eval/pool_size"] == len(kinds["snapshot"])  # at the end's evaluation, after its snapshot


def test_the_callback_logs_each_opponents_mean_deal_return_per_rollout(tmp_path):
    callback = selfplay.SelfPlayCallback(_StubTrainer(_config(tmp_path)))
    callback.model, callback.num_timesteps, callback._bar_position = SimpleNamespace(logger=_Logger()), 0, 0
    steps = [([{"opponent": "greedy", "deal_return": 2.0}, {}], [True, False]),
             ([{"opponent": "greedy", "deal_return": -1.0}, {"opponent": "snapshot", "deal_return": 3.0}],
              [True, True]),
             ([{"opponent": "random", "deal_return": 9.0}, {}], [False, True])]  # not done: no deal's end
    for infos, dones in steps:
        callback.locals = {"infos": infos, "dones": np.array(dones)}
        assert callback._on_step() is True
    callback._on_rollout_end()
    assert callback.model.logger.records == {"opponents/greedy/return": 0.5, "opponents/greedy/deals": 2,
                                       "opponents/snapshot/return": 3.0, "opponents/snapshot/deals": 1}
    callback.model.logger = _Logger()
    callback._on_rollout_end()
    assert callback.model.logger.records == {}  # each rollout its own deals


# ------------------------------------------------------------------------------------------ the trainer
@pytest.fixture
def trainer_and_model(tmp_path):
    """A new run of the smoke config (pool of 2, 2 checkpoints kept) and its untrained model; nothing trained."""
    config = _config(tmp_path, "pool.max_snapshots=2", "checkpoint.keep=2")
    trainer = selfplay.Trainer.new_run(config, quiet=True)
    trainer.state = {"pool": [], "next_snapshot": 0, "next_eval": None, "next_checkpoint": 0, "resumes": 0}
    trainer.pool_dir.mkdir(parents=True, exist_ok=True)
    vec = selfplay.build_vec_env(config, trainer.pool_dir, 0)
    try:
        yield trainer, trainer._new_model(vec)
    finally:
        vec.close()


def _snap(steps: int) -> str:
    return f"snap_{steps:010d}.npz"


def test_snapshots_join_a_bounded_pool_and_their_files_live_as_long_as_a_pool_or_checkpoint_lists_them(
        trainer_and_model):
    trainer, model = trainer_and_model
    pool_dir = trainer.pool_dir
    for steps in (10, 20, 20, 30):  # a second snapshot of one step replaces the first
        trainer.add_snapshot(model, steps)
    expected = [{"file": _snap(20), "step": 20}, {"file": _snap(30), "step": 30}]
    assert trainer.state["pool"] == expected == json.loads((pool_dir / "pool.json").read_text())["snapshots"]
    assert sorted(path.name for path in pool_dir.glob("snap_*.npz")) == [_snap(20), _snap(30)]
    network, metadata = ActorNetwork.load_npz(pool_dir / _snap(30))
    assert (metadata["trained_steps"], metadata["run"], metadata["seed"], metadata["phase2"]) == \
        (30, "smoke", 1, "policy")
    observations = np.random.default_rng(0).random((4, spaces_for(STANDARD)[0]), dtype=np.float32)
    np.testing.assert_allclose(network.logits(observations),
                               ActorNetwork.from_policy(model.policy, "tanh").logits(observations), rtol=1e-6)

    trainer.save_checkpoint(model, 40)
    trainer.add_snapshot(model, 50)  # snap 20 leaves the pool, but checkpoint 40 lists it
    assert (pool_dir / _snap(20)).exists()
    trainer.save_checkpoint(model, 60)
    trainer.save_checkpoint(model, 70)  # keep 2: checkpoint 40 goes, and snap 20 with it
    assert not (pool_dir / _snap(20)).exists() and (pool_dir / _snap(30)).exists()
    names = sorted(path.name for path in trainer.checkpoint_dir.iterdir())
    assert names == ["step_0000000060.json", "step_0000000060.zip", "step_0000000070.json", "step_0000000070.zip"]
    assert json.loads((trainer.run_dir / "checkpoint.json").read_text()) == {"name": "step_0000000070", "step": 70}
    state = trainer.latest_checkpoint()
    assert (state["step"], state["name"], state["pool"]) == (70, "step_0000000070", trainer.state["pool"])
    assert state["config"] == selfplay.config_fingerprint(trainer.config)
    from agents.ppo import read_model_metadata

    assert read_model_metadata(trainer.checkpoint_dir / "step_0000000070.zip")["trained_steps"] == 70


def test_a_new_checkpoint_is_kept_even_when_a_killed_runs_later_one_sorts_after_it(trainer_and_model):
    trainer, model = trainer_and_model
    trainer.config.checkpoint.keep = 1
    trainer.save_checkpoint(model, 90)  # as if written by a run killed before its pointer moved on
    trainer.save_checkpoint(model, 80)
    assert (trainer.checkpoint_dir / "step_0000000080.zip").exists()
    assert trainer.latest_checkpoint()["step"] == 80


def test_an_evaluation_is_the_duplicate_margin_of_the_deterministic_learner_and_is_logged(trainer_and_model):
    from agents.ppo import PolicyAgent

    trainer, model = trainer_and_model
    config = trainer.config
    records = trainer.evaluate(model, 40)
    learner = PolicyAgent(ActorNetwork.from_policy(model.policy, "tanh"), STANDARD, deterministic=True, seed=0)
    deals = generate_deals(config.eval.seed, config.eval.pairs, STANDARD)
    assert [record["opponent"] for record in records] == config.eval.opponents
    for record, spec in zip(records, config.eval.opponents):
        expected = selfplay.duplicate_margin(learner, make_agent(spec, seed=0), STANDARD, deals, config.eval.seed)
        assert {key: record[key] for key in expected} == pytest.approx(expected)
        assert record["step"] == 40 and 0 <= record["seconds"] < 600  # the time it took
    trainer.evaluate(model, 50)
    lines = [json.loads(line) for line in (trainer.run_dir / "eval.jsonl").read_text().splitlines()]
    assert lines == trainer.eval_history and [line["step"] for line in lines] == [40, 40, 50, 50]
    trainer.config.env.phase2 = "endgame"  # the learner is evaluated as it trains: the search plays its endgame
    record, _ = trainer.evaluate(model, 60)
    hybrid = PolicyAgent(ActorNetwork.from_policy(model.policy, "tanh"), STANDARD, deterministic=True, seed=0,
                         phase2="endgame")
    expected = selfplay.duplicate_margin(hybrid, make_agent("random", seed=0), STANDARD, deals, config.eval.seed)
    assert record["opponent"] == "random" and record["margin"] == pytest.approx(expected["margin"])
    assert record["margin"] != pytest.approx(records[0]["margin"])


def test_the_model_takes_every_ppo_and_net_setting_of_the_config(tmp_path):
    import torch

    config = _config(tmp_path, "ppo.learning_rate=0.001", "ppo.lr_schedule=linear", "ppo.n_steps=32",
                     "ppo.batch_size=16", "ppo.n_epochs=3", "ppo.gamma=0.9", "ppo.gae_lambda=0.8", "ppo.clip_range=0.3",
                     "ppo.ent_coef=0.02", "ppo.vf_coef=0.7", "ppo.max_grad_norm=0.9", "ppo.target_kl=0.05",
                     "ppo.normalize_advantage=false", "net.hidden=[16, 8]", "net.activation=relu", "run.seed=5")
    trainer = selfplay.Trainer(config, tmp_path / "run")
    vec = selfplay.build_vec_env(config, tmp_path / "pool", 0)
    try:
        model = trainer._new_model(vec)
    finally:
        vec.close()
    assert (model.n_steps, model.batch_size, model.n_epochs, model.seed) == (32, 16, 3, 5)
    assert (model.gamma, model.gae_lambda, model.ent_coef, model.vf_coef, model.max_grad_norm, model.target_kl) == \
        (0.9, 0.8, 0.02, 0.7, 0.9, 0.05)
    assert model.normalize_advantage is False and model.clip_range(1.0) == 0.3 and str(model.device) == "cpu"
    assert isinstance(model.learning_rate, selfplay._LinearSchedule)
    assert [model.lr_schedule(progress) for progress in (1.0, 0.25)] == pytest.approx([0.001, 0.00025])
    for path in ("policy_net", "value_net"):
        layers = [layer for layer in getattr(model.policy.mlp_extractor, path)]
        assert [layer.out_features for layer in layers if isinstance(layer, torch.nn.Linear)] == [16, 8]
        assert all(isinstance(layer, (torch.nn.Linear, torch.nn.ReLU)) for layer in layers)
    constant = _config(tmp_path, "ppo.learning_rate=0.002")
    vec = selfplay.build_vec_env(constant, tmp_path / "pool", 0)
    try:
        model = selfplay.Trainer(constant, tmp_path / "other")._new_model(vec)
    finally:
        vec.close()
    assert model.learning_rate == 0.002 and model.lr_schedule(0.1) == pytest.approx(0.002)
    assert model.target_kl is None and model.normalize_advantage is True


def test_the_config_fingerprint_ignores_only_the_keys_a_resume_may_change(tmp_path):
    config = _config(tmp_path)
    base = selfplay.config_fingerprint(config)
    assert selfplay.config_fingerprint(_config(tmp_path, "run.total_steps=999", "run.progress_bar=true")) == base
    assert re.fullmatch("[0-9a-f]{16}", base)  # the 16 hex digits that checkpoints of earlier versions hold
    for override in ("run.seed=2", "run.n_envs=3", "ppo.gamma=0.5", "eval.pairs=4", "pool.baselines={random: 2.0}"):
        assert selfplay.config_fingerprint(_config(tmp_path, override)) != base, override


def test_a_resume_may_change_only_the_length_and_the_bar_and_writes_them_to_the_config(tmp_path):
    config = _config(tmp_path)
    selfplay.Trainer.new_run(config, quiet=True)
    before = (config.run_dir / "config.yaml").read_text()
    resumed = selfplay.Trainer.resume_run(config.run_dir, [" run.total_steps = 512", "run.progress_bar=true"])
    assert resumed.resume is True and resumed.config.run.total_steps == 512 and resumed.config.run.progress_bar
    assert load_config(config.run_dir / "config.yaml").run.total_steps == 512
    for override in ("run.seed=3", "run.total_steps"):
        with pytest.raises(ValueError, match=r"cannot change config key '(run.seed|run.total_steps)'|malformed"):
            selfplay.Trainer.resume_run(config.run_dir, [override])
    selfplay.Trainer.resume_run(config.run_dir)
    assert load_config(config.run_dir / "config.yaml").run.total_steps == 512 and before != \
        (config.run_dir / "config.yaml").read_text()


@pytest.mark.parametrize("key, value, error", [("numpy", "garbage!!", "Error"), ("python", 1, "TypeError"),
                                               ("torch", "gAR=", "EOFError"),
                                               ("numpy", "gARLAy4=", "TypeError")])  # pickled int 3
def test_a_checkpoint_with_a_damaged_random_state_is_refused_by_name_before_anything_changes(
        trainer_and_model, key, value, error):
    """The random states are unpickled only at the resume; a damaged one was a decoding or unpickling traceback
    after the environments were built, and is now a RunDirError naming the state when the checkpoint is read (by the
    resume, before anything changes)."""
    trainer, model = trainer_and_model
    trainer.add_snapshot(model, 30)
    trainer.save_checkpoint(model, 40)
    state_path = trainer.checkpoint_dir / "step_0000000040.json"
    state = json.loads(state_path.read_text())
    state["rng"][key] = value
    state_path.write_text(json.dumps(state))
    before = (trainer.pool_dir / "pool.json").read_bytes()
    with pytest.raises(selfplay.RunDirError, match=f"its last checkpoint cannot be resumed \\(checkpoint state rng "
                                                   f"'{key}' is not a saved {key} random state \\({error}\\)"):
        selfplay.Trainer.resume_run(trainer.run_dir, quiet=True).train()
    assert (trainer.pool_dir / "pool.json").read_bytes() == before


# ------------------------------------------------------------------------------------------ the run's logs
class _Writer:
    def __init__(self):
        self.calls: list = []

    def write(self, key_values, key_excluded, step=0):
        self.calls.append((dict(key_values), dict(key_excluded), step))

    def close(self):
        self.calls.append("closed")


def _rows(path: Path) -> list[tuple[int, str, float]]:
    import csv

    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["step", "tag", "value"]
    return [(int(step), tag, float(value)) for step, tag, value in rows[1:]]


def test_the_writers_rename_ppos_tags_flip_the_entropy_and_keep_only_numbers_in_the_csv(tmp_path):
    tensorboard, table = selfplay._make_writers(tmp_path, None)
    real, tensorboard.inner = tensorboard.inner, _Writer()
    real.close()
    values = {"train/entropy_loss": 0.5, "train/value_loss": np.float32(2.0), "time/fps": 30,
              "eval/random/margin": -1.5, "flag": True, "config": "text", "opponents/greedy/deals": np.int64(3)}
    excluded = {key: None for key in values} | {"config": ("stdout",)}
    for writer in (tensorboard, table):
        writer.write(values, excluded, 7)
        writer.close()
    renamed, renamed_excluded, step = tensorboard.inner.calls[0]
    assert step == 7 and tensorboard.inner.calls[1] == "closed"
    assert renamed == {"losses/entropy": -0.5, "losses/value_loss": np.float32(2.0), "charts/SPS": 30,
                       "eval/random/margin": -1.5, "flag": True, "config": "text", "opponents/greedy/deals": 3}
    assert renamed_excluded["config"] == ("stdout",) and renamed_excluded["losses/entropy"] is None
    assert sorted(_rows(tmp_path / "scalars.csv")) == sorted([
        (7, "losses/entropy", -0.5), (7, "losses/value_loss", 2.0), (7, "charts/SPS", 30.0),
        (7, "eval/random/margin", -1.5), (7, "opponents/greedy/deals", 3.0)])


def test_the_csv_writer_puts_each_dump_on_disk_at_once_and_its_close_releases_the_file(tmp_path):
    """A run killed between dumps keeps every row dumped so far (and a notebook reads them while it trains)."""
    _tensorboard, table = selfplay._make_writers(tmp_path, None)
    _tensorboard.close()
    path = tmp_path / "scalars.csv"

    def open_on_the_file():
        return [fd for fd in os.listdir("/proc/self/fd")
                if os.path.realpath(f"/proc/self/fd/{fd}") == os.path.realpath(path)]

    table.write({"b": 2.0, "a": 1}, {"a": None, "b": None}, 3)
    assert _rows(path) == [(3, "a", 1.0), (3, "b", 2.0)]  # in tag order
    table.write({"a": 0.5}, {"a": None}, 4)
    assert _rows(path)[-1] == (4, "a", 0.5)
    if os.path.isdir("/proc/self/fd"):
        assert open_on_the_file()
        table.close()
        assert not open_on_the_file()


def test_resumed_writers_drop_the_rows_and_events_after_the_checkpoint(tmp_path):
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    def session_starts(event_file):
        """(step, status) of the session-log events: a purge is a START event at the purge step."""
        return [(event.step, event.session_log.status) for event in EventFileLoader(str(event_file)).Load()
                if event.HasField("session_log")]

    for resume_step in (None, 5):
        before = set((tmp_path / "tb").glob("events.*"))
        tensorboard, table = selfplay._make_writers(tmp_path, resume_step)
        for step in ((1, 5, 6, 9) if resume_step is None else (6,)):
            values = {"x": float(step) * (1 if resume_step is None else 10)}
            for writer in (tensorboard, table):
                writer.write(values, {"x": None}, step)
        for writer in (tensorboard, table):
            writer.close()
        (event_file,) = set((tmp_path / "tb").glob("events.*")) - before
        from tensorboard.compat.proto.event_pb2 import SessionLog

        # the resumed writer purges the events logged after step 5: TensorBoard shows every step once
        assert session_starts(event_file) == ([] if resume_step is None else [(6, SessionLog.START)])
    assert _rows(tmp_path / "scalars.csv") == [(1, "x", 1.0), (5, "x", 5.0), (6, "x", 60.0)]


def test_the_progress_bar_advances_by_thousands_and_ends_at_the_last_step_with_the_evaluations(tmp_path, capsys):
    config = _config(tmp_path, "run.progress_bar=true", "run.total_steps=5000", "eval.every=0")
    trainer = _StubTrainer(config)
    trainer.quiet = False
    callback = selfplay.SelfPlayCallback(trainer)
    model = SimpleNamespace(num_timesteps=200, logger=_Logger())
    callback.model, callback.num_timesteps = model, 200
    callback._on_training_start()
    assert (callback.bar.total, callback.bar.n) == (5000, 200)  # a resumed run's bar starts at its step
    seen = []
    for steps in (700, 1199, 1200, 2500):
        callback.num_timesteps = steps
        callback.locals = {"infos": [], "dones": []}
        callback._on_step()
        seen.append(callback.bar.n)
    assert seen == [200, 200, 1200, 2500]
    model.num_timesteps = callback.num_timesteps = 2600
    bar = callback.bar
    callback._on_training_end()
    assert bar.n == 2600
    assert "step 2600: random +0.500 [+0.250, +0.750], greedy +0.500 [+0.250, +0.750]" in capsys.readouterr().out
    quiet = _StubTrainer(config)
    callback = selfplay.SelfPlayCallback(quiet)
    callback.model, callback.num_timesteps = model, 0
    callback._on_training_start()
    assert callback.bar is None  # --quiet: no bar


# ------------------------------------------------------------------------------------------ the endgame search
def test_the_endgame_wrapper_deals_up_to_its_limit_before_it_gives_up(monkeypatch):
    from sixtysix_env.gym_env import SixtySixGymEnv

    env = selfplay.SolverPlaysEndgame(SixtySixGymEnv(rules="standard", opponent=ClosesAtOnce()), "solver", seed=3)
    with pytest.raises(ValueError, match=rf"played {selfplay.MAX_SEARCHED_DEALS} deal\(s\) in a row"):
        env.reset(seed=0, options={"dealer": 0, "learner_seat": 0})  # the opponent is forehand: every deal closed
    assert env.unwrapped.deals == selfplay.MAX_SEARCHED_DEALS
    monkeypatch.setattr(selfplay, "MAX_SEARCHED_DEALS", 3)
    with pytest.raises(ValueError, match=r"played 3 deal\(s\) in a row"):
        env.reset(seed=0, options={"dealer": 0, "learner_seat": 0})
    deck = Game.deal(STANDARD, deck=DECK, dealer=0).deck
    with pytest.raises(ValueError, match=r"played 1 deal\(s\) in a row"):  # a fixed deck would deal it again
        env.reset(seed=0, options={"deck": deck, "dealer": 0, "learner_seat": 0})
    env.reset(seed=0, options={"dealer": 1, "learner_seat": 0})  # the learner is forehand: his deal
    assert env.action_masks().tolist() == env.unwrapped.action_masks().tolist()


def _set(key, value):
    def change(state):
        state[key] = value
    return change


@pytest.mark.parametrize("change, message", [
    (_set("name", "step_0000000030"), "is of 'step_0000000030' at step 40, not 'step_0000000040' at step 40"),
    (_set("step", 41), "is of 'step_0000000040' at step 41, not 'step_0000000040' at step 40"),
    (_set("step", "40"), "checkpoint state step must be an integer, got '40'"),
    (_set("next_snapshot", -1), "checkpoint state next_snapshot must be an integer >= 0, got -1"),
    (_set("next_checkpoint", 2.5), "checkpoint state next_checkpoint must be an integer, got 2.5"),
    (_set("resumes", "1"), "checkpoint state resumes must be an integer, got '1'"),
    (_set("next_eval", "soon"), "checkpoint state next_eval must be an integer, got 'soon'"),
    (_set("next_eval", -5), "checkpoint state next_eval must be an integer >= 0, got -5"),
    (_set("pool", {}), "checkpoint state pool must be a list"),
    (lambda state: state["pool"][0].update(step=-3), "checkpoint state pool entry step must be an integer >= 0"),
    (lambda state: state["pool"][0].update(file=7), "checkpoint state pool entry 7 is not a snapshot file name"),
    (lambda state: state["pool"][0].pop("step"), "checkpoint state pool entry is missing key 'step'"),
    (lambda state: state["rng"].pop("torch"), "checkpoint state rng is missing key 'torch'"),
    (_set("config", "0" * 16), "config.yaml differs from the config this checkpoint was trained with"),
    (_set("extra", 1), "checkpoint state has unknown key 'extra'"),
])
def test_every_field_of_a_checkpoint_state_is_checked_by_name(trainer_and_model, change, message):
    trainer, model = trainer_and_model
    trainer.add_snapshot(model, 30)
    trainer.save_checkpoint(model, 40)
    resumed = selfplay.Trainer.resume_run(trainer.run_dir, quiet=True)
    assert resumed.latest_checkpoint()["step"] == 40
    state_path = trainer.checkpoint_dir / "step_0000000040.json"
    state = json.loads(state_path.read_text())
    change(state)
    state_path.write_text(json.dumps(state))
    with pytest.raises(selfplay.RunDirError, match=f"its last checkpoint cannot be resumed \\(.*{re.escape(message)}"):
        resumed.latest_checkpoint()


def test_a_checkpoint_without_scheduled_evaluations_or_a_config_digest_is_read(trainer_and_model):
    """``next_eval`` is null with ``eval.every: 0``; checkpoints before session 66 hold no config digest."""
    trainer, model = trainer_and_model
    trainer.state["next_eval"] = None
    trainer.save_checkpoint(model, 40)
    state_path = trainer.checkpoint_dir / "step_0000000040.json"
    state = json.loads(state_path.read_text())
    del state["config"]
    state_path.write_text(json.dumps(state))
    assert selfplay.Trainer.resume_run(trainer.run_dir, quiet=True).latest_checkpoint()["next_eval"] is None
    (trainer.run_dir / "checkpoint.json").write_text(json.dumps({"name": "step_0000000040", "step": -40}))
    with pytest.raises(selfplay.RunDirError, match="checkpoint pointer step must be an integer >= 0, got -40"):
        trainer.latest_checkpoint()
    (trainer.run_dir / "checkpoint.json").unlink()
    assert trainer.latest_checkpoint() is None


def test_a_deal_not_scored_counts_half_a_win_and_each_seat_gets_its_own_seed(monkeypatch):
    """R15 (65:65): an unscored deal is half a win. The games are scripted here, as such deals are rare in play."""
    import eval.play

    scripted = iter([(2, -2), (0, 0), (-1, 1), (3, -3)])  # deal 0 in seats (0, 1), then deal 1
    calls = []

    def fake_play_deal(game, seats, seeds):
        calls.append((game.deck, seats, seeds))
        return SimpleNamespace(returns=next(scripted))

    monkeypatch.setattr(eval.play, "play_deal", fake_play_deal)
    learner, opponent = make_agent("greedy", seed=0), make_agent("random", seed=0)
    deals = [Deal(dealer=0, deck=tuple(Game.deal(STANDARD, deck=DECK, dealer=0).deck)),
             *generate_deals(8, 1, STANDARD)]
    figures = selfplay.duplicate_margin(learner, opponent, STANDARD, deals, seed=12)
    assert [seats for _deck, seats, _seeds in calls] == [[learner, opponent], [opponent, learner]] * 2
    assert [seeds for _deck, _seats, seeds in calls] == [
        [derive_seed(12, index, learner_seat, seat) for seat in (0, 1)] for index in (0, 1) for learner_seat in (0, 1)]
    assert [list(deck) for deck, _seats, _seeds in calls] == [list(deal.deck) for deal in deals for _ in (0, 1)]
    # pair values (2 + 0) / 2 and (-1 - 3) / 2; wins 1 + 0.5 + 0 + 0 of 4 deals
    assert figures["margin"] == pytest.approx(-0.5) and figures["win_rate"] == pytest.approx(1.5 / 4)
    assert (figures["win_rate_ci_low"], figures["win_rate_ci_high"]) == pytest.approx(_wilson(1.5, 4))


def test_a_three_player_deals_win_goes_to_its_winner_or_is_shared_by_the_seats_tied_at_the_top():
    def shares(winner, points):
        return [selfplay.share_of_the_win(SimpleNamespace(winner=winner, points=points), seat) for seat in range(3)]

    assert shares(1, (30, 70, 20)) == [0.0, 1.0, 0.0]
    assert shares(None, (50, 20, 50)) == [0.5, 0.0, 0.5]
    assert shares(None, (10, 45, 45)) == [0.0, 0.5, 0.5]
    assert shares(None, (40, 40, 40)) == pytest.approx([1 / 3] * 3)


def test_a_three_player_tie_at_the_top_shares_the_win_among_the_tied_seats(monkeypatch):
    """R21: a tie at the top is not scored; the learner's share of that win is a half when he is one of two seats
    tied at the top, nothing when the two opponents tie above him (it was a third either way)."""
    import eval.three_tournament

    rules = Rules.preset("three")
    scripted = iter([(None, (0, 0, 0), (40, 40, 20)), (0, (1, 0, 0), (70, 30, 20)), (2, (0, 0, 1), (20, 30, 70)),
                     (None, (0, 0, 0), (20, 50, 50)), (0, (1, 0, 0), (70, 30, 20)), (2, (0, 0, 1), (20, 30, 70))])

    def fake_play_game(seats, rules, game, timing):
        winner, returns, points = next(scripted)
        return SimpleNamespace(result=SimpleNamespace(winner=winner, points=points), returns=lambda: returns)

    monkeypatch.setattr(eval.three_tournament, "_play_game", fake_play_game)
    figures = selfplay.three_player_margin(make_agent("greedy"), make_agent("random"), rules,
                                           generate_deals(2, 2, rules), seed=1)
    # per deal: learner seats 0, 1, 2 score 0 - 0, 0 - 1/2 and 1 - 0 -> (0 - 0.5 + 1) / 3
    assert figures["margin"] == pytest.approx(0.5 / 3) and figures["margin_ci_low"] == figures["margin_ci_high"]
    # learner seats 0, 1, 2 of the first deal: a half (tied with seat 1), 0, 1; of the second: 0 (seats 1 and 2
    # tied above him), 0, 1
    assert figures["win_rate"] == pytest.approx((1 / 2 + 0 + 1 + 0 + 0 + 1) / 6)


def test_a_resume_restores_the_checkpoints_pool_and_counters_and_cuts_the_logs_without_training(trainer_and_model,
                                                                                               monkeypatch):
    """Resuming at ``run.total_steps``: nothing is trained, but the pool, counters and logs are those of the
    checkpoint, files written after it go, and the final model is written once."""
    trainer, model = trainer_and_model
    model.num_timesteps = 40
    trainer.add_snapshot(model, 30)
    trainer.state.update(next_snapshot=50, next_eval=60, next_checkpoint=70, resumes=2)
    trainer.save_checkpoint(model, 40)
    trainer.add_snapshot(model, 45)  # after the checkpoint: a killed run's
    (trainer.run_dir / "eval.jsonl").write_text("".join(json.dumps({"step": step, "opponent": "random"}) + "\n"
                                                        for step in (0, 40, 45)))
    imitation = trainer.run_dir / "imitation"  # a kill while its data.npz was written left one there too
    imitation.mkdir(exist_ok=True)
    stale = [folder / ".file.abc123.tmp"
             for folder in (trainer.run_dir, trainer.checkpoint_dir, trainer.pool_dir, imitation)]
    for path in stale:
        path.write_text("left by a killed write")
    resumed = selfplay.Trainer.resume_run(trainer.run_dir, ["run.total_steps=40"], quiet=True)
    closed = []
    build = selfplay.build_vec_env

    def build_and_watch(*args):
        vec = build(*args)
        close = vec.close
        vec.close = lambda: closed.append(vec) or close()
        return vec

    monkeypatch.setattr(selfplay, "build_vec_env", build_and_watch)
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        final = resumed.train()
        assert torch.get_num_threads() == resumed.config.run.torch_threads == 1
    finally:
        torch.set_num_threads(threads)
    assert resumed.state == {"pool": [{"file": _snap(30), "step": 30}], "next_snapshot": 50, "next_eval": 60,
                             "next_checkpoint": 70, "resumes": 3}
    assert json.loads((trainer.pool_dir / "pool.json").read_text())["snapshots"] == resumed.state["pool"]
    assert sorted(path.name for path in trainer.pool_dir.glob("snap_*.npz")) == [_snap(30)]
    assert [json.loads(line)["step"] for line in (trainer.run_dir / "eval.jsonl").read_text().splitlines()] == [0, 40]
    from agents.ppo import read_model_metadata

    assert final == trainer.run_dir / "final.zip" and read_model_metadata(final)["trained_steps"] == 40
    assert not any(path.exists() for path in stale)
    assert len(closed) == 1  # the environments are closed (with subproc: their processes end)
    written = final.stat().st_mtime_ns
    selfplay.Trainer.resume_run(trainer.run_dir, quiet=True).train()
    assert final.stat().st_mtime_ns == written  # already there: not written again


def test_a_resume_with_a_total_below_the_trained_steps_or_a_damaged_checkpoint_changes_nothing(trainer_and_model):
    """A resume whose run.total_steps is below the checkpoint's step trained nothing and wrote the smaller total into
    config.yaml; it is refused, saying how far the run got. A damaged checkpoint is refused before config.yaml takes
    the overrides too (it was rewritten first)."""
    trainer, model = trainer_and_model
    model.num_timesteps = 40
    trainer.save_checkpoint(model, 40)
    config_text = (trainer.run_dir / "config.yaml").read_text()
    with pytest.raises(selfplay.RunDirError, match=r"has already trained 40 steps, more than run.total_steps 39: "
                                                   r"resume it with a total at least that large"):
        selfplay.Trainer.resume_run(trainer.run_dir, ["run.total_steps=39"], quiet=True)
    assert (trainer.run_dir / "config.yaml").read_text() == config_text
    assert selfplay.Trainer.resume_run(trainer.run_dir, ["run.total_steps=40"], quiet=True).config.run.total_steps == 40
    config_text = (trainer.run_dir / "config.yaml").read_text()
    (trainer.run_dir / "checkpoint.json").write_text('{"name": "step_0000000040"}')
    with pytest.raises(selfplay.RunDirError, match="its last checkpoint cannot be resumed"):
        selfplay.Trainer.resume_run(trainer.run_dir, ["run.total_steps=80"], quiet=True)
    assert (trainer.run_dir / "config.yaml").read_text() == config_text


def test_a_checkpoint_whose_model_is_missing_is_refused_naming_the_file(trainer_and_model):
    """sb3 looked for 'step_N.zip.zip' and said that was missing; the checkpoint check names the model file."""
    trainer, model = trainer_and_model
    trainer.save_checkpoint(model, 40)
    (trainer.checkpoint_dir / "step_0000000040.zip").unlink()
    with pytest.raises(selfplay.RunDirError,
                       match=r"cannot be resumed \(its model '.*step_0000000040\.zip' is missing"):
        selfplay.Trainer.resume_run(trainer.run_dir, quiet=True).train()


@pytest.mark.parametrize("change, message", [
    ({"rules": Rules.preset("paderborn").to_dict()}, "was trained for the rules 'paderborn', the run is 'standard'"),
    ({"observation_layout": "0" * 16}, r"was trained on observation layout '0{16}'"),
])
def test_a_checkpoint_model_of_other_rules_or_another_layout_is_refused_on_resume(trainer_and_model, change,
                                                                                   message):
    """The checkpoint's model metadata was never read: one of other rules (R19-R20) or of an observation layout this
    code no longer builds resumed silently, and the final model was labelled with the run's rules."""
    from agents.ppo import add_metadata_to_zip, read_model_metadata

    trainer, model = trainer_and_model
    trainer.save_checkpoint(model, 40)
    path = trainer.checkpoint_dir / "step_0000000040.zip"
    assert selfplay.Trainer.resume_run(trainer.run_dir, quiet=True).latest_checkpoint()["step"] == 40
    path.write_bytes(add_metadata_to_zip(path.read_bytes(), {**read_model_metadata(path), **change}))
    with pytest.raises(selfplay.RunDirError, match=rf"cannot be resumed \(its model '.*step_0000000040\.zip' "
                                                   rf"{message}"):
        selfplay.Trainer.resume_run(trainer.run_dir, quiet=True)


def test_a_run_starts_in_an_empty_folder_takes_its_flags_and_a_bad_start_model_leaves_no_folder(tmp_path):
    config = _config(tmp_path)
    assert (selfplay.Trainer(config, tmp_path / "x").resume, selfplay.Trainer(config, tmp_path / "x").quiet) == \
        (False, False)
    config.run_dir.mkdir(parents=True)  # made beforehand, without a config.yaml: not a run yet
    trainer = selfplay.Trainer.new_run(config, quiet=True)
    assert (trainer.resume, trainer.quiet) == (False, True)
    assert load_config(config.run_dir / "config.yaml").to_dict() == config.to_dict()
    for quiet in (False, True):
        resumed = selfplay.Trainer.resume_run(str(config.run_dir), quiet=quiet)  # a str path is fine
        assert (resumed.resume, resumed.quiet, resumed.run_dir) == (True, quiet, config.run_dir)
    assert selfplay.Trainer.new_run(_config(tmp_path, "run.name=loud")).quiet is False
    assert selfplay.Trainer.resume_run(config.run_dir).quiet is False
    bad = _config(tmp_path, "run.name=bad", f"run.init_model={tmp_path / 'missing.zip'}")
    with pytest.raises((ValueError, OSError), match="missing.zip"):
        selfplay.Trainer.new_run(bad)
    assert not bad.run_dir.exists()  # refused before the run folder was made


@pytest.mark.parametrize("leftover", ["final.zip", "checkpoint.json", "checkpoints", "pool", "scalars.csv",
                                      "eval.jsonl", "tb"])
def test_a_new_run_refuses_a_folder_with_files_of_an_earlier_run_but_no_config(tmp_path, leftover):
    """A folder whose config.yaml is gone but that still holds a run's files: a new run there appended its logs to
    the old ones and mixed its checkpoints and pool with theirs. It is refused, naming them, and nothing is written."""
    config = _config(tmp_path)
    config.run_dir.mkdir(parents=True)
    path = config.run_dir / leftover
    if "." in leftover:
        path.write_text("old")
    else:
        path.mkdir()
    with pytest.raises(selfplay.RunDirError, match=rf"holds {re.escape(leftover)} of an earlier run but no "
                                                   r"config.yaml: move them away"):
        selfplay.Trainer.new_run(config, quiet=True)
    assert sorted(entry.name for entry in config.run_dir.iterdir()) == [leftover]


def test_the_imitation_warm_start_logs_its_final_figures_at_step_0(trainer_and_model, capsys):
    trainer, model = trainer_and_model
    imitation = trainer.config.imitation
    imitation.deals, imitation.teacher, imitation.epochs, imitation.batch_size = 4, "greedy", 1, 64
    logger = _Logger()
    model._logger = logger
    trainer.quiet = False
    trainer._imitate(model)
    summary = json.loads((trainer.run_dir / "imitation" / "summary.json").read_text())
    assert logger.dumps == [0]
    assert {key: value for key, value in logger.records.items()} == \
        {f"imitation/{name}": value for name, value in summary["final"].items()}
    assert f"imitation of greedy: {summary['decisions']} decisions from 4 deals" in capsys.readouterr().out


def test_a_checkpoint_model_that_is_not_a_zip_is_named_before_the_resume_builds_anything(trainer_and_model):
    """Its error reaches the caller (the command line's exit 2 with the message), not a NameError of the cleanup
    after a failed load: the checkpoint's model metadata is read when the resume checks the checkpoint."""
    trainer, model = trainer_and_model
    trainer.save_checkpoint(model, 40)
    (trainer.checkpoint_dir / "step_0000000040.zip").write_text("not a zip")
    with pytest.raises(selfplay.RunDirError, match=r"cannot be resumed \(PPO model '.*step_0000000040\.zip' is not a "
                                                   r"zip file\)"):
        selfplay.Trainer.resume_run(trainer.run_dir, quiet=True).train()


def test_a_resume_of_a_run_killed_before_its_first_checkpoint_starts_its_logs_afresh(tmp_path):
    config = _config(tmp_path, "run.total_steps=64", "eval.every=0", "eval.opponents=[random]")
    selfplay.Trainer.new_run(config, quiet=True)
    run_dir = config.run_dir
    (run_dir / "scalars.csv").write_text("step,tag,value\n999,junk,1.0\n")  # no eval.jsonl yet: that is fine too
    (run_dir / "tb").mkdir()
    (run_dir / "tb" / "events.out.tfevents.junk").write_text("junk")
    selfplay.Trainer.resume_run(run_dir, quiet=True).train()
    assert "junk" not in {tag for _step, tag, _value in _rows(run_dir / "scalars.csv")}
    # killed before its logger existed: no tb/ folder to clear, and the resume starts all the same
    shutil.rmtree(run_dir)
    selfplay.Trainer.new_run(config, quiet=True)
    assert not (run_dir / "tb").exists()
    assert selfplay.Trainer.resume_run(run_dir, quiet=True).train() == run_dir / "final.zip"
    assert not (run_dir / "tb" / "events.out.tfevents.junk").exists()
    assert [json.loads(line)["step"] for line in (run_dir / "eval.jsonl").read_text().splitlines()] == [128]
