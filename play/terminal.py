"""``sixtysix play``: a deal or a Bummerl (R17) against an agent in the terminal, or against two with
``--rules three`` (R21).

The table is drawn with rich (suit symbols, red and black suits); moves are typed by number or by name
(``play QH``, ``QH``, ``marry H``, ``close``, ``exchange``, ``declare``), ``hint`` asks the search for the value of
each legal move (from your information only), and every finished deal is saved as a JSON record that
``sixtysix replay FILE`` prints. After a deal, "could I have won?" shows the exact value with all cards open and
what the search thinks each of your moves cost.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sixtysix_env import PRESET_NAMES, Rules
from sixtysix_env.fileio import writable_folder
from sixtysix_env.record import save_record
from sixtysix_env.rules import THREE_PLAYER_PRESET_NAMES

from .session import SUIT_SYMBOLS, PlaySession, SessionSettings
from .three_session import ThreePlaySession, ThreeSessionSettings

SUIT_STYLES = {"C": "bold", "D": "bold red", "H": "bold red", "S": "bold"}
HELP = ("Type a move's number, or its name: 'play QH' (or just 'QH'; a ten is T or 10: 'TH', '10H'), 'marry H', "
        "'exchange', 'close', 'declare'. "
        "'hint' shows the search's value of each move (from what you know), 'help' this text, 'quit' ends.")
THREE_HELP = ("Type a move's number, or its name: 'play QH' (or just 'QH'; a ten is T or 10: 'TH', '10H'), "
              "'name trump H', 'announce H' (show a marriage before the first lead), 'pass', 'marry H'. "
              "'help' shows this text, 'quit' ends.")


@dataclass
class PlayArgs:
    """Options of ``sixtysix play``."""

    opponent: str = "heuristic"
    """Agent spec of the opponent (agents/registry.py): ``heuristic``, ``pimc``, ``random``, ``pimc:seconds=0.5``...;
    with three players, of the seat to your left (who plays after you)."""
    rules: str = "standard"
    """Rules preset (R19 paderborn, R20 scharf, R21 three: you and two agents)."""
    second_opponent: str | None = None
    """With three players: the agent spec of the seat to your right (default: the same as ``opponent``)."""
    match: bool = False
    """Play a whole Bummerl (R17) instead of one deal."""
    seed: int | None = None
    """Seed of the decks and the agent (reproducible session); none: a fresh random one."""
    records: str = "sixtysix-records"
    """Folder the finished deals' JSON records are written to."""
    hint_seconds: float = 1.0
    """Search time of a hint."""
    analysis_seconds: float = 20.0
    """Time budget of "could I have won?" after each deal (0: skip it)."""


def card_text(name: str) -> Text:
    """``QH`` -> ``Q♥`` in red (T is shown as 10)."""
    rank = "10" if name[0] == "T" else name[0]
    return Text(rank + SUIT_SYMBOLS[name[1]], style=SUIT_STYLES[name[1]])


def cards_text(names: list[str]) -> Text:
    return Text(" ").join(card_text(name) for name in names) if names else Text("-", style="dim")


CARD_PATTERN = re.compile(r"\b[9JQKTA][CDHS]\b")


def label_text(label: str) -> Text:
    """Text with every card name in it (``KH``) drawn as a card."""
    text = Text()
    position = 0
    for found in CARD_PATTERN.finditer(label):
        text.append(label[position:found.start()])
        text.append(card_text(found.group()))
        position = found.end()
    text.append(label[position:])
    return text


def moves_text(legal: list[dict]) -> Text:
    """The numbered moves line: what the player types a number of (both games)."""
    moves = Text("  moves: ")
    for number, move in enumerate(legal, start=1):
        moves.append(f"[{number}] ", style="cyan")
        moves.append(label_text(move["label"]))
        moves.append("  ")
    return moves


