"""Fit a critic of a network's own play: what a position is worth when the network plays both seats on from it.

``python -m train.critic --network suit_iterated --inputs full --out models/critic_full_standard.npz`` plays the
network greedily against itself on ``--deals`` deals in the compiled core (every deal in lockstep, one batched forward
pass per step; a phase 2 after the talon's exhaustion is solved exactly, R8), keeps every phase-1 decision with a
choice (the talon open and not closed, R7, R10: where a cut rollout's leaf lies), and fits a small ReLU network by
squared error to the game points (R16) the player to move there scored. Its inputs are the mover's observation and,
as ``--inputs`` says, what a sampled world fixes beyond it (:mod:`sixtysix_env.core.critic_inputs`). Held-out deals
(``--val-deals`` of ``--val-seed``) report how well it predicts: r, slope and intercept (``scipy.stats.linregress``)
of the game points on its values. The file is an ``ActorNetwork`` ``.npz`` with one output, read by
:func:`agents.ppo.load_critic` and used as ``rollout:leaf_value=PATH`` (docs/strength.md, session 56).

Everything is seeded: the deals from ``--seed``, the fit from ``--fit-seed``; the output is written atomically, and
``--out`` with ``.json`` in place of ``.npz`` gets the figures.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from agents.ppo import CRITIC_FORMAT, CRITIC_FORMAT_VERSION
from sixtysix_env.rules import Rules
from sixtysix_env.schema import SEED_LIMIT

from .config import field_docs


@dataclass
class CriticArgs:
    network: str = "suit_iterated"
    """The q network that plays both seats (a suit-network spec, a q model, or the alias of either)."""
    inputs: str = "full"
    """What the critic reads: observation, opponent_hand or full (sixtysix_env.core.critic_inputs)."""
    deals: int = 100_000
    """Self-play deals to fit on."""
    seed: int = 197
    """Seed of the fitting deals."""
    val_deals: int = 10_000
    """Held-out self-play deals, never fitted."""
    val_seed: int = 198
    """Seed of the held-out deals."""
    hidden: str = "256,256"
    """Hidden layer widths, comma-separated."""
    epochs: int = 4
    """Passes over the fitting positions (the learning rate decays to zero over them by a cosine)."""
    batch_size: int = 1024
    """Positions per gradient step."""
    learning_rate: float = 1e-3
    """Adam's initial learning rate."""
    fit_seed: int = 0
    """Seed of the weights' initialization and the batches' order."""
    out: str = ""
    """Where the critic goes (.npz; required, so that no run replaces the shipped models/critic_full_standard.npz
    unasked); its figures go beside it (.json)."""
    progress: bool = True
    """Show progress bars (tqdm)."""


@dataclass
class SelfPlayPositions:
    """Phase-1 decisions of greedy self-play: the mover's observation (no history planes), the core state there
    (the mover to decide), the game points he scored in the end (R16), and the deal each came from."""
    observations: np.ndarray
    states: np.ndarray
    returns: np.ndarray
    deals: np.ndarray


def self_play_positions(network_spec: str, deals: int, seed: int, chunk: int = 2000,
                        progress: bool = False) -> SelfPlayPositions:
    """Play ``network_spec`` greedily for both seats on ``deals`` deals drawn from ``seed`` (the dealer alternates),
    ``chunk`` deals in lockstep at a time, and keep every phase-1 decision with a choice."""
    from tqdm import tqdm

    from agents.ppo import QValueNetwork, reads_history
    from sixtysix_env.core.continuation import play_out
    from sixtysix_env.core.layout import BOTTOM_CARD, CLOSED_BY, TO_MOVE
    from sixtysix_env.core.solver import Table
    from sixtysix_env.core.state import new_state
    from sixtysix_env.observation import OBSERVATION_SIZE

    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    network = QValueNetwork(network_spec, where="--network")
    history = reads_history(network.network)
    generator = np.random.default_rng(seed)
    table = Table()
    parts: list[tuple[np.ndarray, ...]] = []
    bar = tqdm(total=deals, desc=f"self-play seed {seed}", unit="deal", disable=not progress)
    for start in range(0, deals, chunk):
        count = min(chunk, deals - start)
        states = np.stack([new_state(network.rules, seed=int(generator.integers(2**62)), dealer=(start + deal) & 1)
                           for deal in range(count)])
        kept: list[tuple[np.ndarray, ...]] = []

        def keep_phase1(rows, observations, states=states, kept=kept):
            positions = states[rows]
            phase1 = (positions[:, CLOSED_BY] == -1) & (positions[:, BOTTOM_CARD] != -1)
            kept.append((observations[phase1, :OBSERVATION_SIZE].copy(), positions[phase1], rows[phase1].copy()))
        # Both seats greedy by the network; the results are seat 0's, turned to each mover's below.
        seat0_results = play_out(states, np.zeros(count, dtype=np.int64), network.network.logits, table,
                                 np.zeros(2, dtype=np.float32), history=history, on_decision=keep_phase1)
        chunk_observations = np.concatenate([part[0] for part in kept])
        chunk_states = np.concatenate([part[1] for part in kept])
        chunk_deals = np.concatenate([part[2] for part in kept])
        seat0_points = seat0_results[chunk_deals]
        chunk_returns = np.where(chunk_states[:, TO_MOVE] == 0, seat0_points, -seat0_points).astype(np.float32)
        parts.append((chunk_observations, chunk_states.astype(np.int32), chunk_returns, start + chunk_deals))
        bar.update(count)
    bar.close()
    return SelfPlayPositions(*(np.concatenate([part[index] for part in parts]) for index in range(4)))


