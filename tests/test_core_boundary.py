"""The public Python boundary of the compiled core refuses bad input by name (ValueError) before any kernel sees it.

Each case below once crashed the interpreter (SIGSEGV/SIGABRT), raised an accidental error (IndexError,
TypingError, AttributeError, ZeroDivisionError) or silently returned garbage; now it raises ValueError naming the
argument or state slot."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sixtysix_env.core import apply_action, check_state, layout as L, legal_actions, new_state, result_of
from sixtysix_env.core import heuristic as H
from sixtysix_env.core.observation import encode_state
from sixtysix_env.core.search import information_template, seed_kernels
from sixtysix_env.core.solver import Table, action_values, solve_actions, solve_value
from sixtysix_env.rules import PRESET_NAMES, Rules

HOSTILE_VALUES = (-2 ** 40, -1, 25, 10 ** 9, 2 ** 62)


def _play(state: np.ndarray, rng: random.Random, until_phase2: bool) -> np.ndarray:
    """Random legal play from ``state`` (in place) to a phase-2 lead, or to a random point of the deal; every state
    passed on the way must pass ``check_state`` (the checks refuse no real state)."""
    stop_after = rng.randrange(30)
    for step in range(200):
        check_state(state)
        if state[L.STAGE] == L.OVER:
            return state
        if until_phase2 and state[L.PHASE2] and state[L.STAGE] == L.LEAD:
            return state
        if not until_phase2 and step == stop_after:
            return state
        apply_action(state, rng.choice(legal_actions(state)))
    return state


def _phase2_lead(seed: int = 0) -> np.ndarray:
    for attempt in range(100):
        rng = random.Random(seed * 1000 + attempt)
        state = _play(new_state(Rules.preset("standard"), seed=seed * 1000 + attempt), rng, until_phase2=True)
        if state[L.STAGE] == L.LEAD and state[L.PHASE2]:
            return state
    raise AssertionError("no phase-2 lead reached")


@pytest.fixture
def s() -> np.ndarray:
    return new_state(Rules.preset("standard"), seed=42)


@pytest.fixture(scope="module")
def table() -> Table:
    return Table(12)


@pytest.fixture
def p2() -> np.ndarray:
    return _phase2_lead()


def _with(state: np.ndarray, slot: int, value: int) -> np.ndarray:
    bad = state.copy()
    bad[slot] = value
    return bad


# --- A. state.py ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [np.zeros(3, np.int64), np.zeros(0, np.int64)])
def test_legal_actions_refuses_malformed_arrays(bad):
    with pytest.raises(ValueError, match="malformed core state"):
        legal_actions(bad)


@pytest.mark.parametrize("value", [2 ** 40, 10 ** 6, -1, 2])
def test_legal_actions_refuses_bad_player_to_move(s, value):
    with pytest.raises(ValueError, match="TO_MOVE"):
        legal_actions(_with(s, L.TO_MOVE, value))


def test_apply_action_refuses_follow_without_lead_card(s):
    bad = s.copy()
    apply_action(bad, legal_actions(bad)[-1])
    while bad[L.STAGE] != L.FOLLOW:
        apply_action(bad, legal_actions(bad)[-1])
    bad[L.LEAD_CARD] = -1
    before = bad.copy()
    with pytest.raises(ValueError, match="LEAD_CARD"):
        apply_action(bad, legal_actions(s)[0])
    assert np.array_equal(bad, before)


def test_apply_action_refuses_bad_states(s):
    with pytest.raises(ValueError, match="TO_MOVE"):
        apply_action(_with(s, L.TO_MOVE, -1), legal_actions(s)[0])
    with pytest.raises(ValueError, match="malformed core state"):
        apply_action(np.zeros(3, np.int64), 0)
    with pytest.raises(ValueError, match="malformed core state"):
        apply_action(s.astype(np.float64), legal_actions(s)[0])
    listed = s.tolist()
    with pytest.raises(ValueError, match="malformed core state"):
        apply_action(listed, legal_actions(s)[0])
    assert listed == s.tolist()  # a plain list is not changed in place
    frozen = s.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        apply_action(frozen, legal_actions(s)[0])


def _finished() -> np.ndarray:
    state = new_state(Rules.preset("standard"), seed=7)
    rng = random.Random(7)
    while state[L.STAGE] != L.OVER:
        apply_action(state, rng.choice(legal_actions(state)))
    return state


@pytest.mark.parametrize("slot, value, fragment", [
    (L.REASON, 77, "REASON"), (L.REASON, -1, "REASON"), (L.WINNER, 7, "WINNER"), (L.GAME_POINTS, 99, "GAME_POINTS"),
])
def test_result_of_refuses_bad_results(slot, value, fragment):
    assert result_of(_finished()) is not None
    with pytest.raises(ValueError, match=fragment):
        result_of(_with(_finished(), slot, value))


def test_result_of_refuses_short_state():
    with pytest.raises(ValueError, match="malformed core state"):
        result_of(np.zeros(3, np.int64))


def test_check_state_refuses_strided_views(p2, table):
    doubled = np.zeros(2 * L.STATE_SIZE, np.int64)
    strided = doubled[::2]
    strided[:] = p2
    with pytest.raises(ValueError, match="C-contiguous"):
        solve_value(strided, table)
    with pytest.raises(ValueError, match="C-contiguous"):
        check_state(p2[::-1].copy()[::-1])


@pytest.mark.parametrize("name, value", [
    ("TRUMP_SUIT", 10 ** 9), ("TRUMP_SUIT", -1), ("TRUMP_CARD", 99), ("EXCHANGE_CARD", 99), ("LEADER", 7),
    ("TURN_STEP", -5), ("PHASE2", 7), ("CLOSED_BY", 5), ("BOTTOM_TAKER", 9), ("DEALER", 3), ("WINNER", 4),
    ("REASON", 99), ("TRICKS_WON0", -1), ("TRICK_POINTS0", -1), ("MARRIAGE_POINTS0", 500),
    ("PLAYED0", 1 << 24), ("PLAYED0", -1), ("SHOWN0", 1 << 30), ("CANNOT_HOLD0", -1), ("LED0", 1 << 24),
    ("MARRIED_SUITS0", 16), ("CLOSED_AT_TRICK", 13), ("TRICK_COUNT", -1), ("BOTTOM_CARD", -5),
])
def test_check_state_range_checks_slots(p2, table, name, value):
    slot = getattr(L, name)
    with pytest.raises(ValueError, match=name):
        check_state(_with(p2, slot, value))
    with pytest.raises(ValueError, match=name):
        solve_value(_with(p2, slot, value), table)


def test_check_state_names_a_bad_talon_slot(s):
    for value in (-1, 2 ** 62):
        with pytest.raises(ValueError, match=r"talon slot STOCK\+3"):
            check_state(_with(s, L.STOCK + 3, value))


def _after_one_trick() -> np.ndarray:
    """Forehand's first lead answered: a phase-1 lead with six cards a side and one trick won."""
    state = new_state(Rules.preset("standard"), seed=42)
    for _ in range(2):
        apply_action(state, next(action for action in legal_actions(state) if action < 24))
    assert state[L.STAGE] == L.LEAD and state[L.TRICK_COUNT] == 1
    return state


