"""The compiled ``heuristic`` (sixtysix_env/core/heuristic.py) against its reference, agents.rule_based.HeuristicAgent,
and the inference of the opponent's hand by replaying the deal (sixtysix_env/core/inference.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import EXCHANGE, MARRY_BASE, parse_action
from sixtysix_env.core import state_from_game
from sixtysix_env.core.heuristic import heuristic_action, rollout_values
from sixtysix_env.core.inference import deal_likelihood, inferred_worlds, public_timeline, world_likelihood
from sixtysix_env.core.layout import HAND0, STATE_SIZE
from sixtysix_env.core.search import determinize_into, information_template, seed_kernels
from sixtysix_env.game import FOLLOW, LEAD

from agents import make_agent
from agents.pimc import _prior_seed
from agents.rule_based import HeuristicAgent, on_last_talon_trick
from agents.solver import closing_wins, core_table

PRESETS = ("standard", "paderborn", "scharf")
REFERENCE = HeuristicAgent()
PARAMS = REFERENCE.core_params()


def decision_kind(game: Game) -> str:
    """Which rule of the heuristic decides here: the ones that sample nothing are ``follow`` (R6, R7) and
    ``exhausted`` (R8 with the talon used up: the true position is solved)."""
    if game.phase2:
        return "closed" if game.closed_by is not None else "exhausted"
    if on_last_talon_trick(game):
        return "last trick"
    return "follow" if game.stage == FOLLOW else "lead"


def self_play_positions(rules: Rules, deals: int, seed: int):
    """(game, infoset, the reference heuristic's action) at every decision of heuristic self-play."""
    for deal in range(deals):
        game = Game.deal(rules, seed=seed + deal, dealer=deal & 1)
        players = [HeuristicAgent(seed=seed * 7 + 2 * deal + seat) for seat in range(2)]
        while not game.is_over:
            player = game.current_player
            infoset = InformationSet(game, player)
            action = players[player].act(infoset)
            yield game, infoset, action
            game.apply(action)


def core_choice(game: Game) -> int:
    table = core_table()
    return int(heuristic_action(state_from_game(game), PARAMS, table.entries, table.nodes))


@pytest.mark.parametrize("preset", PRESETS)
def test_rules_that_sample_nothing_choose_exactly_the_reference_action(preset):
    """Phase-1 follows (R6, R7), exchanges (R9), marriages (R11) and phase 2 after the talon is used up (R8): the
    compiled heuristic picks the reference's action at every such decision of 60 self-play deals."""
    seed_kernels(1)
    checked = {"follow": 0, "exhausted": 0, "rule lead": 0}
    for game, infoset, action in self_play_positions(Rules.preset(preset), 60, 1000):
        kind = decision_kind(game)
        legal = infoset.legal_actions
        # A lead decided by R9 (exchange first) or R11 (a marriage, when no closing is even considered).
        rule_lead = kind == "lead" and (EXCHANGE in legal or MARRY_BASE <= action < EXCHANGE
                                        and not REFERENCE._close_plausible(infoset))
        if kind in ("follow", "exhausted") or rule_lead:
            assert core_choice(game) == action, (kind, game.history)
            checked["rule lead" if rule_lead else kind] += 1
    assert checked["follow"] > 100 and checked["exhausted"] > 100 and checked["rule lead"] > 20, checked


def test_sampled_decisions_agree_with_the_reference_as_often_as_the_reference_with_itself():
    """Leads (the reply model over sampled hands), closings (R10), the talon's last trick (R7) and phase 2 after a
    closing sample hidden cards: the two implementations draw from the same distribution, so they agree about as
    often as the reference agrees with itself under another seed."""
    seed_kernels(2)
    core_agree = reference_agree = total = 0
    for game, infoset, action in self_play_positions(Rules(), 80, 2000):
        if decision_kind(game) in ("follow", "exhausted") or len(infoset.legal_actions) == 1:
            continue
        total += 1
        core_agree += core_choice(game) == action
        reference_agree += HeuristicAgent(seed=total + 10**6).act(infoset) == action
    assert total > 300
    assert core_agree / total >= reference_agree / total - 0.05, (core_agree, reference_agree, total)


def exact_closing_check(state: np.ndarray, params: np.ndarray, seed: int) -> bool:
    """R10's closing check as the reference states it: the same sampled worlds (numba's generator seeded alike),
    every one solved exactly after the closing, then the mean and the share of wins."""
    from sixtysix_env.actions import CLOSE, PASS
    from sixtysix_env.core.engine import apply, legal_mask, value_for
    from sixtysix_env.core.heuristic import P_CLOSE_MIN_VALUE, P_CLOSE_MIN_WIN, P_CLOSE_SAMPLES, world_for
    from sixtysix_env.core.layout import OVER, RESPOND_CLOSE, STAGE, TO_MOVE
    from sixtysix_env.core.solver import _solve_value

    table = core_table()
    me = int(state[TO_MOVE])
    samples = int(params[P_CLOSE_SAMPLES])
    seed_kernels(seed)
    values = []
    for _ in range(samples):
        world = np.empty(STATE_SIZE, dtype=np.int64)
        world_for(world, state, me)
        apply(world, CLOSE)
        if world[STAGE] == RESPOND_CLOSE:
            apply(world, EXCHANGE if legal_mask(world) >> EXCHANGE & 1 else PASS)
        if world[STAGE] == OVER:
            values.append(int(value_for(world, me)))
        else:
            value = int(_solve_value(world, -4, 4, table.entries, 0, table.nodes))
            values.append(value if me == 0 else -value)
    return (sum(values) / samples >= params[P_CLOSE_MIN_VALUE]
            and sum(value > 0 for value in values) >= params[P_CLOSE_MIN_WIN] * samples)


def test_the_closing_check_answers_as_solving_every_sampled_world_exactly():
    """R10: the compiled closing check stops early and asks each world only whether the closer wins it, yet gives
    the answer of solving every sampled world exactly, for the heuristic's thresholds and for looser and stricter
    ones (so that both answers and every shortcut occur), at the closable leads of self-play deals."""
    from sixtysix_env.actions import CLOSE
    from sixtysix_env.core.heuristic import (
        P_CLOSE_FILTER, P_CLOSE_MIN_VALUE, P_CLOSE_MIN_WIN, P_CLOSE_SAMPLES, should_close,
    )

    table = core_table()
    answers = {True: 0, False: 0}
    for index, (game, infoset, _action) in enumerate(self_play_positions(Rules.preset("standard"), 40, 4100)):
        if game.stage != LEAD or CLOSE not in infoset.legal_actions:
            continue
        state = state_from_game(game)
        for min_value, min_win, samples in ((1.0, 0.8, 6), (0.0, 0.5, 6), (-1.0, 0.3, 5), (1.5, 0.9, 12)):
            params = PARAMS.copy()
            params[P_CLOSE_FILTER] = 0.0  # every closable lead is checked, not only plausible ones
            params[P_CLOSE_MIN_VALUE], params[P_CLOSE_MIN_WIN], params[P_CLOSE_SAMPLES] = min_value, min_win, samples
            seed_kernels(index)
            answer = bool(should_close(state, params, table.entries, table.nodes))
            assert answer == exact_closing_check(state, params, index), (game.history, min_value, min_win)
            answers[answer] += 1
    assert answers[True] > 20 and answers[False] > 20, answers


@pytest.mark.parametrize("preset", ["standard", "paderborn"])
def test_r10_a_closing_check_that_reads_its_world_closes_exactly_where_closing_wins_it(preset):
    """R10: with ``P_CLOSE_READS_WORLD`` (the opponent's seat of ``rollout:opponent_closing=world``) the closing
    check solves the state it is given instead of sampling worlds from the mover's view: at the closable leads of
    self-play deals it closes exactly where closing wins the true deal, whatever the kernels' random stream, and
    the plausibility filter still comes first; without the flag, on the same leads, it answers from sampled worlds
    and differs somewhere."""
    from sixtysix_env.actions import CLOSE
    from sixtysix_env.core.heuristic import P_CLOSE_FILTER, P_CLOSE_READS_WORLD, close_plausible, should_close

    table = core_table()
    reads_world = PARAMS.copy()
    reads_world[P_CLOSE_READS_WORLD] = 1.0
    unfiltered = reads_world.copy()
    unfiltered[P_CLOSE_FILTER] = 0.0
    sampling = PARAMS.copy()
    sampling[P_CLOSE_FILTER] = 0.0
    answers = {True: 0, False: 0}
    differs = filtered = 0
    for index, (game, infoset, _action) in enumerate(self_play_positions(Rules.preset(preset), 30, 5200)):
        if game.stage != LEAD or CLOSE not in infoset.legal_actions:
            continue
        state = state_from_game(game)
        wins = closing_wins(game)
        for stream in (index, index + 10_000):
            seed_kernels(stream)
            assert bool(should_close(state, unfiltered, table.entries, table.nodes)) == wins, game.history
        seed_kernels(index)
        plausible = bool(close_plausible(state, reads_world))
        assert bool(should_close(state, reads_world, table.entries, table.nodes)) == (plausible and wins)
        filtered += wins and not plausible
        seed_kernels(index)
        differs += bool(should_close(state, sampling, table.entries, table.nodes)) != wins
        answers[wins] += 1
    assert answers[True] >= 10 and answers[False] >= 10, answers
    assert differs >= 1 and filtered >= 1, (differs, filtered)


def test_a_led_ten_is_taken_with_a_low_trump_from_an_explicit_deck():
    """R6, R7: the follow rule takes a led ten with the trump jack rather than throwing a card (card points won
    minus the worth of the card spent), in the core as in the reference."""
    # Forehand (player 1, dealer 0) holds TH ...; the dealer holds JS (trump: spades, AS turned up).
    deck = ["TH", "9C", "9D", "JS", "JC", "QD", "KH", "AC", "JD", "9H", "QC", "KD", "AS",
            "TC", "TD", "QH", "AH", "9S", "QS", "KS", "TS", "KC", "AD", "JH"]
    game = Game.deal(Rules(), deck=deck, dealer=0)
    game.apply(parse_action("play TH"))
    assert game.current_player == 0 and game.stage == FOLLOW
    assert HeuristicAgent(seed=0).act(InformationSet(game, 0)) == parse_action("play JS")
    assert core_choice(game) == parse_action("play JS")


def test_the_core_heuristic_decides_from_its_own_view_only():
    """Swapping the hidden cards for another layout the mover cannot tell apart (his opponent's unknown cards and
    the talon order) never changes his action under the same random stream."""
    rng = random.Random(3)
    checked = 0
    for game, infoset, _action in self_play_positions(Rules(), 40, 3000):
        if len(infoset.legal_actions) == 1:
            continue
        other = infoset.determinize(rng)
        seed_kernels(checked)
        first = core_choice(game)
        seed_kernels(checked)
        assert core_choice(other) == first, game.history
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("preset", PRESETS)
def test_the_true_deal_explains_the_heuristics_play_with_likelihood_one(preset):
    """Replaying a self-play deal from its true deck: every choice of the opponent is the model's (likelihood 1),
    and the replay ends in the true position."""
    rules = Rules.preset(preset)
    table = core_table()
    replay = np.empty(STATE_SIZE, dtype=np.int64)
    checked = 0
    for game, infoset, _action in self_play_positions(rules, 25, 4000):
        deck = np.array(list(game.deck) + [-1] * (24 - len(game.deck)), dtype=np.int64)
        timeline = public_timeline(infoset)
        likelihood = deal_likelihood(deck, infoset.player, timeline.history, timeline.dealer, timeline.rule_bits,
                                     PARAMS, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, replay, table.entries, table.nodes,
                                     state_from_game(game))
        assert likelihood == 1.0, game.history
        checked += 1
    assert checked > 300


def test_a_follow_the_model_would_not_make_costs_the_floor():
    """R6, R7: an opponent who throws the nine instead of taking the led ten with his trump jack is not the model
    player: the true deck gets the follow floor (0.25 here)."""
    deck = ["TH", "9C", "9D", "JS", "JC", "QD", "KH", "AC", "JD", "9H", "QC", "KD", "AS",
            "TC", "TD", "QH", "AH", "9S", "QS", "KS", "TS", "KC", "AD", "JH"]
    game = Game.deal(Rules(), deck=deck, dealer=0)
    game.apply(parse_action("play TH"))
    game.apply(parse_action("play 9H"))  # the dealer (player 0) throws the nine of hearts: the model takes with JS
    infoset = InformationSet(game, game.current_player)
    assert infoset.player == 1
    timeline = public_timeline(infoset)
    table = core_table()
    likelihood = deal_likelihood(np.array(game.deck, dtype=np.int64), 1, timeline.history, timeline.dealer,
                                 timeline.rule_bits, PARAMS, 0.25, 0.5, 1.0, 1.0, 1.0, 1.0,
                                 np.empty(STATE_SIZE, dtype=np.int64), table.entries, table.nodes,
                                 state_from_game(game))
    assert likelihood == 0.25


@pytest.mark.parametrize("preset", ["standard", "paderborn"])
def test_r10_playing_on_where_closing_would_win_costs_the_played_on_floor(preset):
    """R10: replaying self-play deals from their true decks with only ``played_on_floor`` set, the likelihood is the
    floor to the power of the opponent's phase-1 leads where closing was legal, the heuristic's filter found it
    plausible, closing would have won him the deal with every card seen (the exact solver), and he played on;
    every other choice of his is unmodelled (floors 1)."""
    from sixtysix_env.actions import CLOSE
    from sixtysix_env.core.heuristic import close_plausible

    rules = Rules.preset(preset)
    table = core_table()
    replay = np.empty(STATE_SIZE, dtype=np.int64)
    seen = {0: 0, 1: 0, 2: 0}
    for index, (game, infoset, _action) in enumerate(self_play_positions(rules, 20, 6100)):
        if index % 3:
            continue
        opponent = 1 - infoset.player
        replayed = Game.deal(rules, deck=list(game.deck), dealer=game.dealer)
        played_on = 0
        for action in game.history:
            if (replayed.current_player == opponent and replayed.stage == LEAD and action != CLOSE
                    and CLOSE in replayed.legal_actions()):
                played_on += (bool(close_plausible(state_from_game(replayed), PARAMS))
                              and closing_wins(replayed))
            replayed.apply(action)
        deck = np.array(list(game.deck) + [-1] * (24 - len(game.deck)), dtype=np.int64)
        timeline = public_timeline(infoset)
        likelihood = deal_likelihood(deck, infoset.player, timeline.history, timeline.dealer, timeline.rule_bits,
                                     PARAMS, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, replay, table.entries, table.nodes,
                                     state_from_game(game))
        assert likelihood == 0.5 ** played_on, game.history
        seen[min(played_on, 2)] += 1
    assert seen[0] > 20 and seen[1] > 5, seen


@pytest.mark.parametrize("hand, wins", [(["AH", "TH", "KH", "QH", "JH", "AS"], True),
                                         (["9C", "JC", "9D", "JD", "9S", "JS"], False)])
def test_a_closing_the_closer_loses_with_every_card_seen_costs_the_closing_floor(hand, wins):
    """R10: the forehand closes at his first lead. Holding the five top trumps and an ace he wins the closed deal
    whatever the cards (likelihood 1); holding nines and jacks of plain suits he cannot reach 66 (the floor, 0.25).
    Without the closing floor (1) both keep likelihood 1."""
    others = [card for card in ("TC", "QC", "KC", "AC", "TD", "QD", "KD", "AD", "TS", "QS", "KS",
                                "9C", "JC", "9D", "JD", "9S", "JS", "AS", "TH", "KH", "QH", "JH", "AH")
              if card not in hand]
    trump = "9H"
    # R4, dealer 0: the forehand (player 1) gets positions 0-2 and 6-8, the dealer 3-5 and 9-11, 12 is turned up.
    deck = hand[:3] + others[:3] + hand[3:] + others[3:6] + [trump] + others[6:17]
    assert len(set(deck)) == 24
    game = Game.deal(Rules(), deck=deck, dealer=0)
    assert game.current_player == 1
    game.apply(parse_action("close"))
    infoset = InformationSet(game, 0)
    timeline = public_timeline(infoset)
    table = core_table()
    replay = np.empty(STATE_SIZE, dtype=np.int64)
    deck_cards = np.array(game.deck, dtype=np.int64)
    for closing_floor, expected in ((0.25, 1.0 if wins else 0.25), (1.0, 1.0)):
        likelihood = deal_likelihood(deck_cards, 0, timeline.history, timeline.dealer, timeline.rule_bits, PARAMS,
                                     1.0, 1.0, 1.0, 1.0, closing_floor, 1.0, replay, table.entries, table.nodes,
                                     state_from_game(game))
        assert likelihood == expected


def test_the_opponents_play_after_a_closing_costs_the_closed_floor_once_per_card_not_best():
    """R8, R10: over self-play deals with a closing, the replay's likelihood (closed floor 0.5, all other floors 1)
    is 0.5 to the power of the opponent's cards after the closing that the exact solver, run on the reference
    engine's own position, values below his best; and at least one deal has such a card."""
    from sixtysix_env.core.solver import solve_actions

    table = core_table()
    replay = np.empty(STATE_SIZE, dtype=np.int64)
    checked = not_best_total = 0
    for game, infoset, _action in self_play_positions(Rules(), 120, 7100):
        if game.closed_by is None or game.stage not in (LEAD, FOLLOW):
            continue
        observer = infoset.player
        # The opponent's decisions after the closing, valued on a fresh replay of the reference engine.
        reference = Game.deal(game.rules, deck=list(game.deck), dealer=game.dealer)
        not_best = 0
        for action in game.history:
            if (reference.current_player != observer and reference.closed_by is not None
                    and reference.stage in (LEAD, FOLLOW) and len(reference.legal_actions()) > 1):
                values = solve_actions(state_from_game(reference))
                not_best += values[action] < max(values.values())
            reference.apply(action)
        timeline = public_timeline(infoset)
        likelihood = deal_likelihood(np.array(list(game.deck) + [-1] * (24 - len(game.deck)), dtype=np.int64),
                                     observer, timeline.history, timeline.dealer, timeline.rule_bits, PARAMS, 1.0,
                                     1.0, 1.0, 0.5, 1.0, 1.0, replay, table.entries, table.nodes,
                                     state_from_game(game))
        assert likelihood == 0.5 ** not_best, game.history
        checked += 1
        not_best_total += not_best
    assert checked > 50 and not_best_total > 0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(PRESETS), steps=st.integers(1, 30))
