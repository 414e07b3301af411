"""Property-based fuzzing of the engine's and the environments' boundaries (``Game.deal``, ``apply``, ``forfeit``,
``points``, ``InformationSet``, both environments' ``reset``/``step``).

Every bad value must raise ``ValueError`` with a message naming what is wrong — never a ``TypeError``,
``IndexError`` or a silently wrong game — and the compiled engine (when built, ``make compile``) must raise the
same type with the same message as the pure Python source for every input. When no build is present, the package's
engine *is* the source and the comparison still checks the error types.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sixtysix_env
from sixtysix_env import InformationSet, Rules, SixtySixGymEnv, raw_env
from sixtysix_env.env import is_action_id
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.cards import CARD_NAMES, deck_cards

from play_helpers import source_game_module

SOURCE = source_game_module()
ENGINES = {"package": sixtysix_env.game, "source": SOURCE}  # the package's may be the compiled one
PRESETS = ("standard", "paderborn", "scharf")
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Values a hostile or careless caller may pass where a player, card or action is expected.
junk = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 40), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4),
    st.sampled_from(CARD_NAMES), st.sampled_from([name.lower() for name in CARD_NAMES]),
    st.integers(-2, 30).map(np.int64), st.integers(0, 1).map(np.uint8), st.just(np.float64(1.0)),
    st.lists(st.integers(0, 1), max_size=2), st.just(b"AH"), st.just(1 + 0j),
)


def outcome(call):
    """("ok", summary) or ("raised", error type name, message)."""
    try:
        value = call()
    except Exception as error:  # noqa: BLE001 - the test compares whatever is raised
        return ("raised", type(error).__name__, str(error))
    return ("ok", _summary(value))


def _summary(value):
    if isinstance(value, (SOURCE.Game, sixtysix_env.Game)):
        return (value.deck, value.dealer, value.stage, value.to_move, tuple(value.history), value.result)
    return value


def same_on_both_engines(call_with_module):
    """Run ``call_with_module(game_module)`` on both engines; the outcomes must be equal and any error a
    ``ValueError``. Returns the outcome."""
    outcomes = {name: outcome(lambda module=module: call_with_module(module)) for name, module in ENGINES.items()}
    assert outcomes["package"] == outcomes["source"], outcomes
    result = outcomes["package"]
    if result[0] == "raised":
        assert result[1] == "ValueError", result
        assert result[2], "an error message must say what is wrong"
    return result


# ------------------------------------------------------------------------------------------------ Game.deal
def _valid_deck(rules: Rules, seed: int) -> list[int]:
    deck = deck_cards(rules.deck)
    random.Random(seed).shuffle(deck)
    return deck


deck_builders = st.one_of(
    # A valid deck with one position replaced by junk.
    st.tuples(st.just("one bad card"), st.integers(0, 23), junk),
    # Lists and other containers of junk or of the right cards.
    st.tuples(st.just("junk list"), st.lists(junk, max_size=26)),
    st.sampled_from([("container", kind) for kind in ("set", "tuple", "array", "generator", "dict", "string",
                                                       "names", "lower names", "short", "long", "duplicate")]),
)


def _build_deck(spec, rules: Rules, seed: int):
    deck = _valid_deck(rules, seed)
    if spec[0] == "one bad card":
        deck[spec[1] % len(deck)] = spec[2]
        return deck
    if spec[0] == "junk list":
        return list(spec[1])
    kind = spec[1]
    return {
        "set": lambda: set(deck), "tuple": lambda: tuple(deck), "array": lambda: np.array(deck),
        "generator": lambda: (card for card in deck), "dict": lambda: dict.fromkeys(deck),
        "string": lambda: " ".join(CARD_NAMES[card] for card in deck),
        "names": lambda: [CARD_NAMES[card] for card in deck],
        "lower names": lambda: [CARD_NAMES[card].lower() for card in deck],
        "short": lambda: deck[:-1], "long": lambda: deck + deck[:1], "duplicate": lambda: deck[:-1] + deck[:1],
    }[kind]()


@FUZZ
@given(preset=st.sampled_from(PRESETS), seed=st.integers(0, 10**6), spec=deck_builders, dealer=junk)
def test_deal_refuses_bad_decks_and_dealers_alike_on_both_engines(preset, seed, spec, dealer):
    rules = Rules.preset(preset)
    result = same_on_both_engines(lambda module: module.Game.deal(rules, deck=_build_deck(spec, rules, seed),
                                                                  dealer=dealer))
    if result[0] == "ok":
        _deck, dealt_dealer, *_ = result[1]
        assert dealt_dealer in (0, 1) and type(dealt_dealer) is int
        assert not isinstance(dealer, (bool, float)) and int(dealer) == dealt_dealer
        assert sorted(_deck) == deck_cards(rules.deck)


def _integer(value: object) -> bool:
    """A Python or numpy integer, not a bool: what the API takes as a seed or an action id."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@FUZZ
