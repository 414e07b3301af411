"""Action values from rollouts of the true deal (sixtysix_env/core/labels.py) and the ``q`` fit of a network to them
(train/distill.py, ``label.source: true_world``, ``fit.target: q``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from agents.registry import make_agent
from agents.rollout import rollout_player_params
from agents.rule_based import HeuristicAgent, on_last_talon_trick
from agents.solver import ROLLOUT_TABLE_BITS, core_table
from agents.suit import after_closing
from eval.deals import derive_seed
from eval.play import play_deal
from play_helpers import network_playout
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.core import state_from_game
from sixtysix_env.core.labels import MAX_DECISIONS_PER_DEAL, deal_returns, in_talon_window, label_deal, value_actions
from sixtysix_env.core.layout import STATE_SIZE
from sixtysix_env.core.search import seed_kernels
from sixtysix_env.core.solver import solve_actions
from sixtysix_env.actions import CLOSE
from sixtysix_env.game import FOLLOW
from sixtysix_env.observation import OBSERVATION_SIZE, OBSERVATION_SLICES, ObservationEncoder
from train.distill import (Distiller, LabelConfig, LabelledDecisions, continuation_network, continuation_values,
                           label_true_world_deals, load_distill_config, load_labels, q_targets, rows_in_talon_window)

STANDARD = Rules.preset("standard")
# R4 order, top first: forehand gets cards 1-3 and 7-9, the dealer 4-6 and 10-12, card 13 is the trump card.
EXPLICIT_DECK = ["AH", "TH", "KH", "9S", "JS", "QS", "QH", "JH", "AC", "9D", "JD", "QD", "TS",
                 "KS", "AS", "9C", "JC", "QC", "KC", "TC", "KD", "TD", "AD", "9H"]


def label_game(game: Game, worlds: int, epsilon: float, seed: int = 3, resample_hands: bool = False,
               talon_window: tuple[int, int] = (-1, 12)):
    """``label_deal`` on the deal of ``game`` (not yet played): the outputs' used rows and the final state."""
    state = state_from_game(game)
    rows = MAX_DECISIONS_PER_DEAL
    observations = np.empty((rows, OBSERVATION_SIZE), dtype=np.float32)
    masks = np.zeros((rows, NUM_ACTIONS), dtype=np.bool_)
    values = np.full((rows, NUM_ACTIONS), np.nan)
    actions, deciders = np.zeros(rows, np.int64), np.zeros(rows, np.int64)
    phase2, returns = np.zeros(rows, np.bool_), np.zeros(rows)
    table = core_table(ROLLOUT_TABLE_BITS)
    seed_kernels(seed)
    used = label_deal(state, rollout_player_params(), HeuristicAgent().core_params(), worlds, resample_hands,
                      *talon_window, epsilon, table.entries,
                      table.nodes, table.claim_worlds(rows * worlds), np.zeros(2, np.float32), observations, masks,
                      values, actions, phase2, deciders, np.zeros((0, STATE_SIZE), np.int64))
    deal_returns(state, deciders, used, returns)
    return used, observations[:used], masks[:used], values[:used], actions[:used], phase2[:used], deciders[:used], \
        returns[:used]


def test_every_decision_with_a_choice_is_labelled_in_order_and_the_deal_replays_on_the_python_engine():
    """R4 deal from an explicit deck: one row per decision with more than one legal action (forced moves are played,
    not labelled), the row's mask is the Python engine's legal actions there, every legal action and nothing else
    is valued (R16 game points lie in -3..3), the observation is the decider's own (docs/observation.md), the played
    actions replay the deal, and each row carries that deal's final game points from its decider's side."""
    used, observations, masks, values, actions, phase2, deciders, returns = label_game(
        Game.deal(STANDARD, deck=EXPLICIT_DECK, dealer=0), 4, 0.05)
    game = Game.deal(STANDARD, deck=EXPLICIT_DECK, dealer=0)
    encoder = ObservationEncoder(STANDARD)
    for row, position in labelled_positions(game, actions):
        player = position.current_player
        assert deciders[row] == player
        assert sorted(np.flatnonzero(masks[row])) == sorted(position.legal_actions())
        assert np.array_equal(~np.isnan(values[row]), masks[row])
        assert np.nanmax(np.abs(values[row])) <= 3
        np.testing.assert_array_equal(observations[row], encoder.encode(position, player))
        assert phase2[row] == position.phase2
    assert game.is_over and used > 10
    assert returns.tolist() == [game.result.returns()[player] for player in deciders]


def labelled_positions(game: Game, actions: np.ndarray):
    """Replay ``game`` (not yet played) along the labelled rows' ``actions``: yields ``(row, game)`` at each decision
    with a choice, before the row's action is applied; forced moves are played in between. Checks that every row
    was a decision of the deal."""
    row = 0
    while not game.is_over:
        legal = game.legal_actions()
        if len(legal) == 1:
            game.apply(legal[0])
            continue
        yield row, game
        game.apply(int(actions[row]))
        row += 1
    assert row == len(actions)


def replayed_rows(seed: int, deals: int, epsilon: float):
    """(game before the row's action, the row's values, the action played) of every labelled row of seeded deals."""
    for index in range(deals):
        _, _, _, values, actions, _, _, _ = label_game(Game.deal(STANDARD, seed=seed + index, dealer=index % 2), 4,
                                                       epsilon, seed=seed * 31 + index)
        for row, game in labelled_positions(Game.deal(STANDARD, seed=seed + index, dealer=index % 2), actions):
            yield game, values[row], int(actions[row])


def test_on_the_talons_last_trick_and_once_it_is_used_up_the_values_are_the_exact_solvers_in_the_true_deal():
    """R7, R8: from the talon's last trick on, a rollout of ``expert``'s player solves the rest exactly, so the label
    of such a decision is the whole-deal solver's value of each action in the *true* deal (nothing sampled)."""
    checked = 0
    for game, values, _ in replayed_rows(4100, 12, 0.05):
        if (game.phase2 and game.closed_by is None) or on_last_talon_trick(game):
            solved = solve_actions(state_from_game(game))
            assert {action: values[action] for action in game.legal_actions()} == solved, game.history
            checked += 1
    assert checked > 40


def test_without_exploration_the_deal_is_played_by_the_heuristic():
    """``epsilon`` 0: the behaviour is the compiled heuristic, whose phase-1 follows (R6) sample nothing and are
    exactly the reference ``heuristic``'s; with ``epsilon`` 1 every decision is a random legal one."""
    reference = HeuristicAgent(seed=0)
    follows = 0
    for game, _, action in replayed_rows(4200, 10, 0.0):
        if game.stage == FOLLOW and not game.phase2 and not on_last_talon_trick(game):
            assert action == reference.act(InformationSet(game, game.current_player)), game.history
            follows += 1
    assert follows > 30
    differs = sum(action != reference.act(InformationSet(game, game.current_player))
                  for game, _, action in replayed_rows(4200, 10, 1.0)
                  if game.stage == FOLLOW and not game.phase2 and not on_last_talon_trick(game))
    assert differs > 5


