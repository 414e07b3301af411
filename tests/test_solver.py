"""The exact phase-2 solver (agents/solver.py) against exhaustive minimax over the engine itself (R6, R8, R11–R16).

The reference search uses nothing but ``Game.clone`` / ``apply`` / ``result``, so any difference between the
solver's compact integer transitions and the engine's rules shows up as a mismatch. Positions come from random
deals of every preset and of the declaration switches, reaching phase 2 by closing (R10) or by exhausting the
talon (R7), with marriages kept back for phase 2 (R11) and manual or false declarations (R13).
"""

from __future__ import annotations

import random

import pytest

from sixtysix_env import Game, Rules
from sixtysix_env.actions import CLOSE, DECLARE, MARRY_BASE, parse_action
from sixtysix_env.cards import QUEENS_MASK
from sixtysix_env.game import FOLLOW, LEAD, RESPOND_CLOSE

from agents.solver import SolveResult, clear_cache, solve, solve_all_actions, solve_value, solve_value_within

RULE_SETS = {
    "standard": Rules.preset("standard"),
    "paderborn": Rules.preset("paderborn"),
    "scharf": Rules.preset("scharf"),
    "standard-manual-declare": Rules.preset("standard", auto_declare=False),
    "standard-false-declaration": Rules.preset("standard", allow_false_declaration=True),
    "paderborn-manual-declare": Rules.preset("paderborn", auto_declare=False),
    "scharf-manual-false": Rules.preset("scharf", auto_declare=False, allow_false_declaration=True),
    "standard-marriage-switches": Rules.preset("standard", marriage_needs_trick=True, marriage_in_phase2=False),
}


def minimax(game: Game, player: int) -> int:
    """Plain exhaustive minimax: ``player``'s game points under optimal play by both (no pruning at all)."""
    if game.is_over:
        return game.result.returns()[player]
    values = []
    for action in game.legal_actions():
        child = game.clone()
        child.apply(action)
        values.append(minimax(child, player))
    return max(values) if game.to_move == player else min(values)


def alphabeta(game: Game, player: int, alpha: int = -4, beta: int = 4) -> int:
    """Exhaustive minimax over the engine with alpha-beta cut-offs (which never change the root value), for
    positions too large for :func:`minimax`."""
    if game.is_over:
        return game.result.returns()[player]
    maximizing = game.to_move == player
    best = -4 if maximizing else 4
    for action in game.legal_actions():
        child = game.clone()
        child.apply(action)
        value = alphabeta(child, player, alpha, beta)
        if maximizing:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return best


def random_phase2_position(rng: random.Random, rules: Rules, extra_plies: int) -> Game:
    """A random deal played into phase 2: phase 1 avoids Queens, Kings and marriages so pairs survive into
    phase 2 (R11); the talon is closed at a random trick or played out; then up to ``extra_plies`` random
    phase-2 actions. Returns a LEAD or FOLLOW decision of a deal in progress."""
    while True:
        game = Game.deal(rules, seed=rng.randrange(1 << 40), dealer=rng.randrange(2))
        close_from = rng.randrange(7)
        while not game.is_over and not (game.phase2 and game.stage in (LEAD, FOLLOW)):
            legal = game.legal_actions()
            if CLOSE in legal and len(game.tricks) >= close_from and rng.random() < 0.5:
                game.apply(CLOSE)
                continue
            plain = [a for a in legal if a < 24 and a % 6 not in (2, 3)]
            others = [a for a in legal if a < MARRY_BASE]
            game.apply(rng.choice(plain or others or legal))
        for _ in range(rng.randrange(extra_plies + 1)):
            if game.is_over:
                break
            game.apply(rng.choice(game.legal_actions()))
        if not game.is_over:
            return game


