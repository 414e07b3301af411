"""Tianshou (2.x) on the PettingZoo environment: a masked DQN learner in one seat against a masked random player.

    pip install -e '.[examples]'
    python examples/tianshou_dqn.py --epochs 5 --epoch-num-steps 5000

Follows Tianshou's own PettingZoo example (``test/pettingzoo/tic_tac_toe.py``): ``tianshou.env.PettingZooEnv``
turns each AEC observation into ``{"agent_id", "obs", "mask"}`` (our ``action_mask`` becomes the mask),
``MultiAgentOffPolicyAlgorithm`` routes each step to the algorithm of the agent to move, and both algorithms
respect the mask: DQN takes its argmax (and its epsilon-greedy exploration) over legal actions only, and
``MARLRandomDiscreteMaskedOffPolicyAlgorithm`` picks uniformly among them. The learner's return is its game points
(R16) at the end of the deal.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

try:
    import torch
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net
except ModuleNotFoundError as error:  # make install leaves the examples extra out
    raise SystemExit(f"examples/tianshou_dqn.py needs the examples extra (torch, tianshou): "
                     f"pip install -e '.[examples]' ({error})") from None

from sixtysix_env import sixtysix_v0


@dataclass
class Args:
    seed: int = 1
    """seed of numpy, torch and the environments"""
    rules: str = "standard"
    """rules preset (docs/rules.md)"""
    learner_seat: int = 0
    """which agent learns: 0 (player_0) or 1 (player_1); the other plays uniformly among the legal actions"""
    epochs: int = 5
    """training epochs"""
    epoch_num_steps: int = 5000
    """environment steps (both players' moves) per epoch"""
    collection_step_num_env_steps: int = 10
    """environment steps collected between gradient steps"""
    update_per_step: float = 0.1
    """gradient steps per collected step"""
    batch_size: int = 64
    """minibatch size"""
    buffer_size: int = 20_000
    """replay buffer size"""
    lr: float = 1e-4
    """learning rate"""
    gamma: float = 1.0
    """discount (1: only the deal's final game points matter)"""
    n_step: int = 3
    """n-step return horizon"""
    target_update_freq: int = 320
    """gradient steps between target network updates"""
    eps_train: float = 0.1
    """epsilon-greedy exploration while training (among legal actions)"""
    eps_test: float = 0.0
    """epsilon while testing"""
    hidden: int = 256
    """width of each of the three hidden layers"""
    num_training_envs: int = 4
    """parallel training environments"""
    num_test_envs: int = 4
    """parallel test environments"""
    test_episodes: int = 100
    """deals played by the final greedy policy to report its mean game points (0: none)"""


class SixtySixTianshouEnv(PettingZooEnv):
    """Tianshou's PettingZoo wrapper with the info of the step that ends a deal reduced to numbers: the replay
    buffer stacks infos of all steps and refuses objects such as the engine's ``DealResult``."""

    def step(self, action):
        observation, rewards, terminated, truncated, info = super().step(action)
        return observation, rewards, terminated, truncated, {}


def get_env(rules: str = "standard") -> PettingZooEnv:
    return SixtySixTianshouEnv(sixtysix_v0.env(rules=rules))


def build(args: Args) -> tuple[MultiAgentOffPolicyAlgorithm, list[str]]:
    env = get_env(args.rules)
    state_shape = env.observation_space["observation"].shape
    net = Net(state_shape=state_shape, action_shape=env.action_space.n, hidden_sizes=[args.hidden] * 3)
    learner = DQN(
        policy=DiscreteQLearningPolicy(
            model=net, action_space=env.action_space, eps_training=args.eps_train, eps_inference=args.eps_test
        ),
        optim=AdamOptimizerFactory(lr=args.lr),
        n_step_return_horizon=args.n_step,
        gamma=args.gamma,
        target_update_freq=args.target_update_freq,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithms = [learner, opponent] if args.learner_seat == 0 else [opponent, learner]
    return MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env), env.agents


def train(args: Args):
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    training_envs = DummyVectorEnv([lambda: get_env(args.rules) for _ in range(args.num_training_envs)])
    test_envs = DummyVectorEnv([lambda: get_env(args.rules) for _ in range(args.num_test_envs)])
    training_envs.seed(args.seed)
    test_envs.seed(args.seed + 10_000)
    algorithm, agents = build(args)
    training_collector = Collector[CollectStats](
        algorithm, training_envs, VectorReplayBuffer(args.buffer_size, len(training_envs)), exploration_noise=True
    )
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    training_collector.reset()
    training_collector.collect(n_step=args.batch_size * args.num_training_envs)

    def learner_return(rewards: np.ndarray) -> np.ndarray:
        return rewards[:, args.learner_seat]  # the environment rewards both players; report the learner's

    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=training_collector,
            test_collector=test_collector,
            max_epochs=args.epochs,
            epoch_num_steps=args.epoch_num_steps,
            collection_step_num_env_steps=args.collection_step_num_env_steps,
            test_step_num_episodes=args.num_test_envs,
            batch_size=args.batch_size,
            update_step_num_gradient_steps_per_sample=args.update_per_step,
            test_in_training=False,
            multi_agent_return_reduction=learner_return,
        )
    )
    mean_game_points = None
    if args.test_episodes:
        evaluation = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
        stats = evaluation.collect(n_episode=args.test_episodes, reset_before_collect=True)
        mean_game_points = float(np.mean(stats.returns[:, args.learner_seat]))
        print(f"greedy DQN (seat {args.learner_seat}) against uniform random: {mean_game_points:+.3f} game points "
              f"per deal over {args.test_episodes} deals (not duplicate)")
    return result, algorithm.get_algorithm(agents[args.learner_seat]), mean_game_points


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    for name, field in Args.__dataclass_fields__.items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(field.default), default=field.default)
    train(Args(**vars(parser.parse_args())))


if __name__ == "__main__":
    main()