def test_true_world_labels_reproduce_and_hold_the_best_action_by_their_values():
    first = label_true_world_deals(STANDARD, 9, 0, 3, 2, 0.05)
    again = label_true_world_deals(STANDARD, 9, 0, 3, 2, 0.05)
    for name in LabelledDecisions.FIELDS:
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    assert set(np.unique(first.deals)) == {0, 1, 2}
    rows = np.arange(len(first))
    assert first.masks[rows, first.teacher_actions].all()
    best = np.nanmax(np.where(first.masks, first.teacher_values, np.nan), axis=1)
    assert np.array_equal(first.teacher_values[rows, first.teacher_actions], best)
    other = label_true_world_deals(STANDARD, 10, 0, 3, 2, 0.05)
    assert not np.array_equal(first.observations[:5], other.observations[:5])


def test_q_targets_centre_the_values_over_the_valued_actions_and_skip_rows_with_one():
    values = np.full((2, NUM_ACTIONS), np.nan, dtype=np.float32)
    values[0, [1, 4, 9]] = [1.0, -1.0, 3.0]
    values[1, 2] = 2.0  # one valued action: nothing to rank
    masks = ~np.isnan(values)
    masks[0, 5] = True  # legal but not valued: not a target
    data = LabelledDecisions(np.zeros((2, OBSERVATION_SIZE), np.float32), masks, np.array([9, 2]), values,
                             np.zeros(2, np.float32), np.zeros(2, bool), np.arange(2))
    targets, valued = q_targets(data, temperature=0.5)
    assert valued[0].tolist() == [index in (1, 4, 9) for index in range(NUM_ACTIONS)]
    assert not valued[1].any()
    np.testing.assert_allclose(targets[0, [1, 4, 9]], [0.0, -4.0, 4.0])
    assert not targets[0, 5] and not targets[1].any()

    blockwise, _ = q_targets(data, temperature=0.5, block=1)  # computed a row at a time: the same targets
    np.testing.assert_array_equal(blockwise, targets)


def test_the_regret_term_adds_the_softmax_policys_expected_regret_over_the_valued_actions_only():
    """``fit.regret_coef``: the q loss adds coef x sum_a softmax(logits)_a (best target - target_a) over each row's
    valued actions (an illegal or unvalued action's logit takes no share); rows without valued actions add nothing,
    and its gradient raises the best action's logit."""
    import torch

    from train.distill import q_regression_loss

    valued = torch.zeros((2, NUM_ACTIONS), dtype=torch.bool)
    valued[0, [1, 4, 9]] = True
    targets = torch.zeros((2, NUM_ACTIONS))
    targets[0, [1, 4, 9]] = torch.tensor([0.0, -4.0, 4.0])
    logits = torch.zeros((2, NUM_ACTIONS))
    logits[0, [1, 4, 9]] = torch.tensor([1.0, 0.0, 2.0])
    logits[0, 5] = 50.0  # not valued: no share of the softmax
    logits.requires_grad_(True)
    squared = q_regression_loss(logits, valued, targets)
    with_regret = q_regression_loss(logits, valued, targets, regret_coef=2.0)
    shares = np.exp([1.0, 0.0, 2.0]) / np.exp([1.0, 0.0, 2.0]).sum()
    expected_regret = float(shares @ np.array([4.0, 8.0, 0.0]))  # averaged over the one row with valued actions
    assert (with_regret - squared).item() == pytest.approx(2.0 * expected_regret, rel=1e-5)
    (gradient,) = torch.autograd.grad(with_regret - squared, logits)
    assert gradient[0, 9] < 0 < gradient[0, 4]  # descent raises the best action's logit, lowers the worst's
    assert not gradient[0, 5] and not gradient[1].any()


def test_packed_observations_give_back_every_row_exactly_and_fall_back_past_256_values():
    from train.recorded import PackedObservations

    generator = np.random.default_rng(5)
    parts = [generator.integers(0, 67, size=(rows, 7)).astype(np.float32) / 66 for rows in (30, 1, 12)]
    parts[2][0, 0] = 2.5  # a value only the last part has
    packed = PackedObservations.pack(iter(parts), 7)
    everything = np.concatenate(parts)
    assert isinstance(packed, PackedObservations) and packed.codes.dtype == np.uint8
    assert packed.shape == everything.shape and len(packed) == 43
    np.testing.assert_array_equal(packed[:], everything)
    np.testing.assert_array_equal(packed[np.array([42, 0, 31])], everything[[42, 0, 31]])
    assert packed[5:9].dtype == np.float32
    # More than 256 distinct values (here only once the second part comes): the plain float32 rows.
    many = [np.zeros((2, 7), np.float32), np.arange(301, dtype=np.float32).reshape(-1, 7), parts[0]]
    plain = PackedObservations.pack(iter(many), 7)
    assert isinstance(plain, np.ndarray) and plain.dtype == np.float32
    np.testing.assert_array_equal(plain, np.concatenate(many))
    assert PackedObservations.pack(iter([]), 7).shape == (0, 7)


def _config(tmp_path, *overrides: str):
    path = tmp_path / "distill.yaml"
    path.write_text(f"""
run: {{name: tiny, out_dir: {str(tmp_path / 'runs')!r}, workers: 1, progress_bar: false}}
label: {{deals: 40, chunk_deals: 20, source: true_world, worlds: 2}}
net: {{hidden: [32, 32]}}
fit: {{epochs: 2, batch_size: 64, validation_share: 0.25, target: q}}
eval: {{pairs: 2, every: 0}}
""")
    return load_distill_config(path, list(overrides))


def test_a_q_fit_lowers_its_loss_and_saves_a_model_whose_greedy_action_is_its_best_fitted_value(tmp_path):
    """The ``q`` target: the loss falls with epochs; the saved zip loads with ``MaskablePPO.load``, plays as
    ``ppo:path=...`` every decision, and its deterministic action is the legal action of the highest logit."""
    import torch
    from sb3_contrib import MaskablePPO

    def fitted(epochs: int):
        config = _config(tmp_path, f"fit.epochs={epochs}")
        distiller = Distiller(config, quiet=True)
        distiller.label(0)
        path = distiller.fit(0)
        summary = json.loads((config.run_dir / "summary.json").read_text())
        return path, summary["rounds"][0]["fit"]["final"]["training_policy_loss"], config

    _, loss_short, _ = fitted(1)
    path, loss_long, config = fitted(30)
    assert loss_long < 0.8 * loss_short
    # The fit read its labels packed (train.recorded.PackedObservations): the same rows as the chunks, in order.
    chunks = [LabelledDecisions.load(chunk) for chunk in sorted((config.run_dir / "round_0").glob("chunk_*.npz"))]
    loaded = load_labels(config, 1)
    assert type(loaded.observations).__name__ == "PackedObservations"
    for name in LabelledDecisions.FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(loaded, name)[:]),
                                      np.concatenate([getattr(chunk, name) for chunk in chunks]))
    data = LabelledDecisions.load(sorted((config.run_dir / "round_0").glob("chunk_*.npz"))[0])
    model = MaskablePPO.load(path, device="cpu")
    observation, mask = data.observations[:20], data.masks[:20]
    actions, _ = model.predict(observation, action_masks=mask, deterministic=True)
    with torch.no_grad():
        logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(
            model.policy.extract_features(torch.as_tensor(observation), model.policy.pi_features_extractor)))
    best = np.where(mask, logits.numpy(), -np.inf).argmax(axis=1)
    assert np.array_equal(actions, best)
    agent = make_agent(f"ppo:path={path}", seed=0)
    outcome = play_deal(Game.deal(STANDARD, seed=3, dealer=0), [agent, make_agent("heuristic", seed=1)], [1, 2])
    assert abs(outcome.returns[0]) in (1, 2, 3)


