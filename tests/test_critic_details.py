"""train.critic in detail: the held-out figures against a least-squares line by hand, the fit replayed by an
independent torch loop, the self-play positions against the core's own continuation, and what the command writes
and refuses (tiny runs: a few deals of one shipped suit network)."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.ppo import CRITIC_FORMAT, CRITIC_FORMAT_VERSION, ActorNetwork, QValueNetwork, load_critic  # noqa: E402
from sixtysix_env import Rules  # noqa: E402
from sixtysix_env.core.continuation import play_out  # noqa: E402
from sixtysix_env.core.critic_inputs import critic_features, critic_input_size  # noqa: E402
from sixtysix_env.core.layout import DEALER, TO_MOVE  # noqa: E402
from sixtysix_env.core.solver import Table  # noqa: E402
from train.critic import fit_critic, main, parse_hidden, predictive_figures, self_play_positions  # noqa: E402

NETWORK = "models/suit_a_standard.npz"  # one small suit network: quick self-play


def _line_by_hand(values: np.ndarray, returns: np.ndarray) -> dict[str, float]:
    """r, slope and intercept of the returns on the values by least squares, the mean squared error and the
    returns' variance, in float64."""
    values, returns = np.asarray(values, dtype=np.float64), np.asarray(returns, dtype=np.float64)
    slope, intercept = np.polyfit(values, returns, 1)
    return {"r": float(np.corrcoef(values, returns)[0, 1]), "slope": float(slope), "intercept": float(intercept),
            "mse": float(np.mean((values - returns) ** 2)), "variance": float(np.var(returns))}


def test_predictive_figures_are_the_least_squares_line_of_the_returns_on_the_values():
    """r, slope and intercept regress the returns on the values (not the other way round); the mean squared error
    is of the values against the returns, the variance the returns'."""
    values = np.array([0.5, -1.0, 2.0, 0.0, 1.5, -2.5], dtype=np.float32)
    returns = np.array([1.0, -1.0, 3.0, -2.0, 2.0, -3.0], dtype=np.float32)
    figures = predictive_figures(values, returns)
    expected = _line_by_hand(values, returns)
    assert figures.keys() == expected.keys()
    for name, value in expected.items():
        assert figures[name] == pytest.approx(value, rel=1e-6, abs=1e-9), name
    assert figures["slope"] != pytest.approx(1 / figures["slope"])  # the two regressions differ here


@pytest.mark.parametrize("text, widths", [("64", [64]), ("64,32", [64, 32]), (" 8, 4 ,2", [8, 4, 2]), ("1", [1])])
def test_parse_hidden_reads_comma_separated_widths(text, widths):
    """``--hidden``: layer widths, first to last."""
    assert parse_hidden(text) == widths


@pytest.mark.parametrize("text, message", [
    ("0", "--hidden must be positive layer widths, got '0'"),
    ("64,-1", "--hidden must be positive layer widths, got '64,-1'"),
    ("64,,32", "--hidden must be comma-separated layer widths, got '64,,32'"),
    ("", "--hidden must be comma-separated layer widths, got ''"),
    ("64;32", "--hidden must be comma-separated layer widths, got '64;32'"),
])
def test_parse_hidden_refuses_bad_widths_by_name(text, message):
    """A zero, negative, missing or unreadable width is a ``ValueError`` quoting the option's text."""
    with pytest.raises(ValueError) as refused:
        parse_hidden(text)
    assert str(refused.value) == message


