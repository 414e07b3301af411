"""PPO on the batched environment, with a critic that sees the hidden cards in training only, and an opponent pool.

    sixtysix train-vector --config configs/vector_ppo.yaml [--set num_envs=256 ...]
    sixtysix train-vector --resume runs/vector_ppo            # continue from its last checkpoint
    python -m train.vector_ppo --describe                     # every argument with its docstring

A CleanRL-style learner of its own in torch (docs/training.md says why not sb3's MaskablePPO): one flat loop of
rollout, advantages, update, on ``sixtysix_env.vector_env(num_envs, self_play=True)``, whose ``num_envs`` deals
are stepped in the compiled core by one numba call per step. In every deal the learner holds one seat
(``learner_seats``, drawn per deal) and an opponent drawn per deal from :attr:`Args.opponents` holds the other:

* ``self``: the latest frozen snapshot of the learner (self-play), ``pool``: any snapshot of the pool (the last
  :attr:`Args.pool_size`, one added every :attr:`Args.snapshot_every` updates), both played by the snapshot's
  network on its own seat's observation rows;
* ``policy``: the core's playout policy (``sixtysix_env.core.policy``, the search agents' fast heuristic player),
  run in the core on the opponent's rows; ``heuristic``: the ``heuristic`` agent itself, compiled
  (``sixtysix_env.core.heuristic``, the same choices from the same view), run in the core on the opponent's rows;
  ``random``: uniformly random legal actions.

The **actor** is exactly the MLP of sb3-contrib's ``MaskableActorCriticPolicy`` (``net_arch=dict(pi=hidden,
vf=hidden)``, :attr:`Args.activation`): the trained model is saved as a normal MaskablePPO zip plus our metadata
(``agents.ppo``), loads with ``MaskablePPO.load`` and plays as ``ppo:path=FILE`` (network on every decision,
metadata ``phase2: policy``). With :attr:`Args.init_suit` the actor is instead one or more suit networks
(agents/suit.py) started from their weights files and trained through the mean of their logits; the run then saves
them as suit weights files (``suit:path=A+B`` plays them). The **critic** is a separate network whose input is the
learner's observation row plus :func:`sixtysix_env.vector.privileged_features` of the current deal (the opponent's
hand, the face-down talon and its order): an asymmetric actor-critic (PerfectDou), legitimate because the critic
only shapes the training signal and never plays. The critic values every step of a deal from the learner's side
(opponent's turns too, their rows from ``seat_observations``), so the advantages of the learner's decisions are GAE
over the whole deal with the opponent's moves as part of the environment; only the learner's decisions enter the
policy loss.

Run directory (``out_dir/run_name``): ``args.yaml``, ``tb/`` (TensorBoard: ``charts/...``, ``losses/...``),
``scalars.csv`` (every logged value), ``eval.jsonl`` (the periodic duplicate-deal evaluations),
``checkpoint.pt`` (networks, optimizer, pool, counters; resumable), ``model.zip`` (the latest model, the
``ppo:path=`` format), ``learning_curve.png`` (train/plots.py, at the end). Every file is written atomically,
except the two logs that grow row by row (``scalars.csv``, ``eval.jsonl``): they are appended to, and a resume drops
a last row that a kill left torn (train/runlog.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import math
import random
import shutil
import sys
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np

from agents.ppo import one_line_reason
from sixtysix_env.fileio import remove_stale_temp_files, write_bytes_atomic, write_text_atomic
from sixtysix_env.rules import PRESET_NAMES, Rules
from sixtysix_env.schema import SEED_LIMIT, check_keys, require_int

from .config import (_convert, check_agent_spec, check_eval_pairs, check_run_name, check_seed, field_docs,
                     read_yaml_file, strict_yaml_load)
from .export import read_start_model
from .runlog import ScalarsCsv, truncate_log

OPPONENT_KINDS = ("self", "pool", "policy", "heuristic", "random")
_HEURISTIC, _RANDOM, _POLICY = -3, -2, -1  # opponent codes per environment; snapshots are their ids (0, 1, ...)


@dataclass
class Args:
    """Every argument of a run (a config file sets any of them; ``--set key=value`` overrides one)."""

    run_name: str = "vector_ppo"
    """Run name: the run directory is ``out_dir/run_name``."""
    out_dir: str = "runs"
    """Folder holding run directories."""
    seed: int = 1
    """Master seed: network initialisation, the environments' deals, seats and opponent draws, action sampling."""
    device: str = "auto"
    """Torch device: ``auto`` (CUDA when present, else CPU), ``cpu`` or ``cuda``."""
    torch_threads: int = 1
    """Threads torch may use (1 on a shared machine)."""
    progress_bar: bool = True
    """Show a tqdm progress bar."""
    rules: str = "standard"
    """Rules preset the policy is trained for (standard, paderborn or scharf)."""
    init_model: Optional[str] = None
    """Start the actor from this MaskablePPO model zip (e.g. models/ppo_standard.zip); its value network starts the
    critic's observation part (the privileged inputs start at zero weight). Null: orthogonal initialisation."""
    init_suit: Optional[str] = None
    """Make the actor a suit network (agents/suit.py, train/suit_network.py) started from these weights files:
    ``A.npz``, or ``A.npz+B.npz`` for an ensemble whose logits are averaged as ``suit:path=A+B`` plays them (the
    members are trained together through their mean). The run then saves one weights file per member
    (``suit_member_K.npz`` in the run directory, played by ``suit:path=...``) instead of a MaskablePPO zip;
    ``critic_hidden`` and ``activation`` shape the critic, which starts fresh (give it ``critic_warmup_updates``);
    ``hidden``, the MLP actor's, must be left at its default.
    Null: the MLP actor. Not together with ``init_model``."""
    init_logit_scale: float = 1.0
    """Multiply ``init_model``'s action logits by this at the start (its last layer's weights and bias). A network
    fitted with ``fit.target: q`` has logits = action values / ``q_temperature``, whose softmax plays far weaker
    than its greedy choice; a scale of 4 makes the sampled policy nearly the greedy one before PPO starts."""
    critic_warmup_updates: int = 0
    """Updates at the start that train the critic only (the actor is not stepped): the critic starts as the model's
    value head (fitted to other returns, its privileged inputs at zero weight), and the first policy steps should
    not follow advantages it has not yet learnt for this run."""
    total_steps: int = 10_000_000
    """Environment steps to train for, summed over the environments (both seats' decisions: about half are the
    learner's)."""
    num_envs: int = 1024
    """Deals stepped together in the core."""
    num_steps: int = 32
    """Steps per environment in each rollout (the rollout has ``num_envs * num_steps`` rows)."""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer widths of the actor (must match ``init_model``)."""
    activation: str = "tanh"
    """Hidden activation of both networks: ``tanh`` or ``relu`` (must match ``init_model``)."""
    critic_hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer widths of the critic."""
    privileged_critic: bool = True
    """The critic also sees the hidden cards (opponent's hand, talon order); false: the observation only (the
    ablation)."""
    learning_rate: float = 1e-4
    """Adam step size (at the start when ``anneal_lr``)."""
    anneal_lr: bool = True
    """Decay the step size linearly to 0 over ``total_steps``."""
    gamma: float = 1.0
    """Discount factor: 1, only a deal's final game points count (R16)."""
    gae_lambda: float = 0.95
    """GAE lambda over the steps of a deal."""
    num_minibatches: int = 8
    """Minibatches per epoch (each of ``num_envs * num_steps / num_minibatches`` rows)."""
    update_epochs: int = 4
    """Passes over each rollout."""
    norm_adv: bool = True
    """Normalise the advantages of each minibatch's learner decisions."""
    clip_coef: float = 0.2
    """PPO ratio clipping."""
    ent_coef: float = 0.005
    """Entropy bonus coefficient."""
    anchor_coef: float = 0.0
    """Weight of KL(start policy || policy) on the learner's decisions, the start being the actor as
    ``init_model`` / ``init_suit`` gave it (0: none). Fine-tuning a strong policy, PPO's noise flips its near-ties
    (docs/training.md, "Session 25"); the penalty keeps it near the start where the advantages do not consistently
    say otherwise."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    max_grad_norm: float = 0.5
    """Gradient norm clipping."""
    target_kl: Optional[float] = 0.03
    """Stop an update's epochs when the approximate KL exceeds this (null: never)."""
    opponents: dict[str, float] = field(
        default_factory=lambda: {"self": 0.4, "pool": 0.2, "policy": 0.3, "random": 0.1})
    """Draw weights of the opponent kinds per deal: ``self`` (latest snapshot), ``pool`` (any snapshot),
    ``policy`` (the core's playout policy), ``heuristic`` (the compiled ``heuristic`` agent), ``random``."""
    snapshot_every: int = 10
    """Updates between snapshots of the learner added to the pool (the first is the initial actor)."""
    pool_size: int = 10
    """Snapshots kept; the oldest leaves when a new one arrives beyond this."""
    snapshot_deterministic: bool = False
    """Snapshot opponents play their most likely action (true) or sample from their policy (false)."""
    eval_every: int = 25
    """Updates between evaluations against ``eval_opponent`` (0: only at the end)."""
    eval_pairs: int = 100
    """Duplicate deal pairs per evaluation (the same deals every time), played deterministically."""
    eval_opponent: str = "heuristic"
    """Agent spec evaluated against (``charts/margin_vs_<spec>``)."""
    eval_seed: int = 20_261_124
    """Master seed of the evaluation deals (eval.deals.generate_deals); not the seed of any reported figure."""
    checkpoint_every: int = 25
    """Updates between checkpoints (``checkpoint.pt`` and ``model.zip``)."""


