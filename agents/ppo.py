"""A trained MaskablePPO policy as an agent: spec ``ppo`` (the shipped model) or ``ppo:path=FILE``.

The model file is the zip that stable-baselines3 writes (``policy.pth`` holds the network weights) plus one entry
of ours, ``sixtysix.json``: the observation size and a digest of the observation layout
(:mod:`sixtysix_env.observation`), the action space size, the rules the policy was trained for, the network's
activation and how long it trained. Loading checks them against this code and refuses a model built for another
layout, another action space or (when a deal starts) other rules, with a message saying which.

Inference does not go through stable-baselines3: the actor path of the policy (``mlp_extractor.policy_net`` then
``action_net``) is copied into NumPy arrays and evaluated with a few matrix products, so a decision costs tens of
microseconds. The trainer also stores that actor as ``sixtysix_actor.npz`` in the zip, so playing a model needs
only NumPy (torch, from the ``train`` extra, is used only for a zip without it). ``tests/test_train.py`` checks
the logits equal stable-baselines3's own.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import zipfile
import zlib
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.infoset import InformationSet
from sixtysix_env.observation import (OBSERVATION_LAYOUT, OBSERVATION_SIZE, OBSERVATION_SLICES, ObservationEncoder,
                                     encode_history)
from sixtysix_env.three import NUM_ACTIONS_THREE
from sixtysix_env.three_observation import THREE_OBSERVATION_LAYOUT, THREE_OBSERVATION_SIZE, encode_three_infoset
from sixtysix_env.rules import ALL_PRESET_NAMES, Rules
from sixtysix_env.fileio import nonfinite_as_null, read_npz_arrays
from sixtysix_env.extras import install_hint
from sixtysix_env.schema import loads_json, require_int

from .base import (
    MODELS_DIR, Agent, differing_switches, legal_actions_to_choose, plays_like, refuse_other_rules, rules_name,
    unread_switches,
)
from .rule_based import is_phase2, on_last_talon_trick, talon_exhausted
from .three_players import is_three_player

MODEL_FORMAT = "sixtysix-ppo"
MODEL_FORMAT_VERSION = 1
METADATA_ENTRY = "sixtysix.json"  # the entries of ours inside the model zip
# The metadata keys this code reads to load and play a model; every other key is a provenance note
# (train/export.py --note), which must not replace one of these.
MODEL_METADATA_KEYS = frozenset({
    "format", "format_version", "observation_size", "num_actions", "observation_layout", "rules", "hidden",
    "activation", "phase2", "ensemble_member_hidden", "q_temperature",
})
ACTOR_ENTRY = "sixtysix_actor.npz"
DEFAULT_MODEL = MODELS_DIR / "ppo_standard.zip"
ACTIVATIONS = ("tanh", "relu")


def observation_layout_digest(players: int = 2) -> str:
    """A short digest of the observation layout (piece names and sizes, in order): two layouts of equal size but
    different meaning get different digests. ``players=3``: the three-player layout (R21)."""
    layout = THREE_OBSERVATION_LAYOUT if players == 3 else OBSERVATION_LAYOUT
    text = ";".join(f"{piece.name}:{piece.size}:{piece.kind}" for piece in layout)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def spaces_for(rules: Rules) -> tuple[int, int]:
    """(observation size, number of actions) of the game ``rules`` describe (two players, or three: R21)."""
    if rules.players == 3:
        return THREE_OBSERVATION_SIZE, NUM_ACTIONS_THREE
    return OBSERVATION_SIZE, NUM_ACTIONS


_OPPONENT_HAND = OBSERVATION_SLICES["opponent_hand_size"].start
_HAND_SCALE = 6.0  # observation.HAND_SCALE


def reads_history(network: Any) -> bool:
    """Whether a policy network reads the history planes after the observation (a suit network fitted with them,
    ``agents.suit``, or a combination holding one): its encoder then appends them
    (``sixtysix_env.observation.encode_history``)."""
    return bool(getattr(network, "history", False))


class InfosetEncoder:
    """The observation vector of an information set: identical to what the environments give that player in a
    deal outside a Bummerl (``ObservationEncoder.encode_infoset``; a test checks it against ``encode_observation``
    on the full game). The match score is always shown as 0:0, not ``infoset.match_score``: the networks were fitted
    on single deals, and a score they never saw would only move their inputs off what they learned."""

    def __init__(self, rules: Rules, history: bool = False):
        self.rules = rules
        self.history = history  # followed by the history planes, for networks fitted with them (agents/suit.py)
        self._encoder = ObservationEncoder(rules)

    def encode(self, infoset: InformationSet) -> np.ndarray:
        if is_three_player(infoset):
            return encode_three_infoset(infoset)  # R21: the three-player vector (sixtysix_env/three_observation.py)
        encode_infoset = getattr(self._encoder, "encode_infoset", None)
        if encode_infoset is not None:
            vector = encode_infoset(infoset)
        else:
            # Older encoders: the template game has the hidden cards erased, which is all the encoder reads of them
            # except the opponent's hand size; that one number comes from the information set.
            vector = self._encoder.encode(infoset._template, infoset.player)
            vector[_OPPONENT_HAND] = infoset.opponent_hand_size / _HAND_SCALE
        if self.history:  # the leads are public: the template game holds them
            return np.concatenate([vector, encode_history(infoset._template, infoset.player)])
        return vector


def encode_infoset(infoset: InformationSet) -> np.ndarray:
    return InfosetEncoder(infoset.rules).encode(infoset)


# ---------------------------------------------------------------------------------------------- the network
class ActorNetwork:
    """The actor path of an sb3 ``MaskableActorCriticPolicy`` with an MLP extractor, in NumPy (float32)."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str):
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; expected one of {', '.join(ACTIVATIONS)}")
        if not layers:
            raise ValueError("an actor network needs at least the action layer")
        self.layers = [(np.ascontiguousarray(w, dtype=np.float32), np.asarray(b, dtype=np.float32)) for w, b in layers]
        _check_layers(self.layers)
        self.activation = activation
        self.input_size = self.layers[0][0].shape[1]
        self.output_size = self.layers[-1][0].shape[0]
        # Transposed copies so a single observation is a row vector times a matrix.
        self._transposed = [(np.ascontiguousarray(w.T), b) for w, b in self.layers]
        self._blocks: list[list[tuple[slice, np.ndarray, np.ndarray]]] | None = None  # split_into_towers

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any], activation: str) -> "ActorNetwork":
        """From the policy's ``state_dict`` (tensors or arrays): ``mlp_extractor.policy_net.<i>`` then ``action_net``."""
        return cls(sb3_mlp_layers(state, "policy"), activation)

    @classmethod
    def from_policy(cls, policy: Any, activation: str) -> "ActorNetwork":
        """From a live sb3 policy object (a copy: later training does not change it)."""
        return cls.from_state_dict({k: v.detach().cpu().numpy().copy() for k, v in policy.state_dict().items()}, activation)

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation (or a batch of rows)."""
        hidden = np.asarray(observation, dtype=np.float32)
        last = len(self._transposed) - 1
        for index, (weight_t, bias) in enumerate(self._transposed):
            if self._blocks is not None and 0 < index < last:  # a merged ensemble: each member's own block
                hidden = np.concatenate([hidden[..., rows] @ block_t + block_bias
                                         for rows, block_t, block_bias in self._blocks[index - 1]], axis=-1)
            else:
                hidden = hidden @ weight_t + bias
            if index < last:
                hidden = np.tanh(hidden) if self.activation == "tanh" else np.maximum(hidden, 0.0)
        return hidden

    def split_into_towers(self, member_hidden: list[list[int]]) -> None:
        """Evaluate a merged ensemble (``sixtysix distill merge``) member by member between its first and last
        layers: the same logits as the dense layers, whose hidden-to-hidden weights are block-diagonal, with each
        block's own small product instead of the whole matrix. ``ValueError`` if the weights are not such blocks."""
        widths = [list(hidden) for hidden in member_hidden]
        depth = len(self.layers) - 1
        if not widths or any(len(hidden) != depth for hidden in widths) or \
                [sum(column) for column in zip(*widths)] != [weight.shape[0] for weight, _ in self.layers[:-1]]:
            raise ValueError(f"member widths {widths} do not add up to the network's hidden layers "
                             f"{[weight.shape[0] for weight, _ in self.layers[:-1]]}")
        starts = np.cumsum([[0] * depth] + widths, axis=0)  # starts[m][l]: member m's first unit of layer l
        units = [[slice(int(starts[member][layer]), int(starts[member + 1][layer])) for layer in range(depth)]
                 for member in range(len(widths))]
        blocks = []
        for layer in range(1, depth):
            weight, bias = self.layers[layer]
            layer_blocks = []
            for member_units in units:
                rows, columns = member_units[layer], member_units[layer - 1]
                outside = weight[rows].copy()
                outside[:, columns] = 0.0
                if np.any(outside != 0.0):
                    raise ValueError(f"hidden layer {layer} is not block-diagonal over the members {widths}")
                layer_blocks.append((columns, np.ascontiguousarray(weight[rows, columns].T), bias[rows]))
            blocks.append(layer_blocks)
        self._blocks = blocks

    def npz_bytes(self, metadata: Mapping[str, Any]) -> bytes:
        """The weights and metadata as an ``.npz`` file's bytes (snapshots, and ``sixtysix_actor.npz`` in models)."""
        buffer = io.BytesIO()
        arrays = {}
        for index, (weight, bias) in enumerate(self.layers):
            arrays[f"w{index}"] = weight
            arrays[f"b{index}"] = bias
        arrays["metadata"] = np.frombuffer(json.dumps(dict(metadata, activation=self.activation)).encode(), dtype=np.uint8)
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    def save_npz(self, path: str | os.PathLike, metadata: Mapping[str, Any]) -> None:
        """Write the weights and metadata to ``path`` atomically (the opponent pool's snapshot format)."""
        from sixtysix_env.fileio import write_bytes_atomic

        write_bytes_atomic(path, self.npz_bytes(metadata))

    @classmethod
    def load_npz(cls, path: Any) -> tuple["ActorNetwork", dict[str, Any]]:
        """From an ``.npz`` path or file object; one that is not an ``.npz`` archive is a ``ValueError`` saying so."""
        data = read_npz_arrays(path, "the actor's weights")
        if "metadata" not in data:
            raise ValueError("the actor's weights have no 'metadata' entry")
        metadata = loads_json(bytes(data["metadata"]).decode(), "actor metadata")
        if not isinstance(metadata, dict):
            raise ValueError("actor metadata must be a JSON object")
        count = sum(1 for key in data if key.startswith("w"))
        try:
            layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(count)]
        except KeyError as error:
            raise ValueError(f"the actor's weights lack the entry {error.args[0]!r}") from None
        return cls(layers, metadata.get("activation")), metadata


