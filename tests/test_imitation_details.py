"""Details of behaviour cloning (train/imitation.py) that the training tests leave open: the recorded decisions are
exactly the teacher's own play on the documented deals and seeds, whatever the chunking; the fit's loss, figures,
masking, seed and progress bar; the ``imitation`` stage's files and summary; and the defaults, hand-offs and refusals
of ``python -m train.imitation record`` and ``finetune``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("torch")

import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402

from agents.ppo import InfosetEncoder, delegated, read_model_metadata  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from eval.deals import derive_seed  # noqa: E402
from sixtysix_env.actions import NUM_ACTIONS  # noqa: E402
from sixtysix_env.game import Game  # noqa: E402
from sixtysix_env.infoset import InformationSet  # noqa: E402
from sixtysix_env.observation import OBSERVATION_SIZE  # noqa: E402
from sixtysix_env.rules import Rules  # noqa: E402
from train import imitation  # noqa: E402
from train.imitation import TeacherData, behaviour_clone, collect_teacher_data, record_teacher_deals  # noqa: E402
from train.recorded import held_out_split  # noqa: E402

PPO_MODEL = Path(__file__).resolve().parent.parent / "models" / "ppo_standard.zip"
STANDARD = Rules.preset("standard")


def teacher_play(teacher: str, seed: int, first: int, count: int, phase2: str) -> dict[str, list]:
    """The decisions the module docstring describes, played here deal by deal with fresh agents: deck from
    ``derive_seed(seed, "deal", i)``, dealer ``i % 2``, the teacher in both seats seeded per deal and seat, the
    decisions a ``phase2`` policy hands to the exact search played by the heuristic and not recorded."""
    encoder = InfosetEncoder(STANDARD)
    rows: dict[str, list] = {"observations": [], "actions": [], "legal": [], "returns": [], "deals": []}
    for index in range(first, first + count):
        game = Game.deal(STANDARD, seed=derive_seed(seed, "deal", index), dealer=index % 2)
        seats = [make_agent(teacher, seed=derive_seed(seed, "agent", index, player)) for player in (0, 1)]
        searches = [make_agent("heuristic", seed=derive_seed(seed, "endgame", index, player)) for player in (0, 1)]
        for player in (0, 1):
            seats[player].start_deal(player, STANDARD)
            searches[player].start_deal(player, STANDARD)
        deciders = []
        while not game.is_over:
            player = game.current_player
            infoset = InformationSet(game, player)
            if phase2 != "policy" and delegated(infoset, phase2):
                game.apply(searches[player].act(infoset))
                continue
            action = seats[player].act(infoset)
            if len(infoset.legal_actions) > 1:
                rows["observations"].append(encoder.encode(infoset))
                rows["actions"].append(action)
                rows["legal"].append(sorted(infoset.legal_actions))
                rows["deals"].append(index)
                deciders.append(player)
            game.apply(action)
        rows["returns"] += [float(game.result.returns()[player]) for player in deciders]
    return rows


def assert_same_as_teacher_play(data: TeacherData, expected: dict[str, list]) -> None:
    assert len(data) == len(expected["actions"]) > 0
    assert np.array_equal(data.observations, np.asarray(expected["observations"], dtype=np.float32))
    assert data.actions.tolist() == expected["actions"]
    assert [np.flatnonzero(mask).tolist() for mask in data.masks] == expected["legal"]
    assert data.returns.tolist() == expected["returns"]
    assert data.deals.tolist() == expected["deals"]


def forced_choices(rows: int, deals: int = 5) -> TeacherData:
    """Decisions with exactly one legal action each (the recorder skips these; here they make a masked policy's
    choice certain): rows spread over ``deals`` deals, returns of -3..3."""
    generator = np.random.default_rng(3)
    actions = generator.integers(0, NUM_ACTIONS, rows)
    masks = np.zeros((rows, NUM_ACTIONS), dtype=bool)
    masks[np.arange(rows), actions] = True
    return TeacherData(observations=generator.random((rows, OBSERVATION_SIZE), dtype=np.float32), masks=masks,
                       actions=actions.astype(np.int64),
                       returns=generator.integers(-3, 4, rows).astype(np.float32),
                       deals=np.arange(rows, dtype=np.int64) % deals)


def small_policy(seed: int = 0) -> MaskableActorCriticPolicy:
    torch.manual_seed(seed)
    return MaskableActorCriticPolicy(spaces.Box(-1.0, 2.0, (OBSERVATION_SIZE,), np.float32),
                                     spaces.Discrete(NUM_ACTIONS), lambda _progress: 1e-3,
                                     net_arch=dict(pi=[16], vf=[16]))


@pytest.fixture(scope="module")
def greedy_decisions() -> TeacherData:
    return record_teacher_deals(STANDARD, "greedy", 5, 0, 6, phase2="policy")


# --------------------------------------------------------------------------- recording
@pytest.mark.parametrize("teacher, phase2", [("random", "policy"), ("heuristic", "policy"), ("random", "endgame")])
def test_recorded_decisions_are_the_teachers_own_play_on_the_documented_deals(teacher, phase2):
    """A random teacher shows every seed (each seat's own generator), the heuristic a seat that remembers its deal."""
    data = record_teacher_deals(STANDARD, teacher, 21, 3, 2, phase2=phase2)
    assert_same_as_teacher_play(data, teacher_play(teacher, 21, 3, 2, phase2))


def test_the_exact_search_of_the_endgame_is_seeded_per_deal_and_seat():
    """Its sampled worlds change how a deal ends, so the returns of the recorded decisions (ten deals: enough for
    one where the seed matters)."""
    data = record_teacher_deals(STANDARD, "greedy", 21, 0, 10, phase2="endgame")
    assert_same_as_teacher_play(data, teacher_play("greedy", 21, 0, 10, "endgame"))


def test_the_decisions_do_not_depend_on_how_the_deals_are_chunked(monkeypatch):
    monkeypatch.setattr(imitation, "CHUNK_DEALS", 2)
    chunked = collect_teacher_data(STANDARD, "random", 5, 8, "policy", progress=False)
    assert_same_as_teacher_play(chunked, teacher_play("random", 8, 0, 5, "policy"))
    assert chunked.rules == STANDARD  # every chunk says so, and the file keeps it (R19-R20)


def test_a_recording_names_the_rules_its_deals_were_played_under(tmp_path):
    scharf = Rules.preset("scharf")
    data = record_teacher_deals(scharf, "random", 3, 0, 1, phase2="policy")
    assert data.rules == scharf
    data.save(tmp_path / "t.npz")
    assert TeacherData.load(tmp_path / "t.npz").rules == scharf


def test_the_chunks_go_to_the_deal_runner_with_its_workers_and_progress(monkeypatch):
    calls = []

    def runner(function, chunks, deal_counts, workers, description, progress):
        calls.append((chunks, deal_counts, workers, description, progress))
        return [function(chunk) for chunk in chunks]

    monkeypatch.setattr(imitation, "run_deal_chunks", runner)
    monkeypatch.setattr(imitation, "CHUNK_DEALS", 2)
    for progress_wanted in (False, True):
        collect_teacher_data(STANDARD, "greedy", 3, 8, "solver", workers=3, progress=progress_wanted)
        chunks, deal_counts, workers, description, progress = calls.pop()
        assert [chunk[1:] for chunk in chunks] == [("greedy", 8, 0, 2, "solver"), ("greedy", 8, 2, 1, "solver")]
        assert (deal_counts, workers, description, progress) == ([2, 1], 3, "imitation: greedy plays",
                                                                 progress_wanted)


# --------------------------------------------------------------------------- fitting
def test_a_forced_choice_is_certain_under_the_action_mask():
    """Logits of illegal actions are masked: a row with one legal action is predicted with certainty (accuracy 1,
    cross-entropy 0) even by an untrained network; the figures are means over all batches, the validation's too."""
    data = forced_choices(20)
    figures = behaviour_clone(small_policy(), data, epochs=1, batch_size=4, learning_rate=0.0, value_coef=0.5,
                              validation_share=0.4, seed=0, progress=False)
    assert figures["accuracy"] == 1.0 and figures["validation_accuracy"] == 1.0
    assert figures["policy_loss"] < 1e-6 and figures["validation_policy_loss"] < 1e-6


def test_the_value_figure_is_the_mean_squared_error_against_the_game_points():
    data = forced_choices(12)
    policy = small_policy()
    with torch.no_grad():
        predicted = policy.predict_values(torch.as_tensor(data.observations)).squeeze(1).numpy()
    figures = behaviour_clone(policy, data, epochs=1, batch_size=12, learning_rate=0.0, value_coef=0.5,
                              validation_share=0.0, seed=0, progress=False)
    assert figures["value_loss"] == pytest.approx(float(np.mean((predicted - data.returns) ** 2)), rel=1e-5)
    assert "validation_value_loss" not in figures  # no deal held out, no validation figures


@pytest.mark.parametrize("value_coef", [0.0, 1.0])
def test_the_value_head_learns_only_with_a_value_weight(value_coef):
    data = forced_choices(16)
    logged: list[tuple[str, float, int]] = []
    behaviour_clone(small_policy(), data, epochs=4, batch_size=16, learning_rate=1e-2, value_coef=value_coef,
                    validation_share=0.0, seed=0, log=lambda *row: logged.append(row), progress=False)
    value_losses = [value for tag, value, _ in logged if tag == "imitation/value_loss"]
    assert [epoch for tag, _, epoch in logged if tag == "imitation/value_loss"] == [1, 2, 3, 4]
    if value_coef:
        assert value_losses[-1] < 0.9 * value_losses[0]
    else:  # one batch, the value head untouched: the same loss every epoch
        assert value_losses == pytest.approx([value_losses[0]] * 4, rel=1e-6)


def test_the_seed_decides_the_split_and_the_batch_order(greedy_decisions):
    policy = small_policy()

    def fit(seed: int, validation_share: float) -> dict[str, float]:
        return behaviour_clone(copy.deepcopy(policy), greedy_decisions, epochs=2, batch_size=32, learning_rate=1e-2,
                               value_coef=0.5, validation_share=validation_share, seed=seed, progress=False)

    assert fit(0, 0.0) == fit(0, 0.0)
    assert fit(0, 0.0) != fit(1, 0.0)  # the same rows, shuffled in another order
    assert fit(0, 0.5)["validation_accuracy"] != fit(1, 0.5)["validation_accuracy"]


def test_each_step_clips_the_gradient_norm_to_one(greedy_decisions):
    """A fit is Adam on cross-entropy + ``value_coef`` * squared value error, with the gradient's norm clipped to 1
    before each step: replayed by hand (the loss as the other tests pin it), the weights are the fit's to the bit with
    the clip and differ without it (the value error of game points gives gradient norms above 1)."""
    data, start = greedy_decisions, small_policy()
    fitted = copy.deepcopy(start)
    behaviour_clone(fitted, data, epochs=1, batch_size=32, learning_rate=1e-2, value_coef=0.5, validation_share=0.0,
                    seed=5, progress=False)

    def replay(clip: bool) -> tuple[list[torch.Tensor], list[float]]:
        policy = copy.deepcopy(start)
        generator = np.random.default_rng(5)
        training, _ = held_out_split(data.deals, 0.0, generator)
        order = generator.permutation(training)
        optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
        norms = []
        for first in range(0, len(order), 32):
            rows = torch.as_tensor(order[first:first + 32])
            features = policy.extract_features(torch.as_tensor(data.observations)[rows], policy.pi_features_extractor)
            latent_pi, latent_vf = policy.mlp_extractor(features)
            logits = policy.action_net(latent_pi).masked_fill(~torch.as_tensor(data.masks)[rows], -1e8)
            chosen = torch.as_tensor(data.actions)[rows]
            cross_entropy = -torch.log_softmax(logits, dim=-1).gather(1, chosen[:, None]).squeeze(1).mean()
            values = policy.value_net(latent_vf).squeeze(1)
            value_error = torch.mean((values - torch.as_tensor(data.returns)[rows]) ** 2)
            optimizer.zero_grad()
            (cross_entropy + 0.5 * value_error).backward()
            norms.append(float(torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0 if clip else float("inf"))))
            optimizer.step()
        return [parameter.detach() for parameter in policy.parameters()], norms

    clipped, norms = replay(clip=True)
    assert len(norms) > 1 and min(norms) > 1.0
    assert all(torch.equal(mine.detach(), theirs) for mine, theirs in zip(fitted.parameters(), clipped))
    unclipped, _ = replay(clip=False)
    assert not all(torch.allclose(mine.detach(), theirs) for mine, theirs in zip(fitted.parameters(), unclipped))