@pytest.mark.parametrize("override, message", [
    ("label.source=oracle", "'label.source' must be one of teacher, true_world"),
    ("label.worlds=0", "'label.worlds' must be positive"),
    ("label.epsilon=1.5", "'label.epsilon' must lie in"),
    ("label.rules=three", "two-player game"),
    ("label.continuation=heuristic", "'label.continuation': 'heuristic' is not a network that plays every decision"),
    ("label.continuation=suit:path=no_such_file.npz", "'label.continuation': bad parameters"),
    ("label.continuation_seats=all", "'label.continuation_seats' must be one of both, mover"),
    ("label.hidden=view,label.continuation=suit_two", "'label.continuation' plays on in the true deal"),
])
def test_bad_true_world_settings_are_refused_by_their_dotted_key(tmp_path, override, message):
    with pytest.raises(ValueError, match=message):
        _config(tmp_path, *override.split(","))


def test_a_second_round_values_the_positions_the_first_rounds_network_plays_dagger(tmp_path):
    """Round 1 of a true-deal run: the network of round 0 plays the deals (its choices are the played actions) and
    every decision is still valued in the true deal; the talon's last trick (R7) exactly, by the solver."""
    config = _config(tmp_path, "iterate.rounds=2", "iterate.later_deals=[20]", "label.deals=20", "fit.epochs=1")
    distiller = Distiller(config, quiet=True)
    distiller.run()
    summary = json.loads((config.run_dir / "summary.json").read_text())
    assert summary["rounds"][0]["label"]["behaviour"] == "heuristic"
    behaviour = summary["rounds"][1]["label"]["behaviour"]
    assert behaviour.startswith("ppo:path=") and "round_0" in behaviour
    network = make_agent(behaviour, seed=0)
    data = label_true_world_deals(STANDARD, 77, 0, 2, 2, 0.0, behaviour=behaviour)
    again = label_true_world_deals(STANDARD, 77, 0, 2, 2, 0.0, behaviour=behaviour)
    for name in LabelledDecisions.FIELDS:
        np.testing.assert_array_equal(getattr(data, name), getattr(again, name))
    row, exact = 0, 0
    for index in range(2):
        game = Game.deal(STANDARD, seed=derive_seed(77, "deal", index), dealer=index % 2)
        network.start_deal(0, STANDARD)
        encoder = ObservationEncoder(STANDARD)
        while not game.is_over:
            legal = game.legal_actions()
            if len(legal) == 1:
                game.apply(legal[0])
                continue
            np.testing.assert_array_equal(data.observations[row], encoder.encode(game, game.current_player))
            if on_last_talon_trick(game):
                assert {a: data.teacher_values[row, a] for a in legal} == solve_actions(state_from_game(game))
                exact += 1
            game.apply(network.act(InformationSet(game, game.current_player)))  # deterministic network play
            row += 1
    assert row == len(data) and exact > 0


def test_a_behaviour_spec_plays_round_0_of_a_true_deal_run_in_place_of_the_heuristic(tmp_path):
    """``label.behaviour: SPEC`` with true-deal labels (a DAgger step from a given network, configs/
    distill_dagger_pair.yaml): that agent plays both seats of round 0, and its chunks hold exactly the rows
    ``label_true_world_deals`` gives for it; the default (``teacher``) is still the compiled heuristic."""
    config = _config(tmp_path, "label.deals=20", "label.behaviour=greedy")
    figures = Distiller(config, quiet=True).label(0)
    assert figures["behaviour"] == "greedy"
    data = load_labels(config, 1)
    round_seed = derive_seed(config.run.seed, "round", 0)
    expected = label_true_world_deals(STANDARD, round_seed, 0, 20, 2, config.label.epsilon, behaviour="greedy")
    for name in ("observations", "masks", "teacher_actions"):
        np.testing.assert_array_equal(getattr(data, name), getattr(expected, name))
    np.testing.assert_allclose(data.teacher_values, expected.teacher_values)
    heuristic_played = label_true_world_deals(STANDARD, round_seed, 0, 20, 2, config.label.epsilon)
    assert len(heuristic_played) != len(data) or not np.array_equal(heuristic_played.observations, data.observations)
    (tmp_path / "default").mkdir()
    default = _config(tmp_path / "default", "label.deals=20")
    assert Distiller(default, quiet=True).label(0)["behaviour"] == "heuristic"


def test_an_improvement_step_can_take_its_values_from_a_fitted_q_network(tmp_path):
    """``fit.values_model``: the values of a ``q`` fit (its logits times the temperature stored in its metadata) are
    the improvement step's values; a model fitted otherwise, or the key without ``target: improve``, is refused."""
    import shutil
    import zipfile

    from agents.ppo import load_actor
    from train.distill import fitted_values

    config = _config(tmp_path, "fit.temperature=0.5")
    distiller = Distiller(config, quiet=True)
    distiller.label(0)
    q_model = tmp_path / "q.zip"
    shutil.copy(distiller.fit(0), q_model)
    with zipfile.ZipFile(q_model) as archive:
        metadata = json.loads(archive.read("sixtysix.json"))
    assert metadata["q_temperature"] == 0.5
    assert metadata["distilled_from"] == "true_world:worlds=2,epsilon=0.05"  # no teacher agent made these labels
    data = LabelledDecisions.load(sorted((config.run_dir / "round_0").glob("chunk_*.npz"))[0])
    values = fitted_values(str(q_model), data)
    network, _, _ = load_actor(q_model)
    np.testing.assert_allclose(values[data.masks], (network.logits(data.observations) * 0.5)[data.masks], rtol=1e-6)
    assert np.isnan(values[~data.masks]).all()
    improved = _config(tmp_path, "fit.target=improve", f"fit.init_model={q_model}", f"fit.values_model={q_model}",
                       "fit.temperature=0.5", "fit.epochs=1")
    path = Distiller(improved, quiet=True).fit(0)
    assert load_actor(path)[0].output_size == NUM_ACTIONS
    teacher_model = tmp_path / "teacher.zip"
    shutil.copy(Distiller(_config(tmp_path, "fit.target=teacher"), quiet=True).fit(0), teacher_model)
    with pytest.raises(ValueError, match="was not fitted with fit.target: q"):
        fitted_values(str(teacher_model), data)
    with pytest.raises(ValueError, match="'fit.values_model' gives the values of an improvement step"):
        _config(tmp_path, f"fit.values_model={q_model}")


