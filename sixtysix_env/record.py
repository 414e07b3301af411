"""JSON game records: one deal (rules, deck, dealer, actions, result) that replays exactly (R4 deck order).

A record is a plain JSON object::

    {"format": "sixtysix-record", "version": 1,
     "rules": {...every switch of Rules...},
     "deck": ["AH", "TS", ...],                 # R4 order, top card first
     "dealer": 0,
     "actions": ["play AH", "marry KH", ...],   # action names (docs/actions.md)
     "result": {"winner": 1, "game_points": 2, "reason": "declared", "points": [30, 71]}}

``result`` is ``null`` for a deal that is not finished. A deal ended by a rule violation outside the action
list (``Game.forfeit``, R8 Renonce) carries one more key, ``"forfeit": {"offender": 0, "reason": "renonce"}``; a
three-player deal ended unscored by an illegal action (``ThreePlayerGame.end_after_illegal_action``, the Gymnasium
environment's forfeit mode) carries ``"forfeit": {"offender": 2, "reason": "illegal action"}``.
Replaying checks everything: a malformed or inconsistent record raises ``ValueError`` naming what is wrong.

:func:`deck_from_hands` builds an R4-ordered deck from the two hands, the trump card and the talon, which is how
tests and hand-made scenarios spell out a deal.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from .actions import CLOSE, DECLARE, DRAW, EXCHANGE, PASS, marry_card
from .cards import CARD_NAMES, CARD_POINTS, SUIT_NAMES, cards_of, deck_cards, parse_cards
from .fileio import write_json_atomic
from .game import FOLLOW, PREDRAW, Game, parse_deck
from .rules import Rules
from .schema import (
    check_keys, loads_json, require_action_name, require_card_name, require_int, require_player, require_str,
    rules_from_file,
)
from .three import ACTION_NAMES_THREE, ILLEGAL_ACTION_END, ThreePlayerGame

RECORD_FORMAT = "sixtysix-record"
RECORD_VERSION = 1
REQUIRED_KEYS = ("format", "version", "rules", "deck", "dealer", "actions", "result")
OPTIONAL_KEYS = ("forfeit",)
RESULT_KEYS = ("winner", "game_points", "reason", "points")


# ---------------------------------------------------------------------------------------------- building decks
def deck_from_hands(
    forehand: Sequence[int | str],
    dealer: Sequence[int | str],
    trump_card: int | str,
    talon: Sequence[int | str] = (),
    deck_size: int = 24,
) -> list[str]:
    """An R4-ordered deck (top card first) from forehand's and the dealer's six cards, the trump card (card 13)
    and the talon top first. A partial ``talon`` is completed with the remaining cards in ascending id order, so a
    scenario only spells out the draws it cares about. Cards may be ids or names; the result is a list of names.
    """
    forehand_cards = parse_cards(forehand, "forehand hand")
    dealer_cards = parse_cards(dealer, "dealer hand")
    if len(forehand_cards) != 6 or len(dealer_cards) != 6:
        raise ValueError(
            f"each hand needs 6 cards (R4), got forehand {len(forehand_cards)} and dealer {len(dealer_cards)}"
        )
    trump = parse_cards([trump_card], "trump card")[0]
    talon_cards = parse_cards(talon, "talon")
    used = forehand_cards + dealer_cards + [trump] + talon_cards
    repeated = sorted({card for card in used if used.count(card) > 1})
    if repeated:
        raise ValueError(f"malformed deck: card {CARD_NAMES[repeated[0]]} appears twice")
    in_play = deck_cards(deck_size)  # raises for a size other than 24 or 20
    foreign = [card for card in used if card not in in_play]
    if foreign:
        raise ValueError(f"malformed deck: {CARD_NAMES[foreign[0]]} not in the {deck_size}-card deck (R2)")
    rest = [card for card in in_play if card not in used]
    deck = forehand_cards[:3] + dealer_cards[:3] + forehand_cards[3:] + dealer_cards[3:] + [trump] + talon_cards + rest
    parse_deck(deck, Rules(deck=deck_size))  # duplicates, wrong cards, wrong size: a clear error here
    return [CARD_NAMES[card] for card in deck]


# ---------------------------------------------------------------------------------------------- game -> record
def _result_dict(game: Game) -> dict[str, Any] | None:
    if game.result is None:
        return None
    result = game.result
    return {
        "winner": result.winner,
        "game_points": result.game_points,
        "reason": result.reason,
        "points": list(result.points),
    }


def game_to_record(game: Game) -> dict[str, Any]:
    """The JSON-ready record of ``game`` (finished or not). A game ended by ``Game.forfeit`` (or, with three
    players, by ``ThreePlayerGame.end_after_illegal_action``) records the offender."""
    if not isinstance(game, (Game, ThreePlayerGame)):
        raise ValueError(f"game_to_record needs a Game, got {type(game).__name__}")
    if game.deck is None:
        raise ValueError("cannot record a game without its deck order (a determinized game hides it)")
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "rules": game.rules.to_dict(),
        "deck": [CARD_NAMES[card] for card in game.deck],
        "dealer": game.dealer,
        "actions": [game.action_name(action) for action in game.history],
        "result": _result_dict(game),
    }
    if game.is_over:
        replay = Game.deal(game.rules, deck=list(game.deck), dealer=game.dealer)
        for action in game.history:
            replay.apply(action)
        if not replay.is_over and isinstance(game, ThreePlayerGame):  # ended unscored by an illegal action
            record["forfeit"] = {"offender": replay.current_player, "reason": ILLEGAL_ACTION_END}
        elif not replay.is_over:  # the actions did not end the deal: it was forfeited (R8 Renonce)
            record["forfeit"] = {"offender": 1 - game.result.winner, "reason": game.result.reason}
    return record


# ---------------------------------------------------------------------------------------------- record -> game
def record_to_game(record: Mapping[str, Any]) -> Game:
    """Replay a record into a :class:`Game`; raises ``ValueError`` naming the first thing that is wrong."""
    check_keys(record, "game record", REQUIRED_KEYS, OPTIONAL_KEYS)
    if record["format"] != RECORD_FORMAT:
        raise ValueError(f"game record format must be {RECORD_FORMAT!r}, got {record['format']!r}")
    version = record["version"]
    if type(version) is not int or version != RECORD_VERSION:
        raise ValueError(f"unsupported game record version {version!r} (this reader knows version {RECORD_VERSION})")

    rules = rules_from_file(record["rules"], "game record rules")
    deck = _deck_of(record["deck"], rules)
    dealer = require_player(record["dealer"], "game record dealer", rules.players)
    game = Game.deal(rules, deck=deck, dealer=dealer)

    actions = record["actions"]
    if not isinstance(actions, list):
        raise ValueError(f"game record actions must be a list of action names, got {type(actions).__name__}")
    for number, text in enumerate(actions, start=1):
        if rules.players == 2:
            action = require_action_name(text, f"game record action {number}")
        elif isinstance(text, str) and text in ACTION_NAMES_THREE:  # exactly as written, like require_action_name
            action = ACTION_NAMES_THREE.index(text)
        else:
            raise ValueError(f"game record action {number} must be an action name of the three-player game such as "
                             f"'play AH' or 'name trump H', got {text!r}")
        if game.is_over:
            raise ValueError(f"game record action {number} ({text!r}): the deal is already over")
        try:
            game.apply(action)
        except ValueError as error:
            raise ValueError(f"game record action {number} ({text!r}) is illegal: {error}") from None

    if "forfeit" in record:
        _apply_forfeit(game, record["forfeit"])
    _check_result(record["result"], game)
    return game


def _deck_of(values: object, rules: Rules) -> list[int]:
    if not isinstance(values, list):
        raise ValueError(f"game record deck must be a list of card names, got {type(values).__name__}")
    cards = [require_card_name(name, f"game record deck position {position}")
             for position, name in enumerate(values, start=1)]
    try:
        return parse_deck(cards, rules)
    except ValueError as error:
        raise ValueError(f"game record deck: {error}") from None


def _apply_forfeit(game: Game, forfeit: object) -> None:
    check_keys(forfeit, "game record forfeit", ("offender", "reason"))
    players = 3 if isinstance(game, ThreePlayerGame) else 2
    offender = require_player(forfeit["offender"], "game record forfeit offender", players)  # type: ignore[index]
    reason = require_str(forfeit["reason"], "game record forfeit reason")  # type: ignore[index]
    if game.is_over:
        raise ValueError("game record forfeit: the actions already ended the deal")
    if isinstance(game, ThreePlayerGame):  # R21 has no Renonce: only an illegal action ends a deal early, unscored
        if reason != ILLEGAL_ACTION_END:
            raise ValueError(f"game record forfeit reason: a three-player deal (R21) ends early only by an "
                             f"{ILLEGAL_ACTION_END!r}, got {reason!r}")
        try:
            game.end_after_illegal_action(offender)
        except ValueError as error:
            raise ValueError(f"game record forfeit: {error}") from None
        return
    game.forfeit(offender, reason)


def _check_result(recorded: object, game: Game) -> None:
    replayed = _result_dict(game)
    players = 3 if isinstance(game, ThreePlayerGame) else 2  # R21 deals have three seats
    if recorded is not None:
        check_keys(recorded, "game record result", RESULT_KEYS)
        recorded = {key: recorded[key] for key in RESULT_KEYS}  # type: ignore[index]
        if recorded["winner"] is not None:
            require_player(recorded["winner"], "game record result winner", players)
        require_int(recorded["game_points"], "game record result game_points", 0, 3)
        require_str(recorded["reason"], "game record result reason")
        points = recorded["points"]
        if not isinstance(points, (list, tuple)) or len(points) != players:
            raise ValueError(f"game record result points must be a list of {players} integers, got {points!r}")
        recorded["points"] = [require_int(value, "game record result points", 0) for value in points]
    if recorded != replayed:
        raise ValueError(f"game record result does not match the replay: recorded {recorded}, the replay gives {replayed}")


# ---------------------------------------------------------------------------------------------- files
def save_record(path: str | os.PathLike, game: Game | ThreePlayerGame | Mapping[str, Any]) -> None:
    """Write a game (or a record, which is checked first) as JSON, atomically."""
    is_game = isinstance(game, (Game, ThreePlayerGame))
    record = game_to_record(game) if is_game else dict(game)  # type: ignore[arg-type]
    if not is_game:
        record_to_game(record)
    write_json_atomic(path, record)


def load_record(path: str | os.PathLike) -> dict[str, Any]:
    """Read and check a JSON record (it must replay). A missing file raises ``FileNotFoundError``; anything
    else wrong raises ``ValueError`` naming the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise
    except OSError as error:
        raise ValueError(f"{os.fspath(path)}: cannot read the game record ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{os.fspath(path)}: not a game record (not UTF-8 text)") from None
    try:
        record = loads_json(text, "game record")
        record_to_game(record)
    except ValueError as error:
        raise ValueError(f"{os.fspath(path)}: {error}") from None
    return record


