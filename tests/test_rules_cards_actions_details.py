"""Details of the rule switches (sixtysix_env/rules.py), the card notation (cards.py) and the action layout
(actions.py) from a mutation review: range checks at their edges, the messages that name what was wrong, presets
and overrides, the dict round trip, the bit-mask tables and the text parsers' treatment of junk."""

from __future__ import annotations

import dataclasses
import types

import numpy as np
import pytest

from sixtysix_env import Rules
from sixtysix_env import actions
from sixtysix_env.actions import action_name, marry_action, marry_card, parse_action
from sixtysix_env.cards import (
    FULL_DECK_MASK, HIGHER_IN_SUIT, KINGS_MASK, NINES_MASK, QUEENS_MASK, SUIT_MASKS, SUIT_NAMES,
    card_name, cards_of, deck_cards, integer_index, mask_of, parse_card, parse_cards, shown,
)
from sixtysix_env.rules import ALL_PRESET_NAMES, PRESET_NAMES, THREE_PLAYER_PRESET_NAMES, TWO_PLAYER_SWITCHES


# ------------------------------------------------------------------------------------------------ Rules
@pytest.mark.parametrize("switch, value, message", [
    ("deck", 32, "Rules.deck must be 24 or 20, got 32"),
    ("deck", 36, "Rules.deck must be 24 or 20, got 36"),
    ("partie_bummerl", 1, "Rules.partie_bummerl must be 2 or 3, got 1"),
    ("players", 1, "Rules.players must be 2 or 3, got 1"),
    ("bummerl_target", -1, "Rules.bummerl_target must be at least 1, got -1"),
    ("auto_declare", 0, "Rules.auto_declare must be true or false, got 0"),
    ("marriage_in_phase2", "true", "Rules.marriage_in_phase2 must be true or false, got 'true'"),
    ("deck", 24.0, "Rules.deck must be an integer, got 24.0"),
    ("partie_bummerl", True, "Rules.partie_bummerl must be an integer, got True"),
])
def test_switch_values_outside_their_range_are_refused_by_name(switch, value, message):
    """R2 (deck 24 or 20), R17 (a target of at least 1), R18 (a Partie of 2 or 3 Bummerl), R21 (2 or 3 players):
    a value next to the allowed ones, or of the wrong type, is refused with a message naming switch and value."""
    with pytest.raises(ValueError) as error:
        Rules(**{switch: value})
    assert str(error.value) == message


def test_the_smallest_bummerl_target_and_every_allowed_value_are_accepted():
    """R17: a Bummerl to a single game point is allowed; R2, R18, R21: each allowed value builds."""
    assert Rules(bummerl_target=1).bummerl_target == 1
    assert [Rules(partie_bummerl=n).partie_bummerl for n in (2, 3)] == [2, 3]
    assert Rules(players=3).hand_size == 8 and Rules(deck=20).hand_size == 6


@pytest.mark.parametrize("switch", TWO_PLAYER_SWITCHES)
def test_each_two_player_switch_is_refused_by_its_own_name_with_three_players(switch):
    """R21: with players=3 a switch of R9–R13, R17 or R18 moved off its default is refused naming that switch and
    its default."""
    default = Rules.__dataclass_fields__[switch].default
    changed = 3 if switch == "partie_bummerl" else not default
    with pytest.raises(ValueError) as error:
        Rules(players=3, **{switch: changed})
    assert str(error.value).startswith(f"Rules.{switch} applies only to the two-player game")
    assert str(error.value).endswith(f"its default {default!r}")


def test_the_preset_names_and_every_preset_knows_its_own_name():
    """R19, R20, R21: three two-player presets and the three-player one; each equals only itself, and a mix that
    is no preset (three players without the early marriages, a tournament Bummerl) has no name."""
    assert PRESET_NAMES == ("standard", "paderborn", "scharf") and THREE_PLAYER_PRESET_NAMES == ("three",)
    assert ALL_PRESET_NAMES == PRESET_NAMES + THREE_PLAYER_PRESET_NAMES
    assert [Rules.preset(name).preset_name for name in ALL_PRESET_NAMES] == list(ALL_PRESET_NAMES)
    assert Rules(players=3).preset_name is None
    assert Rules(schneider_bummerl=False).preset_name is None


def test_an_unknown_preset_is_refused_listing_all_four():
    """R19–R21: the message names the unknown preset and every preset, the three-player one included."""
    with pytest.raises(ValueError) as error:
        Rules.preset("wien")
    assert str(error.value) == "unknown rules preset 'wien'; choose one of standard, paderborn, scharf, three"