def test_denormals_are_flushed_only_inside_the_block():
    """The CPU flag is the thread's (hypothesis and NumPy see it too): set around training passes, restored after."""
    import torch

    from train.cpu import denormals_flushed

    tiny = torch.tensor([1e-40], dtype=torch.float32)  # a denormal float32
    with denormals_flushed():
        assert (tiny * 1.0).item() == 0.0
    assert (tiny * 1.0).item() > 0.0


def test_a_member_run_fits_a_deal_range_of_another_runs_labels_with_its_own_seed(tmp_path):
    """``fit.labels_from`` reads another run's labels (that run is left as it was), ``fit.deals`` keeps the chunks
    of a deal range, ``fit.seed`` starts another network: an ensemble member (``sixtysix distill merge``)."""
    base = _config(tmp_path)
    Distiller(base, quiet=True).label(0)
    source = str(base.run_dir)
    member = _config(tmp_path, "run.name=member", f"fit.labels_from={source}", "fit.deals=[20,40]", "fit.seed=5",
                     "fit.epochs=1")
    loaded = load_labels(member, 1)
    second_chunk = LabelledDecisions.load(base.run_dir / "round_0" / "chunk_00000020.npz")
    np.testing.assert_array_equal(loaded.deals, second_chunk.deals)
    assert len(loaded) < len(load_labels(base, 1))
    path = Distiller(member, quiet=True).fit(0)
    assert path.parent.parent == member.run_dir and not (base.run_dir / "model.zip").exists()
    from agents.ppo import read_model_metadata

    metadata = read_model_metadata(path)
    assert metadata["distill_fit_seed"] == 5 and metadata["distill_deals"] == [20, 40]
    # Another seed, another network on the same labels.
    other = _config(tmp_path, "run.name=member2", f"fit.labels_from={source}", "fit.deals=[20,40]", "fit.seed=6",
                    "fit.epochs=1")
    other_path = Distiller(other, quiet=True).fit(0)
    from agents.ppo import load_actor

    assert not np.allclose(load_actor(path)[0].layers[0][0], load_actor(other_path)[0].layers[0][0])
    with pytest.raises(ValueError, match="fits the labels of .* label there"):
        Distiller(member, quiet=True).label(0)
    with pytest.raises(ValueError, match="differing: label.worlds"):
        _config(tmp_path, "run.name=member3", f"fit.labels_from={source}", "label.worlds=3")
    with pytest.raises(ValueError, match="for fit.deals"):
        load_labels(_config(tmp_path, "run.name=member4", f"fit.labels_from={source}", "fit.deals=[40,60]"), 1)


@pytest.mark.parametrize("override, message", [
    ("fit.deals=[20]", "'fit.deals' must be \\[first, stop\\]"),
    ("fit.deals=[40,20]", "'fit.deals' must be \\[first, stop\\]"),
    ("fit.deals=[0,30]", "multiples of label.chunk_deals"),
    ("fit.labels_from=/nonexistent", "not a distillation run directory"),
])
def test_bad_member_settings_are_refused_by_their_dotted_key(tmp_path, override, message):
    with pytest.raises(ValueError, match=message):
        _config(tmp_path, override)


# ------------------------------------------------------------------------------------- labels from the decider's view
def _positions_in_window(seed: int, deals: int, window: tuple[int, int]):
    """Games (``heuristic`` self-play, seeded) at their phase-1 decisions with a choice and a talon size in
    ``window``."""
    for index in range(deals):
        game = Game.deal(STANDARD, seed=seed + index, dealer=index % 2)
        players = [make_agent("heuristic", seed=seed + 2 * index + seat) for seat in range(2)]
        while not game.is_over:
            if (len(game.legal_actions()) > 1 and not game.phase2 and game.closed_by is None
                    and window[0] <= game.talon_size <= window[1]):
                yield game
            game.apply(players[game.current_player].act(InformationSet(game, game.current_player)))


def _view_values(state, mover: int, worlds: int, seed: int) -> np.ndarray:
    values = np.full(NUM_ACTIONS, np.nan)
    table = core_table(ROLLOUT_TABLE_BITS)
    seed_kernels(seed)
    value_actions(state, mover, rollout_player_params(), worlds, True, table.entries, table.nodes,
                  table.claim_worlds(worlds), values)
    return values


def test_labels_from_the_view_do_not_depend_on_where_the_hidden_cards_really_lie():
    """``hidden: view``: the worlds are drawn from the decider's view, so swapping the opponent's unknown cards with
    face-down talon cards (another deal the decider cannot tell apart, R4) leaves the label unchanged to the bit,
    while the true-deal label of the same position does change (it rolls out the hand as it lies)."""
    from sixtysix_env.core.layout import HAND0, STOCK, STOCK_LEN, STOCK_POS

    checked = changed = 0
    for game in _positions_in_window(5300, 12, (4, 8)):
        mover = game.current_player
        state = state_from_game(game)
        unknown = state[HAND0 + 1 - mover] & ~InformationSet(game, mover).opponent_known
        if not unknown or state[STOCK_LEN] - state[STOCK_POS] < 2:
            continue
        # exchange an unknown card of the opponent's hand with the next face-down card (R4: the bottom card is seen)
        hand_card, talon_card = int(unknown & -unknown).bit_length() - 1, int(state[STOCK + state[STOCK_POS]])
        swapped = state.copy()
        swapped[HAND0 + 1 - mover] ^= (1 << hand_card) | (1 << talon_card)
        swapped[STOCK + state[STOCK_POS]] = hand_card
        np.testing.assert_array_equal(_view_values(state, mover, 8, 11), _view_values(swapped, mover, 8, 11))
        true_values = [np.full(NUM_ACTIONS, np.nan) for _ in range(2)]
        for position, values in zip((state, swapped), true_values):
            table = core_table(ROLLOUT_TABLE_BITS)
            seed_kernels(11)
            value_actions(position, mover, rollout_player_params(), 8, False, table.entries, table.nodes,
                          table.claim_worlds(8), values)
        changed += not np.array_equal(true_values[0], true_values[1], equal_nan=True)
        checked += 1
        if checked == 12:
            break
    assert checked == 12 and changed >= 3


