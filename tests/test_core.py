"""The compiled core (sixtysix_env/core) against the reference engine (sixtysix_env/game.py), and its solvers.

One rule book, two implementations: every random deal below is played through both, comparing the legal actions
before every decision, the whole core state after every action (rebuilt from the ``Game`` by ``state_from_game``)
and the result (R4–R16). 5,000 deals per preset here; ``make test-slow`` plays 10^5 per preset.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sixtysix_env import DealResult, Game, Rules
from sixtysix_env.actions import CLOSE, EXCHANGE, MARRY_BASE, parse_action
from sixtysix_env.cards import CARD_POINTS, parse_card
from sixtysix_env.core import (
    apply_action, check_state, core_rule_bits, legal_actions, new_state, result_of, state_from_game,
)
from sixtysix_env.core import engine
from sixtysix_env.core.layout import (
    HAND0, MARRIAGE_POINTS0, OVER, STAGE, STATE_SIZE, STOCK, TRICK_POINTS0, WON_CARDS0,
)
from sixtysix_env.core.solver import Table, solve_actions, solve_value
from sixtysix_env.game import FOLLOW, LEAD
from sixtysix_env.observation import RULE_FLAGS
from test_solver import alphabeta  # exhaustive search over Game (alpha-beta cut-offs never change the value)

PRESETS = ("standard", "paderborn", "scharf")
# Mixes of the switches the presets use, beyond the presets themselves.
MIXES = {
    "standard+needs-trick": Rules.preset("standard", marriage_needs_trick=True, exchange_needs_trick=True),
    "scharf+paderborn-closing": Rules.preset("scharf", close_draw_option=True, exchange_after_opponent_closes=True),
    "paderborn+phase2-marriages": Rules.preset("paderborn", marriage_in_phase2=True),
}


def play_both(rules: Rules, seed: int) -> None:
    """One random deal through ``Game`` and the core side by side, failing at the first difference."""
    rng = random.Random(seed)
    game = Game.deal(rules, seed=seed, dealer=seed & 1)
    state = new_state(rules, seed=seed, dealer=seed & 1)
    while not game.is_over:
        legal = game.legal_actions()
        assert legal_actions(state) == legal, f"seed {seed}: legal actions differ at {game!r}"
        special = [action for action in legal if action >= MARRY_BASE]
        # Lean towards marriages, exchanges and closings so every rule path is walked often.
        action = rng.choice(special) if special and rng.random() < 0.3 else rng.choice(legal)
        game.apply(action)
        apply_action(state, action)
        expected = state_from_game(game)
        if not np.array_equal(state, expected):
            differing = np.flatnonzero(state != expected).tolist()
            pytest.fail(f"seed {seed}: states differ in slots {differing} after {game.action_name(action)!r}")
    assert result_of(state) == game.result


@pytest.mark.parametrize("preset", PRESETS)
def test_core_plays_exactly_like_game_on_5000_deals(preset):
    """R4–R16 through both implementations: legal actions, state after every action, result."""
    rules = Rules.preset(preset)
    for seed in range(5000):
        play_both(rules, seed)


@pytest.mark.parametrize("name", sorted(MIXES))
def test_core_plays_exactly_like_game_with_switch_mixes(name):
    for seed in range(1500):
        play_both(MIXES[name], 10_000 + seed)


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_core_plays_exactly_like_game_on_100000_deals(preset):
    rules = Rules.preset(preset)
    for seed in range(100_000):
        play_both(rules, 1_000_000 + seed)


# ------------------------------------------------------------------------------------------------ explicit decks
DECK = [  # R4 order: forehand 1-3, dealer 4-6, forehand 7-9, dealer 10-12, trump card 13, talon 14-24
    "AH", "TH", "KH", "9C", "JC", "QC", "QH", "AC", "9D", "TC", "KC", "JD", "9H",
    "QD", "KD", "TD", "AD", "9S", "JS", "QS", "KS", "TS", "AS", "JH",
]


def test_r4_deal_order_and_trump_card():
    """R4: forehand (dealer 0 -> player 1) gets cards 1-3 and 7-9; card 13 is trump; the talon follows."""
    state = new_state(Rules(), deck=DECK, dealer=0)
    forehand = sum(1 << parse_card(c) for c in ("AH", "TH", "KH", "QH", "AC", "9D"))
    dealer = sum(1 << parse_card(c) for c in ("9C", "JC", "QC", "TC", "KC", "JD"))
    assert state[HAND0 + 1] == forehand and state[HAND0] == dealer
    assert [int(c) for c in state[STOCK:STOCK + 11]] == [parse_card(c) for c in DECK[13:]]
    assert legal_actions(state)[:6] == sorted(parse_card(c) for c in ("AH", "TH", "KH", "QH", "AC", "9D"))


def test_r11_r12_marriage_in_trump_counts_40_and_needs_a_trick():
    """R11: the trump marriage (hearts: the 9H is the trump card) scores 40; R12: it counts once a trick is won."""
    state = new_state(Rules(), deck=DECK, dealer=0)
    apply_action(state, parse_action("marry QH"))
    assert state[MARRIAGE_POINTS0 + 1] == 40
    assert engine.counted_points(state, 1) == 0  # no trick yet (R12)
    apply_action(state, parse_action("play 9C"))  # the dealer discards; QH wins the trick (R6)
    assert engine.counted_points(state, 1) == 40 + CARD_POINTS[parse_card("QH")]


def test_r9_exchange_swaps_the_trump_nine_for_the_trump_card():
    """R9: the holder of the trump nine swaps it for the face-up trump card, which then lies under the talon."""
    from sixtysix_env.core.layout import BOTTOM_CARD

    state = new_state(Rules(), deck=DECK, dealer=0)  # hearts trump (9H turned up): nobody holds a nine to swap
    assert EXCHANGE not in legal_actions(state)
    deck = ["AH", "TH", "KH", "9C", "JC", "QC", "QH", "AC", "9S", "TC", "KC", "JD", "QS",
            "QD", "KD", "TD", "AD", "9D", "JS", "9H", "KS", "TS", "AS", "JH"]  # trump card QS; forehand holds 9S
    state = new_state(Rules(), deck=deck, dealer=0)
    assert EXCHANGE in legal_actions(state)
    apply_action(state, EXCHANGE)
    assert state[HAND0 + 1] >> parse_card("QS") & 1 and not state[HAND0 + 1] >> parse_card("9S") & 1
    assert state[BOTTOM_CARD] == parse_card("9S")
    assert EXCHANGE not in legal_actions(state)


THREE_FOR_A_TRICKLESS_OPPONENT = ["close"]  # forehand closes at once; then the first / last legal card
TWO_FOR_AN_OPPONENT_WITH_A_TRICK = ["play AC", "play 9C", "play 9D", "play KC", "play TD", "play AD", "close",
                                    "play 9S", "play JS", "play KH", "play KD", "play QH", "play JC", "play AH",
                                    "play JD", "play QD", "play TC", "play TH", "play QC"]


@pytest.mark.parametrize("opening, expected", [
    # forehand closes with the dealer trickless, wins five of six tricks and ends at 58: the dealer scores 3
    (THREE_FOR_A_TRICKLESS_OPPONENT, DealResult(0, 3, "closer failed", (2, 58))),
    # the dealer closes after forehand has taken a trick and ends at 21: forehand scores 2
    (TWO_FOR_AN_OPPONENT_WITH_A_TRICK, DealResult(1, 2, "closer failed", (21, 69))),
])
def test_r10_r16_closer_who_fails_concedes_two_or_three(opening, expected):
    """R10/R16: a closer who does not reach 66 gives the opponent 2 game points, or 3 if the opponent had no trick
    when the talon was closed; the core and the Python engine score it alike."""
    state = new_state(Rules(), deck=DECK, dealer=0)
    game = Game.deal(Rules(), deck=DECK, dealer=0)
    for name in opening:
        apply_action(state, parse_action(name))
        game.apply(parse_action(name))
    while not game.is_over:
        legal = game.legal_actions()
        action = legal[0] if game.stage == LEAD else legal[-1]
        assert legal_actions(state) == legal
        apply_action(state, action)
        game.apply(action)
    assert state[STAGE] == OVER
    assert game.result == expected and result_of(state) == expected


# ------------------------------------------------------------------------------------------------ properties
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**62), preset=st.sampled_from(PRESETS))
def test_random_core_deal_conserves_cards_and_points(seed, preset):
    """R1/R14: every card in exactly one place at every step; tricks hold the deck's points (+10 last trick)."""
    rules = Rules.preset(preset)
    state = new_state(rules, seed=seed)
    rng = random.Random(seed)
    while state[STAGE] != OVER:
        check_state(state)
        legal = legal_actions(state)
        assert legal, "the mask is never empty before the end"
        apply_action(state, rng.choice(legal))
    check_state(state)
    won = int(state[WON_CARDS0]) | int(state[WON_CARDS0 + 1])
    card_points = sum(CARD_POINTS[card] for card in range(24) if won >> card & 1)
    bonus = int(state[TRICK_POINTS0] + state[TRICK_POINTS0 + 1]) - card_points
    assert bonus in (0, 10)
    assert result_of(state) is not None


