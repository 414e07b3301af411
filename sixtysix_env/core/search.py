"""Search on the core from one player's information set: sampling worlds, and SO-ISMCTS.

:func:`information_template` turns an :class:`~sixtysix_env.infoset.InformationSet` into what the kernels need:
a template state holding only what the player may know (the opponent's hand reduced to the cards he has shown,
the face-down talon erased) and the masks that constrain the hidden cards. :func:`determinize_into` fills in a
uniformly random consistent layout, exactly as ``InformationSet.determinize`` does (a uniform subset of the unseen
cards the opponent may hold, the rest of the unseen cards in uniform order on the talon).

:class:`Tree` holds an ISMCTS tree in flat arrays for the iterations of :mod:`.ismcts`.
"""

from __future__ import annotations

import numpy as np

from ..cards import integer_index
from ..infoset import InformationSet
from ._jit import kernel
from .engine import bit_index, copy_state, seed_generator
from .layout import HAND0, STATE_SIZE, STOCK, STOCK_POS, STOCK_SLOTS
from .solver import _solve_actions
from .state import check_state, state_from_game



def information_template(infoset: InformationSet) -> tuple[np.ndarray, int, int, int]:
    """(template state, cards the opponent may hold among the unseen, all unseen cards, unknown cards in his
    hand) for ``infoset``: the kernels' view of what its player knows."""
    if not isinstance(infoset, InformationSet):
        raise ValueError(f"expected an InformationSet, got {type(infoset).__name__}")
    template = state_from_game(infoset._template, hidden_ok=True)
    needed = infoset.opponent_hand_size - infoset.opponent_known.bit_count()
    allowed = infoset.unseen & ~infoset.opponent_void
    if needed > allowed.bit_count() or infoset.unseen.bit_count() - needed != infoset.face_down_count:
        raise ValueError("inconsistent information set: the unseen cards do not fit the opponent's hand and talon")
    return template, allowed, infoset.unseen, needed


@kernel
def sample_subset(pool, count):
    """A uniform subset of ``count`` cards of the mask ``pool`` (partial Fisher-Yates, numba's generator)."""
    cards = np.empty(24, dtype=np.int64)
    size = 0
    remaining = pool
    while remaining:
        low = remaining & -remaining
        remaining ^= low
        cards[size] = bit_index(low)
        size += 1
    chosen = 0
    for index in range(count):
        other = np.random.randint(index, size)
        cards[index], cards[other] = cards[other], cards[index]
        chosen |= 1 << cards[index]
    return chosen


@kernel
def _determinize_into(world, template, opponent, allowed, unseen, needed):
    """:func:`determinize_into` unchecked: the kernel the searches call per world."""
    copy_state(world, template)
    fill_hidden(world, opponent, allowed, unseen, needed)


def _mask_argument(name: str, value: object) -> int:
    mask = integer_index(value)
    if not 0 <= mask < 1 << 24:
        raise ValueError(f"determinize_into: {name} must be a mask of the 24 cards (0 <= {name} < 2**24), "
                         f"got {value!r}")
    return mask


def determinize_into(world: np.ndarray, template: np.ndarray, opponent: object, allowed: object, unseen: object,
                     needed: object) -> None:
    """A uniformly random world consistent with the template into ``world`` (numba's generator), with the
    arguments :func:`information_template` returns. Everything is checked first, and the world it makes is checked
    as a whole (:func:`.state.check_state`): a template and masks that do not fit together are refused by name and
    leave ``world`` as it was."""
    if (not isinstance(world, np.ndarray) or world.shape != (STATE_SIZE,) or world.dtype != np.int64
            or not world.flags.c_contiguous or not world.flags.writeable):
        raise ValueError(f"determinize_into: world must be a writable C-contiguous int64 array of shape "
                         f"({STATE_SIZE},)")
    if (not isinstance(template, np.ndarray) or template.shape != (STATE_SIZE,) or template.dtype != np.int64
            or not template.flags.c_contiguous):
        raise ValueError(f"determinize_into: template must be a C-contiguous int64 array of shape ({STATE_SIZE},), "
                         "as information_template returns it")
    seat = integer_index(opponent)
    if seat not in (0, 1):
        raise ValueError(f"determinize_into: opponent must be 0 or 1, got {opponent!r}")
    allowed_mask, unseen_mask = _mask_argument("allowed", allowed), _mask_argument("unseen", unseen)
    if allowed_mask & ~unseen_mask:
        raise ValueError("determinize_into: allowed holds cards that are not unseen")
    count = integer_index(needed)
    if not 0 <= count <= allowed_mask.bit_count():
        raise ValueError(f"determinize_into: needed must be between 0 and the {allowed_mask.bit_count()} allowed "
                         f"cards, got {needed!r}")
    talon_start, on_talon = int(template[STOCK_POS]), unseen_mask.bit_count() - count
    if not 0 <= talon_start <= STOCK_SLOTS - on_talon:  # the kernel writes the talon from here
        raise ValueError(f"determinize_into: the template's talon position {talon_start} leaves no room for the "
                         f"{on_talon} unseen cards the opponent does not hold")
    scratch = np.empty(STATE_SIZE, dtype=np.int64)
    _determinize_into(scratch, template, seat, allowed_mask, unseen_mask, count)
    try:
        check_state(scratch)
    except ValueError as error:
        raise ValueError(f"determinize_into: the template and masks do not make a whole deal: {error}") from None
    world[:] = scratch