def check_position(game: Game, reference) -> None:
    player = game.to_move
    expected = reference(game.clone(), player)
    result = solve(game)
    assert isinstance(result, SolveResult)
    assert result.value == expected, game.render()
    assert solve_value(game) == expected
    values = solve_all_actions(game)
    assert sorted(values) == game.legal_actions()
    for action, value in values.items():
        child = game.clone()
        child.apply(action)
        assert value == reference(child, player), (game.render(), action)
    # The best action achieves the value.
    assert values[result.best_action] == expected
    assert max(values.values()) == expected


@pytest.mark.parametrize("rules_name", sorted(RULE_SETS))
def test_solver_matches_plain_minimax_on_small_positions(rules_name):
    rng = random.Random(f"small-{rules_name}")
    rules = RULE_SETS[rules_name]
    checked = 0
    while checked < 25:
        game = random_phase2_position(rng, rules, extra_plies=12)
        if game.hands[game.to_move].bit_count() > 3:
            continue  # plain minimax without pruning stays fast up to three cards each
        check_position(game, minimax)
        checked += 1


@pytest.mark.parametrize("rules_name", sorted(RULE_SETS))
def test_solver_matches_exhaustive_search_on_full_positions(rules_name):
    rng = random.Random(f"full-{rules_name}")
    rules = RULE_SETS[rules_name]
    for _ in range(30):
        game = random_phase2_position(rng, rules, extra_plies=2)
        check_position(game, alphabeta)


@pytest.mark.slow
@pytest.mark.parametrize("rules_name", sorted(RULE_SETS))
def test_solver_matches_exhaustive_search_many_positions(rules_name):
    rng = random.Random(f"many-{rules_name}")
    rules = RULE_SETS[rules_name]
    for _ in range(200):
        game = random_phase2_position(rng, rules, extra_plies=rng.choice((0, 0, 3, 8)))
        check_position(game, alphabeta)


def test_generated_positions_cover_the_interesting_cases():
    """The random positions above do reach the cases the solver must get right."""
    rng = random.Random("coverage")
    seen = set()
    for index in range(400):
        rules = list(RULE_SETS.values())[index % len(RULE_SETS)]
        game = random_phase2_position(rng, rules, extra_plies=3)
        legal = game.legal_actions()
        seen.add("closed" if game.closed_by is not None else "exhausted")
        seen.add("follow" if game.stage == FOLLOW else "lead")
        if any(MARRY_BASE <= a < 32 for a in legal):
            seen.add("marriage action")
        if DECLARE in legal:
            seen.add("declare action")
        if any(hand & (hand >> 1) & QUEENS_MASK for hand in game.hands):
            seen.add("pair held")
    assert seen >= {"closed", "exhausted", "follow", "lead", "marriage action", "declare action", "pair held"}


# ---------------------------------------------------------------------------------------------------- explicit decks
def deal_hands(forehand: str, dealer: str, trump: str, talon: str, rules: Rules | None = None) -> Game:
    """A deal from named hands in R4 order (dealer 0, so forehand is player 1)."""
    f, d = forehand.split(), dealer.split()
    deck = f[:3] + d[:3] + f[3:] + d[3:] + [trump] + talon.split()
    return Game.deal(rules or Rules(), deck=deck, dealer=0)


def test_R16_closer_sweeps_for_three():
    """Forehand holds all hearts (trump spades) and the dealer holds no heart and no trump: after closing
    (R10) every heart lead wins (R8 (d): the dealer discards), so forehand reaches 66 with the opponent trickless."""
    game = deal_hands("AH TH KH QH JH 9H", "AC TC KC QC JC 9C", "AS", "TS KS QS JS 9S AD TD KD QD JD 9D")
    game.apply(CLOSE)
    result = solve(game)
    assert result.value == 3
    assert result.value == alphabeta(game.clone(), game.to_move)


def test_R16_failed_closer_loses_three_to_a_trickless_opponent():
    """Forehand closes with worthless cards against aces and tens: he cannot reach 66; the opponent had no
    trick at the closing, so he scores 3 (R16 second line)."""
    game = deal_hands("9C JC 9D JD QD 9H", "AC TC AD TD AH TH", "AS", "TS KS QS JS 9S KC QC KD KH QH JH")
    game.apply(CLOSE)
    assert solve(game).value == -3
    assert solve_all_actions(game) == dict.fromkeys(game.legal_actions(), -3)


