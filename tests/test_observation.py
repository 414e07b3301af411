"""The observation vector (sixtysix_env/observation.py): layout, agreement with the information set
(RULES "What a player may know"), rule scenarios from explicit decks (R4 order), the action mask."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sixtysix_env import Game, Rules, parse_action
from sixtysix_env.cards import CARD_NAMES, SUITS, cards_of, mask_of, parse_card
from sixtysix_env import observation as observation_module
from sixtysix_env.game import STAGE_NAMES
from sixtysix_env.infoset import InformationSet
from sixtysix_env.observation import (
    EXTENDED_OBSERVATION_SIZE, HISTORY_LAYOUT, HISTORY_SIZE, HISTORY_SLICES, NUM_BINARY_FEATURES, OBSERVATION_LAYOUT,
    OBSERVATION_SIZE, OBSERVATION_SLICES, RULE_FLAGS, ObservationEncoder, action_mask, card_plane,
    describe_observation, encode_extended_infoset, encode_history, encode_observation, rules_bits,
)
from sixtysix_env.record import deck_from_hands

PRESETS = {name: Rules.preset(name) for name in ("standard", "paderborn", "scharf")}
FH, DL = 1, 0  # dealer 0: player 1 is forehand (R3)


def deal(forehand: str, dealer: str, trump: str, talon: str = "", rules: Rules = PRESETS["standard"]) -> Game:
    return Game.deal(rules, deck=deck_from_hands(forehand.split(), dealer.split(), trump, talon.split(), rules.deck),
                     dealer=DL)


def play(game: Game, *actions: str) -> None:
    for text in actions:
        game.apply(parse_action(text))


def names(mask: int) -> set[str]:
    return {CARD_NAMES[card] for card in cards_of(mask)}


def random_states(rules: Rules, seed: int, dealer: int):
    """Every state of one deal under uniform random play (the game itself, advanced in place)."""
    game = Game.deal(rules, seed=seed, dealer=dealer)
    rng = random.Random(seed)
    while True:
        yield game
        if game.is_over:
            return
        legal = game.legal_actions()
        game.apply(legal[rng.randrange(len(legal))])


# ------------------------------------------------------------------------------------------------ layout
def test_layout_is_contiguous_named_and_binary_first():
    assert OBSERVATION_SIZE == sum(piece.size for piece in OBSERVATION_LAYOUT)
    assert len({piece.name for piece in OBSERVATION_LAYOUT}) == len(OBSERVATION_LAYOUT)
    offset = 0
    for piece in OBSERVATION_LAYOUT:
        assert OBSERVATION_SLICES[piece.name] == slice(offset, offset + piece.size)
        assert piece.kind in ("cards", "onehot", "flags", "scalar") and piece.meaning
        assert piece.size == 24 if piece.kind == "cards" else piece.size >= 1
        offset += piece.size
    kinds = [piece.kind == "scalar" for piece in OBSERVATION_LAYOUT]
    assert kinds == sorted(kinds), "binary pieces come first, then the scalars"
    assert NUM_BINARY_FEATURES == OBSERVATION_SLICES["talon_size"].start


def test_observation_is_a_fresh_writable_float32_vector_in_unit_range():
    game = Game.deal(seed=5)
    first = encode_observation(game, 0)
    second = encode_observation(game, 0)
    assert first.shape == (OBSERVATION_SIZE,) and first.dtype == np.float32
    assert first.flags.writeable and not np.shares_memory(first, second)
    assert np.array_equal(first, second)
    for state in random_states(PRESETS["standard"], 11, 1):
        for player in (0, 1):
            vector = encode_observation(state, player)
            assert vector.min() >= 0.0 and vector.max() <= 1.0
            binary = vector[:NUM_BINARY_FEATURES]
            assert np.all((binary == 0.0) | (binary == 1.0))


# ------------------------------------------------------------------------------------------------ infoset agreement
def unplayed_announced_cards(game: Game, player: int) -> int:
    """R11 shows both cards of a marriage; the announced card is led at once unless the announcement ends the deal
    (R11/R13). Such a card of the opponent's, still in his hand, is known to ``player``. (InformationSet's
    ``opponent_known`` does not count it yet: the no-leak test found this.)"""
    shown = 0
    for marriage in game.marriages:
        if marriage.player != player:
            shown |= 1 << marriage.led_card
    return shown & game.hands[1 - player]


def expected_description(game: Game, player: int) -> dict:
    """What the observation must say, from the InformationSet and the public record of the deal."""
    info = InformationSet(game, player)
    opponent = 1 - player
    announced = unplayed_announced_cards(game, player)
    opponent_known = info.opponent_known | announced
    unseen = info.unseen & ~announced
    played = [0, 0]
    for trick in game.trick_log:
        played[trick.leader] |= 1 << trick.lead_card
        played[1 - trick.leader] |= 1 << trick.follow_card
    if game.lead_card >= 0:
        played[game.leader] |= 1 << game.lead_card
    pending = [0 if game.tricks_won[p] else game.marriage_points[p] for p in (0, 1)]
    rules = game.rules
    rule_values = [rules.deck == 20] + [getattr(rules, name) for name in RULE_FLAGS[1:]]
    return {
        "hand": names(info.hand),
        "talon_bottom": set() if info.bottom_card is None else {CARD_NAMES[info.bottom_card]},
        "trick_lead": set() if info.lead_card < 0 else {CARD_NAMES[info.lead_card]},
        "played_by_me": names(played[player]),
        "played_by_opponent": names(played[opponent]),
        "won_by_me": names(game.won_cards[player]),
        "won_by_opponent": names(game.won_cards[opponent]),
        "opponent_known": names(opponent_known),
        "unseen": names(unseen),
        "opponent_cannot_hold": names(info.opponent_void & unseen),
        "trump_suit": SUITS[info.trump_suit],
        "marriages_by_me": [SUITS[s] for s in sorted({m.suit for m in info.marriages if m.player == player})],
        "marriages_by_opponent": [SUITS[s] for s in sorted({m.suit for m in info.marriages if m.player == opponent})],
        "stage": STAGE_NAMES[info.stage],
        "my_turn": info.to_move == player,
        "forehand": info.forehand == player,
        "closed_by_me": info.closed_by == player,
        "closed_by_opponent": info.closed_by == opponent,
        "closer_opponent_trickless": info.closed_by is not None and game.opponent_trickless_at_close,
        "phase2": game.phase2,
        "i_have_trick": info.tricks_won[player] > 0,
        "opponent_has_trick": info.tricks_won[opponent] > 0,
        "rules": [name for name, value in zip(RULE_FLAGS, rule_values) if value],
        "talon_size": info.talon_size,
        "opponent_hand_size": info.opponent_hand_size,
        "my_points": min(info.points[player], 66),
        "opponent_points": min(info.points[opponent], 66),
        "my_pending_marriage": min(pending[player], 40),
        "opponent_pending_marriage": min(pending[opponent], 40),
        "my_game_points": 0,
        "opponent_game_points": 0,
    }


def decoded(vector: np.ndarray) -> dict:
    description = describe_observation(vector)
    return {key: set(value) if OBSERVATION_LAYOUT[[p.name for p in OBSERVATION_LAYOUT].index(key)].kind == "cards"
            else value for key, value in description.items()}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**40), dealer=st.integers(0, 1), preset=st.sampled_from(sorted(PRESETS)))
def test_observation_agrees_with_the_information_set(seed, dealer, preset):
    """Every piece, at every state of random deals of every preset, for both players: exactly the information set
    (own hand, public cards and facts, known and excluded opponent cards, points, R12 pending marriages)."""
    for state in random_states(PRESETS[preset], seed, dealer):
        for player in (0, 1):
            assert decoded(encode_observation(state, player)) == expected_description(state, player)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**40), preset=st.sampled_from(sorted(PRESETS)),
       score=st.tuples(st.integers(0, 9), st.integers(0, 9)))
def test_encoding_an_information_set_equals_encoding_the_game(seed, preset, score):
    """What an agent holds (the InformationSet, hidden cards erased) encodes to the very same vector."""
    encoder = ObservationEncoder(PRESETS[preset], match_score=score)
    for state in random_states(PRESETS[preset], seed, seed % 2):
        for player in (0, 1):
            assert np.array_equal(encoder.encode_infoset(InformationSet(state, player)), encoder.encode(state, player))


def test_one_encoder_gives_fresh_results_across_interleaved_games_and_clones():
    """The encoder's trick cache never serves one game's data for another (interleaved games, clones, replays)."""
    rules = PRESETS["standard"]
    shared = ObservationEncoder(rules)
    first = random_states(rules, 1, 0)
    second = random_states(rules, 2, 1)
    snapshots = []
    for state_a, state_b in zip(first, second):
        for state in (state_a, state_b, state_a.clone()):
            for player in (0, 1):
                assert np.array_equal(shared.encode(state, player), ObservationEncoder(rules).encode(state, player))
        snapshots.append(state_a.clone())
    for state in reversed(snapshots):  # going back in time on the same encoder
        assert np.array_equal(shared.encode(state, 0), ObservationEncoder(rules).encode(state, 0))


def test_match_score_scaled_toward_the_bummerl_target():
    """R17: the game points of the current Bummerl, from each player's side, scaled by bummerl_target."""
    game = Game.deal(seed=3)
    vector = encode_observation(game, 1, match_score=(5, 2))
    assert vector[OBSERVATION_SLICES["my_game_points"]][0] == pytest.approx(2 / 7)
    assert vector[OBSERVATION_SLICES["opponent_game_points"]][0] == pytest.approx(5 / 7)
    assert describe_observation(vector)["opponent_game_points"] == 5
    encoder = ObservationEncoder(Rules.preset("standard", bummerl_target=3), match_score=(9, 0))
    assert encoder.encode(Game.deal(Rules.preset("standard", bummerl_target=3), seed=1), 0)[
        OBSERVATION_SLICES["my_game_points"]][0] == 1.0  # clipped at the target
    for bad in ((1,), (-1, 0), (1.5, 0), "ab", None):
        with pytest.raises(ValueError, match="match_score"):
            ObservationEncoder(PRESETS["standard"], match_score=bad)


