"""Details of the training configuration (train/config.py, docs/training.md "Config"): every documented range and
choice is enforced, each refusal is a ValueError naming the dotted key, and ``--set`` overrides change only what they
name."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pytest

config_module = pytest.importorskip("train.config", reason="the training config needs the 'train' extra")

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "configs" / "ppo_smoke.yaml"  # n_steps 64, n_envs 2 (a rollout of 128), batch_size 64


def _load(*overrides: str):
    return config_module.load_config(SMOKE, list(overrides))


def _value(config, key: str):
    return functools.reduce(getattr, key.split("."), config)


def _refused(overrides: list[str], path: Path = SMOKE) -> str:
    with pytest.raises(ValueError) as error:
        config_module.load_config(path, overrides)
    return str(error.value)


# ------------------------------------------------------------------------------------------ ranges
POSITIVE = [
    "run.total_steps", "run.n_envs", "run.torch_threads", "ppo.learning_rate", "ppo.n_steps", "ppo.batch_size",
    "ppo.n_epochs", "ppo.clip_range", "ppo.max_grad_norm", "pool.snapshot_every", "pool.max_snapshots",
    "eval.pairs", "checkpoint.every", "checkpoint.keep", "imitation.epochs", "imitation.batch_size",
    "imitation.learning_rate", "imitation.workers",
]


@pytest.mark.parametrize("key", POSITIVE)
def test_a_count_rate_or_clip_of_zero_is_refused_naming_its_key(key):
    assert f"config key '{key}' must be positive, got 0" in _refused([f"{key}=0"])


NON_NEGATIVE = ["imitation.deals", "imitation.value_coef", "ppo.ent_coef", "ppo.vf_coef", "pool.snapshot_weight",
                "eval.every", "ppo.gae_lambda", "ppo.gamma"]


@pytest.mark.parametrize("key", NON_NEGATIVE)
def test_a_negative_weight_or_count_is_refused_naming_its_key_and_zero_is_accepted(key):
    assert f"config key '{key}' must be zero or more, got -1" in _refused([f"{key}=-1"])
    assert _value(_load(f"{key}=0"), key) == 0


UNIT_INTERVAL = ["ppo.gamma", "ppo.gae_lambda", "pool.latest_snapshot_share", "imitation.validation_share"]


@pytest.mark.parametrize("key", UNIT_INTERVAL)
def test_a_share_outside_the_unit_interval_is_refused_naming_its_key(key):
    assert f"config key '{key}' must lie in [0, 1]" in _refused([f"{key}=1.5"])
    assert f"config key '{key}' must" in _refused([f"{key}=-0.5"])


@pytest.mark.parametrize("key", ["ppo.gamma", "ppo.gae_lambda", "pool.latest_snapshot_share"])
def test_both_ends_of_the_unit_interval_are_accepted(key):
    assert _value(_load(f"{key}=0"), key) == 0
    assert _value(_load(f"{key}=1"), key) == 1


def test_two_evaluation_pairs_are_enough():
    """check_eval_pairs: an interval needs two deal pairs or more, so two are accepted."""
    assert _load("eval.pairs=2").eval.pairs == 2


# ------------------------------------------------------------------------------------------ choices
@pytest.mark.parametrize("key, value", [("run.vec_env", "threads"), ("env.illegal", "ignore"),
                                        ("env.phase2", "oracle"), ("net.activation", "gelu"),
                                        ("ppo.lr_schedule", "cosine"), ("env.rules", "bavarian")])
def test_a_value_outside_the_documented_choices_is_refused_naming_its_key(key, value):
    assert f"config key '{key}' must be one of" in _refused([f"{key}={value}"])


@pytest.mark.parametrize("key, value", [("run.vec_env", "subproc"), ("env.illegal", "renonce"),
                                        ("env.phase2", "solver"), ("env.phase2", "endgame"),
                                        ("net.activation", "relu"), ("ppo.lr_schedule", "linear"),
                                        ("env.rules", "paderborn"), ("env.rules", "scharf")])
def test_every_documented_choice_is_accepted(key, value):
    assert _value(_load(f"{key}={value}"), key) == value


# ------------------------------------------------------------------------------------------ types, named by key
@pytest.mark.parametrize("override, message", [
    ("net.hidden=[64, wide]", "config key 'net.hidden[1]' must be an integer"),
    ("eval.opponents=heuristic", "config key 'eval.opponents' must be a list of text"),
    ("eval.opponents=[random, 3]", "config key 'eval.opponents[1]' must be text"),
    ("pool.baselines=3", "config key 'pool.baselines' must be a mapping of text to a number"),
    ("pool.baselines=[random, greedy]", "config key 'pool.baselines' must be a mapping of text to a number"),
    ("pool.baselines.greedy=lots", "config key 'pool.baselines.greedy' must be a finite number"),
    ("run.name=5", "config key 'run.name' must be text"),
    ("run.init_model=5", "config key 'run.init_model' must be text"),
    ("ppo.target_kl=[0.1]", "config key 'ppo.target_kl' must be a finite number"),
])
def test_a_value_of_the_wrong_type_is_refused_naming_its_dotted_key(override, message):
    assert message in _refused([override])


@pytest.mark.parametrize("key", ["ppo.learning_rate", "ppo.target_kl", "pool.baselines.greedy",
                                 "imitation.validation_share"])
def test_an_integer_too_large_for_a_number_is_refused_naming_its_key(key):
    """A 400-digit integer where a number is expected was an OverflowError traceback, not an error naming the key."""
    assert f"config key '{key}' must be a finite number" in _refused([f"{key}=1{'0' * 400}"])


def test_integers_are_accepted_where_numbers_are_expected_and_held_as_numbers():
    config = _load("ppo.gamma=1", "ppo.learning_rate=1", "pool.baselines.greedy=2", "ppo.target_kl=1")
    assert (config.ppo.gamma, config.ppo.learning_rate, config.pool.baselines["greedy"], config.ppo.target_kl) == (
        1.0, 1.0, 2.0, 1.0)
    for value in (config.ppo.gamma, config.ppo.learning_rate, config.pool.baselines["greedy"], config.ppo.target_kl):
        assert type(value) is float
    assert "gamma: 1.0" in config.to_yaml()


def test_null_is_accepted_only_where_the_docstring_says_so():
    config = _load("run.init_model=null", "ppo.target_kl=null")
    assert config.run.init_model is None and config.ppo.target_kl is None
    assert "config key 'run.name' must be text" in _refused(["run.name=null"])


# ------------------------------------------------------------------------------------------ checks across keys
@pytest.mark.parametrize("hidden", ["[0]", "[64, 0]", "[64, -3]"])
def test_a_layer_width_below_one_is_refused(hidden):
    assert "config key 'net.hidden' must list positive layer widths" in _refused([f"net.hidden={hidden}"])


def test_the_batch_may_fill_the_rollout_of_every_environment_but_not_exceed_it():
    """The rollout is ppo.n_steps * run.n_envs = 64 * 2: a batch of 128 fits, 129 does not."""
    assert _load("ppo.batch_size=100").ppo.batch_size == 100
    assert _load("ppo.batch_size=128").ppo.batch_size == 128
    message = _refused(["ppo.batch_size=129"])
    assert "config key 'ppo.batch_size' (129) exceeds the rollout size ppo.n_steps * run.n_envs = 128" in message


@pytest.mark.parametrize("name", ["a/b", ".", "..", "''", '"a\\\\b"', '"a\\0b"'])
def test_a_run_name_that_is_not_a_plain_folder_name_is_refused(name):
    assert "config key 'run.name' must be a plain folder name" in _refused([f"run.name={name}"])


def test_a_pool_of_snapshots_only_is_refused_and_baselines_only_accepted():
    """At the start the pool has no snapshot: it needs a baseline of positive weight; no snapshots is fine."""
    zero = ["pool.baselines={random: 0, greedy: 0}"]
    assert "config key 'pool.baselines' needs a positive weight" in _refused(zero)
    assert "the opponent pool is empty" in _refused(zero + ["pool.snapshot_weight=0"])
    assert _load("pool.snapshot_weight=0").pool.snapshot_weight == 0
    assert "config key 'pool.baselines.greedy' must be a weight of zero or more" in _refused(
        ["pool.baselines.greedy=-0.5"])


def test_an_empty_opponent_list_is_refused():
    assert "config key 'eval.opponents' must list at least one agent spec" in _refused(["eval.opponents=[]"])


def test_a_misspelled_teacher_is_named_even_without_imitation():
    assert "config key 'imitation.teacher'" in _refused(["imitation.deals=0", "imitation.teacher=heuristik"])


def test_the_two_player_rules_let_a_search_play_the_endgame_and_imitation_run():
    config = _load("env.phase2=solver", "imitation.deals=1")
    assert (config.env.phase2, config.imitation.deals) == ("solver", 1)


def test_the_three_player_rules_refuse_even_one_imitation_deal():
    three = ROOT / "configs" / "ppo_three_smoke.yaml"
    assert "config key 'imitation.deals' must be 0 with the three-player rules" in _refused(["imitation.deals=1"],
                                                                                            three)


# ------------------------------------------------------------------------------------------ overrides
def test_an_override_of_one_baseline_keeps_the_other_default_weights(tmp_path):
    """``--set pool.baselines.heuristic=0.2`` (docs/training.md) changes one weight, in the file's mapping or else
    in the default one."""
    path = tmp_path / "config.yaml"
    path.write_text("run: {name: a}\n")
    config = config_module.load_config(path, ["pool.baselines.greedy=0.3"])
    assert config.pool.baselines == {"random": 0.1, "greedy": 0.3, "heuristic": 0.2}
    assert _load("pool.baselines.heuristic=0.2").pool.baselines == {"random": 1.0, "greedy": 1.0, "heuristic": 0.2}


def test_overrides_return_a_new_mapping_and_leave_the_given_one_alone():
    values = {"run": {"name": "a"}, "pool": {"baselines": {"random": 1.0}}}
    result = config_module.apply_overrides(values, ["run.name=b", "pool.baselines.greedy=1", "ppo.n_steps=32"])
    assert values == {"run": {"name": "a"}, "pool": {"baselines": {"random": 1.0}}}
    assert result == {"run": {"name": "b"}, "pool": {"baselines": {"random": 1.0, "greedy": 1}},
                      "ppo": {"n_steps": 32}}


def test_an_override_into_a_section_that_is_no_mapping_is_refused_naming_it(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("run: {name: a}\nppo: 3\n")
    assert "config key 'ppo' must be a mapping of fields" in _refused(["ppo.n_steps=64"], path)


def test_an_override_of_a_mapping_entry_replaces_a_file_value_that_is_no_mapping(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("run: {name: a}\npool: {baselines: 3}\n")
    assert config_module.load_config(path, ["pool.baselines.greedy=1"]).pool.baselines == {"greedy": 1.0}


def test_spaces_around_an_override_key_are_ignored():
    assert _load(" ppo.n_steps =32").ppo.n_steps == 32



@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_override_value_is_the_empty_string_and_null_is_none(text):
    """docs/training.md "Config": ``--set key=`` (or only spaces) gives ``""``, which an optional path treats as
    unset; YAML's ``null`` gives none."""
    assert _load(f"run.init_model={text}").run.init_model == ""
    assert _load("run.init_model=null").run.init_model is None
    assert "must be a plain folder name, got ''" in _refused([f"run.name={text}"])

