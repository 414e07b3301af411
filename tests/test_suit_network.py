"""agents.suit and train.suit_network: the network that shares its weights over the suits (docs/training.md,
"Session 14")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sixtysix_env import Game, Rules  # noqa: E402
from sixtysix_env.infoset import InformationSet  # noqa: E402
from sixtysix_env.observation import OBSERVATION_SLICES, ObservationEncoder  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.suit import CARD_PIECES, SUIT_FLAG_PIECES, SuitNetwork, save_suit_weights, suit_inputs  # noqa: E402
from eval.play import play_deal  # noqa: E402
from train.suit_network import build_suit_network, fit_suit_network, main  # noqa: E402


def _permuted(observation: np.ndarray, order: list[int]) -> np.ndarray:
    """The observation of the same position with suit ``order[s]`` in the place of suit ``s`` (R1 card ids
    ``6 * suit + rank``)."""
    permuted = observation.copy()
    for name in CARD_PIECES:
        piece = OBSERVATION_SLICES[name]
        permuted[piece] = observation[piece].reshape(4, 6)[order].reshape(24)
    for name in SUIT_FLAG_PIECES:
        piece = OBSERVATION_SLICES[name]
        permuted[piece] = observation[piece][order]
    return permuted


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_permuting_the_plain_suits_permutes_the_card_and_marriage_scores_and_nothing_else(rounds):
    """R1/R5: the suits other than trump are interchangeable; the network is equivariant under their permutations
    by construction (shared suit encoder, a sum over the plain suits), not by training; with further rounds too."""
    torch.manual_seed(0)
    network = build_suit_network(width=16, context=32, rounds=rounds).eval()
    game = Game.deal(Rules(), seed=5, dealer=0)
    observation = ObservationEncoder(Rules()).encode(game, game.current_player)
    trump = int(np.flatnonzero(observation[OBSERVATION_SLICES["trump_suit"]])[0])
    plain = [suit for suit in range(4) if suit != trump]
    order = list(range(4))
    order[plain[0]], order[plain[1]], order[plain[2]] = plain[1], plain[2], plain[0]
    with torch.no_grad():
        first, second = network(torch.as_tensor(np.stack([observation, _permuted(observation, order)])))
    np.testing.assert_allclose(first[:24].reshape(4, 6)[order].reshape(24), second[:24], atol=1e-5)
    np.testing.assert_allclose(first[24:32].reshape(4, 2)[order].reshape(8), second[24:32], atol=1e-5)
    np.testing.assert_allclose(first[32:], second[32:], atol=1e-5)
    # Renaming every suit, trump with them, is the same position too; making another suit trump is not.
    swap = list(range(4))
    swap[trump], swap[plain[0]] = plain[0], trump
    other_trump = observation.copy()
    other_trump[OBSERVATION_SLICES["trump_suit"]] = np.eye(4, dtype=np.float32)[plain[0]]
    with torch.no_grad():
        renamed, retrumped = network(torch.as_tensor(np.stack([_permuted(observation, swap), other_trump])))
    np.testing.assert_allclose(first[:24].reshape(4, 6)[swap].reshape(24), renamed[:24], atol=1e-5)
    assert not torch.allclose(first[:24], retrumped[:24], atol=1e-4)


def test_each_suit_sees_its_own_six_cards_of_every_piece():
    observation = np.zeros((1, 281), dtype=np.float32)
    observation[0, OBSERVATION_SLICES["hand"].start + 6 * 2 + 5] = 1  # the ace of suit 2 in my hand
    observation[0, OBSERVATION_SLICES["unseen"].start + 6 * 1 + 0] = 1  # the nine of suit 1 unseen
    inputs = suit_inputs(torch.as_tensor(observation))[0]
    hand, unseen = CARD_PIECES.index("hand"), CARD_PIECES.index("unseen")
    assert inputs[2, hand * 6 + 5] == 1 and inputs[1, unseen * 6 + 0] == 1
    assert inputs[:, :len(CARD_PIECES) * 6].sum() == 2


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_the_numpy_forward_pass_is_the_torch_networks_and_the_agent_plays_it(tmp_path, rounds):
    torch.manual_seed(1)
    network = build_suit_network(width=16, context=32, rounds=rounds).eval()
    assert any(name.startswith("mix.") for name in network.state_dict()) == (rounds >= 2)
    assert any(name.startswith("mix3.") for name in network.state_dict()) == (rounds == 3)
    path = tmp_path / "suit.npz"
    save_suit_weights(path, {name: tensor.numpy() for name, tensor in network.state_dict().items()}, Rules())
    loaded, rules = SuitNetwork.load(path)
    assert rules == Rules() and loaded.rounds == rounds
    observations = np.random.default_rng(0).integers(0, 2, size=(5, 281)).astype(np.float32)
    with torch.no_grad():
        expected = network(torch.as_tensor(observations)).numpy()
    for row in range(5):
        np.testing.assert_allclose(loaded.logits(observations[row]), expected[row], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(loaded.logits(observations), expected, rtol=1e-4, atol=1e-5)  # a batch at once
    if rounds >= 2:  # every round needs all of its layers
        last = "recombine.2" if rounds == 2 else f"recombine{rounds}.2"
        partial = {name: tensor.numpy() for name, tensor in network.state_dict().items() if not name.startswith(last)}
        save_suit_weights(tmp_path / "partial.npz", partial, Rules())
        with pytest.raises(ValueError, match=rf"missing \['{last}.weight', '{last}.bias'\]"):
            SuitNetwork.load(tmp_path / "partial.npz")
    for bad_rounds in (0, 1.5, True):
        with pytest.raises(ValueError, match=f"rounds must be a whole number >= 1, got {bad_rounds}"):
            build_suit_network(rounds=bad_rounds)
    agent = make_agent(f"suit:path={path}", seed=0)
    outcome = play_deal(Game.deal(Rules(), seed=3, dealer=0), [agent, make_agent("heuristic", seed=1)], [1, 2])
    assert abs(outcome.returns[0]) in (1, 2, 3)
    # path=A+B: the mean of the members' logits
    torch.manual_seed(2)
    other = build_suit_network(width=16, context=32).eval()
    other_path = tmp_path / "other.npz"
    save_suit_weights(other_path, {name: tensor.numpy() for name, tensor in other.state_dict().items()}, Rules())
    ensemble = make_agent(f"suit:path={path}+{other_path}", seed=0)
    with torch.no_grad():
        second = other(torch.as_tensor(observations)).numpy()
    np.testing.assert_allclose(ensemble.network.logits(observations[0]), (expected[0] + second[0]) / 2, rtol=1e-4,
                               atol=1e-5)
    save_suit_weights(tmp_path / "paderborn.npz", {name: tensor.numpy() for name, tensor in other.state_dict().items()},
                      Rules.preset("paderborn"))
    with pytest.raises(ValueError, match="fitted for different rules"):
        make_agent(f"suit:path={path}+{tmp_path / 'paderborn.npz'}")


def test_a_fit_on_labels_writes_weights_the_agent_loads_and_bad_files_are_refused(tmp_path, capsys):
    from label_runs import tiny_label_run
    from train.distill import load_distill_config

    config_path, _run_dir = tiny_label_run(tmp_path, deals=20, chunk_deals=20, worlds=2)
    out = tmp_path / "suit.npz"
    fit_config = load_distill_config(config_path, ["fit.epochs=2", "fit.batch_size=64", "fit.validation_share=0.25",
                                                   "eval.every=1", "eval.pairs=3", "eval.opponents=[random]"])
    figures = fit_suit_network(fit_config, out, quiet=True)
    assert figures["epoch"] == 2 and np.isfinite(figures["validation_loss"]) and figures["validation_regret"] >= 0
    # The learning curve: the network after each epoch against eval.opponents, in RUN_DIR/suit_network.
    curve_dir = fit_config.run_dir / "suit_network"
    rows = (curve_dir / "scalars.csv").read_text().splitlines()
    assert sum(row.split(",")[1] == "eval/random/margin" for row in rows[1:]) == 2
    assert (curve_dir / "learning_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert len((curve_dir / "eval.jsonl").read_text().splitlines()) == 2
    fit_suit_network(fit_config, tmp_path / "again.npz", quiet=True)  # a fit again replaces the curve
    assert len((curve_dir / "eval.jsonl").read_text().splitlines()) == 2
    assert sum(row.split(",")[1] == "eval/random/margin"
               for row in (curve_dir / "scalars.csv").read_text().splitlines()[1:]) == 2
    assert make_agent(f"suit:path={out}", seed=0).rules == Rules()
    from agents.suit import suit_header

    provenance = suit_header(out)["provenance"]
    assert provenance["fit_seed"] == fit_config.run.seed and provenance["epochs"] == 2
    assert provenance["decisions"] > 0 and provenance["validation"]["epoch"] == 2
    assert provenance["history_planes"] is False and provenance["regret_coef"] == 0.0
    history = provenance["history"]
    assert [entry["epoch"] for entry in history] == [1, 2] and history[-1]["validation_loss"] == figures[
        "validation_loss"]
    assert [entry["evaluations"][0]["opponent"] for entry in history] == ["random", "random"]
    assert all(-3 <= entry["evaluations"][0]["margin"] <= 3 for entry in history)
    (tmp_path / "bad.npz").write_bytes(b"not a network")
    with pytest.raises(ValueError, match="is not a suit-network weights file"):
        make_agent(f"suit:path={tmp_path / 'bad.npz'}")
    np.savez(tmp_path / "other.npz", header=np.array('{"format": "something"}'))
    with pytest.raises(ValueError, match="is not a suit-network weights file"):
        make_agent(f"suit:path={tmp_path / 'other.npz'}")
    with np.load(out, allow_pickle=False) as archive:  # the right header, a layer missing: named, not a KeyError
        layers = {name: archive[name] for name in archive.files if name != "encode.0.weight"}
    np.savez(tmp_path / "partial.npz", **layers)
    with pytest.raises(ValueError, match=r"missing \['encode\.0\.weight'\]"):
        make_agent(f"suit:path={tmp_path / 'partial.npz'}")
    with pytest.raises(ValueError, match="suit needs path=FILE"):
        make_agent("suit")
    assert main(["--config", str(config_path), "--set", "run.name=empty", "--out", str(out)]) == 2
    assert "no distillation labels" in capsys.readouterr().err
    assert main(["--config", str(config_path), "--set", "fit.target=teacher", "--out", str(out)]) == 2
    assert "a suit network is fitted to the q target" in capsys.readouterr().err


def test_the_held_out_regret_counts_the_rows_the_teacher_valued(tmp_path):
    """A search teacher that hands the end of a deal (R8) to its exact solver values no action there (here every
    phase-2 row is left unvalued): the fit learns from the other rows, and its held-out regret is theirs, not NaN."""
    from train.distill import Distiller, LabelledDecisions, load_distill_config

    config_path = tmp_path / "distill.yaml"
    config_path.write_text(f"""
