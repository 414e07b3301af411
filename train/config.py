"""The training configuration: one YAML file, checked against a dataclass schema (CleanRL style, one docstring per field).

A config file holds the sections below (every field optional; missing fields keep their defaults)::

    run:        name, out_dir, seed, total_steps, n_envs, vec_env, torch_threads, progress_bar
    env:        rules (preset), illegal, phase2
    net:        hidden, activation
    ppo:        learning_rate, lr_schedule, n_steps, batch_size, n_epochs, gamma, gae_lambda, clip_range, ...
    pool:       baselines, snapshot_weight, snapshot_every, max_snapshots, snapshot_deterministic, ...
    eval:       every, pairs, opponents, seed
    imitation:  deals, teacher, epochs, batch_size, learning_rate, value_coef, validation_share, workers, seed
    checkpoint: every, keep

``sixtysix train --config FILE --set ppo.learning_rate=1e-4 --set net.hidden=[128,128]`` overrides any field by
its dotted key (the value is read as YAML). Anything wrong (an unknown key, a value of the wrong type, a value out
of range) raises ``ValueError`` naming the dotted key. ``describe_config()`` lists every field with its docstring.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

import yaml

from sixtysix_env.rules import ALL_PRESET_NAMES, Rules
from sixtysix_env.schema import finite_number


@dataclass
class RunConfig:
    name: str = "ppo_selfplay"
    """Run name: the run directory is ``out_dir/name``."""
    out_dir: str = "runs"
    """Folder holding run directories (relative to the working directory)."""
    seed: int = 0
    """Master seed: network initialisation, PPO sampling, training deals, opponent draws."""
    total_steps: int = 5_000_000
    """Learner decisions (environment steps summed over all environments) to train for."""
    n_envs: int = 2
    """Parallel environments (one process each with ``vec_env: subproc``)."""
    vec_env: str = "subproc"
    """``subproc`` (one process per environment) or ``dummy`` (all in the trainer's process)."""
    torch_threads: int = 1
    """Threads torch uses in the trainer for the PPO updates (the environments run in their own processes)."""
    progress_bar: bool = True
    """Show a progress bar on the console (tqdm)."""
    init_model: Optional[str] = None
    """Start from the policy and value weights of this model zip (a run's final.zip or checkpoint with the same
    net and rules), e.g. to fine-tune against another pool; null: random initialisation."""


@dataclass
class EnvConfig:
    rules: str = "standard"
    """Rules preset the policy is trained for (docs/rules.md R19/R20): standard, paderborn, scharf or three (the
    three-player game, R21)."""
    illegal: str = "raise"
    """What an illegal learner action does: ``raise`` (a bug: actions are masked) or ``renonce`` (R8: -3; with
    three players the deal ends as a forfeit, -1)."""
    phase2: str = "policy"
    """Who plays the learner's endgame: ``policy`` (the network learns every decision), ``solver`` (once R8
    applies, talon closed or exhausted, the ``heuristic`` agent's exact solver plays) or ``endgame`` (the same from
    the talon's last trick on, which the heuristic searches exactly into phase 2) — in training, in the evaluations
    and, via the model's metadata, whenever the model plays as ``ppo``; the network learns the rest."""


@dataclass
class NetConfig:
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer widths of the policy and of the value network (separate networks of the same shape)."""
    activation: str = "tanh"
    """Hidden activation: ``tanh`` or ``relu``."""


@dataclass
class PpoConfig:
    learning_rate: float = 3e-4
    """Adam step size (at the start, with ``lr_schedule: linear``)."""
    lr_schedule: str = "constant"
    """``constant`` or ``linear`` (decays to 0 at ``run.total_steps``)."""
    n_steps: int = 2048
    """Steps collected per environment between updates (rollout length)."""
    batch_size: int = 512
    """Minibatch size of the PPO update."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 1.0
    """Discount factor: 1, a deal is short and only its final game points count."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO ratio clipping."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    max_grad_norm: float = 0.5
    """Gradient norm clipping."""
    target_kl: Optional[float] = None
    """Stop an update's epochs early when the approximate KL exceeds this (null: never)."""
    normalize_advantage: bool = True
    """Normalize advantages per minibatch."""


@dataclass
class PoolConfig:
    baselines: dict[str, float] = field(default_factory=lambda: {"random": 0.1, "greedy": 0.2, "heuristic": 0.2})
    """Baseline opponents (agent spec -> draw weight)."""
    snapshot_weight: float = 0.5
    """Draw weight of the snapshot pool as a whole (shared uniformly by its snapshots; 0 before the first one)."""
    snapshot_every: int = 200_000
    """Steps between snapshots of the learner added to the pool."""
    max_snapshots: int = 20
    """Pool size: the oldest snapshot leaves when a new one arrives beyond this."""
    snapshot_deterministic: bool = False
    """Snapshot opponents play their policy's most likely action (true) or sample from it (false)."""
    latest_snapshot_share: float = 0.5
    """Share of the snapshot weight given to the newest snapshot (the rest is spread over all snapshots)."""


@dataclass
class EvalConfig:
    every: int = 250_000
    """Steps between evaluations (0: only at the end)."""
    pairs: int = 200
    """Duplicate deal pairs per opponent per evaluation (the same fixed deals every time)."""
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "heuristic"])
    """Agent specs evaluated against (TensorBoard tags ``eval/<spec>/margin``)."""
    seed: int = 20_241_123
    """Master seed of the evaluation deals (eval.deals.generate_deals), separate from the training deals."""


