"""A network that shares its weights over the four suits, as an agent: spec ``suit:path=FILE``.

The game's suits are interchangeable but for trump (R1, R5). An MLP over the whole observation has to learn what a
card is worth once per suit; this network encodes every suit with one shared encoder (the suit's six cards in each
card piece of the observation, whether it is trump, the marriages announced in it, and the public pieces), pools
the three plain suits by a sum next to the trump suit, and scores each suit's cards and marriages with another
shared head; exchange, close, declare, draw and pass are scored from the pooled context. It is equivariant under
any permutation of the plain suits by construction. ``train/suit_network.py`` fits it (docs/training.md,
"Session 14"); playing needs only NumPy.

The weights file is an ``.npz`` holding the arrays by the torch module's parameter names (further rounds of
exchange between the suits, ``mix`` and ``recombine`` for round 2, ``mix3`` and ``recombine3`` for round 3, ..., when
fitted with ``--rounds N``) and a header: ``format``, ``rules`` and the fit's ``provenance``; a file of another kind
is refused by name.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sixtysix_env.actions import CLOSE, EXCHANGE, MARRY_BASE, NUM_ACTIONS
from sixtysix_env.cards import NUM_CARDS
from sixtysix_env.fileio import read_npz_arrays
from sixtysix_env.observation import (EXTENDED_OBSERVATION_SIZE, HISTORY_LAYOUT, HISTORY_SLICES, OBSERVATION_LAYOUT,
                                     OBSERVATION_SIZE, OBSERVATION_SLICES, TALON_SCALE)
from sixtysix_env.rules import Rules
from sixtysix_env.schema import loads_json

from .ppo import PolicyAgent, reads_history

SUITS, RANKS = 4, NUM_CARDS // 4
CARD_PIECES = tuple(piece.name for piece in OBSERVATION_LAYOUT if piece.kind == "cards")
SUIT_FLAG_PIECES = ("trump_suit", "marriages_by_me", "marriages_by_opponent")  # one flag per suit each
PUBLIC = slice(OBSERVATION_SLICES["stage"].start, OBSERVATION_SLICES["opponent_game_points"].stop)
PUBLIC_SIZE = PUBLIC.stop - PUBLIC.start
SUIT_INPUT = len(CARD_PIECES) * RANKS + len(SUIT_FLAG_PIECES) + PUBLIC_SIZE
HISTORY_CARD_PIECES = tuple(piece.name for piece in HISTORY_LAYOUT)  # all card planes
HISTORY_SUIT_INPUT = SUIT_INPUT + len(HISTORY_CARD_PIECES) * RANKS  # a suit's input with the history planes
OTHER_ACTIONS = NUM_ACTIONS - MARRY_BASE - 2 * SUITS  # exchange, close, declare, draw, pass
WEIGHTS_FORMAT = "sixtysix-suit-network-1"
PRECISIONS = ("float32", "int8")  # the suit agent's weights as fitted, or rounded (agents/suit_int8.py)
PARAMETERS = ("encode.0", "encode.2", "combine.0", "combine.2", "suit_head.0", "suit_head.2", "other_head")


def round_layers(round_number: int) -> tuple[str, str]:
    """The names of the two layer groups of exchange round ``round_number`` >= 2 (train/suit_network.py ``--rounds``):
    every suit re-encoded knowing the last context (``mix``), pooled again (``recombine``). Round 2 keeps the
    names ``suit_two`` was saved with."""
    suffix = "" if round_number == 2 else str(round_number)
    return f"mix{suffix}", f"recombine{suffix}"


def round_parameters(round_number: int) -> tuple[str, ...]:
    """The parameter prefixes of exchange round ``round_number`` >= 2 (each with ``.weight`` and ``.bias``)."""
    mix, recombine = round_layers(round_number)
    return f"{mix}.0", f"{recombine}.0", f"{recombine}.2"


def rounds_of(weights) -> int:
    """How many rounds of exchange between the suits a set of weights holds: 1 plus every round whose first layer
    is present, counting up from 2."""
    rounds = 1
    while f"{round_parameters(rounds + 1)[0]}.weight" in weights:
        rounds += 1
    return rounds


assert all(OBSERVATION_SLICES[name].stop - OBSERVATION_SLICES[name].start == SUITS for name in SUIT_FLAG_PIECES)
assert PUBLIC.stop == OBSERVATION_SIZE


def reads_history_planes(weights) -> bool:
    """Whether a suit network's weights (by parameter name) were fitted with the history planes (``--history``):
    its suit encoder then takes ``HISTORY_SUIT_INPUT`` inputs."""
    return weights["encode.0.weight"].shape[1] == HISTORY_SUIT_INPUT


def _suit_input_index(history: bool = False) -> np.ndarray:
    """(4, SUIT_INPUT): which observation entry each suit's input reads: its six cards (R1 card id
    ``6 * suit + rank``) in every card piece, its three flags, then the public pieces (the same for every suit);
    with ``history`` (4, HISTORY_SUIT_INPUT): then its six cards in each history plane, which follow the
    observation (:data:`sixtysix_env.observation.HISTORY_LAYOUT`)."""
    index = np.empty((SUITS, HISTORY_SUIT_INPUT if history else SUIT_INPUT), dtype=np.int64)
    for suit in range(SUITS):
        cards = [OBSERVATION_SLICES[name].start + RANKS * suit + rank for name in CARD_PIECES for rank in range(RANKS)]
        flags = [OBSERVATION_SLICES[name].start + suit for name in SUIT_FLAG_PIECES]
        led = [HISTORY_SLICES[name].start + RANKS * suit + rank
               for name in HISTORY_CARD_PIECES for rank in range(RANKS)]
        index[suit] = cards + flags + list(range(PUBLIC.start, PUBLIC.stop)) + (led if history else [])
    return index


SUIT_INPUT_INDEX = _suit_input_index()
HISTORY_SUIT_INPUT_INDEX = _suit_input_index(history=True)


def suit_inputs(observations, history: bool = False):
    """(B, 4, SUIT_INPUT) per-suit inputs of observations (B, OBSERVATION_SIZE), a NumPy array or a torch tensor
    (the training builds the same network in torch, train/suit_network.py); with ``history`` (B, 4,
    HISTORY_SUIT_INPUT) of observations followed by the history planes (B, EXTENDED_OBSERVATION_SIZE)."""
    return observations[:, HISTORY_SUIT_INPUT_INDEX if history else SUIT_INPUT_INDEX]


def check_history_input(observation, history: bool) -> None:
    """Refuse, by name, observations without the history planes for a network that reads them."""
    if history and np.shape(observation)[-1] != EXTENDED_OBSERVATION_SIZE:
        raise ValueError(f"this suit network reads the history planes: it needs the observation followed by them "
                         f"({EXTENDED_OBSERVATION_SIZE} floats, sixtysix_env.observation.encode_extended_infoset), "
                         f"got {np.shape(observation)[-1]}")


def _acts_on_suits(parameter: str) -> bool:
    """Whether a layer runs on each suit (input (..., 4, in)) rather than on the pooled context (input (..., in))."""
    return parameter.startswith(("encode.", "mix", "suit_head."))


def _forward_layout(weight_sets: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Weights by parameter name (torch's (out, in) layout) as :func:`_forward` multiplies them: one network's as
    (in, out); several networks of one architecture stacked on a leading member axis, shaped once here to broadcast
    against the suit axis, so a layer is one ``inputs @ weight + bias`` either way."""
    if len(weight_sets) == 1:
        return {name: np.ascontiguousarray(array.T if name.endswith(".weight") else array)
                for name, array in weight_sets[0].items()}
    layout = {}
    for name in weight_sets[0]:
        stacked = np.stack([weights[name].T if name.endswith(".weight") else weights[name][None]
                            for weights in weight_sets])  # (M, in, out) or (M, 1, out)
        layout[name] = np.ascontiguousarray(stacked[:, None] if _acts_on_suits(name) else stacked)
    return layout