def test_no_decisions_to_learn_from_is_refused_by_name():
    with pytest.raises(ValueError, match=r"no teacher decisions to learn from \(increase imitation.deals\)"):
        behaviour_clone(small_policy(), forced_choices(0), epochs=1, batch_size=4, learning_rate=1e-3,
                        value_coef=0.5, validation_share=0.0, seed=0, progress=False)


def test_the_fit_shows_a_progress_bar_only_when_asked(capsys):
    for progress in (False, True):
        behaviour_clone(small_policy(), forced_choices(8), epochs=1, batch_size=8, learning_rate=1e-3,
                        value_coef=0.5, validation_share=0.0, seed=0, progress=progress)
        assert ("imitation: fitting" in capsys.readouterr().err) is progress


# --------------------------------------------------------------------------- the imitation stage of a run
def fake_trainer(run_dir: Path, quiet: bool = False, validation_share: float = 0.25) -> SimpleNamespace:
    """What run_imitation reads of a Trainer; save_model writes a marker file."""
    saved = []

    def save_model(model, path, step):
        Path(path).write_text("model")
        saved.append((Path(path), step))

    config = SimpleNamespace(
        imitation=SimpleNamespace(teacher="greedy", deals=3, seed=4, workers=2, epochs=2, batch_size=64,
                                  learning_rate=1e-3, value_coef=0.5, validation_share=validation_share),
        run=SimpleNamespace(progress_bar=True), env=SimpleNamespace(phase2="solver"))
    return SimpleNamespace(config=config, run_dir=run_dir, quiet=quiet, rules=STANDARD, save_model=save_model,
                           saved=saved)