# ------------------------------------------------------------------------------------------ describe
def test_describe_gives_every_field_one_line_of_type_and_value_and_one_of_its_docstring():
    text = config_module.describe_config()
    lines = text.split("\n")
    default = config_module.TrainConfig()
    sections = [getattr(default, item.name) for item in dataclasses.fields(default)]
    fields = sum(len(dataclasses.fields(section)) for section in sections)
    assert len(lines) == len(sections) + 2 * fields
    assert "  init_model: None  (text or null)" in lines
    assert "  target_kl: None  (a number or null)" in lines
    assert "  progress_bar: True  (true or false)" in lines
    assert "  hidden: [256, 256]  (a list of an integer)" in lines
    assert "  baselines: {'random': 0.1, 'greedy': 0.2, 'heuristic': 0.2}  (a mapping of text to a number)" in lines
    doc = lines[lines.index("  init_model: None  (text or null)") + 1]
    assert doc.startswith("      Start from the policy") and doc.endswith("null: random initialisation.")
    assert "  " not in doc.strip()


def test_a_missing_model_file_of_an_opponent_is_refused_naming_its_key(tmp_path):
    """A ``ppo:path=`` spec whose file is missing was a FileNotFoundError that did not name the config key."""
    missing = tmp_path / "missing.zip"
    message = _refused([f"eval.opponents=['ppo:path={missing}']"])
    assert "config key 'eval.opponents'" in message and "not found" in message


