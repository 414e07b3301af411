"""Batches of deals stepped in the core: the kernels behind :mod:`sixtysix_env.vector` (batched environments).

One call of :func:`step_batch` plays one decision in every deal of a batch (``states``, one core state per row):
the caller's action, the opponent's replies when the core plays the opponent (uniformly random legal actions),
the end of the deal with its rewards (R16), a new deal where the batch autoresets, and the observation rows and
action masks of :mod:`.observation` — no Python per deal or per decision.

Randomness: every environment of the batch has its own generator (SplitMix64, one ``uint64`` word of state per
environment), so environment ``i``'s deals and opponent moves depend only on its seed word, never on the batch size
or on other users of numba's global generator. The core opponent has a second generator per environment, seeded from
the first once per deal, so the deals that follow do not depend on how the learner played. Seat schedules (the
dealer, the learner's seat) use the modes of :class:`sixtysix_env.env.SeatSchedule`: a fixed seat, ``ALTERNATE``
(drawn, then alternating) or ``RANDOM`` (drawn for every deal).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from .engine import _end, apply, deal_into, legal_mask, nth_bit, popcount, value_for
from .layout import OVER, REASON_RENONCE, RULE_DECK_20, STAGE, TO_MOVE
from .observation import encode_row, mask_row

SEAT_ALTERNATE = 2  # seat modes: 0 and 1 are fixed seats
SEAT_RANDOM = 3
OPPONENT_NONE = 0  # self-play: the caller plays both seats
OPPONENT_RANDOM = 1  # the core plays the other seat uniformly at random
OPPONENT_PYTHON = 2  # the caller (Python) plays the other seat between kernel calls
AUTORESET_NEXT_STEP = 0  # gymnasium.vector.AutoresetMode.NEXT_STEP
AUTORESET_SAME_STEP = 1
AUTORESET_DISABLED = 2
OPPONENT_LOG_SLOTS = 16  # the opponent's actions between two decisions of the learner (at most 5 occur)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


@kernel
def next_random(rng, index):
    """The next 64-bit word of environment ``index``'s SplitMix64 generator (Steele, Lea, Flood 2014)."""
    rng[index] += _GOLDEN
    word = rng[index]
    word = (word ^ (word >> _S30)) * _MIX1
    word = (word ^ (word >> _S27)) * _MIX2
    return word ^ (word >> _S31)


@kernel
def random_below(rng, index, count):
    """A uniform integer in ``0 .. count - 1`` (53 random bits reduced modulo ``count``: bias below 2**-47)."""
    return np.int64((next_random(rng, index) >> _S11) % np.uint64(count))


@kernel
def random_word(rng, index):
    """A non-negative 62-bit integer from environment ``index``'s generator (seeds for Python opponents)."""
    return np.int64(next_random(rng, index) >> np.uint64(2))


@kernel
def next_seat(mode, upcoming, index, rng):
    """The seat for environment ``index``'s next deal under ``mode`` (``upcoming[index]``: -1 = draw it)."""
    if mode == 0 or mode == 1:
        seat = mode
    elif mode == SEAT_RANDOM or upcoming[index] < 0:
        seat = random_below(rng, index, 2)
    else:
        seat = upcoming[index]
    upcoming[index] = 1 - seat
    return seat


@kernel
def new_deal(states, index, rng, cards, rule_bits, dealer_mode, upcoming_dealers, dealers):
    """Shuffle environment ``index``'s deck (Fisher-Yates on its generator) and deal it (R4)."""
    deck = cards[index]
    count = 0
    for card in range(24):
        if not rule_bits & RULE_DECK_20 or card % 6 != 0:  # R2: the 20-card deck has no nines
            deck[count] = card
            count += 1
    for position in range(count - 1, 0, -1):
        other = random_below(rng, index, position + 1)
        deck[position], deck[other] = deck[other], deck[position]
    for position in range(count, 24):
        deck[position] = -1
    dealer = next_seat(dealer_mode, upcoming_dealers, index, rng)
    dealers[index] = dealer
    deal_into(states[index], deck, dealer, rule_bits)


@kernel
def play_random_opponent(state, learner, rng, index, log, log_count):
    """The core's opponent: uniformly random legal actions until ``learner`` must act or the deal is over; its
    actions are appended to ``log[index]``."""
    while state[STAGE] != OVER and state[TO_MOVE] != learner:
        mask = legal_mask(state)
        action = nth_bit(mask, random_below(rng, index, popcount(mask)))
        if log_count[index] < log.shape[1]:
            log[index, log_count[index]] = action
            log_count[index] += 1
        apply(state, action)


@kernel
def apply_or_forfeit(state, action):
    """Apply ``action`` (an id in 0..36) for the player to move; an illegal one ends the deal as a Renonce, the
    opponent scoring 3 (R8, R16; ``Game.forfeit``)."""
    if legal_mask(state) >> action & 1:
        apply(state, action)
    else:
        _end(state, 1 - state[TO_MOVE], 3, REASON_RENONCE)