def test_random_playouts_kernel_is_reproducible():
    bits = core_rule_bits(Rules())
    assert engine.random_playouts(300, 7, bits) == engine.random_playouts(300, 7, bits)
    decisions, _ = engine.random_playouts(300, 7, bits)
    assert 300 * 12 <= decisions <= 300 * 40


def test_bit_tools_agree_with_python_on_every_card_and_action_bit():
    """``bit_index`` (the processor's count of trailing zeros) and ``popcount`` (its bit count), on which every
    loop over a card or action mask of the core rests, against Python's own arithmetic."""
    for bit in range(64):
        assert engine.bit_index(1 << bit if bit < 63 else -(1 << 63)) == bit
    assert engine.bit_index(0) == 64  # cttz defined at zero: the width of the type
    generator = random.Random(5)
    for _ in range(2000):
        mask = generator.getrandbits(generator.choice((24, 37, 56, 62)))
        assert engine.popcount(mask) == bin(mask).count("1")
        if mask:
            assert engine.bit_index(mask & -mask) == (mask & -mask).bit_length() - 1


def test_rule_bits_follow_the_observation_order():
    for index, name in enumerate(RULE_FLAGS):
        if name in ("auto_declare", "allow_false_declaration"):
            continue
        rules = Rules(deck=20) if name == "deck_20" else Rules(**{name: not getattr(Rules(), name)})
        assert (core_rule_bits(rules) ^ core_rule_bits(Rules())) == 1 << index


