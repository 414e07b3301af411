"""The compiled core's kernels where the comparison with the plain-Python engine does not reach them: the deal and
shuffle kernels, self-play rows at a deal's end, the core heuristic at exactly 66, its answer to a closing, its
sampling and last-trick lookahead, and the solver's table shared across worlds. Each pins a behaviour that a
plausible one-line slip changed without any other test failing (a mutation review of sixtysix_env/core, session
73)."""

from __future__ import annotations

import numpy as np
import pytest

from sixtysix_env import Game, Rules
from sixtysix_env.cards import deck_cards
from sixtysix_env.core import core_rule_bits, new_state
from sixtysix_env.core import engine
from sixtysix_env.core.layout import STATE_SIZE

PRESETS = ("standard", "paderborn", "scharf")


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("dealer", (0, 1))
def test_R2_R4_R5_R9_the_deal_kernel_deals_exactly_as_game_deal(preset, dealer):
    """R4: ``engine.deal_into`` (the deal of the batched environments, the AEC mirror, the random playouts, the
    heuristic duels and the inference replays) deals an explicit deck exactly as ``Game.deal``: forehand cards 1-3
    and 7-9, the dealer 4-6 and 10-12, card 13 the trump card, the talon after it (R2: seven cards with 20), forehand
    to move (R5), the trump nine (R2: jack) as the exchange card (R9)."""
    rules = Rules.preset(preset)
    bits = core_rule_bits(rules)
    for seed in range(20):
        deck = list(Game.deal(rules, seed=seed, dealer=dealer).deck)
        cards = np.full(24, -1, dtype=np.int64)
        cards[:len(deck)] = deck
        state = np.empty(STATE_SIZE, dtype=np.int64)
        engine.deal_into(state, cards, dealer, bits)
        expected = new_state(rules, deck=deck, dealer=dealer)
        differing = np.flatnonzero(state != expected).tolist()
        assert not differing, f"seed {seed}: slots {differing} differ from Game.deal"


@pytest.mark.parametrize("deck_size", (24, 20))
def test_R2_the_shuffle_kernel_deals_every_card_of_the_deck_once(deck_size):
    """R2: ``engine.shuffle_deck`` (the random playouts, the heuristic duels, the policy's duels) orders the cards of
    the deck, with 20 cards all but the four nines, each exactly once."""
    cards = np.full(24, -1, dtype=np.int64)
    for seed in range(5):
        engine.seed_generator(seed)
        engine.shuffle_deck(cards, deck_size)
        assert sorted(cards[:deck_size].tolist()) == sorted(deck_cards(deck_size))


def test_self_play_rows_at_the_end_of_a_deal_are_the_last_movers_view():
    """Self-play batch (core/batch.py ``step_batch``): the step that ends a deal (R13-R16) reports the seat that made
    the last move and that seat's view, not his opponent's."""
    import sixtysix_env

    envs = sixtysix_env.vector_env(4, rules="standard", self_play=True)
    rng = np.random.default_rng(3)
    _, infos = envs.reset(seed=2)
    ended = 0
    for _ in range(200):
        masks = infos["action_mask"]
        movers = infos["seat"].copy()
        actions = np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in masks], dtype=np.int64)
        _, _, terminations, _, infos = envs.step(actions)
        for index in np.flatnonzero(terminations):
            assert infos["seat"][index] == movers[index]
            ended += 1
    assert ended > 10


# An explicit deck (R4 order), as in tests/test_core.py: the 9H is turned up, hearts are trump; with dealer 0,
# forehand (player 1) holds AH TH KH QH AC 9D, the trump marriage among them.
DECK = ["AH", "TH", "KH", "9C", "JC", "QC", "QH", "AC", "9D", "TC", "KC", "JD", "9H",
        "QD", "KD", "TD", "AD", "9S", "JS", "QS", "KS", "TS", "AS", "JH"]