def _forward(layout: dict[str, np.ndarray], rounds: int, observation: np.ndarray, history: bool = False) -> np.ndarray:
    """Logits of observations (N, OBSERVATION_SIZE): (N, 37) for one network's :func:`_forward_layout`, (M, N, 37)
    for M stacked networks (one pass costs about what one network costs, since a decision's batch is tiny); with
    ``history`` the networks read the history planes after the observation (N, EXTENDED_OBSERVATION_SIZE)."""

    def layer(name: str, inputs: np.ndarray, relu: bool = True) -> np.ndarray:
        out = inputs @ layout[f"{name}.weight"] + layout[f"{name}.bias"]
        return np.maximum(out, 0.0) if relu else out

    trump = observation[:, OBSERVATION_SLICES["trump_suit"]][:, :, None]  # (N, 4, 1)
    public = observation[:, PUBLIC]

    def pooled_context(suits: np.ndarray, layers: str) -> np.ndarray:  # trump suit, plain suits summed, public
        trump_suit, plain_suits = (suits * trump).sum(-2), (suits * (1 - trump)).sum(-2)
        public_rows = np.broadcast_to(public, (*trump_suit.shape[:-1], PUBLIC_SIZE))  # ([M,] N, public)
        pooled = np.concatenate([trump_suit, plain_suits, public_rows], axis=-1)
        return layer(f"{layers}.2", layer(f"{layers}.0", pooled))  # ([M,] N, context)

    def beside_context(suits: np.ndarray, context: np.ndarray) -> np.ndarray:  # ([M,] N, 4, width + context)
        return np.concatenate([suits, np.broadcast_to(context[..., None, :], (*suits.shape[:-1], context.shape[-1]))],
                              axis=-1)

    encoded = layer("encode.2", layer("encode.0", suit_inputs(observation, history)))  # ([M,] N, 4, width)
    context = pooled_context(encoded, "combine")
    for round_number in range(2, rounds + 1):  # each suit knows the others' summary: a residual update,
        mix, recombine = round_layers(round_number)  # pooled again
        encoded = encoded + layer(f"{mix}.0", beside_context(encoded, context))
        context = pooled_context(encoded, recombine)
    per_suit = layer("suit_head.2", layer("suit_head.0", beside_context(encoded, context)),
                     relu=False)  # ([M,] N, 4, 6 cards + queen and king marriages)
    rows = per_suit.shape[:-2]
    return np.concatenate([per_suit[..., :RANKS].reshape(*rows, NUM_CARDS),
                           per_suit[..., RANKS:].reshape(*rows, 2 * SUITS),
                           layer("other_head", context, relu=False)], axis=-1)