# ------------------------------------------------------------------------------------------------ bad input
def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="auto_declare"):
        new_state(Rules(auto_declare=False), seed=1)
    with pytest.raises(ValueError, match="allow_false_declaration"):
        new_state(Rules(allow_false_declaration=True), seed=1)
    with pytest.raises(ValueError, match="dealer"):
        new_state(Rules(), seed=1, dealer=2)
    with pytest.raises(ValueError, match="malformed deck"):
        new_state(Rules(), deck=DECK[:-1] + ["AH"])
    with pytest.raises(ValueError, match="malformed core state"):
        check_state(np.zeros(STATE_SIZE, dtype=np.int32))
    state = new_state(Rules(), deck=DECK, dealer=0)
    broken = state.copy()
    broken[HAND0] |= broken[HAND0 + 1]
    with pytest.raises(ValueError, match="two places"):
        check_state(broken)
    with pytest.raises(ValueError, match="illegal action 'play 9C'"):
        apply_action(state, parse_card("9C"))  # the dealer's card, forehand to lead
    with pytest.raises(ValueError, match="malformed action"):
        apply_action(state, 1.5)
    with pytest.raises(ValueError, match="not an action id"):
        apply_action(state, 99)
    with pytest.raises(ValueError, match="determinize"):
        from sixtysix_env import InformationSet

        state_from_game(InformationSet(Game.deal(Rules(), seed=3), 0)._template)


# ------------------------------------------------------------------------------------------------ solvers
def random_position(rules: Rules, seed: int, talon_left: int, extra_moves: int) -> Game | None:
    """A random deal played on until at most ``talon_left`` face-down cards remain (or phase 2), then a few more
    random moves; ``None`` if it ended."""
    rng = random.Random(seed)
    game = Game.deal(rules, seed=seed)
    while not game.is_over and game.face_down_count > talon_left and not game.phase2:
        game.apply(rng.choice(game.legal_actions()))
    for _ in range(extra_moves):
        if game.is_over:
            break
        game.apply(rng.choice(game.legal_actions()))
    return None if game.is_over else game


