"""Suit networks with int8 weights, one compiled forward pass: a quarter of the bytes per decision.

A decision's batch is one observation, so a suit network's forward pass is matrix-vector products whose cost is
reading the weights: six float32 members (``suit_pair`` with four more, docs/training.md "Session 23") stream
12.8 MB per decision and miss the 1 ms of issue 12. Here every layer's weights are rounded to int8 with one float32
scale per output unit (symmetric: ``scale = max |w| / 127`` over the unit's inputs), the activations and biases stay
float32, and a numba kernel runs every member's whole forward pass in one call (3.2 MB for the six).

:class:`QuantizedSuitEnsemble` plays in place of :class:`agents.suit.SuitEnsemble` (``suit:path=A+B+...,
precision=int8``). Its logits are exactly those of the same networks with the rounded weights (each weight
``int8 * scale``) through :func:`agents.suit._forward`, up to float rounding (tests/test_suit_int8.py); they
differ from the float32 networks' by the rounding of the weights, so the quantized player is measured as a player of its
own (docs/training.md, "Session 24").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.cards import NUM_CARDS
from sixtysix_env.observation import OBSERVATION_SIZE

from .suit import (OBSERVATION_SLICES, PARAMETERS, PUBLIC, RANKS, SUIT_INPUT_INDEX, SUITS, SuitNetwork, check_layers,
                   round_parameters)

# The order of a member's layers in the packed arrays: agents.suit.PARAMETERS, then each round's three.
_ENCODE0, _ENCODE2, _COMBINE0, _COMBINE2, _HEAD0, _HEAD2, _OTHER = (PARAMETERS.index(name) for name in (
    "encode.0", "encode.2", "combine.0", "combine.2", "suit_head.0", "suit_head.2", "other_head"))
_FIXED_LAYERS = len(PARAMETERS)
_COLUMNS = 4  # a layer's row in the layer table: weight offset, inputs, outputs, scale/bias offset
MAX_WIDTH = 1024  # the widest layer input the kernel's scratch vectors hold


def quantize(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A torch-layout (out, in) float weight as (in, out) int8 and one float32 scale per output unit."""
    columns = np.asarray(weight, dtype=np.float32).T
    scales = np.abs(columns).max(axis=0) / 127.0
    scales[scales == 0] = 1.0  # an all-zero unit: any scale reproduces it
    return np.round(columns / scales).astype(np.int8), scales.astype(np.float32)


def layer_names(rounds: int) -> list[str]:
    """A member's layers in packed order: ``PARAMETERS``, then rounds 2..``rounds`` (mix, recombine .0 and .2)."""
    return list(PARAMETERS) + [name for round_number in range(2, rounds + 1) for name in round_parameters(round_number)]


class QuantizedSuitEnsemble:
    """The mean logits of suit networks (one or more, any mix of rounds) with int8 weights (module docstring)."""

    def __init__(self, members: list[SuitNetwork]):
        if not members:
            raise ValueError("a quantized suit ensemble needs at least one network")
        if any(member.history for member in members):
            raise ValueError("precision=int8 does not take suit networks that read the history planes: use float32")
        self.members = members
        weights, vectors_scale, vectors_bias, table, rounds = [], [], [], [], []
        weight_size = vector_size = 0
        for member in members:
            # The kernel trusts the layer table (no bounds checks): widths that do not chain would read or write
            # past its arrays. SuitNetwork.load checks this too, but a network may be built from weights directly.
            check_layers(member.weights, member.rounds)
            rounds.append(member.rounds)
            for name in layer_names(member.rounds):
                quantized, scales = quantize(member.weights[f"{name}.weight"])
                n_in, n_out = quantized.shape
                if n_in > MAX_WIDTH or n_out > MAX_WIDTH:
                    raise ValueError(f"layer {name!r} is {n_in} x {n_out}: wider than the kernel's {MAX_WIDTH}")
                table.append((weight_size, n_in, n_out, vector_size))
                weights.append(quantized.ravel())
                vectors_scale.append(scales)
                vectors_bias.append(np.asarray(member.weights[f"{name}.bias"], dtype=np.float32))
                weight_size += quantized.size
                vector_size += n_out
        self._weights = np.concatenate(weights)
        self._scales = np.concatenate(vectors_scale)
        self._biases = np.concatenate(vectors_bias)
        self._table = np.array(table, dtype=np.int64).reshape(-1, _COLUMNS)
        self._rounds = np.array(rounds, dtype=np.int64)

    def dequantized_weights(self) -> list[dict[str, np.ndarray]]:
        """Every member's weights as the kernel uses them (``int8 * scale``), by parameter name, torch layout."""
        result, row = [], 0
        for member in self.members:
            weights = {}
            for name in layer_names(member.rounds):
                offset, n_in, n_out, vector = self._table[row]
                columns = self._weights[offset:offset + n_in * n_out].reshape(n_in, n_out).astype(np.float32)
                weights[f"{name}.weight"] = (columns * self._scales[vector:vector + n_out]).T
                weights[f"{name}.bias"] = self._biases[vector:vector + n_out]
                row += 1
            result.append(weights)
        return result

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """(37,) mean logits of one observation, or (N, 37) of a batch (N, OBSERVATION_SIZE)."""
        batch = np.ascontiguousarray(np.asarray(observation, dtype=np.float32).reshape(-1, OBSERVATION_SIZE))
        out = np.zeros((len(batch), NUM_ACTIONS), dtype=np.float32)
        _ensemble_logits(batch, self._weights, self._scales, self._biases, self._table, self._rounds,
                         SUIT_INPUT_INDEX, OBSERVATION_SLICES["trump_suit"].start, PUBLIC.start, PUBLIC.stop, out)
        return out[0] if np.ndim(observation) == 1 else out


