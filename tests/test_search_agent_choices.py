"""How the search agents turn their values into a choice, and share their budget: ties, margins, thresholds, the
clock, the Bummerl scale, the opponent model's evidence (agents/rollout.py, pimc.py, ismcts.py, inference.py,
solver.py, closed_lookahead.py, match_equity.py, blend.py). Each pins a behaviour that a plausible one-line slip
changed without any other test failing (a mutation review, sessions 73 and 74). Clock-free or sample-bounded, so
each test is fast and deterministic given its seeds."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
from search_positions import CLOCK_FREE, closed_decisions, expert_twin, phase1_positions

from agents.blend import BlendAgent
from agents.closed_lookahead import lookahead_values
from agents.inference import RULE_FLOOR, OpponentModel
from agents.ismcts import IsmctsAgent, surviving_root_actions
from agents.match_equity import bummerl_equity
from agents.base import MODELS_DIR
from agents.pimc import PRUNE_AFTER
from agents.registry import make_agent
from agents.rollout import RolloutAgent
from agents.solver import core_table
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.core.layout import STATE_SIZE
from sixtysix_env.core.search import information_template, sample_worlds, seed_kernels
from sixtysix_env.core.solver import action_values
from sixtysix_env.game import FOLLOW, LEAD


def _first_position_with(actions: int, seed: int = 620):
    """The first phase-1 position of :func:`phase1_positions` with at least ``actions`` legal actions."""
    return next(infoset for infoset in phase1_positions(3, seed) if len(infoset.legal_actions) >= actions)


def budgets_given_to_the_search(agent) -> list[float]:
    """The ``seconds`` that ``agent.act`` passes on to its ``action_values`` at the decisions of one deal's start."""
    given = []
    search = agent.action_values

    def recording(infoset, seconds):
        given.append(seconds)
        return search(infoset, seconds)

    agent.action_values = recording
    for infoset in phase1_positions(1, 620):
        agent.act(infoset)
    return given


# --------------------------------------------------------------------------------------------------- match equity (R17)

def test_bummerl_equity_refuses_negative_shares_even_when_they_sum_to_one():
    """The shares of 1, 2 and 3 game-point deals are probabilities: a negative one is refused by name even when the
    three add up to 1."""
    with pytest.raises(ValueError, match="shares"):
        bummerl_equity(7, (1.5, -0.5, 0.0))


# --------------------------------------------------------------------------------------------------- the opponent model

def test_an_unannounced_marriage_or_exchange_is_weighed_once_however_many_leads_passed():
    """R11, R9: the rules model lowers a world's likelihood for every marriage pair (and the exchange card) the
    opponent held at one of his phase-1 leads without announcing (exchanging) it, but each such set once, at the
    latest lead he could have acted on it: however many leads passed, a world is at least ``RULE_FLOOR`` to the
    power of the number of suspect sets made of cards he has held in it."""
    repeated = 0
    for seed in range(60):
        rng = random.Random(seed)
        game = Game.deal(Rules(), seed=seed, dealer=seed % 2)
        while not game.is_over and game.talon_size >= 2:
            legal = game.legal_actions()
            if game.current_player == 0 and len(legal) > 1:
                infoset = InformationSet(game, 0)
                model = OpponentModel(infoset, "rules")
                leads_of = {}
                for *_cards, suspects, _modelled in model.checks:
                    for cards, _floor in suspects:
                        leads_of[cards] = leads_of.get(cards, 0) + 1
                his_cards = 0  # played since a lead or held at it for sure (the led card, an exchanged card)
                for later, _draws, held_then, *_rest in model.checks:
                    his_cards |= later | held_then
                for draw in range(10):
                    hand = infoset.determinize(random.Random(draw)).hands[1]
                    held = hand | his_cards
                    sets = [cards for cards in leads_of if cards & ~held == 0]
                    assert model.likelihood(hand) >= RULE_FLOOR ** len(sets) * (1 - 1e-12), (seed, game.history)
                    repeated += any(leads_of[cards] > 1 for cards in sets)
            cards = [action for action in legal if action < 24]
            game.apply(rng.choice(cards) if cards else legal[0])
    assert repeated > 50


def his_lead_turns(rules: Rules, seed: int, history: list[int], opponent: int) -> list[list]:
    """The opponent's phase-1 leads as the true deal shows them, replayed from its seed: [card led, married, the
    card he took by an exchange (R9) in that lead turn or None, his face-down draws from then on (R7; the bottom card
    he may take last is known, not one of them)]."""
    from sixtysix_env.actions import EXCHANGE, MARRY_BASE, marry_card

    game = Game.deal(rules, seed=seed, dealer=seed & 1)
    leads: list[list] = []
    taken_this_turn = None
    for action in history:
        his_lead = game.stage == LEAD and game.to_move == opponent and action < EXCHANGE
        if game.to_move == opponent and action == EXCHANGE:
            taken_this_turn = game.bottom_card
        if his_lead and game.closed_by is None and game.talon_size > 0:
            married = action >= MARRY_BASE
            leads.append([marry_card(action) if married else action, married, taken_this_turn, 0])
        if his_lead:
            taken_this_turn = None
        hand_before, drawn_before = game.hands[opponent], game.stock_pos
        game.apply(action)
        if game.stock_pos > drawn_before:  # the trick's draws
            drawn = game.hands[opponent] & ~hand_before
            if drawn and (game.bottom_taken_card is None or drawn != 1 << game.bottom_taken_card):
                for lead in leads:
                    lead[3] += 1
    return leads


@pytest.mark.parametrize("preset", ("standard", "paderborn"))
def test_the_opponent_model_reads_his_leads_as_the_true_deal_shows_them(preset):
    """Checked against a replay of the true deal at the start of phase 2: each lead check of the ``rules`` model
    counts his face-down draws since (the bottom card he took, R7, is a known card, not a draw) and counts a card he
    took by an exchange in that very lead turn (R9) as held then; the ``policy`` model scores exactly his plain
    leads, a marriage's lead (R11) being shown, not chosen by the play model."""
    from sixtysix_env.actions import CLOSE, EXCHANGE, MARRY_BASE

    rules = Rules.preset(preset)
    seen = {"marriages": 0, "exchanges": 0, "bottom cards": 0}
    for seed in range(150):
        rng = random.Random(seed)
        game = Game.deal(rules, seed=seed, dealer=seed & 1)
        while not game.is_over and game.talon_size > 0:
            legal = [action for action in game.legal_actions() if action != CLOSE]  # on to phase 2 (R7)
            shown = [action for action in legal if MARRY_BASE <= action <= EXCHANGE]  # marry and exchange often
            game.apply(rng.choice(shown if shown and rng.random() < 0.8 else legal))
        if game.is_over:
            continue
        infoset = InformationSet(game, game.to_move)
        truth = his_lead_turns(rules, seed, game.history, infoset.opponent)
        checks = OpponentModel(infoset, "rules").checks
        assert len(checks) == len(truth)
        for (_later, draws, held, came_later, _suspects, _modelled), (card, _married, taken, drawn) in zip(checks,
                                                                                                        truth):
            assert draws == drawn and held >> card & 1
            if taken is not None:
                assert held >> taken & 1 and not came_later >> taken & 1
                seen["exchanges"] += 1
        policy_leads = [modelled[1] for *_check, modelled in OpponentModel(infoset, "policy").checks
                        if modelled is not None and not modelled[0]]
        assert policy_leads == [card for card, married, _taken, _drawn in truth if not married]
        seen["marriages"] += sum(married for _card, married, _taken, _drawn in truth)
        seen["bottom cards"] += infoset.bottom_taker == infoset.opponent
    assert min(seen.values()) >= 5, seen


def test_none_drawn_probability_is_the_hypergeometric_chance_of_drawing_none():
    """The chance that none of ``needed`` given cards is among ``draws`` cards drawn from ``candidates`` is the
    hypergeometric probability of no success, also at the edge where the draws take every other card."""
    from scipy.stats import hypergeom

    from agents.inference import _none_drawn_probability

    for candidates in range(1, 13):
        for needed in range(candidates + 1):
            for draws in range(candidates + 1):
                expected = hypergeom(candidates, needed, draws).pmf(0)
                assert _none_drawn_probability(needed, candidates, draws) == pytest.approx(expected, abs=1e-12), (
                    needed, candidates, draws)