def _as_batch(observation) -> np.ndarray:
    observation = np.asarray(observation, dtype=np.float32)
    return observation[None] if observation.ndim == 1 else observation


def check_layers(weights: dict[str, np.ndarray], rounds: int) -> None:
    """Refuse, naming the layer, weights (by parameter name, torch's (out, in) layout; every layer of ``rounds``
    present) that :func:`_forward` could not multiply as fitted: a weight and bias that do not fit, a layer whose
    input width is not what the layers before it give, an output width the network's actions do not need, values
    that are not numbers, or NaN / infinite values (NaN logits would pick the first action). Checked at load, so
    a bad file fails there, by name, and never reaches a compiled kernel (agents/suit_int8.py)."""

    def checked(name: str, inputs: int, source: str, outputs: int | None = None, needed: str = "") -> int:
        """Layer ``name``'s output width, after checking it against ``inputs`` (what ``source`` gives)."""
        weight, bias = weights[f"{name}.weight"], weights[f"{name}.bias"]
        if weight.dtype.kind not in "fiu" or bias.dtype.kind not in "fiu":
            raise ValueError(f"layer {name}: holds {weight.dtype} / {bias.dtype} values, not numbers")
        if weight.ndim != 2 or bias.shape != weight.shape[:1]:
            raise ValueError(f"layer {name}: a weight of shape {weight.shape} and a bias of shape {bias.shape} "
                             "do not fit (expected (outputs, inputs) and (outputs,))")
        if weight.shape[1] != inputs:
            raise ValueError(f"layer {name}: takes {weight.shape[1]} inputs, expected {inputs}: {source}")
        if outputs is not None and weight.shape[0] != outputs:
            raise ValueError(f"layer {name}: gives {weight.shape[0]} outputs, expected {outputs}: {needed}")
        if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
            raise ValueError(f"layer {name}: its weights hold NaN or infinite values")
        return weight.shape[0]

    def pooled_context(layers: str, width: int) -> int:  # the context width of a pooling pair of layers
        pooled = checked(f"{layers}.0", 2 * width + PUBLIC_SIZE, "the pooled trump suit and plain suits "
                         f"(2 x {width}) and the public pieces ({PUBLIC_SIZE})")
        return checked(f"{layers}.2", pooled, f"the outputs of {layers}.0")

    def beside(width: int, context: int) -> str:
        return f"a suit's encoding ({width}) beside the context ({context})"

    encoder_input = weights["encode.0.weight"].shape[-1] if weights["encode.0.weight"].ndim else None
    suit_input = encoder_input if encoder_input in (SUIT_INPUT, HISTORY_SUIT_INPUT) else SUIT_INPUT
    width = checked("encode.0", suit_input, f"a suit's inputs ({SUIT_INPUT}, or {HISTORY_SUIT_INPUT} with the "
                    "history planes)")
    width = checked("encode.2", width, "the outputs of encode.0")
    context = pooled_context("combine", width)
    for round_number in range(2, rounds + 1):
        mix, recombine = round_layers(round_number)
        checked(f"{mix}.0", width + context, beside(width, context), width,
                "its outputs are added to the suit's encoding")
        context = pooled_context(recombine, width)
    head = checked("suit_head.0", width + context, beside(width, context))
    checked("suit_head.2", head, "the outputs of suit_head.0", RANKS + 2, f"a suit's {RANKS} cards and 2 marriages")
    checked("other_head", context, "the context", OTHER_ACTIONS,
            "exchange, close, declare, draw and pass")