def test_a_talon_window_labels_only_those_phase1_decisions_and_the_observation_tells_them_apart():
    """``label.talon_window`` [2, 6]: every labelled row is a phase-1 decision (talon open, R7/R10) with 2 to 6 talon
    cards (R4), as the kernel's ``in_talon_window`` and the fit's ``rows_in_talon_window`` (which reads the
    observation) both say; both seats' decisions are there, every legal action valued, none else; and without a
    window the observation-based selection agrees with the kernel's on every row of whole deals."""
    data = label_true_world_deals(STANDARD, 21, 0, 12, 4, 0.05, "view", [2, 6])
    assert len(data) >= 12 and rows_in_talon_window(data.observations, [2, 6]).all()
    talon = np.rint(data.observations[:, OBSERVATION_SLICES["talon_size"].start] * 12)
    assert set(talon.tolist()) <= {2, 4, 6} and len(set(talon.tolist())) > 1
    np.testing.assert_array_equal(~np.isnan(data.teacher_values), data.masks)
    assert not data.phase2.any()
    # the Python-agent path (DAgger rounds) keeps the same window
    played = label_true_world_deals(STANDARD, 21, 0, 3, 2, 0.05, "view", [2, 6], behaviour="greedy")
    assert len(played) >= 3 and rows_in_talon_window(played.observations, [2, 6]).all()
    # whole deals: the observation's selection is the kernel's, row by row
    agreed = 0
    for index in range(6):
        game = Game.deal(STANDARD, seed=700 + index, dealer=index % 2)
        _, observations, _, _, actions, _, _, _ = label_game(game, 2, 0.05, seed=700 + index)
        selected = rows_in_talon_window(observations, [2, 6])
        for row, position in labelled_positions(Game.deal(STANDARD, seed=700 + index, dealer=index % 2), actions):
            assert selected[row] == in_talon_window(state_from_game(position), 2, 6), position.history
            agreed += 1
    assert agreed > 60


def test_a_fit_takes_the_window_runs_labels_in_place_of_its_own_there(tmp_path):
    """``fit.window_labels_from``: the fit's labels are this run's rows outside the window plus every row of the
    window run; the model records where they came from; a run without a window is refused by name."""
    base = _config(tmp_path)
    Distiller(base, quiet=True).label(0)
    window_run = _config(tmp_path, "run.name=late", "label.hidden=view", "label.talon_window=[2,6]")
    Distiller(window_run, quiet=True).label(0)
    combined = _config(tmp_path, "run.name=combined", f"fit.labels_from={base.run_dir}",
                       f"fit.window_labels_from={window_run.run_dir}", "fit.epochs=1")
    own, late, loaded = load_labels(base, 1), load_labels(window_run, 1), load_labels(combined, 1)
    outside = ~rows_in_talon_window(np.asarray(own.observations[:]), [2, 6])
    assert 0 < outside.sum() < len(own) and len(late) > 0
    assert len(loaded) == outside.sum() + len(late)
    np.testing.assert_array_equal(np.asarray(loaded.observations[:]),
                                  np.concatenate([np.asarray(own.observations[:])[outside],
                                                  np.asarray(late.observations[:])]))
    np.testing.assert_array_equal(loaded.teacher_values[outside.sum():], late.teacher_values)
    from agents.ppo import read_model_metadata

    metadata = read_model_metadata(Distiller(combined, quiet=True).fit(0))
    assert metadata["distill_window_labels"] == str(window_run.run_dir)
    assert "hidden=view" in read_model_metadata(Distiller(window_run, quiet=True).fit(0))["distilled_from"]
    with pytest.raises(ValueError, match="is not a distillation run with a label.talon_window"):
        _config(tmp_path, "run.name=bad", f"fit.window_labels_from={base.run_dir}")


@pytest.mark.parametrize("override, message", [
    ("label.hidden=oracle", "'label.hidden' must be one of true_deal, view"),
    ("label.talon_window=[6,2]", "'label.talon_window' must be \\[min, max\\]"),
    ("label.talon_window=[2,14]", "'label.talon_window' must be \\[min, max\\]"),
    ("label.talon_window=[4]", "'label.talon_window' must be \\[min, max\\]"),
])
def test_bad_window_settings_are_refused_by_their_dotted_key(tmp_path, override, message):
    with pytest.raises(ValueError, match=message):
        _config(tmp_path, override)


def test_view_settings_need_true_deal_labels_and_a_teachers_window_a_behaviour(tmp_path):
    with pytest.raises(ValueError, match="'label.hidden' applies to true-deal labels"):
        _config(tmp_path, "label.source=teacher", "label.hidden=view")
    with pytest.raises(ValueError, match="'label.talon_window' with label.source: teacher needs label.behaviour"):
        _config(tmp_path, "label.source=teacher", "label.talon_window=[2,6]")
    with pytest.raises(ValueError, match="'label.worlds' applies to true-deal labels"):  # this config's worlds: 2
        _config(tmp_path, "label.source=teacher", "label.talon_window=[2,6]", "label.behaviour=heuristic")
    assert _config(tmp_path, "label.source=teacher", "label.talon_window=[2,6]", "label.behaviour=heuristic",
                   f"label.worlds={LabelConfig.worlds}").label.talon_window == [2, 6]
    with pytest.raises(ValueError, match="'label.talon_window' applies to labelled deals"):
        _config(tmp_path, "label.source=network", "label.talon_window=[2,6]")


def test_a_run_saved_before_the_window_keys_still_serves_its_labels(tmp_path):
    """A run directory whose saved config predates ``label.hidden``/``label.talon_window`` had their defaults: a
    member run may still fit its labels (``fit.labels_from``) and the run itself may grow."""
    import yaml

    base = _config(tmp_path)
    Distiller(base, quiet=True).label(0)
    saved = yaml.safe_load((base.run_dir / "config.yaml").read_text())
    del saved["label"]["hidden"], saved["label"]["talon_window"]
    (base.run_dir / "config.yaml").write_text(yaml.safe_dump(saved))
    member = _config(tmp_path, "run.name=member", f"fit.labels_from={base.run_dir}")
    assert len(load_labels(member, 1)) == len(load_labels(base, 1))
    Distiller(_config(tmp_path, "label.deals=60"), quiet=True).label(0)
    with pytest.raises(ValueError, match="differing: label.hidden"):
        _config(tmp_path, "run.name=member2", f"fit.labels_from={base.run_dir}", "label.hidden=view")


def test_a_network_continuation_values_each_action_by_the_networks_own_play_from_there():
    """``label.continuation`` (policy iteration): in the true deal with the talon order as it lies (one world), the
    label of every legal action at a late phase-1 position (R7 talon open, talon 2-6) is the game points the mover
    gets when the network plays both seats on from it, each from his own observation, and only a phase 2 after the
    talon's exhaustion (R8) is solved: exactly what the Python engine gives with the same agent. Closings (R10)
    included: the closed phase 2 is played by the network, not solved as if the hands were seen."""
    agent = make_agent("suit_two", seed=0)
    network = continuation_network("suit_two", STANDARD)
    table = core_table(ROLLOUT_TABLE_BITS)
    checked = closings = 0
    for game, _, _ in replayed_rows(4300, 8, 0.1):
        if game.phase2 or game.closed_by is not None or not 2 <= game.talon_size <= 6:
            continue
        player = game.current_player
        values = continuation_values(state_from_game(game)[None], np.array([player]), 1, network, table)[0]
        legal = game.legal_actions()
        assert sorted(np.flatnonzero(~np.isnan(values))) == sorted(legal)
        for action in legal:
            assert values[action] == network_playout(game, action, agent, player), (game.history, action)
        closings += CLOSE in legal
        checked += 1
    assert checked > 15 and closings > 3