@pytest.mark.parametrize("trick_points, reaches", [(26, True), (25, False)])
def test_the_heuristic_announces_a_marriage_that_reaches_exactly_66(trick_points, reaches):
    """R11, R13: a marriage whose announcement brings a player who has won a trick (R12) to 66 or more wins the deal
    at once; the core heuristic's ``winning_marriage`` must see that at exactly 66 (26 card points + the trump
    marriage's 40), not only above it."""
    from sixtysix_env.actions import parse_action
    from sixtysix_env.core.heuristic import winning_marriage
    from sixtysix_env.core.layout import TRICK_POINTS0, TRICKS_WON0

    state = new_state(Rules(), deck=DECK, dealer=0)
    state[TRICKS_WON0 + 1] = 1  # forehand has won a trick worth ``trick_points`` (only these slots are read)
    state[TRICK_POINTS0 + 1] = trick_points
    expected = parse_action("marry QH") if reaches else -1
    assert winning_marriage(state, engine.legal_mask(state)) == expected


def test_the_heuristics_follow_that_reaches_exactly_66_gets_the_win_bonus():
    """R13: a follower who reaches 66 with the trick has won the deal, so the core heuristic's follow rule adds its
    win bonus at exactly 66 too: with 45 points, taking the led TS with the AS (21 points) reaches 66 and is chosen
    even though the AS is (here, by the keep value given) worth keeping; at 44 points the 9C is thrown."""
    from agents.rule_based import HeuristicAgent
    from sixtysix_env.cards import parse_card
    from sixtysix_env.core.heuristic import follow_choice

    params = HeuristicAgent().core_params()
    state = new_state(Rules(), deck=DECK, dealer=0)  # hearts trump
    ace, nine = parse_card("AS"), parse_card("9C")
    keep = np.zeros(24, dtype=np.float64)
    keep[ace] = 60.0
    cards = (1 << ace) | (1 << nine)
    for points, expected in ((45, ace), (44, nine)):
        chosen = follow_choice(cards, keep, parse_card("TS"), state, params, points, 0, True, 0, 0, 0.0, True)
        assert chosen == expected, points


def test_the_heuristic_takes_the_exchange_offered_after_the_opponents_closing():
    """R9 (paderborn ``exchange_after_opponent_closes``), R10: when forehand closes at once, the dealer, holding the
    trump nine (9S under the turned-up QS), is offered the exchange; the core heuristic takes it (the face-up trump
    beats the nine), as ``HeuristicAgent`` does."""
    from agents.rule_based import HeuristicAgent
    from sixtysix_env.actions import CLOSE, EXCHANGE, PASS
    from sixtysix_env.core import apply_action, legal_actions
    from sixtysix_env.core.heuristic import heuristic_action
    from sixtysix_env.core.solver import Table

    deck = ["AH", "TH", "KH", "9S", "JC", "QC", "QH", "AC", "9C", "TC", "KC", "JD", "QS",
            "QD", "KD", "TD", "AD", "9D", "JS", "9H", "KS", "TS", "AS", "JH"]  # the dealer holds 9S; QS is trump
    rules = Rules.preset("paderborn")
    state = new_state(rules, deck=deck, dealer=0)
    apply_action(state, CLOSE)
    assert legal_actions(state) == [EXCHANGE, PASS]
    table = Table(12)
    assert heuristic_action(state, HeuristicAgent().core_params(), table.entries, table.nodes) == EXCHANGE


def test_sampled_opponent_hands_respect_the_voids_he_showed_in_phase2():
    """R8: a phase-2 follower who does not follow suit (or does not trump) shows he holds no card of that suit
    (``CANNOT_HOLD``). The exported kernel ``heuristic.sample_opponent_hand`` draws the opponent's hand from the
    player's view: his shown cards plus unseen cards he may still hold, never a card he showed he cannot hold.
   """
    import random

    from sixtysix_env.core import apply_action, legal_actions
    from sixtysix_env.core.heuristic import opponent_known, sample_opponent_hand
    from sixtysix_env.core.layout import CANNOT_HOLD0, HAND0, OVER, STAGE, TO_MOVE
    from sixtysix_env.core.search import seed_kernels

    checked = 0
    for seed in range(40):
        rng = random.Random(seed)
        state = new_state(Rules(), seed=seed, dealer=seed & 1)
        while state[STAGE] != OVER:
            player = int(state[TO_MOVE])
            ruled_out = int(state[CANNOT_HOLD0 + player])
            if ruled_out:
                seed_kernels(seed)
                known = int(opponent_known(state, player))
                size = bin(int(state[HAND0 + 1 - player])).count("1")
                for _ in range(30):
                    hand = int(sample_opponent_hand(state, player))
                    assert hand & ruled_out == 0 and hand & known == known and bin(hand).count("1") == size
                checked += 1
            apply_action(state, rng.choice(legal_actions(state)))
    assert checked > 20