class SuitNetwork:
    """The network's forward pass in NumPy (float32): ``logits(observation)`` -> (37,)."""

    def __init__(self, weights: dict[str, np.ndarray]):
        self.weights = {name: np.asarray(array, dtype=np.float32) for name, array in weights.items()}
        self.rounds = rounds_of(self.weights)  # fitted with --rounds N
        self.history = reads_history_planes(self.weights)
        self._layout = _forward_layout([self.weights])

    @property
    def architecture(self) -> tuple:
        """What decides whether two networks can be stacked: their rounds and every parameter's shape."""
        return self.rounds, tuple(sorted((name, array.shape) for name, array in self.weights.items()))

    @classmethod
    def load(cls, path: Path) -> tuple["SuitNetwork", Rules]:
        """The network and the rules it was fitted for; a damaged file, or one of another kind, is refused by name
        (``ValueError``) when it is loaded, not at the first move."""
        where = repr(str(path))
        not_weights = f"{where} is not a suit-network weights file"
        arrays = read_npz_arrays(path, not_weights)
        if "header" not in arrays:
            raise ValueError(f"{not_weights}: it has no 'header' entry (save_suit_weights writes one)")
        try:
            header = loads_json(str(arrays.pop("header")), "header")  # strict, and never a RecursionError
        except ValueError as error:
            raise ValueError(f"{not_weights}: its header is not JSON ({error})") from None
        if not isinstance(header, dict):
            raise ValueError(f"{not_weights}: its header must be a JSON object, got a {type(header).__name__}")
        if header.get("format") != WEIGHTS_FORMAT:
            raise ValueError(f"{not_weights} (format {header.get('format')!r}, expected {WEIGHTS_FORMAT!r})")
        if "rules" not in header:
            raise ValueError(f"{where}: its header has no 'rules' (the rules the network was fitted for)")
        try:
            rules = Rules.from_dict(header["rules"])
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: its header's rules are not usable: {error}") from None
        expected = PARAMETERS + tuple(name for round_number in range(2, rounds_of(arrays) + 1)
                                      for name in round_parameters(round_number))
        expected_arrays = {f"{name}.{kind}" for name in expected for kind in ("weight", "bias")}
        missing = [f"{name}.{kind}" for name in expected for kind in ("weight", "bias")
                   if f"{name}.{kind}" not in arrays]
        unexpected = sorted(set(arrays) - expected_arrays)
        if unexpected:  # a renamed or stray layer: the rounds counted from the names would build another network
            raise ValueError(f"{where} holds arrays no suit network of {rounds_of(arrays)} round(s) has: "
                             f"{', '.join(unexpected[:6])}{', ...' if len(unexpected) > 6 else ''}")
        encoder = arrays.get("encode.0.weight")  # absent from a file that lacks layers: named in `missing`
        encoder_input = encoder.shape[1] if encoder is not None and encoder.ndim == 2 else None
        if missing or encoder_input not in (SUIT_INPUT, HISTORY_SUIT_INPUT):
            raise ValueError(f"{where} does not hold a suit network for this observation layout "
                             f"(missing {missing or 'nothing'}; encoder input {encoder_input}, this code "
                             f"{SUIT_INPUT}, or {HISTORY_SUIT_INPUT} with the history planes)")
        try:
            check_layers(arrays, rounds_of(arrays))
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
        return cls(arrays), rules

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """(37,) logits of one observation, or (N, 37) of a batch (N, 281); (N, 329) for a network that reads the
        history planes (``history``)."""
        check_history_input(observation, self.history)
        logits = _forward(self._layout, self.rounds, _as_batch(observation), self.history)
        return logits[0] if np.ndim(observation) == 1 else logits


