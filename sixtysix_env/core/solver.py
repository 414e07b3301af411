"""Exact solvers on the compiled core: the game-point value of a deal whose cards are all known.

* **Phase 2** (R8: talon exhausted or closed): nobody draws any more, so once a player counts the cards the rest
  of the deal is a zero-sum game of perfect information.
* **Whole deals** (a determinized world: the talon order known) from any position, phase 1 included: closing
  (R10), exchange (R9), marriages (R11), drawing (R7) and every switch of the core. An oracle for research and for
  tests of search agents, and the leaf evaluation of the search agents.

Both are the same search: alpha-beta (fail-soft, values are player 0's game points, -3..3) over the core's own
:func:`~.engine.legal_mask` and :func:`~.engine.apply`, so it plays by exactly the rules the differential test
checks. What makes it fast:

* static bounds from R16 in phase 2: a side whose opponent has won a trick can no longer score 3, and at most 1 once
  the opponent counts 33 (a failed closer concedes 2 or 3) — most windows close before any move is tried;
* the exact value of a closed deal (R10) whose closer can no longer reach 66 (R13) even by winning every card
  still in play: he has failed (R16). A sixth fewer positions in an early rollout of ``expert``, whose closing
  checks solve closed deals; the same values;
* a transposition table of value bounds and best moves, keyed by the whole position. Phase-2 entries do not depend
  on the talon (nobody draws), so they stay valid across worlds and calls: a search agent solving many worlds of
  one deal reuses them. Phase-1 entries carry the number of the world they were found in (:class:`Table`);
* move ordering: the table's move, then winning follows by card points and leads by points;
* a forced move (one legal action: most phase-2 follows under R8) is played on without hashing the position or
  touching the table (a few percent more positions, each far cheaper; session 27, docs/core.md).

:func:`solve_value` gives the value of a position, :func:`solve_actions` the exact value of every legal action.
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
import numpy as np
from numba import carray, cfunc, types
from numba.extending import intrinsic

from ..cards import CARD_POINTS, QUEENS_MASK
from ..game import GOAL
from ._jit import kernel
from .engine import (
    CARD_POINTS_TABLE, HIGHER_IN_SUIT_TABLE, SUIT_MASK_TABLE, apply, bit_index, copy_state, counted_points, legal_mask,
    value_for,
)
from .layout import (
    BOTTOM_CARD, CLOSED_BY, FOLLOW, HAND0, LEAD, LEAD_CARD, MARRIAGE_POINTS0, OPPONENT_TRICKLESS_AT_CLOSE, OVER,
    PHASE2, RULE_BITS, STAGE, STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS, TO_MOVE, TRICK_POINTS0,
    TRICKS_WON0, TRUMP_SUIT, TURN_STEP,
)

MAX_DEPTH = 64  # plies of one deal: 24 cards, 4 marriages, exchange, close, 5 draw choices, 1 reply (< 40)
DEFAULT_TABLE_BITS = 20  # 2**20 entries of 32 bytes
_EMPTY = np.int64(-1)


class Table:
    """A transposition table for :func:`solve_value` / :func:`solve_actions` (keep one per agent or thread).

    ``world`` numbers the determinized world being searched: phase-1 entries are keyed without the face-down talon
    and match only in their own world (phase-2 entries stay valid in every world). :func:`solve_value`,
    :func:`solve_actions` and :func:`action_values` start a new world themselves when the face-down talon differs
    from a talon the current world was searched with (:meth:`world_of`); kernels that search many worlds number
    them with :meth:`claim_worlds`, and a caller of those calls :meth:`new_world` whenever the talon order may differ
    from the previous search."""

    def __init__(self, bits: int = DEFAULT_TABLE_BITS):
        if isinstance(bits, bool) or not isinstance(bits, int) or not 10 <= bits <= 28:
            raise ValueError(f"table bits must be an integer in 10..28, got {bits!r}")
        size = 1 << bits
        # One row per entry (key, key, bounds/move/world), so a probe touches one cache line.
        self.entries = np.full((size, 4), _EMPTY, dtype=np.int64)
        self.world = 1
        self.nodes = np.zeros(1, dtype=np.int64)  # nodes visited, summed over searches
        # (world, bottom card, {talon position: card}) of the face-down talon the current world was searched with
        self._world_talon: tuple | None = None

    def new_world(self) -> None:
        self.world += 1

    def world_of(self, state: np.ndarray) -> int:
        """The world number to solve ``state`` in: the current one when its face-down talon agrees, card for card at
        every position, with every talon this world was searched with (and the bottom card with its bottom card, R7),
        so later positions of one deal reuse its entries; else a new one."""
        position, length, bottom = int(state[STOCK_POS]), int(state[STOCK_LEN]), int(state[BOTTOM_CARD])
        talon = {index: int(state[STOCK + index]) for index in range(position, length)}
        seen = self._world_talon
        if (seen is None or seen[0] != self.world or seen[1] != bottom
                or any(seen[2].get(index, card) != card for index, card in talon.items())):
            self.new_world()
            self._world_talon = (self.world, bottom, talon)
        else:
            seen[2].update(talon)  # entries stored from here on hold for every position seen so far
        return self.world

    def claim_worlds(self, count: int) -> int:
        """Number ``count`` new worlds; returns the first number (for kernels that solve many worlds)."""
        first = self.world + 1
        self.world += count
        return first

    def clear(self) -> None:
        self.entries[:] = _EMPTY
        self.world = 1
        self._world_talon = None


# ------------------------------------------------------------------------------------------------ static bounds
@kernel
def _best_for(state, player):
    """The most game points ``player`` can still score in phase 2 (R16): failed-closer points if the opponent
    closed, else first-line points against the opponent's tricks and counted points."""
    opponent = 1 - player
    if state[CLOSED_BY] == opponent:
        return 3 if state[OPPONENT_TRICKLESS_AT_CLOSE] else 2
    if state[TRICKS_WON0 + opponent] == 0:
        return 3
    return 2 if counted_points(state, opponent) <= 32 else 1


