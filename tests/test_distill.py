"""The distillation pipeline (train/distill.py): labels, soft targets, the fit, the saved model, the config."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from agents.registry import make_agent
from eval.play import play_deal
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import NUM_ACTIONS
from train.distill import (
    DistillConfig,
    FitConfig,
    Distiller,
    LabelledDecisions,
    label_deals,
    improvement_targets,
    load_distill_config,
    soft_targets,
)
from train.distill import main as distill_main

FAST_TEACHER = "pimc:samples=12,seconds=none,override_margin=0.25"
STANDARD = Rules.preset("standard")


def _config(tmp_path, *overrides: str) -> DistillConfig:
    path = tmp_path / "distill.yaml"
    path.write_text(f"""
run: {{name: tiny, out_dir: {str(tmp_path / 'runs')!r}, workers: 1, progress_bar: false}}
label: {{deals: 4, chunk_deals: 2, teacher: {FAST_TEACHER!r}}}
net: {{hidden: [32, 32]}}
fit: {{epochs: 2, batch_size: 32, validation_share: 0.25}}
eval: {{pairs: 2, every: 0}}
""")
    return load_distill_config(path, list(overrides))


def test_labels_are_the_teachers_legal_choices_with_values_for_every_legal_action_and_reproduce():
    first = label_deals(STANDARD, FAST_TEACHER, "teacher", seed=5, first=0, count=2)
    again = label_deals(STANDARD, FAST_TEACHER, "teacher", seed=5, first=0, count=2)
    for name in LabelledDecisions.FIELDS:
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    rows = np.arange(len(first))
    assert len(first) > 10
    assert first.masks[rows, first.teacher_actions].all()
    assert (first.masks.sum(axis=1) > 1).all()  # forced moves are not labelled
    # pimc values every legal action (R16 game points lie in -3..3) and nothing else
    assert np.array_equal(~np.isnan(first.teacher_values), first.masks)
    assert np.nanmax(np.abs(first.teacher_values)) <= 3
    assert set(np.unique(first.deals)) == {0, 1}
    # Both seats' decisions of a deal carry that deal's final game points (R16): a zero-sum deal gives +x and -x.
    for deal in (0, 1):
        assert set(np.abs(first.returns[first.deals == deal])) <= {0.0, 1.0, 2.0, 3.0}
        assert len(set(first.returns[first.deals == deal])) <= 2
    assert first.phase2.any() and not first.phase2.all()  # phase 1 and phase 2 (R8) decisions both appear


def test_a_rollout_teacher_labels_the_mean_value_of_every_action_its_pruning_kept():
    """``rollout`` keeps means, not per-world lists: its labels carry them for the surviving legal actions, and a
    decision it does not search (the talon exhausted, R7: the heuristic's exact solve) carries none."""
    spec = "rollout:endgame=last_trick,samples=24,seconds=none"
    data = label_deals(STANDARD, spec, "teacher", seed=5, first=0, count=2)
    valued = ~np.isnan(data.teacher_values)
    assert not (valued & ~data.masks).any()  # only legal actions are valued
    rows = np.arange(len(data))
    searched = valued.any(axis=1)
    assert searched.sum() > 5 and (valued[searched, data.teacher_actions[searched]]).all()
    assert np.nanmax(np.abs(data.teacher_values)) <= 3  # R16 game points
    # the teacher acts on its values: its choice is the best valued action (no margin by default)
    best = np.nanargmax(np.where(valued, data.teacher_values, -np.inf)[searched], axis=1)
    values_at = data.teacher_values[rows[searched]]
    np.testing.assert_allclose(values_at[np.arange(len(best)), best],
                               values_at[np.arange(len(best)), data.teacher_actions[searched]])
    # once the talon is exhausted (R7, no closing) the agent does not search: no values of an earlier decision
    # are left over for the label
    agents = [make_agent(spec, seed=seat) for seat in (0, 1)]
    exhausted_decisions = 0
    deal_seed = 3
    while exhausted_decisions == 0 and deal_seed < 13:  # until a deal reaches an exhausted talon with a choice
        game = Game.deal(STANDARD, seed=deal_seed)
        deal_seed += 1
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            agent = agents[game.current_player]
            action = agent.act(infoset)
            if len(infoset.legal_actions) > 1:
                if infoset.talon_size == 0 and infoset.closed_by is None:
                    exhausted_decisions += 1
                    assert agent.last_values == {}
                else:
                    assert agent.last_values and set(agent.last_values) <= set(infoset.legal_actions)
            game.apply(action)
    assert exhausted_decisions > 0


def test_soft_targets_mix_the_choice_with_the_value_softmax_over_legal_actions_only():
    data = label_deals(STANDARD, FAST_TEACHER, "teacher", seed=6, first=3, count=1)
    targets = soft_targets(data, choice_weight=0.5, temperature=0.25)
    np.testing.assert_allclose(targets.sum(axis=1), 1.0, rtol=1e-5)
    assert (targets[~data.masks] == 0).all()
    rows = np.arange(len(data))
    assert (targets[rows, data.teacher_actions] >= 0.5 - 1e-6).all()
    best = np.nanargmax(np.where(data.masks, data.teacher_values, np.nan), axis=1)
    assert (targets[rows, best] > 0).all()
    onehot = soft_targets(data, choice_weight=1.0, temperature=0.25)
    np.testing.assert_array_equal(onehot.argmax(axis=1), data.teacher_actions)
    assert set(np.unique(onehot)) <= {0.0, 1.0}
    # rows without values (a teacher that only acts) keep the action alone
    unvalued = LabelledDecisions(*(getattr(data, name) for name in LabelledDecisions.FIELDS))
    unvalued.teacher_values = np.full_like(data.teacher_values, np.nan)
    np.testing.assert_array_equal(soft_targets(unvalued, 0.2, 0.25), onehot)


def test_improvement_targets_reweight_the_prior_by_the_exponentiated_values():
    """``fit.target: improve``: prior * exp(value / temperature) over the valued actions, normalised; equal values
    leave the prior, rows without values keep it, and actions the teacher did not value (pruned) lose their mass."""
    data = label_deals(STANDARD, FAST_TEACHER, "teacher", seed=6, first=3, count=1)
    rows = np.arange(len(data))
    prior = np.where(data.masks, 1.0, 0.0)
    prior /= prior.sum(axis=1, keepdims=True)
    targets = improvement_targets(data, prior, temperature=0.25)
    np.testing.assert_allclose(targets.sum(axis=1), 1.0, rtol=1e-5)
    valued = data.masks & ~np.isnan(data.teacher_values)
    assert (targets[~valued & valued.any(axis=1)[:, None]] == 0).all()
    best = np.nanargmax(np.where(valued, data.teacher_values, np.nan), axis=1)
    assert (targets[rows, best] >= targets.max(axis=1) - 1e-6).all()
    # One row by hand: two valued actions, prior 0.8 / 0.2, values 0 and 0.25, temperature 0.25.
    row = int(np.flatnonzero(valued.sum(axis=1) >= 2)[0])
    first, second = np.flatnonzero(valued[row])[:2]
    single = LabelledDecisions(*(getattr(data, name)[row:row + 1] for name in LabelledDecisions.FIELDS))
    single.masks = np.zeros_like(single.masks)
    single.masks[0, [first, second]] = True
    single.teacher_values = np.full_like(single.teacher_values, np.nan)
    single.teacher_values[0, first], single.teacher_values[0, second] = 0.0, 0.25
    hand_prior = np.zeros((1, NUM_ACTIONS))
    hand_prior[0, first], hand_prior[0, second] = 0.8, 0.2
    expected = 0.2 * np.e / (0.8 + 0.2 * np.e)
    assert improvement_targets(single, hand_prior, 0.25)[0, second] == pytest.approx(expected, rel=1e-5)
    single.teacher_values[0, second] = 0.0  # equal values: the prior is kept
    np.testing.assert_allclose(improvement_targets(single, hand_prior, 0.25), hand_prior, rtol=1e-6)
    single.teacher_values[:] = np.nan  # no values: the prior is kept
    np.testing.assert_allclose(improvement_targets(single, hand_prior, 0.25), hand_prior, rtol=1e-6)


def test_a_tiny_run_labels_resumes_fits_and_saves_a_model_that_maskableppo_loads_and_that_plays(tmp_path):
    from sb3_contrib import MaskablePPO

    config = _config(tmp_path)
    distiller = Distiller(config, quiet=True)
    figures = distiller.label(0)
    chunks = sorted((config.run_dir / "round_0").glob("chunk_*.npz"))
    assert [chunk.name for chunk in chunks] == ["chunk_00000000.npz", "chunk_00000002.npz"]
    assert figures["new_deals"] == 4 and figures["new_decisions"] > 20
    # Resuming relabels exactly the missing chunk, identically.
    before = LabelledDecisions.load(chunks[1])
    chunks[1].unlink()
    assert Distiller(config, quiet=True).label(0)["new_deals"] == 2
    after = LabelledDecisions.load(chunks[1])
    for name in LabelledDecisions.FIELDS:
        np.testing.assert_array_equal(getattr(before, name), getattr(after, name))
    path = distiller.fit(0)
    model = MaskablePPO.load(path, device="cpu")
    assert model.action_space.n == NUM_ACTIONS
    with zipfile.ZipFile(path) as archive:
        metadata = json.loads(archive.read("sixtysix.json"))
    assert metadata["phase2"] == "policy" and metadata["distilled_from"] == FAST_TEACHER
    assert metadata["hidden"] == [32, 32] and metadata["activation"] == "relu"
    summary = json.loads((config.run_dir / "summary.json").read_text())
    assert summary["rounds"][0]["fit"]["evaluations"][0]["opponent"] == "heuristic"
    assert (config.run_dir / "learning_curve.png").stat().st_size > 1000
    agent = make_agent(f"ppo:path={path}", seed=0)
    outcome = play_deal(Game.deal(STANDARD, seed=3, dealer=0), [agent, make_agent("heuristic", seed=1)], [1, 2])
    assert sorted(abs(value) for value in outcome.returns) == [abs(outcome.returns[0])] * 2


def test_a_teacher_that_values_no_action_gives_a_null_regret_and_a_model_that_loads(tmp_path):
    """The heuristic chooses without action values: the held-out regret is undefined (NaN). Writing it failed the
    run at its summary ("Out of range float values are not JSON compliant"), and the model's metadata held a NaN
    its reader refuses; both now hold null."""
    config = _config(tmp_path, "label.teacher=heuristic")
    distiller = Distiller(config, quiet=True)
    distiller.label(0)
    path = distiller.fit(0)
    final = json.loads((config.run_dir / "summary.json").read_text())["rounds"][0]["fit"]["final"]
    assert final["validation_regret"] is None and 0 <= final["validation_accuracy"] <= 1
    with zipfile.ZipFile(path) as archive:
        metadata = json.loads(archive.read("sixtysix.json"))
    assert metadata["distill_figures"]["validation_regret"] is None
    assert metadata["distilled_from"] == "heuristic"
    make_agent(f"ppo:path={path}", seed=0)  # its metadata reads back


def test_a_q_fit_of_labels_without_action_values_is_refused_not_a_model_never_trained(tmp_path):
    """``fit.target: q`` on the heuristic's labels (choices only) finished with a policy loss of 0 and saved a model
    whose policy was never trained; it is refused, naming the target and what the labels lack."""
    config = _config(tmp_path, "label.teacher=heuristic", "fit.target=q")
    distiller = Distiller(config, quiet=True)
    distiller.label(0)
    with pytest.raises(ValueError, match="fit.target 'q' fits the teacher's action values, and these labels hold "
                                         "none"):
        distiller.fit(0)
    assert not (config.run_dir / "model.zip").exists()


def test_the_fit_lowers_the_policy_loss_on_the_labels(tmp_path):
    def loss_after(epochs: int) -> float:
        config = _config(tmp_path, f"fit.epochs={epochs}", "fit.validation_share=0", "fit.batch_size=16")
        distiller = Distiller(config, quiet=True)
        distiller.label(0)
        distiller.fit(0)
        summary = json.loads((config.run_dir / "summary.json").read_text())
        return summary["rounds"][0]["fit"]["final"]["training_policy_loss"]

    assert loss_after(40) < 0.8 * loss_after(1)


def test_a_fit_from_a_model_first_reports_where_that_model_stands_on_the_held_out_labels(tmp_path):
    """``fit.init_model`` (a DAgger step from a trained network): the fit reports the starting network's validation
    figures, which are those the saved network had at the end of its own fit (same labels, same held-out deals)."""
    import shutil

    config = _config(tmp_path)
    distiller = Distiller(config, quiet=True)
    distiller.label(0)
    first = tmp_path / "first.zip"
    shutil.copy(distiller.fit(0), first)
    ended = json.loads((config.run_dir / "summary.json").read_text())["rounds"][0]["fit"]["final"]
    Distiller(_config(tmp_path, f"fit.init_model={first}"), quiet=True).fit(0)
    started = json.loads((config.run_dir / "summary.json").read_text())["rounds"][0]["fit"]["final"]
    for name in ("policy_loss", "accuracy", "regret"):
        assert started[f"start_validation_{name}"] == pytest.approx(ended[f"validation_{name}"], abs=1e-5), name
    assert "start_validation_accuracy" not in ended
    # The improvement target (its own loss) starts from the same network: same accuracy and regret.
    Distiller(_config(tmp_path, f"fit.init_model={first}", "fit.target=improve"), quiet=True).fit(0)
    improved = json.loads((config.run_dir / "summary.json").read_text())["rounds"][0]["fit"]["final"]
    for name in ("accuracy", "regret"):
        assert improved[f"start_validation_{name}"] == pytest.approx(ended[f"validation_{name}"], abs=1e-5), name


def test_ray_labels_equal_multiprocessing_labels(tmp_path):
    pytest.importorskip("ray")
    local = _config(tmp_path, "run.name=local", "run.workers=2")
    on_ray = _config(tmp_path, "run.name=on_ray", "run.workers=2", "run.backend=ray")
    Distiller(local, quiet=True).label(0)
    Distiller(on_ray, quiet=True).label(0)
    for path in sorted((local.run_dir / "round_0").glob("chunk_*.npz")):
        mine = LabelledDecisions.load(path)
        theirs = LabelledDecisions.load(on_ray.run_dir / "round_0" / path.name)
        for name in LabelledDecisions.FIELDS:
            np.testing.assert_array_equal(getattr(mine, name), getattr(theirs, name))


@pytest.mark.parametrize("override, message", [
    ("run.backend=spark", "'run.backend' must be one of multiprocessing, ray"),
    ("run.address=ray://x:1", "'run.address' names a Ray cluster"),
    ("label.deals=5", "must be a multiple of label.chunk_deals"),
    ("eval.pairs=1", "'eval.pairs' must be at least 2"),  # summary.json refused the infinite interval
    ("iterate.rounds=3 iterate.later_deals=[2,3]",
     "'iterate.later_deals' \\(\\[2, 3\\]\\) must list positive multiples"),
    ("label.teacher=nosuchagent", "config key 'label.teacher'"),
    ("fit.choice_weight=1.5", "'fit.choice_weight' must lie in"),
    ("fit.colour=blue", "unknown config key 'fit.colour'"),
    ("net.hidden=[]", "'net.hidden' must list positive layer widths"),
    ("label.rules=three", "two-player game"),
    ("fit.target=copy", "'fit.target' must be one of teacher, improve"),
    ("fit.target=improve", "'fit.target' is improve, which reweights a starting network's policy: set fit.init_model"),
    ("fit.regret_coef=-1", "'fit.regret_coef'"),
    ("fit.regret_coef=1", "'fit.regret_coef' weighs a regret term of the q target's loss: set fit.target: q"),
    # the fit seeds stable-baselines3 (numpy's legacy seeds): refused now, not after the labels were made
    ("run.seed=-1", "config key 'run.seed' must lie in 0..4294967295, got -1"),
    ("fit.seed=4294967296", "config key 'fit.seed' must lie in 0..4294967295, got 4294967296"),
])
def test_bad_config_values_are_refused_by_their_dotted_key(tmp_path, override, message):
    with pytest.raises(ValueError, match=message):
        _config(tmp_path, *override.split(" "))


def test_later_deals_of_rounds_the_run_does_not_have_are_not_checked(tmp_path):
    """A one-round run scaled down by label.chunk_deals was refused for the later rounds' deal counts it never
    labels (configs/distill.yaml's [2000, 1000] with chunk_deals 3)."""
    assert _config(tmp_path, "iterate.later_deals=[3, 5]").iterate.later_deals == [3, 5]
    assert _config(tmp_path, "iterate.rounds=2", "iterate.later_deals=[2, 5]").iterate.rounds == 2
    with pytest.raises(ValueError, match="'iterate.later_deals'"):
        _config(tmp_path, "iterate.rounds=3", "iterate.later_deals=[2, 5]")


def test_describe_shows_the_values_of_the_given_config(tmp_path, capsys):
    """describe printed the defaults whatever --config and --set said (a missing file too)."""
    shipped = str(Path(__file__).resolve().parents[1] / "configs" / "distill.yaml")
    assert distill_main(["describe", "--config", shipped, "--set", "fit.epochs=3"]) == 0
    assert "  epochs: 3  (an integer)" in capsys.readouterr().out
    assert distill_main(["describe"]) == 0
    assert f"  epochs: {FitConfig.epochs}  (an integer)" in capsys.readouterr().out
    assert distill_main(["describe", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml" in capsys.readouterr().err
    assert distill_main(["describe", "--set", "fit.epochs=3"]) == 2
    assert "give --config FILE too" in capsys.readouterr().err


def test_settings_of_another_label_source_or_fit_target_are_refused_not_ignored(tmp_path):
    """label.worlds and label.epsilon are read by the true-deal labeller only, fit.choice_weight by the teacher
    target only: set beside another source or target they were accepted and ignored."""
    for key in ("label.epsilon=0.9", "label.worlds=64"):
        with pytest.raises(ValueError, match=f"'{key.split('=')[0]}' applies to true-deal labels"):
            _config(tmp_path, key)
    _config(tmp_path, "label.source=true_world", "label.epsilon=0.9", "label.worlds=64", "fit.target=q")
    with pytest.raises(ValueError, match="'fit.choice_weight' mixes the teacher's choice into fit.target: teacher"):
        _config(tmp_path, "label.source=true_world", "fit.target=q", "fit.choice_weight=0.9")
    _config(tmp_path, "fit.choice_weight=0.9")  # the teacher target reads it


def test_an_agent_that_cannot_play_the_label_rules_is_refused_by_its_key(tmp_path):
    """An evaluation opponent whose prior was fitted for the standard rules cannot play scharf (R20): refused when
    the config is read, naming the key, not at the first evaluation."""
    with pytest.raises(ValueError, match="config key 'eval.opponents': rollout's prior 'suit_iterated' was fitted "
                                         "for the rules 'standard', not 'scharf'"):
        _config(tmp_path, "label.rules=scharf", "eval.opponents=[expert]")


SHIPPED_DISTILL_CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("distill*.yaml"))


@pytest.mark.parametrize("path", SHIPPED_DISTILL_CONFIGS, ids=lambda path: path.name)
def test_every_shipped_distill_config_loads_with_agents_that_exist(path):
    """A config in configs/ is a documented command: its values pass the checks and every agent or network it names
    (label.teacher, label.behaviour, label.opponent, label.continuation, eval.opponents) loads."""
    load_distill_config(path)  # raises, naming the key, on a bad value or an agent or network that does not load


def test_shipped_distill_configs_write_to_run_directories_of_their_own():
    """Two configs with one run.name would share a run directory, and the second would refuse the first's labels."""
    names = [yaml.safe_load(path.read_text())["run"]["name"] for path in SHIPPED_DISTILL_CONFIGS]
    assert len(names) >= 13 and len(set(names)) == len(names), sorted(names)


def test_a_run_directory_refuses_labels_of_another_teacher_but_may_grow(tmp_path):
    Distiller(_config(tmp_path), quiet=True)
    Distiller(_config(tmp_path, "label.deals=6"), quiet=True)  # more deals: allowed
    with pytest.raises(ValueError, match="another label or endgame config"):
        Distiller(_config(tmp_path, "label.teacher=heuristic"), quiet=True)
    # The endgame labels' chunks on disk were made with these settings too: only endgame.deals may change.
    Distiller(_config(tmp_path, "label.deals=6", "endgame.deals=400"), quiet=True)
    for override in ("endgame.teacher=heuristic", "endgame.behaviour=greedy", "endgame.chunk_deals=100"):
        with pytest.raises(ValueError, match="another label or endgame config"):
            Distiller(_config(tmp_path, "label.deals=6", override), quiet=True)


def test_a_refitted_round_replaces_its_tensorboard_curve(tmp_path):
    """A round fitted again drops its earlier scalars from scalars.csv and from TensorBoard alike, so the curves show
    each step once."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = _config(tmp_path)
    distiller = Distiller(config, quiet=True)
    distiller.label(0)
    distiller.fit(0)
    distiller.fit(0)
    events = EventAccumulator(str(config.run_dir / "tb"))
    events.Reload()
    tag = next(tag for tag in events.Tags()["scalars"] if tag.startswith("losses/"))
    steps = [event.step for event in events.Scalars(tag)]
    assert steps and len(steps) == len(set(steps)), steps


def test_labels_of_the_wrong_shape_are_refused_by_name(tmp_path):
    data = label_deals(STANDARD, FAST_TEACHER, "teacher", seed=5, first=0, count=1)
    data.observations = data.observations[:, :10]
    path = tmp_path / "bad.npz"
    data.save(path)
    with pytest.raises(ValueError, match="observations of shape"):
        LabelledDecisions.load(path)


def test_a_second_round_labels_the_positions_the_first_rounds_network_plays_dagger(tmp_path):
    config = _config(tmp_path, "iterate.rounds=2", "iterate.later_deals=[2]", "fit.epochs=1")
    distiller = Distiller(config, quiet=True)
    with pytest.raises(ValueError, match="labelled by the network of round 0: fit it first"):
        distiller.label(1)
    distiller.run()
    summary = json.loads((config.run_dir / "summary.json").read_text())
    behaviour = summary["rounds"][1]["label"]["behaviour"]
    assert behaviour.startswith("ppo:path=") and "round_0" in behaviour and behaviour.endswith("phase2=policy")
    assert summary["rounds"][1]["label"]["new_deals"] == 2
    assert summary["rounds"][1]["fit"]["decisions"] == summary["rounds"][0]["fit"]["decisions"] + \
        summary["rounds"][1]["label"]["new_decisions"]
    # Round 1's deals are other deals than round 0's (its own seed), labelled along the network's play.
    first = LabelledDecisions.load(config.run_dir / "round_0" / "chunk_00000000.npz")
    second = LabelledDecisions.load(config.run_dir / "round_1" / "chunk_00000000.npz")
    assert not np.array_equal(first.observations[0], second.observations[0])


def test_endgame_labels_are_phase2_decisions_only(tmp_path):
    """R8: only the decisions from a closing or the talon's exhaustion on are labelled; the rest is played."""
    with pytest.raises(ValueError, match="needs a behaviour agent"):
        label_deals(STANDARD, FAST_TEACHER, "teacher", seed=1, first=0, count=1, phase2_only=True)
    data = label_deals(STANDARD, "pimc:samples=5,seconds=none,prior=none", "heuristic", seed=8, first=0, count=6,
                       phase2_only=True)
    assert len(data) > 0 and data.phase2.all()
    config = _config(tmp_path, "endgame.deals=4", "endgame.chunk_deals=2")
    distiller = Distiller(config, quiet=True)
    distiller.label(0)
    assert distiller.summary["endgame"]["new_deals"] == 4
    endgame_rows = sum(len(LabelledDecisions.load(path)) for path in (config.run_dir / "endgame").glob("*.npz"))
    assert endgame_rows > 0
    with pytest.raises(ValueError, match="'endgame.deals' \\(3\\) must be a multiple"):
        _config(tmp_path, "endgame.deals=3")


def _heuristic_replay(seed: int, deals: int):
    """``(deal index, game, infoset)`` at every decision with a choice of the labelling's deals ``0 .. deals - 1``
    of ``seed``, replayed by the heuristic alone in both seats, seeded as a labelling seeds its behaviour agents
    (forced moves are played without asking anyone, as the labelling does)."""
    from eval.deals import derive_seed

    for index in range(deals):
        game = Game.deal(STANDARD, seed=derive_seed(seed, "deal", index), dealer=index % 2)
        players = [make_agent("heuristic", seed=0), make_agent("heuristic", seed=1)]
        for seat in (0, 1):
            players[seat].seed(derive_seed(seed, "behaviour", index, seat))
            players[seat].start_deal(seat, STANDARD)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) == 1:
                game.apply(infoset.legal_actions[0])
                continue
            yield index, game, infoset
            game.apply(players[game.current_player].act(infoset))


def test_a_teachers_talon_window_labels_only_those_phase1_decisions_with_the_teachers_own_values():
    """``label.talon_window`` with a teacher (R4, R7, R10): every row is a phase-1 decision with an open talon of 2 to
    6 cards, its values are the teacher's at that position (a fresh teacher asked there gives the same), the deals
    are played as the behaviour plays them (the labels do not change the deal), and no decision of the window is
    left out."""
    from train.distill import rows_in_talon_window

    spec = "rollout:endgame=last_trick,samples=16,seconds=none,prune=none"
    with pytest.raises(ValueError, match=r"a talon window, after a closing\) needs a behaviour agent"):
        label_deals(STANDARD, spec, "teacher", seed=4, first=0, count=1, talon_window=[2, 6])
    data = label_deals(STANDARD, spec, "heuristic", seed=4, first=0, count=4, talon_window=[2, 6])
    assert len(data) >= 6 and rows_in_talon_window(data.observations, [2, 6]).all() and not data.phase2.any()
    np.testing.assert_array_equal(~np.isnan(data.teacher_values), data.masks)  # prune=none: every legal action
    # The same deals replayed with the heuristic alone: the window's decisions with a choice are exactly the rows.
    from agents.ppo import InfosetEncoder
    from eval.deals import derive_seed

    encoder, expected = InfosetEncoder(STANDARD), []
    for index, game, infoset in _heuristic_replay(seed=4, deals=4):
        observation = encoder.encode(infoset)
        if rows_in_talon_window(observation[None], [2, 6])[0]:
            if not expected:  # the first row's values: a teacher seeded as the labelling's gives them again
                teacher = make_agent(spec, seed=0)
                teacher.seed(derive_seed(4, "teacher", index, game.current_player))
                teacher.start_deal(game.current_player, STANDARD)
                teacher.act(infoset)
                first_values = dict(teacher.last_values)
            expected.append((index, observation))
    assert [index for index, _ in expected] == data.deals.tolist()
    np.testing.assert_array_equal(np.stack([observation for _, observation in expected]), data.observations)
    assert first_values and all(np.isclose(data.teacher_values[0, action], value)
                                for action, value in first_values.items())


def test_after_closing_labels_only_the_decisions_after_a_closing_with_the_teachers_own_values():
    """``label.after_closing`` (R10): every row is a decision after a closing, valued by the teacher over every
    legal action; the rows are exactly those decisions with a choice when the behaviour alone replays the deals;
    without a behaviour agent, or with another source or a talon window, it is refused by name."""
    from agents.ppo import InfosetEncoder
    from sixtysix_env.observation import OBSERVATION_SLICES

    spec = "rollout:endgame=last_trick,samples=16,seconds=none,prune=none"
    with pytest.raises(ValueError, match=r"after a closing\) needs a behaviour agent"):
        label_deals(STANDARD, spec, "teacher", seed=4, first=0, count=1, after_closing=True)
    data = label_deals(STANDARD, spec, "heuristic", seed=6, first=0, count=30, after_closing=True)
    closed = OBSERVATION_SLICES["closed_by_me"].start, OBSERVATION_SLICES["closed_by_opponent"].start
    assert len(data) >= 5 and data.phase2.all()
    assert ((data.observations[:, closed[0]] + data.observations[:, closed[1]]) == 1).all()
    np.testing.assert_array_equal(~np.isnan(data.teacher_values), data.masks)  # prune=none: every legal action
    encoder = InfosetEncoder(STANDARD)
    expected = [(index, encoder.encode(infoset)) for index, game, infoset in _heuristic_replay(seed=6, deals=30)
                if game.closed_by is not None]
    assert [index for index, _ in expected] == data.deals.tolist()
    np.testing.assert_array_equal(np.stack([observation for _, observation in expected]), data.observations)
    for overrides in (["label.after_closing=true"],
                      ["label.after_closing=true", "label.behaviour=heuristic", "label.source=true_world"],
                      ["label.after_closing=true", "label.behaviour=heuristic", "label.talon_window=[2,6]"]):
        with pytest.raises(ValueError, match="label.after_closing"):
            load_distill_config(None, overrides)


@pytest.mark.parametrize("alias", ["distilled", "ppo_vector", "ppo_vector_heuristic", "ppo_distilled_heuristic",
                                   "ppo_true_world", "ppo_ensemble"])
def test_the_shipped_networks_load_under_their_aliases_and_play_every_decision(alias):
    """The aliases name shipped MaskablePPO zips whose network plays every decision, phase 2 (R8) included."""
    from sb3_contrib import MaskablePPO

    agent = make_agent(alias, seed=0)
    assert agent.phase2 == "policy" and agent.path.exists()
    assert MaskablePPO.load(agent.path, device="cpu").action_space.n == NUM_ACTIONS
    outcome = play_deal(Game.deal(STANDARD, seed=9, dealer=1), [agent, make_agent("heuristic", seed=1)], [1, 2])
    assert outcome.returns[0] == -outcome.returns[1] != 0


def test_the_fits_talon_window_is_the_suit_agents_late_window_on_plain_and_packed_rows():
    """One reading of a talon window (R4 talon size, R7/R10 talon open) from observations: the fit's
    ``rows_in_talon_window`` agrees with ``agents.suit.in_late_window`` row by row, on float rows and on the same rows
    packed as codes (what ``load_labels`` hands the fit), for played positions inside and outside the window."""
    from agents.ppo import InfosetEncoder
    from agents.suit import in_late_window
    from train.distill import rows_in_talon_window
    from train.recorded import PackedObservations

    encoder = InfosetEncoder(STANDARD)
    rows = np.array([encoder.encode(infoset) for _, _, infoset in _heuristic_replay(seed=7, deals=6)], np.float32)
    packed = PackedObservations.pack([rows[: len(rows) // 2], rows[len(rows) // 2:]], rows.shape[1])
    assert isinstance(packed, PackedObservations)
    for window in ([2, 6], [0, 12], [8, 10]):
        plain = rows_in_talon_window(rows, window)
        np.testing.assert_array_equal(rows_in_talon_window(packed, window), plain)
        np.testing.assert_array_equal(in_late_window(rows, *window), plain)
        assert [bool(in_late_window(row.tolist(), *window)) for row in rows] == plain.tolist()
    inside = rows_in_talon_window(rows, [2, 6])
    assert inside.any() and (~inside).any()  # the deals reach both sides of the window


@pytest.mark.parametrize("text, fragment", [
    ('{"rounds": [', "not valid JSON"),
    ('{"rounds": {"0": {}}}', "is not a run's summary"),
    ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
])
def test_a_damaged_summary_of_a_continued_run_is_refused_naming_it(tmp_path, text, fragment):
    """A distillation run continued (the same run.name) reads its summary.json strictly: a damaged one is a
    ValueError naming it, not a JSON traceback or a KeyError at the first figure recorded."""
    config = _config(tmp_path)
    Distiller(config, quiet=True)  # makes the run directory and its config
    (config.run_dir / "summary.json").write_text(text)
    with pytest.raises(ValueError, match=f"distillation summary .*summary.json.*{re.escape(fragment)}"):
        Distiller(config, quiet=True)


@pytest.mark.parametrize("text, fragment", [
    ("run: [1\n", "is not valid YAML"),
    ("- a list\n", "must hold a mapping of config sections"),
    ("run: 5\nlabel: {}\n", "config key 'run' must be a mapping"),
    ("label: 7\n", "config key 'label' must be a mapping"),
])
def test_a_damaged_saved_config_of_a_continued_run_is_refused_naming_it(tmp_path, text, fragment):
    """A run continued (the same run.name) compares its saved config.yaml with this one: a damaged file is a
    ValueError naming it, not a YAML traceback or an AttributeError, and the file is left as it was."""
    config = _config(tmp_path)
    Distiller(config, quiet=True)
    (config.run_dir / "config.yaml").write_text(text)
    with pytest.raises(ValueError, match=f"config.yaml.*{re.escape(fragment)}"):
        Distiller(config, quiet=True)
    assert (config.run_dir / "config.yaml").read_text() == text


def test_the_run_command_refuses_round_which_only_label_and_fit_take(tmp_path, capsys):
    """``sixtysix distill run`` does every round: a --round given to it is refused, not silently ignored."""
    _config(tmp_path)
    assert distill_main(["run", "--config", str(tmp_path / "distill.yaml"), "--round", "1"]) == 2
    assert "--round is for label and fit" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_a_learning_curve_without_evaluation_opponents_plots_without_a_warning(tmp_path):
    """eval.opponents: [] left the margin panel empty, and matplotlib warned about a legend of nothing."""
    import warnings

    from train.distill import plot_learning_curve

    (tmp_path / "scalars.csv").write_text("step,tag,value\n1,charts/validation_regret,0.5\n"
                                          "2,charts/validation_regret,0.4\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot_learning_curve(tmp_path, [])
    assert (tmp_path / "learning_curve.png").stat().st_size > 0
