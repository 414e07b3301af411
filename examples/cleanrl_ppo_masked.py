"""CleanRL-style PPO with invalid-action masking on Sixty-six: one file, one dataclass of arguments, explicit seeding.

    python examples/cleanrl_ppo_masked.py --total-timesteps 200000 --opponent heuristic

The structure follows CleanRL's ``ppo.py`` (rollout of ``num_steps`` in ``num_envs`` synchronous environments,
GAE, clipped surrogate, value clipping, entropy bonus, minibatch epochs). Masking follows Huang & Ontañón (2022),
"A Closer Look at Invalid Action Masking in Policy Gradient Algorithms" (CleanRL's ``ppo_gridnet``): the logits of
illegal actions are replaced by a large negative number before the softmax, in the rollout and in the update, so
illegal actions have probability zero and get no gradient.

The environment is ``SixtySixGymEnv`` (one seat against an embedded opponent, one deal per episode; reward the
learner's game points at the end, R16) with ``dict_observation=True``, which puts the legal-action mask next to
the observation vector, so the vector environment batches both. Needs only torch besides this package.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import io
import random
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical

from agents import agent_for_rules, make_agent
from sixtysix_env import SixtySixGymEnv
from sixtysix_env.fileio import write_bytes_atomic

MASKED_LOGIT = -1e8  # large and negative, but finite: exp() underflows to 0 without producing NaN gradients


@dataclass
class Args:
    seed: int = 1
    """seed of the experiment (environments, opponents, torch, numpy, random)"""
    torch_deterministic: bool = True
    """if toggled, `torch.backends.cudnn.deterministic=True` and one CPU thread, so a seed repeats a run"""
    rules: str = "standard"
    """rules preset (docs/rules.md): standard, paderborn or scharf"""
    opponent: str = "random"
    """agent spec of the embedded opponent (random, greedy, heuristic, pimc, ...)"""
    total_timesteps: int = 200_000
    """total learner decisions of the experiment"""
    learning_rate: float = 2.5e-4
    """the learning rate of the optimizer"""
    num_envs: int = 4
    """the number of parallel game environments"""
    num_steps: int = 128
    """the number of steps to run in each environment per policy rollout"""
    anneal_lr: bool = True
    """toggle learning rate annealing for policy and value networks"""
    gamma: float = 1.0
    """the discount factor (1: a deal is short and only its final game points count)"""
    gae_lambda: float = 0.95
    """the lambda for the general advantage estimation"""
    num_minibatches: int = 4
    """the number of mini-batches"""
    update_epochs: int = 4
    """the K epochs to update the policy"""
    norm_adv: bool = True
    """toggles advantages normalization"""
    clip_coef: float = 0.2
    """the surrogate clipping coefficient"""
    clip_vloss: bool = True
    """toggles whether or not to use a clipped loss for the value function, as per the paper"""
    ent_coef: float = 0.01
    """coefficient of the entropy"""
    vf_coef: float = 0.5
    """coefficient of the value function"""
    max_grad_norm: float = 0.5
    """the maximum norm for the gradient clipping"""
    target_kl: float = 0.0
    """the target KL divergence threshold (0: no early stopping)"""
    eval_deals: int = 200
    """deals played by the deterministic policy against the opponent at the end (0: none)"""
    save_path: str = ""
    """where to save the agent's state dict at the end ("" : do not save)"""

    # filled in at runtime
    batch_size: int = 0
    """the batch size (computed: num_envs * num_steps)"""
    minibatch_size: int = 0
    """the mini-batch size (computed)"""
    num_iterations: int = 0
    """the number of iterations (computed)"""


def parse_args(argv: list[str] | None = None) -> Args:
    """Command-line options from the dataclass: ``--total-timesteps 1000``, ``--no-anneal-lr``; help from the
    field docstrings (what ``tyro`` does in CleanRL, without the dependency)."""
    docs: dict[str, str] = {}
    body = ast.parse(inspect.getsource(Args)).body[0].body
    for node, following in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(following, ast.Expr):
            docs[node.target.id] = str(following.value.value)
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    for field in dataclasses.fields(Args):
        if field.name in ("batch_size", "minibatch_size", "num_iterations"):
            continue
        flag = "--" + field.name.replace("_", "-")
        kind = {"int": int, "float": float, "str": str, "bool": bool}[str(field.type)]
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=field.default, help=docs.get(field.name))
        else:
            parser.add_argument(flag, type=kind, default=field.default, help=docs.get(field.name))
    args = Args(**vars(parser.parse_args(argv)))
    try:
        check_args(args)
    except ValueError as error:
        parser.error(str(error))  # usage and the message, exit 2: no traceback, nothing trained
    return args