def parse_args(argv: list[str]) -> PlayArgs:
    parser = argparse.ArgumentParser(prog="sixtysix play", description="Play Sixty-six against an agent.")
    defaults = PlayArgs()
    parser.add_argument("--opponent", default=defaults.opponent, help="agent spec (default heuristic)")
    parser.add_argument("--rules", default=defaults.rules, choices=PRESET_NAMES + THREE_PLAYER_PRESET_NAMES,
                        help="rules preset (three: you and two agents, R21)")
    parser.add_argument("--second-opponent", default=None,
                        help="with --rules three: the agent to your right (default: the same as --opponent)")
    parser.add_argument("--match", action="store_true", help="play a whole Bummerl (R17), not one deal")
    parser.add_argument("--seed", type=int, default=None, help="seed of the decks and the agent (reproducible game)")
    parser.add_argument("--records", default=defaults.records, help="folder for the deals' JSON records")
    # None until parsed: a value typed with --rules three is refused even when it equals the default.
    parser.add_argument("--hint-seconds", type=float, default=None,
                        help=f"search time of a hint (default {defaults.hint_seconds:g})")
    parser.add_argument("--analysis-seconds", type=float, default=None,
                        help=f'budget of "could I have won?" after each deal (0: skip; default '
                             f'{defaults.analysis_seconds:g})')
    values = parser.parse_args(argv)
    given = {option for option in ("hint_seconds", "analysis_seconds") if getattr(values, option) is not None}
    for option in {"hint_seconds", "analysis_seconds"} - given:
        setattr(values, option, getattr(defaults, option))
    if not (math.isfinite(values.hint_seconds) and values.hint_seconds > 0):  # "nan" parses, and passes "<= 0"
        raise ValueError(f"--hint-seconds must be a positive number, got {values.hint_seconds}")
    if not (math.isfinite(values.analysis_seconds) and values.analysis_seconds >= 0):
        raise ValueError(f"--analysis-seconds must be a positive number or 0 (skip), got {values.analysis_seconds}")
    if not values.records.strip():  # "" is the current folder: records would land wherever play was started
        raise ValueError("--records must name a folder, got ''")
    if values.second_opponent is not None and values.rules not in THREE_PLAYER_PRESET_NAMES:
        raise ValueError("--second-opponent is the third seat of a three-player game: it needs --rules three")
    if values.rules in THREE_PLAYER_PRESET_NAMES and given:  # given, they would be ignored
        option = sorted(given)[-1]
        raise ValueError(f"--{option.replace('_', '-')} has no use with --rules three: there is no hint and no "
                         "\"could I have won?\" with three players")
    return PlayArgs(**vars(values))