def test_bad_input_is_rejected():
    game = Game.deal(seed=1)
    with pytest.raises(ValueError, match="player"):
        encode_observation(game, 2)
    with pytest.raises(ValueError, match=str(OBSERVATION_SIZE)):
        describe_observation(np.zeros(10))
    with pytest.raises(ValueError, match="Rules"):
        ObservationEncoder("standard")


# ------------------------------------------------------------------------------------------------ rule scenarios
def test_R4_start_forehand_sees_hand_trump_card_and_seventeen_unseen():
    game = deal("9C JC QC KC TC AC", "9D JD QD KD TD AD", "AH")
    seen = describe_observation(encode_observation(game, FH))
    assert set(seen["hand"]) == {"9C", "JC", "QC", "KC", "TC", "AC"}
    assert seen["talon_bottom"] == ["AH"] and seen["trump_suit"] == "H"
    assert len(seen["unseen"]) == 17 and "AD" in seen["unseen"] and "AH" not in seen["unseen"]
    assert seen["stage"] == "lead" and seen["my_turn"] and seen["forehand"]
    assert seen["talon_size"] == 12 and seen["opponent_hand_size"] == 6
    dealer_view = describe_observation(encode_observation(game, DL))
    assert not dealer_view["my_turn"] and not dealer_view["forehand"]


