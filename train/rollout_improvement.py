"""Rollout policy improvement: measure every action by playing the real deal on, then fit the network to the better
policy (one step of policy iteration, as in Tesauro and Galperin's backgammon rollouts and the Monte Carlo
Q-targets of DouZero).

Cloning a search teacher's single choices (``train.imitation``) gives noisy labels: pimc's choice changes from
seed to seed when two actions are close, and a network that imitates it got worse (docs/training.md). Here each
recorded position gets a *value for every legal action* instead:

1. ``record``: the policy being improved (``--policy``, the hybrid ``ppo`` by default) plays ``--opponent``
   (``heuristic``) on seeded deals, seats and dealers alternating (the policy deals in half of them). At each
   decision of the policy's seat with a choice that the network plays (not the endgame it delegates,
   :func:`agents.ppo.delegated`) the *true* game is cloned once per
   legal action, the action applied and the deal played to its end by the same two agents (reseeded identically
   for every action: common random numbers). The game points (R16) from the decider's side are that action's
   value. A position's hidden cards are the real ones, so averaged over positions with the same observation the
   values estimate Q(observation, action) under the true posterior of the hidden cards, without the strategy
   fusion of a perfect-information search; within one position the actions are compared on the same cards.
   ``--valuer pimc:prior=none`` values the same positions by a search instead: PIMC's mean over the layouts it
   samples from the decider's information set (biased by strategy fusion, but a function of the observation, so
   much less noisy than one rollout).
2. ``improve``: the network's logits are fitted, by squared error over the legal actions (each side centred, so
   only differences count), to ``log pi_old(a|o) + A(o, a) / temperature``, where ``A`` is the action's value
   minus the mean over the legal actions. The fit averages the noisy per-position values into E[A | o], so the
   new policy is pi_old reweighted by exp(Q / temperature) (the regularised improvement step of MPO / KL-constrained
   policy iteration): a large ``temperature`` keeps the old policy, a small one plays the best-valued action.
   The true objective is unchanged: the values are the deal's game points.

::

    python -m train.rollout_improvement record --deals 6000 --workers 2 --out rollouts.npz
    python -m train.rollout_improvement improve --model models/ppo_standard.zip --data rollouts.npz \\
        --temperature 0.25 --out improved.zip

Files are written atomically; the improved model is a ``ppo:path=...`` agent with the source's metadata plus
``improved_from`` and the fit's figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.ppo import InfosetEncoder, delegated
from agents.registry import agent_for_rules, make_agent
from eval.deals import derive_seed
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.game import Game
from sixtysix_env.infoset import InformationSet
from sixtysix_env.observation import OBSERVATION_SIZE
from sixtysix_env.rules import Rules
from sixtysix_env.schema import finite_float
from train.recorded import (
    DecisionTable, check_refit_paths, held_out_split, load_refit_data, refit_saved_model,
    run_deal_chunks, two_player_rules,
)

DATA_FIELDS = ("observations", "masks", "values", "deals")
CHUNK_DEALS = 50  # deals per work unit (progress granularity)
LOG_POLICY_FLOOR = -8.0  # log-probabilities of the old policy below this count as this


@dataclass
class RolloutData(DecisionTable):
    """One row per recorded decision: the decider's observation, the legal actions and each one's rollout value."""

    FIELDS = DATA_FIELDS
    WHAT = "rollout data"

    observations: np.ndarray  # float32 (N, OBSERVATION_SIZE)
    masks: np.ndarray  # bool (N, NUM_ACTIONS): the legal actions
    # float32 (N, NUM_ACTIONS): game points after each legal action (0 where illegal; NaN for a legal action a
    # pruning valuer dropped as clearly worse, which the fit counts as the row's worst valued action: valued_values)
    values: np.ndarray
    deals: np.ndarray  # int64 (N,): the deal each decision comes from (validation holds out whole deals)

    @classmethod
    def load(cls, path: Path) -> "RolloutData":
        data = cls.read(path)
        if data.observations.ndim != 2 or data.observations.shape[1] != OBSERVATION_SIZE:
            raise ValueError(f"rollout data {str(path)!r} has observations of shape {data.observations.shape}, this "
                             f"code's observation has size {OBSERVATION_SIZE}: record it again")
        if (data.masks.shape != (len(data), NUM_ACTIONS) or data.values.shape != (len(data), NUM_ACTIONS)
                or data.deals.shape != (len(data),)):
            raise ValueError(f"rollout data {str(path)!r} has masks, values or deals of the wrong shape")
        if not data.masks.any(axis=1).all():  # its targets and figures would be NaN (0 / 0 over no legal action)
            raise ValueError(f"rollout data {str(path)!r} has a decision without a legal action")
        if not (data.masks & ~np.isnan(data.values)).any(axis=1).all():
            raise ValueError(f"rollout data {str(path)!r} has a decision with no valued legal action")
        return data


def valued_values(data: RolloutData) -> np.ndarray:
    """``data.values`` with each legal action a pruning valuer did not value (NaN: dropped as significantly worse
    than the best, ``expert``'s prune) counted as the worst valued action of its row, and 0 where illegal. A 0 there
    would read as a real value of 0 game points: in a losing position, the actions pruned as worst would then get
    the largest advantage."""
    valued = data.masks & ~np.isnan(data.values)
    worst = np.where(valued, data.values, np.inf).min(axis=1, keepdims=True)
    return np.where(data.masks, np.where(valued, data.values, worst), 0.0).astype(np.float32)


def _play_out(game: Game, agents: list, seed: int, rules: Rules) -> None:
    """Play ``game`` to its end with ``agents`` (index = seat), reseeded from ``seed`` (the same for every action)."""
    for seat, agent in enumerate(agents):
        agent.seed(derive_seed(seed, seat))
        agent.start_deal(seat, rules)
    while not game.is_over:
        game.apply(agents[game.current_player].act(InformationSet(game, game.current_player)))


def record_rollout_values(rules: Rules, policy: str, opponent: str, seed: int, first: int, count: int,
                          phase2: str = "endgame", valuer: str = "rollouts") -> RolloutData:
    """Deals ``first .. first+count-1`` (deck from ``derive_seed(seed, "deal", i)``, dealer ``i % 2``, the policy in
    seat ``(i // 2) % 2``, so it is dealer in half of the deals and forehand in the other half): every network
    decision of the policy's seat gets a value per legal action.

    ``valuer="rollouts"``: the real deal played on after each action (see the module doc). Otherwise ``valuer`` is
    the spec of a search agent with ``action_values(infoset)`` (``pimc``, ``rollout``, ``expert``): its mean value of
    each action over the hidden layouts it samples, a function of the decider's information only (no hidden card is
    used), so the values vary far less from one position to the next than a single rollout's."""
    encoder = InfosetEncoder(rules)
    search = None
    if valuer != "rollouts":
        search = make_agent(valuer)
        if not hasattr(search, "action_values"):
            raise ValueError(f"valuer {valuer!r} has no action_values (use 'rollouts', a pimc or a rollout spec)")
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    values: list[np.ndarray] = []
    deal_ids: list[int] = []
    for index in range(first, first + count):
        # Seat and dealer both alternate, over pairs of deals, so the policy is valued as dealer and as forehand.
        learner = (index // 2) % 2
        # The agents that play the deal, and a second pair that plays the rollouts (so the deal's agents keep their
        # own random streams whatever the rollouts do).
        players = [make_agent(opponent), make_agent(opponent)]
        players[learner] = make_agent(policy)
        rollout_agents = [make_agent(opponent), make_agent(opponent)]
        rollout_agents[learner] = make_agent(policy)
        for seat, agent in enumerate(players):
            agent.seed(derive_seed(seed, "agent", index, seat))
            agent.start_deal(seat, rules)
        game = Game.deal(rules, seed=derive_seed(seed, "deal", index), dealer=index % 2)
        decision = 0
        while not game.is_over:
            player = game.current_player
            infoset = InformationSet(game, player)
            legal = infoset.legal_actions
            if player == learner and len(legal) > 1 and not delegated(infoset, phase2):
                rollout_seed = derive_seed(seed, "rollout", index, decision)
                row = np.zeros(NUM_ACTIONS, dtype=np.float32)
                if search is not None:
                    search.seed(rollout_seed)
                    search.start_deal(player, rules)
                    row[legal] = np.nan  # a pruning search values only the actions it kept (see valued_values)
                    for action, value in search.action_values(infoset).items():
                        row[action] = value
                else:
                    for action in legal:
                        branch = game.clone()
                        branch.apply(action)
                        _play_out(branch, rollout_agents, rollout_seed, rules)
                        row[action] = branch.result.returns()[player]
                mask = np.zeros(NUM_ACTIONS, dtype=bool)
                mask[legal] = True
                observations.append(encoder.encode(infoset))
                masks.append(mask)
                values.append(row)
                deal_ids.append(index)
                decision += 1
            game.apply(players[player].act(infoset))
    data = RolloutData(
        observations=np.asarray(observations, dtype=np.float32).reshape(-1, OBSERVATION_SIZE),
        masks=np.asarray(masks, dtype=bool).reshape(-1, NUM_ACTIONS),
        values=np.asarray(values, dtype=np.float32).reshape(-1, NUM_ACTIONS),
        deals=np.asarray(deal_ids, dtype=np.int64),
    )
    data.rules = rules
    return data


def check_record_specs(rules: Rules, policy: str, opponent: str, valuer: str = "rollouts") -> None:
    """Build the agents a recording would (and let them start a deal of ``rules``), so a bad spec is a
    ``ValueError`` before the first deal rather than in a worker; a ``valuer`` search must have ``action_values``."""
    for spec in (policy, opponent):
        agent_for_rules(spec, rules)
    if valuer != "rollouts" and not hasattr(make_agent(valuer, seed=0), "action_values"):
        raise ValueError(f"valuer {valuer!r} has no action_values (use 'rollouts', a pimc or a rollout spec)")


def _record_chunk(arguments: tuple) -> RolloutData:
    return record_rollout_values(*arguments)


def collect_rollout_values(rules: Rules, policy: str, opponent: str, deals: int, seed: int, phase2: str,
                           workers: int = 1, progress: bool = True, valuer: str = "rollouts") -> RolloutData:
    """:func:`record_rollout_values` over ``deals`` deals, in ``workers`` processes, with a progress bar."""
    chunks = [(rules, policy, opponent, seed, first, min(CHUNK_DEALS, deals - first), phase2, valuer)
              for first in range(0, deals, CHUNK_DEALS)]
    parts = run_deal_chunks(_record_chunk, chunks, [chunk[5] for chunk in chunks], workers, "rollouts", progress)
    return RolloutData.concatenate(parts)


def improvement_targets(old_logits: np.ndarray, data: RolloutData, temperature: float,
                        advantage_clip: float | None = None) -> np.ndarray:
    """``log pi_old + A / temperature`` over the legal actions (``log pi_old`` floored at
    :data:`LOG_POLICY_FLOOR`, ``A`` clipped to +-``advantage_clip`` if given), centred per row (0 where illegal)."""
    masked = np.where(data.masks, old_logits, -np.inf)
    # Floored: the fit should spend its capacity on the actions in contention, not on how unlikely the rest are.
    log_policy = np.maximum(masked - np.logaddexp.reduce(masked, axis=1, keepdims=True), LOG_POLICY_FLOOR)
    legal_count = data.masks.sum(axis=1, keepdims=True)
    values = valued_values(data)
    mean_value = values.sum(axis=1, keepdims=True) / legal_count
    advantages = values - mean_value
    if advantage_clip is not None:
        # Clearly bad actions stay clearly bad at -clip; the fit then spends itself on the actions in contention.
        advantages = np.clip(advantages, -advantage_clip, advantage_clip)
    targets = np.where(data.masks, log_policy + advantages / temperature, 0.0)
    centre = targets.sum(axis=1, keepdims=True) / legal_count
    return np.where(data.masks, targets - centre, 0.0).astype(np.float32)


def improve_policy(policy: Any, data: RolloutData, temperature: float, epochs: int, batch_size: int,
                   learning_rate: float, validation_share: float, seed: int, progress: bool = True,
                   advantage_clip: float | None = None) -> dict[str, float]:
    """Fit an sb3 ``MaskableActorCriticPolicy``'s logits (in place) to :func:`improvement_targets` of its own
    current logits; returns the figures (loss, and how often the fitted policy's choice is the action with the best
    rollout value, before and after, on the positions of held-out deals)."""
    import torch

    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature!r}")
    if advantage_clip is not None and advantage_clip <= 0:
        raise ValueError(f"advantage_clip must be positive or None, got {advantage_clip!r}")
    observations = torch.as_tensor(data.observations)
    masks = torch.as_tensor(data.masks)

    def logits_of(index: torch.Tensor) -> torch.Tensor:
        features = policy.extract_features(observations[index], policy.pi_features_extractor)
        latent_pi, _ = policy.mlp_extractor(features)
        return policy.action_net(latent_pi)

    with torch.no_grad():
        old_logits = logits_of(torch.arange(len(data))).numpy()
    targets = torch.as_tensor(improvement_targets(old_logits, data, temperature, advantage_clip))
    generator = np.random.default_rng(seed)
    training, validation = held_out_split(data.deals, validation_share, generator)
    if len(training) == 0:
        raise ValueError("rollout improvement: no recorded decisions to learn from")
    legal_count = masks.sum(dim=1, keepdim=True)

    def loss_of(index: torch.Tensor) -> torch.Tensor:
        logits = logits_of(index).masked_fill(~masks[index], 0.0)
        centred = (logits - logits.sum(dim=1, keepdim=True) / legal_count[index]).masked_fill(~masks[index], 0.0)
        return ((centred - targets[index]) ** 2).sum(dim=1).mean()

    all_values = valued_values(data)

    def chosen_value(index: np.ndarray) -> float:
        """Mean rollout advantage of the action the policy plays (argmax of the legal logits)."""
        with torch.no_grad():
            logits = logits_of(torch.as_tensor(index)).masked_fill(~masks[index], -1e9).numpy()
        rows = np.arange(len(index))
        values = all_values[index]
        mean_value = values.sum(axis=1) / data.masks[index].sum(axis=1)
        return float(np.mean(values[rows, logits.argmax(axis=1)] - mean_value))

    figures: dict[str, float] = {}
    if len(validation):
        figures["validation_advantage_before"] = chosen_value(validation)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    from tqdm.auto import tqdm

    policy.train()
    for _ in tqdm(range(epochs), desc="improve: fitting", unit="epoch", disable=not progress, dynamic_ncols=True):
        shuffled = generator.permutation(training)
        total, batches = 0.0, 0
        for start in range(0, len(shuffled), batch_size):
            loss = loss_of(torch.as_tensor(shuffled[start:start + batch_size]))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            total += loss.item()
            batches += 1
        figures["loss"] = total / batches
        if len(validation):
            with torch.no_grad():
                figures["validation_loss"] = loss_of(torch.as_tensor(validation)).item()
    policy.eval()
    if len(validation):
        figures["validation_advantage_after"] = chosen_value(validation)
    return figures


def improve_model(model_path: str | Path, data: RolloutData, out_path: str | Path, temperature: float, epochs: int,
                  batch_size: int, learning_rate: float, validation_share: float, seed: int,
                  progress: bool = True, advantage_clip: float | None = None) -> dict[str, float]:
    """:func:`improve_policy` on a saved model; writes the improved model (source metadata + figures)."""
    return refit_saved_model(
        model_path, out_path, seed,
        fit=lambda policy: improve_policy(policy, data, temperature, epochs, batch_size, learning_rate,
                                          validation_share, seed, progress=progress, advantage_clip=advantage_clip),
        provenance=lambda figures: dict(
            improved_from=Path(model_path).name, improvement_decisions=len(data),
            improvement_temperature=temperature, improvement_advantage_clip=advantage_clip,
            improvement_figures={name: round(value, 5) for name, value in figures.items()}),
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    from agents.ppo import PHASE2_MODES
    from sixtysix_env.fileio import writable_file

    parser = argparse.ArgumentParser(prog="python -m train.rollout_improvement",
                                     description=(__doc__ or "").split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record", help="value every action of the policy by rollouts of the real deal")
    record.add_argument("--policy", default="ppo", help="agent spec of the policy to improve (default ppo)")
    record.add_argument("--opponent", default="heuristic", help="agent spec of its opponent (default heuristic)")
    record.add_argument("--deals", type=int, required=True, help="deals to play")
    record.add_argument("--seed", type=int, default=8_080_808, help="master seed of the deals")
    record.add_argument("--rules", default="standard", help="rules preset")
    record.add_argument("--phase2", default="endgame", choices=PHASE2_MODES,
                        help="skip the decisions a policy in this mode hands to the exact search")
    record.add_argument("--valuer", default="rollouts",
                        help="'rollouts' (the real deal played on) or a search agent spec such as pimc:prior=none or "
                             "expert")
    record.add_argument("--workers", type=int, default=1)
    record.add_argument("--out", required=True, help="output .npz")
    improve = commands.add_parser("improve", help="fit a model to the improved policy")
    improve.add_argument("--model", required=True, help="model zip to start from")
    improve.add_argument("--data", required=True, nargs="+", help="rollout data (.npz), concatenated")
    improve.add_argument("--out", required=True, help="output model zip")
    improve.add_argument("--temperature", type=finite_float, default=0.25,
                         help="game points per unit of log-probability (smaller: greedier in the values)")
    improve.add_argument("--advantage-clip", type=finite_float, default=None,
                         help="clip the advantages to +-this many game points (default: no clipping)")
    improve.add_argument("--epochs", type=int, default=8)
    improve.add_argument("--batch-size", type=int, default=512)
    improve.add_argument("--learning-rate", type=finite_float, default=3e-4)
    improve.add_argument("--validation-share", type=finite_float, default=0.05)
    improve.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "record":
        if args.deals < 1 or args.workers < 1:
            parser.error("--deals and --workers must be at least 1")
        try:  # every input and the output checked before the first deal is played
            rules = two_player_rules(args.rules, "--rules")
            check_record_specs(rules, args.policy, args.opponent, args.valuer)
            writable_file(args.out, f"--out {args.out!r}")
        except (ValueError, OSError) as error:
            parser.error(str(error))
        data = collect_rollout_values(rules, args.policy, args.opponent, args.deals, args.seed,
                                      args.phase2, workers=args.workers, valuer=args.valuer)
        data.save(Path(args.out))
        print(f"{len(data)} decisions valued by {args.valuer} from {args.deals} deals -> {args.out}")
        return 0
    if args.epochs < 1 or args.batch_size < 1 or args.learning_rate <= 0 or args.temperature <= 0 \
            or not 0 <= args.validation_share < 1 or (args.advantage_clip is not None and args.advantage_clip <= 0):
        parser.error("--epochs, --batch-size, --learning-rate, --temperature and --advantage-clip must be positive, "
                     "--validation-share in [0, 1)")
    try:  # the model, the data and the output checked before the fit
        model_rules = check_refit_paths(args.model, args.out)
        data = load_refit_data(RolloutData, args.model, model_rules, args.data)
        if len(data) == 0:
            raise ValueError(f"--data {' '.join(args.data)}: no recorded decisions to learn from")
    except (ValueError, OSError) as error:
        parser.error(str(error))
    figures = improve_model(args.model, data, args.out, args.temperature, args.epochs, args.batch_size,
                            args.learning_rate, args.validation_share, args.seed,
                            advantage_clip=args.advantage_clip)
    print(f"improved on {len(data)} decisions -> {args.out}: "
          + ", ".join(f"{name} {value:.4f}" for name, value in figures.items()))
    return 0


__all__ = ["RolloutData", "collect_rollout_values", "improve_model", "improve_policy", "improvement_targets",
           "record_rollout_values"]


if __name__ == "__main__":
    import sys

    sys.exit(main())
