"""Property tests (hypothesis) over random deals, rule mixes and random legal play.

Checked at every step: cards are conserved, trick points match the cards won, the legal list is non-empty and
equals an independent reference of R7–R13 (incl. R8 in phase 2); at the end the card points add up (R14).
Also: records replay, clones are independent, determinized worlds agree with the information set, and
``determinize`` is uniform (statistical checks on fixed positions).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from math import comb, factorial, sqrt

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sixtysix_env import Game, InformationSet, Rules, parse_action
from sixtysix_env.actions import CLOSE, DECLARE, DRAW, EXCHANGE, MARRY_BASE, PASS
from sixtysix_env.cards import CARD_POINTS, cards_of, deck_cards, mask_of
from sixtysix_env.game import FOLLOW, LEAD, PREDRAW, RESPOND_CLOSE
from sixtysix_env.record import deck_from_hands, game_to_record, record_to_game

# Example counts keep this file's default run to about ten seconds on one core (random deals are short).
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SWITCHES = {
    "exchange_needs_trick": st.booleans(),
    "exchange_after_opponent_closes": st.booleans(),
    "close_draw_option": st.booleans(),
    "marriage_needs_trick": st.booleans(),
    "marriage_in_phase2": st.booleans(),
    "auto_declare": st.booleans(),
    "allow_false_declaration": st.booleans(),
}
rules_strategy = st.one_of(
    st.sampled_from(["standard", "paderborn", "scharf"]).map(Rules.preset),
    st.builds(lambda deck, switches: Rules(deck=deck, **switches), st.sampled_from([24, 20]),
              st.fixed_dictionaries({}, optional=SWITCHES)),
)
seeds = st.integers(min_value=0, max_value=2**63)


# ---------------------------------------------------------------------------------------------- helpers
def talon_mask(game: Game) -> int:
    """Face-down talon cards plus the card under it (R4), while they lie there."""
    mask = mask_of(game.stock[game.stock_pos:])
    if game.bottom_card is not None:
        mask |= 1 << game.bottom_card
    return mask


def played_mask(game: Game) -> int:
    mask = game.won_cards[0] | game.won_cards[1]
    if game.lead_card >= 0:
        mask |= 1 << game.lead_card
    return mask


def check_conservation(game: Game) -> None:
    """Hands + played + talon + bottom = the deck, with no card in two places."""
    parts = [game.hands[0], game.hands[1], played_mask(game), talon_mask(game)]
    total = 0
    for part in parts:
        assert total & part == 0, "a card is in two places"
        total |= part
    assert total == mask_of(deck_cards(game.rules.deck))
    sizes = [hand.bit_count() for hand in game.hands]
    if game.lead_card >= 0:  # the leader's card is on the table
        assert sizes[game.leader] + 1 == sizes[1 - game.leader]
    else:
        assert sizes[0] == sizes[1]


def won_points(game: Game, player: int) -> int:
    return sum(CARD_POINTS[card] for card in cards_of(game.won_cards[player]))


def r8_allowed(hand: int, lead: int, trump_suit: int) -> set[int]:
    """R8 from scratch: win in suit, else follow suit, else trump, else anything."""
    cards = cards_of(hand)
    same = [c for c in cards if c // 6 == lead // 6]
    higher = [c for c in same if c > lead]
    trumps = [c for c in cards if c // 6 == trump_suit]
    return set(higher or same or trumps or cards)


def reference_legal(game: Game) -> set[int]:
    """An independent reading of R7–R13 and the switches (docs/actions.md) for the player to move."""
    rules = game.rules
    player = game.to_move
    hand = game.hands[player]
    # R13: on a turn after winning a trick, even a false declaration (forehand's first lead offers none)
    declare_offered = (not rules.auto_declare or rules.allow_false_declaration) and game.tricks_won[player] > 0 and (
        rules.allow_false_declaration or game.points(player) >= 66)
    nine = game.trump_suit * 6 + (1 if rules.deck == 20 else 0)
    if game.stage == FOLLOW:
        return r8_allowed(hand, game.lead_card, game.trump_suit) if game.phase2 else set(cards_of(hand))
    if game.stage == PREDRAW:  # R9 before R10: the trick winner holding the nine may exchange first
        return {CLOSE, DRAW} | ({DECLARE} if declare_offered else set()) | ({EXCHANGE} if hand >> nine & 1 else set())
    if game.stage == RESPOND_CLOSE:
        return {PASS} | ({EXCHANGE} if hand >> nine & 1 else set())
    assert game.stage == LEAD
    actions = set(cards_of(hand))
    history = game.history
    closing_turn = game.closed_by == player and (
        history[-1:] == [CLOSE] or (len(history) >= 2 and history[-2] == CLOSE and history[-1] in (EXCHANGE, PASS)))
    may_marry = (not rules.marriage_needs_trick or game.tricks_won[player]) and (
        not game.phase2 or rules.marriage_in_phase2 or (closing_turn and hand.bit_count() == 6))
    if may_marry:
        for suit in range(4):
            queen, king = suit * 6 + 2, suit * 6 + 3
            if hand >> queen & 1 and hand >> king & 1:
                actions |= {MARRY_BASE + 2 * suit, MARRY_BASE + 2 * suit + 1}
    talon_open = game.closed_by is None
    if hand >> nine & 1 and talon_open and game.face_down_count >= 1 and (
            not rules.exchange_needs_trick or game.tricks_won[player]):
        actions.add(EXCHANGE)
    if talon_open and game.face_down_count >= 2:
        actions.add(CLOSE)
    if declare_offered:
        actions.add(DECLARE)
    return actions


def play_randomly(game: Game, rng: random.Random, each_step=None) -> None:
    while not game.is_over:
        if each_step is not None:
            each_step(game)
        game.apply(rng.choice(game.legal_actions()))
    if each_step is not None:
        each_step(game)


def snapshot(game: Game) -> tuple:
    return (list(game.hands), game.stage, game.to_move, game.leader, game.lead_card, list(game.history),
            list(game.tricks), list(game.marriages), list(game.exchanges), list(game.trick_points),
            list(game.marriage_points), list(game.tricks_won), list(game.won_cards), game.stock_pos,
            game.bottom_card, game.bottom_taker, game.closed_by, game.phase2, game.result, game.turn_step)


# ---------------------------------------------------------------------------------------------- invariants
@SETTINGS
@given(rules=rules_strategy, deal_seed=seeds, play_seed=seeds, dealer=st.integers(0, 1))
def test_invariants_during_random_play(rules, deal_seed, play_seed, dealer):
    game = Game.deal(rules, seed=deal_seed, dealer=dealer)

    def check(state: Game) -> None:
        check_conservation(state)
        bonus = [0, 0]
        if state.is_over and state.closed_by is None and not state.hands[0] and not state.hands[1]:
            bonus[state.tricks[-1][3]] = 10  # R14
        for player in (0, 1):
            assert state.trick_points[player] == won_points(state, player) + bonus[player]
            # R11: 20 a marriage, 40 in trumps, from the log of marriages; R12: they count once a trick is won
            shown = sum(40 if marriage.suit == state.trump_suit else 20
                        for marriage in state.marriages if marriage.player == player)
            assert state.marriage_points[player] == shown
            assert state.points(player) == state.trick_points[player] + (shown if state.tricks_won[player] else 0)
        if state.is_over:
            assert state.current_player is None and state.legal_actions() == []
            return
        legal = state.legal_actions()
        assert legal and legal == sorted(set(legal)), "legal actions: non-empty, ascending, unique"
        assert set(legal) == reference_legal(state)

    play_randomly(game, random.Random(play_seed), check)
    result = game.result
    assert result.points == (game.points(0), game.points(1))
    assert sum(result.returns()) == 0
    assert (result.winner is None) == (result.reason == "not scored")
    assert result.game_points in ((0,) if result.winner is None else (1, 2, 3))
    if not game.hands[0] and not game.hands[1] and game.closed_by is None:
        assert sum(game.trick_points) == 120 + 10  # R1 + R14 (the 20-card deck holds 120 too: nines are 0)


@SETTINGS
@given(rules=rules_strategy, deal_seed=seeds, play_seed=seeds, dealer=st.integers(0, 1))
def test_records_and_seeds_replay_exactly(rules, deal_seed, play_seed, dealer):
    game = Game.deal(rules, seed=deal_seed, dealer=dealer)
    play_randomly(game, random.Random(play_seed))
    replay = record_to_game(json.loads(json.dumps(game_to_record(game))))
    assert snapshot(replay) == snapshot(game)
    again = Game.deal(rules, seed=deal_seed, dealer=dealer)
    for action in game.history:
        again.apply(action)
    assert snapshot(again) == snapshot(game) and again.deck == game.deck


@SETTINGS
@given(rules=rules_strategy, deal_seed=seeds, play_seed=seeds, cut=st.floats(0, 1))
def test_clone_is_independent(rules, deal_seed, play_seed, cut):
    game = Game.deal(rules, seed=deal_seed)
    rng = random.Random(play_seed)
    steps = int(cut * 30)
    while not game.is_over and len(game.history) < steps:
        game.apply(rng.choice(game.legal_actions()))
    before = snapshot(game)
    copy = game.clone()
    assert snapshot(copy) == before
    play_randomly(copy, rng)
    copy.hands[0] = 0
    copy.trick_points[1] += 99
    copy.history.append(-1)
    assert snapshot(game) == before
    if not game.is_over:  # the original still plays on normally
        play_randomly(game, rng)


# ---------------------------------------------------------------------------------------------- determinize
def check_world(game: Game, player: int, rng: random.Random) -> None:
    view = InformationSet(game, player)
    opponent = 1 - player
    # The true state is one of the consistent layouts (known cards and voids were inferred soundly).
    assert game.hands[opponent] & view.opponent_known == view.opponent_known
    assert game.hands[opponent] & view.opponent_void == 0
    world = view.determinize(rng)
    assert world.hands[player] == game.hands[player]
    assert world.hands[opponent].bit_count() == game.hands[opponent].bit_count()
    assert world.hands[opponent] & view.opponent_known == view.opponent_known
    assert world.hands[opponent] & view.opponent_void == 0
    assert world.hands[opponent] & (view.played | view.hand) == 0
    check_conservation(world)
    for name in ("trump_card", "trump_suit", "bottom_card", "bottom_taker", "stage", "to_move", "leader",
                 "lead_card", "closed_by", "phase2", "face_down_count", "talon_size", "history", "tricks",
                 "marriages", "exchanges", "trick_points", "marriage_points", "tricks_won", "won_cards", "result"):
        assert getattr(world, name) == getattr(game, name), name
    if game.current_player == player:
        assert world.legal_actions() == game.legal_actions()
    again = InformationSet(world, player)
    for name in ("hand", "played", "unseen", "opponent_known", "opponent_void", "points", "legal_actions"):
        assert getattr(again, name) == getattr(view, name), name
    play_randomly(world, rng)  # a determinized world is a complete, playable game


@FEWER
@given(rules=rules_strategy, deal_seed=seeds, play_seed=seeds)
def test_determinize_agrees_with_the_information_set(rules, deal_seed, play_seed):
    game = Game.deal(rules, seed=deal_seed)
    rng = random.Random(play_seed)
    while not game.is_over:
        check_world(game, game.current_player, rng)
        check_world(game, 1 - game.current_player, rng)
        game.apply(rng.choice(game.legal_actions()))


def chi_square_bound(cells: int) -> float:
    """A generous acceptance bound: mean + 6 standard deviations of the chi-square distribution."""
    dof = cells - 1
    return dof + 6 * sqrt(2 * dof)


def test_determinize_is_uniform_over_layouts():
    """Forehand's view after four phase-1 tricks: the dealer's six cards and the three face-down cards are
    nine unseen cards: C(9, 6) hands x 3! talon orders = 504 equally likely layouts."""
    game = Game.deal(Rules(), dealer=0, deck=deck_from_hands(
        "9H AC AD AS TC TD".split(), "9C 9D 9S JC JD JS".split(), "JH",
        "QC QS QD KS QH KC TH KD AH KH TS".split()))
    for text in ("play AC", "play 9C", "play AD", "play 9D", "play AS", "play 9S", "play TC", "play JC"):
        game.apply(parse_action(text))
    view = InformationSet(game, 1)
    assert view.unseen.bit_count() == 9 and view.opponent_known == 0 and game.face_down_count == 3
    cells = comb(9, 6) * factorial(3)
    rng = random.Random(2024)
    samples = 20 * cells
    counts = Counter()
    for _ in range(samples):
        world = view.determinize(rng)
        counts[(world.hands[0], tuple(world.stock[world.stock_pos:]))] += 1
    assert len(counts) == cells  # every layout occurs, and no other
    expected = samples / cells
    chi_square = sum((observed - expected) ** 2 / expected for observed in counts.values())
    assert chi_square < chi_square_bound(cells)


def test_determinize_respects_voids_uniformly():
    """R8 phase 2 after a closing: the dealer trumped a club lead, so he holds no club; every other unseen card
    is equally likely to be in his hand (each with probability hand size / allowed cards)."""
    game = Game.deal(Rules(), dealer=0, deck=deck_from_hands(
        "KC QC AD 9D 9S JS".split(), "9H TH AS KS QD TD".split(), "JH"))
    for text in ("close", "play KC", "play 9H"):
        game.apply(parse_action(text))
    assert game.tricks[-1][3] == 0 and game.phase2
    view = InformationSet(game, 1)
    clubs = mask_of(range(0, 6))
    assert view.opponent_void & clubs == clubs
    allowed = cards_of(view.unseen & ~view.opponent_void)
    size = game.hands[0].bit_count()
    rng = random.Random(7)
    samples = 6000
    counts = Counter()
    for _ in range(samples):
        world = view.determinize(rng)
        assert world.hands[0] & clubs == 0
        counts.update(cards_of(world.hands[0]))
    assert set(counts) == set(allowed)
    probability = size / len(allowed)
    spread = sqrt(samples * probability * (1 - probability))
    for card in allowed:
        assert abs(counts[card] - samples * probability) < 6 * spread, card