def compact_features(data: SelfPlayPositions, inputs: str, block: int = 100_000) -> np.ndarray:
    """The positions' critic inputs as float16, built a block at a time: every input is a card bit or a share in
    [0, 1], which half precision holds to a few parts in a thousand, at half the memory of float32."""
    from sixtysix_env.core.critic_inputs import critic_features, critic_input_size

    features = np.empty((len(data.returns), critic_input_size(inputs)), dtype=np.float16)
    for start in range(0, len(features), block):
        stop = start + block
        features[start:stop] = critic_features(data.observations[start:stop], data.states[start:stop], inputs)
    return features


def predictive_figures(values: np.ndarray, returns: np.ndarray) -> dict[str, float]:
    """How well ``values`` predict ``returns``: r, slope and intercept of the returns on the values, mean squared
    error, and the returns' variance (what a constant would leave)."""
    from scipy.stats import linregress

    fit = linregress(np.asarray(values, dtype=np.float64), np.asarray(returns, dtype=np.float64))
    return {"r": float(fit.rvalue), "slope": float(fit.slope), "intercept": float(fit.intercept),
            "mse": float(np.mean((values - returns) ** 2)), "variance": float(np.var(returns))}


def parse_hidden(hidden: str) -> list[int]:
    try:
        widths = [int(width) for width in str(hidden).split(",")]
    except ValueError:
        raise ValueError(f"--hidden must be comma-separated layer widths, got {hidden!r}") from None
    if not widths or any(width < 1 for width in widths):
        raise ValueError(f"--hidden must be positive layer widths, got {hidden!r}")
    return widths


