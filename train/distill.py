"""Distil a search agent into a network that plays every decision without search (expert iteration, DAgger).

The search agents are strong but slow (``expert``: up to 0.1 s per decision); a network answers in well under a
millisecond. The pipeline, one command per step, all from one config (``configs/distill.yaml``)::

    sixtysix distill label --config configs/distill.yaml    # the teacher labels positions (parallel, resumable)
    sixtysix distill fit   --config configs/distill.yaml    # fit the network to the labels; learning curve
    sixtysix distill run   --config configs/distill.yaml    # every round: label, then fit on all rounds' labels

1. **label**: on seeded deals the behaviour policy plays both seats; at every decision with a choice, including
   phase 2 (R8), the teacher (a ``pimc`` spec by default: the ``expert`` search with a fixed number of worlds
   instead of a clock, so the labels do not depend on the machine's speed) is asked for its action and its mean
   game points of every legal action over the worlds it sampled (``PimcAgent.last_scores``). One row per decision:
   the decider's observation (docs/observation.md), the legal actions, the teacher's action and values, the deal's
   final game points from the decider's side (R16), whether R8 applied. In round 0 the teacher itself is the
   behaviour policy; in round ``r >= 1`` the network of round ``r - 1`` plays and the teacher only labels (DAgger:
   the network then learns the positions its own play reaches). Chunks of deals run in worker processes or as
   Ray tasks (``run.backend: ray``); each chunk is written as its own file (atomically), so an interrupted run
   resumes with the chunks that are missing, and the same seeds give the same labels on every backend.
2. **fit**: the policy head is fitted by cross-entropy to a soft target over the legal actions,
   ``choice_weight * onehot(teacher's action) + (1 - choice_weight) * softmax(values / temperature)``: the
   action carries the teacher's prior and margins (``expert`` keeps the heuristic's choice unless the worlds
   clearly disagree), the values say how much worse the other actions are. The value head regresses the deal's
   final game points. The network has the shape of sb3-contrib's ``MaskableActorCriticPolicy`` MLP, so the model
   is a normal MaskablePPO zip (``MaskablePPO.load``) and plays as ``ppo:path=RUN/model.zip`` (network on every
   decision: its metadata says ``phase2: policy``; ``ppo:path=...,phase2=solver`` adds the exact endgame search).
   Every ``eval.every`` epochs the network plays duplicate deals against ``eval.opponents``: the learning curve.
   With ``fit.target: improve`` (a network given by ``fit.init_model``) the target is instead a policy
   improvement step on the starting network: ``pi_start(a) * exp(value(a) / temperature)``, normalised over the
   actions the teacher valued, so the network keeps its own choices unless the teacher's values clearly favour
   another (as in advantage-weighted regression or MPO's E-step), rather than copying the teacher's.

Run directory ``run.out_dir/run.name``: ``config.yaml``, ``round_<r>/chunk_<first>.npz`` (labels),
``round_<r>/model.zip`` (the network fitted after round ``r``), ``model.zip`` (the latest), ``tb/`` (TensorBoard:
``losses/...``, ``charts/...``, ``eval/<opponent>/margin``), ``scalars.csv``, ``eval.jsonl``, ``summary.json``,
``learning_curve.png``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

import numpy as np
import yaml

from agents.ppo import ActorNetwork, InfosetEncoder, PolicyAgent, add_metadata_to_zip, model_metadata, reads_history
from agents.registry import make_agent
from agents.rule_based import is_phase2
from agents.suit import in_late_window
from eval.deals import derive_seed, generate_deals
from eval.ray_backend import BACKENDS
from eval.report import png_bytes
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.fileio import (
    nonfinite_as_null, remove_stale_temp_files, write_bytes_atomic, write_json_atomic, write_text_atomic,
)
from sixtysix_env.game import Game
from sixtysix_env.infoset import InformationSet
from sixtysix_env.observation import EXTENDED_OBSERVATION_SIZE, OBSERVATION_SIZE
from sixtysix_env.rules import ALL_PRESET_NAMES, Rules
from sixtysix_env.schema import loads_json, read_json_file

from .config import (NetConfig, check_agent_spec, check_eval_pairs, check_run_name, check_seed, describe_config,
                     read_config_values, sections_from_dict, strict_yaml_load)
from .cpu import denormals_flushed
from .recorded import DecisionTable, PackedObservations, held_out_split, run_deal_chunks, two_player_rules
from .runlog import ScalarsCsv, truncate_log

TEACHER_BEHAVIOUR = "teacher"
FIT_TARGETS = ("teacher", "improve", "q")
# Where the labels come from: a teacher agent's search from the decider's view, or rollouts of the true deal
# (sixtysix_env/core/labels.py; compiled heuristic behaviour, no teacher agent).
LABEL_SOURCES = ("teacher", "true_world", "network")  # network: written by train/relabel.py, not labelled here
CONTINUATION_SEATS = ("both", "mover")
LABEL_HIDDEN = ("true_deal", "view")


# ====================================================================================== the config
@dataclass
class DistillRunConfig:
    name: str = "distill"
    """Run name: the run directory is ``out_dir/name``."""
    out_dir: str = "runs"
    """Folder holding run directories (relative to the working directory)."""
    seed: int = 20_261_130
    """Master seed: the labelled deals, the agents' generators, network initialisation and minibatch order
    (the last two from ``fit.seed`` when that is set)."""
    workers: int = 2
    """Processes (or Ray CPUs) that label deals."""
    backend: str = "multiprocessing"
    """``multiprocessing`` (worker processes on this machine) or ``ray`` (Ray tasks; ``pip install -e '.[ray]'``)."""
    address: Optional[str] = None
    """Ray cluster to join (``ray`` backend only); null: start a local Ray with ``workers`` CPUs."""
    device: str = "auto"
    """Torch device of the fit: ``auto`` (CUDA when present, else CPU), ``cpu`` or ``cuda``."""
    torch_threads: int = 1
    """Threads torch uses for the fit on the CPU."""
    progress_bar: bool = True
    """Show progress bars (tqdm)."""


@dataclass
class LabelConfig:
    rules: str = "standard"
    """Rules preset (docs/rules.md R19/R20)."""
    teacher: str = "pimc:samples=400,seconds=none,override_margin=0.25"
    """Agent spec of the teacher: its action at every decision, and its action values when it is a ``pimc`` or
    ``rollout`` agent."""
    behaviour: str = TEACHER_BEHAVIOUR
    """Who plays the labelled deals in round 0: ``teacher`` or an agent spec (later rounds: the last network). With
    ``source: true_world``, ``teacher`` means the compiled heuristic; an agent spec (e.g. ``suit_pair``) plays both
    seats instead, so the labels value the positions that agent reaches (a DAgger step from a given network)."""
    deals: int = 2000
    """Deals labelled per round (both seats' decisions are labelled)."""
    chunk_deals: int = 20
    """Deals per work unit (one file each; the unit of resuming and of progress)."""
    source: str = "teacher"
    """``teacher``: the teacher agent labels from the decider's view; ``true_world``: every legal action is valued by
    rollouts of the true deal (only the face-down talon reshuffled) while the compiled heuristic plays the deal in
    round 0 (or ``behaviour``, when an agent spec) and the last round's network in later rounds (``teacher``
    unused): cheap, unbiased, noisy targets for ``fit.target: q``; ``network``: the positions of the run
    ``positions_from`` valued by the q network ``teacher`` (an ensemble, to be distilled into one network), written by
    ``python -m train.relabel``, not by ``sixtysix distill label``."""
    worlds: int = 4
    """``true_world``: reorderings of the face-down talon per decision (R4), every action rolled out in each (with
    ``hidden: view``: worlds drawn from the decider's view)."""
    epsilon: float = 0.05
    """``true_world``: the share of the behaviour's decisions played at random (positions off the heuristic's path)."""
    hidden: str = "true_deal"
    """``true_world``: where the worlds come from. ``true_deal``: the deal as it lies, the face-down talon reordered;
    ``view``: drawn from the decider's view (his opponent's unknown cards redrawn uniformly too), so a label is the
    value ``expert`` computes with uniform worlds, far less noisy late in phase 1 (docs/training.md, "Session 14")."""
    talon_window: Optional[list[int]] = None
    """``[min, max]``: label only the phase-1 decisions (talon open, R7/R10) with a talon size (R4) from min to max,
    play the others unlabelled; null: every decision with a choice. With ``source: teacher`` it needs a
    ``behaviour`` agent spec (who plays the unlabelled decisions), and the teacher acts at the window's decisions
    only (a search's labels where a network chooses worst, docs/training.md "Session 30")."""
    after_closing: bool = False
    """``source: teacher`` only: label only the decisions after a closing (R10, by either player), play the others
    unlabelled; needs a ``behaviour`` agent spec (who plays them), and the teacher acts at those decisions only (a
    search's values where it plays better than the network, docs/training.md "Session 31")."""
    continuation: Optional[str] = None
    """``true_world``: the agent spec of a network that plays on from every rolled-out action, both seats, in place
    of the rollout player (a ``suit:`` or ``ppo:`` spec or alias that plays every decision itself; one step of
    policy iteration: its labels value actions under the network's play, docs/training.md "Session 18"); only a
    phase 2 after the talon's exhaustion (R8, both hands known) is then solved exactly. Needs ``hidden: true_deal``.
    null: the rollout player of ``expert``."""
    history: bool = False
    """``true_world`` only: store each observation followed by the decider's history planes (what each player led,
    ``sixtysix_env.observation.HISTORY_LAYOUT``), for suit networks fitted with them (``train.suit_network
    --history``; docs/training.md, "Session 33"); networks without them read the observation part alone."""
    continuation_seats: str = "both"
    """With ``continuation``: ``both``: the network plays both seats on (self-play, its values against itself);
    ``mover``: only the labelled decision's mover, his opponent being the compiled heuristic with the numbers of
    ``expert``'s rollout player, deciding from his own view (its values against the heuristic, a step of best
    response to it; the heuristic's own sampling draws are not shared between a position's actions), or the network
    ``continuation_opponent``."""
    continuation_opponent: Optional[str] = None
    """With ``continuation_seats: mover``: the agent spec of a network (as ``continuation``: a ``suit:`` or ``ppo:``
    spec or alias that plays every decision itself) that plays the mover's opponent on in the rollouts, greedily
    from his own view: the labels value actions against that network, e.g. a model of a search's play (``expert``
    shrinks toward its prior network, ``suit_iterated``). null: the compiled heuristic."""
    positions_from: Optional[str] = None
    """``network``: the label run whose positions the network valued (set by ``train.relabel``)."""
    opponent: Optional[str] = None
    """``true_world`` with a ``behaviour`` agent spec: the agent spec of the behaviour's opponent. The behaviour then
    plays one seat (each seat as dealer and as non-dealer in turn, deal by deal), the opponent the other, and only
    the behaviour's decisions are labelled (``epsilon`` applies to them alone): DAgger against a fixed opponent, the
    positions a network reaches in matches against it (docs/training.md, "Session 37"). null: the behaviour plays
    both seats, whose decisions are all labelled."""


@dataclass
class EndgameConfig:
    deals: int = 0
    """Extra deals of which only the phase-2 decisions (R8: from a closing or the talon's exhaustion on) are
    labelled; 0: none. The teacher solves each of its worlds exactly there (after the talon's exhaustion there is
    only one world), so these labels are exact and cheap, while the network's endgame play is what it learns
    worst from the full-deal labels alone (docs/training.md)."""
    behaviour: str = "heuristic"
    """Who plays these deals (a fast agent: every phase-1 decision is played but not labelled)."""
    teacher: str = "pimc:samples=60,seconds=none,prior=none"
    """The teacher of the phase-2 decisions."""
    chunk_deals: int = 200
    """Deals per work unit."""


@dataclass
class FitConfig:
    epochs: int = 30
    """Passes over all labelled decisions (of every round so far)."""
    batch_size: int = 512
    """Minibatch size."""
    learning_rate: float = 1e-3
    """Adam step size (decayed linearly to a tenth over the epochs)."""
    weight_decay: float = 1e-5
    """Adam's L2 weight decay."""
    choice_weight: float = 0.5
    """Share of the teacher's chosen action in the soft policy target; the rest is softmax(values / temperature)."""
    temperature: float = 0.25
    """Temperature (game points) of the softmax over the teacher's action values."""
    value_coef: float = 0.25
    """Weight of the value head's loss (squared error against the deal's final game points, R16)."""
    validation_share: float = 0.05
    """Share of the deals held out (whole deals) to report accuracy and regret on unseen positions."""
    init_model: Optional[str] = None
    """Start from this model zip's weights (same net and rules: a model of ours for other rules, another
    ``net.hidden`` or ``net.activation``, or a file that is not one, is refused when the config is read); null:
    random initialisation. The fitted model records its path and SHA-256 (``distill_init_model``)."""
    values_model: Optional[str] = None
    """``improve`` only: a model fitted with ``target: q`` whose values (its logits times the temperature it was
    fitted with) replace the labels' noisy values in the improvement step (a file that is not a q network of these
    rules is refused when the config is read); null: the labels' values. The fitted model records its path and
    SHA-256 (``distill_values_model``)."""
    seed: Optional[int] = None
    """Seed of the network's initialisation, the held-out deals and the batch order; null: ``run.seed``. Fits of
    one set of labels with different seeds are members of an ensemble (``sixtysix distill merge``)."""
    deals: Optional[list[int]] = None
    """``[first, stop]``: fit only the labels of deals ``first .. stop - 1`` of each round, of the endgame labels and
    of ``window_labels_from`` (whole chunks, named by their first deal); null: every labelled deal."""
    labels_from: Optional[str] = None
    """A run directory whose labels this run fits (its label section must equal this config's, ``label.deals``
    aside); null: this run's own labels. A run that only fits, with its own logs and model."""
    window_labels_from: Optional[str] = None
    """A run directory of true-deal labels made with a ``label.talon_window`` (e.g. ``hidden: view``): inside that
    window its labels replace this run's own (whose rows there are left out); null: this run's labels only."""
    extra_labels_from: list[str] = field(default_factory=list)
    """Further run directories (each listed once) whose labels are fitted beside this run's (the same rounds and
    ``fit.deals``; other label settings allowed, e.g. another ``label.behaviour`` or ``label.opponent``; the same
    rules and observation width): one fit on positions of several behaviours (docs/training.md, "Session 37")."""
    target: str = "teacher"
    """``teacher``: the teacher's choice mixed with the softmax of its values (``choice_weight``); ``improve``: the
    starting network's own policy reweighted by ``exp(value / temperature)`` (needs ``init_model``); ``q``: the
    action logits regress the action values, centred over the legal actions and divided by ``temperature`` (squared
    error; the greedy policy is the best action by the fitted values)."""
    regret_coef: float = 0.0
    """``q`` only: weight of the expected regret of the softmax of the logits over the valued actions (the labels'
    best value minus each action's, in units of ``temperature``), added to the squared error; 0: squared error only.
    The greedy policy reads only which action is best, and the squared error spends itself alike on every action."""


@dataclass
class DistillEvalConfig:
    every: int = 10
    """Epochs between evaluations of the network (and after the last epoch); 0: only after the last epoch."""
    pairs: int = 100
    """Duplicate deal pairs per opponent and evaluation (the same deals every time)."""
    opponents: list[str] = field(default_factory=lambda: ["heuristic"])
    """Agent specs the network is evaluated against (``eval/<spec>/margin``)."""
    seed: int = 20_241_123
    """Master seed of the evaluation deals (never used for labelling)."""


@dataclass
class IterateConfig:
    rounds: int = 1
    """Rounds of label-and-fit; round ``r >= 1`` labels the positions the network of round ``r - 1`` reaches."""
    later_deals: list[int] = field(default_factory=list)
    """Deals labelled in rounds 1, 2, ... (one number per round, each a multiple of ``label.chunk_deals``); a round
    without a number labels ``label.deals``."""


@dataclass
class DistillConfig:
    run: DistillRunConfig = field(default_factory=DistillRunConfig)
    """Run bookkeeping: name, seed, workers, backend, device."""
    label: LabelConfig = field(default_factory=LabelConfig)
    """The teacher and the labelled deals."""
    net: NetConfig = field(default_factory=lambda: NetConfig(hidden=[256, 256, 256], activation="relu"))
    """Network shape (the policy and the value network, as in MaskablePPO's MLP policy)."""
    fit: FitConfig = field(default_factory=FitConfig)
    """The supervised fit."""
    eval: DistillEvalConfig = field(default_factory=DistillEvalConfig)
    """The learning curve's duplicate-deal evaluations."""
    iterate: IterateConfig = field(default_factory=IterateConfig)
    """DAgger rounds."""
    endgame: EndgameConfig = field(default_factory=EndgameConfig)
    """Extra exact labels of phase-2 decisions, fitted together with every round's labels."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def run_dir(self) -> Path:
        return Path(self.run.out_dir) / self.run.name

    @property
    def rules(self) -> Rules:
        return Rules.preset(self.label.rules)


_POSITIVE = ("run.workers", "run.torch_threads", "label.deals", "label.chunk_deals", "fit.epochs", "fit.batch_size",
             "fit.learning_rate", "fit.temperature", "eval.pairs", "iterate.rounds", "endgame.chunk_deals",
             "label.worlds")
_NON_NEGATIVE = ("fit.weight_decay", "fit.value_coef", "fit.regret_coef", "eval.every", "endgame.deals")
_UNIT_INTERVAL = ("fit.choice_weight", "label.epsilon")


def label_settings(label: dict[str, Any] | None, where: str = "config key 'label'") -> dict[str, Any]:
    """The keys of a run's ``label`` section that decide its labels (all but ``deals``: a run may grow), with the
    defaults filled in for keys a run's saved config predates; a section that is not a mapping is a ``ValueError``
    naming ``where``."""
    if label is not None and not isinstance(label, dict):
        raise ValueError(f"{where} must be a mapping of label settings, got {label!r}")
    settings = {**dataclasses.asdict(LabelConfig()), **(label or {})}
    settings.pop("deals")
    return settings


def saved_config(run_dir: Path) -> dict[str, Any] | None:
    """The config a run directory saved (``config.yaml``) as a mapping of its sections; None when it has none. A
    file that is not UTF-8 YAML of a mapping, or whose sections are not mappings, is a ``ValueError`` naming it."""
    path = run_dir / "config.yaml"
    if not path.is_file():
        return None
    try:
        config = strict_yaml_load(path.read_text(encoding="utf-8")) or {}
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise ValueError(f"{str(path)!r} is not valid YAML: {' '.join(str(error).split())}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{str(path)!r} must hold a mapping of config sections, got {config!r}")
    for section, values in config.items():
        if values is not None and not isinstance(values, dict):
            raise ValueError(f"{str(path)!r}: config key {section!r} must be a mapping, got {values!r}")
    return config


def saved_label_settings(run_dir: Path) -> dict[str, Any] | None:
    """:func:`label_settings` of the config a run directory saved (``config.yaml``); None when it has none. A file
    that is not UTF-8 YAML of a mapping is a ``ValueError`` naming it."""
    config = saved_config(run_dir)
    if config is None:
        return None
    return label_settings(config.get("label"), f"{str(run_dir / 'config.yaml')!r}: config key 'label'")


def refuse_other_rules(key: str, run_dir: Path, settings: dict[str, Any], rules: str) -> None:
    """A ``ValueError`` naming config ``key`` when the label run ``run_dir`` (its ``settings``) labelled other
    ``rules`` than this run: labels of another rule set cannot be fitted with this run's."""
    if settings["rules"] != rules:
        raise ValueError(f"config key {key!r}: {str(run_dir)!r} labelled rules {settings['rules']!r}, this run "
                         f"{rules!r}")


def check_distill_config(config: DistillConfig) -> DistillConfig:
    """Refuse values out of range and agent specs that do not build, naming the dotted key."""
    def get(key: str) -> Any:
        section, name = key.split(".")
        return getattr(getattr(config, section), name)

    for key in _POSITIVE:
        if not get(key) > 0:
            raise ValueError(f"config key {key!r} must be positive, got {get(key)!r}")
    check_eval_pairs("eval.pairs", config.eval.pairs)
    for key in _NON_NEGATIVE:
        if not get(key) >= 0:
            raise ValueError(f"config key {key!r} must be zero or more, got {get(key)!r}")
    for key in _UNIT_INTERVAL:
        if not 0 <= get(key) <= 1:
            raise ValueError(f"config key {key!r} must lie in [0, 1], got {get(key)!r}")
    # Only the rounds the run has (1 .. iterate.rounds - 1) read later_deals: a one-round run scaled down by
    # label.chunk_deals need not rewrite a list it never uses.
    for deals in config.iterate.later_deals[:max(config.iterate.rounds - 1, 0)]:
        if deals < 1 or deals % config.label.chunk_deals:
            raise ValueError(f"config key 'iterate.later_deals' ({config.iterate.later_deals}) must list positive "
                             f"multiples of label.chunk_deals ({config.label.chunk_deals})")
    if config.label.deals % config.label.chunk_deals:
        raise ValueError(f"config key 'label.deals' ({config.label.deals}) must be a multiple of label.chunk_deals "
                         f"({config.label.chunk_deals}): a run can then grow by whole chunks")
    if not 0 <= config.fit.validation_share < 0.5:
        raise ValueError(f"config key 'fit.validation_share' must lie in [0, 0.5), got {config.fit.validation_share!r}")
    choices = {"run.backend": BACKENDS, "run.device": ("auto", "cpu", "cuda"), "label.rules": ALL_PRESET_NAMES,
               "net.activation": ("tanh", "relu"), "fit.target": FIT_TARGETS, "label.source": LABEL_SOURCES,
               "label.hidden": LABEL_HIDDEN, "label.continuation_seats": CONTINUATION_SEATS}
    for key, allowed in choices.items():
        if get(key) not in allowed:
            raise ValueError(f"config key {key!r} must be one of {', '.join(allowed)}, got {get(key)!r}")
    window = config.label.talon_window
    if window is not None and (len(window) != 2 or not 0 <= window[0] <= window[1] <= 12):
        raise ValueError(f"config key 'label.talon_window' must be [min, max] talon sizes with 0 <= min <= max <= 12 "
                         f"(R4), got {window!r}")
    if config.label.source != "true_world" and config.label.hidden != "true_deal":
        raise ValueError("config key 'label.hidden' applies to true-deal labels: set label.source: true_world")
    if config.label.source == "network" and window is not None:
        raise ValueError("config key 'label.talon_window' applies to labelled deals: label.source: network values "
                         "another run's positions (train.relabel)")
    if config.label.source == "teacher" and window is not None and config.label.behaviour == TEACHER_BEHAVIOUR:
        raise ValueError("config key 'label.talon_window' with label.source: teacher needs label.behaviour to be "
                         "an agent spec (who plays the decisions outside the window)")
    if config.label.after_closing and (config.label.source != "teacher" or window is not None
                                       or config.label.behaviour == TEACHER_BEHAVIOUR):
        raise ValueError("config key 'label.after_closing' labels a teacher's values after a closing: it needs "
                         "label.source: teacher, label.behaviour an agent spec (who plays the other decisions) "
                         "and no label.talon_window")
    if config.label.history and config.label.source != "true_world":
        raise ValueError("config key 'label.history' stores history planes with true-deal labels: set label.source: "
                         "true_world")
    if config.label.opponent is not None and (config.label.source != "true_world"
                                              or config.label.behaviour == TEACHER_BEHAVIOUR):
        raise ValueError("config key 'label.opponent' is the opponent of a behaviour agent in true-deal labels: set "
                         "label.source: true_world and label.behaviour to an agent spec (who plays the labelled seat)")
    if config.label.continuation is not None and (config.label.source != "true_world"
                                                  or config.label.hidden != "true_deal"):
        raise ValueError("config key 'label.continuation' plays on in the true deal: set label.source: true_world "
                         "and label.hidden: true_deal")
    if config.label.continuation_opponent is not None and (config.label.continuation is None
                                                           or config.label.continuation_seats != "mover"):
        raise ValueError("config key 'label.continuation_opponent' plays the mover's opponent on in the rollouts: "
                         "set label.continuation (the mover's network) and label.continuation_seats: mover")
    # Read by the true-deal labeller only, and refused rather than ignored beside a teacher (after the checks above,
    # which name the more specific mistake; a network's labels keep the settings of the positions they value).
    for key in ("worlds", "epsilon"):
        if config.label.source == "teacher" and getattr(config.label, key) != getattr(LabelConfig, key):
            raise ValueError(f"config key 'label.{key}' applies to true-deal labels: set label.source: true_world "
                             f"or leave label.{key} out")
    if config.fit.target != "teacher" and config.fit.choice_weight != FitConfig.choice_weight:
        raise ValueError(f"config key 'fit.choice_weight' mixes the teacher's choice into fit.target: teacher; "
                         f"fit.target is {config.fit.target!r}: leave fit.choice_weight out")
    if config.fit.deals is not None:
        first_stop = config.fit.deals
        if (len(first_stop) != 2 or not 0 <= first_stop[0] < first_stop[1]
                or any(bound % config.label.chunk_deals for bound in first_stop)):
            raise ValueError(f"config key 'fit.deals' must be [first, stop] with 0 <= first < stop, both multiples "
                             f"of label.chunk_deals ({config.label.chunk_deals}), got {first_stop!r}")
    if config.fit.labels_from is not None:
        source = Path(config.fit.labels_from)
        theirs = saved_label_settings(source)
        if theirs is None:
            raise ValueError(f"config key 'fit.labels_from': {str(source)!r} is not a distillation run directory "
                             "(no config.yaml)")
        if source.resolve() == config.run_dir.resolve():
            raise ValueError("config key 'fit.labels_from' names this run's own directory: leave it null")
        ours = label_settings(config.to_dict()["label"])
        differing = sorted(key for key in ours if theirs.get(key) != ours[key])
        if differing:
            raise ValueError(f"config key 'fit.labels_from': the labels in {str(source)!r} were made with another "
                             f"label config (differing: {', '.join('label.' + key for key in differing)})")
    if config.fit.window_labels_from is not None:
        window_run = Path(config.fit.window_labels_from)
        theirs = saved_label_settings(window_run) or label_settings(None)
        if theirs["talon_window"] is None:
            raise ValueError(f"config key 'fit.window_labels_from': {str(window_run)!r} is not a distillation run "
                             "with a label.talon_window")
        refuse_other_rules("fit.window_labels_from", window_run, theirs, config.label.rules)
    listed: set[Path] = set()
    for extra in config.fit.extra_labels_from:
        extra_settings = saved_label_settings(Path(extra))
        if extra_settings is None:
            raise ValueError(f"config key 'fit.extra_labels_from': {extra!r} is not a distillation run directory "
                             "(no config.yaml)")
        refuse_other_rules("fit.extra_labels_from", Path(extra), extra_settings, config.label.rules)
        resolved = Path(extra).resolve()
        if resolved == labels_dir(config).resolve():
            raise ValueError(f"config key 'fit.extra_labels_from': {extra!r} holds the labels this run fits already")
        if resolved in listed:
            raise ValueError(f"config key 'fit.extra_labels_from' lists {extra!r} twice (its labels would be fitted "
                             "twice)")
        listed.add(resolved)
    if config.fit.values_model is not None and config.fit.target != "improve":
        raise ValueError("config key 'fit.values_model' gives the values of an improvement step: set fit.target: "
                         "improve")
    if config.fit.regret_coef and config.fit.target != "q":
        raise ValueError(f"config key 'fit.regret_coef' weighs a regret term of the q target's loss: set fit.target: q "
                         f"(it is {config.fit.target!r}) or fit.regret_coef: 0")
    if config.fit.target == "improve" and not config.fit.init_model:
        raise ValueError("config key 'fit.target' is improve, which reweights a starting network's policy: set "
                         "fit.init_model")
    if config.fit.init_model:
        from .export import read_start_model

        read_start_model(config.fit.init_model, "fit.init_model", config.rules, config.net.hidden,
                         config.net.activation)
    if config.fit.values_model is not None:
        check_values_model(config)
    if config.run.address is not None and config.run.backend != "ray":
        raise ValueError("config key 'run.address' names a Ray cluster: set run.backend: ray")
    if not config.net.hidden or any(width < 1 for width in config.net.hidden):
        raise ValueError(f"config key 'net.hidden' must list positive layer widths, got {config.net.hidden!r}")
    check_run_name("run.name", config.run.name)
    # The fit seeds stable-baselines3's generators: checked before the labels are made, not after.
    check_seed("fit.seed" if config.fit.seed is not None else "run.seed", fit_seed(config))
    two_player_rules(config.label.rules, "config key 'label.rules'")  # distillation encodes two-player views
    specs = [("eval.opponents", spec) for spec in config.eval.opponents]
    if config.label.source == "network":  # the teacher is a q network (train/relabel.py), not an agent
        from agents.ppo import QValueNetwork

        QValueNetwork(config.label.teacher, where="config key 'label.teacher'")
    else:
        specs.append(("label.teacher", config.label.teacher))
    if config.label.behaviour != TEACHER_BEHAVIOUR:
        specs.append(("label.behaviour", config.label.behaviour))
    if config.label.opponent is not None:
        specs.append(("label.opponent", config.label.opponent))
    if config.endgame.deals:
        specs += [("endgame.behaviour", config.endgame.behaviour), ("endgame.teacher", config.endgame.teacher)]
        if config.endgame.deals % config.endgame.chunk_deals:
            raise ValueError(f"config key 'endgame.deals' ({config.endgame.deals}) must be a multiple of "
                             f"endgame.chunk_deals ({config.endgame.chunk_deals})")
    for key, spec in specs:
        check_agent_spec(key, spec, config.rules)
    if config.label.continuation is not None:
        network = continuation_network(config.label.continuation, config.rules)
        if config.label.continuation_opponent is not None:
            opponent = continuation_network(config.label.continuation_opponent, config.rules,
                                            "label.continuation_opponent")
            if reads_history(opponent) != reads_history(network):
                raise ValueError("config key 'label.continuation_opponent': both continuation networks must read "
                                 "the history planes, or neither (label.continuation "
                                 f"{'does' if reads_history(network) else 'does not'})")
    return config


def check_values_model(config: DistillConfig) -> None:
    """Refuse a ``fit.values_model`` that is not a q network (:class:`agents.ppo.QValueNetwork`) of this config's
    rules, naming the key, when the config is read: its values are first read at the fit, after labelling."""
    from agents.ppo import QValueNetwork

    network = QValueNetwork(config.fit.values_model, where="config key 'fit.values_model'")
    if network.rules != config.rules:
        raise ValueError(f"config key 'fit.values_model': {config.fit.values_model!r} was fitted for other rules "
                         f"({network.rules.preset_name or 'custom'}), this run {config.label.rules!r}")
    if reads_history(network.network):  # the fit's rows are observations alone (history labels are refused there)
        raise ValueError(f"config key 'fit.values_model': {config.fit.values_model!r} reads the history planes, "
                         "which the labels an improvement step fits do not hold")


def load_distill_config(path: str | Path | None, overrides: list[str] | None = None) -> DistillConfig:
    """Read a distillation config (YAML; ``None``: the defaults) with ``--set section.field=value`` overrides."""
    values, where = read_config_values(path, overrides, root=DistillConfig)
    return check_distill_config(sections_from_dict(DistillConfig, values, where))


# ====================================================================================== labelling
@dataclass
class LabelledDecisions(DecisionTable):
    """One row per labelled decision."""

    FIELDS = ("observations", "masks", "teacher_actions", "teacher_values", "returns", "phase2", "deals")
    WHAT = "distillation labels"

    observations: np.ndarray  # float32 (N, OBSERVATION_SIZE): the decider's observation (packed by load_labels);
    # (N, EXTENDED_OBSERVATION_SIZE) with the history planes after it (label.history)
    masks: np.ndarray  # bool (N, NUM_ACTIONS): the legal actions
    teacher_actions: np.ndarray  # int64 (N,)
    teacher_values: np.ndarray  # float32 (N, NUM_ACTIONS): mean game points per legal action; NaN: not valued
    returns: np.ndarray  # float32 (N,): the deal's final game points from the decider's side (R16)
    phase2: np.ndarray  # bool (N,): R8 applied (talon closed or exhausted)
    deals: np.ndarray  # int64 (N,): the deal's index (validation splits whole deals)

    @classmethod
    def load(cls, path: Path) -> "LabelledDecisions":
        data = cls.read(path)
        rows = len(data.observations)
        if data.observations.ndim != 2 or data.observations.shape[1] not in LABEL_WIDTHS:
            raise ValueError(f"distillation labels {str(path)!r} have observations of shape "
                             f"{data.observations.shape}, this code's observation has size {OBSERVATION_SIZE} "
                             f"({EXTENDED_OBSERVATION_SIZE} with the history planes)")
        if data.masks.shape != (rows, NUM_ACTIONS) or data.teacher_values.shape != (rows, NUM_ACTIONS):
            raise ValueError(f"distillation labels {str(path)!r} have masks or values of the wrong shape")
        if not all(len(getattr(data, name)) == rows for name in cls.FIELDS):
            raise ValueError(f"distillation labels {str(path)!r} have fields of different lengths")
        if rows and not data.masks[np.arange(rows), data.teacher_actions].all():
            raise ValueError(f"distillation labels {str(path)!r}: a teacher action is not among the legal actions")
        return data


LABEL_WIDTHS = (OBSERVATION_SIZE, EXTENDED_OBSERVATION_SIZE)  # the observation, or it and the history planes


def teacher_values(teacher: Any, legal: list[int]) -> np.ndarray:
    """The teacher's mean value of each legal action at its last decision (NaN where it has none): from the
    per-world values ``last_scores`` (``pimc``) or the means ``last_values`` (``rollout``: the actions its pruning
    kept)."""
    values = np.full(NUM_ACTIONS, np.nan, dtype=np.float32)
    scores = getattr(teacher, "last_scores", None)
    means = getattr(teacher, "last_values", None)
    for action in legal:
        if scores and scores.get(action):
            values[action] = float(np.mean(scores[action]))
        elif not scores and means and action in means:
            values[action] = float(means[action])
    return values


def label_deals(rules: Rules, teacher_spec: str, behaviour_spec: str, seed: int, first: int,
                count: int, phase2_only: bool = False, talon_window: list[int] | None = None,
                after_closing: bool = False) -> LabelledDecisions:
    """Deals ``first .. first + count - 1`` (deck from ``derive_seed(seed, "deal", i)``, dealer ``i % 2``) played by
    the behaviour policy in both seats, every decision with a choice labelled by the teacher (module docstring);
    ``phase2_only``: only the decisions where R8 applies; ``talon_window`` ``[min, max]``: only the phase-1 decisions
    with an open talon (R7, R10) of min to max cards (R4), as :func:`rows_in_talon_window` reads them back;
    ``after_closing``: only the decisions after a closing (R10). The teacher acts at the labelled decisions only.
    Deterministic given the arguments (every agent is reseeded per deal)."""
    if (phase2_only or talon_window is not None or after_closing) and behaviour_spec == TEACHER_BEHAVIOUR:
        raise ValueError("labelling part of the decisions (phase 2 only, a talon window, after a closing) needs a "
                         "behaviour agent that plays the others")
    encoder = InfosetEncoder(rules)
    teachers = [make_agent(teacher_spec, seed=0), make_agent(teacher_spec, seed=1)]
    behaviours = None
    if behaviour_spec != TEACHER_BEHAVIOUR:
        behaviours = [make_agent(behaviour_spec, seed=0), make_agent(behaviour_spec, seed=1)]
    rows: dict[str, list[Any]] = {name: [] for name in LabelledDecisions.FIELDS}
    for index in range(first, first + count):
        game = Game.deal(rules, seed=derive_seed(seed, "deal", index), dealer=index % 2)
        for player in (0, 1):
            teachers[player].seed(derive_seed(seed, "teacher", index, player))
            teachers[player].start_deal(player, rules)
            if behaviours is not None:
                behaviours[player].seed(derive_seed(seed, "behaviour", index, player))
                behaviours[player].start_deal(player, rules)
        deciders: list[int] = []
        while not game.is_over:
            player = game.current_player
            infoset = InformationSet(game, player)
            legal = list(infoset.legal_actions)
            if len(legal) == 1:
                game.apply(legal[0])
                continue
            if (phase2_only and not is_phase2(infoset)) or (after_closing and infoset.closed_by is None):
                # decided without encoding the position
                game.apply(behaviours[player].act(infoset))  # type: ignore[index]
                continue
            observation = encoder.encode(infoset)
            if talon_window is not None and not rows_in_talon_window(observation[None], talon_window)[0]:
                game.apply(behaviours[player].act(infoset))  # type: ignore[index]
                continue
            choice = teachers[player].act(infoset)
            mask = np.zeros(NUM_ACTIONS, dtype=bool)
            mask[legal] = True
            rows["observations"].append(observation)
            rows["masks"].append(mask)
            rows["teacher_actions"].append(choice)
            rows["teacher_values"].append(teacher_values(teachers[player], legal))
            rows["phase2"].append(is_phase2(infoset))
            rows["deals"].append(index)
            deciders.append(player)
            game.apply(choice if behaviours is None else behaviours[player].act(infoset))
        deal_returns = game.result.returns()
        rows["returns"].extend(float(deal_returns[player]) for player in deciders)
    return LabelledDecisions(
        observations=np.asarray(rows["observations"], dtype=np.float32).reshape(-1, OBSERVATION_SIZE),
        masks=np.asarray(rows["masks"], dtype=bool).reshape(-1, NUM_ACTIONS),
        teacher_actions=np.asarray(rows["teacher_actions"], dtype=np.int64),
        teacher_values=np.asarray(rows["teacher_values"], dtype=np.float32).reshape(-1, NUM_ACTIONS),
        returns=np.asarray(rows["returns"], dtype=np.float32),
        phase2=np.asarray(rows["phase2"], dtype=bool),
        deals=np.asarray(rows["deals"], dtype=np.int64),
    )


def label_true_world_deals(rules: Rules, seed: int, first: int, count: int, worlds: int, epsilon: float,
                           hidden: str = "true_deal", talon_window: list[int] | None = None,
                           behaviour: str = "heuristic", continuation: str | None = None,
                           continuation_seats: str = "both", history: bool = False,
                           opponent: str | None = None,
                           continuation_opponent: str | None = None) -> LabelledDecisions:
    """Deals ``first .. first + count - 1`` (dealt as :func:`label_deals` deals them) played in both seats by
    ``behaviour`` (``heuristic``: the compiled heuristic, the whole deal in one kernel; or any agent spec, e.g. the
    last round's network: DAgger), a random legal action with probability ``epsilon``; every decision with a choice
    is valued in the true deal by rollouts over ``worlds`` reorderings of the face-down talon
    (:func:`sixtysix_env.core.labels.value_actions`; the rollout player of ``expert``), or with ``hidden="view"``
    over ``worlds`` worlds drawn from the decider's view; ``talon_window`` ``[min, max]``: only the phase-1
    decisions with that talon size are labelled (``LabelConfig``). ``teacher_actions`` are the best actions by those
    values (for accuracy figures only). ``continuation``: the agent spec of a network (a :class:`PolicyAgent` that
    plays every decision itself) that plays on from each action in place of the rollout player, both seats, up to a
    phase 2 after the talon's exhaustion, which is solved exactly (:func:`continuation_values`); with
    ``continuation_seats="mover"`` the mover's opponent is the compiled heuristic with the rollout player's numbers
    instead, or the network of the agent spec ``continuation_opponent``. ``history``: each observation is followed
    by the decider's history planes (``label.history``).
    ``opponent``: an agent spec playing the seat ``1 - (index // 2) % 2`` of deal ``index`` (``heuristic``: the
    compiled heuristic), ``behaviour`` (an agent spec) the other; the opponent's decisions are neither labelled nor
    randomised (``label.opponent``).
    Deterministic given the arguments (numba's generator and the agents are seeded per deal; the continuation's
    talon orders per chunk)."""
    from agents.rollout import rollout_player_params
    from agents.rule_based import HeuristicAgent
    from agents.solver import ROLLOUT_TABLE_BITS, core_table
    from sixtysix_env.core import state_from_game
    from sixtysix_env.core.labels import MAX_DECISIONS_PER_DEAL, deal_returns, in_talon_window, label_deal, \
        value_actions
    from sixtysix_env.core.engine import copy_state
    from sixtysix_env.core.heuristic import heuristic_action
    from sixtysix_env.core.layout import STATE_SIZE
    from sixtysix_env.core.observation import encode_to_width
    from sixtysix_env.core.search import seed_kernels

    params = rollout_player_params()
    behaviour_params = HeuristicAgent().core_params()
    if continuation_opponent is not None and (continuation is None or continuation_seats != "mover"):
        raise ValueError("label_true_world_deals: a continuation_opponent plays the mover's opponent on: it needs a "
                         "continuation (the mover's network) and continuation_seats='mover'")
    if opponent is not None and behaviour == "heuristic":
        raise ValueError("label_true_world_deals: an opponent needs a behaviour agent spec (who plays the labelled "
                         "seat), not the compiled heuristic")
    agents = None if behaviour == "heuristic" else [make_agent(behaviour, seed=0), make_agent(behaviour, seed=1)]
    # `heuristic` as the opponent is the compiled heuristic (half the time per deal of the Python agent)
    opponents = (None if opponent in (None, "heuristic")
                 else [make_agent(opponent, seed=0), make_agent(opponent, seed=1)])
    table = core_table(ROLLOUT_TABLE_BITS)
    match_score = np.zeros(2, dtype=np.float32)  # single deals, outside a Bummerl (R17)
    resample_hands = hidden == "view"
    min_talon, max_talon = talon_window if talon_window is not None else (-1, 12)
    rows = MAX_DECISIONS_PER_DEAL
    width = EXTENDED_OBSERVATION_SIZE if history else OBSERVATION_SIZE
    network = continuation_network(continuation, rules) if continuation is not None else None
    opponent_network = (continuation_network(continuation_opponent, rules, "label.continuation_opponent")
                        if continuation_opponent is not None else None)
    label_worlds = 0 if network is not None else worlds  # 0: label_deal keeps the positions, valued below
    positions = np.zeros((rows if network is not None else 0, STATE_SIZE), dtype=np.int64)
    kept_positions: list[np.ndarray] = []
    kept_deciders: list[np.ndarray] = []
    parts: dict[str, list[np.ndarray]] = {name: [] for name in LabelledDecisions.FIELDS}
    for index in range(first, first + count):
        game = Game.deal(rules, seed=derive_seed(seed, "deal", index), dealer=index % 2)
        state = state_from_game(game)
        seed_kernels(derive_seed(seed, "true_world", index) % 2 ** 32)
        observations = np.empty((rows, width), dtype=np.float32)  # label_deal writes the planes when wider
        masks = np.zeros((rows, NUM_ACTIONS), dtype=np.bool_)
        values = np.full((rows, NUM_ACTIONS), np.nan, dtype=np.float64)
        actions, deciders = np.zeros(rows, dtype=np.int64), np.zeros(rows, dtype=np.int64)
        phase2, returns = np.zeros(rows, dtype=np.bool_), np.zeros(rows, dtype=np.float64)
        first_world = table.claim_worlds(rows * label_worlds)  # the continuation's rollouts solve phase 2 only
        if agents is None:
            used = label_deal(state, params, behaviour_params, label_worlds, resample_hands, min_talon, max_talon,
                              float(epsilon), table.entries, table.nodes, first_world, match_score, observations,
                              masks, values, actions, phase2, deciders, positions)
        else:
            explore = np.random.default_rng(derive_seed(seed, "explore", index))
            players = list(agents)
            behaviour_seat = (index // 2) % 2 if opponent is not None else None  # dealer is index % 2
            if opponents is not None:
                players[1 - behaviour_seat] = opponents[1 - behaviour_seat]  # type: ignore[operator]
            for player in (0, 1):
                players[player].seed(derive_seed(seed, "behaviour", index, player))
                players[player].start_deal(player, rules)
            used = 0
            while not game.is_over:
                legal = game.legal_actions()
                if len(legal) == 1:
                    game.apply(legal[0])
                    continue
                player = game.current_player
                if behaviour_seat is not None and player != behaviour_seat:  # unlabelled, as in a match
                    game.apply(int(heuristic_action(state_from_game(game), behaviour_params, table.entries,
                                                    table.nodes)) if opponents is None
                               else players[player].act(InformationSet(game, player)))
                    continue
                state = state_from_game(game)
                labelled = min_talon < 0 or in_talon_window(state, min_talon, max_talon)
                if labelled:
                    encode_to_width(state, player, match_score, observations[used])
                    if network is not None:
                        copy_state(positions[used], state)
                    else:
                        value_actions(state, player, params, worlds, resample_hands, table.entries, table.nodes,
                                      first_world + used * worlds, values[used])
                    masks[used, legal] = True
                    phase2[used], deciders[used] = game.phase2, player
                choice = int(legal[explore.integers(len(legal))] if explore.random() < epsilon else
                             players[player].act(InformationSet(game, player)))
                if labelled:
                    actions[used] = choice
                    used += 1
                game.apply(choice)
            state = state_from_game(game)
        deal_returns(state, deciders, used, returns)
        if network is not None:
            kept_positions.append(positions[:used].copy())
            kept_deciders.append(deciders[:used].copy())
        else:
            parts["teacher_values"].append(values[:used].astype(np.float32))
        for name, array in (("observations", observations), ("masks", masks), ("returns", returns.astype(np.float32)),
                            ("phase2", phase2), ("deals", np.full(rows, index, dtype=np.int64))):
            parts[name].append(array[:used])
    if not parts["deals"]:
        return LabelledDecisions(*(np.zeros(0) for _ in LabelledDecisions.FIELDS))
    joined = {name: np.concatenate(arrays) for name, arrays in parts.items() if arrays}
    if network is not None:
        seed_kernels(derive_seed(seed, "continuation", first) % 2 ** 32)
        # the heuristic's numbers for the mover's opponent, unless a network plays him
        opponent_params = params if continuation_seats == "mover" and opponent_network is None else None
        joined["teacher_values"] = continuation_values(np.concatenate(kept_positions), np.concatenate(kept_deciders),
                                                       worlds, network, table, opponent_params,
                                                       opponent_network=opponent_network).astype(np.float32)
    values = np.where(joined["masks"], joined["teacher_values"], -np.inf)
    joined["teacher_actions"] = values.argmax(axis=1)
    return LabelledDecisions(*(joined[name] for name in LabelledDecisions.FIELDS))


def continuation_network(spec: str, rules: Rules, key: str = "label.continuation") -> Any:
    """The network of ``label.continuation`` (or of the config key ``key``): an agent spec whose agent is a
    :class:`PolicyAgent` playing every decision itself (a suit network or a MaskablePPO model, ``phase2=policy``),
    for ``rules``; refused by name otherwise."""
    try:
        agent = make_agent(spec, seed=0)
    except (ValueError, FileNotFoundError) as error:
        raise ValueError(f"config key {key!r}: {error}") from None
    if not isinstance(agent, PolicyAgent) or agent.phase2 != "policy":
        raise ValueError(f"config key {key!r}: {spec!r} is not a network that plays every decision "
                         "itself (a suit: or ppo: spec with phase2=policy)")
    agent.start_deal(0, rules)  # refuses a network fitted for other rules by name
    return agent.network


def continuation_values(positions: np.ndarray, movers: np.ndarray, worlds: int, network: Any, table: Any,
                        opponent_params: np.ndarray | None = None, block: int = 2048,
                        opponent_network: Any = None) -> np.ndarray:
    """(positions, 37) action values of every legal action of each position for its mover (NaN elsewhere) when
    ``network`` plays both seats on from the action (greedy, from each mover's own observation) in the position's
    talon orders (:func:`sixtysix_env.core.labels.start_continuations`), a phase 2 after the talon's exhaustion
    solved exactly; ``opponent_params``: the mover's opponent is instead the compiled heuristic with those numbers
    (those of expert's rollout player, deciding from his own view), or ``opponent_network`` (greedy from his own
    view), the network playing the mover's seat only. The rollouts advance in lockstep
    (:func:`sixtysix_env.core.continuation.play_out`). ``block`` positions at a time (bounded memory). numba's
    generator must be seeded (the talon orders)."""
    from sixtysix_env.core.continuation import play_out
    from sixtysix_env.core.labels import continuation_count, start_continuations
    from sixtysix_env.core.layout import STATE_SIZE

    match_score = np.zeros(2, dtype=np.float32)  # single deals, outside a Bummerl (R17)
    values = np.full((len(positions), NUM_ACTIONS), np.nan)
    for start in range(0, len(positions), block):
        part = np.ascontiguousarray(positions[start:start + block])
        total = continuation_count(part, len(part), worlds)
        rollouts = np.empty((total, STATE_SIZE), dtype=np.int64)
        origin, action = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
        start_continuations(part, len(part), worlds, rollouts, origin, action)
        results = play_out(rollouts, movers[start:start + block][origin], network.logits, table, match_score,
                           opponent_params, history=reads_history(network),
                           opponent_logits_of=None if opponent_network is None else opponent_network.logits)
        sums = np.zeros((len(part), NUM_ACTIONS))
        counts = np.zeros((len(part), NUM_ACTIONS))
        np.add.at(sums, (origin, action), results)
        np.add.at(counts, (origin, action), 1.0)
        values[start:start + block] = np.where(counts > 0, sums / np.maximum(counts, 1.0), np.nan)
    return values


def _label_chunk(arguments: tuple) -> tuple[str, dict[str, Any]]:
    """Label one chunk and write it to its file (in the worker: only the path and figures travel back)."""
    (rules_dict, teacher, behaviour, seed, first, count, phase2_only, path, true_world, talon_window,
     after_closing) = arguments
    started = time.perf_counter()
    if true_world is not None:
        worlds, epsilon, hidden, continuation, seats, history, opponent, continuation_opponent = true_world
        data = label_true_world_deals(Rules(**rules_dict), seed, first, count, worlds, epsilon, hidden, talon_window,
                                      behaviour=behaviour, continuation=continuation, continuation_seats=seats,
                                      history=history, opponent=opponent,
                                      continuation_opponent=continuation_opponent)
    else:
        data = label_deals(Rules(**rules_dict), teacher, behaviour, seed, first, count, phase2_only, talon_window,
                           after_closing)
    data.save(Path(path))
    return path, {"decisions": len(data), "seconds": time.perf_counter() - started}


def round_dir(config: DistillConfig, round_index: int) -> Path:
    return config.run_dir / f"round_{round_index}"


def labels_dir(config: DistillConfig) -> Path:
    """Where the run's labels are: its own directory, or ``fit.labels_from``."""
    return Path(config.fit.labels_from) if config.fit.labels_from is not None else config.run_dir


def endgame_dir(config: DistillConfig) -> Path:
    return config.run_dir / "endgame"


def label_chunks(config: DistillConfig, folder: Path, teacher: str, behaviour: str, seed: int, deals: int,
                 chunk_deals: int, phase2_only: bool, description: str, quiet: bool,
                 true_world: tuple | None = None, talon_window: list[int] | None = None,
                 after_closing: bool = False) -> dict[str, Any]:
    """Label ``deals`` deals into ``folder``, one file per chunk (chunks already on disk are kept); returns figures.
    ``true_world``: ``(worlds, epsilon, hidden, continuation, continuation_seats, history, opponent,
    continuation_opponent)`` of true-deal labels instead of the teacher's; ``talon_window``: label only those
    phase-1 decisions (``label.talon_window``); ``after_closing``: only the decisions after a closing
    (``label.after_closing``)."""
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files(folder)
    chunks, counts = [], []
    for first in range(0, deals, chunk_deals):
        count = min(chunk_deals, deals - first)
        path = folder / f"chunk_{first:08d}.npz"
        if path.exists():
            continue
        chunks.append((config.rules.to_dict(), teacher, behaviour, seed, first, count, phase2_only, str(path),
                       true_world, talon_window, after_closing))
        counts.append(count)
    started = time.perf_counter()
    results = run_deal_chunks(_label_chunk, chunks, counts, config.run.workers, description,
                              config.run.progress_bar and not quiet, backend=config.run.backend,
                              address=config.run.address)
    seconds = time.perf_counter() - started
    decisions = sum(figures["decisions"] for _, figures in results)
    busy = sum(figures["seconds"] for _, figures in results)
    return {"behaviour": behaviour, "new_deals": sum(counts), "new_decisions": decisions,
            "wall_seconds": round(seconds, 1),
            "decisions_per_second": round(decisions / seconds, 2) if seconds > 0 and decisions else None,
            "decisions_per_worker_second": round(decisions / busy, 2) if busy > 0 and decisions else None}


def label_round(config: DistillConfig, round_index: int, behaviour: str, quiet: bool = False) -> dict[str, Any]:
    """Label the deals of round ``round_index`` (``label.deals``, later rounds ``iterate.later_deals``)."""
    if config.label.source == "network":
        raise ValueError("label.source: network labels are written by `python -m train.relabel` (another run's "
                         "positions valued by a q network), not labelled here")
    later = config.iterate.later_deals
    deals = later[round_index - 1] if 0 < round_index <= len(later) else config.label.deals
    seed = derive_seed(config.run.seed, "round", round_index)  # every round labels other deals
    label = config.label
    true_world = ((label.worlds, label.epsilon, label.hidden, label.continuation, label.continuation_seats,
                   label.history, label.opponent, label.continuation_opponent)
                  if label.source == "true_world" else None)
    if true_world is not None and round_index == 0 and behaviour == TEACHER_BEHAVIOUR:
        behaviour = "heuristic"  # round 0 of a true-deal run: the compiled heuristic plays, unless a spec is given
    what = label.teacher if true_world is None else (
        "true-deal rollout" if label.continuation is None else f"true-deal {label.continuation} continuation")
    figures = label_chunks(config, round_dir(config, round_index), label.teacher, behaviour, seed, deals,
                           label.chunk_deals, False, f"round {round_index}: {what} labels", quiet, true_world,
                           label.talon_window, label.after_closing)
    return {"round": round_index, **figures}


def label_endgames(config: DistillConfig, quiet: bool = False) -> dict[str, Any]:
    """Label the phase-2 decisions of ``endgame.deals`` deals (none when 0)."""
    endgame = config.endgame
    return label_chunks(config, endgame_dir(config), endgame.teacher, endgame.behaviour,
                        derive_seed(config.run.seed, "endgame"), endgame.deals, endgame.chunk_deals, True,
                        f"endgames: {endgame.teacher} labels", quiet)


def load_labels(config: DistillConfig, rounds: int) -> LabelledDecisions:
    """Every labelled chunk of rounds ``0 .. rounds - 1`` (of the run's labels, then of ``fit.extra_labels_from``),
    and the phase-2 labels (``endgame``)."""
    source = labels_dir(config)
    folders = [run / f"round_{index}" for run in (source, *map(Path, config.fit.extra_labels_from))
               for index in range(rounds)]
    if config.endgame.deals:
        folders.append(source / "endgame")
    def in_deals(chunks: list[Path]) -> list[Path]:
        """The chunks (chunk_<first deal>.npz) of ``fit.deals``, whole chunks of the range: the same range for every
        source, so deals held out of the fit stay out of the window labels too."""
        if config.fit.deals is None:
            return chunks
        first, stop = config.fit.deals
        return [path for path in chunks if first <= int(path.stem[len("chunk_"):]) < stop]

    for_deals = "" if config.fit.deals is None else f" for fit.deals {config.fit.deals}"  # what a refusal adds
    paths = in_deals([path for folder in folders for path in sorted(folder.glob("chunk_*.npz"))])
    for extra in config.fit.extra_labels_from:
        if not any(Path(extra) in path.parents for path in paths):
            raise ValueError(f"no distillation labels in {extra!r} (fit.extra_labels_from){for_deals}")
    if not paths:
        raise ValueError(f"no distillation labels in {source}{for_deals}: run `sixtysix distill label` first")
    window, window_paths = None, []
    if config.fit.window_labels_from is not None:
        window_run = Path(config.fit.window_labels_from)
        window = saved_label_settings(window_run)["talon_window"]
        window_paths = in_deals(sorted((window_run / "round_0").glob("chunk_*.npz")))
        if not window_paths:
            raise ValueError(f"no distillation labels in {str(window_run)!r} (fit.window_labels_from){for_deals}: "
                             "run `sixtysix distill label` there first")
    others: dict[str, list[np.ndarray]] = {name: [] for name in LabelledDecisions.FIELDS[1:]}
    widths: list[int] = []  # every chunk's rows as wide as the first's: with the history planes or without

    def observation_parts() -> Iterator[np.ndarray]:  # reads each chunk once, keeping its other fields on the way
        for path, own in [(path, True) for path in paths] + [(path, False) for path in window_paths]:
            part = LabelledDecisions.load(path)
            widths.append(part.observations.shape[1])
            if widths[-1] != widths[0]:
                raise ValueError(f"distillation labels {str(path)!r} have observations of {widths[-1]} columns, "
                                 f"the first chunk {widths[0]}: labels with and without the history planes "
                                 "(label.history) cannot be fitted together")
            # this run's own rows inside the window give way to the window's labels
            keep = ~rows_in_talon_window(part.observations, window) if own and window is not None else slice(None)
            for name, arrays in others.items():
                arrays.append(getattr(part, name)[keep])
            yield part.observations[keep]

    observations = PackedObservations.pack(observation_parts(), OBSERVATION_SIZE)
    return LabelledDecisions(observations, *(np.concatenate(others[name]) for name in LabelledDecisions.FIELDS[1:]))


def rows_in_talon_window(observations: np.ndarray, window: list[int]) -> np.ndarray:
    """Which rows' observations are phase-1 positions (talon open, R7/R10) with a talon size (R4) in ``window``
    ``[min, max]``: the decisions ``label.talon_window`` selects (``core.labels.in_talon_window``), read back from
    the observation's ``phase2`` flag and ``talon_size`` piece as the suit agents' late window does."""
    return in_late_window(observations, window[0], window[1])


# ====================================================================================== fitting
def _value_weights(data: LabelledDecisions, temperature: float) -> tuple[np.ndarray, np.ndarray]:
    """``exp(value / temperature)`` of the actions the teacher valued (0 elsewhere), scaled per row so its best is 1,
    and which rows have any value."""
    valued = data.masks & ~np.isnan(data.teacher_values)
    scaled = np.where(valued, np.nan_to_num(data.teacher_values) / temperature, -np.inf)
    has_values = valued.any(axis=1)
    scaled[~has_values] = 0.0
    scaled -= scaled.max(axis=1, keepdims=True)
    return np.where(valued, np.exp(scaled), 0.0), has_values


def soft_targets(data: LabelledDecisions, choice_weight: float, temperature: float) -> np.ndarray:
    """The policy targets (N, NUM_ACTIONS): the teacher's action mixed with the softmax of its values over the
    legal actions (rows without values: the action alone)."""
    rows = np.arange(len(data))
    onehot = np.zeros((len(data), NUM_ACTIONS), dtype=np.float32)
    onehot[rows, data.teacher_actions] = 1.0
    weights, has_values = _value_weights(data, temperature)
    totals = weights.sum(axis=1, keepdims=True)
    softmax = np.divide(weights, totals, out=np.zeros_like(weights), where=totals > 0).astype(np.float32)
    share = np.where(has_values, 1.0 - choice_weight, 0.0).astype(np.float32)[:, None]
    return (1.0 - share) * onehot + share * softmax


def improvement_targets(data: LabelledDecisions, prior: np.ndarray, temperature: float) -> np.ndarray:
    """The policy targets (N, NUM_ACTIONS) of one improvement step on the policy ``prior`` (N, NUM_ACTIONS):
    ``prior * exp(values / temperature)`` over the actions the teacher valued, normalised (rows without values, or
    where the prior gives them no mass: the prior itself)."""
    weights, has_values = _value_weights(data, temperature)
    weights *= prior
    totals = weights.sum(axis=1, keepdims=True)
    improved = np.divide(weights, totals, out=np.zeros_like(weights), where=totals > 0)
    keep = (totals[:, 0] <= 0) | ~has_values
    improved[keep] = prior[keep]
    return improved.astype(np.float32)


def q_targets(data: LabelledDecisions, temperature: float,
              block: int = 1 << 20) -> tuple[np.ndarray, np.ndarray]:
    """The ``q`` target: each row's action values centred over the actions valued there and divided by
    ``temperature`` (0 elsewhere), and which actions count (rows with fewer than two valued actions: none)."""
    valued = data.masks & ~np.isnan(data.teacher_values)
    valued &= valued.sum(axis=1, keepdims=True) >= 2
    targets = np.zeros(valued.shape, dtype=np.float32)
    for start in range(0, len(valued), block):  # in blocks: float64 temporaries of tens of millions of rows
        rows = slice(start, start + block)
        values = np.where(valued[rows], np.nan_to_num(data.teacher_values[rows]), 0.0).astype(np.float64)
        counts = np.maximum(valued[rows].sum(axis=1, keepdims=True), 1)
        centred = values - values.sum(axis=1, keepdims=True) / counts
        targets[rows] = np.where(valued[rows], centred / temperature, 0.0)
    return targets, valued


def mean_regret(best_values: np.ndarray, chosen_values: np.ndarray) -> float:
    """The teacher's best value minus that of the network's choice, averaged over the rows where both are valued
    (finite): a search teacher leaves some rows without values (``expert`` after the talon's exhaustion, R8, hands the
    decision to its exact solver) and a pruning one some actions; NaN if no row counts."""
    counted = np.isfinite(best_values) & np.isfinite(chosen_values)
    return float(np.mean(best_values[counted] - chosen_values[counted])) if counted.any() else float("nan")


def q_regression_loss(logits: Any, valued: Any, targets: Any, regret_coef: float = 0.0) -> Any:
    """The ``q`` target's loss (torch tensors, rows of a batch): the squared error of the logits, centred over each
    row's valued actions, against :func:`q_targets`, averaged over those actions and then over the rows; plus
    ``regret_coef`` times the expected regret of the softmax of the logits over the valued actions (the targets'
    best minus each action's target: units of the temperature), averaged over the rows that have valued actions."""
    import torch

    counts = valued.sum(dim=1).clamp(min=1)
    raw = torch.where(valued, logits, torch.zeros_like(logits))
    centred = raw - (raw.sum(dim=1) / counts)[:, None]
    errors = torch.where(valued, centred - targets, torch.zeros_like(logits))
    loss = ((errors ** 2).sum(dim=1) / counts).mean()
    if regret_coef:
        has_values = valued.any(dim=1)
        unvalued = ~valued[has_values]
        probabilities = torch.softmax(logits[has_values].masked_fill(unvalued, float("-inf")), dim=1)
        row_targets = targets[has_values].masked_fill(unvalued, float("-inf"))
        regrets = (row_targets.max(dim=1, keepdim=True).values - row_targets).masked_fill(unvalued, 0.0)
        loss = loss + regret_coef * (probabilities * regrets).sum(dim=1).sum() / has_values.sum().clamp(min=1)
    return loss


def fitted_values(path: str, data: LabelledDecisions) -> np.ndarray:
    """The action values (N, NUM_ACTIONS; NaN where illegal) of a model fitted with ``fit.target: q`` on the labels'
    observations (:class:`agents.ppo.QValueNetwork`: game points, centred over the legal actions)."""
    from agents.ppo import QValueNetwork

    return QValueNetwork(path, where="config key 'fit.values_model'").values_of_observations(data.observations,
                                                                                            data.masks)


def masked_logits(policy: Any, observations: Any, masks: Any) -> tuple[Any, Any]:
    """A MaskablePPO ``policy``'s action logits with illegal actions masked out, and its value net's latent (torch
    tensors in, torch tensors out)."""
    features = policy.extract_features(observations, policy.pi_features_extractor)
    latent_pi, latent_vf = policy.mlp_extractor(features)
    return policy.action_net(latent_pi).masked_fill(~masks, -1e8), latent_vf


def policy_probabilities(policy: Any, observations: np.ndarray, masks: np.ndarray, device: str,
                         batch_size: int = 8192) -> np.ndarray:
    """The masked action probabilities (N, NUM_ACTIONS) of a MaskablePPO ``policy`` on the observations."""
    import torch

    rows = []
    policy.eval()
    with torch.no_grad():
        for start in range(0, len(observations), batch_size):
            logits, _ = masked_logits(policy, torch.as_tensor(observations[start:start + batch_size], device=device),
                                      torch.as_tensor(masks[start:start + batch_size], device=device))
            rows.append(torch.softmax(logits, dim=-1).cpu().numpy())
    return np.concatenate(rows).astype(np.float64)


def resolve_device(name: str) -> str:
    """``auto``: CUDA when torch sees a GPU, else the CPU."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("config key 'run.device' is cuda, but torch sees no CUDA device")
    return name


def fit_seed(config: DistillConfig) -> int:
    """The seed of the fit: ``fit.seed``, else ``run.seed``."""
    return config.run.seed if config.fit.seed is None else config.fit.seed


def new_model(config: DistillConfig, device: str) -> Any:
    """A MaskablePPO model of the configured shape for the two-player Gymnasium env (its policy is what is fitted),
    with the weights of ``fit.init_model`` if the config names one."""
    from .export import new_policy_model, read_start_model

    model = new_policy_model(config.rules, config.net.hidden, config.net.activation, device=device,
                             seed=fit_seed(config))
    if config.fit.init_model:  # checked again here: the file may have changed since the config was read
        model.policy.load_state_dict(read_start_model(config.fit.init_model, "fit.init_model", config.rules,
                                                      config.net.hidden, config.net.activation))
    return model


def file_provenance(path: str | None) -> dict[str, str] | None:
    """A model file named by the config as provenance: its path and the SHA-256 of its bytes (``None`` for none)."""
    if path is None:
        return None
    return {"path": str(path), "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest()}


def save_model(config: DistillConfig, model: Any, path: Path, provenance: dict[str, Any]) -> None:
    """A MaskablePPO zip with our metadata and NumPy actor (``ppo:path=...``), written atomically."""
    buffer = io.BytesIO()
    model.save(buffer)
    actor = ActorNetwork.from_policy(model.policy, config.net.activation)
    metadata = model_metadata(config.rules, config.net.activation, list(config.net.hidden), phase2="policy",
                              **provenance)
    write_bytes_atomic(path, add_metadata_to_zip(buffer.getvalue(), metadata, actor))


class ScalarLog:
    """TensorBoard scalars plus the same rows in ``scalars.csv`` (for notebooks and the plot); a context manager."""

    def __init__(self, run_dir: Path, first_step: int):
        """Rows from ``first_step`` on are dropped from ``scalars.csv``: a round fitted again replaces its rows."""
        from torch.utils.tensorboard import SummaryWriter

        self.table = ScalarsCsv(run_dir / "scalars.csv", keep_through=first_step - 1)
        # and from TensorBoard, so a refitted round's curves replace the old ones instead of doubling them
        self.writer = SummaryWriter(str(run_dir / "tb"), purge_step=first_step)

    def add(self, tag: str, value: float, step: int) -> None:
        self.writer.add_scalar(tag, value, step)
        self.table.add(step, tag, float(value))

    def flush(self) -> None:
        self.writer.flush()
        self.table.flush()

    def close(self) -> None:
        self.writer.close()
        self.table.close()

    def __enter__(self) -> "ScalarLog":
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()


def evaluation_due(config: DistillConfig, epoch: int) -> bool:
    """Whether the learning curve evaluates after ``epoch`` (from 1): every ``eval.every`` epochs and at the last."""
    return epoch == config.fit.epochs or bool(config.eval.every and epoch % config.eval.every == 0)


def log_evaluations(run_dir: Path, log: ScalarLog, records: list[dict[str, Any]], epoch: int,
                    extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Log :func:`evaluate_learner`'s records at ``epoch`` (``eval/OPPONENT/margin`` and its interval) and append
    them to ``eval.jsonl``; returns them with ``extra`` and the epoch."""
    logged = []
    for record in records:
        record = {**(extra or {}), "epoch": epoch, **record}
        logged.append(record)
        for key in ("margin", "margin_ci_low", "margin_ci_high"):
            log.add(f"eval/{record['opponent']}/{key}", record[key], epoch)
        with open(run_dir / "eval.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    return logged


def plot_learning_curve(run_dir: Path, opponents: list[str]) -> None:
    """``learning_curve.png`` of a fit: evaluation margins with their intervals, and validation regret, by epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plots import load_scalars

    series = load_scalars(run_dir)
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for opponent in opponents:
        tag = f"eval/{opponent}/margin"
        if tag not in series:
            continue
        steps, margins = series[tag]
        low, high = series[f"{tag}_ci_low"][1], series[f"{tag}_ci_high"][1]
        left.plot(steps, margins, marker="o", label=opponent)
        left.fill_between(steps, low, high, alpha=0.2)
    left.axhline(0.0, color="grey", linewidth=0.8)
    left.set(xlabel="epoch", ylabel="margin per deal (game points)", title="network vs opponents, 95% CI")
    if left.lines[1:]:  # beyond the zero line: a config with eval.opponents: [] plots none (and legend() warns)
        left.legend()
    else:
        left.text(0.5, 0.5, "no evaluation opponents (eval.opponents: [])", ha="center", va="center",
                  transform=left.transAxes, color="grey")
    for tag, label in (("charts/validation_regret", "regret (game points)"),
                       ("charts/validation_accuracy", "accuracy")):
        if tag in series:
            right.plot(*series[tag], label=label)
    right.set(xlabel="epoch", title="held-out decisions")
    if right.lines:
        right.legend()
    figure.tight_layout()
    write_bytes_atomic(run_dir / "learning_curve.png", png_bytes(figure, dpi=110))


def evaluate_network(config: DistillConfig, model: Any) -> list[dict[str, Any]]:
    """The network (every decision, deterministic) against each ``eval.opponents`` on the fixed duplicate deals."""
    network = ActorNetwork.from_policy(model.policy, config.net.activation)
    return evaluate_learner(config, PolicyAgent(network, config.rules, deterministic=True, seed=0, where="network"))


def evaluate_learner(config: DistillConfig, learner: Any) -> list[dict[str, Any]]:
    """An agent being fitted against each ``eval.opponents`` on the fixed duplicate deals of ``eval`` (the learning
    curve of ``sixtysix distill fit`` and of ``train/suit_network.py``)."""
    from .selfplay import duplicate_margin

    deals = generate_deals(config.eval.seed, config.eval.pairs, config.rules)
    records = []
    for spec in config.eval.opponents:
        started = time.perf_counter()
        figures = duplicate_margin(learner, make_agent(spec, seed=0), config.rules, deals, config.eval.seed)
        records.append({"opponent": spec, **figures, "seconds": round(time.perf_counter() - started, 1)})
    return records


def fit_policy(config: DistillConfig, model: Any, data: LabelledDecisions, log: ScalarLog, epoch_offset: int,
               device: str, on_eval: Any = None, quiet: bool = False) -> dict[str, float]:
    """Fit ``model.policy`` to the labels (module docstring); validation on held-out whole deals. Returns the
    figures of the last epoch: losses, accuracy (the teacher's action is the network's argmax) and regret (the
    teacher's value of its best action minus that of the network's choice, game points per decision); with
    ``fit.init_model`` also the starting network's validation figures (``start_validation_*``)."""
    import torch
    from tqdm.auto import tqdm

    fit = config.fit
    generator = np.random.default_rng(derive_seed(fit_seed(config), "fit", epoch_offset))
    torch.manual_seed(derive_seed(fit_seed(config), "torch", epoch_offset))
    training, validation = held_out_split(data.deals, fit.validation_share, generator)
    if len(training) == 0:
        raise ValueError("distillation: no labelled decisions to fit (increase label.deals)")
    if data.observations.shape[1] != OBSERVATION_SIZE:
        raise ValueError("distillation: these labels hold the history planes (label.history), which an MLP policy "
                         "does not read: fit them with `python -m train.suit_network --history`")
    valued = None  # the q target's actions that count
    if fit.target in ("q", "improve") and fit.values_model is None \
            and not (data.masks & ~np.isnan(data.teacher_values)).any():
        # A teacher without action values (heuristic, a network, ismcts) labels its choices only: these targets
        # would be all zero or the start itself, and the fit a model whose policy was never trained.
        raise ValueError(f"distillation: fit.target {fit.target!r} fits the teacher's action values, and these labels "
                         "hold none (their teacher chose without valuing its actions): use fit.target: teacher, or a "
                         "teacher that values them (pimc, rollout, expert)")
    if fit.target == "improve":
        if fit.values_model is not None:
            data = dataclasses.replace(data, teacher_values=fitted_values(fit.values_model, data))
        prior = policy_probabilities(model.policy, data.observations, data.masks, device)
        targets = improvement_targets(data, prior, fit.temperature)
    elif fit.target == "q":
        targets, valued = q_targets(data, fit.temperature)
    else:
        targets = soft_targets(data, fit.choice_weight, fit.temperature)
    values = np.nan_to_num(np.where(data.masks, data.teacher_values, np.nan), nan=-np.inf)
    best_value = values.max(axis=1)
    packed = isinstance(data.observations, PackedObservations)
    observations = data.observations.codes if packed else data.observations
    tensors = {name: torch.as_tensor(array).to(device) for name, array in (
        ("observations", observations), ("masks", data.masks), ("targets", targets),
        ("returns", data.returns), ("actions", data.teacher_actions), ("valued", valued)) if array is not None}
    table = torch.as_tensor(data.observations.table).to(device) if packed else None
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=fit.learning_rate, weight_decay=fit.weight_decay)
    total_steps = fit.epochs * ((len(training) + fit.batch_size - 1) // fit.batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - 0.9 * min(step / total_steps, 1.0))

    def forward(index: torch.Tensor, regret_coef: float = fit.regret_coef
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rows = tensors["observations"][index]
        logits, latent_vf = masked_logits(policy, table[rows.long()] if packed else rows, tensors["masks"][index])
        if fit.target == "q":
            policy_loss = q_regression_loss(logits, tensors["valued"][index], tensors["targets"][index], regret_coef)
        else:
            log_probs = torch.log_softmax(logits, dim=-1)
            policy_loss = -(tensors["targets"][index] * log_probs).sum(dim=1).mean()
        value_loss = torch.mean((policy.value_net(latent_vf).squeeze(1) - tensors["returns"][index]) ** 2)
        return policy_loss, value_loss, logits

    def measure(indices: np.ndarray, block: int = 65536) -> dict[str, float]:
        """Losses (means over rows), accuracy and regret on ``indices``, in blocks (bounded memory)."""
        losses, chosen_parts = np.zeros(2), []
        with torch.no_grad():
            for start in range(0, len(indices), block):
                part = indices[start:start + block]
                # the q target's squared error alone, whatever fit.regret_coef: fits compare
                policy_loss, value_loss, logits = forward(torch.as_tensor(part, device=device), 0.0)
                losses += np.array([policy_loss.item(), value_loss.item()]) * len(part)
                chosen_parts.append(logits.argmax(dim=1).cpu().numpy())
        policy_loss, value_loss = losses / max(len(indices), 1)
        chosen = np.concatenate(chosen_parts)
        return {"policy_loss": float(policy_loss), "value_loss": float(value_loss),
                "accuracy": float(np.mean(chosen == data.teacher_actions[indices])),
                "regret": mean_regret(best_value[indices], values[indices, chosen])}

    figures: dict[str, float] = {}
    starting: dict[str, float] = {}
    if fit.init_model and len(validation):
        # Where the starting network stands against these labels (step epoch_offset: before the first epoch).
        policy.eval()
        starting = {f"start_validation_{name}": value for name, value in measure(validation).items()}
        for name, value in starting.items():
            log.add(f"charts/{name[len('start_'):]}", value, epoch_offset)
    policy.train()
    bar = tqdm(range(1, fit.epochs + 1), desc="fit", unit="epoch", disable=quiet or not config.run.progress_bar,
               dynamic_ncols=True)
    for epoch in bar:
        step = epoch_offset + epoch
        shuffled = generator.permutation(training)
        sums, batches = np.zeros(2), 0
        for start in range(0, len(shuffled), fit.batch_size):
            index = torch.as_tensor(shuffled[start:start + fit.batch_size], device=device)
            policy_loss, value_loss, _ = forward(index)
            loss = policy_loss + fit.value_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            sums += (policy_loss.item(), value_loss.item())
            batches += 1
        figures = {**starting, "policy_loss": sums[0] / batches, "value_loss": sums[1] / batches}
        log.add("losses/policy_loss", figures["policy_loss"], step)
        log.add("losses/value_loss", figures["value_loss"], step)
        log.add("charts/learning_rate", schedule.get_last_lr()[0], step)
        if len(validation):
            held = measure(validation)
            figures.update({f"validation_{name}": value for name, value in held.items()})
            for name, value in held.items():
                log.add(f"charts/validation_{name}", value, step)
            bar.set_postfix(accuracy=f"{held['accuracy']:.3f}", regret=f"{held['regret']:.3f}")
        # At the end, the loss on every training decision (the epoch means above move with the weights).
        if epoch == fit.epochs:
            figures["training_policy_loss"] = measure(training)["policy_loss"]
        if on_eval is not None and evaluation_due(config, epoch):
            policy.eval()
            on_eval(step)
            policy.train()
        log.flush()
    policy.eval()
    return figures


# ====================================================================================== the pipeline
class Distiller:
    """One distillation run: its directory, config, logs; ``label``, ``fit`` and ``run`` are the three commands."""

    def __init__(self, config: DistillConfig, quiet: bool = False):
        self.config = config
        self.quiet = quiet
        self.run_dir = config.run_dir
        self.run_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(self.run_dir)
        config_path = self.run_dir / "config.yaml"
        text = yaml.safe_dump(config.to_dict(), sort_keys=False, default_flow_style=None)
        if config_path.exists() and config_path.read_text(encoding="utf-8") != text:
            # More deals may be added to a run (label.deals), nothing else that decides the labels may change.
            previous = saved_config(self.run_dir) or {}
            same_labels = saved_label_settings(self.run_dir) == label_settings(config.to_dict()["label"])
            # The endgame labels too: their chunks on disk were made by that behaviour, teacher and chunk size
            # (endgame.deals may grow, as label.deals may).
            endgame_now = {**config.to_dict()["endgame"], "deals": None}
            endgame_then = {**dataclasses.asdict(EndgameConfig()), **(previous.get("endgame") or {}), "deals": None}
            seed_then = (previous.get("run") or {}).get("seed")
            if not same_labels or endgame_then != endgame_now or seed_then != config.run.seed:
                raise ValueError(f"{self.run_dir} holds labels of another label or endgame config or run.seed: choose "
                                 "another run.name, or delete that directory")
        write_text_atomic(config_path, text)
        self.summary_path = self.run_dir / "summary.json"
        self.summary: dict[str, Any] = {"rounds": []}
        if self.summary_path.exists():  # a run continued: its figures so far (written atomically)
            summary = read_json_file(self.summary_path, "distillation summary")
            if not isinstance(summary, dict) or not isinstance(summary.get("rounds"), list) or not all(
                    isinstance(entry, dict) for entry in summary["rounds"]):
                raise ValueError(f"distillation summary {str(self.summary_path)!r} is not a run's summary (it needs a "
                                 "'rounds' list of objects); choose another run.name, or delete that directory")
            self.summary = summary

    def behaviour_of(self, round_index: int) -> str:
        if round_index == 0:
            return self.config.label.behaviour
        return f"ppo:path={round_dir(self.config, round_index - 1) / 'model.zip'},phase2=policy"

    def label(self, round_index: int = 0) -> dict[str, Any]:
        if self.config.fit.labels_from is not None:
            raise ValueError(f"this run fits the labels of {self.config.fit.labels_from!r} (fit.labels_from): label "
                             "there")
        if round_index > 0 and not (round_dir(self.config, round_index - 1) / "model.zip").exists():
            raise ValueError(f"round {round_index} is labelled by the network of round {round_index - 1}: fit it first")
        figures = label_round(self.config, round_index, self.behaviour_of(round_index), self.quiet)
        self._record(round_index, "label", figures)
        if round_index == 0 and self.config.endgame.deals:
            self.summary["endgame"] = label_endgames(self.config, self.quiet)
            write_json_atomic(self.summary_path, self.summary)
        return figures

    def fit(self, round_index: int = 0) -> Path:
        import torch

        config = self.config
        torch.set_num_threads(config.run.torch_threads)
        device = resolve_device(config.run.device)
        data = load_labels(config, round_index + 1)
        model = new_model(config, device)
        epoch_offset = round_index * config.fit.epochs
        evaluations: list[dict[str, Any]] = []
        # A round fitted again replaces its evaluations (and those of later rounds).
        truncate_log(self.run_dir / "eval.jsonl", round_index - 1,
                     step_of=lambda line: loads_json(line, "log line")["round"])
        log = ScalarLog(self.run_dir, epoch_offset + 1)  # closed by the fit's `with`

        def on_eval(step: int) -> None:
            evaluations.extend(log_evaluations(self.run_dir, log, evaluate_network(config, model), step,
                                               {"round": round_index}))

        started = time.perf_counter()
        with log, denormals_flushed():
            figures = fit_policy(config, model, data, log, epoch_offset, device, on_eval, self.quiet)
        seconds = time.perf_counter() - started
        label = config.label
        source = (f"true_world:worlds={label.worlds},epsilon={label.epsilon}" if label.source == "true_world" else
                  label.teacher)  # what the labels came from (a true-deal run has no teacher agent)
        if label.source == "true_world" and (label.hidden != "true_deal" or label.talon_window is not None):
            source += f",hidden={label.hidden},talon_window={label.talon_window}"
        if label.source == "true_world" and label.continuation is not None:
            source += f",continuation={label.continuation},continuation_seats={label.continuation_seats}"
            if label.continuation_opponent is not None:
                source += f",continuation_opponent={label.continuation_opponent}"
        if label.source == "teacher" and label.talon_window is not None:
            source += f" at talon_window={label.talon_window}"
        if label.source == "teacher" and label.after_closing:
            source += " after a closing"
        provenance = {"distilled_from": source, "distill_round": round_index,
                      "distill_decisions": len(data), "distill_figures": {k: round(v, 5) for k, v in figures.items()},
                      "distill_fit_seed": fit_seed(config), "distill_deals": config.fit.deals,
                      "distill_window_labels": config.fit.window_labels_from,
                      "distill_extra_labels": config.fit.extra_labels_from,
                      # the networks the fit started from and took its values from, by path and content
                      "distill_init_model": file_provenance(config.fit.init_model),
                      "distill_values_model": file_provenance(config.fit.values_model)}
        if config.fit.target == "q":  # the logits are values / temperature (fit.values_model reads it back)
            provenance["q_temperature"] = config.fit.temperature
        path = round_dir(config, round_index) / "model.zip"
        save_model(config, model, path, provenance)
        save_model(config, model, self.run_dir / "model.zip", provenance)
        self._record(round_index, "fit", {"decisions": len(data), "device": device, "wall_seconds": round(seconds, 1),
                                          "final": {k: round(v, 5) for k, v in figures.items()},
                                          "evaluations": evaluations})
        plot_learning_curve(self.run_dir, self.config.eval.opponents)
        return path

    def run(self) -> Path:
        path = self.run_dir / "model.zip"
        for round_index in range(self.config.iterate.rounds):
            self.label(round_index)
            path = self.fit(round_index)
        return path

    def _record(self, round_index: int, stage: str, figures: dict[str, Any]) -> None:
        rounds = self.summary["rounds"]
        while len(rounds) <= round_index:
            rounds.append({"round": len(rounds)})
        # A figure may be undefined (no regret where the teacher valued no decision): null in the JSON.
        rounds[round_index][stage] = nonfinite_as_null(figures)
        write_json_atomic(self.summary_path, self.summary)


# ====================================================================================== the command
def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["merge"]:  # its own arguments: the models and --out (train/ensemble.py)
        from .ensemble import main as merge_main

        return merge_main(arguments[1:])
    parser = argparse.ArgumentParser(prog="sixtysix distill", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("command", choices=("label", "fit", "run", "describe", "merge"),
                        help="label: the teacher labels deals; fit: fit the network; run: every round of both; "
                             "describe: every config key with its meaning (the values of --config and --set, else "
                             "the defaults); merge: one network of several (sixtysix distill merge --help)")
    parser.add_argument("--config", help="YAML config (configs/distill.yaml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value by dotted key, e.g. --set label.deals=500 (repeatable)")
    parser.add_argument("--round", type=int, help="the round to label or fit (label, fit; default 0); run does "
                        "every round")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.command == "describe":  # a config's own values with --config (and --set), else the defaults
        if args.overrides and not args.config:
            print("sixtysix distill: error: describe --set changes a config: give --config FILE too", file=sys.stderr)
            return 2
        try:
            config = load_distill_config(args.config, args.overrides) if args.config else None
        except (ValueError, OSError) as error:
            print(f"sixtysix distill: error: {error}", file=sys.stderr)
            return 2
        print(describe_config(config, root=DistillConfig))
        return 0
    if not args.config:
        print("sixtysix distill: give --config FILE (see configs/distill.yaml)", file=sys.stderr)
        return 2
    try:
        if args.command == "run" and args.round is not None:
            raise ValueError("--round is for label and fit: run does every round (iterate.rounds)")
        args.round = 0 if args.round is None else args.round
        config = load_distill_config(args.config, args.overrides)
        if args.round < 0 or args.round >= config.iterate.rounds:
            raise ValueError(f"--round must lie in 0..{config.iterate.rounds - 1} (iterate.rounds), got {args.round}")
        distiller = Distiller(config, quiet=args.quiet)
        if args.command == "label":
            figures = distiller.label(args.round)
            print(json.dumps(figures))
        elif args.command == "fit":
            print(f"model: {distiller.fit(args.round)}")
        else:
            print(f"model: {distiller.run()}")
    except (ValueError, FileNotFoundError) as error:
        print(f"sixtysix distill: {error}", file=sys.stderr)
        return 2
    print(f"summary: {distiller.summary_path}")
    return 0


__all__ = ["DistillConfig", "Distiller", "LabelledDecisions", "check_distill_config", "label_deals",
           "load_distill_config", "soft_targets", "teacher_values"]


if __name__ == "__main__":
    import sys

    sys.exit(main())
