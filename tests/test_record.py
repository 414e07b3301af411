"""JSON game records (sixtysix_env.record): exact replay, clear errors, atomic files, rendering, the CLI."""

from __future__ import annotations

import copy
import json
import os
import random

import pytest

import sixtysix_cli
from sixtysix_env import Game, Rules, parse_action
from sixtysix_env.record import (
    deck_from_hands, game_to_record, load_record, record_to_game, render_record, save_record,
)

FH, DL = 1, 0


def random_game(preset: str, seed: int, moves: int | None = None) -> Game:
    game = Game.deal(Rules.preset(preset), seed=seed, dealer=seed % 2)
    rng = random.Random(seed)
    while not game.is_over and (moves is None or len(game.history) < moves):
        game.apply(rng.choice(game.legal_actions()))
    return game


def same_game(a: Game, b: Game) -> bool:
    return (a.history == b.history and a.hands == b.hands and a.tricks == b.tricks and a.result == b.result
            and a.marriages == b.marriages and a.exchanges == b.exchanges and a.stage == b.stage
            and a.closed_by == b.closed_by and a.trick_points == b.trick_points)


def searched_closing_deal() -> Game:
    """A deal with a closing, two marriages and a closer's declaration (tests/test_rules.py R16)."""
    deck = deck_from_hands("JS KC QC 9D JH AS".split(), "KH KS AH KD JC QS".split(), "AC",
                           "9H 9S TC TS JD 9C TH QD AD TD QH".split())
    game = Game.deal(Rules(), deck=deck, dealer=DL)
    for text in ("play 9D", "play KD", "play AH", "play JS", "close", "marry QS", "play AS", "marry QC",
                 "play TC", "play KH", "play JH", "play 9H", "play KC", "play 9S", "play KS", "play JC", "play TS"):
        game.apply(parse_action(text))
    return game


# ---------------------------------------------------------------------------------------------- replay
@pytest.mark.parametrize("preset", ["standard", "paderborn", "scharf"])
def test_record_round_trip_through_json(preset):
    for seed in range(15):
        game = random_game(preset, seed)
        record = json.loads(json.dumps(game_to_record(game)))
        assert record["format"] == "sixtysix-record" and record["version"] == 1
        assert record["rules"] == Rules.preset(preset).to_dict()
        assert len(record["deck"]) == Rules.preset(preset).deck and record["dealer"] == seed % 2
        assert record["result"]["points"] == list(game.result.points)
        assert same_game(record_to_game(record), game)


def test_record_of_an_unfinished_game():
    game = random_game("standard", 4, moves=7)
    record = game_to_record(game)
    assert record["result"] is None and len(record["actions"]) == 7
    replay = record_to_game(record)
    assert not replay.is_over and same_game(replay, game)
    assert "unfinished" in render_record(record)


def test_record_of_a_forfeited_game():
    """R8 Renonce ends a deal outside the action list: the record names the offender and replays it."""
    game = random_game("standard", 9, moves=5)
    game.forfeit(game.current_player)
    record = game_to_record(game)
    assert record["forfeit"] == {"offender": 1 - game.result.winner, "reason": "renonce"}
    assert same_game(record_to_game(record), game)
    assert "forfeits the deal (renonce)" in render_record(record)


def test_record_needs_the_deck():
    from sixtysix_env import InformationSet

    world = InformationSet(random_game("standard", 1, moves=3), 0).determinize(random.Random(0))
    with pytest.raises(ValueError, match="without its deck"):
        game_to_record(world)
    with pytest.raises(ValueError, match="needs a Game"):
        game_to_record({"deck": []})


# ---------------------------------------------------------------------------------------------- bad records
def good_record() -> dict:
    return game_to_record(searched_closing_deal())