# Card points of the cards of one suit by the 6-bit mask of their ranks (9 J Q K T A, R1; the same in every suit).
_SUIT_POINTS_TABLE = np.array([sum(CARD_POINTS[rank] for rank in range(6) if ranks >> rank & 1) for ranks in range(64)],
                              dtype=np.int64)


@kernel
def _card_points(cards):
    """The card points of the cards of the mask ``cards`` (R1)."""
    return (_SUIT_POINTS_TABLE[cards & 63] + _SUIT_POINTS_TABLE[cards >> 6 & 63] + _SUIT_POINTS_TABLE[cards >> 12 & 63]
            + _SUIT_POINTS_TABLE[cards >> 18 & 63])


@kernel
def _reachable_points(state, player):
    """The most points ``player`` can still count in phase 2 (nobody draws): his trick and marriage points (pending
    ones included, R12), every card point still in play (both hands and the card on the table, R1) and a marriage
    for each Queen and King he holds together (R11)."""
    hand = state[HAND0 + player]
    pairs = hand & (hand >> 1) & QUEENS_MASK
    reachable = (state[TRICK_POINTS0 + player] + state[MARRIAGE_POINTS0 + player]
                 + _card_points(state[HAND0] | state[HAND0 + 1]))
    if state[LEAD_CARD] >= 0:
        reachable += CARD_POINTS_TABLE[state[LEAD_CARD]]
    while pairs:
        low = pairs & -pairs
        pairs ^= low
        reachable += 40 if bit_index(low) // 6 == state[TRUMP_SUIT] else 20
    return reachable