def test_the_stage_records_fits_and_writes_its_files_and_summary(tmp_path, monkeypatch, capsys):
    asked = []
    real_collect = imitation.collect_teacher_data

    def collect(*args, **kwargs):
        asked.append((args, kwargs))
        return real_collect(*args, **kwargs)

    monkeypatch.setattr(imitation, "collect_teacher_data", collect)
    trainer = fake_trainer(tmp_path, quiet=True)
    summary = imitation.run_imitation(trainer, SimpleNamespace(policy=small_policy()))
    assert asked == [((STANDARD, "greedy", 3, 4), {"phase2": "solver", "workers": 2, "progress": False})]
    assert capsys.readouterr().err == ""  # quiet: no progress bars, although the config asks for them
    folder = tmp_path / "imitation"
    data = TeacherData.load(folder / "data.npz")
    assert trainer.saved == [(folder / "model.zip", 0)]
    assert json.loads((folder / "summary.json").read_text()) == summary
    assert (summary["teacher"], summary["deals"], summary["decisions"]) == ("greedy", 3, len(data))
    assert set(summary["final"]) == {"policy_loss", "value_loss", "accuracy", "validation_policy_loss",
                                     "validation_value_loss", "validation_accuracy"}
    assert [sorted(epoch) for epoch in summary["epochs"]] == [sorted(["epoch", *summary["final"]])] * 2
    assert [epoch["epoch"] for epoch in summary["epochs"]] == [1, 2]
    assert summary["epochs"][-1]["accuracy"] == summary["final"]["accuracy"]


