"""Behaviour cloning: warm-start the PPO network from a teacher agent's decisions (config section ``imitation``).

PPO from random weights spends most of a CPU budget rediscovering what a card-counting rule player already knows.
Like AlphaStar and the DouZero-style pipelines, a run may therefore first imitate a teacher (``heuristic`` by
default): the teacher plays itself on ``imitation.deals`` seeded deals, every decision it takes with more than one
legal action is recorded as (observation of the decider's seat, action mask, action, the deal's final game points
from the decider's side), and the network's policy head is fitted by masked cross-entropy and its value head by
squared error. PPO self-play then starts from these weights; the true objective (game points, R16) is unchanged.

With ``env.phase2: solver`` (or ``endgame``) the decisions the exact search plays instead of the network (from R8
on, or from the talon's last trick on) are not recorded.

The same two steps also run on their own, e.g. to distil a search agent into a trained model (expert-iteration
style: the network learns the search's choices)::

    python -m train.imitation record --teacher pimc --deals 3000 --phase2 endgame --out pimc.npz --workers 2
    python -m train.imitation finetune --model runs/x/final.zip --data pimc.npz --out runs/x/distilled.zip

Files (run directory, written atomically): ``imitation/data.npz`` (the teacher's decisions, reused on resume),
``imitation/model.zip`` (the cloned network, a ``ppo:path=...`` agent), ``imitation/summary.json`` (accuracy).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from agents.ppo import InfosetEncoder, delegated
from agents.registry import agent_for_rules, make_agent
from eval.deals import derive_seed
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.fileio import write_json_atomic
from sixtysix_env.game import Game
from sixtysix_env.infoset import InformationSet
from sixtysix_env.observation import OBSERVATION_SIZE
from sixtysix_env.rules import Rules
from sixtysix_env.schema import finite_float
from train.recorded import (
    DecisionTable, check_refit_paths, held_out_split, load_refit_data, refit_saved_model,
    run_deal_chunks, two_player_rules,
)

DATA_FIELDS = ("observations", "masks", "actions", "returns", "deals")
CHUNK_DEALS = 200  # deals per work unit (progress granularity)


@dataclass
class TeacherData(DecisionTable):
    """The teacher's recorded decisions, one row each."""

    FIELDS = DATA_FIELDS
    WHAT = "imitation data"

    observations: np.ndarray  # float32 (N, OBSERVATION_SIZE)
    masks: np.ndarray  # bool (N, NUM_ACTIONS): the legal actions
    actions: np.ndarray  # int64 (N,)
    returns: np.ndarray  # float32 (N,): the deal's game points from the decider's side (R16)
    deals: np.ndarray  # int64 (N,): the deal each decision comes from (validation holds out whole deals)

    @classmethod
    def load(cls, path: Path) -> "TeacherData":
        data = cls.read(path)
        if data.observations.ndim != 2 or data.observations.shape[1] != OBSERVATION_SIZE:
            raise ValueError(
                f"imitation data {str(path)!r} has observations of shape {data.observations.shape}, this code's "
                f"observation has size {OBSERVATION_SIZE}: delete it to record the teacher again"
            )
        if not len(data.masks) == len(data.actions) == len(data.returns) == len(data.deals) == len(data.observations):
            raise ValueError(f"imitation data {str(path)!r} has fields of different lengths")
        return data


def record_teacher_deals(rules: Rules, teacher: str, seed: int, first: int, count: int,
                         phase2: str = "policy") -> TeacherData:
    """Deals ``first .. first+count-1`` (deck from ``derive_seed(seed, "deal", i)``, dealer ``i % 2``) played by
    two copies of ``teacher``; every decision with a choice is recorded, except those a policy played in the
    ``phase2`` mode hands to the exact search (:func:`agents.ppo.delegated`), which that search plays instead of
    the teacher."""
    encoder = InfosetEncoder(rules)
    seats = [make_agent(teacher, seed=0), make_agent(teacher, seed=1)]
    # The decisions a hybrid policy hands to the exact search are played by that search (the heuristic's, as in
    # PolicyAgent), not by the teacher: the recorded positions are the ones the student meets, and a slow search
    # teacher spends its time only on the decisions that are recorded.
    endgame = [make_agent("heuristic", seed=0), make_agent("heuristic", seed=1)] if phase2 != "policy" else None
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    returns: list[float] = []
    deal_ids: list[int] = []
    for index in range(first, first + count):
        game = Game.deal(rules, seed=derive_seed(seed, "deal", index), dealer=index % 2)
        for player, agent in enumerate(seats):
            agent.seed(derive_seed(seed, "agent", index, player))
            agent.start_deal(player, rules)
            if endgame is not None:
                endgame[player].seed(derive_seed(seed, "endgame", index, player))
                endgame[player].start_deal(player, rules)
        deciders: list[int] = []
        while not game.is_over:
            player = game.current_player
            infoset = InformationSet(game, player)
            legal = infoset.legal_actions
            if endgame is not None and delegated(infoset, phase2):
                game.apply(endgame[player].act(infoset))
                continue
            action = seats[player].act(infoset)
            if len(legal) > 1:
                observations.append(encoder.encode(infoset))
                mask = np.zeros(NUM_ACTIONS, dtype=bool)
                mask[legal] = True
                masks.append(mask)
                actions.append(action)
                deciders.append(player)
                deal_ids.append(index)
            game.apply(action)
        deal_returns = game.result.returns()
        returns.extend(float(deal_returns[player]) for player in deciders)
    data = TeacherData(
        observations=np.asarray(observations, dtype=np.float32).reshape(-1, OBSERVATION_SIZE),
        masks=np.asarray(masks, dtype=bool).reshape(-1, NUM_ACTIONS),
        actions=np.asarray(actions, dtype=np.int64),
        returns=np.asarray(returns, dtype=np.float32),
        deals=np.asarray(deal_ids, dtype=np.int64),
    )
    data.rules = rules
    return data