def test_every_sampled_world_completes_into_a_deal_that_replays_to_it(seed, preset, steps):
    """Property over random deals and random play: every world drawn from the information set completes (dealt
    hands and draws, R4, R7) into a deal whose replayed history ends in that world (no failed completion)."""
    rules = Rules.preset(preset)
    rng = random.Random(seed)
    game = Game.deal(rules, seed=seed, dealer=seed & 1)
    for _ in range(steps):
        if game.is_over:
            break
        game.apply(rng.choice(game.legal_actions()))
    if game.is_over:
        return
    infoset = InformationSet(game, game.current_player)
    timeline = public_timeline(infoset)
    template, allowed, unseen, needed = information_template(infoset)
    table = core_table()
    seed_kernels(seed)
    world = np.empty(STATE_SIZE, dtype=np.int64)
    replay = np.empty(STATE_SIZE, dtype=np.int64)
    for _ in range(20):
        determinize_into(world, template, 1 - infoset.player, allowed, unseen, needed)
        likelihood = world_likelihood(world, infoset.player, timeline.history, timeline.need, timeline.arrive,
                                      timeline.draw_after, timeline.draw_winner, timeline.bottom_draw,
                                      timeline.dealer, timeline.trump_card, timeline.rule_bits, PARAMS, 0.1, 0.1,
                                      1.0, 0.5, 0.5, 0.5, replay, table.entries, table.nodes)
        assert 0.0 < likelihood <= 1.0