run: {{name: tiny, out_dir: {str(tmp_path / 'runs')!r}, workers: 1, progress_bar: false}}
label: {{deals: 30, chunk_deals: 30, source: true_world, worlds: 2}}
fit: {{target: q, epochs: 1, batch_size: 64, validation_share: 0.3}}
""")
    config = load_distill_config(config_path, [])
    Distiller(config, quiet=True).label(0)
    chunk = config.run_dir / "round_0" / "chunk_00000000.npz"
    labels = LabelledDecisions.load(chunk)
    assert 0 < labels.phase2.sum() < len(labels)
    labels.teacher_values[labels.phase2] = np.nan  # as expert's labels after the talon's exhaustion
    labels.save(chunk)
    figures = fit_suit_network(config, tmp_path / "suit.npz", quiet=True)
    assert np.isfinite(figures["validation_loss"]) and np.isfinite(figures["validation_regret"])
    assert figures["validation_regret"] >= 0


def test_the_shipped_suit_ensemble_is_its_three_members_and_plays():
    """``suit_ensemble`` (docs/training.md, "Session 14"): the mean of the three shipped suit networks, fitted for
    the standard rules; it plays a whole deal against ``heuristic``."""
    from agents.suit import SuitEnsemble

    agent = make_agent("suit_ensemble", seed=0)
    assert isinstance(agent.network, SuitEnsemble) and len(agent.network.members) == 3
    assert [path.name for path in agent.paths] == [f"suit_{member}_standard.npz" for member in "abc"]
    assert agent.rules == Rules()
    from agents.suit import suit_header

    assert [suit_header(path)["provenance"]["window_labels_from"] is not None for path in agent.paths] == \
        [False, True, True]
    game = Game.deal(Rules(), seed=11, dealer=1)
    observation = ObservationEncoder(Rules()).encode(game, game.current_player)
    np.testing.assert_allclose(agent.network.logits(observation),
                               np.mean([member.logits(observation) for member in agent.network.members], axis=0))
    outcome = play_deal(game, [agent, make_agent("heuristic", seed=1)], [1, 2])
    assert abs(outcome.returns[0]) in (1, 2, 3)


def test_suit_networks_are_q_networks_for_a_search_prior(tmp_path):
    """``rollout:prior=A.npz+B.npz`` (issue 11): the suit networks' logits times their fit's temperature (header) are
    the prior's game points, centred over the legal actions; with an overwhelming weight the search plays the
    network's best action; files that record no temperature, or different ones, are refused by name."""
    from agents.ppo import QValueNetwork
    from sixtysix_env import InformationSet

    paths = [f"models/suit_{member}_standard.npz" for member in "ab"]
    prior = QValueNetwork("+".join(paths))
    assert prior.temperature == 0.25
    game = Game.deal(Rules(), seed=21, dealer=0)
    infoset = InformationSet(game, game.current_player)
    values = prior.values(infoset)
    observation = ObservationEncoder(Rules()).encode(game, game.current_player)
    logits = np.mean([SuitNetwork.load(path)[0].logits(observation) for path in paths], axis=0)
    legal = infoset.legal_actions
    assert sorted(values) == sorted(legal)
    for action in legal:
        assert values[action] == pytest.approx((logits[action] - np.mean(logits[legal])) * 0.25, abs=1e-5)
    follows = make_agent(f"expert:samples=24,seconds=none,prune=none,prior={'+'.join(paths)},prior_weight=1e9",
                         seed=7)
    assert values[follows.act(infoset)] == max(values.values())
    ensemble = QValueNetwork("suit_ensemble")  # an agent's alias names its files
    assert len(ensemble.network.members) == 3 and ensemble.temperature == 0.25
    torch.manual_seed(3)
    weights = {name: tensor.numpy() for name, tensor in build_suit_network(width=8, context=8).state_dict().items()}
    save_suit_weights(tmp_path / "bare.npz", weights, Rules())
    with pytest.raises(ValueError, match="rollout's prior: .*do not record one q temperature"):
        make_agent(f"expert:prior={tmp_path / 'bare.npz'}")
    save_suit_weights(tmp_path / "hot.npz", weights, Rules(), {"temperature": 0.5})
    with pytest.raises(ValueError, match="do not record one q temperature"):
        QValueNetwork(f"{paths[0]}+{tmp_path / 'hot.npz'}")
    save_suit_weights(tmp_path / "flag.npz", weights, Rules(), {"temperature": True})  # JSON true is not 1.0
    with pytest.raises(ValueError, match="do not record one q temperature"):
        QValueNetwork(str(tmp_path / "flag.npz"))