def broken(change) -> dict:
    record = copy.deepcopy(good_record())
    change(record)
    return record


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.pop("deck"), "missing key 'deck'"),
        (lambda r: r.pop("result"), "missing key 'result'"),
        (lambda r: r.update(comment="x"), "unknown key 'comment'"),
        (lambda r: r.update(format="chess-pgn"), "format must be 'sixtysix-record'"),
        (lambda r: r.update(version=2), "unsupported game record version 2"),
        (lambda r: r.update(version=True), "unsupported game record version True"),
        (lambda r: r["rules"].pop("close_draw_option"), "missing switch 'close_draw_option'"),
        (lambda r: r["rules"].update(trumps=1), "unknown rules switch 'trumps'"),
        (lambda r: r["rules"].update(deck="24"), "Rules.deck must be an integer"),
        (lambda r: r.update(rules="standard"), "rules must be an object"),
        (lambda r: r["deck"].__setitem__(4, "XH"), "deck position 5 must be a card name written as rank then suit in capitals.*'XH'"),
        (lambda r: r["deck"].__setitem__(4, 17), "deck position 5 must be a card name"),
        (lambda r: r["deck"].__setitem__(4, r["deck"][4].lower()), "deck position 5 must be a card name .* in capitals"),
        (lambda r: r["deck"].__setitem__(4, r["deck"][0]), "appears twice"),
        (lambda r: r["deck"].pop(), "23 cards given"),
        (lambda r: r.update(deck="AH TH"), "deck must be a list"),
        (lambda r: r.update(dealer=2), "dealer must be 0 or 1"),
        (lambda r: r.update(actions="play 9D"), "actions must be a list"),
        (lambda r: r["actions"].__setitem__(2, "jump"), "action 3 must be an action name .*'jump'"),
        (lambda r: r["actions"].__setitem__(2, "play 9C"), r"action 3 \('play 9C'\) is illegal"),
        (lambda r: r["actions"].append("play 9S"), r"action 18 \('play 9S'\): the deal is already over"),
        (lambda r: r["result"].update(game_points=3), "result does not match the replay"),
        (lambda r: r["result"].pop("reason"), "result is missing key 'reason'"),
        (lambda r: r.update(result=None), "result does not match the replay"),
        (lambda r: r.update(forfeit={"offender": 0, "reason": "renonce"}), "actions already ended the deal"),
        (lambda r: r.update(forfeit={"offender": 5}), "forfeit is missing key 'reason'"),
        (lambda r: r.update(forfeit={"offender": 5, "reason": "renonce"}), "forfeit offender must be 0 or 1, got 5"),
        (lambda r: r.update(forfeit={"offender": True, "reason": "renonce"}), "offender must be 0 or 1, got True"),
        # The audit's cases: numbers of the wrong type are refused, not compared equal (1.0 == 1, True == 1).
        (lambda r: r.update(dealer=float(r["dealer"])), "dealer must be 0 or 1, got [01].0"),
        (lambda r: r.update(version=1.0), "unsupported game record version 1.0"),
        (lambda r: r["result"].update(winner=bool(r["result"]["winner"])), "winner must be 0 or 1, got (True|False)"),
        (lambda r: r["result"].update(game_points=float(r["result"]["game_points"])), "game_points must be an integer"),
        (lambda r: r["result"]["points"].__setitem__(0, float(r["result"]["points"][0])), "points must be an integer"),
        (lambda r: r["result"].update(extra=1), "result has unknown key 'extra'"),
        (lambda r: r["actions"].__setitem__(0, r["actions"][0].upper()), "action 1 must be an action name"),
    ],
)
def test_malformed_records_are_rejected(change, message):
    with pytest.raises(ValueError, match=message):
        record_to_game(broken(change))