def test_continuation_labels_window_only_reproduce_and_differ_from_the_rollout_players():
    """The labels of a continuation run cover only the talon window's decisions, reproduce from their seed, keep the
    best action by their values, and are not the rollout player's values (which solve a closed phase 2 and the
    talon's last trick as if both hands were seen)."""
    first = label_true_world_deals(STANDARD, 11, 0, 4, 2, 0.05, talon_window=[2, 6], continuation="suit_two")
    again = label_true_world_deals(STANDARD, 11, 0, 4, 2, 0.05, talon_window=[2, 6], continuation="suit_two")
    for name in LabelledDecisions.FIELDS:
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    assert len(first) > 8 and rows_in_talon_window(first.observations, [2, 6]).all()
    rows = np.arange(len(first))
    assert np.array_equal(~np.isnan(first.teacher_values), first.masks)
    best = np.nanmax(np.where(first.masks, first.teacher_values, np.nan), axis=1)
    assert np.array_equal(first.teacher_values[rows, first.teacher_actions], best)
    table = core_table(ROLLOUT_TABLE_BITS)
    differ = 0
    for index in range(4):
        for game, values, _ in replayed_rows(4400 + index, 1, 0.0):
            if game.phase2 or game.closed_by is not None or not 2 <= game.talon_size <= 6:
                continue
            state = state_from_game(game)
            theirs = continuation_values(state[None], np.array([game.current_player]), 1,
                                         continuation_network("suit_two", STANDARD), table)[0]
            differ += not np.allclose(np.nan_to_num(theirs), np.nan_to_num(values))
    assert differ > 0


def test_a_continuation_values_the_positions_an_agent_behaviour_reaches_as_it_values_the_heuristics():
    """DAgger with a continuation (a later round, the last network plays the deals): the positions the agent's play
    reaches are kept and valued by the continuation exactly as :func:`continuation_values` values them there (one
    talon order each, seeded per chunk like the labelling), window only."""
    data = label_true_world_deals(STANDARD, 12, 0, 3, 1, 0.0, talon_window=[2, 6], behaviour="suit_two",
                                  continuation="suit_two")
    assert len(data) > 5 and rows_in_talon_window(data.observations, [2, 6]).all()
    network = continuation_network("suit_two", STANDARD)
    table = core_table(ROLLOUT_TABLE_BITS)
    agent = make_agent("suit_two", seed=0)
    encoder = ObservationEncoder(STANDARD)
    row = 0
    for index in range(3):
        game = Game.deal(STANDARD, seed=derive_seed(12, "deal", index), dealer=index % 2)
        while not game.is_over:
            legal = game.legal_actions()
            if len(legal) > 1 and not game.phase2 and game.closed_by is None and 2 <= game.talon_size <= 6:
                player = game.current_player
                np.testing.assert_array_equal(data.observations[row], encoder.encode(game, player))
                expected = continuation_values(state_from_game(game)[None], np.array([player]), 1, network, table)
                np.testing.assert_array_equal(data.teacher_values[row], expected[0].astype(np.float32))
                row += 1
            game.apply(legal[0] if len(legal) == 1 else agent.act(InformationSet(game, game.current_player)))
    assert row == len(data)


class RecordingNetwork:
    """A continuation network that records every observation it is asked about and defers to ``inner``."""

    def __init__(self, inner):
        self.inner, self.seen = inner, []

    def logits(self, observations):
        self.seen.append(np.array(observations))
        return self.inner.logits(observations)


def test_with_mover_seats_the_network_decides_only_for_the_mover_and_the_heuristic_for_his_opponent():
    """``label.continuation_seats: mover``: in every rollout the network is asked only about the labelled decision's
    mover (no observation it sees holds a card of the opponent's hand at the position: cards never change hands,
    R4-R7), the opponent being expert's rollout player; with ``both`` it also plays the opponent's seat. The values
    differ accordingly."""
    hand = OBSERVATION_SLICES["hand"]
    table = core_table(ROLLOUT_TABLE_BITS)
    checked, values_differ, opponent_asked = 0, 0, 0
    for game, _, _ in replayed_rows(4500, 4, 0.05):
        if game.phase2 or game.closed_by is not None or not 2 <= game.talon_size <= 6:
            continue
        player = game.current_player
        opponent_hand = np.zeros(24, dtype=bool)
        opponent_hand[game.hand(1 - player)] = True
        state = state_from_game(game)[None]
        found = {}
        for seats, opponent in (("mover", rollout_player_params()), ("both", None)):
            network = RecordingNetwork(continuation_network("suit_two", STANDARD))
            seed_kernels(7)
            found[seats] = continuation_values(state, np.array([player]), 2, network, table, opponent)[0]
            holds_theirs = [bool((rows[:, hand][:, opponent_hand] > 0).any(axis=1).any()) for rows in network.seen]
            if seats == "mover":
                assert not any(holds_theirs)
            else:
                opponent_asked += any(holds_theirs)
        assert np.array_equal(np.isnan(found["mover"]), np.isnan(found["both"]))
        values_differ += not np.allclose(np.nan_to_num(found["mover"]), np.nan_to_num(found["both"]))
        checked += 1
    assert checked > 8 and values_differ > 0 and opponent_asked > checked // 2


def test_a_continuation_opponent_network_plays_the_opponents_seat_and_the_network_the_movers():
    """``label.continuation_opponent``: in every rollout the mover's network is asked only about the mover (none of
    its observations holds a card of the opponent's hand at the position) and the opponent's network only about the
    opponent (none holds a card of the mover's hand): cards never change hands (R4-R7). With the same network on
    both sides the values are those of ``continuation_seats: both`` exactly; with another network as the opponent
    they differ."""
    hand = OBSERVATION_SLICES["hand"]
    table = core_table(ROLLOUT_TABLE_BITS)
    networks = {spec: continuation_network(spec, STANDARD) for spec in ("suit_two", "suit_pair")}
    checked = values_differ = opponent_asked = 0
    for game, _, _ in replayed_rows(4500, 4, 0.05):
        if game.phase2 or game.closed_by is not None or not 2 <= game.talon_size <= 6:
            continue
        player = game.current_player
        hands = [np.zeros(24, dtype=bool) for _ in range(2)]
        for seat in range(2):
            hands[seat][game.hand(seat)] = True
        state = state_from_game(game)[None]
        seed_kernels(7)
        both = continuation_values(state, np.array([player]), 2, networks["suit_two"], table)[0]
        found = {}
        for opponent_spec in ("suit_two", "suit_pair"):
            mover = RecordingNetwork(networks["suit_two"])
            opponent = RecordingNetwork(networks[opponent_spec])
            seed_kernels(7)
            found[opponent_spec] = continuation_values(state, np.array([player]), 2, mover, table,
                                                       opponent_network=opponent)[0]
            for network, other_hand in ((mover, hands[1 - player]), (opponent, hands[player])):
                assert not any((rows[:, hand][:, other_hand] > 0).any() for rows in network.seen)
            opponent_asked += bool(opponent.seen)
        np.testing.assert_array_equal(found["suit_two"], both)
        values_differ += not np.allclose(np.nan_to_num(found["suit_pair"]), np.nan_to_num(both))
        checked += 1
    assert checked > 8 and values_differ > 0 and opponent_asked > checked