def test_the_shipped_suit_two_network_has_its_second_round_and_plays():
    """``suit_two`` (docs/training.md, "Session 15"): one suit network fitted with a second round of exchange between
    the suits on member a's labels; its header records that recipe, and it plays a whole deal against ``heuristic``."""
    agent = make_agent("suit_two", seed=0)
    assert isinstance(agent.network, SuitNetwork) and agent.network.rounds == 2
    from agents.suit import suit_header

    provenance = suit_header(agent.paths[0])["provenance"]
    assert (provenance["rounds"], provenance["deals"], provenance["fit_seed"]) == (2, [0, 450000], 1303)
    assert agent.rules == Rules()
    game = Game.deal(Rules(), seed=12, dealer=0)
    outcome = play_deal(game, [agent, make_agent("heuristic", seed=1)], [1, 2])
    assert abs(outcome.returns[0]) in (1, 2, 3)


def assert_plays_the_mean_of_its_members(agent) -> tuple[np.ndarray, np.ndarray]:
    """A shipped ensemble's logits on one observation are the mean of its members' own, and it plays a deal out
    against the heuristic; returns the observation and the logits for the caller's own checks."""
    observation = ObservationEncoder(Rules()).encode(Game.deal(Rules(), seed=4, dealer=0), 0)
    logits = agent.network.logits(observation)
    np.testing.assert_allclose(logits, np.mean([member.logits(observation) for member in agent.network.members],
                                               axis=0), rtol=1e-5, atol=1e-5)
    outcome = play_deal(Game.deal(Rules(), seed=12, dealer=0), [agent, make_agent("heuristic", seed=1)], [1, 2])
    assert abs(outcome.returns[0]) in (1, 2, 3)
    return observation, logits