def test_fit_critic_is_adam_with_a_cosine_decay_over_shuffled_batches_replayed_by_hand():
    """Replayed by an independent torch loop on made-up rows: a ReLU MLP with one linear output, seeded by
    ``fit_seed`` (weights, then the batch order from a generator of its own), squared error over batches of
    ``batch_size`` (the last one short), Adam at ``learning_rate`` decayed by a cosine stepped once per epoch; the
    critic's NumPy values are the replay's, and each epoch's held-out figures are the line by hand."""
    generator = np.random.default_rng(4)
    features = generator.random((50, 7)).astype(np.float16)
    returns = np.round(generator.normal(0, 2, 50)).astype(np.float32)
    val_features = generator.random((9, 7)).astype(np.float32)
    val_returns = np.round(generator.normal(0, 2, 9)).astype(np.float32)
    hidden, epochs, batch_size, rate, seed = [6, 5], 3, 16, 0.01, 9
    network, history = fit_critic(features, returns, val_features, val_returns, hidden, epochs, batch_size, rate, seed)

    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(7, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5), torch.nn.ReLU(),
                                torch.nn.Linear(5, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=rate)
    order = torch.Generator().manual_seed(seed)
    x, y = torch.from_numpy(features.astype(np.float32)), torch.from_numpy(returns)
    expected = []
    for epoch in range(epochs):
        for group in optimizer.param_groups:  # cosine from the rate towards zero over the epochs
            group["lr"] = rate * (1 + np.cos(np.pi * epoch / epochs)) / 2
        permutation = torch.randperm(50, generator=order)
        for start in range(0, 50, batch_size):
            rows = permutation[start:start + batch_size]
            loss = ((model(x[rows])[:, 0] - y[rows]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            expected.append(model(torch.from_numpy(val_features))[:, 0].numpy().copy())
    assert network.activation == "relu" and network.input_size == 7 and network.output_size == 1
    np.testing.assert_allclose(network.logits(val_features)[:, 0], expected[-1], rtol=1e-4, atol=1e-5)
    assert [entry["epoch"] for entry in history] == [1, 2, 3]
    for entry, values in zip(history, expected):
        for name, value in _line_by_hand(values, val_returns).items():
            assert entry[name] == pytest.approx(value, rel=1e-3, abs=1e-5), name


def test_self_play_positions_are_scored_by_the_core_continuation_and_do_not_depend_on_the_chunking():
    """Every kept position's return is what the network, playing both seats on from that very position in the
    core, scores for its mover (R16); the dealer alternates with the deal's number; cutting the deals into chunks
    of 3 gives the positions of one chunk (each deal's in the same order; a chunk interleaves its deals)."""
    whole = self_play_positions(NETWORK, 7, seed=3)
    chunked = self_play_positions(NETWORK, 7, seed=3, chunk=3)
    by_deal, chunked_by_deal = np.argsort(whole.deals, kind="stable"), np.argsort(chunked.deals, kind="stable")
    for name in ("observations", "states", "returns", "deals"):
        np.testing.assert_array_equal(getattr(chunked, name)[chunked_by_deal], getattr(whole, name)[by_deal],
                                      err_msg=name)
    assert set(whole.deals) == set(range(7))
    assert all((whole.states[whole.deals == deal, DEALER] == deal % 2).all() for deal in range(7))
    network = QValueNetwork(NETWORK)
    for row in np.linspace(0, len(whole.returns) - 1, 12).astype(int):
        state = whole.states[row:row + 1].astype(np.int64)
        mover = int(state[0, TO_MOVE])
        scored = play_out(state.copy(), np.array([mover]), network.network.logits, Table(), np.zeros(2, np.float32))
        assert whole.returns[row] == scored[0], row
    other = self_play_positions(NETWORK, 7, seed=4)  # another seed, other deals
    assert len(other.returns) != len(whole.returns) or (other.observations != whole.observations).any()
    with pytest.raises(ValueError, match="deals must be at least 1, got 0"):
        self_play_positions(NETWORK, 0, seed=3)
    with pytest.raises(ValueError, match="--network: .*missing.npz"):
        self_play_positions("missing.npz", 1, seed=3)


def test_the_command_writes_the_critic_its_metadata_and_figures_as_recomputed_by_hand(tmp_path, capsys):
    """A tiny run with every option given: the critic file carries the format, the rules, what it reads, its
    shape, the network, the number and seed of the fitting and held-out deals, the fit's seed and the held-out
    figures; the JSON beside it the arguments and every epoch. The figures are recomputed: the positions of the two
    seeds' self-play, and the critic's values on the held-out positions' inputs give the line by hand; the weights
    are those of ``fit_critic`` with the options given."""
    out = tmp_path / "c.npz"
    argv = ["--network", NETWORK, "--inputs", "opponent_hand", "--deals", "4", "--seed", "21", "--val-deals", "3",
            "--val-seed", "22", "--hidden", "6,5", "--epochs", "2", "--batch-size", "16", "--learning-rate", "0.01",
            "--fit-seed", "5", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert "self-play seed 21" in printed.err and "self-play seed 22" in printed.err  # progress bars by default
    critic, metadata = ActorNetwork.load_npz(out)
    saved = json.loads(out.with_suffix(".json").read_text())
    assert {key: metadata[key] for key in ("format", "format_version", "rules", "inputs", "activation", "hidden",
                                           "network", "deals", "seed", "val_deals", "val_seed", "fit_seed")} == {
        "format": CRITIC_FORMAT, "format_version": CRITIC_FORMAT_VERSION, "rules": Rules().to_dict(),
        "inputs": "opponent_hand", "activation": "relu", "hidden": [6, 5], "network": NETWORK, "deals": 4, "seed": 21,
        "val_deals": 3, "val_seed": 22, "fit_seed": 5}
    assert metadata["validation"] == saved["figures"]
    assert saved["args"] == {"network": NETWORK, "inputs": "opponent_hand", "deals": 4, "seed": 21, "val_deals": 3,
                             "val_seed": 22, "hidden": "6,5", "epochs": 2, "batch_size": 16, "learning_rate": 0.01,
                             "fit_seed": 5, "out": str(out), "progress": True}
    assert [entry["epoch"] for entry in saved["epochs"]] == [1, 2]
    figures = saved["figures"]
    assert {key: value for key, value in figures.items() if key not in ("positions", "val_positions", "seconds")} == \
        saved["epochs"][-1]
    fitted, held_out = self_play_positions(NETWORK, 4, 21), self_play_positions(NETWORK, 3, 22)
    assert (figures["positions"], figures["val_positions"]) == (len(fitted.returns), len(held_out.returns))
    assert f"{out}: {figures['positions']} positions" in printed.out
    val_inputs = critic_features(held_out.observations, held_out.states, "opponent_hand")
    assert critic.input_size == critic_input_size("opponent_hand")
    for name, value in _line_by_hand(critic.logits(val_inputs)[:, 0], held_out.returns).items():
        assert figures[name] == pytest.approx(value, rel=1e-3, abs=1e-5), name
    inputs = critic_features(fitted.observations, fitted.states, "opponent_hand").astype(np.float16)
    again, _ = fit_critic(inputs, fitted.returns, val_inputs, held_out.returns, [6, 5], 2, 16, 0.01, 5)
    np.testing.assert_allclose(critic.logits(val_inputs), again.logits(val_inputs), rtol=1e-5, atol=1e-6)
    loaded, rules = load_critic(out)
    assert rules == Rules() and loaded.inputs == "opponent_hand"


def test_the_commands_defaults_are_the_shipped_critics_recipe(capsys):
    """``--help`` names the defaults docs/training.md ("Session 56") fits the shipped critic with."""
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split()).split("options:", 1)[1]  # the options, not the usage line
    for flag, default in (("--network NETWORK", "suit_iterated"), ("--inputs INPUTS", "full"),
                          ("--deals DEALS", "100000"), ("--seed SEED", "197"), ("--val-deals VAL_DEALS", "10000"),
                          ("--val-seed VAL_SEED", "198"), ("--hidden HIDDEN", "256,256"), ("--epochs EPOCHS", "4"),
                          ("--batch-size BATCH_SIZE", "1024"), ("--learning-rate LEARNING_RATE", "0.001"),
                          ("--fit-seed FIT_SEED", "0")):
        assert flag in text
        assert text.split(flag, 1)[1].split(" --", 1)[0].rstrip().endswith(f"(default {default})"), flag
    assert "--progress, --no-progress" in text


@pytest.mark.parametrize("arguments, message", [
    (["--val-deals", "0"], "--val-deals must be at least 1, got 0"),
    (["--epochs", "0"], "--epochs must be at least 1, got 0"),
    (["--batch-size", "0"], "--batch-size must be at least 1, got 0"),
    (["--deals", "-5"], "--deals must be at least 1, got -5"),
    (["--hidden", "8,0"], "--hidden must be positive layer widths, got '8,0'"),
    (["--learning-rate", "-0.1"], "--learning-rate must be a positive number, got -0.1"),
    (["--learning-rate", "0"], "--learning-rate must be a positive number, got 0.0"),
    (["--seed", "-1"], "--seed must be a whole number from 0 to 2**63 - 1, got -1"),
    (["--val-seed", "-3"], "--val-seed must be a whole number from 0 to 2**63 - 1, got -3"),
    (["--fit-seed", str(2**64)], f"--fit-seed must be a whole number from 0 to 2**63 - 1, got {2**64}"),
    (["--inputs", "talon"], "inputs must be one of observation, opponent_hand, full, got 'talon'"),
    (["--network", "{tmp}/missing.npz"], "--network"),
    (["--out", "{tmp}/c.json"], "--out must be an .npz path, got"),
    (["--epochs", "1.5"], "--epochs: invalid int value: '1.5'"),
])
def test_the_command_refuses_bad_arguments_by_name_before_any_work(tmp_path, capsys, arguments, message):
    """Exit 2 and a one-line error naming the option and its value, nothing written; a negative seed was a
    numpy traceback once the self-play began (the held-out one after all the fitting deals' self-play)."""
    argv = ["--network", NETWORK, "--deals", "2", "--val-deals", "2", "--epochs", "1", "--hidden", "4",
            "--out", str(tmp_path / "c.npz"), "--no-progress", *arguments]
    with pytest.raises(SystemExit) as stopped:
        main([arg.replace("{tmp}", str(tmp_path)) for arg in argv])
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and message in error and "Traceback" not in error
    assert not list(tmp_path.iterdir())


def test_self_play_of_a_network_reading_the_history_planes_hands_it_them_and_keeps_the_observation(tmp_path):
    """A network fitted with the history planes (``label.history``) plays with them (it refuses an observation
    without them), and the positions keep the mover's observation alone (the critic reads no planes)."""
    from agents.suit import save_suit_weights
    from sixtysix_env.observation import OBSERVATION_SIZE
    from train.suit_network import build_suit_network

    torch.manual_seed(0)
    path = tmp_path / "planes.npz"
    save_suit_weights(path, {name: tensor.detach().numpy() for name, tensor in
                             build_suit_network(4, 4, history=True).state_dict().items()}, Rules(),
                      {"temperature": 0.25})
    positions = self_play_positions(str(path), 3, seed=8)
    assert positions.observations.shape == (len(positions.returns), OBSERVATION_SIZE)
    assert set(positions.deals) == {0, 1, 2} and set(np.abs(positions.returns)) <= {1.0, 2.0, 3.0}


def test_the_critic_file_records_the_rules_of_the_network_that_played(tmp_path):
    """A network fitted for other rules (here ``paderborn``) plays its own rules, and the critic says so:
    ``load_critic`` gives those rules, not the standard ones."""
    from agents.suit import save_suit_weights
    from train.suit_network import build_suit_network

    torch.manual_seed(0)
    path = tmp_path / "paderborn.npz"
    save_suit_weights(path, {name: tensor.detach().numpy() for name, tensor in
                             build_suit_network(4, 4).state_dict().items()}, Rules.preset("paderborn"),
                      {"temperature": 0.25})
    out = tmp_path / "c.npz"
    assert main(["--network", str(path), "--deals", "2", "--val-deals", "2", "--epochs", "1", "--hidden", "4",
                 "--inputs", "observation", "--out", str(out), "--no-progress"]) == 0
    _, rules = load_critic(out)
    assert rules == Rules.preset("paderborn") != Rules()