def _emptied_hand(state):
    state[L.WON_CARDS0] |= state[L.HAND0]
    state[L.HAND0] = 0


def _two_cards_from_a_hand_to_the_tricks(state):  # the card count fits two tricks, the hand sizes do not (R7)
    first, second = [card for card in range(24) if state[L.HAND0] >> card & 1][:2]
    state[L.HAND0] &= ~((1 << first) | (1 << second))
    state[L.WON_CARDS0] |= (1 << first) | (1 << second)
    state[L.TRICK_COUNT] = 2


def _bottom_card_gone_with_face_down_cards_left(state):
    bottom = int(state[L.BOTTOM_CARD])
    other = next(card for card in range(24) if state[L.HAND0 + 1] >> card & 1)
    state[L.BOTTOM_CARD] = -1
    state[L.HAND0 + 1] &= ~(1 << other)
    state[L.WON_CARDS0] |= (1 << bottom) | (1 << other)
    state[L.TRICK_COUNT] += 1



def _talon_exhausted_lead(preset: str) -> np.ndarray:
    """A phase-2 lead after the talon's last card was drawn (R8), reached by the first legal non-closing moves."""
    state = new_state(Rules.preset(preset), seed=5)
    while not (state[L.PHASE2] and state[L.STAGE] == L.LEAD and result_of(state) is None):
        assert result_of(state) is None, "the deal ended before its phase 2"
        moves = legal_actions(state)
        apply_action(state, next((action for action in moves if action != 33), moves[0]))
    return state