def test_the_shipped_suit_pair_averages_a_two_round_and_a_three_round_network_and_plays():
    """``suit_pair`` (docs/training.md, "Session 16"): member a's labels and seed, two rounds fitted for 10 epochs
    and three rounds for 8; the agent plays the mean of their logits (the headers record the recipes)."""
    from agents.suit import SuitEnsemble, suit_header

    agent = make_agent("suit_pair", seed=0)
    assert isinstance(agent.network, SuitEnsemble)
    assert [member.rounds for member in agent.network.members] == [2, 3]
    recipes = [suit_header(path)["provenance"] for path in agent.paths]
    assert [(recipe["rounds"], recipe["epochs"], recipe["deals"], recipe["fit_seed"]) for recipe in recipes] == [
        (2, 10, [0, 450000], 1303), (3, 8, [0, 450000], 1303)]
    assert_plays_the_mean_of_its_members(agent)


def assert_fine_tuned_pair(paths, fit_seeds: tuple[int, int], started_from: str, decisions: int) -> None:
    """The headers of a shipped two- and three-round pair record a fine-tuning of 2 epochs at step 3e-4 with these
    fit seeds, from ``models/suit_{two_long,three}<started_from>_standard.npz``, on ``decisions`` labelled rows."""
    from agents.suit import suit_header

    recipes = [suit_header(path)["provenance"] for path in paths]
    recipe_keys = ("rounds", "epochs", "fit_seed", "learning_rate")
    assert [tuple(recipe[key] for key in recipe_keys) for recipe in recipes] == [(2, 2, fit_seeds[0], 0.0003),
                                                                               (3, 2, fit_seeds[1], 0.0003)]
    assert [recipe["init"]["path"] for recipe in recipes] == [f"models/suit_{member}{started_from}_standard.npz"
                                                              for member in ("two_long", "three")]
    assert {recipe["decisions"] for recipe in recipes} == {decisions}


def test_the_shipped_suit_iterated_is_suit_pairs_members_fine_tuned_on_the_iterated_labels_and_plays():
    """``suit_iterated`` (docs/training.md, "Session 38"): each member starts from the ``suit_pair`` member of its
    shape and is fine-tuned 2 epochs on the labels of configs/distill_iterated.yaml (the headers record the recipe,
    the start and its labels); the agent plays the mean of the members' logits, which are not suit_pair's."""
    agent, pair = make_agent("suit_iterated", seed=0), make_agent("suit_pair", seed=0)
    assert [member.rounds for member in agent.network.members] == [2, 3]
    assert_fine_tuned_pair(agent.paths, fit_seeds=(3301, 3302), started_from="", decisions=752395)
    observation, logits = assert_plays_the_mean_of_its_members(agent)
    assert not np.allclose(logits, pair.network.logits(observation))


def test_the_shipped_suit_averaged_is_suit_iterated_beside_its_members_fine_tuned_on_self_play_labels():
    """``suit_averaged`` (docs/training.md, "Session 43"): two members start from ``suit_iterated``'s and are
    fine-tuned 2 epochs on the self-play labels of configs/distill_selfplay.yaml (the headers record the recipe and
    the start); suit_iterated's own two members stay beside them, and the agent plays the mean of all four logits."""
    from train.distill import load_distill_config

    agent, iterated = make_agent("suit_averaged", seed=0), make_agent("suit_iterated", seed=0)
    assert [member.rounds for member in agent.network.members] == [2, 3, 2, 3]
    assert [path.name for path in agent.paths[2:]] == [path.name for path in iterated.paths]
    assert_fine_tuned_pair(agent.paths[:2], fit_seeds=(3701, 3702), started_from="_iterated", decisions=593562)
    label = load_distill_config("configs/distill_selfplay.yaml").label
    assert (label.behaviour, label.continuation, label.opponent, label.continuation_seats) == (
        "suit_iterated", "suit_iterated", None, "both")
    observation, logits = assert_plays_the_mean_of_its_members(agent)
    assert not np.allclose(logits, iterated.network.logits(observation))