def test_a_three_player_record_with_a_renonce_forfeit_is_refused_by_name(tmp_path, capsys):
    """R21: a three-player deal has no Renonce (R8's forfeit ends two-player deals; an illegal action in the
    Gymnasium environment ends one unscored, tests/test_three_api.py), so a record carrying a 'renonce' forfeit is
    refused with a message, by the reader and by `sixtysix replay`, never an AttributeError."""
    game = Game.deal(Rules.preset("three"), seed=3)
    rng = random.Random(3)
    for _ in range(5):
        game.apply(rng.choice(game.legal_actions()))
    record = {**game_to_record(game), "forfeit": {"offender": 0, "reason": "renonce"}}
    with pytest.raises(ValueError, match="a three-player deal \\(R21\\) ends early only by an 'illegal action'"):
        record_to_game(record)
    path = tmp_path / "three.json"
    path.write_text(json.dumps(record))
    assert sixtysix_cli.main(["replay", str(path)]) == 2
    assert "ends early only by an 'illegal action'" in capsys.readouterr().err


def test_record_must_be_an_object():
    with pytest.raises(ValueError, match="game record must be an object"):
        record_to_game(["format"])


# ---------------------------------------------------------------------------------------------- files
def test_save_and_load_record(tmp_path):
    game = searched_closing_deal()
    path = tmp_path / "records" / "deal.json"
    save_record(path, game)
    assert sorted(os.listdir(path.parent)) == ["deal.json"]  # atomic write left no temp file
    record = load_record(path)
    assert record == game_to_record(game)
    save_record(path, record)  # a record dict is checked, then written
    assert load_record(path) == record
    with pytest.raises(ValueError, match="unknown key"):
        save_record(tmp_path / "bad.json", {**record, "extra": 1})
    assert not (tmp_path / "bad.json").exists()