@pytest.mark.parametrize("preset", ["paderborn", "standard"])
def test_check_state_refuses_a_draw_stage_without_a_talon_to_draw_from(preset, table):
    """R10 paderborn: the stage PREDRAW (close before drawing, or draw) exists only with the rule's switch and two
    face-down cards or more. After the talon's end it was accepted, offered close and draw, and the solver crashed
    the process on it (SIGSEGV); the draw read past the talon."""
    state = _talon_exhausted_lead(preset)
    state[L.STAGE] = L.PREDRAW
    with pytest.raises(ValueError, match="stage PREDRAW .* needs the rule close_draw_option"):
        check_state(state)
    with pytest.raises(ValueError, match="malformed core state"):
        solve_actions(state, table)

def _slots_set(**slots):
    def change(state):
        for name, value in slots.items():
            state[getattr(L, name)] = value(state) if callable(value) else value
    return change


@pytest.mark.parametrize("change, fragment", [
    (_emptied_hand, "TRICK_COUNT"),
    (_two_cards_from_a_hand_to_the_tricks, "the leader holds"),
    (_bottom_card_gone_with_face_down_cards_left, "BOTTOM_CARD"),
    (_slots_set(STAGE=L.RESPOND_CLOSE), "CLOSED_BY is -1"),
    (_slots_set(CLOSED_AT_TRICK=1), "CLOSED_AT_TRICK"),
    (_slots_set(PHASE2=1), "PHASE2"),
    (_slots_set(TO_MOVE=lambda state: 1 - state[L.LEADER]), "TO_MOVE"),
    (_slots_set(STAGE=L.PREDRAW, LEAD_CARD=lambda state: int(state[L.TRUMP_CARD] ^ 1)), "LEAD_CARD"),
], ids=["emptied hand", "hand sizes", "bottom card", "answering no closing", "closed at a trick by nobody",
        "phase 2 with an open talon", "the wrong player to move", "a card on the table before the draw"])
def test_check_state_refuses_slots_that_disagree_with_one_another(table, change, fragment):
    """Every card in one place is not enough: a hand emptied into the tricks, a closing answered that nobody made,
    a talon without its bottom card (R7) and the like once reached the solver and crashed the process."""
    state = _after_one_trick()
    check_state(state)
    change(state)
    with pytest.raises(ValueError, match=fragment):
        check_state(state)
    with pytest.raises(ValueError, match="malformed core state"):
        solve_value(state, table)


# --- B. solver.py -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("player", [7, "x", -1, True])
def test_solve_value_refuses_bad_player(p2, table, player):
    with pytest.raises(ValueError, match="player"):
        solve_value(p2, table, player=player)


def test_action_values_checks_state_and_table(p2, table):
    with pytest.raises(ValueError, match="malformed core state"):
        action_values(np.zeros(3, np.int64), table)
    with pytest.raises(ValueError, match="Table"):
        action_values(p2, "abc")
    assert action_values(p2, table) == solve_actions(p2, table)