@dataclass
class ImitationConfig:
    deals: int = 0
    """Deals of the teacher playing itself whose decisions the network imitates before PPO starts (behaviour
    cloning, as AlphaStar and DouZero-style pipelines warm-start); 0: no imitation, PPO starts from scratch."""
    teacher: str = "heuristic"
    """Agent spec of the teacher (any agent of the registry)."""
    epochs: int = 8
    """Passes over the teacher's decisions."""
    batch_size: int = 1024
    """Minibatch size of the imitation updates."""
    learning_rate: float = 1e-3
    """Adam step size of the imitation updates."""
    value_coef: float = 0.5
    """Weight of the value head's loss (regressing the deal's final game points from the decider's side)."""
    validation_share: float = 0.05
    """Share of the decisions held out to report the imitation accuracy."""
    workers: int = 1
    """Processes that play the teacher's deals."""
    seed: int = 7_070_707
    """Master seed of the teacher's deals (distinct from the evaluation deals)."""


@dataclass
class CheckpointConfig:
    every: int = 100_000
    """Steps between checkpoints (model + optimizer, opponent pool, counters and random states)."""
    keep: int = 2
    """Checkpoints kept on disk (older ones are deleted)."""


@dataclass
class TrainConfig:
    run: RunConfig = field(default_factory=RunConfig)
    """Run bookkeeping: name, seed, length, environments."""
    env: EnvConfig = field(default_factory=EnvConfig)
    """The game the learner plays."""
    net: NetConfig = field(default_factory=NetConfig)
    """Network shape."""
    ppo: PpoConfig = field(default_factory=PpoConfig)
    """MaskablePPO hyperparameters."""
    pool: PoolConfig = field(default_factory=PoolConfig)
    """The self-play opponent pool."""
    eval: EvalConfig = field(default_factory=EvalConfig)
    """Periodic duplicate-deal evaluation."""
    imitation: ImitationConfig = field(default_factory=ImitationConfig)
    """Optional behaviour-cloning warm start from a teacher agent."""
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    """Checkpoint schedule."""

    # ------------------------------------------------------------------ conversions
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None)

    @property
    def run_dir(self) -> Path:
        return Path(self.run.out_dir) / self.run.name