@pytest.mark.parametrize("spec, predecessor, fit_seeds, decisions", [
    ("suit_averaged_80k", "suit_averaged", (4001, 4002), 1188111),     # docs/training.md, "Session 48"
    ("suit_averaged_120k", "suit_averaged_80k", (4201, 4202), 1780876),  # docs/training.md, "Session 50"
])
def test_the_shipped_suit_averaged_on_more_deals_is_suit_averageds_recipe_on_the_self_play_labels_run_on(
        spec, predecessor, fit_seeds, decisions):
    """``suit_averaged_80k`` and ``suit_averaged_120k``: suit_averaged's form, its two fine-tuned members refitted from
    ``suit_iterated``'s on the self-play labels run on to 80,000 and 120,000 deals (the headers record the fit seeds
    and the number of labelled decisions); suit_iterated's two stay beside them; the agent plays the mean of all four
    logits, which are not those of the network on fewer deals."""
    agent, previous = make_agent(spec, seed=0), make_agent(predecessor, seed=0)
    assert [member.rounds for member in agent.network.members] == [2, 3, 2, 3]
    assert [path.name for path in agent.paths[2:]] == [path.name for path in previous.paths[2:]]
    assert_fine_tuned_pair(agent.paths[:2], fit_seeds=fit_seeds, started_from="_iterated", decisions=decisions)
    observation, logits = assert_plays_the_mean_of_its_members(agent)
    assert not np.allclose(logits, previous.network.logits(observation))


def test_an_ensemble_runs_members_of_one_architecture_stacked_and_gives_the_mean_of_their_logits():
    """``SuitEnsemble`` stacks members of the same architecture into one forward pass (agents/suit.py); its logits are
    still the mean of each member's own, for one observation and for a batch, whatever the order of the members."""
    from agents.suit import SuitEnsemble, load_suit_networks

    paths = [Path("models/suit_two_long_standard.npz"), Path("models/suit_three_standard.npz"),
             Path("models/suit_two_standard.npz")]
    ensemble, _ = load_suit_networks(paths)
    assert isinstance(ensemble, SuitEnsemble) and len(ensemble._groups) == 2  # two rounds twice, three rounds once
    encoder = ObservationEncoder(Rules())
    batch = np.stack([encoder.encode(game, game.current_player)
                      for game in (Game.deal(Rules(), seed=seed, dealer=seed % 2) for seed in range(16))])
    expected = np.mean([member.logits(batch) for member in ensemble.members], axis=0)
    np.testing.assert_allclose(ensemble.logits(batch), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ensemble.logits(batch[3]), expected[3], rtol=1e-5, atol=1e-5)
    reordered, _ = load_suit_networks([paths[2], paths[1], paths[0]])
    np.testing.assert_allclose(reordered.logits(batch), expected, rtol=1e-5, atol=1e-5)
    member = ensemble.members[0]
    assert member.logits(batch).shape == (16, 37)
    np.testing.assert_allclose(member.logits(batch[5]), member.logits(batch)[5], rtol=1e-6, atol=1e-6)


def test_a_fit_can_start_from_a_weights_file_and_keeps_its_shape(tmp_path, capsys):
    """``--init`` (fine-tuning, docs/training.md "Session 18"): the fit starts from the file's weights with its
    shape (a two-round network stays one), records where it started, and moves the weights only as far as its
    step size lets it; a shape given beside it, or a file of another kind, is refused by name."""
    from agents.suit import SuitNetwork, suit_header
    from train.distill import Distiller, load_distill_config

    config_path = tmp_path / "distill.yaml"
    config_path.write_text(f"""
run: {{name: tiny, out_dir: {str(tmp_path / 'runs')!r}, workers: 1, progress_bar: false}}
label: {{deals: 20, chunk_deals: 20, source: true_world, worlds: 2}}
fit: {{target: q, epochs: 1, batch_size: 64, validation_share: 0.25}}
""")
    Distiller(load_distill_config(config_path, []), quiet=True).label(0)
    start = tmp_path / "start.npz"
    network = build_suit_network(width=16, context=32, rounds=2).eval()
    save_suit_weights(start, {name: tensor.detach().numpy() for name, tensor in network.state_dict().items()}, Rules(),
                      {"temperature": 0.25, "epochs": 3})
    for rate, out in ((1e-9, tmp_path / "still.npz"), (1e-2, tmp_path / "moved.npz")):
        fit_suit_network(load_distill_config(config_path, [f"fit.learning_rate={rate}"]), out, quiet=True, init=start)
    begun, _ = SuitNetwork.load(start)
    still, _ = SuitNetwork.load(tmp_path / "still.npz")
    moved, _ = SuitNetwork.load(tmp_path / "moved.npz")
    assert still.rounds == moved.rounds == 2 and still.weights.keys() == begun.weights.keys()
    assert all(np.allclose(still.weights[name], begun.weights[name], atol=1e-6) for name in begun.weights)
    assert max(np.abs(moved.weights[name] - begun.weights[name]).max() for name in begun.weights) > 1e-3
    provenance = suit_header(tmp_path / "still.npz")["provenance"]
    assert provenance["init"] == {"path": str(start), "provenance": {"temperature": 0.25, "epochs": 3}}
    assert provenance["rounds"] == 2 and provenance["width"] == 16 and provenance["context"] == 32
    # Where the start stood on the held-out labels comes first (epoch 0): the unmoved fit ends where it began, the
    # moved one elsewhere.
    begun_figures, still_figures = provenance["init_validation"], provenance["validation"]
    assert begun_figures["epoch"] == 0 and begun_figures["validation_regret"] >= 0
    assert np.isclose(begun_figures["validation_loss"], still_figures["validation_loss"], rtol=1e-3)
    moved_provenance = suit_header(tmp_path / "moved.npz")["provenance"]
    assert moved_provenance["init_validation"] == begun_figures
    assert not np.isclose(moved_provenance["validation"]["validation_loss"], begun_figures["validation_loss"],
                          rtol=1e-3)
    # fit.regret_coef: the held-out loss stays the squared error (an unmoved fit ends where it began), the term is
    # recorded, and it changes where the same steps lead.
    for rate, out in ((1e-9, tmp_path / "still_regret.npz"), (1e-2, tmp_path / "moved_regret.npz")):
        fit_suit_network(load_distill_config(config_path, [f"fit.learning_rate={rate}", "fit.regret_coef=4"]), out,
                         quiet=True, init=start)
    still_regret = suit_header(tmp_path / "still_regret.npz")["provenance"]
    assert still_regret["regret_coef"] == 4.0 and provenance["regret_coef"] == 0.0
    assert np.isclose(still_regret["validation"]["validation_loss"], begun_figures["validation_loss"], rtol=1e-3)
    moved_regret, _ = SuitNetwork.load(tmp_path / "moved_regret.npz")
    assert max(np.abs(moved_regret.weights[name] - moved.weights[name]).max() for name in begun.weights) > 1e-4
    assert main(["--config", str(config_path), "--init", str(start), "--rounds", "2", "--out",
                 str(tmp_path / "x.npz")]) == 2
    assert "--init keeps the starting network's shape" in capsys.readouterr().err
    (tmp_path / "bad.npz").write_bytes(b"not a network")
    assert main(["--config", str(config_path), "--init", str(tmp_path / "bad.npz"), "--out",
                 str(tmp_path / "x.npz")]) == 2
    assert "is not a suit-network weights file" in capsys.readouterr().err