@pytest.mark.parametrize("preset", PRESETS)
def test_phase2_solver_matches_exhaustive_search_and_the_python_solver(preset):
    """R8 endgames: the core's exact values of every action equal exhaustive search over ``Game``."""
    from agents.solver import python_solve_all_actions

    rules = Rules.preset(preset)
    table = Table(16)
    checked = 0
    for seed in range(400):
        game = random_position(rules, seed, 0, 6 + seed % 5)
        if game is None or not game.phase2 or game.stage not in (LEAD, FOLLOW):
            continue
        values = solve_actions(state_from_game(game), table)
        assert values == python_solve_all_actions(game), f"seed {seed}"
        if (game.hands[0] | game.hands[1]).bit_count() <= 8:
            player = game.to_move
            for action, value in values.items():
                child = game.clone()
                child.apply(action)
                assert alphabeta(child, player) == value, f"seed {seed} action {game.action_name(action)}"
        checked += 1
    assert checked > 150


# R4 order: forehand (player 1, dealer 0) gets cards 1-3 and 7-9, the dealer 4-6 and 10-12, card 13 is trump (KH).
# Both hands hold only nines, jacks and queens: 20 card points in all, no marriage (R11) possible.
LOW_HANDS_DECK = ["9C", "JC", "QC", "9D", "JD", "QD", "9S", "JS", "QS", "9H", "JH", "QH", "KH",
                  "KC", "TC", "AC", "KD", "TD", "AD", "KS", "TS", "AS", "TH", "AH"]


def test_r10_r16_closer_who_cannot_reach_66_is_solved_without_a_move_tried():
    """R10, R13, R16: forehand closes at once holding 0 + 20 reachable points; whatever is played he fails and his
    trickless opponent scores 3. The solver knows it at the root (one node) and agrees with the play."""
    state = new_state(Rules(), deck=LOW_HANDS_DECK, dealer=0)
    apply_action(state, CLOSE)
    table = Table(16)
    assert solve_value(state, table) == -3  # from the closer's side (he is to move)
    assert table.nodes[0] == 1
    rng = random.Random(0)
    for _ in range(20):
        game = Game.deal(Rules(), deck=LOW_HANDS_DECK, dealer=0)
        game.apply(CLOSE)
        while not game.is_over:
            game.apply(rng.choice(game.legal_actions()))
        assert game.result.winner == 0 and game.result.game_points == 3


@pytest.mark.parametrize("preset", PRESETS)
def test_closed_deal_solver_matches_the_python_solver(preset):
    """R10 closed deals (the closer's failure known early by the points he can still reach, R13, R16): the core's
    exact values of every action equal the pure-Python solver's, from closings at random leads of random deals."""
    from agents.solver import python_solve_all_actions

    rules = Rules.preset(preset)
    table = Table(16)
    checked = 0
    for seed in range(300):
        rng = random.Random(seed)
        game = Game.deal(rules, seed=seed, dealer=seed & 1)
        while not game.is_over and game.closed_by is None:
            legal = game.legal_actions()
            game.apply(CLOSE if CLOSE in legal and rng.random() < 0.4 else rng.choice(legal))
        for _ in range(seed % 6):
            if game.is_over:
                break
            game.apply(rng.choice(game.legal_actions()))
        if game.is_over or game.closed_by is None or game.stage not in (LEAD, FOLLOW):
            continue
        assert solve_actions(state_from_game(game), table) == python_solve_all_actions(game), f"seed {seed}"
        checked += 1
    assert checked > 100


def test_full_deal_solver_matches_exhaustive_search_in_phase1():
    """Whole-deal solves with the talon order known (R7 drawing, R9, R10, R11): 20-card deals (R2, R20) near the
    end of phase 1, against exhaustive alpha-beta over ``Game``."""
    table = Table(16)
    checked = 0
    for preset in ("scharf", "paderborn"):
        rules = Rules.preset(preset, deck=20)
        for seed in range(60):
            game = random_position(rules, 500 + seed, 2, 0)
            if game is None or game.phase2:
                continue
            table.new_world()
            assert solve_value(state_from_game(game), table) == alphabeta(game, game.to_move), f"{preset} {seed}"
            checked += 1
    assert checked >= 40


def test_full_deal_solver_values_every_first_action():
    """From the first lead: the solved value equals the best of the solved action values (a consistency check
    on a full 24-card deal, R16 bounds and the table shared across searches)."""
    table = Table(18)
    state = new_state(Rules(), seed=2)
    values = solve_actions(state, table)
    assert set(values) == set(legal_actions(state))
    assert solve_value(state, table) == max(values.values())