# ---------------------------------------------------------------------- value checks beyond the type
_CHOICES = {
    "run.vec_env": ("subproc", "dummy"),
    "env.rules": ALL_PRESET_NAMES,
    "env.illegal": ("raise", "renonce"),
    "env.phase2": ("policy", "solver", "endgame"),
    "net.activation": ("tanh", "relu"),
    "ppo.lr_schedule": ("constant", "linear"),
}
_POSITIVE = {
    "run.total_steps", "run.n_envs", "run.torch_threads", "ppo.learning_rate", "ppo.n_steps", "ppo.batch_size",
    "ppo.n_epochs", "ppo.clip_range", "ppo.max_grad_norm", "pool.snapshot_every", "pool.max_snapshots",
    "eval.pairs", "checkpoint.every", "checkpoint.keep", "imitation.epochs", "imitation.batch_size",
    "imitation.learning_rate", "imitation.workers",
}
_NON_NEGATIVE = {"imitation.deals", "imitation.value_coef", "ppo.ent_coef", "ppo.vf_coef", "pool.snapshot_weight", "eval.every", "ppo.gae_lambda", "ppo.gamma"}
_UNIT_INTERVAL = {"ppo.gamma", "ppo.gae_lambda", "pool.latest_snapshot_share", "imitation.validation_share"}
# Shares that must leave something on the other side: a validation share of 1 would hold out every deal (the
# imitation command line refuses it, as distill's config refuses 0.5 and more).
_BELOW_ONE = {"imitation.validation_share"}


def _type_name(kind: Any) -> str:
    origin = typing.get_origin(kind)
    if origin is typing.Union:
        inner = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        return f"{_type_name(inner[0])} or null"
    if origin is list:
        return f"a list of {_type_name(typing.get_args(kind)[0])}"
    if origin is dict:
        key, value = typing.get_args(kind)
        return f"a mapping of {_type_name(key)} to {_type_name(value)}"
    return {int: "an integer", float: "a number", bool: "true or false", str: "text"}.get(kind, str(kind))


def _convert(value: Any, kind: Any, key: str) -> Any:
    """Check ``value`` against the annotated type ``kind`` (ints are accepted where numbers are expected)."""
    origin = typing.get_origin(kind)
    if origin is typing.Union:
        if value is None:
            return None
        inner = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        return _convert(value, inner[0], key)
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"config key {key!r} must be {_type_name(kind)}, got {value!r}")
        (item_kind,) = typing.get_args(kind)
        return [_convert(item, item_kind, f"{key}[{index}]") for index, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ValueError(f"config key {key!r} must be {_type_name(kind)}, got {value!r}")
        key_kind, value_kind = typing.get_args(kind)
        return {
            _convert(item_key, key_kind, f"{key} key"): _convert(item, value_kind, f"{key}.{item_key}")
            for item_key, item in value.items()
        }
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"config key {key!r} must be true or false, got {value!r}")
        return value
    if kind is int:
        if type(value) is not int:  # exact: 2.0e6 is refused (write 2000000 or 2_000_000)
            raise ValueError(f"config key {key!r} must be an integer (such as 2000000 or 2_000_000), got {value!r}")
        return value
    if kind is float:
        if isinstance(value, str):
            # YAML 1.1 reads 1e-4 (no dot) as text; take it as the number it obviously is.
            try:
                value = float(value)
            except ValueError:
                pass
        if not finite_number(value):  # also refuses an integer beyond any float (1 and 400 zeros)
            raise ValueError(f"config key {key!r} must be a finite number, got {value!r}")
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise ValueError(f"config key {key!r} must be text, got {value!r}")
        return value
    raise TypeError(f"unsupported config type {kind!r} for {key!r}")  # a schema bug, not a user error


def check_eval_pairs(key: str, pairs: int) -> None:
    """An evaluation's margin carries a t interval over its deal pairs: one pair gives none (an infinite half-width,
    which no run log can hold as JSON and a resume then refused), so every trainer asks for two or more."""
    if pairs < 2:
        raise ValueError(f"config key {key!r} must be at least 2 (an evaluation's 95% interval needs two deal "
                         f"pairs), got {pairs!r}")


# The seeds numpy's legacy generator (np.random.seed, which stable-baselines3's set_random_seed calls) takes.
SB3_SEED_LIMIT = 2**32


def check_seed(key: str, seed: int, limit: int = SB3_SEED_LIMIT) -> None:
    """A seed the run's libraries take: 0..limit-1. A negative or larger one passed the config and failed when the
    run seeded them, after its folder was made (and a resume failed the same way)."""
    if not 0 <= seed < limit:
        raise ValueError(f"config key {key!r} must lie in 0..{limit - 1}, got {seed!r}")