def test_worlds_after_an_exchange_before_drawing_replay_to_them():
    """R9 in the paderborn predraw stage (before closing or drawing, R10): the timeline holds the exchanged trump
    card in the exchanger's hand and the nine as the new bottom card, so every sampled world of every later
    position completes into a deal that replays to it (random play rarely exchanges there: the property above
    did not catch a timeline that dropped it)."""
    from sixtysix_env.actions import DRAW
    from sixtysix_env.game import PREDRAW

    rules = Rules.preset("paderborn")
    table = core_table()
    world = np.empty(STATE_SIZE, dtype=np.int64)
    replay = np.empty(STATE_SIZE, dtype=np.int64)
    positions = 0
    for seed in range(400):
        rng = random.Random(seed)
        game = Game.deal(rules, seed=seed, dealer=seed & 1)
        exchanged = False
        while not game.is_over:
            legal = game.legal_actions()
            if game.stage == PREDRAW and EXCHANGE in legal:
                action, exchanged = EXCHANGE, True
            elif game.stage == PREDRAW:
                action = DRAW  # closing would end the talon early: keep the late positions too
            else:
                action = rng.choice(legal)
            game.apply(action)
            if not exchanged or game.is_over:
                continue
            infoset = InformationSet(game, game.current_player)
            timeline = public_timeline(infoset)
            template, allowed, unseen, needed = information_template(infoset)
            seed_kernels(seed)
            for _ in range(5):
                determinize_into(world, template, 1 - infoset.player, allowed, unseen, needed)
                likelihood = world_likelihood(world, infoset.player, timeline.history, timeline.need,
                                              timeline.arrive, timeline.draw_after, timeline.draw_winner,
                                              timeline.bottom_draw, timeline.dealer, timeline.trump_card,
                                              timeline.rule_bits, PARAMS, 0.1, 0.1, 1.0, 0.5, 0.5, 0.5, replay,
                                              table.entries, table.nodes)
                assert 0.0 < likelihood <= 1.0, (seed, game.history)
            positions += 1
        if positions >= 300:
            break
    assert positions >= 300