def phase1_leads_and_follows(deals: int):
    """Games at every phase-1 lead and follow (R7) while more than two cards lie in the talon, played on at
    random."""
    for seed in range(deals):
        game = Game.deal(Rules(), seed=seed, dealer=seed & 1)
        while not game.is_over and game.talon_size > 2:
            if game.stage in (LEAD, FOLLOW):
                yield game
            game.apply(random.Random(seed + len(game.history)).choice(game.legal_actions()))


def test_the_play_model_is_a_distribution_over_his_cards_at_the_fitted_temperatures():
    """``inference=policy``: the chance the opponent plays each card of a hand is the documented mixture, a share
    ``PLAY_MIX`` uniform and the rest a softmax of the play scores at ``FOLLOW_TEMPERATURE`` for a follow and
    ``LEAD_TEMPERATURE`` for a lead; over the hand it adds up to 1."""
    from scipy.special import softmax

    from agents.inference import FOLLOW_TEMPERATURE, LEAD_TEMPERATURE, PLAY_MIX, play_scores
    from sixtysix_env.cards import cards_of

    rng = random.Random(0)
    checked = {LEAD: 0, FOLLOW: 0}
    for game in phase1_leads_and_follows(20):
        following = game.stage == FOLLOW
        hand = game.hands[game.to_move]
        lead = game.lead_card if following else -1
        won = game.won_cards[0] | game.won_cards[1]
        cards = cards_of(hand)
        chances = [OpponentModel._play_likelihood((following, card, lead, won, game.trump_suit), hand, 0, 0, rng)
                   for card in cards]
        scores = play_scores(following, hand, lead, won, game.trump_suit)
        temperature = FOLLOW_TEMPERATURE if following else LEAD_TEMPERATURE
        expected = PLAY_MIX / len(cards) + (1 - PLAY_MIX) * softmax(
            np.array([scores[card] for card in cards]) / temperature)
        assert np.allclose(chances, expected) and sum(chances) == pytest.approx(1.0)
        checked[game.stage] += 1
    assert min(checked.values()) > 50


def test_the_play_scores_are_points_won_or_given_less_the_worth_of_the_card_spent():
    """The play model's score of a follow is the trick's points if the card beats the lead (R6) and minus them if not,
    less the card's worth kept (``agents.pimc.keep_value``); of a lead, minus that worth and half the card's points."""
    from agents.inference import _WonCards, play_scores
    from agents.pimc import keep_value
    from sixtysix_env.cards import CARD_POINTS, cards_of

    checked = 0
    for game in phase1_leads_and_follows(10):
        hand, trump, lead = game.hands[game.to_move], game.trump_suit, game.lead_card
        won = game.won_cards[0] | game.won_cards[1]
        view = _WonCards(trump, won)
        following = game.stage == FOLLOW
        scores = play_scores(following, hand, lead, won, trump)
        for card in cards_of(hand):
            if following:
                # (card ids rise with rank within a suit)
                beats = card // 6 == lead // 6 and card > lead or card // 6 == trump != lead // 6
                points = CARD_POINTS[lead] + CARD_POINTS[card]
                expected = (points if beats else -points) - keep_value(card, hand, view)
            else:
                expected = -keep_value(card, hand, view) - 0.5 * CARD_POINTS[card]
            assert scores[card] == pytest.approx(expected)
            checked += 1
    assert checked > 300


def test_replayed_worlds_become_games_with_every_card_once_and_the_worlds_talon():
    """``inference=heuristic`` (``ReplayedWorlds.determinize``): each inferred world becomes a game that holds every
    card once (R4) and whose face-down talon (R7) is the world's, card for card."""
    from agents.inference import ReplayedWorlds
    from sixtysix_env.core import check_state, state_from_game
    from sixtysix_env.core.layout import STOCK

    checked = 0
    for infoset in phase1_positions(6, 800):
        if not infoset.history or infoset.face_down_count < 2:
            continue
        worlds = ReplayedWorlds(infoset)
        rng = random.Random(checked)
        for _ in range(4):
            game = worlds.determinize(rng)
            state = worlds._buffer[worlds._next - 1]
            check_state(state_from_game(game))
            first = len(game.stock) - infoset.face_down_count
            assert game.stock[first:] == state[STOCK + first:STOCK + len(game.stock)].tolist()
            checked += 1
    assert checked > 20


def test_a_world_whose_every_try_is_rejected_comes_from_the_fallback_and_is_counted():
    """``ReplayedWorlds``: when all ``max_tries`` worlds drawn for one are rejected, the likeliest try is kept and
    counted as a fallback world (``stats``: tries, failed completions, fallback worlds). With floors so small that
    no try fits the opponent's play (he played his first legal card), each of the 32 worlds of a batch takes the
    fallback after 4 tries, and each is still a consistent deal."""
    from agents.inference import ReplayedWorlds
    from sixtysix_env.core import check_state

    checked = 0
    for infoset in phase1_positions(2, 800):
        if len(infoset.history) < 6:
            continue
        worlds = ReplayedWorlds(infoset, follow_floor=1e-9, rule_floor=1e-9, lead_floor=1e-9, max_tries=4)
        rng = random.Random(1)
        for _ in range(ReplayedWorlds.BATCH):
            check_state(worlds.next_state(rng))
        assert worlds.stats.tolist() == [4 * ReplayedWorlds.BATCH, 0, ReplayedWorlds.BATCH]
        assert worlds.rejected == 3 * ReplayedWorlds.BATCH
        checked += 1
    assert checked >= 2


# ----------------------------------------------------------------------------------------------------- closed lookahead

def sampled_closed_worlds(infoset, count: int) -> np.ndarray:
    template, allowed, unseen, needed = information_template(infoset)
    worlds = np.empty((count, STATE_SIZE), dtype=np.int64)
    sample_worlds(count, template, 1 - infoset.player, allowed, unseen, needed, worlds)
    return worlds


def _reference_lookahead(worlds, observer, actions, table, utility=lambda points: float(points)):
    """The lookahead as its module docstring states it: the opponent answers with his best action in each world
    (of equals the lowest id), the worlds are grouped by what the observer has seen of him, and within a group the
    observer's next decision is the action with the best total over the group (of equals the lowest id)."""
    from sixtysix_env.core.engine import apply, copy_state, value_for
    from sixtysix_env.core.layout import OVER, STAGE, TO_MOVE

    expected = np.zeros((len(worlds), 37))
    for action in actions:
        outcomes = []
        for world in worlds:
            state = np.empty_like(world)
            copy_state(state, world)
            apply(state, action)
            seen = []
            while state[STAGE] != OVER and state[TO_MOVE] != observer:
                replies = action_values(state, table)
                best = max(replies.values())
                reply = min(a for a, v in replies.items() if v == best)
                seen.append(reply)
                apply(state, reply)
            if state[STAGE] == OVER:
                outcomes.append((tuple(seen), None, utility(int(value_for(state, observer)))))
            else:
                outcomes.append((tuple(seen), action_values(state, table), None))
        groups: dict = {}
        for index, (seen, _next, _final) in enumerate(outcomes):
            groups.setdefault(seen, []).append(index)
        for members in groups.values():
            if outcomes[members[0]][1] is None:
                for index in members:
                    expected[index, action] = outcomes[index][2]
                continue
            choices = sorted(outcomes[members[0]][1])
            totals = {c: sum(utility(outcomes[i][1][c]) for i in members) for c in choices}
            top = max(totals.values())
            chosen = min(c for c in choices if totals[c] == top)
            for index in members:
                expected[index, action] = utility(outcomes[index][1][chosen])
    return expected


def test_the_lookahead_over_sampled_worlds_is_the_documented_grouped_choice():
    """Over sampled worlds after a closing (R10), every action's value in every world is what the docstring states:
    the opponent's reply the lowest of his solver-best actions, one next choice per group of worlds the observer
    cannot tell apart, the best total over the group, ties to the lowest action id."""
    table = core_table()
    seed_kernels(21)
    checked = 0
    for _game, infoset in closed_decisions(40, 900):
        worlds = sampled_closed_worlds(infoset, 24)
        actions = list(infoset.legal_actions)
        values = lookahead_values(worlds, infoset.player, actions, table)
        assert np.array_equal(values, _reference_lookahead(worlds, infoset.player, actions, table))
        checked += 1
    assert checked > 10