def _check_layers(layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Shapes that chain (layer ``i`` maps the previous layer's outputs) and finite weights: a bad weights file is
    refused when it is loaded, by layer, not at the first move or silently (NaN logits pick the first action)."""
    for index, (weight, bias) in enumerate(layers):
        name = "the action layer" if index == len(layers) - 1 else f"hidden layer {index}"
        if weight.ndim != 2 or bias.ndim != 1 or bias.shape[0] != weight.shape[0]:
            raise ValueError(f"{name}: weights of shape {weight.shape} and bias of shape {bias.shape} do not fit "
                             "(expected (outputs, inputs) and (outputs,))")
        if index and weight.shape[1] != layers[index - 1][0].shape[0]:
            raise ValueError(f"{name}: takes {weight.shape[1]} inputs but the layer before gives "
                             f"{layers[index - 1][0].shape[0]}")
        if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
            raise ValueError(f"{name}: weights hold NaN or infinite values")


def sb3_mlp_layers(state: Mapping[str, Any], path: str = "policy") -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weight, bias) arrays of one path of an sb3 MLP policy's ``state_dict``, its head last: ``policy``
    (``mlp_extractor.policy_net.<i>``, then ``action_net``) or ``value`` (``mlp_extractor.value_net.<i>``, then
    ``value_net``)."""
    prefix, head = f"mlp_extractor.{path}_net.", {"policy": "action_net", "value": "value_net"}[path]
    indices = sorted({int(key[len(prefix):].split(".")[0]) for key in state if key.startswith(prefix)})
    if f"{head}.weight" not in state:
        raise ValueError(f"not a MaskablePPO policy: the weights have no {head}")
    names = [f"{prefix}{index}.{part}" for index in indices for part in ("weight", "bias")] + [f"{head}.bias"]
    missing = [name for name in names if name not in state]  # a damaged file: named, not a KeyError
    if missing:
        raise ValueError(f"not a MaskablePPO policy: the weights have no {missing[0]}")
    layers = [(_array(state[f"{prefix}{index}.weight"]), _array(state[f"{prefix}{index}.bias"])) for index in indices]
    return layers + [(_array(state[f"{head}.weight"]), _array(state[f"{head}.bias"]))]


def torch_activation(name: str) -> Any:
    """The torch module class of an activation of :data:`ACTIVATIONS` (imports torch: training code only)."""
    import torch

    return {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[name]


def _array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float32)


def masked_choice(logits: np.ndarray, legal: list[int], deterministic: bool, rng: Any) -> int:
    """The highest-logit legal action, or one sampled from the softmax over the legal actions."""
    legal_logits = logits[legal]
    if deterministic or len(legal) == 1:
        return legal[int(np.argmax(legal_logits))]
    shifted = np.exp(legal_logits - legal_logits.max())
    threshold = rng.random() * float(shifted.sum())
    cumulative = 0.0
    for action, weight in zip(legal, shifted):
        cumulative += float(weight)
        if threshold < cumulative:
            return action
    return legal[-1]


# ---------------------------------------------------------------------------------------------- metadata
def model_metadata(rules: Rules, activation: str, hidden: list[int], **extra: Any) -> dict[str, Any]:
    """The ``sixtysix.json`` entry describing what a policy was trained for."""
    observation_size, num_actions = spaces_for(rules)
    return {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "observation_size": observation_size,
        "observation_layout": observation_layout_digest(rules.players),
        "num_actions": num_actions,
        "rules": rules.to_dict(),
        "rules_preset": rules.preset_name,
        "activation": activation,
        "hidden": list(hidden),
        **extra,
    }


def check_metadata(metadata: Mapping[str, Any], where: str) -> Rules:
    """Refuse a model whose observation layout or action space differs from this code's; returns its rules."""
    if not isinstance(metadata, Mapping):
        raise ValueError(f"{where}: its {METADATA_ENTRY} must be a JSON object, got {type(metadata).__name__}")
    if metadata.get("format") != MODEL_FORMAT:
        raise ValueError(f"{where} is not a sixtysix PPO model (its {METADATA_ENTRY} has format {metadata.get('format')!r})")
    # The keys this code reads have exact types (1.0 is not 1); other keys are provenance notes (train/export.py).
    for key in ("format_version", "observation_size", "num_actions"):
        if key not in metadata:
            raise ValueError(f"{where}: its {METADATA_ENTRY} is missing {key!r}")
        require_int(metadata[key], f"{where}: {METADATA_ENTRY} {key}", 0)
    hidden = metadata.get("hidden")
    if not isinstance(hidden, list) or not all(type(size) is int and size > 0 for size in hidden):
        raise ValueError(f"{where}: its {METADATA_ENTRY} hidden must be a list of positive layer sizes, got {hidden!r}")
    if metadata.get("phase2", "policy") not in PHASE2_MODES:
        raise ValueError(f"{where}: its {METADATA_ENTRY} phase2 must be one of {', '.join(PHASE2_MODES)}, "
                         f"got {metadata.get('phase2')!r}")
    if metadata["format_version"] > MODEL_FORMAT_VERSION:
        raise ValueError(f"{where} has model format version {metadata.get('format_version')}; this code reads up to {MODEL_FORMAT_VERSION}")
    try:
        # models from before R21 name no player count: 2 by default; no rules at all: from_dict names what it got
        rules = Rules.from_dict(metadata.get("rules"))
    except ValueError as error:
        raise ValueError(f"{where} has unusable rules in its metadata: {error}") from None
    observation_size, num_actions = spaces_for(rules)
    if metadata.get("observation_size") != observation_size:
        raise ValueError(
            f"{where} was trained on observations of size {metadata.get('observation_size')}, but this code's "
            f"observation has size {observation_size} (sixtysix_env/observation.py changed): retrain the model"
        )
    if metadata.get("observation_layout") != observation_layout_digest(rules.players):
        raise ValueError(
            f"{where} was trained on observation layout {metadata.get('observation_layout')!r}, but this code's "
            f"layout is {observation_layout_digest(rules.players)!r} (same size, different pieces): retrain the model"
        )
    if metadata.get("num_actions") != num_actions:
        raise ValueError(
            f"{where} was trained with {metadata.get('num_actions')} actions, but this code's action space has "
            f"{num_actions} (sixtysix_env/actions.py changed): retrain the model"
        )
    if metadata.get("activation") not in ACTIVATIONS:
        raise ValueError(f"{where} has unknown activation {metadata.get('activation')!r}")
    return rules


def add_metadata_to_zip(model_bytes: bytes, metadata: Mapping[str, Any], actor: ActorNetwork | None = None) -> bytes:
    """The sb3 model zip with our metadata entry (and the NumPy copy of the actor) added or replaced. An undefined
    figure in the metadata (NaN: a distillation's regret where the teacher valued no decision) is written as null,
    since the model's readers refuse NaN."""
    metadata = nonfinite_as_null(dict(metadata))
    source = zipfile.ZipFile(io.BytesIO(model_bytes))
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            if item.filename not in (METADATA_ENTRY, ACTOR_ENTRY):
                # Deflated, though sb3 stores its entries: a merged ensemble's block-diagonal weights are mostly 0.
                target.writestr(item.filename, source.read(item.filename), compress_type=zipfile.ZIP_DEFLATED)
        target.writestr(METADATA_ENTRY, json.dumps(metadata, indent=2, sort_keys=True, allow_nan=False))
        if actor is not None:
            target.writestr(ACTOR_ENTRY, actor.npz_bytes(metadata))
    return output.getvalue()


def model_file(path: Any) -> Path:
    """``path`` as an existing model file: a path that is not text, or names a folder, is a ``ValueError`` naming
    it (a spec's ``path=2024`` arrives as a number), a missing one a ``FileNotFoundError``."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"PPO model path must be a file path, got {path!r}")
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"PPO model {str(path)!r} is a folder, not a model file")
    if not path.is_file():
        raise FileNotFoundError(f"PPO model not found: {path}")
    return path


def read_model_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """The ``sixtysix.json`` entry of a model zip (``ValueError`` if the file is not a model of ours)."""
    path = model_file(path)
    try:
        with zipfile.ZipFile(path) as archive:
            if METADATA_ENTRY not in archive.namelist():
                raise ValueError(
                    f"PPO model {str(path)!r} has no {METADATA_ENTRY} (not written by `sixtysix train`): cannot check "
                    "its observation layout, action space and rules"
                )
            return loads_json(_read_entry(archive, METADATA_ENTRY, path).decode("utf-8", "replace"),
                              f"PPO model {str(path)!r}: {METADATA_ENTRY}")
    except zipfile.BadZipFile:
        raise ValueError(f"PPO model {str(path)!r} is not a zip file") from None


def _read_entry(archive: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """One entry's bytes; a truncated or corrupt entry raises ``ValueError`` naming the model and the entry."""
    try:
        return archive.read(name)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError) as error:
        raise ValueError(f"PPO model {str(path)!r}: entry {name} is truncated or corrupt ({error})") from None


def has_metadata(path: Path) -> bool:
    """Whether a model zip carries our metadata entry (``False`` for a plain MaskablePPO zip, or not a zip)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return METADATA_ENTRY in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return True  # let read_model_metadata name the problem


def load_plain_maskable_ppo(path: Path, rules: Rules) -> tuple[ActorNetwork, dict[str, Any], Rules]:
    """A MaskablePPO zip saved by anyone (no ``sixtysix.json``): accepted when its spaces are this game's (a flat
    observation vector of docs/observation.md, one action per id of docs/actions.md) and its policy is an MLP with
    tanh or ReLU; refused by name otherwise. Nothing in the file says which rules or observation layout it was
    trained on: the caller names the rules, and the sizes are all that can be checked."""
    where = f"PPO model {str(path)!r}"
    try:
        import torch
        from gymnasium import spaces
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.torch_layers import FlattenExtractor
    except ImportError:
        raise ValueError(f"{where} has no {METADATA_ENTRY}: reading a plain MaskablePPO zip needs sb3-contrib "
                         f"({install_hint('train')})") from None
    try:
        model = MaskablePPO.load(path, device="cpu")
    except Exception as error:  # sb3 raises many kinds for a file that is not one of its models
        raise ValueError(f"{where} is neither a sixtysix model nor a loadable MaskablePPO zip "
                         f"({type(error).__name__}: {error})") from None
    observation_size, num_actions = spaces_for(rules)
    observation_space, action_space = model.observation_space, model.action_space
    if not isinstance(observation_space, spaces.Box) or observation_space.shape != (observation_size,):
        raise ValueError(f"{where}: its observation space {observation_space} does not match this game's "
                         f"Box of shape ({observation_size},) (SixtySixGymEnv with dict_observation=False)")
    if not isinstance(action_space, spaces.Discrete) or int(action_space.n) != num_actions:
        raise ValueError(f"{where}: its action space {action_space} does not match this game's "
                         f"Discrete({num_actions})")
    policy = model.policy
    if not isinstance(policy.pi_features_extractor, FlattenExtractor):
        raise ValueError(f"{where}: its policy uses the features extractor "
                         f"{type(policy.pi_features_extractor).__name__}; only MLP policies (FlattenExtractor) can play")
    activations = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu"}
    activation = activations.get(policy.activation_fn)
    if activation is None:
        raise ValueError(f"{where}: its activation {policy.activation_fn.__name__} is not supported "
                         f"(tanh or ReLU)")
    network = ActorNetwork.from_policy(policy, activation)
    hidden = [layer[0].shape[0] for layer in network.layers[:-1]]
    return network, model_metadata(rules, activation, hidden, phase2="policy", plain_maskable_ppo=True), rules


# What a damaged model zip raises when its weights are read (each turned into a ValueError that names the file).
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError, RuntimeError, pickle.UnpicklingError)


def one_line_reason(error: BaseException) -> str:
    """An error's class and message on one line, for an error that names the file it concerns (torch lists a
    state dict's mismatches over several lines). Torch's refusal of a damaged or foreign pickle
    (``weights_only=True``) is cut to its cause, without its advice to load the file again with code execution
    allowed (wrong for a damaged file, and unsafe for a foreign one)."""
    message = str(error)
    _, marker, cause = message.partition("WeightsUnpickler error:")
    lines = [line.strip() for line in (cause if marker else message).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0] if marker and lines else ' '.join(lines)}".rstrip(": ")


def _read_policy_state(archive: zipfile.ZipFile, path: Path, torch_needed: str) -> Mapping[str, Any]:
    """The state dict in a model zip's ``policy.pth`` (written by torch.save, so reading it needs torch;
    ``torch_needed`` says what wanted it, in the error when torch is missing)."""
    try:
        import torch  # only to read the weights file written by torch.save
    except ImportError:
        raise ValueError(f"{torch_needed} needs torch ({install_hint('train')})") from None
    state = torch.load(io.BytesIO(_read_entry(archive, "policy.pth", path)), map_location="cpu", weights_only=True)
    if not isinstance(state, Mapping):
        raise ValueError(f"policy.pth holds a {type(state).__name__}, not a state dict")
    return state

def read_policy_state(path: str | os.PathLike, where: str) -> Mapping[str, Any]:
    """The sb3 policy weights (``policy.pth``) of a model zip at ``path``; a file that is no zip, lacks the entry or
    holds damaged weights raises ``ValueError`` naming ``where``."""
    try:
        with zipfile.ZipFile(path) as archive:
            if "policy.pth" not in archive.namelist():
                raise ValueError(f"{where} has no policy.pth entry: not a model zip written by sixtysix train")
            return _read_policy_state(archive, Path(path), f"{where}: reading its policy.pth")
    except ValueError as error:
        message = str(error)
        raise ValueError(message if message.startswith(where) else f"{where}: {message}") from None
    except _UNREADABLE as error:
        raise ValueError(f"{where}: its policy.pth cannot be read ({one_line_reason(error)})") from None


def check_network_spaces(network: ActorNetwork, rules: Rules, where: str, value: bool = False, name: str = "network",
                         unit: str = "actions") -> None:
    """Refuse, naming ``where``, a network that does not read this game's observation (``rules``) or does not give
    one logit per action (one value for a ``value`` network); ``name`` and ``unit`` word the message."""
    observation_size, num_actions = spaces_for(rules)
    outputs = 1 if value else num_actions
    if network.input_size != observation_size or network.output_size != outputs:
        raise ValueError(f"{where}: its {name} maps {network.input_size} inputs to {network.output_size} {unit}, "
                         f"expected {observation_size} -> {outputs}")


def load_actor(path: str | os.PathLike, rules: Rules | None = None) -> tuple[ActorNetwork, dict[str, Any], Rules]:
    """Read and check a model zip: its actor network, metadata and rules. A plain MaskablePPO zip (without our
    metadata) is read by :func:`load_plain_maskable_ppo` for ``rules`` (default ``standard``)."""
    path = Path(path)
    if path.suffix == ".npz":  # a suit network's file, or a critic's: not a model zip
        raise ValueError(f"PPO model {str(path)!r} is an .npz file, not a model zip: suit networks play as "
                         f"suit:path={path} (a critic file is train.critic's, for rollout:leaf_value=)")
    if path.is_file() and not has_metadata(path):
        return load_plain_maskable_ppo(path, rules if rules is not None else Rules.preset("standard"))
    metadata = read_model_metadata(path)
    where = f"PPO model {str(path)!r}"
    rules = check_metadata(metadata, where)
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if ACTOR_ENTRY in names:
                actor_bytes = io.BytesIO(_read_entry(archive, ACTOR_ENTRY, path))
                try:
                    network, _ = ActorNetwork.load_npz(actor_bytes)
                except ValueError as error:  # name the entry as well as the model (prefixed below)
                    raise ValueError(f"entry {ACTOR_ENTRY}: {error}") from None
            elif "policy.pth" in names:
                state = _read_policy_state(archive, path, f"{where} has no {ACTOR_ENTRY}; reading its policy.pth")
                network = ActorNetwork.from_state_dict(state, metadata["activation"])
            else:
                raise ValueError(f"{where} holds no weights ({ACTOR_ENTRY} or policy.pth)")
    except ValueError as error:
        message = str(error)
        raise ValueError(message if message.startswith(where) else f"{where}: {message}") from None
    except _UNREADABLE as error:
        raise ValueError(f"{where}: its weights cannot be read ({one_line_reason(error)})") from None
    check_network_spaces(network, rules, where)
    if metadata.get("ensemble_member_hidden") is not None:  # train/ensemble.py: evaluated member by member
        try:
            network.split_into_towers(metadata["ensemble_member_hidden"])
        except (ValueError, TypeError) as error:
            raise ValueError(f"{where}: its ensemble_member_hidden does not describe its weights ({error})") from None
    return network, metadata, rules


_CACHE: dict[tuple[str, int, int, str | None], tuple[ActorNetwork, dict[str, Any], Rules]] = {}


def _cached_actor(path: Path, rules: Rules | None = None) -> tuple[ActorNetwork, dict[str, Any], Rules]:
    stat = model_file(path).stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, None if rules is None else rules.preset_name)
    if key not in _CACHE:
        _CACHE[key] = load_actor(path, rules)
    return _CACHE[key]


CRITIC_FORMAT = "sixtysix-critic"  # the metadata format of a critic file of train/critic.py
CRITIC_FORMAT_VERSION = 1


def load_critic(path: str | os.PathLike) -> tuple[ActorNetwork, Rules]:
    """A state value as a NumPy MLP with one output, the game points (R16) the player to move expects, and the
    rules it was fitted for: where :class:`QValueNetwork`'s action values are fitted only relative to each other
    (``rollout:leaf_value``). Either the critic of a model zip of ours (the value path of its MaskablePPO policy,
    ``mlp_extractor.value_net`` then ``value_net``; reading ``policy.pth`` needs torch, playing does not), which
    reads the mover's observation, or a critic file of ``python -m train.critic`` (``.npz``), which may read more of
    a sampled world. The network's ``inputs`` names what it reads (:mod:`sixtysix_env.core.critic_inputs`)."""
    from sixtysix_env.core.critic_inputs import critic_input_size

    path = Path(path)
    critic, rules, where = _load_critic_file(path) if path.suffix == ".npz" else _load_ppo_critic(path)
    if critic.input_size != critic_input_size(critic.inputs) or critic.output_size != 1:
        raise ValueError(f"{where} maps {critic.input_size} inputs to {critic.output_size} values; its inputs "
                         f"{critic.inputs!r} are {critic_input_size(critic.inputs)} values and a critic gives one")
    return critic, rules


