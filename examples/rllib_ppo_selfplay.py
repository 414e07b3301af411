"""RLlib (new API stack) on the PettingZoo environment: masked PPO self-play, one policy shared by both seats.

    pip install -e '.[examples]'
    python examples/rllib_ppo_selfplay.py --iterations 20

RLlib's ``PettingZooEnv`` turns the AEC environment into a ``MultiAgentEnv`` (each step returns the observation of
the agent to move; at the end both agents' final rewards). Masking uses RLlib's own ``ActionMaskingTorchRLModule``
(``ray.rllib.examples.rl_modules.classes.action_masking_rlm``): it adds ``log(mask)`` to the logits, so illegal
actions get probability zero. That module reads the observation keys ``observations`` and ``action_mask``;
:class:`RLlibObservationKeys` renames ours (``observation``, ``action_mask``) and gives the mask as float32.
Both seats map to one policy, so this is self-play with parameter sharing; the game is zero-sum (R16), so the
mean return of the shared policy is 0 by construction and progress shows against a fixed opponent instead
(:func:`evaluate_against_random`).
"""

from __future__ import annotations

import argparse
import importlib
import random
from dataclasses import dataclass

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from sixtysix_env import NUM_ACTIONS, sixtysix_v0

POLICY = "shared"


class RLlibObservationKeys(BaseWrapper):
    """The observation as ``{"observations": vector, "action_mask": float32 mask}`` (RLlib's masking module)."""

    def __init__(self, env):
        super().__init__(env)
        self._space = spaces.Dict({
            "observations": env.observation_space(env.possible_agents[0])["observation"],
            "action_mask": spaces.Box(0.0, 1.0, shape=(NUM_ACTIONS,), dtype=np.float32),
        })

    def observation_space(self, agent):
        return self._space

    def observe(self, agent):
        observation = self.env.observe(agent)
        return {"observations": observation["observation"], "action_mask": observation["action_mask"].astype(np.float32)}


def make_env(config: dict | None = None):
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    rules = (config or {}).get("rules", "standard")
    return PettingZooEnv(RLlibObservationKeys(sixtysix_v0.env(rules=rules)))


@dataclass
class Args:
    iterations: int = 20
    """training iterations (each collects train_batch_size environment steps)"""
    train_batch_size: int = 4000
    """environment steps (both seats' moves) per iteration"""
    minibatch_size: int = 256
    """PPO minibatch size"""
    num_epochs: int = 4
    """PPO epochs per iteration"""
    lr: float = 3e-4
    """learning rate"""
    num_env_runners: int = 0
    """remote sampling workers (0: sample in the driver process)"""
    seed: int = 1
    """seed of the algorithm and the environments"""
    rules: str = "standard"
    """rules preset (docs/rules.md)"""
    eval_deals: int = 100
    """deals against a uniformly random player at the end (0: none)"""


def build_algorithm(args: Args):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    register_env("sixtysix_v0", make_env)
    config = (
        PPOConfig()
        # RLlib's environment check steps random actions without the mask, which a masked game refuses.
        .environment("sixtysix_v0", env_config={"rules": args.rules}, disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=1)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, *rest, **kwargs: POLICY)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={POLICY: RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                                      model_config={"fcnet_hiddens": [256, 256]})}
            )
        )
        .training(train_batch_size_per_learner=args.train_batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.num_epochs, lr=args.lr, gamma=1.0)
        .debugging(seed=args.seed)
    )
    return config.build_algo()


def greedy_action(module, observation: dict) -> int:
    """The shared policy's most likely legal action (inference forward pass of the masking module)."""
    import torch

    batch = {"obs": {key: torch.as_tensor(value[None]) for key, value in observation.items()}}
    with torch.no_grad():
        logits = module.forward_inference(batch)["action_dist_inputs"][0]
    return int(torch.argmax(logits))


def evaluate_against_random(module, deals: int, seed: int, rules: str = "standard") -> float:
    """Mean game points per deal of the greedy policy, seats alternating, against a uniformly random player."""
    rng = random.Random(seed)
    env = RLlibObservationKeys(sixtysix_v0.env(rules=rules))
    total = 0.0
    for deal in range(deals):
        learner = f"player_{deal % 2}"
        env.reset(seed=seed + deal)
        for agent in env.agent_iter():
            observation, reward, termination, truncation, _ = env.last()
            if termination or truncation:
                if agent == learner:
                    total += reward
                env.step(None)
                continue
            if agent == learner:
                env.step(greedy_action(module, observation))
            else:
                env.step(rng.choice(np.flatnonzero(observation["action_mask"]).tolist()))
    return total / deals


def train(args: Args):
    import ray

    ray.init(num_cpus=max(1, args.num_env_runners + 1), include_dashboard=False, ignore_reinit_error=True,
             log_to_driver=False)
    algorithm = build_algorithm(args)
    results = []
    for iteration in range(args.iterations):
        result = algorithm.train()
        results.append(result)
        runners = result.get("env_runners", {})
        print(f"iteration {iteration + 1}/{args.iterations}: env steps "
              f"{result.get('num_env_steps_sampled_lifetime', runners.get('num_env_steps_sampled_lifetime'))}, "
              f"episodes {runners.get('num_episodes_lifetime')}", flush=True)
    module = algorithm.get_module(POLICY)
    mean = None
    if args.eval_deals:
        mean = evaluate_against_random(module, args.eval_deals, seed=args.seed + 1_000_000, rules=args.rules)
        print(f"greedy shared policy against uniform random: {mean:+.3f} game points per deal over "
              f"{args.eval_deals} deals (seats alternating; not duplicate)")
    return algorithm, results, mean


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    for name, field in Args.__dataclass_fields__.items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(field.default), default=field.default)
    args = Args(**vars(parser.parse_args(argv)))
    try:  # make install's ray extra has Ray without RLlib's own dependencies (dm-tree, ...)
        importlib.import_module("ray.rllib")
    except ImportError as error:
        parser.error(f"RLlib does not import ({error}): this example needs the examples extra, "
                     f"pip install -e '.[examples]' (ray[rllib] with its dependencies)")
    algorithm, _, _ = train(args)
    algorithm.stop()


if __name__ == "__main__":
    main()