def test_the_lookahead_applies_the_utility_to_every_outcome_including_finished_deals():
    """A utility (a Bummerl's chance per game-point result) values every outcome: with a linear utility of ten times
    the game points every value is ten times the plain one, in worlds where the deal ends before the observer's next
    decision too."""
    table = core_table()
    seed_kernels(5)
    for _game, infoset in closed_decisions(12, 900):
        worlds = sampled_closed_worlds(infoset, 16)
        actions = list(infoset.legal_actions)
        plain = lookahead_values(worlds, infoset.player, actions, table)
        scaled = lookahead_values(worlds, infoset.player, actions, table, utility=lambda points: 10.0 * points)
        assert np.allclose(scaled, 10.0 * plain)


def test_the_lookahead_keeps_its_deadline_and_returns_only_the_worlds_it_valued():
    """``deadline``: a deadline already past values exactly one world and returns that row only; a distant one values
    every world."""
    table = core_table()
    seed_kernels(3)
    _game, infoset = next(iter(closed_decisions(5, 300)))
    worlds = sampled_closed_worlds(infoset, 12)
    actions = list(infoset.legal_actions)
    full = lookahead_values(worlds, infoset.player, actions, table)
    past = lookahead_values(worlds, infoset.player, actions, table, deadline=time.perf_counter() - 1.0)
    assert past.shape == (1, 37)
    assert np.array_equal(past, lookahead_values(worlds[:1], infoset.player, actions, table))
    distant = lookahead_values(worlds, infoset.player, actions, table, deadline=time.perf_counter() + 600.0)
    assert np.array_equal(distant, full)


# ---------------------------------------------------------------------------------------------------------------- blend

def test_blend_leaves_decisions_after_a_closing_to_expert():
    """After a closing (R10) ``expert``'s choice stands: the tree is not asked even where ``expert`` valued two or
    more actions, so nothing is blended."""
    blend = BlendAgent(seed=3, tree_mix=1.0, **CLOCK_FREE)
    searched = 0
    for _game, infoset in closed_decisions(6, 700):
        blend.act(infoset)
        searched += len(blend.rollout.decision_values) >= 2
        assert blend.last_blend == {}
    assert searched > 0
    assert blend.blended_decisions == 0 and blend.changed_decisions == 0


def _tree_returning(blend, values_of):
    """Replace the tree's search by one that gives each root action of ``values_of(infoset)`` one visit at that
    mean (no prior at the root), so the test decides what the tree says."""
    tree = blend.tree

    def search(infoset):
        tree._root_prior = {}
        return {action: (1, mean) for action, mean in values_of(infoset).items()}

    tree.search = search


def test_blend_breaks_a_tie_of_the_mixed_values_toward_experts_choice():
    """Of equal mixed values, ``expert``'s own choice is played (then the lowest id): with the tree alone deciding
    (``tree_mix=1``) and every kept action equal in the tree, ``expert``'s choice stands, also where it is not the
    lowest id."""
    blend = BlendAgent(seed=5, tree_mix=1.0, **CLOCK_FREE)
    twin = expert_twin(5)
    _tree_returning(blend, lambda infoset: {action: 0.25 for action in infoset.legal_actions})
    not_lowest = 0
    for infoset in phase1_positions(6, 620):
        choice, expert_choice = blend.act(infoset), twin.act(infoset)
        assert choice == expert_choice
        if blend.last_blend:
            not_lowest += expert_choice != min(blend.last_blend)
    assert not_lowest > 0


def test_blend_keeps_experts_choice_where_the_tree_lacks_a_kept_action():
    """Where the tree has no value for an action ``expert`` kept (it never reached it), ``expert``'s choice stands
    and nothing is blended, rather than an error."""
    blend = BlendAgent(seed=5, tree_mix=1.0, **CLOCK_FREE)
    twin = expert_twin(5)

    kept_two = 0
    for infoset in phase1_positions(4, 620):
        expert_choice = twin.act(infoset)
        kept = dict(twin.decision_values)  # what blend's own expert keeps at this decision
        missing = max(kept) if kept else None
        _tree_returning(blend, lambda infoset: {a: float(a) for a in infoset.legal_actions if a != missing})
        assert blend.act(infoset) == expert_choice
        kept_two += len(kept) >= 2
    assert kept_two > 0 and blend.blended_decisions == 0


def test_blend_counts_the_decisions_it_changed_from_expert():
    """``changed_decisions`` counts the blended decisions whose choice differs from ``expert``'s (an ``expert`` seeded
    as blend seeds its rollout member chooses as that member), ``blended_decisions`` all blended ones."""
    blend = BlendAgent(seed=5, tree_mix=1.0, **CLOCK_FREE)
    twin = expert_twin(5)
    blended = changed = 0
    for infoset in phase1_positions(4, 620):
        choice, expert_choice = blend.act(infoset), twin.act(infoset)
        if blend.last_blend:
            blended += 1
            changed += choice != expert_choice
    assert blended > changed > 0
    assert (blend.blended_decisions, blend.changed_decisions) == (blended, changed)


def test_blend_gives_the_tree_only_the_budget_expert_left():
    """With a clock the two searches share one budget: the tree gets what is left after ``expert``, less than the
    whole budget."""
    blend = BlendAgent(seed=2, seconds=0.06, samples=120, iterations=200, threads=1, tree_mix=0.5)
    blended = 0
    for infoset in phase1_positions(3, 620):
        blend.act(infoset)
        if blend.last_blend:
            blended += 1
            assert blend.tree.seconds < blend.seconds
    assert blended > 0


# -------------------------------------------------------------------------------------------------------------- rollout

PRIOR_MODEL = MODELS_DIR / "ppo_true_world_standard.zip"


def test_rollout_unsearched_prior_plays_the_lowest_id_of_equal_network_values():
    """``unsearched=prior``: where the search does not decide, the prior network's best action is played, of equal
    values the lowest action id (as the network agent itself plays), whatever order the values come in."""
    agent = make_agent(f"expert_v3:samples=24,seconds=none,prune=none,prior={PRIOR_MODEL},search_at=closed,"
                       "unsearched=prior", seed=1)
    agent._prior_network.values = lambda infoset: {action: 0.5 for action in reversed(infoset.legal_actions)}
    checked = 0
    for infoset in phase1_positions(2, 620):
        assert agent.act(infoset) == min(infoset.legal_actions)
        assert agent.last_values == {}  # nothing searched
        checked += 1
    assert checked > 3


def test_rollout_keep_prior_overrides_the_heuristic_only_beyond_that_many_standard_errors():
    """``keep_prior=K``: the search's best action replaces the heuristic's choice only where its paired gain over the
    same worlds exceeds K standard errors of that gain's mean (``std(gains, ddof=1) / sqrt(worlds)``); the test
    recomputes the rule from :attr:`world_values` at every searched decision, and some overrides happen."""
    keep = 0.5
    agent = make_agent(f"expert_v3:seconds=none,samples=60,keep_prior={keep}", seed=9)
    choices = []
    heuristic_act = agent._heuristic.act

    def recording_act(infoset):
        choices.append(heuristic_act(infoset))
        return choices[-1]

    agent._heuristic.act = recording_act
    overrides = checked = 0
    for deal in range(4):
        game = Game.deal(Rules(), seed=300 + deal, dealer=deal & 1)
        agent.start_deal(game.to_move, game.rules)
        for _ in range(5):
            infoset = InformationSet(game, game.to_move)
            action = agent.act(infoset)
            values, prior = agent.last_values, choices[-1] if choices else None
            if values and prior in values:
                best = max(values, key=lambda a: (values[a], a == prior, -a))
                expected = prior
                if best != prior:
                    gains = agent.world_values[:, best] - agent.world_values[:, prior]
                    error = float(np.std(gains, ddof=1)) / np.sqrt(len(gains))
                    if float(np.mean(gains)) > keep * error and float(np.mean(gains)) > 0:
                        expected = best
                assert action == expected
                overrides += action != prior
                checked += 1
            game.apply(action)
            if game.is_over:
                break
    assert checked > 5 and overrides > 0


def test_rollout_search_gets_the_budget_the_heuristic_left():
    """The heuristic's own choice (asked first) counts inside ``seconds``: the search of the decision is given
    strictly less than the whole budget, and more than nothing."""
    agent = make_agent("expert_v3:seconds=0.5,samples=20", seed=1)  # the worlds, not the clock, end the search
    given = budgets_given_to_the_search(agent)
    assert given and all(0 < seconds < 0.5 for seconds in given)