def _load_ppo_critic(path: Path) -> tuple[ActorNetwork, Rules, str]:
    """The value path of a model zip's MaskablePPO policy; it reads the mover's observation."""
    where = f"PPO model {str(path)!r}"
    metadata = read_model_metadata(path)
    rules = check_metadata(metadata, where)
    # train/vector_ppo.py trains a critic of its own (checkpoint.pt) and leaves the zip's value network as its start
    # model's: read as this model's critic, it gave that model's values. Its models before the flag say so in
    # "training".
    if metadata.get("value_net_trained") is False or str(metadata.get("training", "")).startswith("vector PPO"):
        raise ValueError(f"{where}: its value network was not trained with its policy (train/vector_ppo.py keeps "
                         "its critic in the run's checkpoint.pt), so it is no critic of this model")
    try:
        with zipfile.ZipFile(path) as archive:
            if "policy.pth" not in archive.namelist():
                raise ValueError(f"{where} holds no policy.pth, so no critic")
            state = _read_policy_state(archive, path, f"{where}: reading its critic")
        critic = ActorNetwork(sb3_mlp_layers(state, "value"), metadata["activation"])
    except ValueError as error:
        message = str(error)
        raise ValueError(message if message.startswith(where) else f"{where}: its critic: {message}") from None
    except _UNREADABLE as error:
        raise ValueError(f"{where}: its critic cannot be read ({one_line_reason(error)})") from None
    critic.inputs = "observation"
    return critic, rules, where