def test_action_biases_move_the_named_actions_values_by_game_points_and_bad_ones_are_refused():
    """``close_bias`` / ``exchange_bias`` / ``marry_bias`` / ``trump_bias`` (agents/suit.py) add game points to the
    values of closing (R10), exchanging (R9), announcing a marriage (R11) and playing a card of the trump suit (R5):
    the logits move by the bias over the networks' q temperature, on those actions only; a huge bias decides."""
    from agents.suit import suit_q_temperature

    plain = make_agent("suit_pair", seed=0)
    biased = make_agent("suit_pair:close_bias=0.2,exchange_bias=-0.1,marry_bias=0.3,trump_bias=-0.05", seed=0)
    temperature = suit_q_temperature(plain.paths)
    encoder = ObservationEncoder(Rules())
    batch = np.stack([encoder.encode(game, game.current_player)
                      for game in (Game.deal(Rules(), seed=seed, dealer=seed % 2) for seed in range(8))])
    moved = (biased.network.logits(batch) - plain.network.logits(batch)) * temperature
    trump = batch[:, OBSERVATION_SLICES["trump_suit"]].argmax(axis=1)
    expected = np.zeros_like(moved)
    expected[:, 33], expected[:, 32], expected[:, 24:32] = 0.2, -0.1, 0.3
    for row, suit in enumerate(trump):
        expected[row, 6 * suit:6 * suit + 6] = -0.05
    np.testing.assert_allclose(moved, expected, atol=1e-5)
    np.testing.assert_allclose(biased.network.logits(batch[2]), biased.network.logits(batch)[2], atol=1e-5)

    def closings(agent) -> tuple[int, int]:  # (closings chosen, decisions where closing was legal)
        chosen = offered = 0
        for seed in range(6):
            game = Game.deal(Rules(), seed=seed, dealer=0)
            agent.start_deal(0, game.rules)
            while not game.is_over:
                infoset = InformationSet(game, game.current_player, None)
                action = agent.act(infoset)
                offered += 33 in infoset.legal_actions
                chosen += action == 33
                game.apply(action)
        return chosen, offered

    always, never = make_agent("suit_pair:close_bias=6", seed=0), make_agent("suit_pair:close_bias=-6", seed=0)
    chosen, offered = closings(always)
    assert chosen == offered > 0  # self-play: the first closing ends the talon, so each deal offers it once
    assert closings(never)[0] == 0
    for spec, key in (("suit_pair:close_bias=7", "close_bias"), ("suit_pair:trump_bias=true", "trump_bias"),
                      ("suit_pair:marry_bias=x", "marry_bias")):
        with pytest.raises(ValueError, match=key):
            make_agent(spec)