def test_continuation_opponent_labels_with_the_same_network_are_the_self_play_labels(tmp_path):
    """The labelling run passes ``label.continuation_opponent`` through: with the continuation's own network as the
    opponent the labels equal the self-play labels (``continuation_seats: both``) row for row. The config refuses
    the key without ``continuation_seats: mover`` and a spec that is not a network, each by the key's name; the
    labelling function refuses it without a mover continuation."""
    selfplay = label_true_world_deals(STANDARD, 13, 0, 2, 1, 0.05, talon_window=[2, 6], continuation="suit_two")
    versus = label_true_world_deals(STANDARD, 13, 0, 2, 1, 0.05, talon_window=[2, 6], continuation="suit_two",
                                    continuation_seats="mover", continuation_opponent="suit_two")
    assert len(selfplay) > 3
    for name in LabelledDecisions.FIELDS:
        np.testing.assert_array_equal(getattr(versus, name), getattr(selfplay, name))
    with pytest.raises(ValueError, match="label.continuation_opponent.*continuation_seats: mover"):
        _config(tmp_path, "label.continuation=suit_two", "label.continuation_opponent=suit_two")
    with pytest.raises(ValueError, match="continuation_opponent plays the mover's opponent on"):
        label_true_world_deals(STANDARD, 13, 0, 1, 1, 0.05, continuation="suit_two", continuation_opponent="suit_two")
    with pytest.raises(ValueError, match="'label.continuation_opponent': 'heuristic' is not a network"):
        _config(tmp_path, "label.continuation=suit_two", "label.continuation_seats=mover",
                "label.continuation_opponent=heuristic")
    config = _config(tmp_path, "label.continuation=suit_two", "label.continuation_seats=mover",
                     "label.continuation_opponent=suit_pair")
    assert config.label.continuation_opponent == "suit_pair"


def test_continuation_opponent_must_read_the_history_planes_as_the_continuation_does(tmp_path):
    """Both networks of a continuation are handed the same observations: a ``label.continuation_opponent`` that does
    not read the history planes beside a continuation that does is refused by the key's name."""
    pytest.importorskip("torch")
    from pathlib import Path

    from agents.suit import SuitNetwork, save_suit_weights, suit_header
    from train.suit_network import with_history_inputs

    original = Path(__file__).resolve().parent.parent / "models" / "suit_two_standard.npz"
    network, rules = SuitNetwork.load(original)
    grown = tmp_path / "suit_two_history.npz"
    save_suit_weights(grown, with_history_inputs(network.weights), rules, suit_header(original)["provenance"])
    with pytest.raises(ValueError, match="'label.continuation_opponent': both continuation networks must read the "
                                         r"history planes, or neither \(label.continuation does\)"):
        _config(tmp_path, f"label.continuation=suit:path={grown}", "label.continuation_seats=mover",
                "label.history=true", "label.continuation_opponent=suit_two")
    config = _config(tmp_path, f"label.continuation=suit:path={grown}", "label.continuation_seats=mover",
                     "label.history=true", f"label.continuation_opponent=suit:path={grown}")
    assert config.label.continuation_opponent == f"suit:path={grown}"


def test_play_out_refuses_two_opponents():
    """The observer's opponent in a continuation is the compiled heuristic or a network, never both at once."""
    from sixtysix_env.core.continuation import play_out

    network = continuation_network("suit_two", STANDARD)
    with pytest.raises(ValueError, match="either the compiled heuristic .* or a network"):
        play_out(np.zeros((1, STATE_SIZE), dtype=np.int64), np.zeros(1, dtype=np.int64), network.logits,
                 core_table(ROLLOUT_TABLE_BITS), np.zeros(2, dtype=np.float32), rollout_player_params(),
                 opponent_logits_of=network.logits)