def _load_critic_file(path: Path) -> tuple[ActorNetwork, Rules, str]:
    """A critic file of ``python -m train.critic``: its format and input set checked."""
    from sixtysix_env.core.critic_inputs import check_critic_inputs

    where = f"critic {str(path)!r}"
    if not path.is_file():
        raise FileNotFoundError(f"{where} not found")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{where} cannot be read: it is not an .npz archive")
    try:
        critic, metadata = ActorNetwork.load_npz(path)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    except _UNREADABLE as error:
        raise ValueError(f"{where} cannot be read ({one_line_reason(error)})") from None
    if metadata.get("format") != CRITIC_FORMAT:
        raise ValueError(f"{where} is not a sixtysix critic (its metadata has format {metadata.get('format')!r})")
    version = metadata.get("format_version")
    if type(version) is not int or version > CRITIC_FORMAT_VERSION:
        raise ValueError(f"{where} has critic format version {version!r}; this code reads up to "
                         f"{CRITIC_FORMAT_VERSION}")
    try:
        inputs = check_critic_inputs(metadata.get("inputs"))
        rules = Rules.from_dict(metadata.get("rules"))  # none: from_dict names what it got, not a bare key
    except (ValueError, TypeError) as error:
        raise ValueError(f"{where}: unusable metadata: {error}") from None
    critic.inputs = inputs
    return critic, rules, where