# The batched env runs the compiled core, which plays the two-player game only: "three" (R21) is refused with the
# other choices, before args.yaml is written (it was refused later, and the run folder then asked for --resume).
_CHOICES = {"device": ("auto", "cpu", "cuda"), "rules": PRESET_NAMES, "activation": ("tanh", "relu")}
_POSITIVE = ("torch_threads", "total_steps", "num_envs", "num_steps", "learning_rate", "num_minibatches",
             "update_epochs", "clip_coef", "max_grad_norm", "snapshot_every", "pool_size", "eval_pairs",
             "checkpoint_every", "init_logit_scale")
_NON_NEGATIVE = ("ent_coef", "anchor_coef", "vf_coef", "eval_every", "gamma", "gae_lambda", "critic_warmup_updates")


# The update's figures are logged as losses/<name>, except these: the tags `sixtysix train` logs them under.
_FIGURE_TAGS = {"seconds": "charts/update_seconds", "explained_variance": "charts/explained_variance"}


# ====================================================================================== arguments
def _with_absolute_paths(args: Args) -> Args:
    """``args`` with ``init_model`` and ``init_suit`` as absolute paths, as args.yaml keeps them: ``--resume`` reads
    them again (the start model's value network, the anchor) from whatever folder it runs in."""
    changes: dict[str, str] = {}
    if args.init_model is not None:
        changes["init_model"] = str(Path(args.init_model).resolve())
    if args.init_suit is not None:
        changes["init_suit"] = "+".join(str(Path(part).resolve()) for part in args.init_suit.split("+"))
    return dataclasses.replace(args, **changes)


def args_from_mapping(values: Any, where: str = "config") -> Args:
    """Build and check :class:`Args` from a flat mapping (as read from YAML); errors name the key."""
    if values is None:
        values = {}
    if not isinstance(values, Mapping):
        raise ValueError(f"{where} must be a mapping of argument names to values, got {values!r}")
    args = Args()
    types = typing.get_type_hints(Args)
    for key, value in values.items():
        if key not in types:
            raise ValueError(f"unknown config key {key!r}; known keys: {', '.join(types)}")
        setattr(args, key, _convert(value, types[key], key))
    _check_args(args)
    return args


def _check_args(args: Args) -> None:
    for key, choices in _CHOICES.items():
        if getattr(args, key) not in choices:
            raise ValueError(f"config key {key!r} must be one of {', '.join(choices)}, got {getattr(args, key)!r}")
    for key in _POSITIVE:
        if not getattr(args, key) > 0:
            raise ValueError(f"config key {key!r} must be positive, got {getattr(args, key)!r}")
    check_eval_pairs("eval_pairs", args.eval_pairs)
    for key in _NON_NEGATIVE:
        if not getattr(args, key) >= 0:
            raise ValueError(f"config key {key!r} must be zero or more, got {getattr(args, key)!r}")
    for key in ("gamma", "gae_lambda"):
        if getattr(args, key) > 1:
            raise ValueError(f"config key {key!r} must lie in [0, 1], got {getattr(args, key)!r}")
    if args.target_kl is not None and args.target_kl <= 0:
        raise ValueError(f"config key 'target_kl' must be positive or null, got {args.target_kl!r}")
    for key in ("hidden", "critic_hidden"):
        widths = getattr(args, key)
        if not widths or any(width < 1 for width in widths):
            raise ValueError(f"config key {key!r} must list positive layer widths, got {widths!r}")
    rows = args.num_envs * args.num_steps
    if rows % args.num_minibatches:
        raise ValueError(f"config key 'num_minibatches' ({args.num_minibatches}) must divide the rollout's "
                         f"num_envs * num_steps = {rows} rows")
    unknown = sorted(set(args.opponents) - set(OPPONENT_KINDS))
    if unknown:
        raise ValueError(f"config key 'opponents.{unknown[0]}': unknown opponent kind; known: "
                         f"{', '.join(OPPONENT_KINDS)}")
    # A sum beyond any float (two weights of 1e308) would make every draw probability 0 or NaN at the first deal.
    if any(weight < 0 for weight in args.opponents.values()) or not 0 < sum(args.opponents.values()) < math.inf:
        raise ValueError(f"config key 'opponents' needs weights of zero or more with a positive finite sum, got "
                         f"{args.opponents!r}")
    check_run_name("run_name", args.run_name)
    check_seed("seed", args.seed, SEED_LIMIT)  # torch.manual_seed takes no negative seed
    if args.init_model is not None and not Path(args.init_model).is_file():
        raise ValueError(f"config key 'init_model': no model file {args.init_model!r}")
    if args.init_suit is not None:
        _check_init_suit(args)
    if args.anchor_coef > 0 and args.init_model is None and args.init_suit is None:
        raise ValueError("config key 'anchor_coef' keeps the policy near its start: it needs 'init_model' or "
                         "'init_suit'")
    check_agent_spec("eval_opponent", args.eval_opponent, Rules.preset(args.rules))