@given(seed=junk.filter(lambda value: value is not None),  # None draws fresh entropy: decks would differ
       dealer=junk, rules=st.one_of(junk, st.sampled_from(PRESETS)))
def test_deal_refuses_bad_seeds_dealers_and_rules_alike_on_both_engines(seed, dealer, rules):
    result = same_on_both_engines(lambda module: module.Game.deal(rules, seed=seed, dealer=dealer))
    # a seed is a Python or numpy integer (sixtysix_env.integers), never a bool
    assert result[0] == "raised" or (rules is None and _integer(seed)), result


def test_deal_examples_from_the_audit():
    """The audit's cases: ``dealer=1.0`` and decks of None / floats / sets / generators are refused alike."""
    deck = list(range(24))
    for keywords in (dict(deck=deck, dealer=1.0), dict(deck=[None] * 24), dict(deck=[float(c) for c in deck]),
                     dict(deck=set(deck)), dict(deck=iter(deck))):
        result = same_on_both_engines(lambda module: module.Game.deal(**keywords))
        assert result[0] == "raised", keywords
    assert "dealer must be 0 or 1, got 1.0" in outcome(lambda: sixtysix_env.Game.deal(dealer=1.0))[2]
    # numpy integers are integers: accepted, and stored as Python ints.
    game = sixtysix_env.Game.deal(deck=np.arange(24), dealer=np.int64(1))
    assert type(game.dealer) is int and game.deck == tuple(range(24))


# ------------------------------------------------------------------------------------------------ apply
@FUZZ
@given(preset=st.sampled_from(PRESETS), seed=st.integers(0, 10**6), manual=st.booleans(),
       bad_actions=st.lists(junk, min_size=1, max_size=8), play_seed=st.integers(0, 10**6))
def test_apply_refuses_junk_alike_and_numpy_ids_play_alike(preset, seed, manual, bad_actions, play_seed):
    """Random play in lockstep on both engines, with junk actions tried along the way: the same error (the state
    unchanged) or the same move (a numpy integer naming a legal action is that action)."""
    rules = Rules.preset(preset, auto_declare=not manual)
    games = {name: module.Game.deal(rules, seed=seed) for name, module in ENGINES.items()}
    rng = random.Random(play_seed)
    while not games["package"].is_over:
        if bad_actions and rng.random() < 0.3:
            bad = bad_actions.pop()
            before = _summary(games["package"])
            results = {name: outcome(lambda game=game: game.apply(bad)) for name, game in games.items()}
            assert results["package"] == results["source"], (bad, results)
            if results["package"][0] == "raised":
                assert results["package"][1] == "ValueError"
                assert _summary(games["package"]) == before, "a refused action must leave the state unchanged"
            continue
        legal = games["package"].legal_actions()
        assert legal == games["source"].legal_actions() and legal, "the mask is never empty before the end"
        action = rng.choice(legal)
        for game in games.values():
            game.apply(np.int64(action) if rng.random() < 0.2 else action)
    assert games["package"].result == games["source"].result
    assert same_on_both_engines(lambda module: games["package" if module is ENGINES["package"] else "source"]
                                .apply(0))[0] == "raised"