@kernel
def start_deal(index, states, rng, opponent_rng, cards, rule_bits, dealer_mode, upcoming_dealers, dealers,
               seat_mode, upcoming_seats, learners, players, opponent, log, log_count):
    """A new deal in environment ``index``: the learner's seat (unless self-play), the deal, and the core
    opponent's first moves. ``players[index]`` becomes the seat observed (the learner, or the player to move). The
    core opponent draws from its own generator, seeded from the deal generator once per deal: how many moves it
    makes depends on the learner's play, and must not move the later deals on."""
    if opponent != OPPONENT_NONE:
        learners[index] = next_seat(seat_mode, upcoming_seats, index, rng)
    new_deal(states, index, rng, cards, rule_bits, dealer_mode, upcoming_dealers, dealers)
    state = states[index]
    if opponent == OPPONENT_NONE:
        players[index] = state[TO_MOVE]
    else:
        players[index] = learners[index]
        if opponent == OPPONENT_RANDOM:
            opponent_rng[index] = next_random(rng, index)
            play_random_opponent(state, learners[index], opponent_rng, index, log, log_count)


@kernel
def reset_batch(reset_mask, states, rng, opponent_rng, cards, rule_bits, dealer_mode, upcoming_dealers, dealers,
                seat_mode, upcoming_seats, learners, players, opponent, needs_reset, log, log_count, match_scores,
                observations, masks):
    """New deals in the environments of ``reset_mask``; the observations and masks of the whole batch."""
    for index in range(states.shape[0]):
        if reset_mask[index]:
            log_count[index] = 0
            start_deal(index, states, rng, opponent_rng, cards, rule_bits, dealer_mode, upcoming_dealers, dealers,
                       seat_mode, upcoming_seats, learners, players, opponent, log, log_count)
            needs_reset[index] = 0
        encode_row(states[index], players[index], match_scores[index], observations[index])
        mask_row(states[index], players[index], masks[index])


@kernel
def step_batch(actions, states, rng, opponent_rng, cards, rule_bits, dealer_mode, upcoming_dealers, dealers,
               seat_mode, upcoming_seats, learners, players, opponent, autoreset, needs_reset, log, log_count,
               match_scores, observations, masks, seat_rewards, rewards, terminations, final_observations, has_final):
    """One decision in every environment (self-play or the core's random opponent; see the module docstring).

    ``actions`` are ids in 0..36 (illegal ones are Renonces; the caller refuses them first when it must).
    Outputs: ``seat_rewards[i]`` game points of seats 0 and 1 at the deal's end (R16), ``rewards[i]`` those of
    the observed seat, ``terminations``, and with same-step autoreset the ended deal's last observation in
    ``final_observations[i]`` (``has_final[i]``), the new deal's in ``observations[i]``."""
    for index in range(states.shape[0]):
        log_count[index] = 0
        has_final[index] = 0
        seat_rewards[index, 0] = 0.0
        seat_rewards[index, 1] = 0.0
        rewards[index] = 0.0
        terminations[index] = 0
        state = states[index]
        if needs_reset[index]:  # next-step autoreset: this step deals instead of playing
            start_deal(index, states, rng, opponent_rng, cards, rule_bits, dealer_mode, upcoming_dealers, dealers,
                       seat_mode, upcoming_seats, learners, players, opponent, log, log_count)
            needs_reset[index] = 0
        else:
            mover = state[TO_MOVE]
            apply_or_forfeit(state, actions[index])
            if opponent == OPPONENT_RANDOM:
                play_random_opponent(state, learners[index], opponent_rng, index, log, log_count)
            if state[STAGE] == OVER:
                seat_rewards[index, 0] = value_for(state, 0)
                seat_rewards[index, 1] = value_for(state, 1)
                terminations[index] = 1
                if opponent == OPPONENT_NONE:
                    players[index] = mover  # the deal's last view is the last mover's
                rewards[index] = seat_rewards[index, players[index]]
                if autoreset == AUTORESET_NEXT_STEP:
                    needs_reset[index] = 1
                elif autoreset == AUTORESET_SAME_STEP:
                    encode_row(state, players[index], match_scores[index], final_observations[index])
                    has_final[index] = 1
                    start_deal(index, states, rng, opponent_rng, cards, rule_bits, dealer_mode, upcoming_dealers,
                               dealers, seat_mode, upcoming_seats, learners, players, opponent, log, log_count)
            elif opponent == OPPONENT_NONE:
                players[index] = state[TO_MOVE]
        encode_row(state, players[index], match_scores[index], observations[index])
        mask_row(state, players[index], masks[index])


__all__ = [
    "AUTORESET_DISABLED", "AUTORESET_NEXT_STEP", "AUTORESET_SAME_STEP", "OPPONENT_LOG_SLOTS", "OPPONENT_NONE",
    "OPPONENT_PYTHON", "OPPONENT_RANDOM", "SEAT_ALTERNATE", "SEAT_RANDOM", "apply_or_forfeit", "new_deal",
    "next_random", "play_random_opponent", "random_below", "random_word", "reset_batch", "start_deal",
    "step_batch",
]