def test_an_opponent_plays_the_other_seat_unlabelled_and_only_the_behaviours_decisions_are_labelled():
    """``label.opponent`` (DAgger against a fixed opponent): in deal ``i`` the behaviour plays seat ``(i // 2) % 2``
    and the opponent the other, so over four deals the behaviour is dealer and forehand (R4) in turn. Replayed on
    the Python engine with the same seeded agents, the rows are exactly the behaviour's decisions with a choice, in
    order, each with every legal action valued; the opponent's are played, not labelled."""
    seed, deals = 31, 4
    data = label_true_world_deals(STANDARD, seed, 0, deals, 2, 0.0, behaviour="greedy", opponent="random")
    row = 0
    for index in range(deals):
        behaviour_seat = (index // 2) % 2
        game = Game.deal(STANDARD, seed=derive_seed(seed, "deal", index), dealer=index % 2)
        players = [make_agent("greedy", seed=0), make_agent("greedy", seed=1)]
        players[1 - behaviour_seat] = make_agent("random", seed=1 - behaviour_seat)
        encoder = ObservationEncoder(STANDARD)
        for player in (0, 1):
            players[player].seed(derive_seed(seed, "behaviour", index, player))
            players[player].start_deal(player, STANDARD)
        labelled = 0
        while not game.is_over:
            legal = game.legal_actions()
            if len(legal) == 1:
                game.apply(legal[0])
                continue
            player = game.current_player
            if player == behaviour_seat:
                np.testing.assert_array_equal(data.observations[row], encoder.encode(game, player))
                assert set(np.flatnonzero(data.masks[row])) == set(legal)
                assert np.isfinite(data.teacher_values[row, legal]).all()
                row, labelled = row + 1, labelled + 1
            game.apply(players[player].act(InformationSet(game, player)))
        assert labelled > 0 and (data.deals[row - labelled:row] == index).all()
    assert row == len(data)


def test_the_compiled_heuristic_as_opponent_leaves_only_the_behaviours_seat_labelled():
    """``label.opponent: heuristic`` plays the opponent's seat with the compiled heuristic: every row of deal ``i``
    is a decision of seat ``(i // 2) % 2``, i.e. of the forehand (R4: the dealer's opponent) exactly when that seat
    is not the dealer ``i % 2``; deterministic; the compiled heuristic cannot be the behaviour of such labels."""
    data = label_true_world_deals(STANDARD, 32, 0, 8, 2, 0.05, behaviour="greedy", opponent="heuristic")
    forehand = data.observations[:, OBSERVATION_SLICES["forehand"].start] > 0.5
    behaviour_is_forehand = np.array([(index // 2) % 2 != index % 2 for index in range(8)])
    np.testing.assert_array_equal(forehand, behaviour_is_forehand[data.deals])
    assert set(data.deals.tolist()) == set(range(8))
    again = label_true_world_deals(STANDARD, 32, 0, 8, 2, 0.05, behaviour="greedy", opponent="heuristic")
    np.testing.assert_array_equal(data.observations, again.observations)
    np.testing.assert_array_equal(data.teacher_values, again.teacher_values)
    both_seats = label_true_world_deals(STANDARD, 32, 0, 8, 2, 0.05, behaviour="greedy")
    assert len(both_seats) > len(data)
    with pytest.raises(ValueError, match="opponent needs a behaviour agent spec"):
        label_true_world_deals(STANDARD, 32, 0, 1, 2, 0.05, opponent="heuristic")


def test_an_opponent_and_a_mover_continuation_label_every_decision_of_the_behaviours_seat():
    """``label.opponent`` with ``label.continuation_seats: mover`` (a second step of policy iteration against a fixed
    opponent): without a talon window every decision of the behaviour's seat with a choice is labelled, early phase
    1 included (R4: seat ``(i // 2) % 2`` of deal ``i``), every legal action valued, reproducibly; after the talon's
    exhaustion (R8) the rest is solved exactly either way, so there the values are the rollout player's."""
    settings = dict(behaviour="suit_two", opponent="heuristic")
    data = label_true_world_deals(STANDARD, 34, 0, 4, 1, 0.0, continuation="suit_two", continuation_seats="mover",
                                  **settings)
    forehand = data.observations[:, OBSERVATION_SLICES["forehand"].start] > 0.5
    behaviour_is_forehand = np.array([(index // 2) % 2 != index % 2 for index in range(4)])
    np.testing.assert_array_equal(forehand, behaviour_is_forehand[data.deals])
    assert (~rows_in_talon_window(data.observations, [0, 6])).any()  # labels before the talon's last tricks too
    assert np.array_equal(~np.isnan(data.teacher_values), data.masks)
    again = label_true_world_deals(STANDARD, 34, 0, 4, 1, 0.0, continuation="suit_two", continuation_seats="mover",
                                   **settings)
    np.testing.assert_array_equal(data.teacher_values, again.teacher_values)
    # the same deals labelled by the rollout player; the compiled opponent draws from the kernels' generator as the
    # rollouts do, so a deal's play may part from here on, and only deals played alike are compared
    rollout = label_true_world_deals(STANDARD, 34, 0, 4, 1, 0.0, **settings)
    phase2_at = OBSERVATION_SLICES["phase2"].start
    compared = differ = 0
    for deal in range(4):
        ours, theirs = np.flatnonzero(data.deals == deal), np.flatnonzero(rollout.deals == deal)
        if len(ours) != len(theirs) or not np.array_equal(data.observations[ours], rollout.observations[theirs]):
            continue
        observations = data.observations[ours]
        exhausted = (observations[:, phase2_at] > 0) & ~after_closing(observations)
        np.testing.assert_array_equal(data.teacher_values[ours[exhausted]], rollout.teacher_values[theirs[exhausted]])
        compared += exhausted.sum()
        differ += not np.allclose(np.nan_to_num(data.teacher_values[ours[~exhausted]]),
                                  np.nan_to_num(rollout.teacher_values[theirs[~exhausted]]))
    assert compared > 0 and differ > 0


def test_a_run_with_an_opponent_labels_through_the_config_and_refuses_it_without_a_behaviour(tmp_path):
    """``label.opponent`` travels from the config to the chunks (the rows ``label_true_world_deals`` gives for it),
    and is refused by name without true-deal labels or without a behaviour agent spec, or when not an agent spec."""
    config = _config(tmp_path, "label.deals=20", "label.behaviour=greedy", "label.opponent=heuristic")
    Distiller(config, quiet=True).label(0)
    expected = label_true_world_deals(STANDARD, derive_seed(config.run.seed, "round", 0), 0, 20, 2,
                                      config.label.epsilon, behaviour="greedy", opponent="heuristic")
    np.testing.assert_array_equal(np.asarray(load_labels(config, 1).observations[:]), expected.observations)
    for overrides in (["label.opponent=heuristic"], ["label.source=teacher", "label.behaviour=greedy",
                                                     "label.opponent=heuristic"]):
        with pytest.raises(ValueError, match="label.opponent"):
            _config(tmp_path, *overrides)
    with pytest.raises(ValueError, match="label.opponent"):
        _config(tmp_path, "label.behaviour=greedy", "label.opponent=no_such_agent")


def test_a_fit_takes_the_labels_of_extra_runs_beside_its_own(tmp_path):
    """``fit.extra_labels_from``: the fit's labels are this run's rows followed by every row of the extra runs (which
    may be labelled by another behaviour, here one seat against an opponent); refused by name when the directory is
    not a run, labelled other rules, is the run's own labels, or holds no labels."""
    base = _config(tmp_path)
    Distiller(base, quiet=True).label(0)
    other = _config(tmp_path, "run.name=other", "label.deals=20", "label.behaviour=greedy",
                    "label.opponent=heuristic")
    Distiller(other, quiet=True).label(0)
    combined = _config(tmp_path, "run.name=combined", f"fit.labels_from={base.run_dir}",
                       f"fit.extra_labels_from=[{other.run_dir}]")
    own, extra, loaded = load_labels(base, 1), load_labels(other, 1), load_labels(combined, 1)
    assert len(loaded) == len(own) + len(extra) and len(extra) > 0
    np.testing.assert_array_equal(np.asarray(loaded.observations[:]),
                                  np.concatenate([np.asarray(own.observations[:]), np.asarray(extra.observations[:])]))
    np.testing.assert_array_equal(loaded.teacher_values[len(own):], extra.teacher_values)
    with pytest.raises(ValueError, match="fit.extra_labels_from.*not a distillation run"):
        _config(tmp_path, f"fit.extra_labels_from=[{tmp_path / 'nowhere'}]")
    with pytest.raises(ValueError, match="fit.extra_labels_from.*the labels this run fits already"):
        _config(tmp_path, "run.name=twice", f"fit.labels_from={base.run_dir}",
                f"fit.extra_labels_from=[{base.run_dir}]")
    paderborn = _config(tmp_path, "run.name=paderborn", "label.rules=paderborn")
    paderborn.run_dir.mkdir(parents=True)
    (paderborn.run_dir / "config.yaml").write_text(yaml.safe_dump(paderborn.to_dict()))
    with pytest.raises(ValueError, match="fit.extra_labels_from.*labelled rules 'paderborn'"):
        _config(tmp_path, f"fit.extra_labels_from=[{paderborn.run_dir}]")
    empty = _config(tmp_path, "run.name=combined_empty", f"fit.extra_labels_from=[{other.run_dir}]",
                    "fit.deals=[20,40]")  # the extra run labelled deals 0-19 only
    with pytest.raises(ValueError, match="no distillation labels in .*fit.extra_labels_from"):
        load_labels(empty, 1)