def test_inferred_worlds_place_the_heuristics_cards_better_than_uniform_worlds():
    """Against the heuristic, worlds kept with the likelihood of its play put more of its unknown cards where
    they are than uniform worlds do (the evidence is real), over phase-1 decisions of 25 self-play deals."""
    table = core_table()
    seed_kernels(9)
    uniform_hits = inferred_hits = unknown_total = 0
    count = 60
    for game, infoset, _action in self_play_positions(Rules(), 25, 5000):
        if game.phase2 or len(game.tricks) < 2:
            continue
        opponent = 1 - infoset.player
        unknown = game.hands[opponent] & ~infoset.opponent_known
        if not unknown:
            continue
        timeline = public_timeline(infoset)
        template, allowed, unseen, needed = information_template(infoset)
        worlds = np.empty((count, STATE_SIZE), dtype=np.int64)
        for index in range(count):
            determinize_into(worlds[index], template, opponent, allowed, unseen, needed)
        uniform_hits += sum((int(row[HAND0 + opponent]) & unknown).bit_count() for row in worlds)
        stats = np.zeros(3, dtype=np.int64)
        inferred_worlds(count, 200, template, infoset.player, allowed, unseen, needed, timeline.history,
                        timeline.need, timeline.arrive, timeline.draw_after, timeline.draw_winner,
                        timeline.bottom_draw, timeline.dealer, timeline.trump_card, timeline.rule_bits, PARAMS, 0.05,
                        0.05, 1.0, 1.0, 1.0, 1.0, table.entries, table.nodes, worlds, stats, False)
        assert stats[1] == 0  # no failed completion
        inferred_hits += sum((int(row[HAND0 + opponent]) & unknown).bit_count() for row in worlds)
        unknown_total += unknown.bit_count() * count
    assert unknown_total > 5000
    uniform, inferred = uniform_hits / unknown_total, inferred_hits / unknown_total
    # A binomial standard error of the difference is about 0.01 here; the measured gain is about 0.03.
    assert inferred > uniform + 0.01, (uniform, inferred)