class TerminalGame:
    """The read-move-show loop around a :class:`PlaySession`."""

    help_text = HELP

    def __init__(self, args: PlayArgs, console: Console | None = None, read=input):
        self.args = args
        self.console = console or Console(highlight=False)
        self.read = read
        seed = args.seed if args.seed is not None else time.time_ns() % (1 << 62)
        self.session = PlaySession(SessionSettings(opponent=args.opponent, rules=Rules.preset(args.rules),
                                                   match=args.match, seed=seed, hint_seconds=args.hint_seconds))
        self.shown_events = 0
        self.started = time.strftime("%Y%m%d-%H%M%S")

    # ------------------------------------------------------------------ display
    def show_events(self) -> None:
        events = self.session.view()["events"]
        for event in events[self.shown_events:]:
            style = {"you": "green", "opponent": "yellow"}.get(event["player"], "cyan")
            text = Text("  • ", style=style)
            text.append(label_text(event["text"]))
            self.console.print(text)
        self.shown_events = len(events)

    def show_table(self) -> None:
        view = self.session.view()
        console = self.console
        header = Text(f"Deal {view['deal']} · trump ")
        header.append(SUIT_SYMBOLS[view["trump_suit"]], style=SUIT_STYLES[view["trump_suit"]])
        if view["bottom_card"]:
            header.append(" · face-up card ")
            header.append(card_text(view["bottom_card"]))
        header.append(f" · talon {view['talon_size']}")
        if view["closed_by"]:
            header.append(f" · closed by {view['closed_by']}", style="magenta")
        if view["match"]["bummerl"]:
            score = view["match"]["scores"]
            header.append(f" · Bummerl you {score['you']} : {score['opponent']} opponent (to {view['match']['target']})")
        console.rule(header)
        points = view["points"]
        console.print(f"  points (as you can count them): you {points['you']} · opponent {points['opponent']}   "
                      f"tricks {view['tricks_won']['you']}:{view['tricks_won']['opponent']}   "
                      f"opponent holds {view['opponent_hand_size']} cards", style="dim")
        if view["opponent_known"]:
            line = Text("  the opponent is known to hold ")
            line.append(cards_text(view["opponent_known"]))
            console.print(line)
        if view["table"]:
            line = Text(f"  on the table: {view['table']['leader']} led ")
            line.append(card_text(view["table"]["card"]))
            console.print(line)
        line = Text("  your hand: ")
        line.append(cards_text(view["hand"]))
        console.print(line)
        console.print(moves_text(view["legal"]))

    def show_hint(self) -> None:
        try:  # the hint changes nothing in the game: Ctrl-C skips it, as it skips the analysis, not the session
            with self.console.status("thinking (from what you know)… (Ctrl-C skips)"):
                rows = self.session.hint()
        except KeyboardInterrupt:
            self.console.print("  (hint skipped)", style="dim")
            return
        table = Table(title="hint: average game points of each move over worlds consistent with what you know",
                      title_style="bold", show_edge=False)
        table.add_column("move")
        table.add_column("value", justify="right")
        table.add_column("worlds", justify="right", style="dim")
        for row in rows:
            table.add_row(label_text(row["label"]), f"{row['value']:+.2f}", str(row["worlds"]))
        self.console.print(table)

    def deal_summary(self) -> None:
        session = self.session
        view = session.view()
        number = len(session.finished)
        record = session.deal_record(number)
        folder = Path(self.args.records)
        # A drawn seed stays unseen until the session ends: every deck derives from it (R4), so it would tell the
        # opponent's hand and the talon of every deal to come.
        seed_part = f"-seed{session.settings.seed}" if self.args.seed is not None else ""
        path = folder / f"sixtysix-{self.started}{seed_part}-deal{number}.json"
        save_record(path, record)
        result = view["result"]
        if result["winner"] is None:
            headline = "not scored (65:65, R15)"
        else:
            plural = "s" if result["game_points"] != 1 else ""
            headline = f"{'you win' if result['winner'] == 'you' else 'the opponent wins'} {result['game_points']} game point{plural} ({result['reason']})"
        self.console.rule(Text(f"Deal {number} over: {headline}", style="bold"))
        self.console.print(f"  points: you {result['points']['you']} · opponent {result['points']['opponent']}")
        if view["match"]["bummerl"]:
            score = view["match"]["scores"]
            self.console.print(f"  Bummerl: you {score['you']} · opponent {score['opponent']} (to {view['match']['target']})")
        self.console.print(f"  record saved: {path}  (replay it with: sixtysix replay {path})")
        if self.args.analysis_seconds > 0:
            self.show_analysis(number)

    def show_analysis(self, number: int) -> None:
        from .analysis import analyse_deal

        session = self.session
        try:
            with self.console.status("could I have won? solving with all cards open… (Ctrl-C skips)"):
                analysis = analyse_deal(session.deal_record(number), session.human, session.deal_decisions(number),
                                        open_seconds=self.args.analysis_seconds, search_seconds=0.2,
                                        seed=session.settings.seed)
        except KeyboardInterrupt:
            self.console.print("  (analysis skipped)", style="dim")
            return
        self.console.print(Text("Could I have won?", style="bold"))
        self.console.print("  " + analysis_headline(analysis))
        table = Table(show_edge=False)
        for column in ("move", "open value before → after", "search: cost", "search: best"):
            table.add_column(column)
        for open_move, search_move in zip(analysis["open"]["moves"], analysis["search"]):
            before, after = open_move["value_before"], open_move["value_after"]
            open_text = "not solved" if before is None else f"{before:+d} → {after:+d}"
            cost = "forced" if search_move["forced"] else f"{search_move['cost']:.2f}"
            best = ", ".join(search_move["best_moves"]) if not search_move["forced"] else ""
            table.add_row(label_text(open_move["move"]), open_text, cost, label_text(best))
        self.console.print(table)

    # ------------------------------------------------------------------ loop
    def run(self) -> int:
        result = self._loop()
        if self.args.seed is None:  # shown only now (deal_summary): it derives every deck of the session
            self.console.print(f"  this session's seed was {self.session.settings.seed}: play it again with "
                               f"--seed {self.session.settings.seed}", style="dim")
        return result

    def _loop(self) -> int:
        console = self.console
        session = self.session
        console.print(Text(f"Sixty-six against {self.opponents_text()} — rules {self.args.rules}. ", style="bold")
                      + Text(self.help_text, style="dim"))
        while True:
            session.run_agent()
            self.show_events()
            if session.game.is_over:
                self.deal_summary()
                if session.session_over:
                    if session.settings.match:
                        console.print(Text(f"The Bummerl is over: {self.bummerl_outcome()}.", style="bold"))
                    return 0
                if not self.ask("press Enter for the next deal (or 'quit'): ", allow_empty=True):
                    return 0
                session.next_deal()
                self.shown_events = 0
                continue
            self.show_table()
            if not self.human_turn():
                return 0

    def opponents_text(self) -> str:
        return self.session.settings.opponent

    def bummerl_outcome(self) -> str:
        match_view = self.session.view()["match"]
        outcome = "you win" if match_view["winner"] == "you" else "the opponent wins"
        if match_view["schneider"]:  # R17
            outcome += ". Schneider: the loser scored no game point, so it counts double"
        return outcome

    def ask(self, prompt: str, allow_empty: bool = False) -> str | None:
        try:
            text = self.read(prompt)
        except EOFError:  # Ctrl-D: what follows starts on a line of its own
            self.console.print()
            return None
        text = text.strip()
        if text.lower() in ("quit", "exit", "q"):
            return None
        return text if text or not allow_empty else " "

    def human_turn(self) -> bool:
        """Read until one legal move is made; False when the player quits."""
        while True:
            text = self.ask("your move: ")
            if text is None:
                self.console.print("bye")
                return False
            if not text:
                continue
            if text.lower() == "help":
                self.console.print(self.help_text, style="dim")
                continue
            if text.lower() == "hint":
                self.show_hint()
                continue
            try:
                action = self.session.parse_move(text)
            except ValueError as error:
                self.console.print(f"  {error}", style="red")
                continue
            self.session.play(action)
            return True