@njit(cache=True, fastmath=True)
def _dense(inputs, n_in, weights, table_row, scales, biases, relu, out):
    """``out[:n_out] = scale * (inputs[:n_in] @ int8 weights) + bias``, then ReLU if asked. (fastmath lets the
    units' sums vectorize; their order of addition is then the compiler's.)"""
    offset, n_out, vector = table_row[0], table_row[2], table_row[3]
    matrix = weights[offset:offset + n_in * n_out].reshape(n_in, n_out)
    total = np.zeros(n_out, dtype=np.float32)
    for row in range(n_in):
        value = inputs[row]
        if value != 0.0:  # observations are mostly zeros, hidden units often
            weight_row = matrix[row]
            for unit in range(n_out):
                total[unit] += value * weight_row[unit]
    for unit in range(n_out):
        result = total[unit] * scales[vector + unit] + biases[vector + unit]
        out[unit] = result if result > 0.0 or not relu else 0.0


@njit(cache=True)
def _pooled_context(encoded, width, trump, public, table, first, weights, scales, biases, pooled, hidden, context):
    """Layers ``first`` and ``first + 1`` over (trump suit's encoding, plain suits' summed, public pieces)."""
    for unit in range(width):
        trump_sum = 0.0
        plain_sum = 0.0
        for suit in range(4):
            trump_sum += trump[suit] * encoded[suit, unit]
            plain_sum += (1.0 - trump[suit]) * encoded[suit, unit]
        pooled[unit] = trump_sum
        pooled[width + unit] = plain_sum
    for index in range(public.shape[0]):
        pooled[2 * width + index] = public[index]
    _dense(pooled, table[first, 1], weights, table[first], scales, biases, True, hidden)
    _dense(hidden, table[first + 1, 1], weights, table[first + 1], scales, biases, True, context)


@njit(cache=True)
def _ensemble_logits(batch, weights, scales, biases, table, rounds, suit_index, trump_start, public_start, public_stop,
                     out):
    """The members' mean logits of every observation of ``batch`` into ``out`` (zeros on entry)."""
    members = rounds.shape[0]
    suit_input = np.empty(suit_index.shape[1], dtype=np.float32)
    first_hidden = np.empty(MAX_WIDTH, dtype=np.float32)
    second_hidden = np.empty(MAX_WIDTH, dtype=np.float32)
    pooled = np.empty(MAX_WIDTH, dtype=np.float32)
    beside = np.empty(MAX_WIDTH, dtype=np.float32)
    mixed = np.empty(MAX_WIDTH, dtype=np.float32)
    context = np.empty(MAX_WIDTH, dtype=np.float32)
    head = np.empty(MAX_WIDTH, dtype=np.float32)
    trump = np.empty(4, dtype=np.float32)
    for sample in range(batch.shape[0]):
        observation = batch[sample]
        for suit in range(4):
            trump[suit] = observation[trump_start + suit]
        public = observation[public_start:public_stop]
        row = 0
        for member in range(members):
            width = table[row + _ENCODE2, 2]
            encoded = np.empty((4, width), dtype=np.float32)
            for suit in range(4):
                for index in range(suit_index.shape[1]):
                    suit_input[index] = observation[suit_index[suit, index]]
                _dense(suit_input, suit_index.shape[1], weights, table[row + _ENCODE0], scales, biases, True,
                       first_hidden)
                _dense(first_hidden, table[row + _ENCODE2, 1], weights, table[row + _ENCODE2], scales, biases, True,
                       second_hidden)
                encoded[suit, :width] = second_hidden[:width]
            _pooled_context(encoded, width, trump, public, table, row + _COMBINE0, weights, scales, biases, pooled,
                            first_hidden, context)
            context_width = table[row + _COMBINE2, 2]
            for round_number in range(2, rounds[member] + 1):
                mix = row + _FIXED_LAYERS + 3 * (round_number - 2)
                for suit in range(4):
                    beside[:width] = encoded[suit, :width]
                    beside[width:width + context_width] = context[:context_width]
                    _dense(beside, width + context_width, weights, table[mix], scales, biases, True, mixed)
                    for unit in range(width):
                        encoded[suit, unit] += mixed[unit]
                _pooled_context(encoded, width, trump, public, table, mix + 1, weights, scales, biases, pooled,
                                first_hidden, context)
                context_width = table[mix + 2, 2]
            for suit in range(4):
                beside[:width] = encoded[suit, :width]
                beside[width:width + context_width] = context[:context_width]
                _dense(beside, width + context_width, weights, table[row + _HEAD0], scales, biases, True,
                       first_hidden)
                _dense(first_hidden, table[row + _HEAD2, 1], weights, table[row + _HEAD2], scales, biases, False, head)
                for rank in range(6):
                    out[sample, 6 * suit + rank] += head[rank] / members
                for marriage in range(2):
                    out[sample, 24 + 2 * suit + marriage] += head[6 + marriage] / members
            _dense(context, context_width, weights, table[row + _OTHER], scales, biases, False, head)
            for index in range(table[row + _OTHER, 2]):
                out[sample, 32 + index] += head[index] / members
            row += _FIXED_LAYERS + 3 * (rounds[member] - 1)


assert NUM_CARDS == 6 * SUITS and RANKS == 6 and NUM_ACTIONS == 37  # the kernel's fixed action layout


__all__ = ["QuantizedSuitEnsemble", "layer_names", "quantize"]