def test_load_record_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_record(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: game record: not valid JSON"):
        load_record(tmp_path / "bad.json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="deep.json: game record: JSON nested deeper than 64 levels"):
        load_record(tmp_path / "deep.json")
    (tmp_path / "twice.json").write_text('{"dealer": 0, "dealer": 1}')
    with pytest.raises(ValueError, match="twice.json: game record: duplicate key 'dealer'"):
        load_record(tmp_path / "twice.json")
    (tmp_path / "nan.json").write_text('{"dealer": NaN}')
    with pytest.raises(ValueError, match="nan.json: game record: NaN is not a number this file may hold"):
        load_record(tmp_path / "nan.json")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="binary.json: not a game record"):
        load_record(tmp_path / "binary.json")
    with pytest.raises(ValueError, match="cannot read the game record"):
        load_record(tmp_path)
    (tmp_path / "wrong.json").write_text(json.dumps({**good_record(), "version": 9}))
    with pytest.raises(ValueError, match="wrong.json: unsupported game record version 9"):
        load_record(tmp_path / "wrong.json")


# ---------------------------------------------------------------------------------------------- rendering
def test_render_record_trick_by_trick():
    text = render_record(good_record())
    lines = text.splitlines()
    assert lines[0].startswith("Sixty-six deal, rules standard (24 cards); dealer player 0, forehand player 1")
    assert "trump card AC (Clubs)" in text
    assert "player 1 (forehand): QC KC 9D JH JS AS" in text
    assert "player 0 (dealer):   JC KD KH AH QS KS" in text
    assert "trick 1: player 1 leads 9D, player 0 plays KD: player 0 wins 4 (points 4:0)" in text
    assert "player 0 draws 9H, player 1 draws 9S" in text
    assert "player 0 closes the talon; 7 face-down cards stay" in text
    assert "player 0 announces the marriage in Spades (20) and leads QS" in text
    assert "player 1 announces the marriage in Clubs (40) and leads QC" in text
    assert sum(line.startswith("trick ") for line in lines) == 8
    assert lines[-1] == "result: player 0 wins 1 game point (declared); points 72:58"


def test_render_record_exchange_exhausted_talon_and_predraw():
    deck = deck_from_hands("KH QH AC 9H TD KD".split(), "AH TH TS 9S QS JC".split(), "TC",
                           "KS JH AD AS JD KC 9C QD 9D JS QC".split())
    game = Game.deal(Rules(), deck=deck, dealer=DL)
    for text in ("play QH", "play AH", "play QS", "play TD", "play TS", "play KH", "play JD", "play KC",
                 "exchange", "play JH", "play 9S", "play 9D", "play QD"):
        game.apply(parse_action(text))
    text = render_record(game_to_record(game))
    assert "player 1 exchanges 9C for the trump card TC" in text
    assert "player 0 draws QC, player 1 draws 9C (the bottom card 9C: the talon is exhausted)" in text

    paderborn = Game.deal(Rules.preset("paderborn"), deck=deck, dealer=DL)
    for text in ("play QH", "play AH", "close", "pass"):
        paderborn.apply(parse_action(text))
    text = render_record(game_to_record(paderborn))
    assert "player 0 closes the talon before drawing (both keep five cards)" in text
    assert "player 1 does not exchange" in text and "rules paderborn" in text


def test_render_record_with_a_marriage_reaching_66_and_a_declaration():
    deck = deck_from_hands("AC AS KH QH 9D JD".split(), "TC TS 9C JC QC KC".split(), "JH")
    game = Game.deal(Rules(auto_declare=False), deck=deck, dealer=DL)
    for text in ("play AC", "play TC", "play AS", "play TS", "marry KH"):
        game.apply(parse_action(text))
    text = render_record(game_to_record(game))
    assert "player 1 announces the marriage in Hearts (40) and reaches 66" in text
    assert "rules custom" in text and text.endswith("result: player 1 wins 3 game points (declared); points 0:82")


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_replay_prints_the_deal(tmp_path, capsys):
    path = tmp_path / "deal.json"
    save_record(path, searched_closing_deal())
    assert sixtysix_cli.main(["replay", str(path)]) == 0
    assert "result: player 0 wins 1 game point (declared)" in capsys.readouterr().out


@pytest.mark.parametrize("content", ["{not json", json.dumps({"format": "sixtysix-record"}), None])
def test_cli_replay_bad_file_exit_code_2(tmp_path, capsys, content):
    path = tmp_path / "deal.json"
    if content is not None:
        path.write_text(content)
    assert sixtysix_cli.main(["replay", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("sixtysix replay: error:")
    assert "Traceback" not in captured.err


# ---------------------------------------------------------------------------------------------- deck helper
def test_deck_from_hands_r4_order_and_completion():
    """R4 order: forehand 1–3, dealer 4–6, forehand 7–9, dealer 10–12, trump 13, talon; a partial talon is
    completed in ascending card order."""
    deck = deck_from_hands("AC TC KC QC JC 9C", "AD TD KD QD JD 9D", "JH", talon=["AS"])
    assert deck[:13] == ["AC", "TC", "KC", "AD", "TD", "KD", "QC", "JC", "9C", "QD", "JD", "9D", "JH"]
    assert deck[13:] == ["AS", "9H", "QH", "KH", "TH", "AH", "9S", "JS", "QS", "KS", "TS"]
    short = deck_from_hands("AC TC KC QC JC AD", "TD KD QD JD AS TS", "JH", deck_size=20)
    assert len(short) == 20 and not any(card.startswith("9") for card in short)
    with pytest.raises(ValueError, match="not in the 20-card deck"):
        deck_from_hands("AC TC KC QC JC 9C", "AD TD KD QD JD TS", "JH", deck_size=20)
    with pytest.raises(ValueError, match="talon: malformed card"):
        deck_from_hands("AC TC KC QC JC 9C", "AD TD KD QD JD 9D", "JH", talon=["1H"])


def test_deck_from_hands_names_a_card_given_twice():
    """deck_from_hands: a card given twice (in a hand, as trump card or in the talon) is a malformed deck whose
    error names the card, not a deck of the wrong size."""
    with pytest.raises(ValueError, match="card AH appears twice"):
        deck_from_hands("AH JC QC KC TC AC".split(), "9D JD QD KD TD AD".split(), "AH")
    with pytest.raises(ValueError, match="card 9S appears twice"):
        deck_from_hands("9C JC QC KC TC AC".split(), "9D JD QD KD TD AD".split(), "AH", ["9S", "9S"])