def test_describe_reads_the_sections_of_the_config_it_is_given():
    """describe_config(config): the root is the given config's own dataclass (as distill's config is described)."""

    @dataclasses.dataclass
    class NetOnly:
        net: config_module.NetConfig = dataclasses.field(default_factory=lambda: config_module.NetConfig([8]))

    lines = config_module.describe_config(NetOnly()).split("\n")
    assert lines[:2] == ["net:", "  hidden: [8]  (a list of an integer)"] and len(lines) == 5


def _load_training_config(command: str, override: str):
    """The config of ``command`` (``ppo``: ``sixtysix train``, ``vector_ppo``, ``distill``) with one ``--set``
    override, loaded from the defaults (``ppo``: the smoke config)."""
    if command == "ppo":
        return _load(override)
    if command == "vector_ppo":
        from train.vector_ppo import load_args

        return load_args(None, [override])
    from train.distill import load_distill_config

    return load_distill_config(None, [override])


@pytest.mark.parametrize("command, key", [("vector_ppo", "run_name"), ("distill", "run.name")])
@pytest.mark.parametrize("name", ["a/b", "..", '"a\\\\b"', '"a\\0b"'])
def test_the_other_training_configs_refuse_a_run_name_that_is_not_one_folder(command, key, name):
    """``train.vector_ppo`` (``run_name``) and ``train.distill`` (``run.name``) check the run's folder name as the
    PPO config does (one check, ``train.config.check_run_name``)."""
    with pytest.raises(ValueError, match=f"config key '{key}' must be a plain folder name"):
        _load_training_config(command, f"{key}={name}")


@pytest.mark.parametrize("command, key", [("ppo", "eval.opponents"), ("vector_ppo", "eval_opponent"),
                                          ("distill", "eval.opponents")])
def test_every_training_config_names_the_key_of_an_agent_whose_model_file_is_missing(command, key, tmp_path):
    """One check (``train.config.check_agent_spec``) builds the agents of all three configs: a ``ppo:path=`` model
    that is not there is a ValueError naming the key, not a bare FileNotFoundError."""
    spec = f"'ppo:path={tmp_path / 'missing.zip'}'"
    value = spec if command == "vector_ppo" else f"[{spec}]"  # one opponent there, a list of them in the others
    with pytest.raises(ValueError, match=f"config key '{key}': .*not found"):
        _load_training_config(command, f"{key}={value}")