def test_rollout_halving_keeps_the_better_half_rounded_up_in_its_first_round():
    """``allocation=halving``: a round keeps the better half of the actions, rounded up (at least two): of an odd
    number ``n`` of actions the first round drops ``n // 2`` of them, all at the same world count."""
    agent = make_agent("expert_v3:allocation=halving,samples=96,seconds=none,prune=none", seed=4)
    checked = 0
    for infoset in phase1_positions(6, 4400):
        count = len(infoset.legal_actions)
        if count < 5 or count % 2 == 0:
            continue
        agent.act(infoset)
        scores = agent.world_values
        played = {action: int(np.flatnonzero(scores[:, action]).max()) + 1 for action in infoset.legal_actions
                  if action not in agent.last_values}
        first = min(played.values())
        assert sum(1 for worlds in played.values() if worlds == first) == count // 2
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def closing_leads_in_a_bummerl(count: int, seed: int, score=(3, 5)):
    """Phase-1 leads where closing (R10) is legal, seen with a Bummerl score (R17)."""
    from sixtysix_env.actions import CLOSE

    found = 0
    for deal in range(200):
        game = Game.deal(Rules(), seed=seed + deal, dealer=deal % 2)
        while not game.is_over and game.talon_size >= 4:
            if CLOSE in game.legal_actions():
                yield InformationSet(game, game.current_player, score)
                found += 1
                if found == count:
                    return
                break
            game.apply(game.legal_actions()[0])


def test_rollout_close_bias_is_in_game_points_also_when_the_values_are_bummerl_chances():
    """``close_bias`` is in game points: with ``objective=bummerl`` in a Bummerl (R17) the closing's value drops by
    the bias times what one game point is worth there (:meth:`game_point_scale`), the other actions' not at all."""
    from sixtysix_env.actions import CLOSE

    base = "expert_v3:samples=24,seconds=none,prune=none,objective=bummerl"
    checked = 0
    for infoset in closing_leads_in_a_bummerl(3, 500):
        plain, biased = make_agent(base, seed=7), make_agent(f"{base},close_bias=0.75", seed=7)
        plain.act(infoset)
        biased.act(infoset)
        scale = plain.game_point_scale(infoset)
        assert 0 < scale < 0.5  # a chance of winning the Bummerl per game point
        for action, value in plain.last_values.items():
            expected = value - 0.75 * scale if action == CLOSE else value
            assert biased.last_values[action] == pytest.approx(expected, abs=1e-12)
        checked += 1
    assert checked == 3


def test_rollout_plays_the_heuristic_without_searching_where_the_core_lacks_the_rules():
    """Rules the compiled core does not implement (manual declaring, R13): the rollout agent plays its heuristic's
    choice (the heuristic seeded as its prior) and searches nothing."""
    from agents.pimc import _prior_seed
    from agents.rule_based import HeuristicAgent

    rules = Rules.preset("standard", auto_declare=False)
    agent = make_agent("expert_v3:samples=16,seconds=none", seed=3)
    heuristic = HeuristicAgent(seed=_prior_seed(3))
    game = Game.deal(rules, seed=11, dealer=0)
    agent.start_deal(0, rules)
    heuristic.start_deal(0, rules)
    decided = 0
    while not game.is_over and decided < 6:
        infoset = InformationSet(game, game.current_player)
        if infoset.player == 0 and len(infoset.legal_actions) > 1:
            action = agent.act(infoset)
            assert action == heuristic.act(infoset)
            assert agent.last_values == {}
            decided += 1
        else:
            action = infoset.legal_actions[0]
        game.apply(action)
    assert decided > 2


def _searching_fixed_values(agent, prior: int, world_scores: dict[int, list[float]]):
    """Make ``agent``'s heuristic choose ``prior`` and its search find ``world_scores`` ({action: its value in each
    world}), so the test decides what the search says."""
    worlds = len(next(iter(world_scores.values())))

    def search(infoset, seconds):
        scores = np.zeros((worlds, NUM_ACTIONS))
        for action, values in world_scores.items():
            scores[:, action] = values
        agent._scores, agent.last_worlds = scores, worlds
        agent.last_values = {action: float(np.mean(values)) for action, values in world_scores.items()}
        return dict(agent.last_values)

    agent._heuristic.act = lambda infoset: prior
    agent.action_values = search


def test_rollout_keep_prior_keeps_the_heuristics_choice_at_exactly_that_many_standard_errors():
    """``keep_prior=K``: the search's best action replaces the heuristic's choice only where its paired gain
    *exceeds* K standard errors: a gain of 2 with a standard error of 1 (gains 1 and 3 over two worlds) keeps the
    heuristic's choice at K = 2 and is overridden at K = 1.99."""
    infoset = _first_position_with(2)
    prior, best = infoset.legal_actions[:2]
    for keep, expected in ((2.0, prior), (1.99, best)):
        agent = RolloutAgent(seed=0, samples=2, seconds=None, keep_prior=keep)
        _searching_fixed_values(agent, prior, {prior: [0.0, 0.0], best: [1.0, 3.0]})
        assert agent.act(infoset) == expected


def test_rollout_prior_shrinks_the_centred_means_toward_the_centred_prior():
    """``prior``: after ``n`` worlds an action's value is ``(n * mean + prior_weight * prior) / (n + prior_weight)``
    with the means and the network's values both centred over the surviving actions, so the values the choice rests
    on (:attr:`decision_values`) are centred too, whatever the level of the network's values."""
    infoset = _first_position_with(3)
    a, b, c = infoset.legal_actions[:3]
    agent = RolloutAgent(seed=0, samples=4, seconds=None, prior=str(PRIOR_MODEL), prior_weight=12.0)
    network = {action: 1.5 for action in infoset.legal_actions}
    network.update({a: 2.0, b: 1.0, c: 0.5})
    agent._prior_network.values = lambda infoset: dict(network)
    _searching_fixed_values(agent, a, {a: [0.5] * 4, b: [0.25, 0.75, 1.0, 1.0], c: [-1.0] * 4})
    agent.act(infoset)
    means = {a: 0.5, b: 0.75, c: -1.0}
    mean_centre, prior_centre = np.mean(list(means.values())), np.mean([2.0, 1.0, 0.5])
    for action in (a, b, c):
        expected = (4 * (means[action] - mean_centre) + 12.0 * (network[action] - prior_centre)) / 16.0
        assert agent.decision_values[action] == pytest.approx(expected, abs=1e-12)
    assert sum(agent.decision_values.values()) == pytest.approx(0.0, abs=1e-12)


def test_the_continuations_opponent_seat_has_the_numbers_its_options_name():
    """The opponent's seat of the network's rollouts: with ``continuation_seats=mover`` the ``heuristic`` agent's own
    numbers (``continuation_opponent=heuristic``) or the rollout player's (``=rollout``); with both seats the
    network's own unless ``opponent=heuristic``, whose ``heuristic`` agent's own numbers then play it. (The ``expert``
    alias's rollout player has fewer samples than the heuristic agent, so the two differ.)"""
    from agents.rule_based import HeuristicAgent

    heuristic = HeuristicAgent().core_params()
    base = f"expert:seconds=none,continuation={PRIOR_MODEL}"
    mover_heuristic = make_agent(f"{base},continuation_seats=mover,continuation_opponent=heuristic")
    mover_rollout = make_agent(f"{base},continuation_seats=mover,continuation_opponent=rollout")
    both_heuristic = make_agent(f"{base},opponent=heuristic")
    assert not np.array_equal(mover_rollout._params, heuristic)
    assert np.array_equal(mover_heuristic._continuation_opponent, heuristic)
    assert np.array_equal(mover_rollout._continuation_opponent, mover_rollout._params)
    assert np.array_equal(both_heuristic._continuation_opponent, heuristic)
    assert make_agent(base)._continuation_opponent is None


def test_rollout_draws_its_inferred_worlds_with_the_fallback_it_names(monkeypatch):
    """``inference_fallback``: the world the replay inference keeps where all its draws for one were rejected,
    ``likeliest`` or ``resample``: every searched decision's inferred worlds are drawn with the fallback named."""
    import agents.inference

    built = []

    class Recording(agents.inference.ReplayedWorlds):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self._resample)

    monkeypatch.setattr(agents.inference, "ReplayedWorlds", Recording)
    for fallback in ("resample", "likeliest"):
        built.clear()
        agent = make_agent(f"expert:seconds=none,samples=4,inference_fallback={fallback}", seed=0)
        for infoset in phase1_positions(1, 620):
            agent.act(infoset)
        assert built and all(resample == (fallback == "resample") for resample in built)