def save_suit_weights(path: Path, weights: dict[str, np.ndarray], rules: Rules,
                      provenance: dict | None = None) -> None:
    """Write the weights (by parameter name) and a header atomically as :class:`SuitNetwork` reads them;
    ``provenance`` (what it was fitted on, how) goes into the header as it is (:func:`suit_header` reads it)."""
    import io

    from sixtysix_env.fileio import write_bytes_atomic

    buffer = io.BytesIO()
    header = json.dumps({"format": WEIGHTS_FORMAT, "rules": rules.to_dict(), "provenance": provenance or {}})
    np.savez(buffer, header=np.array(header), **{name: np.asarray(array) for name, array in weights.items()})
    write_bytes_atomic(path, buffer.getvalue())


def suit_header(path: Path) -> dict:
    """The header of a weights file: ``format``, ``rules`` and ``provenance`` (labels, deals, seed, epochs and the
    fit's last held-out figures of the run that wrote it)."""
    with np.load(path, allow_pickle=False) as archive:
        return loads_json(str(archive["header"]), "header")


class SuitEnsemble:
    """Several suit networks as one: ``logits`` is the mean of theirs (an ensemble; its members fitted with other
    seeds or labels make partly independent errors, docs/training.md). Members of one architecture run stacked, in one
    forward pass."""

    def __init__(self, members: list[SuitNetwork]):
        self.members = members
        groups: dict[tuple, list[SuitNetwork]] = {}
        for member in members:
            groups.setdefault(member.architecture, []).append(member)
        self._groups = [(group[0].rounds, group[0].history, _forward_layout([member.weights for member in group]))
                        for group in groups.values()]
        self.history = any(member.history for member in members)  # then every member is handed the planes

    def logits(self, observation: np.ndarray) -> np.ndarray:
        check_history_input(observation, self.history)
        batch = _as_batch(observation)
        total = sum(_forward(layout, rounds, batch, history).reshape(-1, len(batch), NUM_ACTIONS).sum(0)
                    for rounds, history, layout in self._groups)  # each (M, N, 37) or (N, 37)
        logits = total / len(self.members)
        return logits[0] if np.ndim(observation) == 1 else logits