def test_R9_exchange_reveals_the_taken_trump_card_and_the_laid_nine():
    game = deal("9H JC QC KC TC AC", "9D JD QD KD TD AD", "AH")
    play(game, "exchange")
    dealer_view = describe_observation(encode_observation(game, DL))
    assert dealer_view["opponent_known"] == ["AH"] and dealer_view["talon_bottom"] == ["9H"]
    assert "AH" not in dealer_view["unseen"] and "9H" not in dealer_view["unseen"]
    forehand_view = describe_observation(encode_observation(game, FH))
    assert "AH" in forehand_view["hand"] and forehand_view["talon_bottom"] == ["9H"]


def test_R11_R12_marriage_shows_partner_and_pending_points():
    game = deal("KS QS JC QC KC TC", "9D JD QD KD TD AD", "AH")
    play(game, "marry KS")
    dealer_view = describe_observation(encode_observation(game, DL))
    assert dealer_view["marriages_by_opponent"] == ["S"] and dealer_view["opponent_known"] == ["QS"]
    assert dealer_view["trick_lead"] == ["KS"] and dealer_view["played_by_opponent"] == ["KS"]
    assert dealer_view["opponent_pending_marriage"] == 20 and dealer_view["opponent_points"] == 0
    forehand_view = describe_observation(encode_observation(game, FH))
    assert forehand_view["marriages_by_me"] == ["S"] and forehand_view["my_pending_marriage"] == 20
    play(game, "play 9D")  # KS wins: forehand has a trick, the marriage counts (R12)
    forehand_view = describe_observation(encode_observation(game, FH))
    assert forehand_view["my_pending_marriage"] == 0 and forehand_view["my_points"] == 4 + 20
    assert forehand_view["i_have_trick"] and set(forehand_view["won_by_me"]) == {"KS", "9D"}