def _check_init_suit(args: Args) -> None:
    """``init_suit`` names loadable suit networks of the run's rules that record their q temperature."""
    from agents.suit import suit_paths

    if args.init_model is not None:
        raise ValueError("config keys 'init_model' and 'init_suit' exclude each other: the actor starts from an MLP "
                         "model or from suit networks, not both")
    if list(args.hidden) != Args.__dataclass_fields__["hidden"].default_factory():  # type: ignore[misc]
        raise ValueError(f"config key 'hidden' shapes the MLP actor, and with 'init_suit' the actor is the suit "
                         f"network: leave hidden out (the critic's widths are 'critic_hidden'), got {args.hidden!r}")
    paths = suit_paths(args.init_suit)
    for part in paths:
        if part.suffix != ".npz" or not part.is_file():
            raise ValueError(f"config key 'init_suit': no suit-network weights file {str(part)!r} (.npz)")
    try:
        rules = suit_start(args).rules
    except ValueError as error:
        raise ValueError(f"config key 'init_suit': {error}") from None
    if rules != Rules.preset(args.rules):
        raise ValueError(f"config key 'init_suit': {args.init_suit!r} was fitted for other rules "
                         f"({rules.preset_name or 'custom'}), the run is {args.rules!r}")


def load_args(path: str | Path | None, overrides: list[str] | None = None) -> Args:
    """Read a flat YAML config (``None``: the defaults) and apply ``key=value`` overrides (values read as YAML)."""
    values: dict[str, Any] = {}
    where = "config"
    if path is not None:
        loaded, where = read_yaml_file(path)
        if not isinstance(loaded, Mapping):
            raise ValueError(f"{where} must hold a mapping of argument names to values (python -m "
                             "train.vector_ppo --describe lists them)")
        values = dict(loaded)
    return args_from_mapping(_with_overrides(values, overrides), where)


def _with_overrides(values: dict[str, Any], overrides: list[str] | None) -> dict[str, Any]:
    """``values`` with ``key=value`` overrides applied (values read as YAML)."""
    values = dict(values)
    for override in overrides or []:
        key, sep, text = override.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"malformed override {override!r}: expected key=value (e.g. num_envs=256)")
        try:
            values[key.strip()] = strict_yaml_load(text) if text.strip() else ""
        except Exception as error:  # noqa: BLE001 - yaml's errors: report them as bad input
            raise ValueError(f"override {key.strip()!r}: value {text!r} is not valid YAML ({error})") from None
    return values


def describe_args() -> str:
    docs = field_docs(Args)
    lines = []
    for item in dataclasses.fields(Args):
        lines.append(f"{item.name}: {getattr(Args(), item.name)!r}")
        lines.append(f"    {docs.get(item.name, '')}")
    return "\n".join(lines)


# ====================================================================================== networks
def hidden_mlp(input_size: int, hidden: list[int], activation: str):
    """The hidden layers of an MLP: a ``Linear`` then the activation per width of ``hidden`` (no output layer)."""
    import torch

    from agents.ppo import torch_activation

    layers: list[Any] = []
    for width in hidden:
        layers += [torch.nn.Linear(input_size, width), torch_activation(activation)()]
        input_size = width
    return torch.nn.Sequential(*layers)


def _orthogonal(module: Any, gain: float) -> None:
    """sb3's initialisation: orthogonal weights, zero biases."""
    import torch

    for layer in module.modules():
        if isinstance(layer, torch.nn.Linear):
            torch.nn.init.orthogonal_(layer.weight, gain=gain)
            torch.nn.init.zeros_(layer.bias)


def _networks():
    """The torch module classes (built lazily: torch is imported only when training)."""
    import torch

    class Actor(torch.nn.Module):
        """The actor path of sb3-contrib's ``MaskableActorCriticPolicy`` MLP, with its parameter names:
        ``policy_net`` is ``mlp_extractor.policy_net``, ``action_net`` the logits layer."""

        def __init__(self, observation_size: int, num_actions: int, hidden: list[int], activation: str):
            super().__init__()
            self.policy_net = hidden_mlp(observation_size, hidden, activation)
            self.action_net = torch.nn.Linear(hidden[-1], num_actions)
            _orthogonal(self.policy_net, 2 ** 0.5)
            _orthogonal(self.action_net, 0.01)

        def forward(self, observations):
            return self.action_net(self.policy_net(observations))

    class Critic(torch.nn.Module):
        """The value of a state from the learner's side: observation row (+ privileged features) -> game points."""

        def __init__(self, input_size: int, hidden: list[int], activation: str):
            super().__init__()
            self.value_net = hidden_mlp(input_size, hidden, activation)
            self.value_head = torch.nn.Linear(hidden[-1], 1)
            _orthogonal(self.value_net, 2 ** 0.5)
            _orthogonal(self.value_head, 1.0)

        def forward(self, inputs):
            return self.value_head(self.value_net(inputs)).squeeze(-1)

    class SuitActor(torch.nn.Module):
        """Suit networks (train/suit_network.py) as one actor: the mean of their logits, as
        :class:`agents.suit.SuitEnsemble` plays them. ``logit_scale`` multiplies the last layers (so the logits)."""

        def __init__(self, weight_sets: list[dict[str, np.ndarray]], logit_scale: float = 1.0):
            super().__init__()
            from .suit_network import suit_network_from_weights

            self.members = torch.nn.ModuleList(
                suit_network_from_weights({name: array * logit_scale if name.startswith(SUIT_OUTPUT_LAYERS) else array
                                           for name, array in weights.items()})
                for weights in weight_sets)

        def forward(self, observations):
            return torch.stack([member(observations) for member in self.members]).mean(0)

        def numpy_weights(self) -> list[dict[str, np.ndarray]]:
            """Every member's weights by parameter name (as :class:`agents.suit.SuitNetwork` reads them)."""
            return [{name: tensor.detach().cpu().numpy().copy() for name, tensor in member.state_dict().items()}
                    for member in self.members]

    return Actor, Critic, SuitActor


# The suit network's output layers: its logits are linear in them (the cards' and marriages' head, the other head).
SUIT_OUTPUT_LAYERS = ("suit_head.2.", "other_head.")


def sb3_actor_state(actor: Any) -> dict[str, Any]:
    """The actor's weights under the parameter names of an sb3 ``MaskableActorCriticPolicy``."""
    state = {f"mlp_extractor.{key}": value for key, value in actor.policy_net.state_dict(prefix="policy_net.").items()}
    state.update(actor.action_net.state_dict(prefix="action_net."))
    return {key: value.detach().cpu().clone() for key, value in state.items()}


class SuitStart(typing.NamedTuple):
    """Where a suit actor starts (:attr:`Args.init_suit`)."""

    weights: list[dict[str, np.ndarray]]
    """Every member's weights by parameter name."""
    started_from: list[dict[str, Any]]
    """Every member's file and its header's provenance (recorded in the saved members' headers)."""
    temperature: float
    """The members' q temperature: game points per unit of logit."""
    rules: Rules
    """The rules they were fitted for."""