def _phase1_position(seed: int, talon_limit: int):
    """A phase-1 lead (R7) of a random deal once the talon is down to ``talon_limit`` cards, as a core state."""
    import random

    from sixtysix_env.core import state_from_game
    from sixtysix_env.game import LEAD

    rng = random.Random(seed)
    game = Game.deal(Rules(), seed=seed, dealer=seed & 1)
    while game.talon_size > talon_limit or game.stage != LEAD:
        game.apply(rng.choice([action for action in game.legal_actions() if action < 24]))
    return state_from_game(game), rng


def test_a_solver_table_shared_by_worlds_with_other_talon_orders_changes_no_value():
    """R7: in phase 1 the value of a position depends on the order of the face-down talon, which the table keys of
    phase-1 positions do not hold; the table numbers the worlds (``Table.world_of``) and an entry found in one talon
    order must not be used in another. Solving four orders of one talon with one table gives each order the value a
    fresh table gives."""
    from sixtysix_env.core.layout import STOCK, STOCK_LEN, STOCK_POS
    from sixtysix_env.core.solver import Table, solve_value

    order_dependent = 0
    for seed in range(12):
        state, rng = _phase1_position(seed, (4, 6, 8)[seed % 3])
        first, length = int(state[STOCK_POS]), int(state[STOCK_LEN])
        worlds = [state]
        for _ in range(3):
            world = state.copy()
            cards = state[STOCK + first:STOCK + length].tolist()
            rng.shuffle(cards)
            world[STOCK + first:STOCK + length] = cards
            worlds.append(world)
        fresh = [solve_value(world, Table(14), 0) for world in worlds]
        order_dependent += len(set(fresh)) > 1
        shared = Table(14)
        assert [solve_value(world, shared, 0) for world in worlds] == fresh, seed
    assert order_dependent >= 3


def test_a_shared_solver_table_tells_apart_closings_against_a_trickless_opponent():
    """R10, R16: a failed closer concedes 3 game points if his opponent had no trick at the closing, else 2, so two
    closed positions that differ only in that fact (``OPPONENT_TRICKLESS_AT_CLOSE``) may differ in value; solved one
    after the other with one table, each gets the value a fresh table gives."""
    import random

    from sixtysix_env.actions import CLOSE
    from sixtysix_env.core import check_state, state_from_game
    from sixtysix_env.core.layout import OPPONENT_TRICKLESS_AT_CLOSE
    from sixtysix_env.core.solver import Table, _closer_failed_value, solve_value
    from sixtysix_env.game import FOLLOW, LEAD

    pairs = 0
    for seed in range(25):
        rng = random.Random(seed)
        game = Game.deal(Rules(), seed=seed, dealer=seed & 1)
        while not game.is_over:
            legal = game.legal_actions()
            game.apply(CLOSE if CLOSE in legal and rng.random() < 0.3 else rng.choice(legal))
            if game.is_over or game.closed_by is None or game.stage not in (LEAD, FOLLOW):
                continue
            state = state_from_game(game)
            twin = state.copy()
            twin[OPPONENT_TRICKLESS_AT_CLOSE] ^= 1
            check_state(twin)
            if _closer_failed_value(state) != 0:  # decided without a search (the closer cannot reach 66)
                continue
            fresh = [solve_value(position, Table(12), 0) for position in (twin, state)]
            if fresh[0] == fresh[1]:
                continue
            shared = Table(12)
            assert [solve_value(position, shared, 0) for position in (twin, state)] == fresh, (seed, game.history)
            pairs += 1
    assert pairs >= 10