@kernel
def _closer_failed_value(state):
    """Player 0's game points when the closer of this closed deal (R10; a lead or a follow) can no longer reach 66
    (R13) by :func:`_reachable_points`, else 0 (a closed deal is always scored, R16, so 0 is never its value). Short
    of 66 he has failed however the deal is played: his opponent scores 3 if he was trickless at the closing, else 2
    (R16, the engine's ``_closer_failed``). An exact value, found without a move tried."""
    closer = state[CLOSED_BY]
    if _reachable_points(state, closer) >= GOAL:
        return 0
    failed = 3 if state[OPPONENT_TRICKLESS_AT_CLOSE] else 2
    return failed if closer == 1 else -failed


@kernel
def _best_in_phase1(state, player):
    """The most game points ``player`` can still score while the talon is open: 3 needs a trickless opponent
    (R16 first line) or the opponent closing while the player is still trickless (second line); else 2."""
    if state[TRICKS_WON0 + player] == 0 or state[TRICKS_WON0 + 1 - player] == 0:
        return 3
    return 2


# ------------------------------------------------------------------------------------------------ table keys
@kernel
def _key_a(state):
    return (state[HAND0] | state[HAND0 + 1] << 24 | (state[LEAD_CARD] + 1) << 48 | state[STAGE] << 53
            | state[TO_MOVE] << 56 | state[TURN_STEP] << 57 | state[PHASE2] << 59 | (state[CLOSED_BY] + 1) << 60
            | state[OPPONENT_TRICKLESS_AT_CLOSE] << 62)


@kernel
def _key_b(state):
    return (state[TRICK_POINTS0] | state[TRICK_POINTS0 + 1] << 8 | state[MARRIAGE_POINTS0] << 16
            | state[MARRIAGE_POINTS0 + 1] << 24 | (state[TRICKS_WON0] > 0) << 32 | (state[TRICKS_WON0 + 1] > 0) << 33
            | state[STOCK_POS] << 34 | (state[BOTTOM_CARD] + 1) << 38 | state[TRUMP_SUIT] << 43
            | state[RULE_BITS] << 45)


@kernel
def _slot(key_a, key_b, mask):
    mixed = (key_a * 0x9E3779B97F4A7C15) ^ (key_b * 0xC2B2AE3D27D4EB4F)
    return ((mixed ^ (mixed >> 29)) & 0x7FFFFFFFFFFFFFFF) & mask


# ------------------------------------------------------------------------------------------------ move ordering
@kernel
def _order_moves(state, mask, first, moves, scores, history):
    """Fill ``moves`` with the actions of ``mask``, likely-best first; returns how many. ``history[stage, action]``
    counts the cutoffs each action caused (the history heuristic), which breaks ties among the rules of thumb."""
    count = 0
    stage = state[STAGE]
    trump_mask = SUIT_MASK_TABLE[state[TRUMP_SUIT]]
    lead = state[LEAD_CARD]
    beaters = 0
    if stage == FOLLOW:
        beaters = HIGHER_IN_SUIT_TABLE[lead] | (0 if trump_mask >> lead & 1 else trump_mask)
    remaining = mask
    while remaining:
        low = remaining & -remaining
        remaining ^= low
        action = bit_index(low)
        if action == first:
            score = 1000
        elif action < 24:
            points = CARD_POINTS_TABLE[action]
            if stage == FOLLOW:
                # Win cheaply with a non-trump where possible, else give away the least.
                if beaters >> action & 1:
                    score = 200 + CARD_POINTS_TABLE[lead] + points - (30 if trump_mask >> action & 1 else 0)
                else:
                    score = 100 - points
            else:
                score = points + (5 if trump_mask >> action & 1 else 0)
        elif action < 32:
            score = 300  # a marriage: points now
        elif action == 32:
            score = 400  # exchange: a trump card for the nine
        elif action == 33:
            score = 150  # close: a cheap subtree whose value often cuts the rest
        else:
            score = 0  # draw, pass
        moves[count] = action
        scores[count] = score * 1024 + min(history[stage, action], 1023)
        count += 1
    for index in range(1, count):  # insertion sort, descending
        move = moves[index]
        score = scores[index]
        other = index - 1
        while other >= 0 and scores[other] < score:
            moves[other + 1] = moves[other]
            scores[other + 1] = scores[other]
            other -= 1
        moves[other + 1] = move
        scores[other + 1] = score
    return count