def suit_start(args: Args) -> SuitStart:
    """``init_suit``'s members, loaded once by :func:`agents.suit.load_suit_networks` (refused by name when a file
    is not a suit network, the members' rules differ or their headers lack one q temperature)."""
    from agents.ppo import reads_history
    from agents.suit import load_suit_networks, suit_header, suit_paths, suit_q_temperature

    paths = suit_paths(args.init_suit)
    network, rules = load_suit_networks(paths)
    if reads_history(network):
        raise ValueError(f"init_suit {args.init_suit!r} reads the history planes, which the vector environments' "
                         "observations do not hold")
    return SuitStart([member.weights for member in getattr(network, "members", [network])],
                     [{"path": str(part), "provenance": suit_header(part).get("provenance", {})} for part in paths],
                     suit_q_temperature(paths), rules)


def playing_network(actor: Any, activation: str):
    """What the actor plays as a NumPy network with ``logits`` (:class:`agents.ppo.ActorNetwork` of an MLP actor,
    :class:`agents.suit.SuitNetwork` or :class:`agents.suit.SuitEnsemble` of a suit actor)."""
    if hasattr(actor, "members"):
        from agents.suit import SuitEnsemble, SuitNetwork

        members = [SuitNetwork(weights) for weights in actor.numpy_weights()]
        return members[0] if len(members) == 1 else SuitEnsemble(members)
    return actor_network(actor, activation)


def save_suit_members(actor: Any, paths: list[Path], rules: Rules, started_from: list[dict[str, Any]],
                      temperature: float, provenance: dict[str, Any]) -> None:
    """Write each member of a suit actor to its weights file (atomically), the header holding ``provenance``, where
    the member started and the q temperature: the run passes the start's over ``init_logit_scale`` (the scale is in
    the weights, so logits times it are game points on the start's scale)."""
    from agents.suit import save_suit_weights

    for path, weights, start in zip(paths, actor.numpy_weights(), started_from, strict=True):
        save_suit_weights(path, weights, rules, {**provenance, "temperature": temperature, "init": start})


def actor_network(actor: Any, activation: str):
    """The NumPy :class:`agents.ppo.ActorNetwork` of the actor (what ``ppo:path=`` plays)."""
    from agents.ppo import ActorNetwork

    return ActorNetwork.from_state_dict(sb3_actor_state(actor), activation)


def masked_logits(logits: Any, masks: Any) -> Any:
    """Illegal actions get a logit of -1e8 (probability 0, as sb3-contrib's ``MaskableCategorical``)."""
    return logits.masked_fill(~masks, -1e8)


def load_initial_weights(actor: Any, critic: Any, policy: Mapping[str, Any], observation_size: int,
                         same_critic_shape: bool, logit_scale: float = 1.0) -> None:
    """Copy an sb3 policy's actor into ``actor`` (its action logits times ``logit_scale``); its value network into
    the critic's observation columns when the shapes agree (the privileged columns start at 0, so the critic
    starts as the model's own)."""
    import torch

    actor.policy_net.load_state_dict({key[len("mlp_extractor.policy_net."):]: value for key, value in policy.items()
                                      if key.startswith("mlp_extractor.policy_net.")})
    actor.action_net.load_state_dict({"weight": policy["action_net.weight"] * logit_scale,
                                      "bias": policy["action_net.bias"] * logit_scale})
    if not same_critic_shape:
        return
    with torch.no_grad():
        linear_index = 0
        for layer in critic.value_net:
            if isinstance(layer, torch.nn.Linear):
                weight = policy[f"mlp_extractor.value_net.{linear_index}.weight"]
                if linear_index == 0:
                    layer.weight.zero_()
                    layer.weight[:, :observation_size] = weight
                else:
                    layer.weight.copy_(weight)
                layer.bias.copy_(policy[f"mlp_extractor.value_net.{linear_index}.bias"])
            linear_index += 1
        critic.value_head.weight.copy_(policy["value_net.weight"])
        critic.value_head.bias.copy_(policy["value_net.bias"])


def save_maskable_ppo(actor: Any, path: Path, rules: Rules, args: Args, init_policy: Mapping[str, Any] | None,
                      **extra: Any) -> None:
    """Write the actor as a MaskablePPO zip with our metadata (``ppo:path=`` plays it, network on every decision).

    The zip's value network is ``init_model``'s (or a fresh one): the privileged critic takes inputs a plain
    ``MaskablePPO`` policy does not have, so it stays in ``checkpoint.pt``."""
    from agents.ppo import add_metadata_to_zip, model_metadata

    from .export import new_policy_model

    model = new_policy_model(rules, args.hidden, args.activation)
    if init_policy is not None:
        model.policy.load_state_dict(init_policy)
    missing, unexpected = model.policy.load_state_dict(sb3_actor_state(actor), strict=False)
    assert not unexpected, unexpected  # the actor's names are sb3's (a bug otherwise)
    buffer = io.BytesIO()
    model.save(buffer)
    # value_net_trained: the zip's value network is not this run's critic, so agents.ppo.load_critic refuses it.
    metadata = model_metadata(rules, args.activation, list(args.hidden), phase2="policy", run=args.run_name,
                              seed=args.seed, value_net_trained=False, **extra)
    write_bytes_atomic(path, add_metadata_to_zip(buffer.getvalue(), metadata, actor_network(actor, args.activation)))


