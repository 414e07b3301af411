"""No observation reveals a hidden card (RULES "What a player may know").

The cards a viewer has seen are derived here from the event log alone — his dealt hand, the turned-up trump
card, the cards he drew, every card played or shown in an announcement (R11), the nine laid down by an exchange
(R9) — without any code of the observation or the information set. Every other card lies in the opponent's hand
or in the face-down talon. Those cards are redistributed at random among their deck positions; a layout under
which the recorded actions do not replay (the opponent could not have followed as he did, R8) is inconsistent
with what the viewer saw and is discarded. For each consistent layout, the viewer's observation vector, history
planes (what each player led), action mask, information set (every field and its template game) and the agents'
encoding of it must be identical.

The default suite checks random switch combinations; the slow suite checks every combination of the eight rule
switches (256, both deck sizes) over at least 10^4 positions.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import DECLARE, EXCHANGE, MARRY_BASE, marry_card
from sixtysix_env.cards import cards_of
from sixtysix_env.observation import ObservationEncoder, action_mask, check_observation, encode_history

from hidden_cards import consistent_layout
from play_helpers import source_game_module

SWITCHES = ("deck", "exchange_needs_trick", "exchange_after_opponent_closes", "close_draw_option",
            "marriage_needs_trick", "marriage_in_phase2", "auto_declare", "allow_false_declaration")
GAME_FIELDS = [name for name in source_game_module().Game.__slots__ if name != "rules"]
INFOSET_FIELDS = [name for name in InformationSet.__slots__ if name not in ("_template", "rules")]
LAYOUTS_PER_POSITION = 3


def rules_of(values: tuple) -> Rules:
    settings_ = dict(zip(SWITCHES, values))
    settings_["deck"] = 20 if settings_["deck"] else 24
    return Rules(**settings_)


def seen_cards(game: Game, viewer: int) -> set[int]:
    """The cards ``viewer`` has seen, from the deck and the action log alone (R4 deal order, R7 draws, R9, R11)."""
    deck = game.deck
    forehand_positions = (0, 1, 2, 6, 7, 8)
    dealer_positions = (3, 4, 5, 9, 10, 11)
    own_positions = dealer_positions if viewer == game.dealer else forehand_positions
    seen = {deck[position] for position in own_positions} | {deck[12]}  # his hand, the turned-up trump (R4)
    replay = Game.deal(game.rules, deck=list(deck), dealer=game.dealer)
    for action in game.history:
        hand_before = replay.hands[viewer]
        bottom_before = replay.bottom_card
        replay.apply(action)
        if action < 24:
            seen.add(action)  # a card led or played to a trick
        elif MARRY_BASE <= action < EXCHANGE:
            card = marry_card(action)
            seen |= {card, card ^ 1}  # R11: the King and Queen are shown (ids differ in the lowest bit)
        elif action == EXCHANGE:
            seen |= {bottom_before, replay.bottom_card}  # R9: the trump card taken, the nine laid face up
        seen |= set(cards_of(replay.hands[viewer] & ~hand_before))  # what he drew (or took by exchanging)
    return seen


def view(game: Game, viewer: int, encoder: ObservationEncoder) -> tuple:
    observation = encoder.encode(game, viewer)
    check_observation(observation)  # finite, in [0, 1]
    info = InformationSet(game, viewer)
    agent_observation = encoder.encode_infoset(info)
    assert np.array_equal(agent_observation, observation)
    template = info._template
    return (
        observation.tobytes(), action_mask(game, viewer).tobytes(), encode_history(game, viewer).tobytes(),
        tuple(getattr(info, name) for name in INFOSET_FIELDS),
        tuple(tuple(value) if isinstance(value, list) else value
              for value in (getattr(template, name) for name in GAME_FIELDS)),
    )


def random_action(game: Game, rng: random.Random) -> int:
    legal = game.legal_actions()
    if DECLARE in legal and len(legal) > 1 and game.points(game.to_move) < 66 and rng.random() < 0.9:
        legal = [action for action in legal if action != DECLARE]  # false declarations would end most deals at once
    return rng.choice(legal)


def check_deal(rules: Rules, seed: int) -> tuple[int, int]:
    """Play one random deal; at every position compare both viewers with consistent layouts. Returns (positions
    checked, layouts compared)."""
    rng = random.Random(seed)
    game = Game.deal(rules, seed=seed, dealer=seed % 2)
    encoder = ObservationEncoder(rules)
    positions = layouts = 0
    while True:
        for viewer in (0, 1):
            positions += 1
            expected = view(game, viewer, encoder)
            for _ in range(LAYOUTS_PER_POSITION):
                twin = consistent_layout(game, seen_cards(game, viewer), rng)
                if twin is None:
                    continue
                assert twin.hands[viewer] == game.hands[viewer]
                layouts += 1
                assert view(twin, viewer, encoder) == expected, (
                    f"player {viewer} can tell two layouts apart (rules {rules}, seed {seed}, "
                    f"after {len(game.history)} actions)")
        if game.is_over:
            return positions, layouts
        game.apply(random_action(game, rng))


def test_seen_cards_from_the_log_of_an_explicit_deal():
    """The independent derivation on an explicit deck (R4): forehand's six cards and the trump card at first; a
    played trick adds both cards and what the viewer drew."""
    deck = list(range(24))
    game = Game.deal(Rules(), deck=deck, dealer=0)  # forehand is player 1: cards 0-2 and 6-8; trump card 12
    assert seen_cards(game, 1) == {0, 1, 2, 6, 7, 8, 12}
    game.apply(0)  # forehand leads 9C
    game.apply(3)  # the dealer follows KC and wins (R6); he draws card 13, forehand card 14 (R7)
    assert seen_cards(game, 1) == {0, 1, 2, 3, 6, 7, 8, 12, 14}
    assert seen_cards(game, 0) == {0, 3, 4, 5, 9, 10, 11, 12, 13}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(switches=st.tuples(*[st.booleans()] * len(SWITCHES)), seed=st.integers(0, 2**40))
def test_no_position_reveals_a_hidden_card(switches, seed):
    positions, layouts = check_deal(rules_of(switches), seed)
    assert positions >= 4 and layouts > 0, "the redistributed deals must really differ in hidden cards"


@pytest.mark.slow
def test_no_position_reveals_a_hidden_card_under_any_switch_combination():
    """Every combination of the eight switches (R2, R9–R13), several deals each: at least 10^4 positions."""
    total_positions = total_layouts = 0
    for index, switches in enumerate(itertools.product((False, True), repeat=len(SWITCHES))):
        for deal in range(2):
            positions, layouts = check_deal(rules_of(switches), seed=1000 * index + deal)
            total_positions += positions
            total_layouts += layouts
    assert total_positions >= 10_000 and total_layouts >= total_positions