# ------------------------------------------------------------------------------------------------ forfeit, points
@FUZZ
@given(offender=junk, reason=st.one_of(junk, st.just("renonce")), player=junk, seed=st.integers(0, 1000))
def test_forfeit_and_points_refuse_anything_but_a_player(offender, reason, player, seed):
    games = {id(module): module.Game.deal(seed=seed) for module in ENGINES.values()}
    points = same_on_both_engines(lambda module: games[id(module)].points(player))
    forfeited = same_on_both_engines(lambda module: (games[id(module)].forfeit(offender, reason),
                                                     games[id(module)].result)[1])
    valid_player = lambda value: not isinstance(value, (bool, float, np.floating)) and isinstance(  # noqa: E731
        value, (int, np.integer)) and value in (0, 1)
    assert (points[0] == "ok") == valid_player(player)
    if points[0] == "ok":
        assert points[1] == 0  # nothing won yet
    valid_reason = isinstance(reason, str) and bool(reason.strip())
    assert (forfeited[0] == "ok") == (valid_player(offender) and valid_reason)
    if forfeited[0] == "ok":
        winner, game_points, recorded_reason, _ = forfeited[1]
        assert winner == 1 - int(offender) and game_points == 3 and recorded_reason == reason  # R16 Renonce


@FUZZ
@given(player=junk, viewer=junk, text=junk, seed=st.integers(0, 1000))
def test_hand_render_and_action_text_refuse_junk_alike_on_both_engines(player, viewer, text, seed):
    """``hand(player)``, ``render(viewer)``, ``parse_action(text)``, ``action_name`` and ``is_legal`` refuse a bad value with the same
    ``ValueError`` on both engines (the compiled one must not let its type annotations turn it into a TypeError),
    and a negative player never wraps around to the other hand."""
    games = {id(module): module.Game.deal(seed=seed) for module in ENGINES.values()}
    hand = same_on_both_engines(lambda module: games[id(module)].hand(player))
    valid_player = lambda value: not isinstance(value, (bool, float, np.floating)) and isinstance(  # noqa: E731
        value, (int, np.integer)) and value in (0, 1)
    assert (hand[0] == "ok") == valid_player(player)
    if hand[0] == "ok":
        assert len(hand[1]) == 6  # R4: six cards each after the deal
    shown = same_on_both_engines(lambda module: games[id(module)].render(viewer=viewer))
    assert (shown[0] == "ok") == (viewer is None or valid_player(viewer))
    same_on_both_engines(lambda module: module.Game.parse_action(text))
    named = same_on_both_engines(lambda module: games[id(module)].action_name(text))
    assert (named[0] == "ok") == is_action_id(text)  # an id of the 37 actions (numpy too); True is not 1
    legal = same_on_both_engines(lambda module: games[id(module)].is_legal(text))
    assert legal[0] == "ok"
    # as apply: a numpy integer naming a legal action is that action
    assert legal[1] is (_integer(text) and int(text) in next(iter(games.values())).legal_actions())


def test_forfeit_and_points_examples_from_the_audit():
    game = sixtysix_env.Game.deal(seed=1)
    for bad in (5, -1, 2, True, 1.0):
        with pytest.raises(ValueError, match="offender must be 0 or 1"):
            game.forfeit(bad)
        with pytest.raises(ValueError, match="player must be 0 or 1"):
            game.points(bad)
    assert not game.is_over


# ------------------------------------------------------------------------------------------------ InformationSet
@FUZZ
@given(player=junk, seed=st.integers(0, 1000))
def test_information_set_refuses_anything_but_a_player(player, seed):
    game = sixtysix_env.Game.deal(seed=seed)
    result = outcome(lambda: InformationSet(game, player).player)
    if result[0] == "raised":
        assert result[1] == "ValueError" and "player must be 0 or 1" in result[2]
    else:
        assert result[1] in (0, 1) and type(result[1]) is int and not isinstance(player, (bool, float))


def test_information_set_of_true_or_a_non_game_is_refused():
    game = sixtysix_env.Game.deal(seed=1)
    with pytest.raises(ValueError, match="player must be 0 or 1, got True"):
        InformationSet(game, True)
    with pytest.raises(ValueError, match="built from a Game"):
        InformationSet("not a game", 0)


# ------------------------------------------------------------------------------------------------ environments
reset_options = st.one_of(
    junk, st.dictionaries(st.sampled_from(["deck", "dealer", "match_score", "learner_seat", "seed", "Deck"]),
                          junk, max_size=3),
)


def _only_value_errors(call) -> tuple:
    result = outcome(call)
    assert result[0] == "ok" or result[1] == "ValueError", result
    return result