def test_rollouts_share_a_random_stream_per_world_and_value_the_declared_win():
    """Common random numbers: the same world and seed give the same rollout value; an action that ends the deal
    (a marriage reaching 66, R11, R13) is valued at its result."""
    table = core_table()
    game = Game.deal(Rules(), seed=11, dealer=0)
    state = state_from_game(game)
    worlds = np.stack([state, state])
    values = np.zeros((2, 37))
    legal = sum(1 << action for action in game.legal_actions())
    rollout_values(worlds, 2, legal, game.current_player, PARAMS, PARAMS, table.entries, table.nodes,
                   np.array([5, 5], dtype=np.int64), table.claim_worlds(2), values)
    assert np.array_equal(values[0], values[1])
    assert all(abs(values[0, action]) in (1, 2, 3) or values[0, action] == 0 for action in game.legal_actions())


def test_rollouts_that_solve_phase2_equal_played_rollouts_once_the_talon_is_used_up():
    """R7, R8: once the talon is exhausted the heuristic solves the true position, so a rollout that stops there
    and solves has the same value as one played to the end."""
    from sixtysix_env.core.heuristic import P_ROLLOUT_SOLVES

    table = core_table()
    solving = PARAMS.copy()
    solving[P_ROLLOUT_SOLVES] = 1.0
    checked = 0
    for game, infoset, _action in self_play_positions(Rules(), 30, 6000):
        if decision_kind(game) != "exhausted" or len(infoset.legal_actions) == 1:
            continue
        state = state_from_game(game)
        worlds = np.stack([state])
        legal = sum(1 << action for action in infoset.legal_actions)
        played, solved = np.zeros((1, 37)), np.zeros((1, 37))
        seeds = np.zeros(1, np.int64)
        rollout_values(worlds, 1, legal, infoset.player, PARAMS, PARAMS, table.entries, table.nodes, seeds, 1,
                       played)
        rollout_values(worlds, 1, legal, infoset.player, solving, solving, table.entries, table.nodes, seeds, 1,
                       solved)
        assert np.array_equal(played, solved), game.history
        checked += 1
    assert checked > 50


def rolled_values(game: Game, params: np.ndarray, seed: int = 0) -> dict[int, int]:
    """``rollout_values`` of every legal action in the true world of ``game`` (both seats played with ``params``)."""
    table = core_table()
    values = np.zeros((1, 37))
    legal = sum(1 << action for action in game.legal_actions())
    rollout_values(np.stack([state_from_game(game)]), 1, legal, game.current_player, params, params, table.entries,
                   table.nodes, np.array([seed], np.int64), table.claim_worlds(1), values)
    return {action: int(values[0, action]) for action in game.legal_actions()}


def test_rollouts_that_solve_from_the_talons_last_trick_value_its_actions_exactly():
    """R7: with ``endgame=last_trick`` a rollout of an action on the talon's last trick is the whole-deal solver's
    value of that action in the world (the last face-down card known)."""
    from sixtysix_env.core.heuristic import P_ROLLOUT_SOLVES
    from sixtysix_env.core.solver import solve_actions

    solving = PARAMS.copy()
    solving[P_ROLLOUT_SOLVES] = 2.0
    checked = 0
    for game, infoset, _action in self_play_positions(Rules(), 40, 7000):
        if decision_kind(game) != "last trick" or len(infoset.legal_actions) == 1:
            continue
        assert rolled_values(game, solving) == solve_actions(state_from_game(game)), game.history
        checked += 1
    assert checked > 30