def test_a_late_specialist_plays_exactly_the_open_talon_decisions_of_its_window_and_bad_options_are_refused():
    """``suit:...,late=C`` (agents/suit.py, docs/training.md "Session 26"): the late networks decide the phase-1
    decisions with an open talon (R7, R10) of 2-6 cards (R4), the base networks every other, one decision or a
    batch; in self-play of the agent every such decision is reached and told apart from the engine's own state."""
    from agents.suit import SuitEnsemble, SuitNetwork, TalonWindow

    late_path = "models/suit_a_standard.npz"
    agent = make_agent(f"suit_pair:late={late_path}", seed=0)
    assert isinstance(agent.network, TalonWindow) and isinstance(agent.network.base, SuitEnsemble)
    late = SuitNetwork.load(Path(late_path))[0]
    encoder = ObservationEncoder(Rules())
    observations, inside_flags, talon_sizes = [], [], set()
    for seed in range(12):
        game = Game.deal(Rules(), seed=seed, dealer=seed % 2)
        agent.start_deal(0, game.rules)
        while not game.is_over:
            player = game.current_player
            infoset = InformationSet(game, player, None)
            inside = game.closed_by is None and game.face_down_count > 0 and 2 <= game.talon_size <= 6
            observation = encoder.encode(game, player)
            expected = (late if inside else agent.network.base).logits(observation)
            np.testing.assert_allclose(agent.network.logits(observation), expected, atol=1e-6)
            observations.append(observation)
            inside_flags.append(inside)
            talon_sizes.add((game.talon_size, inside))
            game.apply(agent.act(infoset))
    assert {(2, True), (4, True), (6, True), (8, False), (0, False)} <= talon_sizes
    assert any(size in (2, 4, 6) and not inside for size, inside in talon_sizes)  # closed talons stay outside (R10)
    batch = np.stack(observations)
    inside = np.array(inside_flags)
    expected = np.where(inside[:, None], late.logits(batch), agent.network.base.logits(batch))
    np.testing.assert_allclose(agent.network.logits(batch), expected, atol=1e-5)

    narrow = make_agent(f"suit_pair:late={late_path},late_min_talon=6,late_max_talon=6", seed=0)
    sizes = np.rint(batch[:, OBSERVATION_SLICES["talon_size"].start] * 12)
    only_six = inside & (sizes == 6)
    np.testing.assert_allclose(narrow.network.logits(batch),
                               np.where(only_six[:, None], late.logits(batch), agent.network.base.logits(batch)),
                               atol=1e-5)
    for spec, key in ((f"suit_pair:late={late_path},late_min_talon=13", "late_min_talon"),
                      (f"suit_pair:late={late_path},late_max_talon=x", "late_max_talon"),
                      (f"suit_pair:late={late_path},late_min_talon=6,late_max_talon=2", "late_min_talon"),
                      ("suit_pair:late=models/ppo_standard.zip", "late")):
        with pytest.raises(ValueError, match=key):
            make_agent(spec)


def test_a_closed_specialist_plays_exactly_the_decisions_after_a_closing_and_bad_options_are_refused():
    """``suit:...,closed=C`` (agents/suit.py, docs/training.md "Session 31"): the closed networks decide every
    decision after a closing (R10, by either player), the others (with ``late``, its window inside phase 1) every
    other decision, one decision or a batch, told apart from the engine's own state."""
    from agents.suit import PositionSplit, SuitNetwork
    from sixtysix_env.actions import CLOSE

    closed_path, late_path = "models/suit_a_standard.npz", "models/suit_two_standard.npz"
    agent = make_agent(f"suit_pair:closed={closed_path},late={late_path}", seed=0)
    assert isinstance(agent.network, PositionSplit)
    closed_network = SuitNetwork.load(Path(closed_path))[0]
    late = SuitNetwork.load(Path(late_path))[0]
    pair = make_agent("suit_pair", seed=0).network
    encoder = ObservationEncoder(Rules())
    observations, kinds = [], []
    rng = np.random.default_rng(5)
    for seed in range(16):
        game = Game.deal(Rules(), seed=100 + seed, dealer=seed % 2)
        while not game.is_over:
            player = game.current_player
            observation = encoder.encode(game, player)
            closed = game.closed_by is not None
            late_window = not closed and game.face_down_count > 0 and 2 <= game.talon_size <= 6
            kind = "closed" if closed else "late" if late_window else "base"
            expected = {"closed": closed_network, "late": late, "base": pair}[kind].logits(observation)
            np.testing.assert_allclose(agent.network.logits(observation), expected, atol=1e-5)
            observations.append(observation)
            kinds.append(kind)
            legal = game.legal_actions()
            # close the talon whenever the deal may (R10) in half the deals, so both kinds of phase 2 occur
            game.apply(CLOSE if seed % 2 == 0 and CLOSE in legal else int(rng.choice(legal)))
    assert {"closed", "late", "base"} <= set(kinds)
    batch, kinds = np.stack(observations), np.array(kinds)
    expected = np.where((kinds == "closed")[:, None], closed_network.logits(batch),
                        np.where((kinds == "late")[:, None], late.logits(batch), pair.logits(batch)))
    np.testing.assert_allclose(agent.network.logits(batch), expected, atol=1e-5)
    with pytest.raises(ValueError, match="closed must name suit-network weights files"):
        make_agent("suit_pair:closed=models/ppo_standard.zip")