def suit_paths(spec: str | Path) -> list[Path]:
    """The weights files of a path spec: ``A`` or ``A+B+...`` (an ensemble)."""
    return [Path(part) for part in str(spec).split("+")]


def is_suit_spec(spec: str | Path) -> bool:
    """Whether a path spec names suit-network weights files (``.npz``) rather than a MaskablePPO model (``.zip``)."""
    return all(part.suffix == ".npz" for part in suit_paths(spec))


def load_suit_networks(paths: list[Path]) -> tuple["SuitNetwork | SuitEnsemble", Rules]:
    """One network, or the ensemble of several (refused when fitted for different rules), and their rules."""
    loaded = [SuitNetwork.load(part) for part in paths]
    rules = loaded[0][1]
    if any(other != rules for _, other in loaded[1:]):
        raise ValueError(f"the suit networks {'+'.join(map(str, paths))!r} were fitted for different rules")
    return (loaded[0][0] if len(loaded) == 1 else SuitEnsemble([member for member, _ in loaded])), rules


def suit_q_temperature(paths: list[Path]) -> float:
    """Game points per unit of logit of the networks' q target (``fit.temperature``, from their headers); refused
    when the files lack it or disagree."""
    temperatures = {suit_header(part).get("provenance", {}).get("temperature") for part in paths}
    usable = all(isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
                 for value in temperatures)  # JSON true would pass as 1
    if len(temperatures) != 1 or not usable:
        raise ValueError(f"the suit networks {'+'.join(map(str, paths))!r} do not record one q temperature in their "
                         f"headers (found {sorted(map(str, temperatures))}): refit with train/suit_network.py")
    return float(temperatures.pop())


class ActionBias:
    """A network whose value of some actions is moved by a fixed number of game points: ``logits`` are the
    network's plus ``offsets`` (37,) plus ``trump_offset`` on playing any card of the trump suit (R5; read from the
    observation), all in its logit units (game points / the q temperature)."""

    def __init__(self, network, offsets: np.ndarray, trump_offset: float = 0.0):
        self.network = network
        self.history = reads_history(network)
        self.offsets = np.asarray(offsets, dtype=np.float32)
        self.trump_offset = np.float32(trump_offset)

    def logits(self, observation: np.ndarray) -> np.ndarray:
        logits = self.network.logits(observation) + self.offsets
        if self.trump_offset:
            trump = np.asarray(observation, dtype=np.float32)[..., OBSERVATION_SLICES["trump_suit"]]
            logits[..., :NUM_CARDS] += self.trump_offset * np.repeat(trump, RANKS, axis=-1)  # card id 6 * suit + rank
        return logits


# Where a late specialist plays (``suit:...,late=``) by default: phase-1 decisions with 2-6 talon cards (R4), where
# the networks choose worst (docs/training.md, "Session 13" and "Session 26"); the same window as a label run's
# ``label.talon_window: [2, 6]`` (sixtysix_env.core.labels.in_talon_window, on the compiled state).
LATE_TALON_WINDOW = (2, 6)
_TALON_SIZE_AT = OBSERVATION_SLICES["talon_size"].start
_PHASE2_AT = OBSERVATION_SLICES["phase2"].start