def fit_critic(features: np.ndarray, returns: np.ndarray, val_features: np.ndarray, val_returns: np.ndarray,
               hidden: list[int], epochs: int, batch_size: int, learning_rate: float, fit_seed: int,
               progress: bool = False):
    """A ReLU MLP with one output fitted by squared error (Adam, cosine decay); returns its ``ActorNetwork`` and the
    held-out figures after each epoch."""
    import torch
    from tqdm import tqdm

    from agents.ppo import ActorNetwork

    from .vector_ppo import hidden_mlp

    torch.manual_seed(fit_seed)
    model = torch.nn.Sequential(*hidden_mlp(features.shape[1], hidden, "relu"), torch.nn.Linear(hidden[-1], 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, max(epochs, 1))
    x, y = torch.from_numpy(features), torch.from_numpy(returns.astype(np.float32))
    val_x = torch.from_numpy(val_features).float()
    order = torch.Generator().manual_seed(fit_seed)
    history = []
    for epoch in tqdm(range(epochs), desc="fit", unit="epoch", disable=not progress):
        model.train()
        permutation = torch.randperm(len(x), generator=order)
        for start in range(0, len(x), batch_size):
            batch = permutation[start:start + batch_size]
            loss = torch.nn.functional.mse_loss(model(x[batch].float())[:, 0], y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        schedule.step()
        model.eval()
        with torch.no_grad():
            values = model(val_x)[:, 0].numpy()
        history.append({"epoch": epoch + 1, **predictive_figures(values, val_returns)})
    linear = [module for module in model if isinstance(module, torch.nn.Linear)]
    network = ActorNetwork([(layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy())
                            for layer in linear], "relu")
    return network, history


def critic_metadata(args: CriticArgs, rules: Rules, hidden: list[int], figures: dict[str, Any]) -> dict[str, Any]:
    return {"format": CRITIC_FORMAT, "format_version": CRITIC_FORMAT_VERSION, "rules": rules.to_dict(),
            "inputs": args.inputs, "activation": "relu", "hidden": hidden, "network": args.network,
            "deals": args.deals, "seed": args.seed, "val_deals": args.val_deals, "val_seed": args.val_seed,
            "fit_seed": args.fit_seed, "validation": figures}


def main(argv: list[str] | None = None) -> int:
    from agents.ppo import QValueNetwork
    from sixtysix_env.core.critic_inputs import check_critic_inputs, critic_features
    from sixtysix_env.fileio import writable_file, write_json_atomic

    parser = argparse.ArgumentParser(prog="python -m train.critic", description=(__doc__ or "").split("\n\n")[0])
    defaults, docs = CriticArgs(), field_docs(CriticArgs)
    for field in fields(CriticArgs):  # one flag per argument, its help the field's docstring
        flag, default = "--" + field.name.replace("_", "-"), getattr(defaults, field.name)
        if field.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=docs[field.name])
        else:
            kind = {"int": int, "float": float}.get(field.type, str)
            parser.add_argument(flag, type=kind, default=default,
                                help=docs[field.name] + (f" (default {default})" if default != "" else ""))
    args = CriticArgs(**vars(parser.parse_args(argv)))
    try:
        check_critic_inputs(args.inputs)
        hidden = parse_hidden(args.hidden)
        for name in ("deals", "val_deals", "epochs", "batch_size"):
            if getattr(args, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
        if not (math.isfinite(args.learning_rate) and args.learning_rate > 0):  # "inf" parses as a float
            raise ValueError(f"--learning-rate must be a positive number, got {args.learning_rate}")
        for name in ("seed", "val_seed", "fit_seed"):  # numpy refuses a negative seed only at the self-play
            if not 0 <= getattr(args, name) < SEED_LIMIT:
                raise ValueError(f"--{name.replace('_', '-')} must be a whole number from 0 to 2**63 - 1, got "
                                 f"{getattr(args, name)}")
        if args.seed == args.val_seed:  # the held-out deals would be the first of the fitted ones
            raise ValueError(f"--val-seed must differ from --seed ({args.seed}): its deals are held out of the fit")
        if not args.out:
            raise ValueError("--out is required: the .npz path the critic goes to (e.g. results/critic.npz)")
        out = Path(args.out)
        if out.suffix != ".npz":
            raise ValueError(f"--out must be an .npz path, got {args.out!r}")
        rules = QValueNetwork(args.network, where="--network").rules
        # Both outputs, the critic and its figures beside it, checked before the self-play and the fit.
        writable_file(out, f"--out {args.out!r}")
        writable_file(out.with_suffix(".json"), f"--out's figures {str(out.with_suffix('.json'))!r}")
    except (ValueError, OSError) as error:
        parser.error(str(error))
    began = time.perf_counter()
    data = self_play_positions(args.network, args.deals, args.seed, progress=args.progress)
    held_out = self_play_positions(args.network, args.val_deals, args.val_seed, progress=args.progress)
    features = compact_features(data, args.inputs)
    del data.observations  # the features hold them; millions of positions fill the memory otherwise
    val_features = critic_features(held_out.observations, held_out.states, args.inputs)
    network, history = fit_critic(features, data.returns, val_features, held_out.returns, hidden, args.epochs,
                                  args.batch_size, args.learning_rate, args.fit_seed, progress=args.progress)
    figures = {"positions": len(data.returns), "val_positions": len(held_out.returns), **history[-1],
               "seconds": round(time.perf_counter() - began, 1)}
    network.save_npz(out, critic_metadata(args, rules, hidden, figures))
    write_json_atomic(out.with_suffix(".json"), {"args": asdict(args), "figures": figures, "epochs": history})
    print(f"{out}: {figures['positions']} positions, held out r {figures['r']:.3f} slope {figures['slope']:.3f} "
          f"({figures['val_positions']} positions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