# ---------------------------------------------------------------------------------------------- rendering
def _names(cards: Sequence[int] | int) -> str:
    if isinstance(cards, int):
        cards = cards_of(cards)
    return " ".join(CARD_NAMES[card] for card in cards) or "-"


def render_record(record: Mapping[str, Any]) -> str:
    """The deal as text, trick by trick: hands at the start, trump, each trick (lead, follow, winner, points),
    marriages, exchanges, closing, draws and the result."""
    final = record_to_game(record)  # validates the whole record first
    rules = final.rules
    if isinstance(final, ThreePlayerGame):
        return _render_three(final)
    game = Game.deal(rules, deck=list(final.deck), dealer=final.dealer)
    forehand, dealer = game.forehand, game.dealer
    preset = rules.preset_name or "custom"
    lines = [
        f"Sixty-six deal, rules {preset} ({rules.deck} cards); dealer player {dealer}, forehand player {forehand}",
        f"trump card {CARD_NAMES[game.trump_card]} ({SUIT_NAMES[game.trump_suit]})",
        f"player {forehand} (forehand): {_names(game.hands[forehand])}",
        f"player {dealer} (dealer):   {_names(game.hands[dealer])}",
        f"talon, top first: {_names(list(game.stock))}, then the trump card {CARD_NAMES[game.trump_card]}",
    ]
    trick_number = 0
    for action in final.history:
        player = game.to_move
        stage = game.stage
        before = [game.hands[0], game.hands[1]]
        bottom_before = game.bottom_card
        game.apply(action)
        if stage == FOLLOW:
            leader, lead, follow, winner, _ = game.tricks[-1]
            trick_number += 1
            gained = CARD_POINTS[lead] + CARD_POINTS[follow]
            lines.append(
                f"trick {trick_number}: player {leader} leads {CARD_NAMES[lead]}, player {player} plays "
                f"{CARD_NAMES[follow]}: player {winner} wins {gained} "
                f"(points {game.points(0)}:{game.points(1)})"
            )
            _draw_line(lines, game, before, bottom_before)
        elif stage == PREDRAW and action == DRAW:
            lines.append(f"  player {player} chooses to draw")
            _draw_line(lines, game, before, bottom_before)
        elif action < 24:
            pass  # a plain lead: printed with its trick
        elif action < EXCHANGE:
            card = marry_card(action)
            suit = card // 6
            value = 40 if suit == game.trump_suit else 20
            text = f"  player {player} announces the marriage in {SUIT_NAMES[suit]} ({value})"
            if game.is_over:
                lines.append(text + " and reaches 66")
            else:
                lines.append(text + f" and leads {CARD_NAMES[card]}")
        elif action == EXCHANGE:
            exchange = game.exchanges[-1]
            lines.append(
                f"  player {player} exchanges {CARD_NAMES[exchange.laid_card]} for the trump card "
                f"{CARD_NAMES[exchange.taken_card]}"
            )
        elif action == CLOSE:
            when = " before drawing (both keep five cards)" if stage == PREDRAW else ""
            lines.append(f"  player {player} closes the talon{when}; {game.face_down_count} face-down cards stay")
        elif action == DECLARE:
            lines.append(f"  player {player} declares with {game.points(player)} points")
        elif action == PASS:
            lines.append(f"  player {player} does not exchange")
    if "forfeit" in record:
        lines.append(f"player {record['forfeit']['offender']} forfeits the deal ({record['forfeit']['reason']})")
        game = final
    result = game.result
    if result is None:
        table = f"{CARD_NAMES[game.lead_card]} led by player {game.leader}, " if game.lead_card >= 0 else ""
        lines.append(f"unfinished: {table}player {game.to_move} to move; points {game.points(0)}:{game.points(1)}")
    elif result.winner is None:
        lines.append(f"result: not scored (R15); points {result.points[0]}:{result.points[1]}")
    else:
        plural = "s" if result.game_points != 1 else ""
        lines.append(
            f"result: player {result.winner} wins {result.game_points} game point{plural} ({result.reason}); "
            f"points {result.points[0]}:{result.points[1]}"
        )
    return "\n".join(lines)