def test_the_stage_reuses_recorded_decisions(tmp_path, monkeypatch):
    (tmp_path / "imitation").mkdir()
    forced_choices(9).save(tmp_path / "imitation" / "data.npz")

    def no_recording(*args, **kwargs):
        raise AssertionError("the teacher played again")

    monkeypatch.setattr(imitation, "collect_teacher_data", no_recording)
    summary = imitation.run_imitation(fake_trainer(tmp_path, quiet=True, validation_share=0.0),
                                      SimpleNamespace(policy=small_policy()))
    assert summary["decisions"] == 9 and summary["final"]["accuracy"] == 1.0
    assert "validation_accuracy" not in summary["final"]


# --------------------------------------------------------------------------- finetune_model
def test_finetune_writes_the_figures_and_their_source_into_the_model(greedy_decisions, tmp_path):
    figures_by_seed = []
    for seed in (0, 1):
        out = tmp_path / f"tuned{seed}.zip"
        figures = imitation.finetune_model(PPO_MODEL, greedy_decisions, out, epochs=1, batch_size=64,
                                           learning_rate=1e-3, value_coef=0.5, validation_share=0.5, seed=seed,
                                           progress=False)
        metadata = read_model_metadata(out)
        assert metadata["finetuned_from"] == "ppo_standard.zip"
        assert metadata["finetune_decisions"] == len(greedy_decisions)
        assert metadata["finetune_figures"] == {name: round(value, 5) for name, value in figures.items()}
        figures_by_seed.append(figures)
    assert figures_by_seed[0] != figures_by_seed[1]  # the seed chooses the held-out deals too


# --------------------------------------------------------------------------- python -m train.imitation
class Stop(Exception):
    """Raised by a patched step: the command got that far."""