def _record_chunk(arguments: tuple) -> TeacherData:
    return record_teacher_deals(*arguments)


def collect_teacher_data(rules: Rules, teacher: str, deals: int, seed: int, phase2: str, workers: int = 1,
                         progress: bool = True) -> TeacherData:
    """Play ``deals`` teacher deals (over ``workers`` processes, with a progress bar) and return their decisions."""
    chunks = [(rules, teacher, seed, first, min(CHUNK_DEALS, deals - first), phase2)
              for first in range(0, deals, CHUNK_DEALS)]
    parts = run_deal_chunks(_record_chunk, chunks, [chunk[4] for chunk in chunks], workers,
                            f"imitation: {teacher} plays", progress)
    return TeacherData.concatenate(parts)


def behaviour_clone(policy: Any, data: TeacherData, epochs: int, batch_size: int, learning_rate: float,
                    value_coef: float, validation_share: float, seed: int,
                    log: Callable[[str, float, int], None] | None = None, progress: bool = True) -> dict[str, float]:
    """Fit an sb3 ``MaskableActorCriticPolicy`` to the teacher's decisions (in place); returns the final figures.

    Loss per minibatch: masked cross-entropy of the teacher's action + ``value_coef`` * squared error of the
    value head against the deal's game points. ``log(tag, value, epoch)`` receives ``imitation/...`` scalars."""
    import torch

    generator = np.random.default_rng(seed)
    training, validation = held_out_split(data.deals, validation_share, generator)
    if len(training) == 0:
        raise ValueError("imitation: no teacher decisions to learn from (increase imitation.deals)")
    tensors = {
        "observations": torch.as_tensor(data.observations),
        "masks": torch.as_tensor(data.masks),
        "actions": torch.as_tensor(data.actions),
        "returns": torch.as_tensor(data.returns),
    }
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)

    def evaluate(indices: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        index = torch.as_tensor(indices)
        observations = tensors["observations"][index]
        features = policy.extract_features(observations, policy.pi_features_extractor)
        latent_pi, latent_vf = policy.mlp_extractor(features)
        logits = policy.action_net(latent_pi).masked_fill(~tensors["masks"][index], -1e8)
        log_probs = torch.log_softmax(logits, dim=-1)
        chosen = tensors["actions"][index]
        policy_loss = -log_probs.gather(1, chosen[:, None]).squeeze(1).mean()
        value_loss = torch.mean((policy.value_net(latent_vf).squeeze(1) - tensors["returns"][index]) ** 2)
        accuracy = (logits.argmax(dim=1) == chosen).float().mean()
        return policy_loss, value_loss, accuracy

    from tqdm.auto import tqdm

    figures: dict[str, float] = {}
    policy.train()
    for epoch in tqdm(range(1, epochs + 1), desc="imitation: fitting", unit="epoch", disable=not progress,
                      dynamic_ncols=True):
        shuffled = generator.permutation(training)
        sums = np.zeros(3)
        batches = 0
        for start in range(0, len(shuffled), batch_size):
            policy_loss, value_loss, accuracy = evaluate(shuffled[start:start + batch_size])
            loss = policy_loss + value_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            sums += (policy_loss.item(), value_loss.item(), accuracy.item())
            batches += 1
        figures = dict(zip(("policy_loss", "value_loss", "accuracy"), (sums / batches).tolist()))
        if len(validation):
            with torch.no_grad():
                policy_loss, value_loss, accuracy = evaluate(validation)
            figures.update(validation_policy_loss=policy_loss.item(), validation_value_loss=value_loss.item(),
                           validation_accuracy=accuracy.item())
        if log is not None:
            for name, value in figures.items():
                log(f"imitation/{name}", value, epoch)
    policy.eval()
    return figures


def run_imitation(trainer: Any, model: Any) -> dict[str, Any]:
    """The ``imitation`` stage of a training run: record (or reuse) the teacher's decisions, fit ``model.policy``,
    save ``imitation/model.zip`` and ``imitation/summary.json``. Returns the summary."""
    config = trainer.config.imitation
    folder = Path(trainer.run_dir) / "imitation"
    data_path = folder / "data.npz"
    progress = trainer.config.run.progress_bar and not trainer.quiet
    started = time.perf_counter()
    if data_path.exists():
        data = TeacherData.load(data_path)
    else:
        data = collect_teacher_data(trainer.rules, config.teacher, config.deals, config.seed,
                                    phase2=trainer.config.env.phase2, workers=config.workers,
                                    progress=progress)
        data.save(data_path)
    recorded = time.perf_counter() - started
    epochs: list[dict[str, float]] = []

    def log(tag: str, value: float, epoch: int) -> None:
        if len(epochs) < epoch:
            epochs.append({"epoch": epoch})
        epochs[epoch - 1][tag.split("/", 1)[1]] = round(value, 5)

    figures = behaviour_clone(model.policy, data, config.epochs, config.batch_size, config.learning_rate,
                              config.value_coef, config.validation_share, seed=config.seed, log=log,
                              progress=progress)
    trainer.save_model(model, folder / "model.zip", 0)
    summary = {"teacher": config.teacher, "deals": config.deals, "decisions": len(data),
               "record_seconds": round(recorded, 1), "fit_seconds": round(time.perf_counter() - started - recorded, 1),
               "final": {name: round(value, 5) for name, value in figures.items()}, "epochs": epochs}
    write_json_atomic(folder / "summary.json", summary)
    return summary


def finetune_model(model_path: str | Path, data: TeacherData, out_path: str | Path, epochs: int, batch_size: int,
                   learning_rate: float, value_coef: float, validation_share: float, seed: int,
                   progress: bool = True) -> dict[str, Any]:
    """Fit a trained model (``final.zip``, a checkpoint or an exported model) to ``data`` and write it to
    ``out_path`` with the source's metadata plus the imitation figures; returns the figures."""
    return refit_saved_model(
        model_path, out_path, seed,
        fit=lambda policy: behaviour_clone(policy, data, epochs, batch_size, learning_rate, value_coef,
                                           validation_share, seed=seed, progress=progress),
        provenance=lambda figures: dict(finetuned_from=Path(model_path).name, finetune_decisions=len(data),
                                        finetune_figures={name: round(value, 5) for name, value in figures.items()}),
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    from agents.ppo import PHASE2_MODES
    from sixtysix_env.fileio import writable_file

    parser = argparse.ArgumentParser(prog="python -m train.imitation", description=(__doc__ or "").split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record", help="play a teacher against itself and save its decisions")
    record.add_argument("--teacher", default="heuristic", help="agent spec of the teacher (default heuristic)")
    record.add_argument("--deals", type=int, required=True, help="deals to play")
    record.add_argument("--seed", type=int, default=7_070_707, help="master seed of the deals")
    record.add_argument("--rules", default="standard", help="rules preset")
    record.add_argument("--phase2", default="endgame", choices=PHASE2_MODES,
                        help="skip the decisions a policy in this mode hands to the exact search")
    record.add_argument("--workers", type=int, default=1)
    record.add_argument("--out", required=True, help="output .npz")
    tune = commands.add_parser("finetune", help="fit a trained model to recorded decisions")
    tune.add_argument("--model", required=True, help="model zip to start from")
    tune.add_argument("--data", required=True, nargs="+", help="recorded decisions (.npz), concatenated")
    tune.add_argument("--out", required=True, help="output model zip")
    tune.add_argument("--epochs", type=int, default=4)
    tune.add_argument("--batch-size", type=int, default=512)
    tune.add_argument("--learning-rate", type=finite_float, default=3e-4)
    tune.add_argument("--value-coef", type=finite_float, default=0.5)
    tune.add_argument("--validation-share", type=finite_float, default=0.05)
    tune.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "record":
        if args.deals < 1 or args.workers < 1:
            parser.error("--deals and --workers must be at least 1")
        try:  # the rules, the teacher and the output checked before the first deal is played
            rules = two_player_rules(args.rules, "--rules")
            agent_for_rules(args.teacher, rules)
            writable_file(args.out, f"--out {args.out!r}")
        except (ValueError, OSError) as error:
            parser.error(str(error))
        data = collect_teacher_data(rules, args.teacher, args.deals, args.seed, args.phase2, workers=args.workers)
        data.save(Path(args.out))
        print(f"{len(data)} decisions of {args.teacher} from {args.deals} deals -> {args.out}")
        return 0
    if args.epochs < 1 or args.batch_size < 1 or args.learning_rate <= 0 or not 0 <= args.validation_share < 1:
        parser.error("--epochs, --batch-size and --learning-rate must be positive, --validation-share in [0, 1)")
    try:  # the model, the output and the data checked before the fit
        model_rules = check_refit_paths(args.model, args.out)
        data = load_refit_data(TeacherData, args.model, model_rules, args.data)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    figures = finetune_model(args.model, data, args.out, args.epochs, args.batch_size, args.learning_rate,
                             args.value_coef, args.validation_share, args.seed)
    print(f"fine-tuned on {len(data)} decisions -> {args.out}: "
          + ", ".join(f"{name} {value:.4f}" for name, value in figures.items()))
    return 0


__all__ = ["TeacherData", "behaviour_clone", "collect_teacher_data", "finetune_model", "record_teacher_deals",
           "run_imitation"]


if __name__ == "__main__":
    import sys

    sys.exit(main())