class ThreeTerminalGame(TerminalGame):
    """The same loop around a :class:`~play.three_session.ThreePlaySession`: you and two agents (R21). There is no
    hint and no "could I have won?" with three players (the search and the solver behind them play two)."""

    help_text = THREE_HELP

    def __init__(self, args: PlayArgs, console: Console | None = None, read=input):
        self.args = args
        self.console = console or Console(highlight=False)
        self.read = read
        seed = args.seed if args.seed is not None else time.time_ns() % (1 << 62)
        opponents = (args.opponent, args.opponent if args.second_opponent is None else args.second_opponent)
        self.session = ThreePlaySession(ThreeSessionSettings(opponents=opponents, rules=Rules.preset(args.rules),
                                                             match=args.match, seed=seed))
        self.shown_events = 0
        self.started = time.strftime("%Y%m%d-%H%M%S")

    def opponents_text(self) -> str:
        left, right = self.session.settings.opponents
        return f"{left} (to your left, plays after you) and {right} (to your right)"

    def bummerl_outcome(self) -> str:
        winner = self.session.view()["match"]["winner"]
        return "you win" if winner == "you" else f"{winner} wins"

    def show_table(self) -> None:
        view = self.session.view()
        console = self.console
        header = Text(f"Deal {view['deal']} · trump ")
        if view["trump_suit"] is None:
            header.append("not named yet")
        else:
            header.append(SUIT_SYMBOLS[view["trump_suit"]], style=SUIT_STYLES[view["trump_suit"]])
        if view["match"]["bummerl"]:
            scores = " · ".join(f"{who} {score}" for who, score in view["match"]["scores"].items())
            header.append(f" · Bummerl {scores} (to {view['match']['target']})")
        console.rule(header)
        for player in view["players"]:
            tricks = f"{player['tricks']} trick{'' if player['tricks'] == 1 else 's'}"
            cards = f"{player['cards']} card{'' if player['cards'] == 1 else 's'}"
            line = Text(f"  {player['player']}: {player['points']} points, {tricks}, {cards}", style="dim")
            if player["known"]:
                line.append("; known to hold ", style="dim")
                line.append(cards_text(player["known"]))
            console.print(line)
        if view["table"]:
            line = Text("  on the table: ")
            for index, played in enumerate(view["table"]):
                line.append(("" if index == 0 else ", ") + f"{played['player']} ")
                line.append(card_text(played["card"]))
            console.print(line)
        line = Text("  your hand" + (" (your first three cards: name trump from them, R21)" if view["naming"]
                                     else "") + ": ")
        line.append(cards_text(view["hand"]))
        console.print(line)
        console.print(moves_text(view["legal"]))

    def show_hint(self) -> None:
        self.console.print("  no hints with three players: the hint is built on the two-player search",
                           style="yellow")

    def deal_summary(self) -> None:
        session = self.session
        view = session.view()
        number = len(session.finished)
        seed_part = f"-seed{session.settings.seed}" if self.args.seed is not None else ""  # see TerminalGame
        path = Path(self.args.records) / f"sixtysix-three-{self.started}{seed_part}-deal{number}.json"
        save_record(path, session.finished[-1])
        result = view["result"]
        headline = ("not scored (a tie at the top, R21)" if result["winner"] is None
                    else f"{result['winner']} win{'' if result['winner'] == 'you' else 's'} 1 game point")
        self.console.rule(Text(f"Deal {number} over: {headline}", style="bold"))
        self.console.print("  points: " + " · ".join(f"{who} {points}" for who, points in result["points"].items()))
        if view["match"]["bummerl"]:
            scores = " · ".join(f"{who} {score}" for who, score in view["match"]["scores"].items())
            self.console.print(f"  Bummerl: {scores} (to {view['match']['target']})")
        self.console.print(f"  record saved: {path}  (replay it with: sixtysix replay {path})")