def test_a_table_kept_across_solves_gives_each_talon_order_its_own_value():
    """Phase-1 entries are keyed without the face-down talon (R4, R7): a table kept across solves (as docs/core.md
    shows) starts a new world itself when the talon order differs, and keeps the world along one deal's play."""
    wrong = compared = 0
    for seed in range(60):
        rng = random.Random(seed)
        state = new_state(Rules(deck=20), seed=seed)
        while state[L.STAGE] != L.OVER and not state[L.PHASE2] and state[L.STOCK_LEN] - state[L.STOCK_POS] > 4:
            apply_action(state, rng.choice([action for action in legal_actions(state) if action < 24]))
        if state[L.STAGE] == L.OVER or state[L.PHASE2]:
            continue
        reversed_talon = state.copy()
        position, length = int(state[L.STOCK_POS]), int(state[L.STOCK_LEN])
        reversed_talon[L.STOCK + position:L.STOCK + length] = state[L.STOCK + position:L.STOCK + length][::-1]
        shared = Table(16)
        solve_value(state, shared)
        wrong += solve_value(reversed_talon, shared) != solve_value(reversed_talon, Table(16))
        compared += 1
        world = shared.world
        later = reversed_talon.copy()
        apply_action(later, legal_actions(later)[0])
        solve_value(later, shared)
        assert shared.world == world  # the same deal one step on: its entries still hold
    assert compared >= 20 and wrong == 0


def test_a_table_remembers_every_talon_its_world_was_searched_with():
    """Three solves on one table: a deal at a lead (A), the same deal after a trick and the draw (B, the same
    world), then A with the top two face-down talon cards swapped (C). C agrees with B's talon wherever B's lies face
    down, but not with A's, whose entries it would otherwise reuse (R4, R7)."""
    wrong = compared = 0
    for seed in range(40):
        rng = random.Random(seed)
        first = new_state(Rules(deck=20), seed=seed)
        while first[L.STAGE] != L.OVER and not first[L.PHASE2] and first[L.STOCK_LEN] - first[L.STOCK_POS] > 5:
            apply_action(first, rng.choice([action for action in legal_actions(first) if action < 24]))
        later = first.copy()
        position = int(first[L.STOCK_POS])
        while later[L.STOCK_POS] < position + 2 and later[L.STAGE] != L.OVER and not later[L.PHASE2]:
            apply_action(later, legal_actions(later)[0])
        if later[L.STAGE] == L.OVER or later[L.PHASE2] or first[L.PHASE2]:
            continue
        swapped = first.copy()
        top = L.STOCK + position
        swapped[top], swapped[top + 1] = first[top + 1], first[top]
        shared = Table(16)
        solve_value(first, shared)
        solve_value(later, shared)
        wrong += solve_value(swapped, shared) != solve_value(swapped, Table(16))
        compared += 1
    assert compared >= 20 and wrong == 0


def test_solve_value_refuses_a_non_table(p2):
    with pytest.raises(ValueError, match="Table"):
        solve_value(p2, table="abc")


# --- D. search.py -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [None, 5, "infoset"])
def test_information_template_names_a_non_infoset(bad):
    with pytest.raises(ValueError, match="InformationSet"):
        information_template(bad)


def test_information_template_names_a_game():
    from sixtysix_env.game import Game

    with pytest.raises(ValueError, match="InformationSet"):
        information_template(Game.deal(Rules.preset("standard"), seed=1))


@pytest.mark.parametrize("seed", [1.5, None, "3", True])
def test_seed_kernels_refuses_non_integers(seed):
    with pytest.raises(ValueError, match="seed"):
        seed_kernels(seed)


# --- E. observation.py ------------------------------------------------------------------------------------------
def test_encode_state_checks_the_state(s):
    with pytest.raises(ValueError, match="malformed core state"):
        encode_state(np.zeros(3, np.int64), 0)
    with pytest.raises(ValueError, match="TRUMP_SUIT"):
        encode_state(_with(s, L.TRUMP_SUIT, 10 ** 7), 0)


@pytest.mark.parametrize("match_score", [(-5, 3), (1, 2, 3), (1.5, 0), "ab", 3])
def test_encode_state_checks_match_score(s, match_score):
    with pytest.raises(ValueError, match="match_score"):
        encode_state(s, 0, match_score=match_score)


@pytest.mark.parametrize("target", [0, -7, 2.5, True])
def test_encode_state_checks_bummerl_target(s, target):
    with pytest.raises(ValueError, match="bummerl_target"):
        encode_state(s, 0, bummerl_target=target)