def test_rollouts_that_solve_earlier_in_the_talon_value_actions_exactly_there_and_play_before():
    """R7: with ``solve_talon=3`` a rollout from a trick with at most three face-down talon cards (talon open) is the
    whole-deal solver's value of the action in its world; from earlier tricks the rollout is not always solved
    at once (its values differ from the solver's somewhere)."""
    from sixtysix_env.core.solver import solve_actions

    params = make_agent("rollout:endgame=last_trick,solve_talon=3")._params
    checked = differs = 0
    for game, infoset, _action in self_play_positions(Rules(), 25, 9000):
        if game.phase2 or game.stage not in (FOLLOW, LEAD) or len(infoset.legal_actions) == 1:
            continue
        rolled = rolled_values(game, params)
        exact = solve_actions(state_from_game(game))
        if game.face_down_count <= 3:
            assert rolled == exact, game.history
            checked += 1
        else:
            differs += rolled != exact
    assert checked > 30 and differs > 0


def test_rollouts_with_an_open_last_trick_play_a_closed_phase2_and_solve_the_rest():
    """R7, R8, R10: with ``endgame=last_trick_open`` a phase 2 after a closing is played by the heuristic from each
    seat's view (the value of a rollout played to the end, same seed), not solved as if the cards were open, while
    the talon's last trick is solved as with ``last_trick``."""
    from sixtysix_env.core.heuristic import P_ROLLOUT_SOLVES
    from agents.rollout import ROLLOUT_ENDGAMES

    by_mode = {}
    for mode in ("play", "last_trick", "last_trick_open"):
        by_mode[mode] = PARAMS.copy()
        by_mode[mode][P_ROLLOUT_SOLVES] = float(ROLLOUT_ENDGAMES.index(mode))
    checked = {"closed": 0, "last trick": 0}
    differs = 0
    for game, infoset, _action in self_play_positions(Rules(), 60, 8000):
        kind = decision_kind(game)
        if kind not in checked or len(infoset.legal_actions) == 1:
            continue
        values = {mode: rolled_values(game, params, seed=3) for mode, params in by_mode.items()}
        same_as = "play" if kind == "closed" else "last_trick"
        assert values["last_trick_open"] == values[same_as], game.history
        differs += kind == "closed" and values["last_trick_open"] != values["last_trick"]
        checked[kind] += 1
    assert checked["closed"] > 20 and checked["last trick"] > 20
    assert differs > 0  # the clairvoyant solve of a closed phase 2 is not what the heuristic plays


def test_rollouts_play_the_opponents_seat_with_the_opponents_numbers():
    """``opponent=heuristic``: the opponent's seat in the rollouts is played with the heuristic's own numbers, the
    observer's with the rollout player's; with the same numbers for both the rollouts are the one-player ones."""
    from sixtysix_env.core.heuristic import P_PLAIN_KEEP

    table = core_table()
    agent = make_agent("expert:opponent=heuristic")
    assert np.array_equal(agent._opponent_params, REFERENCE.core_params())
    assert not np.array_equal(agent._params, agent._opponent_params)
    odd = agent._params.copy()
    odd[P_PLAIN_KEEP:P_PLAIN_KEEP + 6] = -odd[P_PLAIN_KEEP:P_PLAIN_KEEP + 6]  # an opponent who sheds his best cards
    differs = 0
    for deal in range(12):
        game = Game.deal(Rules(), seed=400 + deal, dealer=deal & 1)
        state = state_from_game(game)
        legal = sum(1 << action for action in game.legal_actions())
        mixed, alone = np.zeros((1, 37)), np.zeros((1, 37))
        seeds = np.array([deal], np.int64)
        rollout_values(np.stack([state]), 1, legal, game.current_player, agent._params, odd, table.entries,
                       table.nodes, seeds, table.claim_worlds(1), mixed)
        rollout_values(np.stack([state]), 1, legal, game.current_player, agent._params, agent._params,
                       table.entries, table.nodes, seeds, table.claim_worlds(1), alone)
        differs += not np.array_equal(mixed, alone)
    assert differs >= 6  # his play changes the outcome of most deals
    with pytest.raises(ValueError, match="opponent"):
        make_agent("expert:opponent=psychic")


def test_keep_prior_keeps_the_heuristics_choice_unless_beaten_significantly():
    """``keep_prior``: with a huge number of standard errors the search plays the heuristic's own choice wherever
    that choice was still searched; without it the search overrides the heuristic somewhere in the same deals."""
    overridden = {}
    for keep_prior in (1000.0, None):
        agent = make_agent(f"expert:seconds=none,samples=60,keep_prior={'none' if keep_prior is None else keep_prior}",
                           seed=9)
        choices = []
        heuristic_act = agent._heuristic.act

        def recording_act(infoset, heuristic_act=heuristic_act, choices=choices):
            choices.append(heuristic_act(infoset))
            return choices[-1]

        agent._heuristic.act = recording_act
        overridden[keep_prior] = 0
        for deal in range(4):
            game = Game.deal(Rules(), seed=300 + deal, dealer=deal & 1)
            agent.start_deal(game.to_move, game.rules)
            for _ in range(4):  # the first decisions of the deal's first player, the opponent answering
                infoset = InformationSet(game, game.to_move)
                action = agent.act(infoset)
                if agent.last_values and choices[-1] in agent.last_values:
                    overridden[keep_prior] += action != choices[-1]
                game.apply(action)
                if game.is_over:
                    break
    assert overridden[1000.0] == 0 and overridden[None] > 0
    with pytest.raises(ValueError, match="keep_prior"):
        make_agent("expert:keep_prior=-1")


