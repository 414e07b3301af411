"""The runnable examples under examples/ (docs/examples.md, README): each runs here on a few hundred steps, or is
skipped with the reason when its library is not installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def load_example(name: str):
    """Import examples/<name>.py as a module (the examples are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def needs(*modules: str):
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    return pytest.mark.skipif(
        bool(missing), reason=f"{', '.join(missing)} not installed (pip install -e '.[examples]')"
    )


# --------------------------------------------------------------------------- plain SB3 and the shipped model
@needs("sb3_contrib", "torch")
def test_plain_sb3_plays_the_shipped_model_as_the_ppo_agent_does():
    """The README's recipe (flat observation, masks to predict, the endgame to the exact search) chooses exactly
    the ``ppo`` agent's actions, decision by decision."""
    from agents import make_agent
    from sb3_contrib import MaskablePPO

    example = load_example("sb3_shipped_model")
    model = MaskablePPO.load(example.MODEL, device="cpu")
    agent = make_agent("ppo", seed=0)
    env = example.make_env("heuristic", seed=3)
    decisions = 0
    for deal in range(4):
        observation, _ = env.reset(seed=100 + deal)
        base = env.unwrapped
        agent.start_deal(base.learner, base.rules)
        done = False
        while not done:
            action, _ = model.predict(observation, action_masks=env.action_masks(), deterministic=True)
            assert int(action) == agent.act(base.information_set())
            assert env.action_masks()[int(action)]
            decisions += 1
            observation, reward, terminated, truncated, _ = env.step(int(action))
            done = terminated or truncated
        assert reward in (-3, -2, -1, 0, 1, 2, 3)  # R16 game points, from the learner's side
    assert decisions >= 8


@needs("sb3_contrib", "torch")
def test_sb3_example_script_plays_whole_deals():
    returns = load_example("sb3_shipped_model").play(3, opponent="random", seed=5)
    assert len(returns) == 3 and all(value in (-3, -2, -1, 0, 1, 2, 3) for value in returns)


# --------------------------------------------------------------------------- CleanRL-style PPO (torch only)
@needs("torch")
def test_cleanrl_ppo_runs_a_few_hundred_steps_with_masks_and_repeats_with_its_seed():
    import torch

    example = load_example("cleanrl_ppo_masked")
    args = example.parse_args(["--total-timesteps", "512", "--num-envs", "2", "--num-steps", "64", "--eval-deals", "10"])
    agent, stats = example.train(args)  # illegal_action="raise": one unmasked illegal choice would raise here
    assert stats["global_step"] == 512 and stats["episodes"] > 10
    assert all(np.isfinite(stats[key]) for key in ("policy_loss", "value_loss", "entropy", "approx_kl"))
    assert -3 <= stats["eval_mean_game_points"] <= 3
    again, _ = example.train(example.parse_args(
        ["--total-timesteps", "512", "--num-envs", "2", "--num-steps", "64", "--eval-deals", "0"]))
    for first, second in zip(agent.state_dict().values(), again.state_dict().values()):
        assert torch.equal(first, second)  # explicit seeding: the same run twice


@needs("torch")
def test_cleanrl_masking_gives_illegal_actions_no_probability_and_no_gradient():
    import torch

    from sixtysix_env import Game, Rules, encode_observation
    from sixtysix_env.observation import action_mask

    example = load_example("cleanrl_ppo_masked")
    game = Game.deal(Rules.preset("standard"), seed=11, dealer=0)  # forehand (player 1) to lead: R3, R5
    x = torch.as_tensor(encode_observation(game, 1)).unsqueeze(0)
    mask = torch.as_tensor(action_mask(game, 1, dtype=np.bool_)).unsqueeze(0)
    torch.manual_seed(0)
    agent = example.Agent(x.shape[1], 37)
    distribution = agent.masked_distribution(x, mask)
    assert torch.all(distribution.probs[~mask] == 0) and torch.isclose(distribution.probs[mask].sum(), torch.tensor(1.0))
    logits = agent.actor(x)
    logits.retain_grad()
    masked = torch.distributions.Categorical(logits=torch.where(mask, logits, torch.full_like(logits, example.MASKED_LOGIT)))
    legal = mask.nonzero()[:, 1]
    (-masked.log_prob(legal[:1]) - masked.entropy()).sum().backward()
    assert torch.all(logits.grad[~mask] == 0) and torch.any(logits.grad[mask] != 0)


def test_cleanrl_arguments_come_from_the_dataclass_with_their_docstrings(capsys):
    pytest.importorskip("torch")
    example = load_example("cleanrl_ppo_masked")
    args = example.parse_args(["--opponent", "heuristic", "--no-anneal-lr", "--learning-rate", "1e-3"])
    assert (args.opponent, args.anneal_lr, args.learning_rate, args.num_envs) == ("heuristic", False, 1e-3, 4)
    with pytest.raises(SystemExit):
        example.parse_args(["--help"])
    assert "the surrogate clipping coefficient" in capsys.readouterr().out


@pytest.mark.parametrize("argv, fragment", [
    (["--num-envs", "0"], "--num-envs must be at least 1, got 0"),
    (["--total-timesteps", "0"], "--total-timesteps must be at least 1"),
    (["--num-minibatches", "0"], "--num-minibatches must be at least 1"),
    (["--num-envs", "2", "--num-steps", "4", "--num-minibatches", "9"], "--num-minibatches 9 is more than the batch"),
    (["--eval-deals", "-1"], "--eval-deals must be 0 or more, got -1"),
    (["--learning-rate", "nan"], "--learning-rate must be a finite number above 0.0, got nan"),
    (["--gamma", "1.5"], "--gamma must be in [0, 1], got 1.5"),
    (["--ent-coef", "-0.1"], "--ent-coef must be a finite number, 0 or more"),
    (["--rules", "nosuch"], "unknown rules preset 'nosuch'"),
    (["--rules", "three"], "this example trains the two-player game"),
    (["--opponent", "nosuch"], "unknown agent 'nosuch'"),
    (["--save-path", "."], "--save-path '.': is a folder, not a file"),
])
def test_cleanrl_refuses_bad_arguments_by_flag_before_any_step(argv, fragment, capsys):
    pytest.importorskip("torch")
    example = load_example("cleanrl_ppo_masked")
    with pytest.raises(SystemExit) as exit_info:
        example.parse_args(argv)
    assert exit_info.value.code == 2 and fragment in capsys.readouterr().err
    with pytest.raises(ValueError, match="--num-envs must be at least 1"):  # an Args built in code is checked too
        example.train(example.Args(num_envs=0))


@needs("torch")
def test_cleanrl_saves_its_state_dict_atomically_where_asked(tmp_path):
    import torch

    example = load_example("cleanrl_ppo_masked")
    target = tmp_path / "new-folder" / "agent.pt"
    agent, _stats = example.train(example.parse_args(["--total-timesteps", "64", "--num-envs", "1", "--num-steps",
                                                      "64", "--eval-deals", "0", "--save-path", str(target)]))
    saved = torch.load(target)
    assert saved.keys() == agent.state_dict().keys()
    assert all(torch.equal(saved[key], value) for key, value in agent.state_dict().items())
    assert [path.name for path in target.parent.iterdir()] == ["agent.pt"]  # no temp file left beside it


# --------------------------------------------------------------------------- Tianshou (examples extra)
@pytest.mark.slow  # about 16-20 s on the shared 2-core machine (Tianshou's trainer, collectors and test episodes)
@needs("tianshou", "torch")
def test_tianshou_dqn_trains_a_few_hundred_steps_on_the_pettingzoo_env():
    example = load_example("tianshou_dqn")
    args = example.Args(epochs=1, epoch_num_steps=300, num_training_envs=2, num_test_envs=2, batch_size=32,
                        test_episodes=10)
    result, learner, mean_game_points = example.train(args)
    assert result.train_step >= 300 and result.update_step > 0
    assert -3 <= mean_game_points <= 3  # R16: game points per deal
    # The learner's greedy choice is always a legal action (the mask reaches DQN's argmax).
    from tianshou.data import Batch

    env = example.get_env()
    observation, _ = env.reset(seed=4)
    for _ in range(40):
        batch = Batch(obs=Batch(obs=observation["obs"][None], mask=np.array([observation["mask"]])), info=Batch())
        action = int(learner.policy(batch).act[0])
        assert observation["mask"][action]
        observation, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            observation, _ = env.reset()


# --------------------------------------------------------------------------- RLlib (examples extra)
@pytest.mark.slow  # starts a local Ray instance: about 20 s on the shared 2-core machine
# `tree` (dm-tree): RLlib imports it; the ray extra that `make install` installs does not bring it.
@needs("ray", "torch", "tree")
def test_rllib_masked_ppo_self_play_trains_a_few_hundred_steps_on_the_pettingzoo_env():
    """The environment raises on an illegal action (``illegal_action="raise"``), so a training iteration and the
    greedy evaluation finishing at all show the mask reached RLlib's sampling and inference."""
    import ray

    example = load_example("rllib_ppo_selfplay")
    args = example.Args(iterations=1, train_batch_size=300, minibatch_size=100, num_epochs=1, eval_deals=6)
    try:
        algorithm, results, mean_game_points = example.train(args)
        runners = results[0]["env_runners"]
        assert runners["num_env_steps_sampled_lifetime"] >= 300 and runners["num_episodes_lifetime"] >= 5
        assert -3 <= mean_game_points <= 3  # R16
        env = example.RLlibObservationKeys(__import__("sixtysix_env").sixtysix_v0.env())
        env.reset(seed=9)
        observation = env.observe(env.agent_selection)
        assert observation["action_mask"][example.greedy_action(algorithm.get_module(example.POLICY), observation)] == 1
        algorithm.stop()
    finally:
        ray.shutdown()


@needs("sb3_contrib", "torch")
@pytest.mark.parametrize("argv, fragment", [
    (["--deals", "0"], "--deals must be at least 1, got 0"),
    (["--deals", "1", "--opponent", "heuristc"], "--opponent: unknown agent 'heuristc'"),
])
def test_sb3_example_refuses_bad_arguments_by_flag(argv, fragment, capsys):
    """--deals 0 divided by zero after loading the model, and a mistyped opponent was a traceback."""
    example = load_example("sb3_shipped_model")
    with pytest.raises(SystemExit) as exit_info:
        example.main(argv)
    assert exit_info.value.code == 2 and fragment in capsys.readouterr().err


def run_without(module: str, script: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run examples/<script> with ``module`` made unimportable, as on a machine without the examples extra."""
    code = (f"import runpy, sys; sys.modules[{module!r}] = None; sys.argv = [{script!r}, *{list(argv)!r}]; "
            f"runpy.run_path({str(EXAMPLES / script)!r}, run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.parametrize("module, script, extra", [
    ("tianshou", "tianshou_dqn.py", "pip install -e '.[examples]'"),
    ("sb3_contrib", "sb3_shipped_model.py", "pip install -e '.[train]'"),
])
def test_an_example_without_its_library_names_the_extra_not_a_traceback(module, script, extra):
    done = run_without(module, script, "--help")
    assert done.returncode != 0 and extra in done.stderr and "Traceback" not in done.stderr


def test_the_rllib_example_without_rllib_names_the_extra_not_a_traceback():
    """make install's ray extra has Ray but not RLlib's dependencies: ray.rllib failed with 'No module named tree'."""
    done = run_without("ray.rllib", "rllib_ppo_selfplay.py", "--iterations", "1")
    assert done.returncode == 2 and "pip install -e '.[examples]'" in done.stderr and "Traceback" not in done.stderr
