"""train.suit_network in detail, on labels written by hand from explicit deals (no labelling run): the held-out
figures recomputed from the NumPy forward pass, the fit's steps replayed by an independent torch loop, what the
weights file's header records, the network's shape, and the command's options."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.suit import HISTORY_SUIT_INPUT, SUIT_INPUT, SuitNetwork, save_suit_weights, suit_header  # noqa: E402
from sixtysix_env import Game, InformationSet, Rules  # noqa: E402
from sixtysix_env.actions import NUM_ACTIONS  # noqa: E402
from sixtysix_env.observation import encode_extended_infoset, encode_infoset  # noqa: E402
from train.distill import LabelledDecisions, load_distill_config, q_regression_loss  # noqa: E402
from train.recorded import held_out_split  # noqa: E402
from train.suit_network import (build_suit_network, fit_suit_network, main, suit_shape,  # noqa: E402
                                with_history_inputs)

RULES = Rules()


def _labels(deals: range, history: bool = False) -> LabelledDecisions:
    """Two decisions per deal (the forehand's lead, then the answer to it), valued by an explicit formula of the
    action, the deal and the step; a stray value on an illegal action (never to count) and a legal action left
    unvalued (as a pruning search leaves one) on the way."""
    rows: dict[str, list] = {name: [] for name in LabelledDecisions.FIELDS}
    for deal in deals:
        game = Game.deal(RULES, seed=500 + deal, dealer=deal & 1)
        for step in range(2):
            player = game.current_player
            infoset = InformationSet(game, player)
            legal = sorted(game.legal_actions())
            values = np.full(NUM_ACTIONS, np.nan, dtype=np.float32)
            for action in legal:
                values[action] = ((action * 7 + deal * 3 + step) % 11) / 4 - 1
            if step == 0:
                values[next(action for action in range(NUM_ACTIONS) if action not in legal)] = 9.0
            elif len(legal) > 2:
                values[legal[-1]] = np.nan
            rows["observations"].append(encode_extended_infoset(infoset) if history else encode_infoset(infoset))
            rows["masks"].append(np.isin(np.arange(NUM_ACTIONS), legal))
            rows["teacher_actions"].append(max((action for action in legal if not np.isnan(values[action])),
                                               key=lambda action: values[action]))
            rows["teacher_values"].append(values)
            rows["returns"].append(1.0)
            rows["phase2"].append(False)
            rows["deals"].append(deal)
            game.apply(legal[0])
    return LabelledDecisions(np.array(rows["observations"], dtype=np.float32), np.array(rows["masks"]),
                             np.array(rows["teacher_actions"], dtype=np.int64),
                             np.array(rows["teacher_values"], dtype=np.float32),
                             np.array(rows["returns"], dtype=np.float32), np.array(rows["phase2"]),
                             np.array(rows["deals"], dtype=np.int64))


def _run(tmp_path: Path, name: str, deals: range, history: bool = False, fit: str = "") -> tuple[Path, Path]:
    """A run directory ``tmp_path/runs/name`` holding one chunk of :func:`_labels` and its config; returns the
    config's path and the run directory."""
    run_dir = tmp_path / "runs" / name
    (run_dir / "round_0").mkdir(parents=True)
    _labels(deals, history).save(run_dir / "round_0" / f"chunk_{deals.start:08d}.npz")
    config = run_dir / "config.yaml"
    config.write_text(f"run: {{name: {name}, out_dir: {str(tmp_path / 'runs')!r}, workers: 1, progress_bar: false}}\n"
                      f"label: {{deals: 100, chunk_deals: 10, source: true_world, history: {str(history).lower()}}}\n"
                      f"fit: {{target: q, {fit}}}\neval: {{opponents: []}}\n")
    return config, run_dir


def _start(path: Path, seed: int = 3, width: int = 8, context: int = 8, rounds: int = 2) -> dict[str, np.ndarray]:
    """A small seeded network written as a weights file; returns its weights."""
    torch.manual_seed(seed)
    weights = {name: tensor.detach().numpy().copy()
               for name, tensor in build_suit_network(width, context, rounds).state_dict().items()}
    save_suit_weights(path, weights, RULES, {"note": "hand-made start"})
    return weights


def _held_out_by_hand(weights: dict[str, np.ndarray], data: LabelledDecisions, rows: np.ndarray,
                      temperature: float) -> tuple[float, float]:
    """The held-out squared error and regret as documented, from the NumPy forward pass: per row, the logits
    centred over the valued legal actions (two or more) against the values centred alike over ``temperature``;
    the regret is the best valued legal action's value minus that of the greedy legal choice, over rows where both
    are valued."""
    logits = SuitNetwork(weights).logits(data.observations[rows]).astype(np.float64)
    losses, regrets = [], []
    for row, logit in zip(rows, logits):
        legal = data.masks[row]
        values = np.where(legal, data.teacher_values[row], np.nan).astype(np.float64)
        valued = ~np.isnan(values)
        if valued.sum() >= 2:
            target = (values[valued] - values[valued].mean()) / temperature
            losses.append(np.mean((logit[valued] - logit[valued].mean() - target) ** 2))
        else:
            losses.append(0.0)
        choice = np.flatnonzero(legal)[np.argmax(logit[legal])]
        if valued.any() and valued[choice]:
            regrets.append(np.nanmax(values) - values[choice])
    return float(np.mean(losses)), float(np.mean(regrets))


def test_a_fine_tunings_held_out_figures_are_the_squared_error_and_regret_recomputed_by_hand(tmp_path):
    """The epoch-0 figures of ``--init`` are the start's held-out squared error (over the temperature, whatever
    ``fit.regret_coef``) and regret, recomputed from the NumPy forward pass on the deals ``fit.seed`` holds out; a
    value on an illegal action and an unvalued legal action do not count; a step size of 1e-12 leaves them be."""
    share, seed, temperature = 0.3, 7, 0.5
    config, run_dir = _run(tmp_path, "hand", range(10), fit=f"epochs: 1, batch_size: 8, validation_share: {share}, "
                           f"seed: {seed}, temperature: {temperature}, regret_coef: 3, learning_rate: 1.0e-12")
    weights = _start(tmp_path / "start.npz")
    figures = fit_suit_network(load_distill_config(config, []), tmp_path / "out.npz", quiet=True,
                               init=tmp_path / "start.npz")
    data = LabelledDecisions.load(run_dir / "round_0" / "chunk_00000000.npz")
    _, validation = held_out_split(data.deals, share, np.random.default_rng(seed))
    assert 0 < len(validation) < len(data)
    loss, regret = _held_out_by_hand(weights, data, validation, temperature)
    assert regret > 0  # the start is no oracle: the check has something to see
    provenance = suit_header(tmp_path / "out.npz")["provenance"]
    start = provenance["init_validation"]
    assert start["epoch"] == 0
    assert start["validation_loss"] == pytest.approx(loss, rel=1e-4, abs=1e-5)
    assert start["validation_regret"] == pytest.approx(regret, rel=1e-4, abs=1e-5)
    assert figures["epoch"] == 1
    assert figures["validation_loss"] == pytest.approx(loss, rel=1e-4)
    assert figures["validation_regret"] == pytest.approx(regret, rel=1e-4, abs=1e-5)
    scalars = (run_dir / "suit_network" / "scalars.csv").read_text().splitlines()
    assert sum(",charts/validation_loss," in line for line in scalars) == 2  # epoch 0 and epoch 1


def test_a_start_network_of_other_rules_is_refused_before_the_fit(tmp_path):
    """R19-R20: ``--init`` fitted for paderborn, fine-tuned on this config's standard labels, was saved as a standard
    network without a word (fit.init_model, run.init_model and finetune refuse it); nothing is written."""
    config, _ = _run(tmp_path, "other", range(4), fit="epochs: 1, batch_size: 8")
    _start(tmp_path / "start.npz")
    weights, _ = SuitNetwork.load(tmp_path / "start.npz")
    save_suit_weights(tmp_path / "paderborn.npz", weights.weights, Rules.preset("paderborn"), {"note": "other rules"})
    with pytest.raises(ValueError, match=r"--init '.*paderborn\.npz' was fitted for the rules 'paderborn', not "
                                         r"'standard' \(switches differ: "):
        fit_suit_network(load_distill_config(config, []), tmp_path / "out.npz", quiet=True,
                         init=tmp_path / "paderborn.npz")
    assert not (tmp_path / "out.npz").exists()
    fit_suit_network(load_distill_config(config, []), tmp_path / "out.npz", quiet=True, init=tmp_path / "start.npz")


def test_the_fits_steps_are_adam_with_weight_decay_and_a_step_size_decayed_linearly_to_a_tenth(tmp_path):
    """Replayed by an independent torch loop: the held-out deals and the batch order drawn from ``fit.seed``,
    targets centred over the valued actions and divided by the temperature, the squared error plus
    ``fit.regret_coef`` times the regret term, Adam with ``fit.weight_decay``, the step size falling linearly from
    ``fit.learning_rate`` towards a tenth of it over every batch of every epoch (two per epoch here)."""
    share, seed, temperature, rate, decay, regret_coef, epochs = 0.2, 11, 0.25, 0.02, 0.3, 2.0, 2
    data = _labels(range(10))
    training, validation = held_out_split(data.deals, share, np.random.default_rng(seed))
    batch_size = len(training) // 2  # two rows per deal: an even count, two whole batches per epoch
    config, _ = _run(tmp_path, "steps", range(10), fit=f"epochs: {epochs}, batch_size: {batch_size}, "
                     f"validation_share: {share}, seed: {seed}, temperature: {temperature}, learning_rate: {rate}, "
                     f"weight_decay: {decay}, regret_coef: {regret_coef}")
    weights = _start(tmp_path / "start.npz", seed=5)
    fit_suit_network(load_distill_config(config, []), tmp_path / "out.npz", quiet=True, init=tmp_path / "start.npz")
    fitted, _ = SuitNetwork.load(tmp_path / "out.npz")

    network = build_suit_network(8, 8, 2)
    network.load_state_dict({name: torch.as_tensor(array) for name, array in weights.items()})
    values = data.teacher_values.astype(np.float64)
    valued = data.masks & ~np.isnan(values)
    valued &= valued.sum(axis=1, keepdims=True) >= 2
    means = np.where(valued, values, 0).sum(axis=1, keepdims=True) / np.maximum(valued.sum(axis=1, keepdims=True), 1)
    targets = torch.as_tensor(np.where(valued, (values - means) / temperature, 0.0).astype(np.float32))
    observations, valued = torch.as_tensor(data.observations), torch.as_tensor(valued)
    optimizer = torch.optim.Adam(network.parameters(), lr=rate, weight_decay=decay)
    steps, total = 0, epochs * 2
    order_draws = np.random.default_rng(seed)
    held_out_split(data.deals, share, order_draws)  # the same draws as the fit: the split, then each epoch's order
    for _epoch in range(epochs):
        order = order_draws.permutation(training)
        for start in range(0, len(order), batch_size):
            rows = torch.as_tensor(order[start:start + batch_size])
            for group in optimizer.param_groups:
                group["lr"] = rate * (1.0 - 0.9 * steps / total)
            loss = q_regression_loss(network(observations[rows]), valued[rows], targets[rows], regret_coef)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
    assert steps == 4
    moved = max(np.abs(fitted.weights[name] - weights[name]).max() for name in weights)
    assert moved > 0.01
    for name, tensor in network.state_dict().items():
        np.testing.assert_allclose(fitted.weights[name], tensor.detach().numpy(), rtol=1e-4, atol=2e-5, err_msg=name)


def test_the_header_records_what_the_network_was_fitted_on_and_how(tmp_path, capsys):
    """A fit from scratch of a 2-round network of width 8 and context 8 on a run's labels and an extra run's
    (``fit.extra_labels_from``, ``fit.deals``): the file holds that shape, and its header the labels' sources, the
    settings, the decisions of both runs, every epoch's figures and the last epoch's as ``validation``; it is
    seeded (the same fit again writes the same weights) and a quiet fit prints nothing."""
    _, extra_dir = _run(tmp_path, "extra", range(10, 14))
    config, run_dir = _run(tmp_path, "main", range(10), fit=f"epochs: 2, batch_size: 16, validation_share: 0.2, "
                           f"temperature: 0.5, learning_rate: 0.003, seed: 4, deals: [0, 20], "
                           f"extra_labels_from: [{str(extra_dir)!r}]")
    loaded = load_distill_config(config, [])
    figures = fit_suit_network(loaded, tmp_path / "a.npz", quiet=True, width=8, context=8, rounds=2)
    assert capsys.readouterr().out == ""
    network, rules = SuitNetwork.load(tmp_path / "a.npz")
    assert rules == RULES and network.rounds == 2 and not network.history
    assert network.weights["encode.0.weight"].shape == (8, SUIT_INPUT)
    assert network.weights["combine.0.weight"].shape[0] == 8
    provenance = suit_header(tmp_path / "a.npz")["provenance"]
    expected = {"labels_from": str(run_dir), "deals": [0, 20], "window_labels_from": None,
                "extra_labels_from": [str(extra_dir)], "fit_seed": 4, "epochs": 2, "width": 8, "context": 8,
                "rounds": 2, "history_planes": False, "temperature": 0.5, "regret_coef": 0.0, "learning_rate": 0.003,
                "init": None, "init_validation": None, "decisions": 2 * 14}
    assert {key: provenance[key] for key in expected} == expected
    assert [entry["epoch"] for entry in provenance["history"]] == [1, 2]
    assert all(entry["evaluations"] == [] for entry in provenance["history"])
    assert provenance["validation"] == {key: round(float(value), 5) for key, value in figures.items()}
    assert provenance["validation"]["epoch"] == 2
    fit_suit_network(loaded, tmp_path / "b.npz", quiet=True, width=8, context=8, rounds=2)
    again, _ = SuitNetwork.load(tmp_path / "b.npz")
    for name, array in network.weights.items():
        np.testing.assert_array_equal(again.weights[name], array, err_msg=name)


def test_the_learning_curve_evaluates_every_eval_every_epochs_and_after_the_last(tmp_path):
    """``eval.every: 2`` over three epochs: the network plays ``eval.opponents`` after epochs 2 and 3 only, and each
    epoch's record in the header holds the margin and its interval."""
    config, run_dir = _run(tmp_path, "curve", range(6), fit="epochs: 3, batch_size: 32, validation_share: 0.2")
    loaded = load_distill_config(config, ["eval.every=2", "eval.pairs=2", "eval.opponents=[random]"])
    fit_suit_network(loaded, tmp_path / "s.npz", quiet=True, width=4, context=4)
    history = suit_header(tmp_path / "s.npz")["provenance"]["history"]
    assert [len(entry["evaluations"]) for entry in history] == [0, 1, 1]
    assert set(history[2]["evaluations"][0]) == {"opponent", "margin", "margin_ci_low", "margin_ci_high"}
    assert history[2]["evaluations"][0]["margin_ci_low"] <= history[2]["evaluations"][0]["margin"]
    evaluations = [json.loads(line) for line in (run_dir / "suit_network" / "eval.jsonl").read_text().splitlines()]
    assert len(evaluations) == 2


def test_a_history_fit_from_scratch_reads_the_planes(tmp_path):
    """``--history`` without ``--init`` builds a network whose suit encoder reads the history planes too, and the
    header says so; labels without the planes are refused naming the labels' directory."""
    config, _ = _run(tmp_path, "planes", range(6), history=True, fit="epochs: 1, batch_size: 32")
    fit_suit_network(load_distill_config(config, []), tmp_path / "h.npz", quiet=True, width=4, context=4,
                     history=True)
    network, _ = SuitNetwork.load(tmp_path / "h.npz")
    assert network.history and network.weights["encode.0.weight"].shape == (4, HISTORY_SUIT_INPUT)
    assert suit_header(tmp_path / "h.npz")["provenance"]["history_planes"] is True
    plain, plain_dir = _run(tmp_path, "plain", range(6), fit="epochs: 1, batch_size: 32")
    with pytest.raises(ValueError, match=f"the labels in {str(plain_dir)!r} do not hold them"):
        fit_suit_network(load_distill_config(plain, []), tmp_path / "p.npz", quiet=True, width=4, context=4,
                         history=True)


def test_a_network_grown_to_read_the_history_planes_keeps_its_weights_and_is_grown_once():
    """:func:`with_history_inputs`: the encoder's first columns are the original's bit for bit, the planes' columns
    zero, every other layer unchanged; a network that reads the planes already is refused, naming its input size."""
    torch.manual_seed(1)
    weights = {name: tensor.detach().numpy() for name, tensor in build_suit_network(4, 4).state_dict().items()}
    grown = with_history_inputs(weights)
    assert grown["encode.0.weight"].shape == (4, HISTORY_SUIT_INPUT)
    np.testing.assert_array_equal(grown["encode.0.weight"][:, :SUIT_INPUT], weights["encode.0.weight"])
    assert not grown["encode.0.weight"][:, SUIT_INPUT:].any()
    assert all(grown[name] is weights[name] for name in weights if name != "encode.0.weight")
    assert suit_shape(grown) == (4, 4, 1, True) and suit_shape(weights) == (4, 4, 1, False)
    with pytest.raises(ValueError, match=f"takes {HISTORY_SUIT_INPUT} inputs, not the {SUIT_INPUT}"):
        with_history_inputs(grown)


def test_the_default_shape_is_width_128_context_256_one_round():
    """``build_suit_network()`` (and so the command without ``--width``, ``--context``, ``--rounds``): 128 units per
    suit, a pooled context of 256, one round."""
    assert suit_shape({name: tensor.numpy() for name, tensor in build_suit_network().state_dict().items()}) == (
        128, 256, 1, False)


def test_the_command_fits_the_shape_it_is_given_with_the_overrides(tmp_path, capsys):
    """``python -m train.suit_network``: ``--set`` overrides reach the fit, ``--width``/``--context``/``--rounds``
    shape the network written to ``--out``, the figures are printed and the exit code is 0."""
    config, _ = _run(tmp_path, "cli", range(6), fit="epochs: 3, batch_size: 32")
    out = tmp_path / "cli.npz"
    assert main(["--config", str(config), "--set", "fit.epochs=1", "--width", "4", "--context", "6", "--rounds", "3",
                 "--out", str(out)]) == 0
    assert "'validation_loss'" in capsys.readouterr().out
    network, _ = SuitNetwork.load(out)
    assert network.rounds == 3 and suit_shape(network.weights) == (4, 6, 3, False)
    assert suit_header(out)["provenance"]["epochs"] == 1


@pytest.mark.parametrize("arguments, message", [
    (["--rounds", "0"], "--rounds must be at least 1, got 0"),
    (["--rounds", "-2"], "--rounds must be at least 1, got -2"),
    (["--init", "{tmp}/start.npz", "--width", "4"], "--init keeps the starting network's shape"),
    (["--init", "{tmp}/start.npz", "--context", "4"], "--init keeps the starting network's shape"),
    (["--init", "{tmp}/missing.npz"], "missing.npz"),
    (["--init", "{tmp}/planes.npz"], "--init '{tmp}/planes.npz' reads the history planes: fine-tune it with --history"),
    (["--out", "{tmp}/s.npy"], "--out must be an .npz path, got"),
    (["--set", "fit.target=teacher"], "config key 'fit.target' is 'teacher': a suit network is fitted to the q target"),
])
def test_the_command_refuses_bad_options_by_name(tmp_path, capsys, arguments, message):
    """Bad shapes, a shape beside ``--init``, a missing ``--init`` file, one that reads the history planes without
    ``--history``, an ``--out`` that is no .npz and a fit target other than ``q``: exit 2, a one-line error naming
    the option or key and its value, nothing written."""
    config, _ = _run(tmp_path, "bad", range(4), fit="epochs: 1")
    _start(tmp_path / "start.npz")
    save_suit_weights(tmp_path / "planes.npz", with_history_inputs(_start(tmp_path / "flat.npz")), RULES)
    before = set(tmp_path.rglob("*"))
    argv = ["--config", str(config), "--out", str(tmp_path / "s.npz"), *arguments]
    assert main([arg.replace("{tmp}", str(tmp_path)) for arg in argv]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and message.replace("{tmp}", str(tmp_path)) in error
    assert "Traceback" not in error
    assert set(tmp_path.rglob("*")) == before


def test_a_fit_holding_no_deal_out_writes_its_weights_without_held_out_figures(tmp_path, capsys):
    """``fit.validation_share: 0`` (which the config accepts): every deal is fitted and the fit ends with its
    weights and no held-out figures, as ``sixtysix distill fit`` does; it failed after the first epoch ("need at
    least one array to concatenate") and wrote nothing. A fine-tuning's epoch 0 then holds only its number."""
    config, run_dir = _run(tmp_path, "all", range(6), fit="epochs: 2, batch_size: 32, validation_share: 0")
    out = tmp_path / "all.npz"
    assert main(["--config", str(config), "--width", "4", "--context", "4", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "error" not in printed.err and "'epoch': 2" in printed.out
    provenance = suit_header(out)["provenance"]
    assert set(provenance["validation"]) == {"epoch", "epoch_seconds"} and provenance["validation"]["epoch"] == 2
    assert "charts/validation" not in (run_dir / "suit_network" / "scalars.csv").read_text()
    _start(tmp_path / "start.npz")
    figures = fit_suit_network(load_distill_config(config, []), tmp_path / "tuned.npz", quiet=True,
                               init=tmp_path / "start.npz")
    assert set(figures) == {"epoch", "epoch_seconds"}
    assert suit_header(tmp_path / "tuned.npz")["provenance"]["init_validation"] == {"epoch": 0}


def test_a_fit_with_window_labels_records_them_and_fits_their_rows_beside_its_own(tmp_path):
    """``fit.window_labels_from``: the run's own rows outside the window (talon of 0 to 5 cards; these rows are
    the first two of a deal, talon full) are fitted beside every row of the window run, and the header names it."""
    _, window_dir = _run(tmp_path, "window", range(20, 23))
    (window_dir / "config.yaml").write_text(
        (window_dir / "config.yaml").read_text().replace("source: true_world,", "source: true_world, "
                                                         "talon_window: [0, 5],"))
    config, _ = _run(tmp_path, "own", range(4), fit=f"epochs: 1, batch_size: 32, window_labels_from: "
                     f"{str(window_dir)!r}")
    fit_suit_network(load_distill_config(config, []), tmp_path / "w.npz", quiet=True, width=4, context=4)
    provenance = suit_header(tmp_path / "w.npz")["provenance"]
    assert provenance["window_labels_from"] == str(window_dir)
    assert provenance["decisions"] == 2 * 4 + 2 * 3


def test_fit_deals_holds_the_window_labels_of_other_deals_out_too(tmp_path):
    """``fit.deals`` restricted the rounds and the endgame labels but fitted every chunk of ``window_labels_from``:
    deals held out for a test were fitted through the window."""
    from train.distill import load_labels

    _, window_dir = _run(tmp_path, "window", range(20, 23))
    (window_dir / "config.yaml").write_text(
        (window_dir / "config.yaml").read_text().replace("source: true_world,", "source: true_world, "
                                                         "talon_window: [0, 5],"))
    config, _ = _run(tmp_path, "own", range(4), fit=f"window_labels_from: {str(window_dir)!r}")
    assert sorted(set(load_labels(load_distill_config(config, ["fit.deals=[0,30]"]), 1).deals)) == \
        [0, 1, 2, 3, 20, 21, 22]
    with pytest.raises(ValueError, match=r"no distillation labels in .*window' \(fit.window_labels_from\) for "
                                         r"fit.deals \[0, 10\]"):
        load_labels(load_distill_config(config, ["fit.deals=[0,10]"]), 1)