def check_run_name(key: str, name: str) -> None:
    """A run's name is one folder inside the output folder: not empty, no ``.`` or ``..``, and no separator of
    either system or NUL (no file system takes it)."""
    if not name or any(character in name for character in "/\\\0") or name in (".", ".."):
        raise ValueError(f"config key {key!r} must be a plain folder name, got {name!r}")


def _check_values(config: TrainConfig) -> None:
    for key, choices in _CHOICES.items():
        value = _get(config, key)
        if value not in choices:
            raise ValueError(f"config key {key!r} must be one of {', '.join(choices)}, got {value!r}")
    for key in _POSITIVE:
        if not _get(config, key) > 0:
            raise ValueError(f"config key {key!r} must be positive, got {_get(config, key)!r}")
    check_eval_pairs("eval.pairs", config.eval.pairs)
    for key in _NON_NEGATIVE:
        if not _get(config, key) >= 0:
            raise ValueError(f"config key {key!r} must be zero or more, got {_get(config, key)!r}")
    for key in _UNIT_INTERVAL:
        if not 0 <= _get(config, key) <= 1:
            raise ValueError(f"config key {key!r} must lie in [0, 1], got {_get(config, key)!r}")
    for key in _BELOW_ONE:
        if not _get(config, key) < 1:
            raise ValueError(f"config key {key!r} must lie in [0, 1), got {_get(config, key)!r}")
    if config.ppo.target_kl is not None and config.ppo.target_kl <= 0:
        raise ValueError(f"config key 'ppo.target_kl' must be positive or null, got {config.ppo.target_kl!r}")
    if not config.net.hidden or any(width < 1 for width in config.net.hidden):
        raise ValueError(f"config key 'net.hidden' must list positive layer widths, got {config.net.hidden!r}")
    rollout = config.ppo.n_steps * config.run.n_envs
    if config.ppo.batch_size > rollout:
        raise ValueError(
            f"config key 'ppo.batch_size' ({config.ppo.batch_size}) exceeds the rollout size "
            f"ppo.n_steps * run.n_envs = {rollout}"
        )
    # A minibatch of one row has no standard deviation to normalise its advantages by: the update fills the network
    # with NaN (a batch size of 1, or a rollout that leaves one row over).
    if config.ppo.normalize_advantage and (config.ppo.batch_size < 2 or rollout % config.ppo.batch_size == 1):
        raise ValueError(
            f"config key 'ppo.batch_size' ({config.ppo.batch_size}) leaves a minibatch of one row of the rollout "
            f"ppo.n_steps * run.n_envs = {rollout}, whose advantages cannot be normalised (ppo.normalize_advantage); "
            "choose a batch size of 2 or more that does not leave one row over"
        )
    check_seed("run.seed", config.run.seed)
    check_seed("imitation.seed", config.imitation.seed)
    check_run_name("run.name", config.run.name)
    weights = config.pool.baselines
    for spec, weight in weights.items():
        if weight < 0:
            raise ValueError(f"config key 'pool.baselines.{spec}' must be a weight of zero or more, got {weight!r}")
    if sum(weights.values()) <= 0 and config.pool.snapshot_weight <= 0:
        raise ValueError("config keys 'pool.baselines' and 'pool.snapshot_weight': the opponent pool is empty")
    if sum(weights.values()) <= 0:
        raise ValueError("config key 'pool.baselines' needs a positive weight (the pool has no snapshot at the start)")
    if not config.eval.opponents:
        raise ValueError("config key 'eval.opponents' must list at least one agent spec")
    if Rules.preset(config.env.rules).players == 3:  # R21: what the three-player trainer does not do
        if config.env.phase2 != "policy":
            raise ValueError(f"config key 'env.phase2' must stay 'policy' with the three-player rules (R21): no "
                             f"search plays their endgame, got {config.env.phase2!r}")
        if config.imitation.deals > 0:
            raise ValueError("config key 'imitation.deals' must be 0 with the three-player rules (R21): imitation "
                             "records two-player decisions")
    _check_agent_specs(config)