def analysis_headline(analysis: dict) -> str:
    """One sentence answering "could I have won?" from :func:`play.analysis.analyse_deal`'s result."""
    opened = analysis["open"]
    result = analysis["result"]
    won = result["winner"] == analysis["human"]
    slipped = opened["slipped_at"]
    if won:
        text = "You won the deal."
    elif slipped is not None:
        text = (f"Yes: with all cards open you still had a win before {slipped['move']} "
                f"(value {slipped['value_before']:+d}, after it {slipped['value_after']:+d}).")
    elif opened["could_have_won"]:
        text = "Yes: with all cards open there was a winning line."
    elif opened["solved"]:
        first = opened["moves"][0]["value_before"] if opened["moves"] else opened["start_value"]
        got = result["game_points"] if result["winner"] == analysis["human"] else (
            0 if result["winner"] is None else -result["game_points"])
        text = (f"No: with all cards open and best play by both, the deal was lost from your first move "
                f"(best then: {first:+d} game points; you got {got:+d}).")
    else:
        text = "Not settled: the open solve ran out of time before reaching your first moves."
    if opened["start_value"] is not None:
        text += f" Value of the deal with all cards open: {opened['start_value']:+d} game points for you."
    costs = [row["cost"] for row in analysis["search"] if not row["forced"]]
    if costs:
        text += f" The search thinks your moves cost {sum(costs):.2f} game points in all."
    return text


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    # Bytes that are not text in the terminal's encoding (a strict UTF-8 locale) ended the game with a decoding
    # error, and what was typed after them was lost: read as U+FFFD, such a line is answered as a malformed move.
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")
    game = None
    try:
        # An opponent that cannot play the rules is refused here, before the folder is made.
        game = (ThreeTerminalGame if args.rules in THREE_PLAYER_PRESET_NAMES else TerminalGame)(args)
        # The records folder is checked now: else the first deal's record would be lost after it was played.
        writable_folder(args.records, f"--records {args.records!r}")
        return game.run()
    except KeyboardInterrupt:
        print()
        if game is not None and args.seed is None:  # as at a session's end: the drawn seed replays it
            print(f"this session's seed was {game.session.settings.seed}: play it again with "
                  f"--seed {game.session.settings.seed}")
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