# --- one hostile slot in a real state ---------------------------------------------------------------------------
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6), slot=st.integers(0, L.STATE_SIZE - 1), value=st.sampled_from(HOSTILE_VALUES),
       rules_name=st.sampled_from(PRESET_NAMES))
def test_one_hostile_slot_is_refused_or_harmless(table, seed, slot, value, rules_name):
    rng = random.Random(seed)
    state = _play(new_state(Rules.preset(rules_name), seed=seed), rng, until_phase2=rng.random() < 0.5)
    state[slot] = value
    try:
        check_state(state)
    except ValueError:
        return
    legal_actions(state)  # a value legal for its slot must not crash the kernels
    if state[L.PHASE2] and state[L.STAGE] != L.OVER:
        solve_value(state, table)


# --- heuristic.py and search.py: the heuristic player and the determinization (once raw kernels) ---------------
def _heuristic_inputs():
    from agents.rule_based import HeuristicAgent

    return HeuristicAgent().core_params(), Table(12)


def test_heuristic_action_checks_the_state(s):
    from sixtysix_env.core.heuristic import heuristic_action

    params, table = _heuristic_inputs()
    assert heuristic_action(s, params, table.entries, table.nodes) in legal_actions(s)
    with pytest.raises(ValueError, match="not C-contiguous"):
        heuristic_action(np.repeat(s, 2)[::2], params, table.entries, table.nodes)  # a strided view of s
    with pytest.raises(ValueError, match="TRUMP_SUIT"):
        heuristic_action(_with(s, L.TRUMP_SUIT, 10 ** 9), params, table.entries, table.nodes)
    over = s.copy()
    rng = random.Random(1)
    while over[L.STAGE] != L.OVER:
        apply_action(over, rng.choice(legal_actions(over)))
    with pytest.raises(ValueError, match="the deal is over"):
        heuristic_action(over, params, table.entries, table.nodes)


@pytest.mark.parametrize("change, fragment", [
    (lambda p: p[:-1].copy(), "shape"),
    (lambda p: p.astype(np.float32), "float64"),
    (lambda p: np.repeat(p, 2)[::2], "C-contiguous"),
    (lambda p: _set(p, 5, np.nan), r"finite; slot\(s\) \[5\]"),
    (lambda p: _set(p, H.P_LEAD_SAMPLES, -1.0), "lead_samples"),
    (lambda p: _set(p, H.P_ENDGAME_WORLDS, 2.5), "endgame_worlds"),
    # no world to choose a closed phase 2's card from: the kernel answered -1, not a move
    (lambda p: _set(p, H.P_PHASE2_SAMPLES, 0.0), "phase2_samples .* must be a whole number in 1..100000"),
    (lambda p: _set(p, H.P_CLOSE_SAMPLES, 0.0), "close_samples .* must be a whole number in 1..100000"),
    # A failed allocation inside the kernel was swallowed (it answered 0, an illegal card), and a count of 2**63
    # overflowed to none (a closed phase 2 answered -1).
    (lambda p: _set(p, H.P_CLOSE_SAMPLES, 1e9), "close_samples .* must be a whole number in 1..100000"),
    (lambda p: _set(p, H.P_PHASE2_SAMPLES, 2.0 ** 63), "phase2_samples .* must be a whole number in 1..100000"),
    (lambda p: _set(p, H.P_LEAD_SAMPLES, 1e300), "lead_samples .* must be a whole number in 1..100000"),
])
def test_heuristic_action_checks_params(s, change, fragment):
    from sixtysix_env.core.heuristic import heuristic_action

    params, table = _heuristic_inputs()
    with pytest.raises(ValueError, match=fragment):
        heuristic_action(s, change(params), table.entries, table.nodes)


def _set(array: np.ndarray, slot: int, value: float) -> np.ndarray:
    changed = array.copy()
    changed[slot] = value
    return changed


def test_heuristic_action_checks_the_table_arrays(s):
    from sixtysix_env.core.heuristic import heuristic_action

    params, table = _heuristic_inputs()
    with pytest.raises(ValueError, match="entries must be"):
        heuristic_action(s, params, table.entries[:3], table.nodes)
    with pytest.raises(ValueError, match="nodes must be"):
        heuristic_action(s, params, table.entries, np.zeros(0, dtype=np.int64))