def test_a_reseeded_rollout_searches_a_closed_deal_as_a_fresh_one():
    """``seed``: an agent re-seeded with ``s`` plays as one made with seed ``s``, its ``closed_search=ismcts`` helper
    included (seeded from ``s`` by its own name): the tree it grows after a closing (R10) is the same."""
    spec = "expert:seconds=none,closed_search=ismcts,closed_iterations=300"
    fresh, reseeded = make_agent(spec, seed=3), make_agent(spec, seed=8)
    reseeded.seed(3)
    checked = 0
    for _game, infoset in closed_decisions(6, 900):
        assert fresh.act(infoset) == reseeded.act(infoset)
        assert fresh._closed_ismcts._tree.root_children() == reseeded._closed_ismcts._tree.root_children()
        checked += 1
    assert checked > 8


def test_rollout_plays_no_more_worlds_once_the_prune_leaves_one_action():
    """``prune``: once every action but one has been dropped the search stops, since no world can change its
    choice: with a threshold so low that the first test after ``PRUNE_AFTER`` worlds drops all but the leader, far
    fewer than ``samples`` worlds are played and one action is valued."""
    agent = RolloutAgent(seed=2, samples=400, seconds=None, prune=0.01)
    stopped = 0
    for infoset in phase1_positions(2, 620):
        agent.act(infoset)
        if len(agent.last_values) == 1:
            assert agent.last_worlds < 400
            stopped += 1
    assert stopped > 2


def test_rollout_search_window_of_a_single_talon_size_is_accepted_and_searched():
    """``search_min_talon`` / ``search_max_talon``: a window of one talon size (R4, R7) is a window, not refused as
    an empty one: with both 10 the decisions at 10 talon cards are searched, those at 12 and 8 are the heuristic's."""
    agent = make_agent("expert_v3:seconds=none,samples=8,search_min_talon=10,search_max_talon=10", seed=0)
    searched = {}
    for infoset in phase1_positions(2, 620):
        agent.act(infoset)
        searched.setdefault(infoset.talon_size, set()).add(bool(agent.last_values))
    assert searched[10] == {True} and searched[12] == searched[8] == {False}


def test_rollout_close_bias_is_taken_off_the_priors_value_of_closing_too():
    """``close_bias``: game points taken off the value of closing the talon (R10) in every world *and off the
    prior's value of it*: with the search's values fixed and two actions kept, a bias ``b`` lowers the closing's
    shrunk value against the other's by ``prior_weight / (n + prior_weight)`` times ``b``."""
    from sixtysix_env.actions import CLOSE

    infoset = next(infoset for infoset in phase1_positions(6, 620) if CLOSE in infoset.legal_actions)
    other = next(action for action in infoset.legal_actions if action != CLOSE)
    kept = [CLOSE, other]
    shrunk = {}
    for bias in (0.0, 0.75):
        agent = RolloutAgent(seed=0, samples=4, seconds=None, prior=str(PRIOR_MODEL), prior_weight=12.0,
                             close_bias=bias)
        agent._prior_network.values = lambda infoset: {action: 0.25 for action in infoset.legal_actions}
        _searching_fixed_values(agent, other, {CLOSE: [1.0, 0.0, 1.0, 1.0], other: [0.5] * 4})
        agent.act(infoset)
        assert set(agent.decision_values) == set(kept)
        shrunk[bias] = agent.decision_values
    gap = {bias: values[CLOSE] - values[other] for bias, values in shrunk.items()}
    assert gap[0.75] == pytest.approx(gap[0.0] - 12.0 / 16.0 * 0.75, abs=1e-12)


def test_rollout_inference_weighs_nothing_before_the_opponent_has_played():
    """``inference=heuristic`` keeps worlds with the likelihood of the opponent's play so far: at a decision before
    any play (no history) there is nothing to weigh, and the search is ``inference=none``'s, world for world, for
    the same seed."""
    checked = 0
    for infoset in phase1_positions(3, 620):
        if infoset.history:
            continue
        uniform, inferred = (make_agent(f"expert:seconds=none,samples=16,prune=none,inference={inference}", seed=4)
                             for inference in ("none", "heuristic"))
        assert uniform.act(infoset) == inferred.act(infoset)
        assert np.array_equal(uniform.world_values, inferred.world_values)
        checked += 1
    assert checked == 3


def test_a_reseeded_rollout_plays_its_heuristic_as_a_fresh_one():
    """``seed``: an agent re-seeded with ``s`` plays as one made with seed ``s``, its heuristic (seeded from ``s``
    as its prior) included: where it does not search (``search_at=closed``, so at every phase-1 decision) the
    heuristic's sampled choices are the same."""
    spec = "expert_v3:seconds=none,search_at=closed"
    fresh, reseeded = make_agent(spec, seed=3), make_agent(spec, seed=8)
    reseeded.seed(3)
    checked = 0
    for infoset in phase1_positions(12, 620):
        assert fresh.act(infoset) == reseeded.act(infoset)
        checked += 1
    assert checked > 50


# ----------------------------------------------------------------------------------------------------------------- pimc

def test_pimc_closing_rule_is_inclusive_at_both_thresholds():
    """``close_min_value`` / ``close_min_win``: a closing (R10) whose mean is at least that many game points and that
    wins in at least that share of the worlds is taken; just below either threshold it is not."""
    from agents.pimc import PimcAgent
    from sixtysix_env.actions import CLOSE

    agent = PimcAgent(seed=0, close_min_value=1.0, close_min_win=0.75)
    agent.last_win_share = {CLOSE: 0.75, 3: 1.0}
    assert agent._close_rule({CLOSE: 1.0, 3: 2.0})
    assert agent._pimc_choice([3, CLOSE], {CLOSE: 1.0, 3: 2.0}) == CLOSE
    assert not agent._close_rule({CLOSE: 0.99, 3: 2.0})
    agent.last_win_share = {CLOSE: 0.74, 3: 1.0}
    assert not agent._close_rule({CLOSE: 1.0, 3: 2.0})
    assert agent._pimc_choice([3, CLOSE], {CLOSE: 1.0, 3: 2.0}) == 3


def test_pimc_declares_where_declaring_is_among_the_best():
    """Manual declaring (R13): of equal best values PIMC declares, wherever DECLARE stands in the legal order, since
    the deal then ends at a value no continuation beats."""
    from agents.pimc import PimcAgent
    from sixtysix_env.actions import DECLARE

    agent = PimcAgent(seed=0)
    agent.last_win_share = {}
    assert agent._pimc_choice([3, 7, DECLARE], {3: 1.0, 7: 1.0, DECLARE: 1.0}) == DECLARE
    assert agent._pimc_choice([3, 7, DECLARE], {3: 1.0, 7: 2.0, DECLARE: 1.0}) == 7


def test_pimc_with_a_generous_clock_samples_every_world_it_may():
    """``seconds`` only stops sampling when the next world would overrun it: with a budget far above what the worlds
    need, PIMC evaluates all ``samples`` worlds (no pruning), as it does without a clock."""
    from agents.pimc import PimcAgent

    infoset = _first_position_with(3)
    clocked = PimcAgent(seed=1, samples=30, seconds=20.0, prune=None, prior="none")
    clocked.action_values(infoset)
    assert clocked.last_worlds == 30


def test_pimc_search_gets_the_budget_its_prior_left():
    """PIMC's heuristic prior (asked first) counts inside ``seconds``: the worlds are given strictly less than the
    whole budget, and more than nothing."""
    from agents.pimc import PimcAgent

    agent = PimcAgent(seed=1, samples=20, seconds=0.5)  # the worlds, not the clock, end the search
    given = budgets_given_to_the_search(agent)
    assert given and all(0 < seconds < 0.5 for seconds in given)


def pimc_searching_fixed_worlds(scores: dict[int, list[int]], prior: int, override_margin: float):
    """A PIMC whose prior plays ``prior`` and whose search keeps the actions of ``scores`` with those values in
    each world (the actions left out were dropped by the prune)."""
    from agents.pimc import PimcAgent

    agent = PimcAgent(seed=0, samples=10, seconds=None, override_margin=override_margin)

    def fixed_action_values(sampler, seconds):
        agent.last_active, agent.last_scores = list(scores), scores
        agent.last_win_share = {action: sum(v > 0 for v in values) / len(values) for action, values in scores.items()}
        return {action: sum(values) / len(values) for action, values in scores.items()}

    agent._prior_action = lambda infoset: prior
    agent.action_values = fixed_action_values
    return agent