@FUZZ
@given(seed=junk, options=reset_options, actions=st.lists(junk, max_size=6), illegal=st.sampled_from(["raise", "renonce"]))
@pytest.mark.filterwarnings("ignore:unknown reset option")
def test_pettingzoo_reset_and_step_refuse_junk_with_value_errors(seed, options, actions, illegal):
    env = raw_env(illegal_action=illegal)
    if _only_value_errors(lambda: env.reset(seed=seed, options=options))[0] == "raised":
        env.reset(seed=0)
    for action in actions:
        if not env.agents:
            break
        _only_value_errors(lambda: env.step(action))
        observation = env.observe(env.agent_selection)
        assert np.isfinite(observation["observation"]).all()


@FUZZ
@given(seed=junk, options=reset_options, actions=st.lists(junk, max_size=6), illegal=st.sampled_from(["raise", "renonce"]))
def test_gymnasium_reset_and_step_refuse_junk_with_value_errors(seed, options, actions, illegal):
    env = SixtySixGymEnv(illegal_action=illegal)
    if _only_value_errors(lambda: env.reset(seed=seed, options=options))[0] == "raised":
        env.reset(seed=0)
    for action in actions:
        result = _only_value_errors(lambda: env.step(action))
        if result[0] == "ok":
            observation, reward, terminated, _truncated, _info = result[1]
            assert np.isfinite(observation).all() and np.isfinite(reward)
            if terminated:
                env.reset(seed=1)


def test_reset_names_unknown_options_and_refuses_bad_seeds_in_both_environments():
    """Gymnasium refuses an unknown reset option; the PettingZoo environment warns and ignores it (PettingZoo's own
    API test resets with ``options={"options": 1}``)."""
    with pytest.raises(ValueError, match="unknown reset option 'Deck'"):
        SixtySixGymEnv().reset(options={"Deck": list(range(24))})
    with pytest.warns(UserWarning, match="unknown reset option 'Deck'"):
        raw_env().reset(options={"Deck": list(range(24))})
    for env in (raw_env(), SixtySixGymEnv()):
        with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
            env.reset(seed=1.5)
        with pytest.raises(ValueError, match="options must be a dict"):
            env.reset(options=[("deck", None)])


def test_action_ids_beyond_the_space_are_refused_by_name():
    game = sixtysix_env.Game.deal(seed=3)
    for bad in (NUM_ACTIONS, -1, 2**70):
        with pytest.raises(ValueError, match="not an action id"):
            game.apply(bad)


# ------------------------------------------------------------------------------------------------ observations
def test_check_observation_names_the_piece_with_a_bad_value():
    from sixtysix_env.observation import OBSERVATION_SLICES, check_observation, encode_observation

    vector = encode_observation(sixtysix_env.Game.deal(seed=4), 0)
    check_observation(vector)
    name, piece = list(OBSERVATION_SLICES.items())[-1]
    for bad, message in ((np.nan, "NaN or infinite"), (np.inf, "NaN or infinite"), (2.0, r"outside \[0, 1\]")):
        broken = vector.copy()
        broken[piece.start] = bad
        with pytest.raises(ValueError, match=f"observation piece '{name}' .*{message}"):
            check_observation(broken)
    with pytest.raises(ValueError, match="float32 of shape"):
        check_observation(vector[:-1])


def test_json_files_are_read_strictly_and_refused_by_name(tmp_path):
    """``schema.read_json_file``: a missing file, bytes that are not UTF-8, malformed JSON and duplicate keys each
    raise ValueError naming what the file is and its path; a good file is read."""
    from sixtysix_env.schema import read_json_file

    good = tmp_path / "good.json"
    good.write_text('{"format": "x", "rows": [1, 2]}')
    assert read_json_file(good, "some results") == {"format": "x", "rows": [1, 2]}
    cases = {"missing.json": None, "latin1.json": b"{\"a\": \"\xe9\"}", "broken.json": b"{\"a\": ",
             "twice.json": b"{\"a\": 1, \"a\": 2}"}
    for name, content in cases.items():
        path = tmp_path / name
        if content is not None:
            path.write_bytes(content)
        with pytest.raises(ValueError, match="some results") as raised:
            read_json_file(path, "some results")
        assert name in str(raised.value)