def in_late_window(observation, min_talon: int, max_talon: int) -> np.ndarray:
    """Whether each observation is a phase-1 decision (talon open: neither closed, R10, nor used up, R7; the
    ``phase2`` flag clear) whose talon size (R4) is from ``min_talon`` to ``max_talon``: a bool, or (N,) bools.
    The one reading of a talon window from observations: the fit's label windows use it too. Only the two columns
    are read, so rows packed as codes (``train.recorded.PackedObservations``) are not unpacked whole."""
    if not hasattr(observation, "shape"):  # a plain list of floats
        observation = np.asarray(observation, dtype=np.float32)
    talon = np.rint(np.asarray(observation[..., _TALON_SIZE_AT], dtype=np.float32) * TALON_SCALE)
    return (np.asarray(observation[..., _PHASE2_AT]) < 0.5) & (talon >= min_talon) & (talon <= max_talon)


_CLOSED_AT = (OBSERVATION_SLICES["closed_by_me"].start, OBSERVATION_SLICES["closed_by_opponent"].start)


def after_closing(observation: np.ndarray) -> np.ndarray:
    """Whether each observation is a decision after a closing (R10; by either player): a bool, or (N,) bools."""
    observation = np.asarray(observation, dtype=np.float32)
    return (observation[..., _CLOSED_AT[0]] > 0.5) | (observation[..., _CLOSED_AT[1]] > 0.5)


class PositionSplit:
    """Two networks as one policy, split by the position: ``special`` at the decisions ``where(observations)``
    names (bools), ``base`` at every other (a specialist fitted to better labels of one part of the deal; still one
    forward pass per decision, no search)."""

    def __init__(self, base, special, where):
        self.base, self.special, self.where = base, special, where
        self.history = reads_history(base) or reads_history(special)

    def logits(self, observation: np.ndarray) -> np.ndarray:
        inside = self.where(observation)
        if np.ndim(observation) == 1:
            return (self.special if inside else self.base).logits(observation)
        logits = self.base.logits(observation)
        if inside.any():
            logits[inside] = self.special.logits(np.asarray(observation)[inside])
        return logits


class TalonWindow(PositionSplit):
    """``late`` at the decisions :func:`in_late_window` names, ``base`` at every other."""

    def __init__(self, base, late, min_talon: int, max_talon: int):
        super().__init__(base, late, lambda observation: in_late_window(observation, min_talon, max_talon))
        self.late, self.min_talon, self.max_talon = late, min_talon, max_talon


def _suit_policy_network(path, precision: str, biases: dict[str, float]):
    """The networks of a path spec as one policy network: at ``precision``, with ``biases`` (game points by
    kind of action; none when all are zero) added to its logits over their q temperature; and their rules."""
    paths = suit_paths(path)
    network, rules = load_suit_networks(paths)
    if precision == "int8":
        from .suit_int8 import QuantizedSuitEnsemble

        network = QuantizedSuitEnsemble(getattr(network, "members", [network]))
    if any(biases.values()):
        temperature = suit_q_temperature(paths)  # game points per logit unit
        offsets = np.zeros(NUM_ACTIONS, dtype=np.float32)
        offsets[CLOSE], offsets[EXCHANGE] = biases["close_bias"] / temperature, biases["exchange_bias"] / temperature
        offsets[MARRY_BASE:MARRY_BASE + 2 * SUITS] = biases["marry_bias"] / temperature
        network = ActionBias(network, offsets, biases["trump_bias"] / temperature)
    return network, rules