def test_pimc_overrides_its_prior_only_by_more_than_the_margin():
    """``override_margin``: PIMC's own choice replaces the prior's only where its paired mean gain over the same
    worlds is strictly above the margin; a gain of exactly the margin keeps the prior."""
    infoset = _first_position_with(3)
    prior, other = infoset.legal_actions[0], infoset.legal_actions[1]
    for wins, expected in ((1, prior), (2, other)):  # gains of 0.1 (the margin) and 0.2 over ten worlds
        scores = {prior: [0] * 10, other: [0] * (10 - wins) + [1] * wins}
        assert pimc_searching_fixed_worlds(scores, prior, override_margin=0.1).act(infoset) == expected


def test_pimc_plays_its_own_choice_where_the_prune_dropped_the_prior():
    """Where the prune dropped the prior's action (it is not among the values kept), PIMC plays its own choice: the
    prior is followed only where the search kept it and found nothing better by the margin."""
    infoset = _first_position_with(3)
    prior, other = infoset.legal_actions[0], infoset.legal_actions[1]
    assert pimc_searching_fixed_worlds({other: [0] * 10}, prior, override_margin=0.5).act(infoset) == other


def test_pimc_does_not_ask_its_prior_on_the_talons_last_trick():
    """The heuristic prior is asked in phase 1 only outside the talon's last trick (R7), which PIMC's worlds search
    exactly; there ``last_prior`` stays ``None``."""
    from agents.pimc import PimcAgent
    from agents.rule_based import on_last_talon_trick

    agent = PimcAgent(seed=0, samples=3, seconds=None)
    checked = 0
    for deal in range(6):
        game = Game.deal(Rules(), seed=700 + deal, dealer=deal % 2)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) > 1 and game.closed_by is None and on_last_talon_trick(infoset):
                agent.act(infoset)
                assert agent.last_prior is None
                checked += 1
            game.apply(game.legal_actions()[0])
    assert checked > 2


def test_pimc_drops_an_action_when_the_paired_t_statistic_exceeds_z():
    """Without a prior, PIMC's prune is a paired t test on common worlds: an action is dropped exactly when the
    t statistic of the leader's values minus its own (``scipy.stats.ttest_rel``, standard deviation with n - 1)
    exceeds ``z``."""
    from scipy.stats import ttest_rel

    from agents.pimc import _surviving_actions

    rng = np.random.default_rng(4)
    for _ in range(200):
        worlds = int(rng.integers(8, 40))
        scores = {action: rng.normal(rng.normal(0, 0.3), 1.0, worlds) for action in range(4)}
        z = float(rng.uniform(0.5, 3.0))
        leader = max(scores, key=lambda action: scores[action].sum())
        expected = [action for action in scores
                    if action == leader or not ttest_rel(scores[leader], scores[action]).statistic > z]
        assert _surviving_actions(list(scores), scores, z) == expected


def test_pimc_prune_with_a_prior_spares_an_action_the_prior_favours():
    """With a prior counted as ``prior_weight`` worlds, the prune tests the shrunk values: an action 0.2 behind the
    leader over 20 worlds whose prior is 0.15 above the leader's is only 0.025 behind once shrunk, and is kept; with
    the prior 0.15 below the leader's it is 0.175 behind and dropped."""
    from agents.pimc import _surviving_actions

    rng = np.random.default_rng(0)
    leader_values = 1.0 + rng.normal(0, 0.2, 20)
    scores = {0: leader_values, 1: leader_values - 0.2 + rng.normal(0, 0.2, 20)}
    scores[1] += (scores[0] - scores[1]).mean() - 0.2  # exactly 0.2 behind on average
    assert _surviving_actions([0, 1], scores, 2.0, prior={0: 0.0, 1: 0.15}, prior_weight=20.0) == [0, 1]
    assert _surviving_actions([0, 1], scores, 2.0, prior={0: 0.15, 1: 0.0}, prior_weight=20.0) == [0]


def test_pimc_values_each_distinct_world_after_a_closing_on_its_own():
    """PIMC evaluates each distinct world once (R10: after a closing the talon's order no longer matters, so a world
    is the opponent's hand): worlds with other hands get their own solved values, so the per-world scores of an
    action vary where the hidden cards matter."""
    from agents.pimc import PimcAgent

    varied = decisions = 0
    for _game, infoset in closed_decisions(12, 900):
        agent = PimcAgent(seed=1, samples=30, seconds=None, prune=None, inference="none")
        agent.act(infoset)
        decisions += 1
        varied += any(len(set(values)) > 1 for values in agent.last_scores.values())
    assert decisions > 10 and varied > 3


def test_position_values_are_fail_soft_within_any_window():
    """``position_value(game, player, depth, alpha, beta)``: within the window the exact (full-window) value, at or
    below ``alpha`` an upper bound of it, at or above ``beta`` a lower bound, for either player, in phase 2 (R8,
    solved) and on the talon's last trick (R7, searched through)."""
    from agents.pimc import position_value

    checked = 0
    for seed in range(40):
        rng = random.Random(seed)
        game = Game.deal(Rules(), seed=seed, dealer=seed & 1)
        while not game.is_over and game.talon_size > 2:
            game.apply(rng.choice(game.legal_actions()))
        while not game.is_over:
            for player in (0, 1):
                exact = position_value(game.clone(), player, 1)
                for alpha in range(-4, 4):
                    for beta in range(alpha + 1, 5):
                        value = position_value(game.clone(), player, 1, alpha, beta)
                        if alpha < exact < beta:
                            assert value == exact
                        elif exact <= alpha:
                            assert exact <= value <= alpha
                        else:
                            assert beta <= value <= exact
                        checked += 1
            game.apply(rng.choice(game.legal_actions()))
    assert checked > 5000


def test_pimc_solves_whole_deals_from_full_solve_talon_face_down_cards_down(monkeypatch):
    """``full_solve_talon=n``: a world with at most n face-down cards (R7) is solved to the deal's end with its talon
    order known; with more it is valued by playouts."""
    import agents.pimc as pimc_module
    from agents.pimc import PimcAgent

    solved_at = []

    def full_deal_recording(world):
        solved_at.append(world.face_down_count)
        return full_deal_action_values(world)

    full_deal_action_values = pimc_module.full_deal_action_values
    monkeypatch.setattr(pimc_module, "full_deal_action_values", full_deal_recording)
    agent = PimcAgent(seed=0, samples=4, seconds=None, prune=None, prior="none", full_solve_talon=3)
    seen = set()
    for seed in range(20):
        game = Game.deal(Rules(), seed=seed, dealer=seed & 1)
        while game.face_down_count > 1:
            if game.stage == LEAD and game.face_down_count in (3, 5):
                solved_at.clear()
                agent.action_values(InformationSet(game, game.current_player))
                assert set(solved_at) == ({3} if game.face_down_count == 3 else set())  # repeated worlds: once
                seen.add(game.face_down_count)
            game.apply(game.legal_actions()[0])
    assert seen == {3, 5}


def test_pimc_values_a_paderborn_draw_by_the_drawers_best_lead():
    """After a paderborn draw choice (R10) the same player leads at once, so PIMC values drawing by his best lead,
    searched, not by a playout of the policy from there (as after an exchange, R9). In about two positions of five
    the two differ, so a draw valued by a playout would be mis-valued."""
    from agents.pimc import _phase2_decision, action_value, playout_value
    from sixtysix_env.actions import DRAW
    from sixtysix_env.game import PREDRAW

    checked = differs = 0
    for seed in range(100):
        rng = random.Random(seed)
        game = Game.deal(Rules.preset("paderborn"), seed=seed, dealer=seed & 1)
        while not game.is_over:
            if game.stage == PREDRAW:
                drawer = game.to_move
                drawn = game.clone()
                drawn.apply(DRAW)
                if not _phase2_decision(drawn):
                    best_lead = max(action_value(drawn, action, drawer, 0) for action in drawn.legal_actions())
                    assert action_value(game, DRAW, drawer, 0) == best_lead
                    checked += 1
                    differs += playout_value(drawn.clone(), drawer) != best_lead
            game.apply(rng.choice(game.legal_actions()))
    assert checked > 100 and differs > 30


# --------------------------------------------------------------------------------------------------------------- ismcts