def test_heuristic_actions_checks_its_batch(s):
    from sixtysix_env.core.heuristic import heuristic_action, heuristic_actions

    params, table = _heuristic_inputs()
    states = np.stack([s, new_state(Rules.preset("standard"), seed=7)])
    actions = np.full(2, -1, dtype=np.int64)
    heuristic_actions(states, np.array([1], dtype=np.int64), params, table.entries, table.nodes, actions)
    assert actions[0] == -1 and actions[1] == heuristic_action(states[1].copy(), params, table.entries, table.nodes)
    with pytest.raises(ValueError, match="rows must be"):
        heuristic_actions(states, np.array([2], dtype=np.int64), params, table.entries, table.nodes, actions)
    with pytest.raises(ValueError, match="actions must be"):
        heuristic_actions(states, np.array([0], dtype=np.int64), params, table.entries, table.nodes,
                          np.zeros(1, dtype=np.int64))
    states[1, L.TRUMP_SUIT] = 10 ** 9
    with pytest.raises(ValueError, match=r"states\[1\]: malformed core state: TRUMP_SUIT"):
        heuristic_actions(states, np.array([0, 1], dtype=np.int64), params, table.entries, table.nodes, actions)


def _template(seed: int = 3):
    from sixtysix_env import Game, InformationSet

    game = Game.deal(Rules.preset("standard"), seed=seed)
    game.apply(game.legal_actions()[0])
    return information_template(InformationSet(game, game.to_move)), 1 - game.to_move


def test_determinize_into_checks_its_arguments():
    from sixtysix_env.core.search import determinize_into

    (template, allowed, unseen, needed), opponent = _template()
    world = np.zeros(L.STATE_SIZE, dtype=np.int64)
    determinize_into(world, template, opponent, allowed, unseen, needed)
    check_state(world)
    own_hand = int(template[L.HAND0 + 1 - opponent])
    mine = own_hand & -own_hand
    cases = [
        ((world[:-1], template, opponent, allowed, unseen, needed), "world must be"),
        ((world, np.repeat(template, 2)[::2], opponent, allowed, unseen, needed), "template must be"),
        ((world, template, 2, allowed, unseen, needed), "opponent must be 0 or 1"),
        ((world, template, True, allowed, unseen, needed), "opponent must be 0 or 1"),
        ((world, template, opponent, -1, unseen, needed), "allowed must be a mask"),
        ((world, template, opponent, allowed, 1 << 24, needed), "unseen must be a mask"),
        ((world, template, opponent, allowed | (~unseen & 0xFFFFFF), unseen, needed), "not unseen"),
        ((world, template, opponent, allowed, unseen, allowed.bit_count() + 1), "needed must be between"),
        ((world, template, opponent, allowed, unseen, 30), "needed must be between"),
        ((world, _with(template, L.STOCK_POS, 10), opponent, allowed, unseen, needed), "talon position 10"),
        # a card of the observer's own hand among the unseen: the world would hold it twice
        ((world, template, opponent, allowed | mine, unseen | mine, needed + 1), "do not make a whole deal"),
    ]
    for arguments, fragment in cases:
        before = world.copy()
        with pytest.raises(ValueError, match=fragment):
            determinize_into(*arguments)
        assert np.array_equal(world, before), fragment  # a refused call leaves the world as it was


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10 ** 6), slot=st.integers(0, L.STATE_SIZE - 1), value=st.sampled_from(HOSTILE_VALUES))
def test_determinize_into_a_hostile_template_slot_is_refused_or_whole(seed, slot, value):
    from sixtysix_env.core.search import determinize_into

    (template, allowed, unseen, needed), opponent = _template(seed)
    template[slot] = value
    world = np.zeros(L.STATE_SIZE, dtype=np.int64)
    try:
        determinize_into(world, template, opponent, allowed, unseen, needed)
    except ValueError:
        assert not world.any()
        return
    check_state(world)  # whatever it accepts is a whole deal
