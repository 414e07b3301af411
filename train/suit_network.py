"""Fit a network that shares its weights over the four suits to distillation labels (the members of
``suit_ensemble``, ``suit_two`` and ``suit_pair``).

Every earlier network of docs/training.md is an MLP over the whole observation. Session 14 found that late in phase 1
all of them choose about equally badly against ``expert``'s values (0.08-0.095 game points per decision), whatever
the labels (the true deal, or 16 worlds drawn from the decider's view), the amount of data or the loss. What none of
them has is the game's symmetry: the suits are interchangeable but for trump (R1, R5), so an MLP has to learn what a
card is worth once per suit. :class:`agents.suit.SuitNetwork` encodes each suit with one shared network, pools the
three plain suits by a sum next to the trump suit and scores each suit's cards and marriages with another shared
network: equivariant under any permutation of the plain suits by construction. On the same labels it plays 0.11-0.16
game points per deal better than an MLP of the same size (docs/training.md, "Session 14"). With ``--rounds 2`` every
suit is re-encoded knowing the first pooled context and pooled again: on the same labels and seed +0.053 [+0.013,
+0.093] game points per deal on the tuning pairs, and a quarter less regret late in phase 1 (``suit_two``,
docs/training.md, "Session 15"). ``--rounds 3`` adds a third round; a two-round network fitted for 10 epochs and a
three-round one for 8 play no better alone than ``suit_two`` but, averaged, +0.039 [+0.022, +0.057] better on
10,000 test pairs (``suit_pair``, docs/training.md, "Session 16"). ``--init FILE`` fine-tunes a fitted network
(its shape kept), e.g. on labels whose late phase-1 rows come from a network continuation (docs/training.md,
"Session 18").

    python -m train.suit_network --config configs/distill_true_world.yaml \
        --set fit.labels_from=runs/distill_true_world --set 'fit.deals=[0,450000]' --set fit.seed=1303 \
        --set fit.epochs=5 --out runs/suit_tw_d.npz                  # add --rounds 2: models/suit_two_standard.npz
    # suit_pair: --rounds 2 with fit.epochs=10, and --rounds 3 with fit.epochs=8 (docs/training.md, "Session 16")
    sixtysix match suit:path=runs/suit_tw_d.npz heuristic --deals 2000 --seed 20261124 --workers 2

It is fitted exactly like ``fit.target: q`` (``train.distill.q_targets``: the logits regress the centred action
values / temperature, squared error, held-out whole deals); the network and its NumPy forward pass are
:mod:`agents.suit` (spec ``suit:path=FILE``), this module builds the same network in torch to fit it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import refuse_other_rules
from agents.suit import (HISTORY_SUIT_INPUT, OTHER_ACTIONS, PUBLIC, PUBLIC_SIZE, RANKS, SUIT_INPUT, SUITS,
                         reads_history_planes, round_layers, rounds_of, save_suit_weights, suit_inputs)
from sixtysix_env.cards import NUM_CARDS
from sixtysix_env.observation import OBSERVATION_SIZE, OBSERVATION_SLICES


def check_suit_shape(width: int, context: int, rounds: int) -> None:
    """A ``ValueError`` unless the widths are positive and ``rounds`` at least 1 (torch would build a network of
    zero units, or fail on a negative width, without naming it)."""
    for name, value in (("width", width), ("context", context), ("rounds", rounds)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")


def build_suit_network(width: int = 128, context: int = 256, rounds: int = 1, history: bool = False):
    """A :class:`SuitNetwork` (torch is imported only here); every round after the first re-encodes each suit
    knowing the last pooled context (a residual update) and pools again (:func:`agents.suit.round_layers`);
    ``history``: each suit's input also holds its cards in the history planes, which follow the observation."""
    check_suit_shape(width, context, rounds)
    import torch
    from torch import nn

    class SuitNetwork(nn.Module):
        """Observation (B, 281) -> action logits (B, 37), equivariant under permutations of the plain suits
        (parameter names as :class:`agents.suit.SuitNetwork` reads them)."""

        def __init__(self):
            super().__init__()
            self.encode = nn.Sequential(nn.Linear(HISTORY_SUIT_INPUT if history else SUIT_INPUT, width), nn.ReLU(),
                                        nn.Linear(width, width), nn.ReLU())
            self.combine = nn.Sequential(nn.Linear(2 * width + PUBLIC_SIZE, context), nn.ReLU(),
                                         nn.Linear(context, context), nn.ReLU())
            self.suit_head = nn.Sequential(nn.Linear(width + context, width), nn.ReLU(), nn.Linear(width, RANKS + 2))
            self.other_head = nn.Linear(context, OTHER_ACTIONS)
            self.later_rounds = [round_layers(round_number) for round_number in range(2, rounds + 1)]
            for mix, recombine in self.later_rounds:
                self.add_module(mix, nn.Sequential(nn.Linear(width + context, width), nn.ReLU()))
                self.add_module(recombine, nn.Sequential(nn.Linear(2 * width + PUBLIC_SIZE, context), nn.ReLU(),
                                                         nn.Linear(context, context), nn.ReLU()))

        def forward(self, observations):
            batch = observations.shape[0]
            encoded = self.encode(suit_inputs(observations, history))  # (B, 4, width)
            trump = observations[:, OBSERVATION_SLICES["trump_suit"]].unsqueeze(2)

            def pooled_context(suits, layers):
                return layers(torch.cat([(suits * trump).sum(1), (suits * (1 - trump)).sum(1),
                                         observations[:, PUBLIC]], dim=1))

            def beside_context(suits, context_vector):  # (B, 4, width + context)
                return torch.cat([suits, context_vector.unsqueeze(1).expand(batch, SUITS, -1)], dim=2)

            context_vector = pooled_context(encoded, self.combine)
            for mix, recombine in self.later_rounds:
                encoded = encoded + getattr(self, mix)(beside_context(encoded, context_vector))
                context_vector = pooled_context(encoded, getattr(self, recombine))
            per_suit = self.suit_head(beside_context(encoded, context_vector))  # (B, 4, 6 cards + 2 marriages)
            return torch.cat([per_suit[:, :, :RANKS].reshape(batch, NUM_CARDS),
                              per_suit[:, :, RANKS:].reshape(batch, 2 * SUITS), self.other_head(context_vector)],
                             dim=1)

    return SuitNetwork()