@kernel
def fill_hidden(world, opponent, allowed, unseen, needed):
    """Complete ``world``, whose opponent holds only his known cards, uniformly at random: ``needed`` of the cards
    ``allowed`` join his hand, the other ``unseen`` cards lie on the face-down talon in random order."""
    chosen = sample_subset(allowed, needed)
    world[HAND0 + opponent] |= chosen
    cards = np.empty(24, dtype=np.int64)
    rest = unseen & ~chosen
    count = 0
    while rest:
        low = rest & -rest
        rest ^= low
        cards[count] = bit_index(low)
        count += 1
    for index in range(count - 1, 0, -1):
        other = np.random.randint(0, index + 1)
        cards[index], cards[other] = cards[other], cards[index]
    position = world[STOCK_POS]
    for index in range(count):
        world[STOCK + position + index] = cards[index]


@kernel
def sample_worlds(count, template, opponent, allowed, unseen, needed, out_worlds):
    """``count`` uniformly random worlds consistent with the template into the rows of ``out_worlds``."""
    for index in range(count):
        _determinize_into(out_worlds[index], template, opponent, allowed, unseen, needed)


# ------------------------------------------------------------------------------------------------ ISMCTS
class Tree:
    """The flat arrays of one search tree (node 0 is the root). ``capacity`` bounds the nodes; when it is full,
    iterations stop expanding and evaluate from the deepest node reached."""

    def __init__(self, capacity: int = 1 << 18):
        self.action = np.zeros(capacity, dtype=np.int64)
        self.first_child = np.full(capacity, -1, dtype=np.int64)
        self.next_sibling = np.full(capacity, -1, dtype=np.int64)
        self.visits = np.zeros(capacity, dtype=np.int64)
        self.available = np.zeros(capacity, dtype=np.int64)
        self.total = np.zeros(capacity, dtype=np.float64)
        self.square = np.zeros(capacity, dtype=np.float64)  # sums of squared rewards
        self.size = np.zeros(1, dtype=np.int64)  # nodes in use
        self.reset()

    def reset(self) -> None:
        self.first_child[0] = -1
        self.next_sibling[0] = -1
        self.visits[0] = 0
        self.total[0] = 0.0
        self.square[0] = 0.0
        self.size[0] = 1

    def root_children(self) -> dict[int, tuple[int, float]]:
        """{action: (visits, mean reward in game points / 3)} of the root's children."""
        return {action: (visits, mean) for action, (visits, mean, _square) in self.root_statistics().items()}

    def root_statistics(self) -> dict[int, tuple[int, float, float]]:
        """{action: (visits, mean reward, sum of squared rewards)} of the root's children."""
        children = {}
        child = int(self.first_child[0])
        while child >= 0:
            visits = int(self.visits[child])
            children[int(self.action[child])] = (visits, float(self.total[child]) / max(visits, 1),
                                                 float(self.square[child]))
            child = int(self.next_sibling[child])
        return children


def seed_kernels(seed: int) -> None:
    """Seed numba's generator (the kernels' randomness) from an integer."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    seed_generator(int(seed) % (1 << 32))


# ------------------------------------------------------------------------------------------------ PIMC with solves
@kernel
def solved_world_values(count, template, observer, allowed, unseen, needed, sums, wins, entries, first_world,
                        nodes):
    """Sample ``count`` worlds and solve each exactly for every legal action of the observer (a phase-2 position,
    or any position where whole-deal solves are affordable): ``sums[action]`` += game points from the observer's
    side, ``wins[action]`` += 1 when positive. Worlds are numbered from ``first_world`` (>= 1) for the table's
    phase-1 entries. Returns the legal mask."""
    world = np.empty(STATE_SIZE, dtype=np.int64)
    values = np.zeros(64, dtype=np.int64)
    sign = 1 if observer == 0 else -1
    mask = 0
    for index in range(count):
        _determinize_into(world, template, 1 - observer, allowed, unseen, needed)
        mask = _solve_actions(world, values, entries, first_world + index, nodes)
        remaining = mask
        while remaining:
            low = remaining & -remaining
            remaining ^= low
            action = bit_index(low)
            value = sign * values[action]
            sums[action] += value
            if value > 0:
                wins[action] += 1
    return mask