CLOSER_PLAYER = Path(__file__).resolve().parents[1] / "configs" / "rollout_player_closer.json"


def test_policy_switching_values_each_action_by_the_better_of_two_rollout_players(tmp_path):
    """``switch``: the same worlds (one slice of 4) played on by a second player on the observer's seat; each action
    is valued by the better of the two means, so never below the single player's value, above it somewhere for a
    player that closes (R10) more readily, and equal to it for a second player with the same numbers."""
    same = tmp_path / "same.json"
    same.write_text(json.dumps({"weights": {}}), encoding="utf-8")
    spec = "rollout:endgame=last_trick,seconds=none,samples=4,prune=none"
    raised = 0
    for seed, (game, infoset, _action) in enumerate(self_play_positions(Rules(), 6, 1200)):
        if len(infoset.legal_actions) == 1 or infoset.talon_size == 0 or infoset.closed_by is not None:
            continue
        values = {}
        for name, switch in (("plain", ""), ("same", f",switch={same}"),
                             ("closer", f",switch={CLOSER_PLAYER}")):
            values[name] = make_agent(spec + switch, seed=seed).action_values(infoset, None)
        assert values["same"] == values["plain"]
        assert all(values["closer"][action] >= values["plain"][action] for action in values["plain"])
        raised += values["closer"] != values["plain"]
    assert raised > 0


def test_closing_played_rollouts_play_closings_from_phase1_and_solve_in_a_closed_phase2():
    """R10: ``endgame=closing_played`` values a phase-1 decision as ``last_trick_open`` does (a closing in the
    rollouts is played on) and a decision in a closed phase 2 as ``last_trick`` does (solved in each world)."""
    spec = "rollout:seconds=none,samples=12,prune=none,endgame="
    kinds = {"lead": 0, "closed": 0}
    for seed, (game, infoset, _action) in enumerate(self_play_positions(Rules(), 40, 1300)):
        kind = decision_kind(game)
        if kind not in kinds or len(infoset.legal_actions) == 1 or kinds[kind] >= 5:
            continue
        same_as = "last_trick" if kind == "closed" else "last_trick_open"
        values = {mode: make_agent(spec + mode, seed=seed).action_values(infoset, None)
                  for mode in ("closing_played", same_as)}
        assert values["closing_played"] == values[same_as], game.history
        kinds[kind] += 1
    assert kinds == {"lead": 5, "closed": 5}


def test_rollout_agent_plays_legal_moves_within_its_budget_and_refuses_bad_parameters():
    agent = make_agent("rollout:seconds=0.05", seed=1)
    opponent = make_agent("heuristic", seed=2)
    game = Game.deal(Rules(), seed=21, dealer=1)
    agents = {0: agent, 1: opponent}
    for seat, player in agents.items():
        player.start_deal(seat, game.rules)
    while not game.is_over:
        infoset = InformationSet(game, game.current_player)
        action = agents[game.current_player].act(infoset)
        assert action in infoset.legal_actions
        game.apply(action)
    for spec, name in (("rollout:samples=0", "samples"), ("rollout:margin=-1", "margin"),
                       ("rollout:inference=psychic", "inference"), ("rollout:follow_floor=0", "follow_floor"),
                       ("rollout:endgame=guess", "endgame"), ("rollout:lead_samples=0", "lead_samples"),
                       ("rollout:lead_floor=0", "lead_floor"), ("rollout:prune=0", "prune"),
                       ("rollout:closed_floor=0", "closed_floor"), ("rollout:closing_floor=1.5", "closing_floor"),
                       ("ismcts:closed_floor=-1", "closed_floor"), ("rollout:played_on_floor=0", "played_on_floor"),
                       ("ismcts:played_on_floor=2", "played_on_floor"),
                       ("rollout:solve_talon=0", "solve_talon"), ("rollout:solve_talon=12", "solve_talon"),
                       ("rollout:switch=no_such_player.json", "no_such_player.json"),
                       ("rollout:search_at=lead+bluff", "search_at"), ("rollout:search_at=", "search_at"),
                       ("rollout:allocation=greedy", "allocation"), ("rollout:table_bits=9", "table_bits"),
                       ("ismcts:table_bits=40", "table_bits"), ("rollout:table_bits=true", "table_bits")):
        with pytest.raises(ValueError, match=name):
            make_agent(spec)
    assert make_agent("rollout:prune=none").prune is None and make_agent("pimc:prune=none").prune is None


def test_a_search_on_two_threads_values_every_action_as_on_one_without_a_clock():
    """``threads=2``: each slice's worlds split over two threads with tables of their own. A world's rollouts depend
    on the world and its seed only, and the worlds on the agent's generator only (drawn uniformly, or replayed with
    the opponent's inferred play, which reseeds numba's generator per batch), so without a clock the values and
    the pruning are the same as on one thread, at the first decision and deep in the deal (R7 leads and follows,
    R10 after a closing)."""
    compared = 0
    for seed, (game, infoset, _action) in enumerate(self_play_positions(Rules(), 6, 4500)):
        if infoset.talon_size == 0 and infoset.closed_by is None or len(infoset.legal_actions) < 2:
            continue
        values = {}
        for threads in (1, 2):
            agent = make_agent(f"expert:samples=60,seconds=none,threads={threads}", seed=seed)
            agent.start_deal(infoset.player, game.rules)
            values[threads] = (agent.action_values(infoset, None), agent.last_worlds, agent._scores.copy())
        assert values[2][0] == values[1][0] and values[2][1] == values[1][1], game.history
        np.testing.assert_array_equal(values[2][2], values[1][2])
        compared += 1
    assert compared > 10
    for spec in ("expert:threads=0", "expert:threads=65", "expert:threads=true", "expert:threads=1.5"):
        with pytest.raises(ValueError, match="threads"):
            make_agent(spec)