def test_R10_closing_flags_and_the_turned_down_trump_card_stay_known():
    game = deal("9C JC QC KC TC AC", "9D JD QD KD TD AD", "AH")
    play(game, "close")
    forehand_view = describe_observation(encode_observation(game, FH))
    assert forehand_view["closed_by_me"] and forehand_view["closer_opponent_trickless"] and forehand_view["phase2"]
    assert forehand_view["talon_bottom"] == ["AH"]  # turned face down, but both saw it
    dealer_view = describe_observation(encode_observation(game, DL))
    assert dealer_view["closed_by_opponent"] and not dealer_view["closed_by_me"]


def test_R8_discard_in_phase2_shows_the_opponent_void_in_suit_and_trump():
    game = deal("9C JC QC KC TC AC", "9S JS QS KS TS AS", "AH")
    play(game, "close", "play AC", "play 9S")  # dealer has no club and no trump (R8 d)
    forehand_view = describe_observation(encode_observation(game, FH))
    assert set(forehand_view["opponent_cannot_hold"]) == {"9H", "JH", "QH", "KH", "TH"}
    assert describe_observation(encode_observation(game, DL))["opponent_cannot_hold"] == []


def test_R11_R13_marriage_that_ends_the_deal_shows_both_cards():
    """R11: the announcement reaching 66 ends the deal at once; the announced King is not led but was shown."""
    game = deal("KH QH AH TH AC TC", "9D JD QD KD TD AD", "9H")  # trump H: a 40 marriage
    play(game, "play AH", "play 9D", "play TH", "play JD", "play AC", "play QD")  # forehand: 11 + 12 + 14 = 37
    play(game, "marry KH")  # 37 + 40 >= 66: declared at once, KH stays in the hand
    assert game.is_over and game.result.reason == "declared"
    dealer_view = describe_observation(encode_observation(game, DL))
    assert set(dealer_view["opponent_known"]) == {"KH", "QH"}
    assert "KH" not in dealer_view["unseen"] and "QH" not in dealer_view["unseen"]