def check_args(args: Args) -> None:
    """Refuse (``ValueError`` naming the flag) arguments that would fail mid-run or train nothing, before any
    step: counts, coefficients, the rules preset, the opponent spec, and a --save-path that cannot be written
    (checked now, not after the training it would lose)."""
    from sixtysix_env import Rules
    from sixtysix_env.fileio import writable_file

    for name in ("total_timesteps", "num_envs", "num_steps", "num_minibatches", "update_epochs"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.num_minibatches > args.num_envs * args.num_steps:
        raise ValueError(f"--num-minibatches {args.num_minibatches} is more than the batch of --num-envs × "
                         f"--num-steps = {args.num_envs * args.num_steps} decisions")
    if args.eval_deals < 0:
        raise ValueError(f"--eval-deals must be 0 or more, got {args.eval_deals}")
    for name, low, high in (("learning_rate", 0.0, np.inf), ("clip_coef", 0.0, np.inf),
                            ("max_grad_norm", 0.0, np.inf)):
        value = getattr(args, name)
        if not (np.isfinite(value) and low < value < high):
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number above {low}, got {value}")
    for name in ("gamma", "gae_lambda"):
        value = getattr(args, name)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"--{name.replace('_', '-')} must be in [0, 1], got {value}")
    for name in ("ent_coef", "vf_coef", "target_kl"):
        value = getattr(args, name)
        if not (np.isfinite(value) and value >= 0.0):
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number, 0 or more, got {value}")
    rules = Rules.preset(args.rules)  # an unknown preset is named by the rules module
    if rules.players != 2:
        raise ValueError(f"--rules {args.rules!r}: this example trains the two-player game (R21 is three players)")
    agent_for_rules(args.opponent, rules)  # an unknown agent, a bad parameter or other rules' network is named
    if args.save_path:
        writable_file(args.save_path, f"--save-path {args.save_path!r}")


def make_env(args: Args, index: int):
    def thunk() -> gym.Env:
        opponent = make_agent(args.opponent, seed=args.seed * 1000 + index)
        return SixtySixGymEnv(rules=args.rules, opponent=opponent, dict_observation=True, illegal_action="raise")

    return thunk


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, observation_size: int, action_count: int):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(observation_size, 256)), nn.Tanh(),
            layer_init(nn.Linear(256, 256)), nn.Tanh(),
            layer_init(nn.Linear(256, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(observation_size, 256)), nn.Tanh(),
            layer_init(nn.Linear(256, 256)), nn.Tanh(),
            layer_init(nn.Linear(256, action_count), std=0.01),
        )

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def masked_distribution(self, x: torch.Tensor, mask: torch.Tensor) -> Categorical:
        logits = self.actor(x)
        return Categorical(logits=torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT)))

    def get_action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        distribution = self.masked_distribution(x, mask)
        if action is None:
            action = distribution.sample()
        return action, distribution.log_prob(action), distribution.entropy(), self.critic(x)


def evaluate(agent: Agent, args: Args, deals: int, seed: int) -> float:
    """Mean game points per deal of the deterministic (argmax over legal actions) policy against the opponent."""
    env = make_env(args, index=10_000)()
    total = 0.0
    for deal in range(deals):
        observation, _ = env.reset(seed=seed + deal)
        done = False
        while not done:
            with torch.no_grad():
                x = torch.as_tensor(observation["observation"]).unsqueeze(0)
                mask = torch.as_tensor(observation["action_mask"], dtype=torch.bool).unsqueeze(0)
                action = int(agent.masked_distribution(x, mask).probs.argmax())
            observation, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        total += float(reward)
    return total / deals