def _render_three(final: ThreePlayerGame) -> str:
    """A three-player deal (R21) as text: the hands, the trump naming, marriages and each trick."""
    game = ThreePlayerGame.deal(final.rules, deck=list(final.deck), dealer=final.dealer)  # type: ignore[arg-type]
    roles = {game.forehand: "forehand", game.middlehand: "middlehand", game.dealer: "dealer"}
    lines = [f"Sixty-six for three (R21), rules {final.rules.preset_name or 'custom'}; dealer player {game.dealer}"]
    lines += [f"player {seat} ({roles[seat]}): {_names(game.hands[seat])}" for seat in range(3)]
    for action in final.history:
        player, tricks_before = game.to_move, len(game.tricks)
        game.apply(action)
        if len(game.tricks) > tricks_before:
            leader, cards, winner = game.tricks[-1]
            points = ":".join(str(game.points(seat)) for seat in range(3))
            lines.append(f"trick {len(game.tricks)}: led by player {leader}: {_names(list(cards))}; "
                         f"player {winner} wins {sum(CARD_POINTS[c] for c in cards)} (points {points})")
        elif action >= 24:  # trump naming, marriages, pass (the cards are in the trick lines)
            lines.append(f"  player {player}: {game.action_name(action)}")
    result = final.result
    if result is not None:
        if result.winner is not None:
            outcome = f"player {result.winner} wins 1 game point"
        elif result.reason.startswith(ILLEGAL_ACTION_END):  # ended early by an illegal action, not a tie
            outcome = f"not scored: player {game.to_move} ends the deal by an illegal action"
        else:
            outcome = "not scored (tie at the top)"
        lines.append(f"result: {outcome} (points {':'.join(map(str, result.points))})")
    return "\n".join(lines)


def _draw_line(lines: list[str], game: Game, before: list[int], bottom_before: int | None) -> None:
    """Name the cards each player drew after a trick (R7), and who took the bottom card: the cards in a hand now
    that were not in it before the last action."""
    drawn = [game.hands[p] & ~before[p] for p in (0, 1)]
    if not drawn[0] and not drawn[1]:
        return
    winner = game.leader
    parts = [f"player {p} draws {_names(drawn[p])}" for p in (winner, 1 - winner) if drawn[p]]
    text = "  " + ", ".join(parts)
    if game.bottom_taker is not None and bottom_before is not None and game.bottom_card is None:
        text += f" (the bottom card {CARD_NAMES[bottom_before]}: the talon is exhausted)"
    lines.append(text)


__all__ = [
    "RECORD_FORMAT", "RECORD_VERSION", "deck_from_hands", "game_to_record", "load_record", "record_to_game",
    "render_record", "save_record",
]