def test_ismcts_plays_the_most_visited_root_action_then_the_better_mean_then_legal_order():
    """Without a prior the root action visited most is played; of equal visits the better mean, of equal visits and
    means the first in legal order."""
    from agents.ismcts import IsmctsAgent

    agent = IsmctsAgent(seed=0, iterations=10, seconds=None)
    infoset = _first_position_with(3)
    a, b, c = infoset.legal_actions[:3]
    for children, expected in (({a: (10, 0.1), b: (10, 0.1), c: (5, 0.9)}, a),
                               ({a: (10, 0.1), b: (10, 0.3), c: (5, 0.9)}, b),
                               ({a: (10, 0.1), b: (10, 0.3), c: (12, -0.5)}, c)):
        agent.search = lambda infoset, children=children: children
        assert agent.act(infoset) == expected


def test_ismcts_with_a_prior_plays_the_best_shrunk_mean():
    """With a prior at the root the action played is the one with the best mean shrunk toward the centred prior
    (``prior_weight`` visits of it), not the most visited."""
    from agents.ismcts import IsmctsAgent

    agent = IsmctsAgent(seed=0, iterations=10, seconds=None, prior_weight=10.0)
    infoset = _first_position_with(3)
    a, b, c = infoset.legal_actions[:3]
    children = {a: (10, 0.5), b: (10, 0.1), c: (100, 0.0)}

    def search(infoset):
        agent._root_prior = {a: 0.0, b: 0.0, c: 0.0}
        return children

    agent.search = search
    assert agent.act(infoset) == a
    shrunk = agent.shrunk_means(children)
    centre = (0.5 + 0.1 + 0.0) / 3
    assert shrunk[a] == pytest.approx((10 * 0.5 + 10 * centre) / 20)
    assert shrunk[c] == pytest.approx((100 * 0.0 + 10 * centre) / 110)


def test_ismcts_drops_a_pruned_root_action_from_the_rest_of_its_search():
    """``prune``: a root action dropped as clearly worse gets no more iterations; the tree's later visits all go
    to the actions still active."""
    from agents.ismcts import IsmctsAgent

    infoset = _first_position_with(3)
    active = infoset.legal_actions[:2]
    agent = IsmctsAgent(seed=0, iterations=2000, seconds=None, prune=3.0)
    at_drop = {}

    def drop_the_rest_after_the_first_slice(statistics):
        if not at_drop:
            at_drop.update({action: visits for action, (visits, _mean, _square) in statistics.items()})
            agent.last_active = list(active)
        return False

    agent._pruned_to_one = drop_the_rest_after_the_first_slice
    agent.search(infoset)
    final = agent._tree.root_statistics()
    dropped = [action for action in infoset.legal_actions if action not in active]
    assert all(final.get(action, (0,))[0] == at_drop.get(action, 0) for action in dropped)
    assert sum(final[action][0] for action in active) > 1900


# Rules the compiled core lacks (manual declaring, R13): the ISMCTS tree is then the Python one.
PYTHON_RULES = Rules(auto_declare=False)


def endgames_whose_moves_differ(rules: Rules, deals: int, hand_cards: int, cards_only: bool = True):
    """(seed, game, exact values of its moves) for each deal played at random until the talon is exhausted (R8)
    and at most ``hand_cards`` cards are left a hand, where the moves differ in value; ``cards_only``: no closing
    (R10) or declaring (R13) on the way (else deals closed on the way are skipped)."""
    from agents.solver import solve_all_actions

    for seed in range(deals):
        rng = random.Random(seed)
        game = Game.deal(rules, seed=seed, dealer=seed & 1)
        while not game.is_over and (game.talon_size > 0 or len(game.hand(game.to_move)) > hand_cards):
            legal = game.legal_actions()
            cards = [action for action in legal if action < 24] if cards_only else legal
            game.apply(rng.choice(cards) if cards else legal[0])
        if game.is_over or game.closed_by is not None or len(game.legal_actions()) < 2:
            continue
        values = solve_all_actions(game)
        if len(set(values.values())) > 1:
            yield seed, game, values


@pytest.mark.parametrize("rules, deals, iterations, cards_only", [(Rules(), 400, 2000, False),
                                                                  (PYTHON_RULES, 150, 300, True)],
                         ids=["core", "python"])
def test_ismcts_searching_the_opponent_finds_the_exact_best_move_of_small_endgames(rules, deals, iterations,
                                                                                   cards_only):
    """With the opponent's moves searched too (``opponent=search``, his nodes choose by UCB1 on the *negated*
    reward), in phase-2 endgames (R8) of at most four cards a hand, where the exhausted talon leaves no card hidden,
    the tree finds a move the exact solver rates best in nearly all positions whose moves differ in value: on the
    core, and in the Python tree (manual declaring, R13, which the core lacks)."""
    agree = positions = 0
    for seed, game, values in endgames_whose_moves_differ(rules, deals, 4, cards_only):
        agent = IsmctsAgent(seed=seed, iterations=iterations, seconds=None, opponent="search", phase2="search",
                            leaf="random", inference="none")
        positions += 1
        agree += values[agent.act(InformationSet(game, game.to_move))] == max(values.values())
    assert positions > 40
    assert agree >= 0.95 * positions


def test_ismcts_prune_drops_an_action_only_beyond_z_standard_errors_of_the_difference():
    """``surviving_root_actions``: a ripe action is dropped exactly when its mean is below the leader's by more than
    ``z`` standard errors of the difference (Welch's, from each action's sample variance): one exactly two standard
    errors behind stays at ``z`` 2.5 and 2.01 and is dropped at ``z`` 1.99 and 1.5."""
    visits, spread = 100, 0.4

    def statistics(mean):  # rewards mean +- spread, half each
        return visits, mean, visits * (mean * mean + spread * spread)

    standard_error = np.sqrt(2 * spread * spread * visits / (visits - 1) / visits)
    assert PRUNE_AFTER <= visits
    table = {3: statistics(0.5), 7: statistics(0.5 - 2.0 * standard_error)}
    for z in (2.5, 2.01):
        assert surviving_root_actions(table, [3, 7], z) == [3, 7]
    for z in (1.99, 1.5):
        assert surviving_root_actions(table, [3, 7], z) == [3]


def test_ismcts_prior_counts_a_third_of_the_networks_game_points_as_reward():
    """``prior``: the network values actions in game points and the tree's rewards are game points / 3 (R16), so
    each root action's prior enters the shrunk mean as a third of the network's value, moved to the mean of the
    root's means: ``(visits * mean + prior_weight * (value / 3 + centre)) / (visits + prior_weight)``."""
    agent = IsmctsAgent(seed=0, iterations=64, seconds=None, prior=str(PRIOR_MODEL), prior_weight=10.0)
    infoset = _first_position_with(3)
    points = {action: 0.6 * index - 0.9 for index, action in enumerate(infoset.legal_actions)}
    agent._prior_network.values = lambda infoset: dict(points)
    children = agent.search(infoset)
    assert set(children) == set(infoset.legal_actions)
    centre = np.mean([mean for _visits, mean in children.values()])
    shrunk = agent.shrunk_means(children)
    for action, (visits, mean) in children.items():
        expected = (visits * mean + 10.0 * (points[action] / 3 + centre)) / (visits + 10.0)
        assert shrunk[action] == pytest.approx(expected, abs=1e-12)


def test_ismcts_phase2_solve_plays_a_solver_best_move_once_the_talon_is_exhausted():
    """``phase2=solve``: once the talon is exhausted (R8) a card counter knows the opponent's hand, so the one
    consistent world is solved and a move the exact solver rates best in it is played, in every such position whose
    moves differ in value."""
    positions = 0
    for seed, game, values in endgames_whose_moves_differ(Rules(), 60, 6):
        agent = IsmctsAgent(seed=seed, seconds=None, phase2="solve")
        assert values[agent.act(InformationSet(game, game.to_move))] == max(values.values()), (seed, game.history)
        positions += 1
    assert positions > 20, positions