def test_R7_bottom_card_taken_with_the_last_talon_trick_is_known():
    rules = PRESETS["standard"]
    for seed in range(40):
        game = Game.deal(rules, seed=seed)
        rng = random.Random(seed)
        while not game.is_over and game.bottom_taker is None:
            legal = [a for a in game.legal_actions() if a != parse_action("close")]
            game.apply(rng.choice(legal))
        if game.bottom_taker is None:
            continue
        watcher = 1 - game.bottom_taker
        bottom = CARD_NAMES[game.bottom_taken_card]
        assert bottom in describe_observation(encode_observation(game, watcher))["opponent_known"]
        return
    pytest.fail("no deal reached the end of the talon")


def led(game: Game, player: int) -> tuple[set[str], set[str]]:
    """The two history planes of ``player`` as card names: (led by me, led by the opponent)."""
    planes = encode_history(game, player)
    mine, theirs = planes[:24], planes[24:]
    return ({CARD_NAMES[card] for card in np.flatnonzero(mine)}, {CARD_NAMES[card] for card in np.flatnonzero(theirs)})


def test_R7_history_planes_keep_who_led_each_card_which_the_observation_does_not():
    """R7: in phase 1 a player need not follow, so whether a card led a trick or answered one tells what its
    player held; the observation keeps only who played and who won it, the history planes who led it."""
    game = deal("9C JC QC KC TC AC", "9D JD QD KD TD JH", "AH")  # trump H
    play(game, "play AC")  # forehand leads; the card on the table counts as led
    assert led(game, FH) == ({"AC"}, set()) and led(game, DL) == (set(), {"AC"})
    play(game, "play 9D", "play KC", "play JH")  # AC wins; forehand leads KC, dealer trumps it
    play(game, "play QD")  # the dealer leads
    assert led(game, FH) == ({"AC", "KC"}, {"QD"}) and led(game, DL) == ({"QD"}, {"AC", "KC"})
    seen = describe_observation(encode_observation(game, FH))
    assert set(seen["played_by_opponent"]) == {"9D", "JH", "QD"}  # the lead among them is not marked there
    vector = encode_extended_infoset(InformationSet(game, FH))
    assert vector.shape == (EXTENDED_OBSERVATION_SIZE,) and np.array_equal(vector[OBSERVATION_SIZE:],
                                                                           encode_history(game, FH))
    assert HISTORY_SLICES["led_by_me"].start == OBSERVATION_SIZE and OBSERVATION_SIZE + HISTORY_SIZE == len(vector)
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        encode_history(game, 2)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_core_writes_the_history_planes_of_the_python_encoder(preset):
    """The compiled core keeps each player's leads in its state (``LED0``) and writes the same planes as
    :func:`encode_history`, after every action of random deals, for both players (the card on the table too)."""
    from sixtysix_env.core import apply_action, new_state
    from sixtysix_env.core.observation import encode_extended_row

    rules = PRESETS[preset]
    scores = np.zeros(2, dtype=np.float32)
    for seed in range(60):
        rng = random.Random(seed)
        game = Game.deal(rules, seed=seed, dealer=seed % 2)
        state = new_state(rules, seed=seed, dealer=seed % 2)
        while True:
            for player in (0, 1):
                row = np.empty(EXTENDED_OBSERVATION_SIZE, dtype=np.float32)
                encode_extended_row(state, player, scores, row)
                expected = np.concatenate([encode_observation(game, player), encode_history(game, player)])
                assert np.array_equal(row, expected), f"{preset} seed {seed} player {player}"
            if game.is_over:
                break
            action = rng.choice(game.legal_actions())
            game.apply(action)
            apply_action(state, action)


# ------------------------------------------------------------------------------------------------ action mask
def test_action_mask_equals_legal_actions_and_is_zero_for_the_other_player():
    for preset in PRESETS.values():
        for state in random_states(preset, 7, 0):
            if state.is_over:
                assert not action_mask(state).any() and not action_mask(state, 0).any()
                continue
            mask = action_mask(state)
            assert mask.dtype == np.int8 and mask.shape == (37,)
            assert list(np.flatnonzero(mask)) == state.legal_actions()
            assert np.array_equal(action_mask(state, state.to_move), mask)
            assert not action_mask(state, 1 - state.to_move).any()
            as_bool = action_mask(state, dtype=np.bool_)
            assert as_bool.dtype == np.bool_ and np.array_equal(as_bool, mask.astype(bool))