def check_agent_spec(key: str, spec: str, rules: Rules) -> None:
    """Build the agent ``spec`` once and start a deal of ``rules``, so a misspelled spec, a model file that cannot be
    read (``ppo:path=``) or an agent that cannot play the rules fails now, naming ``key``, not an hour into a run."""
    from agents.registry import agent_for_rules

    try:
        agent_for_rules(spec, rules)
    except (ValueError, OSError) as error:  # OSError: e.g. a ppo:path= model file that is missing
        raise ValueError(f"config key {key!r}: {error}") from None


def _check_agent_specs(config: TrainConfig) -> None:
    """Every agent the run plays or learns from, checked by :func:`check_agent_spec`."""
    rules = Rules.preset(config.env.rules)
    for section, specs in (("pool.baselines", list(config.pool.baselines)), ("eval.opponents", config.eval.opponents),
                           ("imitation.teacher", [config.imitation.teacher])):
        for spec in specs:
            check_agent_spec(section, spec, rules)


# ---------------------------------------------------------------------- building and overriding
def _section_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _get(config: TrainConfig, key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        value = getattr(value, part)
    return value


def sections_from_dict(root: type, values: Any, where: str = "config") -> Any:
    """Build a config of dataclass ``root`` (one field per section, each a dataclass of fields) from nested mappings
    (as read from YAML), every key and type checked; the value checks beyond the type are the caller's."""
    if values is None:
        values = {}
    section_types = _section_types(root)
    if not isinstance(values, Mapping):
        raise ValueError(f"{where} must be a mapping of sections ({', '.join(section_types)}), got {values!r}")
    config = root()
    for section_name, section_values in values.items():
        if section_name not in section_types:
            raise ValueError(f"unknown config key {section_name!r}; known sections: {', '.join(section_types)}")
        if section_values is None:  # "run:" with nothing under it: a slip, never "use the defaults"
            raise ValueError(f"config key {section_name!r} is empty (null): give its fields or leave the section out")
        if not isinstance(section_values, Mapping):
            raise ValueError(f"config key {section_name!r} must be a mapping of fields, got {section_values!r}")
        section_cls = section_types[section_name]
        field_types = _section_types(section_cls)
        current = getattr(config, section_name)
        for field_name, value in section_values.items():
            key = f"{section_name}.{field_name}"
            if field_name not in field_types:
                raise ValueError(f"unknown config key {key!r}; known keys in {section_name!r}: {', '.join(field_types)}")
            setattr(current, field_name, _convert(value, field_types[field_name], key))
    return config


def config_from_dict(values: Any, where: str = "config") -> TrainConfig:
    """Build and check a :class:`TrainConfig` from nested mappings (as read from YAML)."""
    config = sections_from_dict(TrainConfig, values, where)
    _check_values(config)
    return config


def apply_overrides(values: dict[str, Any], overrides: list[str], root: type | None = None) -> dict[str, Any]:
    """Apply ``section.field=value`` overrides (values read as YAML) to nested config mappings (a new dict) of a
    config of dataclass ``root`` (default :class:`TrainConfig`)."""
    root = TrainConfig if root is None else root
    result = {name: dict(section) if isinstance(section, Mapping) else section for name, section in values.items()}
    for override in overrides:
        key, sep, text = override.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"malformed override {override!r}: expected section.field=value")
        parts = key.split(".")
        if len(parts) < 2:
            raise ValueError(f"malformed override key {key!r}: expected section.field (e.g. ppo.learning_rate)")
        try:
            value = strict_yaml_load(text) if text.strip() else ""
        except yaml.YAMLError as error:
            raise ValueError(f"override {key!r}: value {text!r} is not valid YAML ({error})") from None
        section = result.setdefault(parts[0], {})  # an override may add a section the file leaves out
        if section is None:  # but "run:" with nothing under it is refused, as without the override
            raise ValueError(f"config key {parts[0]!r} is empty (null): give its fields or leave the section out")
        if not isinstance(section, dict):
            raise ValueError(f"config key {parts[0]!r} must be a mapping of fields")
        target = section
        for part in parts[1:-1]:  # e.g. pool.baselines.greedy=0.3
            inner = target.get(part)
            if inner is None and part in _default_mapping_fields(root, parts[0]):
                inner = dict(getattr(getattr(root(), parts[0]), part))
            if not isinstance(inner, dict):
                inner = {}
            target[part] = inner = dict(inner)
            target = inner
        target[parts[-1]] = value
    return result