# ------------------------------------------------------------------------------------------------ the search
# Per-ply frame fields of the iterative search (numba cannot cache a recursive function, and a loop is faster).
_ALPHA, _BETA, _ALPHA0, _BETA0, _BEST, _BEST_MOVE, _COUNT, _INDEX, _SLOT, _KEY_A, _KEY_B = range(11)
_FRAME_FIELDS = 11


@kernel
def _search(stack, frames, moves, scores, history, alpha, beta, entries, world, nodes):
    """Player 0's game points under optimal play of ``stack[0]``, fail-soft within (alpha, beta).

    Alpha-beta as a loop over an explicit stack: ``stack[d]`` is the position at ply ``d``, ``frames[d]`` its
    window, best value and move so far, and where it is in its move list ``moves[d]``."""
    table_mask = entries.shape[0] - 1
    depth = 0
    frames[0, _ALPHA] = alpha
    frames[0, _BETA] = beta
    entering = True
    value = 0
    while True:
        if entering:
            state = stack[depth]
            nodes[0] += 1
            done = False
            if state[STAGE] == OVER:
                value = value_for(state, 0)
                done = True
            else:
                alpha = frames[depth, _ALPHA]
                beta = frames[depth, _BETA]
                if state[PHASE2]:
                    high = _best_for(state, 0)
                    low = -_best_for(state, 1)
                    # A closer who cannot reach 66 has failed (not while his closing may be answered by an
                    # exchange, R9: a card comes into play then).
                    if state[CLOSED_BY] >= 0 and (state[STAGE] == LEAD or state[STAGE] == FOLLOW):
                        failed = _closer_failed_value(state)
                        if failed != 0:
                            high = failed
                            low = failed
                else:
                    high = _best_in_phase1(state, 0)
                    low = -_best_in_phase1(state, 1)
                if True:
                    if high <= alpha or high == low:  # (equal only when the value is known: a failed closer)
                        value = high
                        done = True
                    elif low >= beta:
                        value = low
                        done = True
                legal = 0 if done else legal_mask(state)
                forced = legal != 0 and legal & (legal - 1) == 0
                key_a = 0
                key_b = 0
                slot = -1  # no table entry (a forced move)
                first = -1
                if not done and not forced:
                    # A forced move (one legal action: common in phase 2, R8) is played without the table: probing
                    # and storing would cost more than the one child they could spare.
                    key_a = _key_a(state)
                    key_b = _key_b(state)
                    slot = _slot(key_a, key_b, table_mask)
                    if entries[slot, 0] == key_a and entries[slot, 1] == key_b:
                        entry = entries[slot, 2]
                        entry_world = entry >> 16
                        if entry_world == 0 or entry_world == world:
                            lower = (entry & 0xF) - 8
                            upper = ((entry >> 4) & 0xF) - 8
                            first = ((entry >> 8) & 0xFF) - 1
                            if lower > low:
                                low = lower
                            if upper < high:
                                high = upper
                            if low >= high or low >= beta:
                                value = low
                                done = True
                            elif high <= alpha:
                                value = high
                                done = True
                if not done:
                    if low > alpha:
                        alpha = low
                    if high < beta:
                        beta = high
                    frames[depth, _ALPHA] = alpha
                    frames[depth, _BETA] = beta
                    frames[depth, _ALPHA0] = alpha
                    frames[depth, _BETA0] = beta
                    frames[depth, _BEST] = -4 if state[TO_MOVE] == 0 else 4
                    frames[depth, _SLOT] = slot
                    frames[depth, _KEY_A] = key_a
                    frames[depth, _KEY_B] = key_b
                    if forced:
                        moves[depth, 0] = bit_index(legal)
                        count = 1
                    else:
                        count = _order_moves(state, legal, first, moves[depth], scores, history)
                    frames[depth, _COUNT] = count
                    frames[depth, _INDEX] = 0
                    frames[depth, _BEST_MOVE] = moves[depth, 0]
                    child = stack[depth + 1]
                    copy_state(child, state)
                    apply(child, moves[depth, 0])
                    frames[depth + 1, _ALPHA] = alpha
                    frames[depth + 1, _BETA] = beta
                    depth += 1
                    continue
            entering = False
            if depth == 0:
                return value
            depth -= 1
        # Hand ``value`` back to the frame at ``depth``.
        state = stack[depth]
        index = frames[depth, _INDEX]
        if state[TO_MOVE] == 0:
            if value > frames[depth, _BEST]:
                frames[depth, _BEST] = value
                frames[depth, _BEST_MOVE] = moves[depth, index]
                if value > frames[depth, _ALPHA]:
                    frames[depth, _ALPHA] = value
        elif value < frames[depth, _BEST]:
            frames[depth, _BEST] = value
            frames[depth, _BEST_MOVE] = moves[depth, index]
            if value < frames[depth, _BETA]:
                frames[depth, _BETA] = value
        index += 1
        frames[depth, _INDEX] = index
        cutoff = frames[depth, _ALPHA] >= frames[depth, _BETA]
        if cutoff and index < frames[depth, _COUNT]:
            history[state[STAGE], moves[depth, index - 1]] += 1
        if cutoff or index == frames[depth, _COUNT]:
            # Store what was learnt: an exact value, or a bound when the search failed low or high.
            best = frames[depth, _BEST]
            lower = -3
            upper = 3
            if best <= frames[depth, _ALPHA0]:
                upper = best
            elif best >= frames[depth, _BETA0]:
                lower = best
            else:
                lower = best
                upper = best
            slot = frames[depth, _SLOT]
            if slot >= 0:
                entries[slot, 0] = frames[depth, _KEY_A]
                entries[slot, 1] = frames[depth, _KEY_B]
                entries[slot, 2] = ((lower + 8) | (upper + 8) << 4 | (frames[depth, _BEST_MOVE] + 1) << 8
                                    | (0 if state[PHASE2] else world) << 16)
            value = best
            if depth == 0:
                return value
            depth -= 1
            continue
        child = stack[depth + 1]
        copy_state(child, state)
        apply(child, moves[depth, index])
        frames[depth + 1, _ALPHA] = frames[depth, _ALPHA]
        frames[depth + 1, _BETA] = frames[depth, _BETA]
        depth += 1
        entering = True