def test_card_plane_reads_a_card_piece_back_as_a_mask():
    game = deal("9C JC QC KC TC AC", "9D JD QD KD TD AD", "AH")
    expected = mask_of(parse_card(card) for card in "9C JC QC KC TC AC".split())
    assert card_plane(encode_observation(game, FH), "hand") == expected


# ------------------------------------------------------------------------------------------------ docs
def test_docs_observation_md_holds_the_generated_table_and_every_option():
    """docs/observation.md never goes stale: its table is exactly the layout's, and it names every option of both
    environments."""
    import inspect
    from pathlib import Path

    from sixtysix_env.env import raw_env
    from sixtysix_env.gym_env import SixtySixGymEnv
    from sixtysix_env.observation import observation_table_markdown

    text = (Path(__file__).resolve().parent.parent / "docs" / "observation.md").read_text(encoding="utf-8")
    start, end = "<!-- observation-table:start -->\n", "\n<!-- observation-table:end -->"
    assert text[text.index(start) + len(start): text.index(end)] == observation_table_markdown()
    for piece in OBSERVATION_LAYOUT:
        assert f"| `{piece.name}` | {OBSERVATION_SLICES[piece.name].start} | {piece.size} |" in text
    for piece in HISTORY_LAYOUT:  # the planes beside the observation
        assert f"| {HISTORY_SLICES[piece.name].start} | `{piece.name}` | {piece.size} | {piece.meaning} |" in text
    assert f"| | (total with the observation) | {EXTENDED_OBSERVATION_SIZE} |" in text
    for constructor in (raw_env.__init__, SixtySixGymEnv.__init__):
        for name in inspect.signature(constructor).parameters:
            if name != "self":
                assert f"| `{name}` |" in text, f"docs/observation.md does not describe the option {name!r}"


def test_the_generic_encoders_route_a_three_player_game_to_its_own_encoding():
    """R21: ``encode_observation`` and ``action_mask`` take a three-player game as ``InformationSet`` and
    ``Game.deal`` do (its 45 actions, its own planes), in the naming stage and in play; a match score, which the
    three-player game does not keep, is refused."""
    from sixtysix_env import action_mask, encode_observation
    from sixtysix_env.three_observation import encode_three_observation, three_action_mask

    game = Game.deal(Rules.preset("three"), seed=4)
    rng = random.Random(4)
    seen_stages = set()
    while not game.is_over:
        seen_stages.add(game.stage)
        for seat in range(3):
            np.testing.assert_array_equal(encode_observation(game, seat), encode_three_observation(game, seat))
            np.testing.assert_array_equal(action_mask(game, seat), three_action_mask(game, seat))
        mask = action_mask(game, dtype=bool)
        assert mask.shape == (45,) and sorted(np.flatnonzero(mask)) == game.legal_actions()
        game.apply(rng.choice(game.legal_actions()))
    assert len(seen_stages) >= 2  # naming trump and playing tricks
    with pytest.raises(ValueError, match="match_score: the three-player game"):
        encode_observation(game, 0, match_score=(3, 2))


def test_two_player_environments_refuse_three_player_rules_naming_the_entry_point():
    """R21 games have their own environments; the two-player ones refuse them at construction (they failed in
    ``reset`` with "negative shift count")."""
    import gymnasium

    from sixtysix_env import SixtySixGymEnv, raw_env

    with pytest.raises(ValueError, match=r"two-player game; for rules with 3 players \(R21\) use "
                                         r"sixtysix_env.env\(rules='three'\)"):
        raw_env(rules="three")
    for make in (lambda: SixtySixGymEnv(rules="three"), lambda: gymnasium.make("SixtySix-v0", rules="three")):
        with pytest.raises(ValueError, match=r"use gymnasium.make\('SixtySixThree-v0'\)"):
            make()