def test_a_heuristic_duel_margin_is_the_mean_of_the_two_seatings():
    """R16: ``heuristic_duel`` plays each deal twice with the seats swapped and reports the mean of the first
    player's game points over the two games: whole points from -3 to 3 each, so a margin lies in -3..3 in steps of
    one half, and deals whose two results differ in parity give a half."""
    from agents.rule_based import HeuristicAgent
    from sixtysix_env.core.heuristic import heuristic_duel
    from sixtysix_env.core.solver import Table

    params = HeuristicAgent().core_params()
    table = Table(16)
    deals = 16
    margins = np.zeros(deals)
    heuristic_duel(params, params, deals, 5, core_rule_bits(Rules()), table.entries, table.nodes,
                   table.claim_worlds(deals), margins)
    assert np.all(np.abs(margins) <= 3) and np.all((2 * margins) == np.round(2 * margins))
    assert np.any(margins != np.round(margins))


def test_the_heuristics_last_talon_trick_lookahead_leads_the_card_with_the_best_worst_case():
    """R7, R8: on the talon's last trick the core heuristic looks through the trick into phase 2 over at most four
    layouts of the hidden cards (one unseen card face down, the rest in the opponent's hand), lets the opponent find
    his best reply in each, and solves the rest: the lead it chooses has the largest sum over the layouts of the
    value after the opponent's best reply. The layouts are re-drawn here from the same seed."""
    import random

    from agents.rule_based import HeuristicAgent, on_last_talon_trick
    from sixtysix_env.core import state_from_game
    from sixtysix_env.core.heuristic import last_talon_trick, opponent_known, unseen_for
    from sixtysix_env.core.layout import CANNOT_HOLD0, HAND0, OVER, STAGE, STOCK, STOCK_POS, TO_MOVE
    from sixtysix_env.core.layout import FOLLOW as CORE_FOLLOW
    from sixtysix_env.core.search import sample_subset, seed_kernels
    from sixtysix_env.core.solver import Table, solve_value
    from sixtysix_env.game import LEAD

    params = HeuristicAgent().core_params()
    table = Table(16)

    def value(position, me):
        if position[STAGE] == OVER:
            return int(engine.value_for(position, me))
        return solve_value(position, table, me)

    checked = 0
    for seed in range(40):
        rng = random.Random(seed)
        game = Game.deal(Rules(), seed=seed, dealer=seed & 1)
        while not game.is_over and not (on_last_talon_trick(game) and game.stage == LEAD):
            game.apply(rng.choice(game.legal_actions()))
        if game.is_over:
            continue
        state = state_from_game(game)
        me, opponent = int(state[TO_MOVE]), 1 - int(state[TO_MOVE])
        known = int(opponent_known(state, me))
        pool = int(unseen_for(state, me)) & ~int(state[CANNOT_HOLD0 + me])
        needed = bin(int(state[HAND0 + opponent])).count("1") - bin(known).count("1")
        if bin(pool).count("1") != needed + 1:
            continue
        seed_kernels(seed)
        talon_cards = pool if bin(pool).count("1") <= 4 else int(sample_subset(pool, 4))
        worlds = []
        for card in range(24):
            if talon_cards >> card & 1:
                world = state.copy()
                world[HAND0 + opponent] = known | (pool & ~(1 << card))
                world[STOCK + int(state[STOCK_POS])] = card
                worlds.append(world)
        seed_kernels(seed)
        chosen = int(last_talon_trick(state, params, table.entries, table.nodes))
        totals = {}
        legal = int(engine.legal_mask(state))
        for action in range(32):  # cards and marriages
            if not legal >> action & 1:
                continue
            total = 0
            for world in worlds:
                after = world.copy()
                engine.apply(after, action)
                if after[STAGE] == CORE_FOLLOW and after[TO_MOVE] != me:
                    replies = []
                    for reply in range(24):
                        if engine.legal_mask(after) >> reply & 1:
                            replied = after.copy()
                            engine.apply(replied, reply)
                            replies.append(value(replied, me))
                    total += min(replies)
                else:
                    total += value(after, me)
            totals[action] = total
        assert totals[chosen] == max(totals.values()), (seed, chosen, totals)
        checked += 1
    assert checked >= 10