def suit_shape(weights) -> tuple[int, int, int, bool]:
    """The ``width``, ``context``, ``rounds`` and ``history`` of :func:`build_suit_network` that a set of weights
    (by parameter name, as :class:`agents.suit.SuitNetwork` keeps them) was built with."""
    encoder = weights["encode.0.weight"]
    return encoder.shape[0], weights["combine.0.weight"].shape[0], rounds_of(weights), reads_history_planes(weights)


def with_history_inputs(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The weights of a network fitted without the history planes, grown to read them: the suit encoder's new input
    columns are zero, so the grown network gives the logits of the original, up to float rounding (a fine-tuning
    then learns what the planes add)."""
    encoder = np.asarray(weights["encode.0.weight"], dtype=np.float32)
    if encoder.shape[1] != SUIT_INPUT:
        raise ValueError(f"the network's suit encoder takes {encoder.shape[1]} inputs, not the {SUIT_INPUT} of one "
                         "fitted without the history planes")
    grown = np.zeros((encoder.shape[0], HISTORY_SUIT_INPUT), dtype=np.float32)
    grown[:, :SUIT_INPUT] = encoder  # the planes' columns come last in a suit's input (agents.suit)
    return {**weights, "encode.0.weight": grown}


def suit_network_from_weights(weights):
    """A torch :func:`build_suit_network` of the weights' own shape (:func:`suit_shape`) holding them (float32)."""
    import torch

    network = build_suit_network(*suit_shape(weights))
    network.load_state_dict({name: torch.as_tensor(np.asarray(array, dtype=np.float32))
                             for name, array in weights.items()})
    return network


def fit_suit_network(config: Any, out: Path, quiet: bool = False, width: int = 128, context: int = 256,
                     rounds: int = 1, init: Path | None = None, history: bool = False) -> dict[str, float]:
    """Fit a :class:`SuitNetwork` to the labels a distillation config's fit would read (``train.distill.load_labels``:
    ``fit.labels_from``, ``fit.extra_labels_from``, ``fit.deals``, ``fit.window_labels_from``) with its ``fit``
    section's settings (target ``q`` only; temperature, epochs, batch size, step size decayed linearly to a tenth,
    weight decay, held-out share, seed) and ``run.torch_threads``; ``width``, ``context`` and ``rounds`` shape the
    network (:func:`build_suit_network`); with ``eval.opponents`` draws the learning curve (``eval.every``,
    ``eval.pairs``, in ``RUN_DIR/suit_network``); ``init``: start from that weights file (fine-tuning; its shape
    replaces ``width``, ``context`` and ``rounds``, its provenance goes into the new header); ``history``: the network
    reads the history planes too (the labels must hold them, ``label.history``; an ``init`` fitted without them is grown
    by :func:`with_history_inputs`); writes the weights to ``out`` (:func:`agents.suit.save_suit_weights`, every epoch's
    figures in the header) and returns the held-out figures of the last epoch (only its number and seconds when no
    deal is held out: ``fit.validation_share: 0``, or a single labelled deal)."""
    import torch
    from tqdm import tqdm

    from agents.ppo import PolicyAgent
    from agents.suit import SuitNetwork, suit_header

    from .cpu import denormals_flushed
    from .distill import (ScalarLog, evaluate_learner, evaluation_due, fit_seed, labels_dir, load_labels,
                          log_evaluations, mean_regret, plot_learning_curve, q_regression_loss, q_targets)
    from .recorded import PackedObservations, held_out_split

    fit = config.fit
    if fit.target != "q":
        raise ValueError(f"config key 'fit.target' is {fit.target!r}: a suit network is fitted to the q target "
                         "(set fit.target: q)")
    torch.set_num_threads(config.run.torch_threads)
    torch.manual_seed(fit_seed(config))
    started_from = None
    if init is not None:  # before the labels: a bad file is refused at once
        start, start_rules = SuitNetwork.load(init)
        # Fine-tuned on this config's labels and saved under its rules: a start of other rules (R19-R20) would be
        # relabelled silently, as fit.init_model, run.init_model and finetune already refuse.
        refuse_other_rules(f"--init {str(init)!r}", start_rules, config.rules)
        start_weights = start.weights
        if history and not start.history:
            start_weights = with_history_inputs(start_weights)
        elif start.history and not history:
            raise ValueError(f"--init {str(init)!r} reads the history planes: fine-tune it with --history")
        width, context, rounds, _ = suit_shape(start_weights)
        started_from = {"path": str(init), "provenance": suit_header(init).get("provenance", {})}
    # Before the labels: a bad shape is refused at once.
    network = (build_suit_network(width, context, rounds, history) if init is None
               else suit_network_from_weights(start_weights))
    data = load_labels(config, 1)
    if history and data.observations.shape[1] == OBSERVATION_SIZE:
        raise ValueError(f"--history fits the history planes, and the labels in {str(labels_dir(config))!r} do "
                         "not hold them: label them with label.history: true")
    targets, valued = q_targets(data, fit.temperature)
    generator = np.random.default_rng(fit_seed(config))
    training, validation = held_out_split(data.deals, fit.validation_share, generator)
    packed = isinstance(data.observations, PackedObservations)
    codes = torch.as_tensor(data.observations.codes if packed else data.observations)
    table = torch.as_tensor(data.observations.table) if packed else None
    targets, valued = torch.as_tensor(targets), torch.as_tensor(valued)
    # The held-out regret's action values, made in place of the labels' (no second copy of 37 floats per row: a fit
    # of all 11.45 M decisions held 13 GB with it, two such fits did not fit in 24 GB).
    values = data.teacher_values
    np.nan_to_num(values, copy=False, nan=-np.inf)
    values[~data.masks] = -np.inf
    data.teacher_actions = data.returns = data.phase2 = None  # not used here
    optimizer = torch.optim.Adam(network.parameters(), lr=fit.learning_rate, weight_decay=fit.weight_decay)
    total_steps = fit.epochs * -(-len(training) // fit.batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - 0.9 * min(step / total_steps, 1.0))

    def numpy_weights():  # by parameter name, as agents.suit.SuitNetwork reads them
        return {name: tensor.detach().numpy().copy() for name, tensor in network.state_dict().items()}

    def loss_of(index, regret_coef=fit.regret_coef):
        rows = codes[index]
        logits = network(table[rows.long()] if packed else rows)
        return q_regression_loss(logits, valued[index], targets[index], regret_coef), logits

    # The learning curve (as `sixtysix distill fit` draws it): every eval.every epochs and at the last, the network
    # as it stands plays eval.pairs duplicate deals against each of eval.opponents; the scalars, eval.jsonl and
    # learning_curve.png go to RUN_DIR/suit_network (a directory of its own: the run directory may hold the labels
    # and a distillation fit's log). Its agents have seeds of their own: the fit's draws are unchanged.
    run_dir = config.run_dir / "suit_network"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "eval.jsonl").unlink(missing_ok=True)  # a fit again replaces the curve's evaluations

    def held_out_figures() -> dict[str, float]:
        """The held-out loss (the squared error, whatever ``fit.regret_coef``) and regret (the labels' best value
        minus that of the network's greedy choice, over the rows with values: :func:`train.distill.mean_regret`);
        none when no deal is held out (``fit.validation_share: 0``, or a single labelled deal), as in
        ``sixtysix distill fit``."""
        if not len(validation):
            return {}
        network.eval()
        losses, chosen = [], []
        with torch.no_grad():
            for start in range(0, len(validation), 65536):  # in blocks: bounded memory
                block = validation[start:start + 65536]
                loss, logits = loss_of(torch.as_tensor(block), 0.0)  # the squared error alone: fits compare
                losses.append(float(loss) * len(block))
                masked = np.where(data.masks[block], logits.numpy(), -np.inf)
                chosen.append(values[block, masked.argmax(axis=1)])
        return {"validation_loss": sum(losses) / max(len(validation), 1),
                "validation_regret": mean_regret(values[validation].max(axis=1), np.concatenate(chosen))}

    epoch_figures: list[dict[str, Any]] = []  # not ``history``: that names the planes the network reads
    figures: dict[str, float] = {}
    log = ScalarLog(run_dir, 1)  # a fit again replaces the curve's scalars; closed by the `with`
    with log, denormals_flushed():
        # A fine-tuning first reports where its start stands on the held-out labels (epoch 0): the baseline of
        # the epochs' figures.
        starting = None if init is None else {"epoch": 0, **held_out_figures()}
        if starting is not None:
            for tag in [key for key in starting if key != "epoch"]:  # the held-out figures (none when none held out)
                log.add(f"charts/{tag}", starting[tag], 0)
            if not quiet:
                print(starting, flush=True)
        for epoch in tqdm(range(fit.epochs), desc="suit network", unit="epoch", disable=quiet):
            network.train()
            order = generator.permutation(training)
            started = time.perf_counter()
            for start in range(0, len(order), fit.batch_size):
                loss, _ = loss_of(torch.as_tensor(order[start:start + fit.batch_size]))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                schedule.step()
            held_out = held_out_figures()  # inside the epoch's seconds, as before
            figures = {"epoch": epoch + 1, "epoch_seconds": round(time.perf_counter() - started, 1), **held_out}
            for tag in held_out:
                log.add(f"charts/{tag}", figures[tag], epoch + 1)
            evaluations = []
            if config.eval.opponents and evaluation_due(config, epoch + 1):
                learner = PolicyAgent(SuitNetwork(numpy_weights()), config.rules, deterministic=True, seed=0,
                                      where="suit network")
                evaluations = [{key: record[key] for key in ("opponent", "margin", "margin_ci_low", "margin_ci_high")}
                               for record in log_evaluations(run_dir, log, evaluate_learner(config, learner),
                                                             epoch + 1)]
            log.flush()
            epoch_figures.append({**figures, "evaluations": evaluations})
            if not quiet:
                print(epoch_figures[-1], flush=True)
    if config.eval.opponents:
        plot_learning_curve(run_dir, config.eval.opponents)
    provenance = {"labels_from": str(config.fit.labels_from or config.run_dir), "deals": config.fit.deals,
                  "window_labels_from": config.fit.window_labels_from,
                  "extra_labels_from": config.fit.extra_labels_from, "fit_seed": fit_seed(config),
                  "epochs": fit.epochs, "width": width, "context": context, "rounds": rounds,
                  "history_planes": history,
                  "temperature": fit.temperature, "regret_coef": fit.regret_coef,
                  "learning_rate": fit.learning_rate, "init": started_from,
                  "init_validation": None if starting is None else {key: round(float(value), 5)
                                                                    for key, value in starting.items()},
                  "decisions": len(data),
                  "validation": {key: round(float(value), 5) for key, value in figures.items()},
                  "history": epoch_figures}  # the figures of every epoch (the key files have always used)
    save_suit_weights(out, numpy_weights(), config.rules, provenance)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.suit_network", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--config", type=Path, required=True, help="distillation config (train/distill.py)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    parser.add_argument("--out", type=Path, required=True, help="the weights file to write (.npz)")
    parser.add_argument("--width", type=int, default=None,
                        help="units of the suit encoder and the suit head (default 128)")
    parser.add_argument("--context", type=int, default=None, help="units of the pooled context (default 256)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="rounds of exchange between the suits: every round after the first re-encodes each "
                             "suit knowing the last pooled context and pools again (default 1)")
    parser.add_argument("--history", action="store_true",
                        help="read the history planes (what each player led) after the observation; the labels must "
                             "hold them (label.history: true); with --init, a start fitted without them is grown to "
                             "read them, at zero weight")
    parser.add_argument("--init", type=Path, default=None,
                        help="start from this weights file (fine-tuning): its shape is kept, so --width, --context "
                             "and --rounds may not be given with it")
    args = parser.parse_args(argv)
    try:
        from sixtysix_env.fileio import writable_file

        from .distill import load_distill_config

        shape = {name: value for name, value in (("width", args.width), ("context", args.context),
                                                 ("rounds", args.rounds)) if value is not None}
        if args.init is not None and shape:
            raise ValueError("--init keeps the starting network's shape: leave out --width, --context and --rounds")
        for name, value in shape.items():
            if value < 1:
                raise ValueError(f"--{name} must be at least 1, got {value}")
        if args.out.suffix != ".npz":  # agents read a spec as suit-network weights by its .npz suffix
            raise ValueError(f"--out must be an .npz path, got {str(args.out)!r}")
        config = load_distill_config(args.config, args.set)
        writable_file(args.out, f"--out {str(args.out)!r}")  # before the labels are read and the network fitted
        print(fit_suit_network(config, args.out, init=args.init, history=args.history, **shape))
    except (ValueError, OSError) as error:  # bad input, or a path that cannot be read or written: no traceback
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