# ------------------------------------------------------------------------------------------------ entry points
# The solver is compiled once, as one C-callable function, and every kernel that solves (the playout policy, ISMCTS,
# PIMC's world values, the Python-facing kernels below) calls it by its symbol instead of carrying its own copy.
# numba links the machine code of every jitted callee into each caller and optimizes it again there, so with
# ordinary calls the search was optimized once per kernel that reaches it (eight times; about half of the cold
# compile, docs/performance.md). A call through the symbol costs nothing measurable next to a solve.
_SOLVE_WINDOW, _SOLVE_VALUE, _SOLVE_ACTIONS = 0, 1, 2
_POINTER = types.CPointer(types.int64)
_SOLVE_SIGNATURE = types.int64(types.int64, _POINTER, types.int64, types.int64, _POINTER, types.int64, types.int64,
                               _POINTER, _POINTER, _POINTER)
# The search's working arrays, carved out of one buffer the caller allocates: views of a plain C pointer carry no
# reference count, so taking the position at a ply (``stack[depth]``) costs no atomic increment and decrement
# (numba counts references of every view of an array it allocated; that was a fifth of the time per position).
_STACK_AT = 0
_FRAMES_AT = _STACK_AT + MAX_DEPTH * STATE_SIZE
_MOVES_AT = _FRAMES_AT + MAX_DEPTH * _FRAME_FIELDS
_SCORES_AT = _MOVES_AT + MAX_DEPTH * 40
_HISTORY_AT = _SCORES_AT + 40
_WORKSPACE_SIZE = _HISTORY_AT + 5 * 40
_SOLVE_SYMBOL = "sixtysix_core_solve"