def test_ismcts_phase2_solve_without_a_clock_solves_a_fixed_number_of_worlds_after_a_closing():
    """``phase2=solve`` after a closing (R10): the best mean over sampled worlds, each solved exactly; without a
    clock (``seconds=None``) a fixed ``CLOCK_FREE_PHASE2_WORLDS`` of them (fewer than the clocked search's cap), so
    the choice rests on that many worlds at every such decision and depends only on the seed."""
    from agents.ismcts import CLOCK_FREE_PHASE2_WORLDS, MAX_PHASE2_WORLDS

    counts = set()
    for _game, infoset in closed_decisions(4, 900):
        agent = IsmctsAgent(seed=1, seconds=None, phase2="solve")
        assert agent.act(infoset) in infoset.legal_actions
        counts.add(agent.last_iterations)
    assert counts == {CLOCK_FREE_PHASE2_WORLDS} and 8 < CLOCK_FREE_PHASE2_WORLDS < MAX_PHASE2_WORLDS


def test_ismcts_phase2_solve_searches_the_answer_to_a_closing():
    """``phase2=solve`` solves only the play of cards: the answer to the opponent's paderborn closing (exchange or
    pass, R9/R10) is left to the tree, whose choice is played."""
    from sixtysix_env.actions import CLOSE
    from sixtysix_env.game import RESPOND_CLOSE

    answers = 0
    for seed in range(8):
        rng = random.Random(seed)
        game = Game.deal(Rules.preset("paderborn"), seed=seed, dealer=seed & 1)
        while not game.is_over and game.stage != RESPOND_CLOSE:
            legal = game.legal_actions()
            game.apply(CLOSE if CLOSE in legal else rng.choice(legal))
        if game.is_over:
            continue
        infoset = InformationSet(game, game.to_move)
        agent = IsmctsAgent(seed=0, iterations=50, seconds=None, phase2="solve")
        answer = infoset.legal_actions[-1]
        agent.search = lambda infoset: {answer: (50, 1.0)}
        agent._solved_phase2 = None  # not to be called here
        assert agent.act(infoset) == answer
        answers += 1
    assert answers >= 4


def test_ismcts_ends_its_last_slice_of_iterations_inside_the_budget(monkeypatch):
    """``seconds``: the core's iterations run in slices with a look at the clock between them, so that the budget
    holds: with a clock on which every iteration takes the same time, the search stops while some of its budget is
    left (less than three iterations' worth), not once it is spent."""
    import types

    import agents.ismcts as ismcts

    step = 1 / 1024  # seconds per iteration on the test's clock (exact in binary)
    clock = [0.0]
    monkeypatch.setattr(ismcts, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    infoset = _first_position_with(3)
    agent = IsmctsAgent(seed=0, iterations=100_000, seconds=40 * step, leaf="policy", inference="none")
    run = agent._run

    def timed_run(count, *args):
        run(count, *args)
        clock[0] += count * step

    agent._run = timed_run
    agent.start_deal(infoset.player, infoset.rules)
    started = clock[0]
    agent.search(infoset)
    assert 37 * step < clock[0] - started < 40 * step
    assert agent.last_iterations == round((clock[0] - started) / step)


def _python_tree_position(actions: int, seed: int = 40):
    """A phase-1 decision (R7) with at least ``actions`` choices under ``PYTHON_RULES``, the deal played on by its
    first legal action."""
    for deal in range(10):
        game = Game.deal(PYTHON_RULES, seed=seed + deal, dealer=deal & 1)
        while not game.is_over and game.talon_size >= 6:
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) >= actions:
                return infoset
            game.apply(game.legal_actions()[0])
    raise AssertionError("no such position")


def test_ismcts_python_tree_grows_a_node_below_the_root_at_its_second_visit():
    """``expand_after=1``: a node below the root grows a child at its second visit (the root at every visit): in the
    Python tree, once each root action has been tried once, the next iteration descends into one of them and grows
    its first child there."""
    from agents.ismcts import _Node

    infoset = _python_tree_position(3)
    agent = IsmctsAgent(seed=0, iterations=10, seconds=None, leaf="random", opponent="search", inference="none",
                        expand_after=1)
    agent.last_active = list(infoset.legal_actions)
    root = _Node()
    rng = random.Random(0)
    for _ in range(len(infoset.legal_actions)):
        agent._iterate(root, infoset.determinize(rng), infoset.player)
    assert len(root.children) == len(infoset.legal_actions)
    assert all(child.visits == 1 and not child.children for child in root.children.values())
    agent._iterate(root, infoset.determinize(rng), infoset.player)
    grown = [child for child in root.children.values() if child.children]
    assert len(grown) == 1 and grown[0].visits == 2


# --------------------------------------------------------------------------------------------------------------- solver

def test_a_search_on_several_threads_gets_one_table_per_thread():
    """``core_tables(bits, n)``: ``n`` distinct transposition tables (no two threads share one), the first the
    process's own ``core_table(bits)``."""
    from agents.solver import core_tables

    tables = core_tables(12, 3)
    assert len(tables) == 3 and len({id(table) for table in tables}) == 3
    assert tables[0] is core_table(12)


def test_closing_value_lets_the_opponent_take_the_exchange_offered_on_a_closing():
    """R9 (paderborn: ``exchange_after_opponent_closes``), R10: ``closing_value`` solves the closed deal after the
    opponent takes the exchange offered on the closing whenever he may (the face-up trump beats the nine), not after
    a pass; in some positions the two differ."""
    from agents.solver import closing_value, solve_value
    from sixtysix_env.actions import CLOSE, EXCHANGE, PASS
    from sixtysix_env.game import RESPOND_CLOSE

    rules = Rules.preset("paderborn")
    offered = differing = 0
    for seed in range(300):
        rng = random.Random(seed)
        game = Game.deal(rules, seed=seed, dealer=seed & 1)
        while not game.is_over and game.closed_by is None:
            closer = game.current_player
            closed = game.clone()
            if CLOSE in game.legal_actions():
                closed.apply(CLOSE)
            if closed.stage == RESPOND_CLOSE and EXCHANGE in closed.legal_actions():
                outcomes = {}
                for answer in (EXCHANGE, PASS):
                    answered = closed.clone()
                    answered.apply(answer)
                    if answered.is_over:
                        outcomes[answer] = answered.returns()[closer]
                    else:
                        value = solve_value(answered)
                        outcomes[answer] = value if answered.current_player == closer else -value
                assert closing_value(game) == outcomes[EXCHANGE], (seed, game.history)
                offered += 1
                differing += outcomes[EXCHANGE] != outcomes[PASS]
            game.apply(rng.choice([action for action in game.legal_actions() if action != CLOSE]))
    assert offered > 100 and differing > 10


def test_table_sizes_are_checked_at_both_ends_of_the_range():
    """``table_bits``: 10 and 28 (2**10 to 2**28 entries) are accepted, 9 and 29 refused with the range named."""
    from agents.solver import checked_table_bits

    assert (checked_table_bits(10), checked_table_bits(28)) == (10, 28)
    for bits in (9, 29):
        with pytest.raises(ValueError, match=rf"table_bits must be an integer in 10\.\.28, got {bits}"):
            checked_table_bits(bits)


def test_the_python_solver_names_a_best_action_where_the_core_lacks_the_rules():
    """``solve`` on rules the compiled core lacks (manual declaring, R13) searches in Python with narrowing windows:
    the action it names has the exact value it reports, the best of all the actions, at every phase-2 (R8) lead and
    follow."""
    from agents.solver import solve, solve_all_actions

    rules = Rules.preset("standard", auto_declare=False)
    ties = 0
    for seed in range(25):
        rng = random.Random(seed)
        game = Game.deal(rules, seed=seed, dealer=seed & 1)
        while not game.is_over:
            if (game.talon_size == 0 or game.closed_by is not None) and game.stage in (LEAD, FOLLOW):
                result, values = solve(game), solve_all_actions(game)
                assert values[result.best_action] == result.value == max(values.values()), (seed, game.history)
                ties += list(values.values()).count(result.value) > 1
            game.apply(rng.choice(game.legal_actions()))
    assert ties > 10


# --------------------------------------------------------------------------------------------------------- every search

@pytest.mark.parametrize("search", ("pimc", "rollout", "ismcts"))
@pytest.mark.parametrize("parameter", ("seconds", "prune"))
def test_a_zero_budget_or_prune_threshold_is_refused_by_name(search, parameter):
    """``seconds`` and ``prune`` must be positive (or ``none``): a budget of 0 leaves no time for a world, and a
    threshold of 0 drops every action behind the leader at all, so 0 is refused with the parameter named, as a
    negative value is."""
    for value in ("0", "-1"):
        with pytest.raises(ValueError, match=f"{parameter} must be a positive number"):
            make_agent(f"{search}:{parameter}={value}")
    make_agent(f"{search}:{parameter}=none")