def test_history_planes_a_start_grown_to_read_them_plays_as_before_then_learns_from_them(tmp_path, capsys):
    """The history planes (what each player led, sixtysix_env.observation.HISTORY_LAYOUT; docs/training.md
    "Session 33"): ``label.history`` stores them after each observation, with the labels' values unchanged; a
    network fitted without them and grown to read them (``--history --init``) gives the logits it gave (the
    planes' columns start at zero), the fit moves them, and the agent hands it the planes. Labels without the
    planes, an MLP fit of labels with them, int8 and vector-env PPO are refused by name."""
    from agents.suit import HISTORY_SUIT_INPUT, SUIT_INPUT
    from sixtysix_env.observation import EXTENDED_OBSERVATION_SIZE, OBSERVATION_SIZE, encode_extended_infoset
    from train.distill import Distiller, LabelledDecisions, load_distill_config

    config_text = f"""
run: {{name: tiny, out_dir: {str(tmp_path / 'runs')!r}, workers: 1, progress_bar: false}}
label: {{deals: 20, chunk_deals: 20, source: true_world, worlds: 2}}
fit: {{target: q, epochs: 1, batch_size: 64, validation_share: 0.25, learning_rate: 0.01}}
eval: {{opponents: []}}
"""
    plain_path, history_path = tmp_path / "plain.yaml", tmp_path / "history.yaml"
    plain_path.write_text(config_text.replace("name: tiny", "name: plain"))
    history_path.write_text(config_text.replace("worlds: 2}", "worlds: 2, history: true}"))
    Distiller(load_distill_config(plain_path, []), quiet=True).label(0)
    Distiller(load_distill_config(history_path, []), quiet=True).label(0)
    plain = LabelledDecisions.load(tmp_path / "runs" / "plain" / "round_0" / "chunk_00000000.npz")
    extended = LabelledDecisions.load(tmp_path / "runs" / "tiny" / "round_0" / "chunk_00000000.npz")
    assert plain.observations.shape[1] == OBSERVATION_SIZE
    assert extended.observations.shape == (len(plain), EXTENDED_OBSERVATION_SIZE)
    # The same deals and values: the planes are only stored beside them.
    assert np.array_equal(extended.observations[:, :OBSERVATION_SIZE], plain.observations)
    assert np.array_equal(extended.teacher_values, plain.teacher_values, equal_nan=True)
    planes = extended.observations[:, OBSERVATION_SIZE:]
    assert planes.sum() > 0 and set(np.unique(planes)) <= {0.0, 1.0}
    # A card led by one player was played by him (played_by_me / played_by_opponent hold it).
    for led, played in ((slice(0, 24), "played_by_me"), (slice(24, 48), "played_by_opponent")):
        assert np.all(planes[:, led] <= extended.observations[:, OBSERVATION_SLICES[played]])

    start = tmp_path / "start.npz"
    torch.manual_seed(0)
    network = build_suit_network(width=16, context=32, rounds=2).eval()
    save_suit_weights(start, {name: tensor.detach().numpy() for name, tensor in network.state_dict().items()}, Rules(),
                      {"temperature": 0.25})
    still, moved = tmp_path / "still.npz", tmp_path / "moved.npz"
    fit_suit_network(load_distill_config(history_path, ["fit.learning_rate=1e-12"]), still, quiet=True, init=start,
                     history=True)
    fit_suit_network(load_distill_config(history_path, []), moved, quiet=True, init=start, history=True)
    begun, _ = SuitNetwork.load(start)
    grown, _ = SuitNetwork.load(still)
    learned, _ = SuitNetwork.load(moved)
    assert not begun.history and grown.history and learned.history
    assert grown.weights["encode.0.weight"].shape[1] == HISTORY_SUIT_INPUT == SUIT_INPUT + 12
    rows = extended.observations[:200]
    assert np.allclose(grown.logits(rows), begun.logits(rows[:, :OBSERVATION_SIZE]), atol=1e-4)
    assert np.abs(learned.weights["encode.0.weight"][:, SUIT_INPUT:]).max() > 1e-3  # the planes' weights moved
    with pytest.raises(ValueError, match="reads the history planes: it needs the observation followed by them"):
        learned.logits(rows[:, :OBSERVATION_SIZE])
    # The agent encodes the planes for it: its logits are those of the extended infoset vector.
    agent = make_agent(f"suit:path={moved}", seed=0)
    game = Game.deal(Rules(), seed=5)
    for action in (game.legal_actions()[0], None):
        if action is not None:
            game.apply(action)
        infoset = InformationSet(game, game.to_move)
        vector = encode_extended_infoset(infoset)
        assert vector.shape == (EXTENDED_OBSERVATION_SIZE,)
        assert agent.act(infoset) == max(infoset.legal_actions, key=lambda move: learned.logits(vector)[move])
    # Refused by name.
    assert main(["--config", str(plain_path), "--history", "--out", str(tmp_path / "x.npz")]) == 2
    assert "do not hold them: label them with label.history: true" in capsys.readouterr().err
    assert main(["--config", str(history_path), "--init", str(moved), "--out", str(tmp_path / "x.npz")]) == 2
    assert "fine-tune it with --history" in capsys.readouterr().err
    with pytest.raises(ValueError, match="precision=int8 does not take suit networks that read the history planes"):
        make_agent(f"suit:path={moved},precision=int8")
    with pytest.raises(ValueError, match="'label.history' stores history planes with true-deal labels"):
        load_distill_config(history_path, ["label.source=teacher"])
    with pytest.raises(ValueError, match="an MLP policy does not read"):
        Distiller(load_distill_config(history_path, ["fit.epochs=1"]), quiet=True).fit(0)
    from train.vector_ppo import Args, suit_start

    with pytest.raises(ValueError, match="reads the history planes, which the vector environments"):
        suit_start(Args(init_suit=str(moved)))
    # Chunks with and without the planes in one fit.
    plain.save(tmp_path / "runs" / "tiny" / "round_0" / "chunk_00000020.npz")
    with pytest.raises(ValueError, match="labels with and without the history planes"):
        fit_suit_network(load_distill_config(history_path, []), tmp_path / "x.npz", quiet=True, history=True)