class SuitAgent(PolicyAgent):
    """``suit:path=FILE``: a fitted suit network (``train/suit_network.py``) plays every decision; ``path=A+B+...``:
    the mean of several networks' logits (:class:`SuitEnsemble`). ``phase2``: ``policy``; ``solver`` or ``endgame``
    hand the endgame to the exact search, as for ``ppo``. ``close_bias`` / ``exchange_bias`` / ``marry_bias`` /
    ``trump_bias``: game points added to the network's value of closing the talon (R10) / exchanging the trump card
    (R9) / announcing a marriage (R11) / playing a card of the trump suit (R5) wherever legal (0: the network as
    fitted; its labels value a closing by rollouts that solve the closed deal seeing every card). Measured on
    ``suit_pair``, no setting plays better on fresh deals (docs/training.md, "Session 19"). ``precision``:
    ``float32`` (the weights as fitted, NumPy) or ``int8`` (rounded to int8 per output unit, one compiled pass:
    :mod:`agents.suit_int8`, a quarter of the bytes read per decision; a player of its own, measured as such).
    ``late``: ``None``, or the path spec of networks that play the phase-1 decisions (talon open, R7/R10) with
    ``late_min_talon`` to ``late_max_talon`` talon cards (R4; 2-6 by default), ``path``'s networks every other
    (:class:`TalonWindow`; the biases and precision apply to both). ``closed``: ``None``, or the path spec of
    networks that play every decision after a closing (R10, by either player; :func:`after_closing`), the others'
    networks (``late``'s inside its window) every other decision."""

    name = "suit"

    def __init__(self, seed: int | None = None, path: str | None = None, deterministic: bool = True,
                 phase2: str = "policy", close_bias: float = 0.0, exchange_bias: float = 0.0,
                 marry_bias: float = 0.0, trump_bias: float = 0.0, precision: str = "float32",
                 late: str | None = None, late_min_talon: int = LATE_TALON_WINDOW[0],
                 late_max_talon: int = LATE_TALON_WINDOW[1], closed: str | None = None):
        if path is None:
            raise ValueError("suit needs path=FILE: a suit-network weights file (train/suit_network.py)")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        biases = {"close_bias": close_bias, "exchange_bias": exchange_bias, "marry_bias": marry_bias,
                  "trump_bias": trump_bias}
        for key, value in biases.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not -6 <= value <= 6:
                raise ValueError(f"{key} must be a number of game points between -6 and 6, got {value!r}")
        self.paths = suit_paths(path)
        network, rules = _suit_policy_network(path, precision, biases)
        if late is None and (late_min_talon, late_max_talon) != LATE_TALON_WINDOW:  # it would be silently ignored
            raise ValueError("late_min_talon and late_max_talon count only with late=NETWORKS")
        if late is not None:
            for key, value in (("late_min_talon", late_min_talon), ("late_max_talon", late_max_talon)):
                if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= TALON_SCALE:
                    raise ValueError(f"{key} must be a talon size (R4) in 0..{TALON_SCALE}, got {value!r}")
            if late_min_talon > late_max_talon:
                raise ValueError(f"late_min_talon ({late_min_talon}) is above late_max_talon ({late_max_talon})")
            if not is_suit_spec(late):
                raise ValueError(f"late must name suit-network weights files (.npz, joined by '+'), got {late!r}")
            late_network, late_rules = _suit_policy_network(late, precision, biases)
            if late_rules != rules:
                raise ValueError(f"the late networks {late!r} were fitted for other rules than {path!r}")
            network = TalonWindow(network, late_network, late_min_talon, late_max_talon)
        if closed is not None:
            if not is_suit_spec(closed):
                raise ValueError(f"closed must name suit-network weights files (.npz, joined by '+'), got {closed!r}")
            closed_network, closed_rules = _suit_policy_network(closed, precision, biases)
            if closed_rules != rules:
                raise ValueError(f"the closed networks {closed!r} were fitted for other rules than {path!r}")
            network = PositionSplit(network, closed_network, after_closing)
        super().__init__(network, rules, deterministic=deterministic, seed=seed,
                         where=f"suit network {str(path)!r}", phase2=phase2)


__all__ = ["HISTORY_SUIT_INPUT", "HISTORY_SUIT_INPUT_INDEX", "LATE_TALON_WINDOW", "SUIT_INPUT_INDEX", "PositionSplit",
           "SuitAgent", "SuitEnsemble", "SuitNetwork", "TalonWindow", "after_closing", "check_history_input",
           "check_layers",
           "in_late_window", "is_suit_spec", "load_suit_networks", "reads_history_planes", "round_layers",
           "round_parameters", "rounds_of", "save_suit_weights", "suit_header", "suit_inputs", "suit_paths",
           "suit_q_temperature"]
