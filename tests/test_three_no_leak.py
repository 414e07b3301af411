"""No three-player observation reveals a hidden card (R21; RULES "What a player may know").

The three-player counterpart of tests/test_no_leak.py. The cards a viewer has seen are derived here from the deck and
the action log alone, with no code of the information set or the observation: his dealt hand (forehand, while he names
trump, only his first three cards, R21), every card played, and both cards of every marriage shown (R11, announced
before the first lead or with a lead). Every other card lies in another seat's hand, or in forehand's last five while
he names trump. Those cards are redistributed at random among their deck positions; a layout under which the recorded
actions do not replay (a seat could not have followed as it did, R21) is inconsistent with what the viewer saw and is
discarded. For each consistent layout, the viewer's observation vector, action mask and information set (every field
and its template game) must be identical.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from sixtysix_env import Game, Rules
from sixtysix_env.actions import MARRY_BASE, marry_card
from sixtysix_env.three import ANNOUNCE_BASE, FOREHAND_POSITIONS, NAME_TRUMP, NAME_TRUMP_BASE, ThreePlayerGame
from sixtysix_env.three_infoset import ThreeInformationSet
from sixtysix_env.three_observation import encode_three_infoset, three_action_mask

from hidden_cards import consistent_layout

RULE_SETS = (Rules.preset("three"), Rules.preset("three", three_player_early_marriage=False))
LAYOUTS_PER_POSITION = 3
TEMPLATE_FIELDS = [name for name in ThreePlayerGame.__slots__ if name != "rules"]
SEAT_POSITIONS = {0: FOREHAND_POSITIONS, 1: tuple(range(3, 6)) + (11, 12) + tuple(range(18, 21)),
                  2: tuple(range(6, 9)) + (13, 14) + tuple(range(21, 24))}  # R21 deck order, by seat role


def seen_cards(game: ThreePlayerGame, viewer: int) -> set[int]:
    """The cards ``viewer`` has seen, from the deck and the action log alone (R21 deal order, R11 marriages)."""
    role = (viewer - game.dealer - 1) % 3  # 0 forehand, 1 middlehand, 2 dealer
    positions = SEAT_POSITIONS[role]
    naming = game.stage == NAME_TRUMP
    if role == 0 and naming:
        positions = FOREHAND_POSITIONS[:3]  # R21: forehand names trump after seeing his first three cards only
    seen = {game.deck[position] for position in positions}
    for action in game.history:
        if action < 24:
            seen.add(action)  # a card led or played to a trick
        elif MARRY_BASE <= action < MARRY_BASE + 8:
            card = marry_card(action)
            seen |= {card, card ^ 1}  # R11: King and Queen shown (their ids differ in the lowest bit)
        elif ANNOUNCE_BASE <= action < ANNOUNCE_BASE + 4:
            queen = (action - ANNOUNCE_BASE) * 6 + 2
            seen |= {queen, queen + 1}  # an early marriage (R21): the pair is shown and stays in the hand
        else:
            assert action == 36 or NAME_TRUMP_BASE <= action < NAME_TRUMP_BASE + 4, action  # a pass, a named trump
    return seen


def view(game: ThreePlayerGame, viewer: int) -> tuple:
    info = ThreeInformationSet(game, viewer)
    template = info._template
    return (
        encode_three_infoset(info).tobytes(), three_action_mask(game, viewer).tobytes(),
        tuple(value for name, value in vars(info).items() if name != "_template"),
        tuple(tuple(value) if isinstance(value, list) else value
              for value in (getattr(template, name) for name in TEMPLATE_FIELDS)),
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**40), dealer=st.integers(0, 2), rules=st.sampled_from(RULE_SETS),
       policy_seed=st.integers(0, 2**20))
def test_every_view_is_the_same_in_every_layout_the_viewer_cannot_tell_apart(seed, dealer, rules, policy_seed):
    """R21: at every position of a random deal, each seat's observation, mask and information set are unchanged when
    the cards it has not seen lie elsewhere, as long as the deal still replays."""
    rng = random.Random(policy_seed)
    game = Game.deal(rules, seed=seed, dealer=dealer)
    compared = 0
    while True:
        for viewer in range(3):
            expected = view(game, viewer)
            for _ in range(LAYOUTS_PER_POSITION):
                twin = consistent_layout(game, seen_cards(game, viewer), rng)
                if twin is not None:
                    assert view(twin, viewer) == expected, (viewer, game.history)
                    compared += 1
        if game.is_over:
            break
        game.apply(rng.choice(game.legal_actions()))
    assert compared > 0


def test_the_check_finds_a_leak():
    """The comparison is not vacuous: a view that showed another seat's hand would differ between layouts."""
    game = Game.deal(RULE_SETS[0], seed=5, dealer=0)
    game.apply(game.legal_actions()[0])  # forehand names trump
    rng = random.Random(1)
    twins = [consistent_layout(game, seen_cards(game, 0), rng) for _ in range(20)]
    twins = [twin for twin in twins if twin is not None]
    assert twins and all(view(twin, 0) == view(game, 0) for twin in twins)
    assert any(twin.hands[1] != game.hands[1] for twin in twins)  # what a leak of seat 1's hand would show