@intrinsic
def _offset(typing_context, pointer, offset):
    """``pointer + offset`` (in elements) for a C pointer."""
    def codegen(context, builder, signature, arguments):
        return builder.gep(arguments[0], [arguments[1]])

    return pointer(pointer, offset), codegen


@cfunc(_SOLVE_SIGNATURE, cache=True)
def _solve_entry(mode, state_data, alpha, beta, entries_data, table_rows, world, nodes_data, values_data,
                 workspace_data):
    """The solver behind every entry point (C arrays as pointers). ``mode``: ``_SOLVE_WINDOW`` searches the state
    within (alpha, beta), fail-soft; ``_SOLVE_VALUE`` returns its exact value; ``_SOLVE_ACTIONS`` writes the exact
    value (player 0's side) of every legal action into ``values[action]`` and returns the legal mask."""
    state = carray(state_data, STATE_SIZE)
    entries = carray(entries_data, (table_rows, 4))
    nodes = carray(nodes_data, 1)
    values = carray(values_data, 64)
    stack = carray(workspace_data, (MAX_DEPTH, STATE_SIZE))
    frames = carray(_offset(workspace_data, _FRAMES_AT), (MAX_DEPTH, _FRAME_FIELDS))
    moves = carray(_offset(workspace_data, _MOVES_AT), (MAX_DEPTH, 40))
    scores = carray(_offset(workspace_data, _SCORES_AT), 40)
    history = carray(_offset(workspace_data, _HISTORY_AT), (5, 40))
    history[:] = 0
    if mode == _SOLVE_WINDOW:
        copy_state(stack[0], state)
        return _search(stack, frames, moves, scores, history, alpha, beta, entries, world, nodes)
    mask = legal_mask(state) if mode == _SOLVE_ACTIONS else 0
    remaining = mask
    action = 0
    while True:
        copy_state(stack[0], state)
        if mode == _SOLVE_ACTIONS:
            if remaining == 0:
                return mask
            low = remaining & -remaining
            remaining ^= low
            action = bit_index(low)
            apply(stack[0], action)
        # MTD(f) (Plaat et al. 1996): null-window searches converging on the value; each only asks "at least v?",
        # which prunes far more than a full window, and the table keeps what every probe learnt for the next. The
        # first probe asks "does player 0 win?" (at least 1): a deal is rarely 0 (R15), so the probe "at least 0" the
        # guess 0 began with mostly repeated it (22-27% fewer positions over 20 and 60 deals, median -3%).
        lower = -3
        upper = 3
        value = 1
        while lower < upper:
            probe = value + 1 if value == lower else value
            value = _search(stack, frames, moves, scores, history, probe - 1, probe, entries, world, nodes)
            if value < probe:
                upper = value
            else:
                lower = value
        if mode == _SOLVE_VALUE:
            return lower
        values[action] = lower


llvm.add_symbol(_SOLVE_SYMBOL, _solve_entry.address)
_solve = types.ExternalFunction(_SOLVE_SYMBOL, _SOLVE_SIGNATURE)