def _default_mapping_fields(root: type, section: str) -> set[str]:
    section_cls = _section_types(root).get(section)
    if section_cls is None:
        return set()
    return {name for name, kind in _section_types(section_cls).items() if typing.get_origin(kind) is dict}


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error (PyYAML keeps the last)."""


def _construct_unique_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: set = set()
    for key_node, _value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:
            continue  # unhashable: construct_mapping reports it
        if duplicate:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def strict_yaml_load(text: str) -> Any:
    """YAML text -> Python values with :class:`_StrictLoader` (duplicate keys refused); YAML nested too deeply for
    the parser (it recurses per level) is a ``yaml.YAMLError`` like any other bad YAML, not a ``RecursionError``."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise yaml.YAMLError("nested too deeply to read") from None


def read_yaml_file(path: str | Path) -> tuple[Any, str]:
    """A YAML config file's values (duplicate keys refused) and how errors name the file; a missing file, a
    directory, a file that cannot be read, one that is not UTF-8 text or bad YAML raises naming it."""
    where = f"config file {str(path)!r}"
    if Path(path).is_dir():
        raise ValueError(f"{where} is a directory, not a YAML file")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"config file not found: {path}") from None
    except OSError as error:  # e.g. no permission to read it
        raise ValueError(f"{where} cannot be read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{where} is not UTF-8 text (byte 0x{error.object[error.start]:02x} at position "
                         f"{error.start}): a config is a YAML text file") from None
    try:
        return strict_yaml_load(text), where
    except yaml.YAMLError as error:
        raise ValueError(f"{where} is not valid YAML: {error}") from None


def read_config_values(path: str | Path | None, overrides: list[str] | None = None, root: type | None = None) -> tuple[Any, str]:
    """The nested mappings of a YAML config file (``None``: all defaults) with ``--set`` overrides applied, and how
    errors name the file. The file must name its ``run`` section, so a default run never starts by accident."""
    root = TrainConfig if root is None else root
    names = ", ".join(_section_types(root))
    values: Any = {}
    where = "config"
    if path is not None:
        values, where = read_yaml_file(path)
        if values is None:
            raise ValueError(f"{where} is empty: a config names at least its run section (run.name, ...; see the "
                             "files in configs/), so a default run never starts by accident")
        if not isinstance(values, Mapping):
            raise ValueError(f"{where} must hold a mapping of sections ({names})")
        if "run" not in values:
            raise ValueError(f"{where} has no 'run' section: a config names its run (run.name, ...), "
                             "so a default run never starts by accident")
    return apply_overrides(dict(values), list(overrides or []), root), where


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    """Read a YAML config (``None``: all defaults) and apply ``--set`` overrides."""
    values, where = read_config_values(path, overrides)
    return config_from_dict(values, where)


# ---------------------------------------------------------------------- documentation
def field_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings (the string literal right after each field) of a dataclass, read from its source."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for statement, following in zip(body, body[1:]):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def describe_config(config: Any = None, root: type | None = None) -> str:
    """Every config key with its type, value and docstring (``sixtysix train --describe``) of a config of dataclass
    ``root`` (default :class:`TrainConfig`)."""
    root = type(config) if config is not None else (TrainConfig if root is None else root)
    config = config if config is not None else root()
    lines = []
    for section_name, section_cls in _section_types(root).items():
        lines.append(f"{section_name}:")
        docs = field_docs(section_cls)
        for field_name, kind in _section_types(section_cls).items():
            value = getattr(getattr(config, section_name), field_name)
            lines.append(f"  {field_name}: {value!r}  ({_type_name(kind)})")
            lines.append(f"      {docs.get(field_name, '')}")
    return "\n".join(lines)


__all__ = [
    "CheckpointConfig", "EnvConfig", "EvalConfig", "ImitationConfig", "NetConfig", "PoolConfig", "PpoConfig", "RunConfig", "TrainConfig",
    "apply_overrides", "config_from_dict", "describe_config", "field_docs", "load_config", "read_config_values",
    "read_yaml_file",
    "sections_from_dict",
]