def test_R11_marriage_in_phase2_is_an_action_of_the_solver():
    """Standard rules allow a marriage after a closing (R11 ``marriage_in_phase2``); the solver values the
    ``marry`` actions like the engine does, and with paderborn's switches only on the closing turn itself."""
    hands = ("KH QH AH TH 9C JC", "AC TC AD TD KD QD", "AS", "TS KS QS JS 9S KC QC JD 9D JH 9H")
    for rules in (Rules.preset("standard"), Rules.preset("standard", marriage_in_phase2=False)):
        game = deal_hands(*hands, rules=rules)
        game.apply(CLOSE)
        values = solve_all_actions(game)
        assert parse_action("marry KH") in values and parse_action("marry QH") in values
        for action, value in values.items():
            child = game.clone()
            child.apply(action)
            assert value == alphabeta(child, game.to_move)


def test_R13_manual_declaration_is_valued_exactly():
    """Without ``auto_declare`` the declaration is an action (R13); the solver values it like the engine."""
    rng = random.Random("declare")
    rules = Rules.preset("standard", auto_declare=False)
    found = 0
    while found < 10:
        game = random_phase2_position(rng, rules, extra_plies=6)
        if DECLARE not in game.legal_actions():
            continue
        values = solve_all_actions(game)
        child = game.clone()
        child.apply(DECLARE)
        assert values[DECLARE] == child.result.returns()[game.to_move] > 0
        assert solve(game).value == max(values.values())
        found += 1


def test_solver_rejects_positions_it_cannot_solve():
    game = Game.deal(Rules(), seed=1)
    with pytest.raises(ValueError, match="phase-2"):
        solve(game)  # talon open (R7)
    with pytest.raises(ValueError, match="Game"):
        solve("not a game")
    closed = Game.deal(Rules.preset("paderborn"), seed=1)
    closed.apply(CLOSE)
    assert closed.stage == RESPOND_CLOSE
    with pytest.raises(ValueError, match="lead or follow"):
        solve_all_actions(closed)  # the exchange offered after a closing (R9 paderborn)
    over = Game.deal(Rules(), seed=2)
    over.forfeit(0)
    with pytest.raises(ValueError, match="over"):
        solve_value(over)


def test_cached_tables_do_not_change_values():
    """The transposition tables are kept between calls; clearing them gives the same answers."""
    rng = random.Random("cache")
    games = [random_phase2_position(rng, Rules(), extra_plies=1) for _ in range(20)]
    warm = [solve_all_actions(game) for game in games]
    again = [solve_all_actions(game) for game in games]
    clear_cache()
    cold = [solve_all_actions(game) for game in games]
    assert warm == again == cold


def test_solve_does_not_change_the_game():
    rng = random.Random("pure")
    game = random_phase2_position(rng, Rules(), extra_plies=1)
    before = (list(game.hands), game.stage, game.to_move, list(game.history), list(game.trick_points))
    solve(game)
    solve_all_actions(game)
    assert (list(game.hands), game.stage, game.to_move, list(game.history), list(game.trick_points)) == before


def test_windowed_values_are_fail_soft_bounds():
    """``solve_value_within`` (used by PIMC's phase-1 minimax to prune): exact inside the window, a valid bound
    outside it."""
    rng = random.Random("window")
    for index in range(120):
        rules = list(RULE_SETS.values())[index % len(RULE_SETS)]
        game = random_phase2_position(rng, rules, extra_plies=3)
        exact = solve_value(game)
        alpha = rng.randint(-4, 3)
        beta = rng.randint(alpha + 1, 4)
        bounded = solve_value_within(game, alpha, beta)
        if bounded <= alpha:
            assert exact <= bounded
        elif bounded >= beta:
            assert exact >= bounded
        else:
            assert exact == bounded