@kernel
def _solve_value(state, alpha, beta, entries, world, nodes):
    """Player 0's game points under optimal play, exact for the window (-4, 4), else fail-soft within it (all
    arrays C-contiguous, as everywhere in the core)."""
    mode = _SOLVE_VALUE if alpha == -4 and beta == 4 else _SOLVE_WINDOW
    workspace = np.empty(_WORKSPACE_SIZE, dtype=np.int64)
    return _solve(mode, state.ctypes, alpha, beta, entries.ctypes, entries.shape[0], world, nodes.ctypes,
                  nodes.ctypes, workspace.ctypes)


@kernel
def _solve_actions(state, values, entries, world, nodes):
    """Exact values (player 0's side) of every legal action into ``values`` (64 slots, indexed by action); returns
    the legal mask."""
    workspace = np.empty(_WORKSPACE_SIZE, dtype=np.int64)
    return _solve(_SOLVE_ACTIONS, state.ctypes, 0, 0, entries.ctypes, entries.shape[0], world, nodes.ctypes,
                  values.ctypes, workspace.ctypes)


def _checked(state: np.ndarray) -> np.ndarray:
    from .state import check_in_progress

    return check_in_progress(state, "solve")


def check_table_arrays(entries: Any, nodes: Any, context: str = "") -> None:
    """Refuse by name a table's arrays (``Table.entries``, ``Table.nodes``) that the kernels cannot use."""
    rows = entries.shape[0] if isinstance(entries, np.ndarray) and entries.ndim == 2 else 0
    if (not isinstance(entries, np.ndarray) or entries.dtype != np.int64 or entries.shape != (rows, 4)
            or rows < 1 or rows & (rows - 1) or not entries.flags.c_contiguous or not entries.flags.writeable):
        raise ValueError(f"{context}entries must be a writable C-contiguous int64 array of shape (2**bits, 4)")
    if (not isinstance(nodes, np.ndarray) or nodes.dtype != np.int64 or nodes.shape[:1] == (0,) or nodes.ndim != 1
            or not nodes.flags.c_contiguous or not nodes.flags.writeable):
        raise ValueError(f"{context}nodes must be a writable int64 array of at least one slot")


def _checked_table(table: Any) -> Table:
    """``table`` if it is a :class:`Table` whose arrays the kernels can use (they read them through raw pointers)."""
    if not isinstance(table, Table):
        raise ValueError(f"table must be a solver Table, got {type(table).__name__}")
    check_table_arrays(table.entries, table.nodes, "malformed Table: ")
    if isinstance(table.world, bool) or not isinstance(table.world, (int, np.integer)) or table.world < 1:
        raise ValueError(f"malformed Table: world must be a positive integer, got {table.world!r}")
    return table


def solve_value(state: np.ndarray, table: Table | None = None, player: int | None = None) -> int:
    """Game points under optimal play by both, from ``player``'s side (0 or 1; default: the player to move)."""
    state = _checked(state)
    table = Table(16) if table is None else _checked_table(table)
    if player is not None and (isinstance(player, bool) or player not in (0, 1)):
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    player = int(state[TO_MOVE]) if player is None else int(player)
    value = int(_solve_value(state, -4, 4, table.entries, table.world_of(state), table.nodes))
    return value if player == 0 else -value


def solve_actions(state: np.ndarray, table: Table | None = None) -> dict[int, int]:
    """The exact game-point value of every legal action for the player to move: ``{action: value}``."""
    return action_values(state, Table(16) if table is None else table)


def action_values(state: np.ndarray, table: Table) -> dict[int, int]:
    """:func:`solve_actions` with the table required (both arguments are checked; a check costs microseconds, a
    solve milliseconds)."""
    state = _checked(state)
    table = _checked_table(table)
    values = np.zeros(64, dtype=np.int64)
    mask = int(_solve_actions(state, values, table.entries, table.world_of(state), table.nodes))
    sign = 1 if state[TO_MOVE] == 0 else -1
    return {action: sign * int(values[action]) for action in range(37) if mask >> action & 1}


__all__ = ["DEFAULT_TABLE_BITS", "Table", "action_values", "solve_actions", "solve_value"]