@pytest.mark.parametrize("player", ["player_1", 5, -1, 1.0, True, None])
def test_masks_and_observations_refuse_a_player_that_is_not_a_seat(player):
    """PettingZoo users pass agent names: the mask of "player_1" was all zeros, as for a player not to move, and an
    observation of 1.0 failed deep inside. A seat is a Python or numpy integer; None asks for the mover's mask."""
    from sixtysix_env import ThreePlayerGame, action_mask, encode_observation

    game = Game.deal(Rules.preset("standard"), seed=1)
    three = ThreePlayerGame.deal(Rules.preset("three"), seed=1)
    assert action_mask(game, np.int64(game.to_move)).sum() == len(game.legal_actions())
    assert encode_observation(game, np.int8(0)).tolist() == encode_observation(game, 0).tolist()
    if player is None:
        assert action_mask(game, None).sum() == len(game.legal_actions())
        assert action_mask(three, None).sum() == len(three.legal_actions())
        return
    with pytest.raises(ValueError, match=f"player must be 0 or 1, got {re.escape(repr(player))}"):
        action_mask(game, player)
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        encode_observation(game, player)
    with pytest.raises(ValueError, match="player must be 0, 1 or 2"):  # R21: 5 and -1 are no seat of three
        action_mask(three, player)


def test_describe_observation_and_determinize_refuse_bad_arguments_by_name():
    from sixtysix_env import describe_observation, encode_observation

    game = Game.deal(Rules.preset("standard"), seed=1)
    vector = encode_observation(game, 0)
    assert describe_observation(vector)["talon_size"] == InformationSet(game, 0).talon_size
    damaged = vector.copy()
    damaged[-1] = np.nan
    with pytest.raises(ValueError, match=f"NaN or infinite values at indexes \\[{len(vector) - 1}\\]"):
        describe_observation(damaged)
    for target in (0, 7.0, True):
        with pytest.raises(ValueError, match="bummerl_target must be a whole number"):
            describe_observation(vector, bummerl_target=target)
    for rng in (None, np.random.default_rng(0)):
        with pytest.raises(ValueError, match="rng must be a random.Random"):
            InformationSet(game, 0).determinize(rng)


def test_encode_observation_ignores_a_cached_encoder_of_other_rules_under_a_reused_id():
    """encode_observation caches one encoder per id(rules); ids are reused once a Rules object is freed, so an entry
    whose encoder holds other rules must not be used: the ``rules`` piece is that of the game's own rules."""
    rules = Rules.preset("paderborn")
    other = Rules.preset("standard", deck=24)
    assert rules_bits(rules) != rules_bits(other)
    game = Game.deal(rules, seed=4)
    observation_module._ENCODERS[id(rules)] = ObservationEncoder(other)  # what a freed object's id leaves behind
    try:
        vector = encode_observation(game, 0)
    finally:
        observation_module._ENCODERS.pop(id(rules), None)
    assert np.array_equal(vector, ObservationEncoder(rules).encode(game, 0))


def test_describe_observation_reads_game_points_against_the_given_bummerl_target():
    """describe_observation: "game points assume ``bummerl_target``" (R17): 2:1 of a Bummerl to 3 reads back as
    2 and 1 with bummerl_target=3, not as fractions of the default 7."""
    rules = Rules.preset("standard", bummerl_target=3)
    vector = ObservationEncoder(rules, match_score=(2, 1)).encode(Game.deal(rules, seed=2), 0)
    assert vector[OBSERVATION_SLICES["my_game_points"]][0] == pytest.approx(2 / 3)
    described = describe_observation(vector, bummerl_target=3)
    assert described["my_game_points"] == 2 and described["opponent_game_points"] == 1