def train(args: Args) -> tuple[Agent, dict[str, float]]:
    check_args(args)  # an Args built in code is checked as the command line's is
    args.batch_size = int(args.num_envs * args.num_steps)
    args.minibatch_size = int(args.batch_size // args.num_minibatches)
    args.num_iterations = max(1, args.total_timesteps // args.batch_size)

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    if args.torch_deterministic:
        torch.set_num_threads(1)
    device = torch.device("cpu")

    # SAME_STEP: the step that ends a deal already returns the next deal's first observation (CleanRL's convention).
    envs = gym.vector.SyncVectorEnv(
        [make_env(args, i) for i in range(args.num_envs)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    observation_size = envs.single_observation_space["observation"].shape[0]
    action_count = envs.single_action_space.n
    agent = Agent(observation_size, action_count).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((args.num_steps, args.num_envs, observation_size), device=device)
    masks = torch.zeros((args.num_steps, args.num_envs, action_count), dtype=torch.bool, device=device)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long, device=device)
    logprobs = torch.zeros((args.num_steps, args.num_envs), device=device)
    rewards = torch.zeros((args.num_steps, args.num_envs), device=device)
    dones = torch.zeros((args.num_steps, args.num_envs), device=device)
    values = torch.zeros((args.num_steps, args.num_envs), device=device)

    global_step = 0
    start_time = time.time()
    next_observation, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_observation["observation"], device=device)
    next_mask = torch.as_tensor(next_observation["action_mask"], dtype=torch.bool, device=device)
    next_done = torch.zeros(args.num_envs, device=device)
    episode_returns: list[float] = []
    running_returns = np.zeros(args.num_envs)
    stats: dict[str, float] = {}

    for iteration in range(1, args.num_iterations + 1):
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / args.num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
                values[step] = value.flatten()
            actions[step], logprobs[step] = action, logprob
            next_observation, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32, device=device)
            next_obs = torch.as_tensor(next_observation["observation"], device=device)
            next_mask = torch.as_tensor(next_observation["action_mask"], dtype=torch.bool, device=device)
            next_done = torch.as_tensor(np.logical_or(terminations, truncations), dtype=torch.float32, device=device)
            running_returns += reward
            for index in np.flatnonzero(np.logical_or(terminations, truncations)):
                episode_returns.append(float(running_returns[index]))
                running_returns[index] = 0.0

        # GAE (no bootstrapping across a finished deal: each deal ends with a termination, never a truncation).
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards, device=device)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1, observation_size))
        b_masks = masks.reshape((-1, action_count))
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape(-1)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)

        b_inds = np.arange(args.batch_size)
        clipfracs = []
        for epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, args.batch_size, args.minibatch_size):
                mb_inds = b_inds[start : start + args.minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb_inds], b_masks[mb_inds], b_actions[mb_inds]
                )
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]

                mb_advantages = b_advantages[mb_inds]
                if args.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()

                newvalue = newvalue.view(-1)
                if args.clip_vloss:
                    v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                    v_clipped = b_values[mb_inds] + torch.clamp(
                        newvalue - b_values[mb_inds], -args.clip_coef, args.clip_coef
                    )
                    v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                    v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()

                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

            if args.target_kl and approx_kl > args.target_kl:
                break

        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        recent = episode_returns[-100:]
        stats = {
            "global_step": global_step,
            "policy_loss": pg_loss.item(),
            "value_loss": v_loss.item(),
            "entropy": entropy_loss.item(),
            "old_approx_kl": old_approx_kl.item(),
            "approx_kl": approx_kl.item(),
            "clipfrac": float(np.mean(clipfracs)),
            "explained_variance": float(explained_var),
            "episodes": len(episode_returns),
            "mean_return_last_100": float(np.mean(recent)) if recent else float("nan"),
            "SPS": int(global_step / (time.time() - start_time)),
        }
        print(
            f"iteration {iteration}/{args.num_iterations} step {global_step}: mean return (last 100 deals) "
            f"{stats['mean_return_last_100']:+.3f}, policy loss {stats['policy_loss']:.4f}, value loss "
            f"{stats['value_loss']:.4f}, entropy {stats['entropy']:.3f}, SPS {stats['SPS']}",
            flush=True,
        )

    envs.close()
    if args.eval_deals:
        stats["eval_mean_game_points"] = evaluate(agent, args, args.eval_deals, seed=args.seed + 1_000_000)
        print(f"deterministic policy against {args.opponent}: {stats['eval_mean_game_points']:+.3f} game points per "
              f"deal over {args.eval_deals} deals (not duplicate; for a strength claim use `sixtysix match`)")
    if args.save_path:  # atomically: an interrupted save leaves no half-written file
        buffer = io.BytesIO()
        torch.save(agent.state_dict(), buffer)
        write_bytes_atomic(args.save_path, buffer.getvalue())
    return agent, stats


if __name__ == "__main__":
    train(parse_args())