def refuse_work(*args, **kwargs):
    raise Stop


def test_record_defaults_and_what_it_prints(tmp_path, monkeypatch, capsys):
    asked = []

    def collect(*args, **kwargs):
        asked.append((args, kwargs))
        return forced_choices(7)

    monkeypatch.setattr(imitation, "collect_teacher_data", collect)
    out = tmp_path / "decisions.npz"
    assert imitation.main(["record", "--deals", "3", "--out", str(out)]) == 0
    assert asked == [((STANDARD, "heuristic", 3, 7_070_707, "endgame"), {"workers": 1})]
    assert capsys.readouterr().out == f"7 decisions of heuristic from 3 deals -> {out}\n"
    assert len(TeacherData.load(out)) == 7
    assert imitation.main(["record", "--teacher", "greedy", "--deals", "2", "--seed", "9", "--rules", "paderborn",
                           "--phase2", "policy", "--workers", "2", "--out", str(out)]) == 0
    assert asked[1] == ((Rules.preset("paderborn"), "greedy", 2, 9, "policy"), {"workers": 2})


@pytest.mark.parametrize("arguments, message", [
    (["--deals", "1", "--workers", "0"], "--deals and --workers must be at least 1"),
    (["--deals", "0"], "--deals and --workers must be at least 1"),
])
def test_record_refuses_counts_below_one(arguments, message, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(imitation, "collect_teacher_data", refuse_work)
    with pytest.raises(SystemExit) as exit_:
        imitation.main(["record", *arguments, "--out", str(tmp_path / "d.npz")])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_record_refuses_an_output_folder_before_the_first_deal(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(imitation, "collect_teacher_data", refuse_work)
    with pytest.raises(SystemExit):
        imitation.main(["record", "--deals", "1", "--out", str(tmp_path)])
    assert f"--out {str(tmp_path)!r}: is a folder, not a file" in capsys.readouterr().err


@pytest.fixture
def two_data_files(tmp_path) -> list[str]:
    paths = [tmp_path / "a.npz", tmp_path / "b.npz"]
    forced_choices(5).save(paths[0])
    forced_choices(6).save(paths[1])
    return [str(path) for path in paths]


def test_finetune_defaults_concatenated_data_and_what_it_prints(two_data_files, tmp_path, monkeypatch, capsys):
    asked = []

    def finetune(*args, **kwargs):
        asked.append((args, kwargs))
        return {"accuracy": 0.25, "policy_loss": 1.5}

    monkeypatch.setattr(imitation, "finetune_model", finetune)
    out = str(tmp_path / "tuned.zip")
    assert imitation.main(["finetune", "--model", str(PPO_MODEL), "--data", *two_data_files, "--out", out]) == 0
    (model, data, out_given, *numbers), kwargs = asked[0]
    assert (model, out_given, kwargs) == (str(PPO_MODEL), out, {})
    assert numbers == [4, 512, 3e-4, 0.5, 0.05, 0]  # epochs, batch size, learning rate, value weight, share, seed
    assert len(data) == 11 and data.actions.tolist() == (forced_choices(5).actions.tolist()
                                                         + forced_choices(6).actions.tolist())
    assert capsys.readouterr().out == f"fine-tuned on 11 decisions -> {out}: accuracy 0.2500, policy_loss 1.5000\n"
    assert imitation.main(["finetune", "--model", str(PPO_MODEL), "--data", two_data_files[0], "--out", out,
                           "--epochs", "2", "--batch-size", "8", "--learning-rate", "0.01", "--value-coef", "2",
                           "--validation-share", "0", "--seed", "5"]) == 0
    assert asked[1][0][3:] == (2, 8, 0.01, 2.0, 0.0, 5)


@pytest.mark.parametrize("option, value", [
    ("--epochs", "0"), ("--batch-size", "0"), ("--learning-rate", "0"), ("--validation-share", "1"),
    ("--validation-share", "-0.1"),
])
def test_finetune_refuses_fit_settings_out_of_range(option, value, two_data_files, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(imitation, "finetune_model", refuse_work)
    with pytest.raises(SystemExit) as exit_:
        imitation.main(["finetune", "--model", str(PPO_MODEL), "--data", two_data_files[0], "--out",
                        str(tmp_path / "tuned.zip"), option, value])
    assert exit_.value.code == 2
    assert ("--epochs, --batch-size and --learning-rate must be positive, --validation-share in [0, 1)"
            in capsys.readouterr().err)