def test_information_set_knows_both_cards_of_a_marriage_that_ended_the_deal():
    """R11/R13: an announcement reaching 66 ends the deal before the announced King is led; R11 showed both cards,
    so the watcher's information set holds both as opponent_known and neither as unseen (as the observation does)."""
    game = deal("KH QH AH TH AC TC", "9D JD QD KD TD AD", "9H")  # trump H: a 40 marriage
    play(game, "play AH", "play 9D", "play TH", "play JD", "play AC", "play QD")
    play(game, "marry KH")
    assert game.is_over and game.result.reason == "declared"
    infoset = InformationSet(game, DL)
    assert names(infoset.opponent_known) == {"KH", "QH"}
    assert not names(infoset.unseen) & {"KH", "QH"}


def test_determinize_refuses_an_information_set_whose_counts_do_not_add_up():
    """determinize fills exactly the opponent's unknown cards and the face-down talon; an information set whose
    counts cannot be met (here edited by hand) raises ValueError naming it inconsistent, never a short or long talon
    or a bare error from random.sample."""
    game = Game.deal(Rules(), seed=7)
    too_few = InformationSet(game, 0)
    too_few.opponent_hand_size = 5  # 12 unseen cards left for an 11-card face-down talon
    with pytest.raises(ValueError, match="inconsistent information set: unseen cards do not fill the talon"):
        too_few.determinize(random.Random(0))
    too_many = InformationSet(game, 0)
    too_many.opponent_hand_size = 20
    with pytest.raises(ValueError, match="inconsistent information set: the opponent cannot hold enough"):
        too_many.determinize(random.Random(0))


def test_information_set_refuses_a_bummerl_score_that_reached_the_target():
    """R17: a Bummerl ends when a player reaches bummerl_target, so a score of a Bummerl in progress lies in
    0..target-1; the target itself is refused by name, the largest score below it is taken."""
    game = Game.deal(Rules(), seed=1)
    assert InformationSet(game, 0, match_score=(6, 6)).match_score == (6, 6)
    for bad in ((7, 0), (0, 7)):
        with pytest.raises(ValueError, match="match_score"):
            InformationSet(game, 0, match_score=bad)


def test_no_match_score_is_none_as_an_information_set_holds_it_and_both_information_sets_have_one():
    """``encode_infoset(i, i.match_score)`` failed with a TypeError for every deal on its own (None); the
    three-player information set had no ``match_score`` at all (R21: no Bummerl score)."""
    from sixtysix_env.observation import encode_infoset

    game = Game.deal(Rules(), seed=1, dealer=0)
    infoset = InformationSet(game, game.current_player)
    assert infoset.match_score is None
    assert np.array_equal(encode_infoset(infoset, infoset.match_score), encode_infoset(infoset))
    assert np.array_equal(encode_observation(game, 0, None), encode_observation(game, 0))
    three = Game.deal(Rules.preset("three"), seed=1)
    three_infoset = InformationSet(three, three.current_player)
    assert three_infoset.match_score is None
    assert np.array_equal(encode_infoset(three_infoset, None), encode_infoset(three_infoset))


@pytest.mark.parametrize("dtype", [np.int8, bool, np.float32, np.int32])
def test_an_action_mask_of_any_dtype_on_two_and_three_players(dtype):
    """A wider dtype failed on two players ("buffer size must be a multiple of element size") and worked on
    three; a name that is no dtype is refused by name."""
    for preset in ("standard", "three"):
        game = Game.deal(Rules.preset(preset), seed=3, dealer=0)
        mask = action_mask(game, dtype=dtype)
        assert mask.dtype == np.dtype(dtype) and mask.flags.writeable
        assert sorted(np.flatnonzero(mask)) == sorted(game.legal_actions())
    with pytest.raises(ValueError, match="action_mask: dtype 'nonsense' is not a numpy dtype"):
        action_mask(game, dtype="nonsense")