def test_overrides_win_over_the_presets_own_values():
    """R19, R20: a preset's switch given again as an override takes the override's value."""
    assert Rules.preset("scharf", deck=24) == Rules()
    assert Rules.preset("paderborn", marriage_in_phase2=True).marriage_in_phase2 is True
    assert Rules.preset("paderborn", exchange_needs_trick=False) == Rules(
        exchange_after_opponent_closes=True, close_draw_option=True, marriage_needs_trick=True,
        marriage_in_phase2=False)
    assert Rules.preset("three", three_player_early_marriage=False) == Rules(players=3)


def test_from_dict_takes_any_mapping_and_names_the_first_unknown_switch():
    """Switches and presets: ``from_dict`` takes any mapping; of several unknown switches it names the first in
    sorted order and lists the known switches (not the given ones)."""
    assert Rules.from_dict(types.MappingProxyType({"deck": 20})) == Rules.preset("scharf")
    with pytest.raises(ValueError) as error:
        Rules.from_dict({"zz_top": 1, "deck": 20, "aa_first": 2})
    known = ", ".join(sorted(field.name for field in dataclasses.fields(Rules)))
    assert str(error.value) == f"unknown rules switch 'aa_first'; known switches: {known}"


@pytest.mark.parametrize("name", ALL_PRESET_NAMES)
def test_to_dict_is_a_fresh_dict_of_every_switch_that_round_trips(name):
    """R19–R21: ``to_dict`` holds every switch (``players`` too) and ``from_dict`` of it gives the same rules;
    changing the dict leaves the frozen rules as they were."""
    rules = Rules.preset(name)
    values = rules.to_dict()
    assert list(values) == [field.name for field in dataclasses.fields(Rules)]
    assert Rules.from_dict(values) == rules and values["players"] == rules.players
    values["deck"] = 0
    assert rules.deck in (20, 24) and rules.to_dict() is not values


def test_the_exchange_rank_is_the_nine_with_24_cards_and_the_jack_with_20():
    """R2, R9: the trump nine exchanges, the trump jack in the 20-card deck."""
    assert (Rules().exchange_rank, Rules.preset("scharf").exchange_rank, Rules(players=3).exchange_rank) == (0, 1, 0)


# ------------------------------------------------------------------------------------------------ cards
def test_suit_names_follow_the_letters_c_d_h_s():
    """R1: Clubs C, Diamonds D, Hearts H, Spades S."""
    assert SUIT_NAMES == ("Clubs", "Diamonds", "Hearts", "Spades")


def test_the_bit_mask_tables():
    """R1: nines, queens and kings of all four suits; six cards a suit; R6: the cards that beat a card are exactly
    the higher ranks of its suit."""
    def named(*names: str) -> int:
        return mask_of(parse_card(name) for name in names)

    assert FULL_DECK_MASK == mask_of(range(24)) == (1 << 24) - 1
    assert NINES_MASK == named("9C", "9D", "9H", "9S")
    assert QUEENS_MASK == named("QC", "QD", "QH", "QS") and KINGS_MASK == named("KC", "KD", "KH", "KS")
    assert [cards_of(mask) for mask in SUIT_MASKS] == [list(range(6 * s, 6 * s + 6)) for s in range(4)]
    for card in range(24):
        assert cards_of(HIGHER_IN_SUIT[card]) == list(range(card + 1, card - card % 6 + 6))


def test_integer_index_takes_only_integers():
    """R1: an id is a Python or numpy integer; a bool, a float, text or None gives -1, never a valid id."""
    assert [integer_index(v) for v in (0, 23, np.int64(5), np.uint8(7))] == [0, 23, 5, 7]
    assert [integer_index(v) for v in (True, False, 1.0, "3", None, [1])] == [-1] * 6


def test_shown_keeps_sixty_characters_and_cuts_longer_text_to_sixty():
    """A message names a bad value in at most 60 characters, keeping its last two."""
    exact = "x" * 58  # repr adds two quotes: 60 characters
    assert shown(exact) == repr(exact)
    long = "y" * 100 + "z"
    assert shown(long) == "'" + "y" * 54 + "...z'" and len(shown(long)) == 60


def test_malformed_card_id_message_names_the_range():
    """R1: card ids run 0..23."""
    with pytest.raises(ValueError, match=r"expected an integer 0\.\.23$"):
        card_name(24)


@pytest.mark.parametrize("text", ["A H", "ＡＨ", "９H", "A\u200bH", "AH\x00"])
def test_parse_card_refuses_split_full_width_and_hidden_characters(text):
    """R1: a card is a rank letter then a suit letter; full-width letters or digits, a space inside or an invisible
    character do not make one."""
    with pytest.raises(ValueError, match="malformed card"):
        parse_card(text)


def test_parse_card_takes_either_case_and_surrounding_whitespace_of_any_kind():
    """R1: ``parse_card`` ignores case and whitespace around the name (a tab, a newline)."""
    assert parse_card("\tth\n") == parse_card("TH") == 16 and parse_card("9c") == 0