def test_search_at_searches_only_the_kinds_of_decision_named_and_plays_the_heuristic_elsewhere():
    """``search_at=follow``: at phase-1 leads (R7) the agent plays its heuristic prior's choice without a search,
    at follows it searches (values for the actions); the full search values both."""
    only_follows = make_agent("expert:search_at=follow,samples=40,seconds=none", seed=3)
    everywhere = make_agent("expert:samples=40,seconds=none", seed=3)
    searched = {"lead": 0, "follow": 0}
    for game, infoset, _action in self_play_positions(Rules(), 6, 4300):
        if game.phase2 or len(infoset.legal_actions) < 2:
            continue
        kind = "follow" if game.stage == FOLLOW else "lead"
        for agent in (only_follows, everywhere):
            agent.seed(len(game.history))
            agent.start_deal(infoset.player, game.rules)
        action = only_follows.act(infoset)
        everywhere.act(infoset)
        assert bool(everywhere.last_values)
        if kind == "lead":
            assert not only_follows.last_values
            prior = HeuristicAgent(seed=_prior_seed(len(game.history)))
            prior.start_deal(infoset.player, game.rules)
            assert action == prior.act(infoset)
        else:
            assert only_follows.last_values
        searched[kind] += 1
    assert searched["lead"] > 10 and searched["follow"] > 10, searched


def test_sequential_halving_keeps_the_better_half_each_round_down_to_two_actions():
    """``allocation=halving`` with a fixed number of worlds and no pruning: of three or more actions, two are left at
    the end, valued in every world, and the dropped ones were behind when dropped (each has fewer worlds than the
    two left); ``uniform`` values every legal action in every world."""
    halving = make_agent("expert:allocation=halving,samples=96,seconds=none,prune=none", seed=4)
    uniform = make_agent("expert:samples=96,seconds=none,prune=none", seed=4)
    checked = 0
    for game, infoset, _action in self_play_positions(Rules(), 4, 4400):
        if game.phase2 or infoset.closed_by is not None or len(infoset.legal_actions) < 3:
            continue
        for agent in (halving, uniform):
            agent.start_deal(infoset.player, game.rules)
        halving.act(infoset)
        uniform.act(infoset)
        assert len(uniform.last_values) == len(infoset.legal_actions) and uniform.last_worlds == 96
        assert len(halving.last_values) == 2 and halving.last_worlds == 96
        scores = halving._scores
        dropped = [action for action in infoset.legal_actions if action not in halving.last_values]
        # A dropped action's column stops being filled (every rollout ends with a score, R16, or 0 for an unscored
        # deal, R15, which is rare): up to its last world it was behind both actions kept to the end.
        for action in dropped:
            played = int(np.flatnonzero(scores[:, action]).max()) + 1
            assert played < 96
            for kept in halving.last_values:
                assert scores[:played, action].mean() <= scores[:played, kept].mean()
        checked += 1
    assert checked > 5


def test_the_rollout_player_takes_tuned_weights_from_a_file_and_refuses_bad_files_by_name(tmp_path):
    from sixtysix_env.core.heuristic import TUNABLE_SLOTS

    weights = tmp_path / "player.json"
    weights.write_text(json.dumps({"weights": {"close_filter": 60.0, "trump_keep_A": 30.0}}), encoding="utf-8")
    plain = make_agent("rollout")
    tuned = make_agent(f"rollout:player={weights}")
    changed = {int(index) for index in np.flatnonzero(tuned._params != plain._params)}
    assert changed == {TUNABLE_SLOTS["close_filter"], TUNABLE_SLOTS["trump_keep_A"]}
    assert tuned._params[TUNABLE_SLOTS["close_filter"]] == 60.0
    for text, message in (("{", "not valid JSON"), ("[1, 2]", "no 'weights' mapping"),
                          ('{"weights": {"trump_keep_Z": 1}}', "unknown heuristic weight.*trump_keep_Z"),
                          ('{"weights": {"close_filter": "many"}}', "close_filter must be a finite number")):
        weights.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            make_agent(f"rollout:player={weights}")
    with pytest.raises(ValueError, match="missing.json"):
        make_agent(f"rollout:player={tmp_path / 'missing.json'}")


def test_replayed_worlds_are_reproducible_from_the_agents_seed():
    """The same seed gives the same worlds (numba's generator is seeded from the agent's)."""
    game = Game.deal(Rules(), seed=31, dealer=0)
    rng = random.Random(0)
    for _ in range(8):
        game.apply(rng.choice(game.legal_actions()))
    from agents.inference import ReplayedWorlds

    infoset = InformationSet(game, game.current_player)

    def worlds(seed: int) -> list[tuple[int, list[int]]]:
        sampler, rng = ReplayedWorlds(infoset), random.Random(seed)
        drawn = [sampler.determinize(rng) for _ in range(40)]
        return [(world.hands[1 - infoset.player], world.stock[world.stock_pos:]) for world in drawn]

    assert worlds(4) == worlds(4)
    assert worlds(4) != worlds(5)