# ====================================================================================== the opponents
def sample_masked(logits: Any, masks: Any, deterministic: bool) -> Any:
    """One action per row: the most likely legal one, or a sample of the masked softmax."""
    import torch

    logits = masked_logits(logits, masks)
    if deterministic:
        return logits.argmax(dim=1)
    return torch.distributions.Categorical(logits=logits).sample()


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of bool ``masks``."""
    keys = rng.random(masks.shape)
    keys[~masks] = -1.0
    return keys.argmax(axis=1)


# ====================================================================================== the learner
class VectorPpo:
    """One run: :meth:`train` to ``total_steps`` (or from the run directory's checkpoint with ``resume``)."""

    def __init__(self, args: Args, resume: bool = False, quiet: bool = False):
        self.args = args
        self.rules = Rules.preset(args.rules)
        self.run_dir = Path(args.out_dir) / args.run_name
        self.resume = resume
        self.quiet = quiet
        self.eval_history: list[dict[str, Any]] = []
        # What the run writes and the agent spec that plays it: a MaskablePPO zip, or a suit actor's members.
        if args.init_suit:
            from agents.suit import suit_paths

            self.model_paths = [self.run_dir / f"suit_member_{index}.npz"
                                for index in range(len(suit_paths(args.init_suit)))]
            self.model_spec = "suit:path=" + "+".join(map(str, self.model_paths))
        else:
            self.model_paths = [self.run_dir / "model.zip"]
            self.model_spec = f"ppo:path={self.model_paths[0]},phase2=policy"

    @classmethod
    def resume_run(cls, run_dir: str | Path, overrides: list[str] | None = None, quiet: bool = False) -> "VectorPpo":
        run_dir = Path(run_dir)
        if not (run_dir / "args.yaml").is_file():
            raise ValueError(f"{run_dir} is not a vector PPO run directory (no args.yaml)")
        # The checkpoint holds networks of its shapes and counts updates of its size: only what changes neither may
        # be overridden (as `sixtysix train --resume` allows only its step count and progress bar).
        allowed = ("total_steps", "progress_bar", "torch_threads")
        for override in overrides or []:
            key = override.partition("=")[0].strip()
            if key not in allowed:
                raise ValueError(f"cannot change {key!r} when resuming (the run continues with its own args.yaml); "
                                 f"allowed: {', '.join(allowed)}")
        loaded, where = read_yaml_file(run_dir / "args.yaml")
        if not isinstance(loaded, Mapping):
            raise ValueError(f"{where} must hold a mapping of argument names to values; it is damaged, so the run "
                             "cannot be resumed")
        values = dict(loaded)
        values.update(out_dir=str(run_dir.parent), run_name=run_dir.name)
        return cls(args_from_mapping(_with_overrides(values, overrides), f"run {str(run_dir)!r}"), resume=True,
                   quiet=quiet)

    # ------------------------------------------------------------------ logging
    def _log(self, tag: str, value: float, step: int) -> None:
        self.writer.add_scalar(tag, value, step)
        self._scalars.add(step, tag, f"{float(value):.6g}")

    def evaluate(self, actor: Any, step: int) -> dict[str, Any]:
        """The deterministic actor against ``eval_opponent`` on ``eval_pairs`` fixed duplicate pairs."""
        from agents.ppo import PolicyAgent
        from agents.registry import make_agent
        from eval.deals import generate_deals

        from .selfplay import duplicate_margin

        learner = PolicyAgent(playing_network(actor, self.args.activation), self.rules, deterministic=True, seed=0,
                              where="learner", phase2="policy")
        deals = generate_deals(self.args.eval_seed, self.args.eval_pairs, self.rules)
        started = time.perf_counter()
        figures = duplicate_margin(learner, make_agent(self.args.eval_opponent, seed=0), self.rules, deals,
                                   self.args.eval_seed)
        record = {"step": step, "opponent": self.args.eval_opponent, **figures,
                  "seconds": time.perf_counter() - started}
        with open(self.run_dir / "eval.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        spec = self.args.eval_opponent
        self._log(f"charts/margin_vs_{spec}", figures["margin"], step)
        for key in ("margin", "margin_ci_low", "margin_ci_high"):
            self._log(f"eval/{spec}/{key}", figures[key], step)  # the tags train/plots.py draws
        self.eval_history.append(record)
        return record

    # ------------------------------------------------------------------ training
    def train(self) -> Path:
        """Run (or continue) to ``total_steps``; returns the path of the final model (a suit actor's first member;
        :attr:`model_spec` is the agent spec that plays it)."""
        from .cpu import denormals_flushed

        with denormals_flushed():
            return self._train()

    def _train(self) -> Path:
        import torch
        from torch.utils.tensorboard import SummaryWriter

        from agents.pimc import policy_weights
        from agents.rule_based import HeuristicAgent
        from agents.solver import core_table
        from sixtysix_env import vector_env
        # The raw kernel, as the search agents call theirs: the states are the vector env's own, and the checked
        # ``heuristic_actions`` would check every row at every step.
        from sixtysix_env.core.heuristic import _heuristic_actions
        from sixtysix_env.core.policy import policy_actions
        from sixtysix_env.core.search import seed_kernels
        from sixtysix_env.observation import OBSERVATION_SIZE
        from sixtysix_env.actions import NUM_ACTIONS
        from sixtysix_env.vector import PRIVILEGED_SIZE

        from eval.deals import derive_seed

        args = self.args
        torch.set_num_threads(args.torch_threads)
        device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                              "cpu" if args.device == "auto" else args.device)
        if not self.resume and (self.run_dir / "args.yaml").exists():
            raise ValueError(f"run directory {str(self.run_dir)!r} already holds a run: continue it with --resume "
                             f"{self.run_dir}, or choose another name with --set run_name=...")
        # Files of a run whose args.yaml is gone: a new run would delete its model and logs (as `sixtysix train`
        # refuses them too).
        leftovers = [name for name in ("checkpoint.pt", *(path.name for path in self.model_paths), "scalars.csv",
                                       "eval.jsonl", "tb") if (self.run_dir / name).exists()]
        if leftovers and not self.resume:
            raise ValueError(f"run directory {str(self.run_dir)!r} holds {', '.join(leftovers)} of an earlier run but "
                             "no args.yaml: move them away, or choose another name with --set run_name=...")
        # Whatever can refuse the run is checked before the run directory is touched: a refused start leaves no
        # args.yaml behind that the next start would take for a run to continue with --resume.
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("config key 'device' is 'cuda', but torch finds no CUDA device (use 'auto' or 'cpu')")
        init_policy = (read_start_model(args.init_model, "init_model", self.rules, args.hidden, args.activation)
                       if args.init_model else None)
        if args.init_suit:
            suit_weights, suit_started_from, suit_temperature, _rules = suit_start(args)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(self.run_dir)
        checkpoint_path = self.run_dir / "checkpoint.pt"
        checkpoint = None
        if self.resume and checkpoint_path.is_file():
            checkpoint = read_checkpoint(checkpoint_path)
            if checkpoint["update"] > max(1, args.total_steps // (args.num_envs * args.num_steps)):
                # a total below what the run has trained would do nothing and write itself into args.yaml
                raise ValueError(f"run {str(self.run_dir)!r} has already trained {checkpoint['global_step']} steps "
                                 f"({checkpoint['update']} updates), more than total_steps {args.total_steps}: "
                                 "resume it with a total at least that large (--set total_steps=N)")
        elif self.resume and any(path.exists() for path in self.model_paths):
            # A saved model without its checkpoint: starting over would delete the model, so refuse rather than
            # guess (the two are written together, the model first).
            raise ValueError(f"run directory {str(self.run_dir)!r} holds {self.model_paths[0].name} but no "
                             "checkpoint.pt to continue from; move the model away to start the run over")
        else:  # a new run, or one killed before its first checkpoint: start over
            for stale in ("scalars.csv", "eval.jsonl", "model.zip"):
                (self.run_dir / stale).unlink(missing_ok=True)
            shutil.rmtree(self.run_dir / "tb", ignore_errors=True)  # its TensorBoard events too
        write_text_atomic(self.run_dir / "args.yaml", _args_yaml(_with_absolute_paths(args)))

        # Seeding (CleanRL): every generator from the master seed; a resumed run from (seed, update).
        start_update = 0 if checkpoint is None else checkpoint["update"]
        run_seed = args.seed if checkpoint is None else derive_seed(args.seed, "resume", start_update) % 2 ** 32
        random.seed(run_seed)
        np_rng = np.random.default_rng(run_seed)
        seed_kernels(run_seed)  # numba's generator: the compiled heuristic opponent samples hidden cards
        torch.manual_seed(run_seed)

        Actor, Critic, SuitActor = _networks()
        critic_input = OBSERVATION_SIZE + (PRIVILEGED_SIZE if args.privileged_critic else 0)
        if args.init_suit:
            make_actor = lambda: SuitActor(suit_weights, args.init_logit_scale)  # noqa: E731
        else:
            make_actor = lambda: Actor(OBSERVATION_SIZE, NUM_ACTIONS, args.hidden, args.activation)  # noqa: E731
        actor = make_actor().to(device)
        critic = Critic(critic_input, args.critic_hidden, args.activation).to(device)
        if init_policy is not None and checkpoint is None:
            load_initial_weights(actor, critic, init_policy, OBSERVATION_SIZE,
                                 list(args.critic_hidden) == list(args.hidden), args.init_logit_scale)
        optimizer = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=args.learning_rate,
                                     eps=1e-5)
        anchor = None  # the start policy, frozen (anchor_coef)
        if args.anchor_coef > 0:
            anchor = make_actor().to(device)
            if init_policy is not None:
                load_initial_weights(anchor, None, init_policy, OBSERVATION_SIZE, same_critic_shape=False,
                                     logit_scale=args.init_logit_scale)
            anchor.requires_grad_(False)
        snapshot_class = make_actor
        # The pool: the ids of the last ``pool_size`` snapshots; ``snapshots`` also keeps the ones that left the
        # pool while a deal still plays against them.
        snapshots: dict[int, Any] = {}
        pool_ids: list[int] = []
        opponent_of = np.zeros(args.num_envs, dtype=np.int64)
        if checkpoint is not None:
            try:  # networks of other shapes (an edited args.yaml, another run's checkpoint): name the file
                actor.load_state_dict(checkpoint["actor"])
                critic.load_state_dict(checkpoint["critic"])
                optimizer.load_state_dict(checkpoint["optimizer"])
                for snapshot_id, state in checkpoint["pool"].items():
                    snapshots[int(snapshot_id)] = snapshot_class().to(device)
                    snapshots[int(snapshot_id)].load_state_dict(state)
                    snapshots[int(snapshot_id)].requires_grad_(False)
            except (RuntimeError, TypeError, ValueError, KeyError) as error:
                raise ValueError(f"checkpoint {str(checkpoint_path)!r} does not fit the networks of the run's "
                                 f"args.yaml ({one_line_reason(error)}); the run cannot be resumed from it") from None
            pool_ids = list(snapshots)
            next_snapshot_id = checkpoint["next_snapshot_id"]
            global_step, learner_steps = checkpoint["global_step"], checkpoint["learner_steps"]
            truncate_log(self.run_dir / "eval.jsonl", global_step)
        else:
            next_snapshot_id, global_step, learner_steps = 0, 0, 0

        def add_snapshot() -> None:
            nonlocal next_snapshot_id
            snapshot = snapshot_class().to(device)
            snapshot.load_state_dict(actor.state_dict())
            snapshot.requires_grad_(False)
            snapshots[next_snapshot_id] = snapshot
            pool_ids.append(next_snapshot_id)
            next_snapshot_id += 1
            del pool_ids[:-args.pool_size]
            in_use = set(pool_ids) | set(opponent_of.tolist())
            for snapshot_id in [key for key in snapshots if key not in in_use]:
                del snapshots[snapshot_id]

        if not pool_ids:
            add_snapshot()

        envs = vector_env(args.num_envs, rules=self.rules, self_play=True, autoreset_mode="SameStep", copy=False)
        observations, infos = envs.reset(seed=run_seed)
        count, steps = args.num_envs, args.num_steps
        rows = np.arange(count)
        kinds = list(args.opponents)
        kind_weights = np.array([args.opponents[kind] for kind in kinds], dtype=np.float64)
        kind_weights /= kind_weights.sum()
        playout_weights = policy_weights()
        heuristic_params = HeuristicAgent().core_params()
        table = core_table()

        def draw_opponents(where: np.ndarray) -> None:
            """A new learner seat and opponent for the deals of ``where`` (their deal just started)."""
            size = int(where.sum())
            learner_seats[where] = np_rng.integers(0, 2, size)
            drawn = np_rng.choice(len(kinds), size=size, p=kind_weights)
            members = np.empty(size, dtype=np.int64)
            ids = np.array(pool_ids, dtype=np.int64)
            for position, kind_index in enumerate(drawn):
                kind = kinds[kind_index]
                members[position] = (_RANDOM if kind == "random" else _POLICY if kind == "policy" else
                                     _HEURISTIC if kind == "heuristic" else
                                     ids[-1] if kind == "self" else ids[np_rng.integers(len(ids))])
            opponent_of[where] = members
            opponent_kind[where] = drawn

        learner_seats = np.zeros(count, dtype=np.int64)
        opponent_kind = np.zeros(count, dtype=np.int64)
        draw_opponents(np.ones(count, dtype=bool))

        # Rollout storage: the learner-side critic input of every step (its first OBSERVATION_SIZE columns are
        # the learner's observation row, the actor's input where the learner decides).
        critic_rows = torch.zeros((steps, count, critic_input), device=device)
        masks = torch.zeros((steps, count, NUM_ACTIONS), dtype=torch.bool, device=device)
        is_learner = torch.zeros((steps, count), dtype=torch.bool, device=device)
        actions_taken = torch.zeros((steps, count), dtype=torch.long, device=device)
        logprobs = torch.zeros((steps, count), device=device)
        rewards = torch.zeros((steps, count), device=device)
        dones = torch.zeros((steps, count), device=device)
        values = torch.zeros((steps, count), device=device)
        anchor_logprobs = (torch.zeros((steps, count, NUM_ACTIONS), device=device) if anchor is not None
                           else None)

        def learner_side_inputs() -> np.ndarray:
            seat_rows, _ = envs.seat_observations(learner_seats)
            if not args.privileged_critic:
                return seat_rows
            return np.concatenate([seat_rows, envs.privileged_observations(learner_seats)], axis=1)

        num_updates = max(1, args.total_steps // (count * steps))
        progress = None
        if args.progress_bar and not self.quiet:
            from tqdm import tqdm

            progress = tqdm(total=num_updates, initial=start_update, desc="vector ppo", unit="update")
        started = time.perf_counter()
        steps_at_start = global_step
        returns_by_kind: dict[str, list[float]] = {kind: [] for kind in kinds}
        model_path = self.model_paths[0]
        # Opened last, just before the loop whose `finally` closes them; a resumed run redoes the steps after its
        # checkpoint, so their rows go (TensorBoard: purge_step).
        self._scalars = ScalarsCsv(self.run_dir / "scalars.csv", keep_through=global_step if checkpoint else None)
        # The checkpoint's own step was logged before it was written: purge only what came after it.
        self.writer = SummaryWriter(str(self.run_dir / "tb"), purge_step=global_step + 1 if checkpoint else None)
        if checkpoint is None:
            self.writer.add_text("args", "\n".join(f"    {line}" for line in _args_yaml(args).splitlines()))
        try:
            for update in range(start_update + 1, num_updates + 1):
                if args.anneal_lr:
                    optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - (update - 1) / num_updates)
                rollout_started = time.perf_counter()
                for step in range(steps):
                    seats = infos["seat"]
                    legal = infos["action_mask"]
                    learner_rows = seats == learner_seats
                    inputs = torch.from_numpy(learner_side_inputs()).to(device)
                    critic_rows[step] = inputs
                    masks[step] = torch.from_numpy(legal).to(device)
                    is_learner[step] = torch.from_numpy(learner_rows).to(device)
                    chosen = np.zeros(count, dtype=np.int64)
                    with torch.no_grad():
                        values[step] = critic(inputs)
                        mine = torch.from_numpy(np.flatnonzero(learner_rows)).to(device)
                        if mine.numel():  # with few envs, the opponents may be to move in every one of them
                            learner_inputs, learner_masks = inputs[mine, :OBSERVATION_SIZE], masks[step][mine]
                            logits = masked_logits(actor(learner_inputs), learner_masks)
                            distribution = torch.distributions.Categorical(logits=logits)
                            sampled = distribution.sample()
                            actions_taken[step, mine] = sampled
                            logprobs[step, mine] = distribution.log_prob(sampled)
                            chosen[learner_rows] = sampled.cpu().numpy()
                            if anchor is not None:
                                anchor_logprobs[step, mine] = torch.log_softmax(
                                    masked_logits(anchor(learner_inputs), learner_masks), dim=1)
                        theirs = ~learner_rows
                        for snapshot_id in np.unique(opponent_of[theirs]):
                            where = np.flatnonzero(theirs & (opponent_of == snapshot_id))
                            if snapshot_id == _RANDOM:
                                chosen[where] = random_legal(legal[where], np_rng)
                            elif snapshot_id == _POLICY:
                                policy_actions(envs.core_states(), where.astype(np.int64), playout_weights, chosen)
                            elif snapshot_id == _HEURISTIC:
                                _heuristic_actions(envs.core_states(), where.astype(np.int64), heuristic_params,
                                                   table.entries, table.nodes, chosen)
                            else:
                                snapshot = snapshots[int(snapshot_id)]
                                snapshot_logits = snapshot(torch.from_numpy(observations[where]).to(device))
                                chosen[where] = sample_masked(snapshot_logits,
                                                              torch.from_numpy(legal[where]).to(device),
                                                              args.snapshot_deterministic).cpu().numpy()
                    observations, seat_rewards, terminations, _truncations, infos = envs.step(chosen)
                    learner_rewards = seat_rewards[rows, learner_seats]
                    rewards[step] = torch.from_numpy(learner_rewards.astype(np.float32)).to(device)
                    dones[step] = torch.from_numpy(terminations.astype(np.float32)).to(device)
                    global_step += count
                    learner_steps += int(learner_rows.sum())
                    if terminations.any():
                        for kind_index in np.unique(opponent_kind[terminations]):
                            ended = terminations & (opponent_kind == kind_index)
                            returns_by_kind[kinds[kind_index]].extend(learner_rewards[ended].tolist())
                        draw_opponents(terminations)
                rollout_seconds = time.perf_counter() - rollout_started

                # GAE over every step of a deal, from the learner's side (the opponent's moves are environment).
                with torch.no_grad():
                    next_value = critic(torch.from_numpy(learner_side_inputs()).to(device))
                    advantages = torch.zeros_like(rewards)
                    last = torch.zeros(count, device=device)
                    for step in reversed(range(steps)):
                        following = next_value if step == steps - 1 else values[step + 1]
                        alive = 1.0 - dones[step]
                        delta = rewards[step] + args.gamma * following * alive - values[step]
                        last = delta + args.gamma * args.gae_lambda * alive * last
                        advantages[step] = last
                    returns = advantages + values

                flat_inputs = critic_rows.reshape(-1, critic_input)
                flat = {"masks": masks.reshape(-1, NUM_ACTIONS), "learner": is_learner.reshape(-1),
                        "actions": actions_taken.reshape(-1), "logprobs": logprobs.reshape(-1),
                        "advantages": advantages.reshape(-1), "returns": returns.reshape(-1),
                        "values": values.reshape(-1)}
                if anchor_logprobs is not None:
                    flat["anchor_logprobs"] = anchor_logprobs.reshape(-1, NUM_ACTIONS)
                figures = ppo_update(actor, critic, optimizer, flat_inputs, flat, args, OBSERVATION_SIZE,
                                     train_actor=update > args.critic_warmup_updates)
                if update % args.snapshot_every == 0:
                    add_snapshot()

                elapsed = time.perf_counter() - started
                self._log("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
                self._log("charts/SPS", (global_step - steps_at_start) / elapsed, global_step)
                self._log("charts/learner_SPS", int(is_learner.sum()) / max(rollout_seconds + figures["seconds"], 1e-9),
                          global_step)
                self._log("charts/rollout_seconds", rollout_seconds, global_step)
                self._log("charts/learner_steps", learner_steps, global_step)
                self._log("charts/pool_size", len(pool_ids), global_step)
                for key, value in figures.items():
                    self._log(_FIGURE_TAGS.get(key, f"losses/{key}"), value, global_step)
                all_returns = [value for values_list in returns_by_kind.values() for value in values_list]
                if all_returns:
                    self._log("charts/episodic_return", float(np.mean(all_returns)), global_step)
                for kind, kind_returns in returns_by_kind.items():
                    if kind_returns:
                        self._log(f"opponents/{kind}/return", float(np.mean(kind_returns)), global_step)
                        self._log(f"charts/return_vs_{kind}", float(np.mean(kind_returns)), global_step)
                    kind_returns.clear()
                last_update = update == num_updates
                if (args.eval_every and update % args.eval_every == 0) or last_update:
                    record = self.evaluate(actor, global_step)
                    if progress is not None:
                        progress.write(f"step {global_step:,}: margin vs {args.eval_opponent} "
                                       f"{record['margin']:+.3f} [{record['margin_ci_low']:+.3f}, "
                                       f"{record['margin_ci_high']:+.3f}]")
                if update % args.checkpoint_every == 0 or last_update:
                    training = (f"vector PPO with a {'privileged ' if args.privileged_critic else ''}critic "
                                f"(train/vector_ppo.py), {global_step:,} env steps from "
                                f"{args.init_model or args.init_suit or 'scratch'}")
                    if args.init_suit:
                        save_suit_members(actor, self.model_paths, self.rules, suit_started_from,
                                          suit_temperature / args.init_logit_scale,
                                          {"training": training, "run": args.run_name, "seed": args.seed,
                                           "trained_steps": global_step, "learner_decisions": learner_steps,
                                           "opponents": dict(args.opponents), "learning_rate": args.learning_rate})
                    else:
                        save_maskable_ppo(actor, model_path, self.rules, args, init_policy,
                                          trained_steps=global_step, learner_decisions=learner_steps,
                                          training=training)
                    self._save_checkpoint(checkpoint_path, actor, critic, optimizer,
                                          {key: snapshots[key] for key in pool_ids}, next_snapshot_id, update,
                                          global_step, learner_steps)
                    self._scalars.flush()
                if progress is not None:
                    progress.set_postfix(SPS=f"{(global_step - steps_at_start) / elapsed:,.0f}",
                                         ret=f"{np.mean(all_returns):+.2f}" if all_returns else "-")
                    progress.update(1)
        finally:
            if progress is not None:
                progress.close()
            self.writer.close()
            self._scalars.close()
        self.steps_per_second = (global_step - steps_at_start) / max(time.perf_counter() - started, 1e-9)
        from .plots import learning_curve_png

        write_bytes_atomic(self.run_dir / "learning_curve.png",
                           learning_curve_png(self.run_dir, title=f"vector PPO: {args.run_name}",
                                              step_label="environment steps (both seats)"))
        return model_path

    def _save_checkpoint(self, path: Path, actor: Any, critic: Any, optimizer: Any, pool: dict[int, Any],
                         next_snapshot_id: int, update: int, global_step: int, learner_steps: int) -> None:
        import torch

        buffer = io.BytesIO()
        torch.save({"actor": actor.state_dict(), "critic": critic.state_dict(), "optimizer": optimizer.state_dict(),
                    "pool": {snapshot_id: snapshot.state_dict() for snapshot_id, snapshot in pool.items()},
                    "next_snapshot_id": next_snapshot_id, "update": update, "global_step": global_step,
                    "learner_steps": learner_steps}, buffer)
        write_bytes_atomic(path, buffer.getvalue())


CHECKPOINT_KEYS = ("actor", "critic", "optimizer", "pool", "next_snapshot_id", "update", "global_step",
                   "learner_steps")


def read_checkpoint(path: Path) -> dict[str, Any]:
    """A run's ``checkpoint.pt`` as :meth:`VectorPpo._save_checkpoint` writes it: tensors, numbers and dicts
    only, so it is read without unpickling code (``weights_only=True``); a damaged or foreign file is a
    ``ValueError`` naming it."""
    import pickle
    import zipfile

    import torch

    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError) as error:
        raise ValueError(f"checkpoint {str(path)!r} cannot be read ({one_line_reason(error)}); the run cannot be "
                         "resumed from it") from None
    try:
        check_keys(checkpoint, "checkpoint", CHECKPOINT_KEYS)
        for key in ("next_snapshot_id", "update", "global_step", "learner_steps"):
            require_int(checkpoint[key], f"checkpoint {key}", 0)
        for key in ("actor", "critic", "optimizer", "pool"):
            if not isinstance(checkpoint[key], dict):
                raise ValueError(f"checkpoint {key} must be a state dict")
    except ValueError as error:
        raise ValueError(f"checkpoint {str(path)!r} is not a train-vector checkpoint ({error})") from None
    return checkpoint


def ppo_update(actor: Any, critic: Any, optimizer: Any, inputs: Any, batch: dict[str, Any], args: Args,
               observation_size: int, train_actor: bool = True) -> dict[str, float]:
    """The clipped PPO update on one rollout: the policy loss on the learner's decisions, the value loss on every
    row (only the value loss when not ``train_actor``: the critic's warm-up). Returns the losses and approximate KL
    of its last minibatch (as CleanRL logs them), the clip fraction over all its minibatches, the explained variance
    and the time it took."""
    import torch

    started = time.perf_counter()
    size = inputs.shape[0]
    minibatch = size // args.num_minibatches
    clip_fractions: list[float] = []
    figures: dict[str, float] = {}
    for _epoch in range(args.update_epochs):
        order = torch.randperm(size, device=inputs.device)
        for start in range(0, size, minibatch):
            index = order[start:start + minibatch]
            new_values = critic(inputs[index])
            value_loss = 0.5 * ((new_values - batch["returns"][index]) ** 2).mean()
            index = index[batch["learner"][index]]
            if index.numel() == 0:  # no learner decision in this minibatch: only the critic learns from it
                optimizer.zero_grad()
                (args.vf_coef * value_loss).backward()
                torch.nn.utils.clip_grad_norm_(critic.parameters(), args.max_grad_norm)
                optimizer.step()
                figures["value_loss"] = value_loss.item()
                continue
            logits = masked_logits(actor(inputs[index, :observation_size]), batch["masks"][index])
            distribution = torch.distributions.Categorical(logits=logits)
            new_logprobs = distribution.log_prob(batch["actions"][index])
            log_ratio = new_logprobs - batch["logprobs"][index]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()
                clip_fractions.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
            advantages = batch["advantages"][index]
            if args.norm_adv and len(advantages) > 1:
                advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
            policy_loss = torch.max(-advantages * ratio,
                                    -advantages * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            entropy = distribution.entropy().mean()
            loss = policy_loss - args.ent_coef * entropy + args.vf_coef * value_loss
            anchor_kl = None
            if "anchor_logprobs" in batch and args.anchor_coef > 0:
                start = batch["anchor_logprobs"][index]  # illegal actions: probability 0 in both
                anchor_kl = (start.exp() * (start - torch.log_softmax(logits, dim=1))).sum(1).mean()
                loss = loss + args.anchor_coef * anchor_kl
            if not train_actor:
                loss = args.vf_coef * value_loss  # the actor gets no gradient, so Adam leaves it as it is
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(list(actor.parameters()) + list(critic.parameters()), args.max_grad_norm)
            optimizer.step()
            figures = {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(),
                       "entropy": entropy.item(), "approx_kl": approx_kl.item()}
            if anchor_kl is not None:
                figures["anchor_kl"] = anchor_kl.item()
        if args.target_kl is not None and figures.get("approx_kl", 0.0) > args.target_kl:
            break
    returns, values = batch["returns"], batch["values"]
    variance = returns.var().item()
    figures["clipfrac"] = float(np.mean(clip_fractions)) if clip_fractions else float("nan")
    figures["explained_variance"] = float("nan") if variance == 0 else 1 - (returns - values).var().item() / variance
    figures["seconds"] = time.perf_counter() - started
    return figures


# ====================================================================================== files
def _args_yaml(args: Args) -> str:
    import yaml

    return yaml.safe_dump(dataclasses.asdict(args), sort_keys=False, default_flow_style=None)


# ====================================================================================== command line
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sixtysix train-vector",
                                     description="PPO on the batched environment with a privileged critic")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", help="YAML config file of arguments (configs/vector_ppo.yaml)")
    source.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its checkpoint.pt")
    source.add_argument("--describe", action="store_true", help="list every argument with its meaning and exit")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override an argument, e.g. --set num_envs=256 (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    options = build_parser().parse_args(argv)
    if options.describe:
        print(describe_args())
        return 0
    if options.resume:
        learner = VectorPpo.resume_run(options.resume, options.overrides, quiet=options.quiet)
    else:
        if not options.config:
            print("sixtysix train-vector: give --config FILE, --resume RUN_DIR or --describe", file=sys.stderr)
            return 2
        learner = VectorPpo(load_args(options.config, options.overrides), quiet=options.quiet)
    final = learner.train()
    print(f"model: {final} (play it: sixtysix match \"{learner.model_spec}\" heuristic)")
    print(f"env steps/s: {learner.steps_per_second:,.0f}; TensorBoard: tensorboard --logdir {learner.run_dir / 'tb'}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, OSError) as error:
        print(f"train-vector: error: {error}", file=sys.stderr)
        sys.exit(2)


__all__ = ["Args", "SUIT_OUTPUT_LAYERS", "SuitStart", "VectorPpo", "args_from_mapping", "describe_args", "load_args",
           "load_initial_weights", "main", "playing_network", "ppo_update", "random_legal", "save_maskable_ppo",
           "save_suit_members", "sb3_actor_state", "suit_start"]