def test_parse_cards_splits_on_any_whitespace_and_names_the_group_of_a_bad_card():
    """R1, R4: a group of cards is names or ids 0..23; an error names where the group came from."""
    assert parse_cards("AH  TS\t9C", "talon") == [17, 22, 0]
    assert parse_cards([0, np.int64(23), "ks"], "talon") == [0, 23, 21]
    for bad in (["AH", "XX"], [24], [True], [1.0]):
        with pytest.raises(ValueError, match=r"^dealer hand: malformed card"):
            parse_cards(bad, "dealer hand")
    with pytest.raises(ValueError, match=r"^talon: expected a list of cards, got 5$"):
        parse_cards(5, "talon")


@pytest.mark.parametrize("size", [19, 21, 0, 32])
def test_deck_cards_knows_only_24_and_20(size):
    """R1, R2: a deck holds 24 cards or 20 (the nines removed); any other size is refused."""
    with pytest.raises(ValueError, match=f"deck must be 24 or 20 cards, got {size}"):
        deck_cards(size)


def test_the_20_card_deck_leaves_out_exactly_the_nines():
    """R2: the 20-card deck is the 24 without the four nines."""
    assert mask_of(deck_cards(20)) == FULL_DECK_MASK & ~NINES_MASK and mask_of(deck_cards(24)) == FULL_DECK_MASK


def test_mask_of_a_repeated_card_holds_it_once():
    """A set of cards is a mask: a card listed twice is still one bit."""
    assert mask_of([5, 5, 5]) == 1 << 5 and mask_of([5, 5]) == 1 << 5


# ------------------------------------------------------------------------------------------------ actions
def test_marriage_action_ranges_at_their_edges():
    """R11: a marriage is announced with a Queen or King (card ids 0..23), never an Ace; marry actions are 24..31;
    a float that equals an id is not an id."""
    for card in (parse_card("AH"), parse_card("TC"), -4, -3, 2.0, 3.0):
        with pytest.raises(ValueError, match="marry_action needs a Queen or King"):
            marry_action(card)
    for action in (23, 32, 24.0, 31.0):
        with pytest.raises(ValueError, match=r"marry_card needs a marry action \(24\.\.31\)"):
            marry_card(action)
    assert [marry_card(a) for a in (24, 31)] == [parse_card("QC"), parse_card("KS")]


def test_malformed_action_id_message_names_the_range():
    """The action ids run 0..36 (docs/actions.md)."""
    with pytest.raises(ValueError, match=r"expected an integer in 0\.\.36$"):
        action_name(37)


@pytest.mark.parametrize("text, action", [(" close ", 33), ("\tPASS\n", 36), ("Exchange", 32), ("marry  qh", 28)])
def test_parse_action_ignores_case_and_surrounding_whitespace(text, action):
    """R9–R13: the one-word actions and ``marry XY`` are read in any case with any spacing around them."""
    assert parse_action(text) == action


def test_unknown_action_message_gives_an_example_card():
    with pytest.raises(ValueError, match=r"XY a card such as AH\), 'exchange', 'close', 'declare', 'draw' or 'pass'"):
        parse_action("jump")


def test_star_import_of_actions_gives_every_named_action():
    """The fixed layout's constants are the module's public names (docs/actions.md)."""
    namespace: dict[str, object] = {}
    exec("from sixtysix_env.actions import *", namespace)
    for name in ("CLOSE", "DECLARE", "DRAW", "EXCHANGE", "MARRY_BASE", "NUM_ACTIONS", "PASS", "ACTION_NAMES"):
        assert namespace[name] == getattr(actions, name)


def test_odd_names_are_refused_by_name_not_by_a_python_error():
    """Found by a review of the public API: a list as a preset name failed "unhashable", keys of mixed types
    failed sorting, and the long s ("ſ") upper-cased into a spade (R1 names suits C/D/H/S)."""
    with pytest.raises(ValueError, match=r"unknown rules preset \['x'\]; choose one of standard"):
        Rules.preset(["x"])
    with pytest.raises(ValueError, match="unknown rules switch 'a'"):
        Rules.from_dict({1: 2, "a": 3})
    for text in ("Aſ", "Kſ", "\u212aH"):  # the long s; the Kelvin sign before H
        with pytest.raises(ValueError, match="malformed card"):
            parse_card(text)
    with pytest.raises(ValueError, match="malformed card 'Kſ'"):
        parse_action("marry Kſ")
    assert parse_card(" as ") == parse_card("AS")


def test_a_replay_source_may_be_a_path(tmp_path):
    """``load_replay`` took only text (an AttributeError on a Path), where ``load_record`` takes both."""
    import random as random_module

    from eval.records import load_replay
    from sixtysix_env import Game
    from sixtysix_env.record import save_record

    game = Game.deal(Rules(), seed=2, dealer=0)
    rng = random_module.Random(2)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    path = tmp_path / "game.json"
    save_record(path, game)
    assert load_replay(path) == load_replay(str(path))