def network_path_of_alias(path: str | os.PathLike, agents: tuple[str, ...] = ("ppo", "suit")) -> str | os.PathLike:
    """The model path behind an alias of a network agent (``ppo_ensemble``, ``suit_ensemble``: a spec
    ``ppo:path=...`` or ``suit:path=...`` and nothing else, of the ``agents`` asked for); any other name is returned
    as it is."""
    from .registry import ALIASES, parse_spec

    if str(path) in ALIASES:
        name, params = parse_spec(ALIASES[str(path)])
        if name in agents and set(params) == {"path"}:
            return str(params["path"])
    return path


class QValueNetwork:
    """A network fitted to action values (``sixtysix distill`` with ``fit.target: q``): its logits times the
    ``q_temperature`` of its metadata are game points per action (R16), centred over the legal actions. Used as
    the prior of a search (``rollout:prior=PATH``) and as the values of an improvement step (``fit.values_model``);
    a model without ``q_temperature`` (a policy, not values) is refused by name. Suit-network weights files
    (``A.npz`` or ``A.npz+B.npz+...``, :mod:`agents.suit`) are q networks too, their temperature in their headers;
    the alias of a network agent names its files (``suit_ensemble``, ``ppo_ensemble``)."""

    def __init__(self, path: str | os.PathLike, where: str = "q network"):
        from .suit import is_suit_spec, load_suit_networks, suit_paths, suit_q_temperature

        if not isinstance(path, (str, os.PathLike)):  # a spec's prior=false or prior=3 arrives as a bool or number
            raise ValueError(f"{where} must be a network file or alias (or none), got {path!r}")
        path = network_path_of_alias(path)
        if is_suit_spec(path):
            paths = suit_paths(path)
            try:
                self.network, self.rules = load_suit_networks(paths)
                self.temperature = suit_q_temperature(paths)
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
        else:
            try:
                model_path = model_file(path)
            except (ValueError, FileNotFoundError) as error:  # a ValueError naming ``where``, as callers catch
                raise ValueError(f"{where}: {error}") from None
            self.network, metadata, self.rules = _cached_actor(model_path)
            temperature = metadata.get("q_temperature")
            if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or temperature <= 0:
                raise ValueError(f"{where}: {str(path)!r} was not fitted with fit.target: q (its metadata has no "
                                 "q_temperature)")
            self.temperature = float(temperature)
        self._encoder = InfosetEncoder(self.rules, history=reads_history(self.network))

    def values_of_observations(self, observations: Any, masks: np.ndarray, block: int = 65536) -> np.ndarray:
        """(N, NUM_ACTIONS) float32 game points; NaN where ``masks`` is false. ``observations`` may be any rows
        indexable by slices (a float array or packed labels)."""
        rows = len(masks)
        logits = (np.concatenate([self.network.logits(observations[start:start + block])
                                  for start in range(0, rows, block)]) if rows else np.zeros(masks.shape))
        return np.where(masks, logits * self.temperature, np.nan).astype(np.float32)

    def best_values(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(N,) float64: the game points of each row's best action among those ``masks`` allows, as the network
        gives them (not centred: the level is never fitted, so only rows of one decision compare)."""
        return np.where(masks, self.network.logits(observations) * self.temperature, -np.inf).max(axis=1)

    def values(self, infoset: InformationSet) -> dict[int, float]:
        """Game points of each legal action of ``infoset``, centred over them."""
        refuse_other_rules("q network", self.rules, infoset.rules)
        logits = self.network.logits(self._encoder.encode(infoset))
        legal = infoset.legal_actions
        centre = float(np.mean([logits[action] for action in legal]))
        return {action: (float(logits[action]) - centre) * self.temperature for action in legal}


# ---------------------------------------------------------------------------------------------- the agent
PHASE2_MODES = ("policy", "solver", "endgame", "exhausted")


def delegated(infoset: InformationSet, mode: str) -> bool:
    """Whether a policy played in ``mode`` (:data:`PHASE2_MODES`) hands this decision to the exact search:
    ``solver`` from R8 on, ``endgame`` from the talon's last trick on, ``exhausted`` only in a phase 2 after the
    talon's exhaustion (R8 with the talon open to its end: both hands are known, so the search is exact and nothing
    is sampled), ``policy`` never."""
    if mode == "policy":
        return False
    if mode == "exhausted":
        return talon_exhausted(infoset)
    return is_phase2(infoset) or (mode == "endgame" and on_last_talon_trick(infoset))


class PolicyAgent(Agent):
    """Plays a masked policy network on the observation of its own seat.

    ``phase2="solver"`` makes it a hybrid: once R8 applies (talon closed or exhausted) it hands the decisions to
    the ``heuristic`` agent, which plays them with the exact solver (:mod:`agents.solver`); ``phase2="endgame"``
    hands over one trick earlier, from the talon's last trick (R7), which the heuristic searches exactly through
    into phase 2; ``phase2="exhausted"`` hands over only a phase 2 after the talon's exhaustion, where both hands
    are known and the search is exact (not after a closing, R10, where the heuristic samples worlds: a diagnostic of
    what the network loses where nothing is hidden; :func:`delegated`). A model trained with ``env.phase2: solver``
    or ``endgame`` never learned those decisions, so its metadata names the mode and :class:`PpoAgent` plays it that
    way by default.
    """

    name = "policy"

    def __init__(self, network: ActorNetwork, rules: Rules, deterministic: bool = True, seed: int | None = None,
                 where: str = "policy", phase2: str = "policy"):
        if phase2 not in PHASE2_MODES:
            raise ValueError(f"phase2 must be one of {', '.join(PHASE2_MODES)}, got {phase2!r}")
        if phase2 != "policy" and rules.players == 3:  # the two-player heuristic would be asked a three-player deal
            raise ValueError(f"phase2={phase2} hands a phase 2 (R8) to the exact search, and the three-player game "
                             "(R21) has no talon to close or exhaust: use phase2=policy")
        if not isinstance(deterministic, bool):  # a spec's "no" or "0" would otherwise count as true
            raise ValueError(f"deterministic must be true or false, got {deterministic!r}")
        super().__init__(seed)
        self.network = network
        self.rules = rules
        self._accepted_rules = rules  # the last rules a deal was checked against (act checks a new object once)
        self.deterministic = deterministic
        self.phase2 = phase2
        self._where = where
        self._encoder = InfosetEncoder(rules, history=reads_history(network))
        self._phase2_agent = None
        if phase2 != "policy":
            from .rule_based import HeuristicAgent

            self._phase2_agent = HeuristicAgent(seed=seed)

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        if self._phase2_agent is not None:
            self._phase2_agent.seed(seed)

    def start_deal(self, player: int, rules: Rules) -> None:
        self._check_rules(rules)
        if self._phase2_agent is not None:
            self._phase2_agent.start_deal(player, rules)

    def _check_rules(self, rules: Rules) -> None:
        if not plays_like(self.rules, rules):  # what no input reads aside (the match scoring, R17 Schneider, R18)
            differing = differing_switches(self.rules, rules, ignore=unread_switches(self.rules))
            raise ValueError(
                f"{self._where} was trained for rules {rules_name(self.rules)!r} and cannot play {rules_name(rules)!r} "
                f"(switches differ: {', '.join(differing)}); train a model for those rules"
            )
        self._accepted_rules = rules

    def act(self, infoset: InformationSet) -> int:
        if infoset.rules is not self.rules and infoset.rules is not self._accepted_rules:
            self._check_rules(infoset.rules)
        legal = legal_actions_to_choose(infoset)
        if len(legal) == 1:
            return legal[0]
        if self._phase2_agent is not None and delegated(infoset, self.phase2):
            return self._phase2_agent.act(infoset)  # the exact search plays the endgame
        logits = self.network.logits(self._encoder.encode(infoset))
        return masked_choice(logits, legal, self.deterministic, self.rng)


class PpoAgent(PolicyAgent):
    """A trained PPO model (``ppo`` = ``models/ppo_standard.zip``; ``ppo:path=FILE`` another one).

    ``deterministic`` plays the most likely legal action (default); false samples from the policy.
    ``phase2``: ``policy`` (the network plays every decision), ``solver`` or ``endgame`` (the hybrids of
    :class:`PolicyAgent`);
    by default the mode the model was trained in (its metadata's ``phase2``; ``policy`` for older models).
    ``path`` may also name a plain MaskablePPO zip whose spaces match the game (:func:`load_plain_maskable_ppo`);
    ``rules`` (a preset name) says which rules such a model plays, default ``standard`` (our models carry theirs).
    """

    name = "ppo"

    def __init__(self, seed: int | None = None, path: str | None = None, deterministic: bool = True,
                 phase2: str | None = None, rules: str | None = None):
        model_path = model_file(path) if path is not None else DEFAULT_MODEL
        wanted = None
        if rules is not None:
            if not isinstance(rules, str) or rules not in ALL_PRESET_NAMES:
                raise ValueError(f"rules must be a preset name ({', '.join(ALL_PRESET_NAMES)}), got {rules!r}")
            wanted = Rules.preset(rules)
        network, metadata, rules_of_model = _cached_actor(model_path, wanted)
        if wanted is not None and rules_of_model != wanted:
            raise ValueError(f"PPO model {str(model_path)!r} was trained for rules "
                             f"{rules_of_model.preset_name or 'a custom rule set'!r}, not {rules!r}")
        rules = rules_of_model
        if phase2 is None:
            phase2 = metadata.get("phase2", "policy")
        super().__init__(network, rules, deterministic=deterministic, seed=seed,
                         where=f"PPO model {str(model_path)!r}", phase2=phase2)
        self.path = model_path
        self.metadata = metadata


__all__ = [
    "load_plain_maskable_ppo", "ACTOR_ENTRY", "ActorNetwork", "DEFAULT_MODEL", "InfosetEncoder", "METADATA_ENTRY", "PHASE2_MODES", "PolicyAgent", "PpoAgent",
    "delegated",
    "add_metadata_to_zip", "check_metadata", "encode_infoset", "load_actor", "masked_choice", "model_metadata",
    "MODEL_METADATA_KEYS", "observation_layout_digest", "read_model_metadata", "read_policy_state", "reads_history",
]
