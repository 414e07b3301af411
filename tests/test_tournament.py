"""The duplicate-deal tournament harness (eval/): deals, play loop, duplicate seating, determinism, resume, CLI."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

import sixtysix_cli
from agents import Agent, make_agent, register
from eval import TournamentSettings, generate_deals, load_deals, play_deal, run_tournament, save_deals
from eval.cli import match_main, split_agent_list, tournament_main
from eval.deals import derive_seed
from eval.play import IllegalActionError, play_bummerl
from eval.tournament import JOURNAL_NAME, _Context, bummerl_deck, play_task
from eval_records import bummerl_entry, game_entry
from sixtysix_env import CARD_NAMES, Game, Rules
from sixtysix_env.infoset import InformationSet

STANDARD = Rules.preset("standard")


class FirstLegalAgent(Agent):
    """Deterministic test agent: always the lowest legal action id."""

    name = "first"

    def act(self, infoset: InformationSet) -> int:
        return infoset.legal_actions[0]


class IllegalAgent(Agent):
    """Always tries to close (33), illegal in most positions: a buggy agent."""

    name = "illegal"

    def act(self, infoset: InformationSet) -> int:
        legal = infoset.legal_actions
        return 33 if 33 not in legal else legal[0]


register("first", FirstLegalAgent)
register("illegal", IllegalAgent)


def settings_for(agents, count=4, seed=0, match=False, rules=STANDARD, bootstrap=50):
    return TournamentSettings(
        agents=tuple(agents), rules=rules, deals=tuple(generate_deals(seed, count, rules)), master_seed=seed,
        match=match, bootstrap=bootstrap,
    )


def reproducible(document):
    """The parts of a results document that must not depend on timing, workers or resumption."""
    return {"summary": document["summary"], "units": document["units"]}


# --------------------------------------------------------------------------- deals
def test_generate_deals_is_deterministic_and_prefix_stable():
    first = generate_deals(5, 10, STANDARD)
    assert first == generate_deals(5, 10, STANDARD)
    assert generate_deals(5, 4, STANDARD) == first[:4]
    assert generate_deals(6, 10, STANDARD) != first
    assert [deal.dealer for deal in first[:4]] == [0, 1, 0, 1]
    for deal in first:
        assert sorted(deal.deck) == list(range(24))
    scharf = generate_deals(5, 3, Rules.preset("scharf"))
    assert all(len(deal.deck) == 20 and all(card % 6 != 0 for card in deal.deck) for deal in scharf)  # R2


def test_deal_file_round_trip_stores_card_names(tmp_path):
    deals = generate_deals(1, 3, STANDARD)
    path = tmp_path / "deals.json"
    save_deals(path, deals, STANDARD, master_seed=1)
    document = json.loads(path.read_text())
    assert document["format"] == "sixtysix-deals" and document["deals"][0]["deck"][0] in CARD_NAMES
    loaded, rules = load_deals(path, STANDARD)
    assert loaded == deals and rules == STANDARD


def _write_deals(tmp_path, mutate):
    path = tmp_path / "deals.json"
    save_deals(path, generate_deals(1, 2, STANDARD), STANDARD)
    document = json.loads(path.read_text())
    mutate(document)
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["deals"][1]["deck"].__setitem__(3, "XH"), "deal 1: deck position 4 must be a card name"),
        (lambda d: d["deals"][1]["deck"].__setitem__(3, d["deals"][1]["deck"][3].lower()),
         "deal 1: deck position 4 must be a card name written as rank then suit in capitals"),
        (lambda d: d["deals"][0].__setitem__("dealer", 1.0), "deal 0: dealer must be 0 or 1, got 1.0"),
        (lambda d: d["deals"][0].__setitem__("dealer", True), "deal 0: dealer must be 0 or 1, got True"),
        (lambda d: d.__setitem__("version", 1.0), "unsupported version 1.0"),
        (lambda d: d.__setitem__("master_seed", 2.5), "master_seed must be an integer, got 2.5"),
        (lambda d: d["deals"][0].__setitem__("seed", 1e300), "seed must be an integer"),
        (lambda d: d.pop("rules"), "missing key 'rules'"),
        (lambda d: d["deals"][0]["deck"].pop(), "deal 0: malformed deck: 23 cards"),
        (lambda d: d["deals"][0]["deck"].__setitem__(5, d["deals"][0]["deck"][0]), "appears twice"),
        (lambda d: d.__setitem__("comment", "x"), "unknown key 'comment'"),
        (lambda d: d["deals"][0].__setitem__("trump", "H"), "deal 0 has unknown key 'trump'"),
        (lambda d: d["deals"][0].__setitem__("dealer", 2), "dealer must be 0 or 1"),
        (lambda d: d.__setitem__("format", "other"), "format must be 'sixtysix-deals'"),
        (lambda d: d["rules"].__setitem__("deck", 20), "rules mismatch: deck=20"),
        (lambda d: d["rules"].__setitem__("bogus", 1), "unknown rules switch 'bogus'"),
        (lambda d: d.__setitem__("deals", []), "non-empty list"),
    ],
)
def test_bad_deal_files_raise_clear_errors(tmp_path, mutate, message):
    path = _write_deals(tmp_path, mutate)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        load_deals(path, STANDARD)


def test_a_game_record_given_as_a_deal_file_is_named_as_one(tmp_path):
    from sixtysix_env.record import game_to_record

    game = Game.deal(STANDARD, seed=3)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(game_to_record(game)))
    with pytest.raises(ValueError, match="format must be 'sixtysix-deals', got 'sixtysix-record' \\(a game record: "
                                         "replay it with `sixtysix replay`\\)"):
        load_deals(path, STANDARD)


def test_deal_file_not_json(tmp_path):
    path = tmp_path / "deals.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_deals(path)
    path.write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        load_deals(path)
    path.write_text('{"format": "sixtysix-deals", "format": "x"}')
    with pytest.raises(ValueError, match="duplicate key 'format'"):
        load_deals(path)


# --------------------------------------------------------------------------- play loop
def test_play_deal_records_actions_times_and_the_engine_result():
    game = Game.deal(STANDARD, seed=3)
    outcome = play_deal(game, [make_agent("random"), make_agent("first")], seeds=[1, 2])
    assert outcome.winner == game.result.winner and outcome.returns == game.result.returns()
    assert outcome.actions == list(game.history)
    assert sum(outcome.decisions) == len(outcome.actions)
    assert all(t >= 0 for times in outcome.decision_times for t in times)


@pytest.mark.parametrize("seat", [0, 1])
def test_play_deal_refuses_an_agent_without_act_before_any_agent_is_told(seat):
    """A function or a spec text in a seat was an AttributeError at its first move, after the other seat's agent had
    started the deal."""
    started = []

    class Recording(Agent):
        def start_deal(self, player, rules):
            started.append(player)

        def act(self, infoset):
            return infoset.legal_actions[0]

    class ActIsNotAMethod(Recording):
        act = None

    for wrong in (lambda infoset: infoset.legal_actions[0], "random", ActIsNotAMethod()):
        agents = [Recording(), Recording()]
        agents[seat] = wrong
        with pytest.raises(TypeError, match=f"seat {seat}'s agent .* has no act\\(infoset\\) method: pass an agent"):
            play_deal(Game.deal(STANDARD, seed=3, dealer=0), agents)
        assert started == []
    assert len(play_deal(Game.deal(STANDARD, seed=3, dealer=0), [Recording(), Recording()]).actions) > 0
    assert started == [0, 1]


def test_play_deal_is_reproducible_from_seeds():
    def run():
        return play_deal(Game.deal(STANDARD, seed=11), [make_agent("random"), make_agent("random")], seeds=[4, 5])

    assert run().actions == run().actions


def test_illegal_action_raises_with_agent_name_and_action():
    game = Game.deal(STANDARD, seed=0)
    with pytest.raises(IllegalActionError,
                       match=r"agent 'illegal' chose illegal action 33 \(close\) as player 0 after history \[8\]; "
                             r"legal: 0 \(play 9C\)"):
        play_deal(game, [make_agent("illegal"), make_agent("illegal")])


def test_duplicate_pair_swaps_seats_on_the_same_deck():
    settings = settings_for(["first", "random"], count=3)
    context = _Context(settings)
    for deal_index, deal in enumerate(settings.deals):
        record = play_task(context, 0, deal_index)
        assert [game["seat_a"] for game in record["games"]] == [0, 1]
        for game in record["games"]:
            # Replay on the deal's own deck and dealer: every action is legal, the result matches, and the seat
            # of agent A ('first') always chose the lowest legal action.
            replay = Game.deal(STANDARD, deck=list(deal.deck), dealer=deal.dealer)
            assert game["dealer"] == deal.dealer
            for action in game["actions"]:
                if replay.current_player == game["seat_a"]:
                    assert action == replay.legal_actions()[0]
                replay.apply(action)
            assert replay.result.winner == game["winner"] and replay.result.game_points == game["game_points"]


def test_bummerl_reaches_seven_with_shared_deck_sequence():
    rules = STANDARD
    deal = generate_deals(2, 1, rules)[0]
    decks = lambda number: bummerl_deck(rules, deal, number)  # noqa: E731
    outcome = play_bummerl(rules, deal.dealer, decks, [make_agent("random"), make_agent("first")])
    assert max(outcome.score) >= 7 > min(outcome.score)  # R17
    assert outcome.score[outcome.winner] == sum(d.game_points for d in outcome.deals if d.winner == outcome.winner)
    assert outcome.bummerl_points == (2 if outcome.score[1 - outcome.winner] == 0 else 1)
    assert [d.dealer for d in outcome.deals] == [(deal.dealer + k) % 2 for k in range(len(outcome.deals))]
    assert decks(0) == list(deal.deck) and decks(1) != decks(2) and decks(1) == bummerl_deck(rules, deal, 1)


# --------------------------------------------------------------------------- tournaments
def test_tournament_is_deterministic():
    settings = settings_for(["random", "first", "greedy"], count=4)
    one = run_tournament(settings, progress=False)
    two = run_tournament(settings, progress=False)
    assert reproducible(one) == reproducible(two)
    other_seed = run_tournament(settings_for(["random", "first", "greedy"], count=4, seed=1), progress=False)
    assert other_seed["units"] != one["units"]
    assert [pair["a"] + "/" + pair["b"] for pair in one["summary"]["pairs"]] == [
        "random/first", "random/greedy", "first/greedy",
    ]
    assert one["summary"]["ratings"]["anchor"] == "random"
    assert one["summary"]["ratings"]["agents"]["random"]["elo"] == 0.0
    timing = one["timing"]
    decisions = sum(sum(g["decisions"]) for unit in one["units"] for g in unit["games"])
    assert sum(t["decisions"] for t in timing.values()) == decisions


def test_two_workers_give_the_same_results_as_one():
    settings = settings_for(["random", "greedy"], count=6)
    serial = run_tournament(settings, workers=1, progress=False)
    parallel = run_tournament(settings, workers=2, progress=False)
    assert reproducible(serial) == reproducible(parallel)


def test_resume_after_interruption_gives_identical_results(tmp_path):
    settings = settings_for(["random", "first", "greedy"], count=4)
    out = tmp_path / "run"
    complete = run_tournament(settings, out_dir=out, progress=False)
    journal = out / JOURNAL_NAME
    lines = journal.read_bytes().split(b"\n")
    assert len(lines) == 1 + 3 * 4 + 1  # header, 3 pairs x 4 deals, final newline
    # Interrupt: keep the header and 5 finished tasks plus half of the sixth line (a torn write).
    journal.write_bytes(b"\n".join(lines[:6]) + b"\n" + lines[6][: len(lines[6]) // 2])
    for name in ("results.json", "table.md"):
        (out / name).unlink()
    resumed = run_tournament(settings, out_dir=out, progress=False)
    assert reproducible(resumed) == reproducible(complete)
    assert json.loads((out / "results.json").read_text())["units"] == complete["units"]
    assert len(journal.read_bytes().split(b"\n")) == len(lines)
    # Nothing left to do: a re-run only rewrites the outputs.
    again = run_tournament(settings, out_dir=out, progress=False)
    assert reproducible(again) == reproducible(complete)


@pytest.mark.parametrize(
    "tamper, message",
    [
        (lambda record: record["games"][0].update(game_points=3 - record["games"][0]["game_points"]),
         "does not match its replay"),
        (lambda record: record["games"][1]["actions"].append(0), "does not match its replay|go on after the end"),
        (lambda record: record.update(pair=float(record["pair"])), "pair must be an integer"),
        (lambda record: record["games"][0].update(winner=True), "game winner must be 0 or 1, got True"),
        (lambda record: record.update(note="x"), "unknown key 'note'"),
        (lambda record: record["games"][0]["points"].__setitem__(0, 1.5), "game points must be an integer"),
    ],
)
def test_a_tampered_journal_line_is_refused_on_resume(tmp_path, tamper, message):
    """A journal line is checked strictly and, in deal mode, replayed: a wrong result is never silently reported."""
    _tampered_run_is_refused(settings_for(["random", "first"], count=2), tmp_path / "run", tamper, message)


def _tampered_run_is_refused(settings, out, tamper, message) -> tuple[Path, list[str]]:
    """Play ``settings`` into ``out``, apply ``tamper`` to the journal's first task line, and check that the resume
    refuses it with ``message``; returns the journal and its original lines."""
    run_tournament(settings, out_dir=out, progress=False)
    journal = out / JOURNAL_NAME
    lines = journal.read_text().splitlines()
    header, first, *rest = lines
    record = json.loads(first)
    tamper(record)
    journal.write_text("\n".join([header, json.dumps(record), *rest]) + "\n")
    with pytest.raises(ValueError, match=f"line 2 is not a valid task record.*({message})"):
        run_tournament(settings, out_dir=out, progress=False)
    return journal, lines


def _flip_winner(record):
    record["bummerls"][0]["winner"] = 1 - record["bummerls"][0]["winner"]


@pytest.mark.parametrize(
    "tamper, message",
    [
        (_flip_winner, "bummerl winner, score and points .* do not match its replay"),
        (lambda record: record["bummerls"][1]["score"].reverse(), "do not match its replay"),
        (lambda record: record["bummerls"][0].update(bummerl_points=3 - record["bummerls"][0]["bummerl_points"]),
         "do not match its replay"),
        (lambda record: record["bummerls"][0]["deals"][0].update(actions=[], times_us=[[], []]),
         "does not match its replay"),
        (lambda record: record["bummerls"][0]["deals"].pop(), "end before the Bummerl does"),
        (lambda record: record["bummerls"][1]["deals"].append(record["bummerls"][1]["deals"][0]),
         "goes on after the Bummerl ended"),
        (lambda record: record["bummerls"][0]["deals"].reverse(), "dealer|does not match its replay|illegal action"),
    ],
)
def test_a_tampered_bummerl_journal_line_is_refused_on_resume(tmp_path, tamper, message):
    """R17/R3: with --match, a journal line's Bummerls are replayed deal by deal (the decks of bummerl_deck, the
    dealer alternating) and scored again: a wrong winner, score, Bummerl points or deal list is refused."""
    settings = settings_for(["random", "greedy"], count=2, match=True)
    journal, lines = _tampered_run_is_refused(settings, tmp_path / "run", tamper, message)
    journal.write_text("\n".join(lines) + "\n")  # the untouched journal resumes
    assert run_tournament(settings, out_dir=tmp_path / "run", progress=False)["summary"]


def test_a_deeply_nested_or_duplicate_key_journal_line_is_corrupt_not_a_crash(tmp_path):
    settings = settings_for(["random", "first"], count=2)
    out = tmp_path / "run"
    run_tournament(settings, out_dir=out, progress=False)
    journal = out / JOURNAL_NAME
    header, first, *rest = journal.read_text().splitlines()
    for bad in ("[" * 100_000 + "]" * 100_000, first[:-1] + ', "pair": 0}'):
        journal.write_text("\n".join([header, bad, *rest]) + "\n")
        with pytest.raises(ValueError, match="is corrupt at line 2"):
            run_tournament(settings, out_dir=out, progress=False)


def test_existing_run_with_other_settings_needs_overwrite(tmp_path):
    out = tmp_path / "run"
    run_tournament(settings_for(["random", "first"], count=2), out_dir=out, progress=False)
    with pytest.raises(ValueError, match="different settings.*deals: 2 there, 3 now.*--overwrite"):
        run_tournament(settings_for(["random", "first"], count=3), out_dir=out, progress=False)
    document = run_tournament(settings_for(["random", "first"], count=3), out_dir=out, progress=False, overwrite=True)
    assert len(document["units"]) == 3


def test_match_mode_reports_bummerl_win_rate():
    settings = settings_for(["greedy", "random"], count=3, match=True)
    document = run_tournament(settings, progress=False)
    pair = document["summary"]["pairs"][0]
    assert pair["bummerl_win_rate"]["bummerls"] == 6
    assert 0 <= pair["bummerl_win_rate"]["low"] <= pair["bummerl_win_rate"]["rate"] <= pair["bummerl_win_rate"]["high"]
    for unit in document["units"]:
        first, second = unit["bummerls"]
        assert (first["seat_a"], second["seat_a"]) == (0, 1)
        assert max(first["score"]) >= 7 and max(second["score"]) >= 7
    outcome = pair["bummerl_pairs"]
    assert sum(outcome.values()) == 3
    assert 2 * outcome["won_both"] + outcome["split"] == pair["bummerl_win_rate"]["wins"]
    from eval.report import markdown_table

    table = markdown_table(document)
    assert "| Bummerl pairs both-split-neither |" in table
    assert f"| {outcome['won_both']}-{outcome['split']}-{outcome['lost_both']} |" in table


def test_bad_agent_specs_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown agent 'nosuch'"):
        run_tournament(settings_for(["random", "nosuch"], count=1), progress=False)
    with pytest.raises(ValueError, match="unknown parameter 'depth' for agent 'random'"):
        run_tournament(settings_for(["random", "random:depth=3"], count=1), progress=False)
    with pytest.raises(ValueError, match="not key=value"):
        run_tournament(settings_for(["random", "random:depth"], count=1), progress=False)
    with pytest.raises(ValueError, match="at least two agents"):
        settings_for(["random"])


def test_split_agent_list_keeps_parameters_together():
    assert split_agent_list("random,pimc:samples=30,seconds=0.1,heuristic") == [
        "random", "pimc:samples=30,seconds=0.1", "heuristic",
    ]
    assert split_agent_list("ismcts:iterations=200,greedy") == ["ismcts:iterations=200", "greedy"]
    with pytest.raises(ValueError, match="does not follow an agent with parameters"):
        split_agent_list("random,samples=3")
    with pytest.raises(ValueError, match="empty agent name"):
        split_agent_list("random,,greedy")


# --------------------------------------------------------------------------- command line
def test_cli_tournament_writes_all_files(tmp_path, capsys):
    out = tmp_path / "cli"
    code = tournament_main(
        ["--agents", "random,first", "--agent", "greedy", "--deals", "3", "--out", str(out), "--no-progress",
         "--bootstrap", "20"]
    )
    assert code == 0
    for name in ("results.json", "results.csv", "table.md", "crosstable.png", "deals.json", JOURNAL_NAME):
        assert (out / name).stat().st_size > 0, name
    assert (out / "crosstable.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3 * 3 * 2  # pairs x deals x seatings: one row per game
    assert {row["player0"] for row in rows} == {"random", "first", "greedy"}
    table = (out / "table.md").read_text()
    assert "Ratings" in table and "| `greedy` |" in table and "p95" in table
    assert "Mean game-point margin" in capsys.readouterr().out
    # The saved deals replay through --deals-file with identical results.
    again = tmp_path / "again"
    tournament_main(
        ["--agents", "random,first,greedy", "--deals-file", str(out / "deals.json"), "--out", str(again),
         "--quiet", "--bootstrap", "20"]
    )
    first_run = json.loads((out / "results.json").read_text())
    second_run = json.loads((again / "results.json").read_text())
    assert second_run["units"] == first_run["units"]


@pytest.fixture
def interactive_signal_handlers():
    """SIGTERM and SIGINT as in a run from a terminal (a job started in the background may ignore SIGINT), and as
    they were after the test."""
    import signal

    previous = {signum: signal.signal(signum, handler)
                for signum, handler in ((signal.SIGTERM, signal.SIG_DFL), (signal.SIGINT, signal.default_int_handler))}
    yield
    for signum, handler in previous.items():
        signal.signal(signum, handler)


@pytest.mark.parametrize("stop_signal", ["SIGTERM", "SIGINT"])
def test_a_stop_that_a_library_turns_into_another_error_still_ends_the_run_as_a_stop(
        tmp_path, capsys, monkeypatch, interactive_signal_handlers, stop_signal):
    """A SIGTERM or Ctrl-C that arrives while numba compiles is swallowed inside llvmlite's ctypes callback and numba
    then fails with an error of its own (seen once on a cold cache): the run still ends as a stop, exit 130 with the
    advice to continue, not with a traceback. Without a stop the same error is raised."""
    import os
    import signal
    import time

    import eval.tournament

    def run_that_swallows_the_stop(*args, **kwargs):
        try:
            os.kill(os.getpid(), getattr(signal, stop_signal))
            time.sleep(5)  # the handler raises here
        except KeyboardInterrupt:
            pass  # what the ctypes callback does
        raise RuntimeError("cannot cache function: the compile was interrupted")

    monkeypatch.setattr(eval.tournament, "run_tournament", run_that_swallows_the_stop)
    out = tmp_path / "run"
    arguments = ["--agents", "random,first", "--deals", "2", "--no-progress", "--out", str(out)]
    assert tournament_main(arguments) == 130
    assert f"interrupted (finished work is kept in {out}); run the same command again" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handlers are put back
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def run_that_fails(*args, **kwargs):
        raise RuntimeError("cannot cache function")

    monkeypatch.setattr(eval.tournament, "run_tournament", run_that_fails)
    with pytest.raises(RuntimeError, match="cannot cache function"):
        tournament_main(arguments + ["--overwrite"])


@pytest.mark.parametrize("stop_signal", ["SIGTERM", "SIGINT"])
def test_a_stop_while_the_agents_are_checked_ends_the_run_as_a_stop(tmp_path, capsys, monkeypatch,
                                                                    interactive_signal_handlers, stop_signal):
    """The checks before the run build every agent, which compiles numba's kernels on a cold cache (about 5 s of
    an 8 s run, found by a sweep): a Ctrl-C then printed a long traceback, and a SIGTERM ended the process silently.
    Both end the run as a stop now, with nothing written."""
    import os
    import signal
    import time

    import agents

    def compiling(*args, **kwargs):
        os.kill(os.getpid(), getattr(signal, stop_signal))
        time.sleep(5)  # the handler raises here
        raise AssertionError("the stop was not handled")

    class Unhandled(Exception):
        pass

    def unhandled(signum, frame):  # what the process would die of (SIGTERM), without killing the test run
        raise Unhandled(signum)

    monkeypatch.setattr(agents, "agent_for_rules", compiling)
    signal.signal(signal.SIGTERM, unhandled)
    out = tmp_path / "run"
    assert tournament_main(["--agents", "random,first", "--deals", "2", "--no-progress", "--out", str(out)]) == 130
    assert "interrupted" in capsys.readouterr().err and not out.exists()
    assert signal.getsignal(signal.SIGTERM) is unhandled  # put back


def test_a_run_started_with_ctrl_c_ignored_keeps_ignoring_it(tmp_path, monkeypatch, interactive_signal_handlers):
    """A job started in the background of a non-interactive shell ignores SIGINT; the tournament keeps it so (it
    stops on SIGTERM only) instead of making it stoppable by a stray Ctrl-C meant for the shell."""
    import signal

    import eval.tournament

    handlers_while_running = []

    def run(*args, **kwargs):
        handlers_while_running.extend(signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM))
        return {}

    monkeypatch.setattr(eval.tournament, "run_tournament", run)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tournament_main(["--agents", "random,first", "--deals", "2", "--no-progress", "--quiet", "--out", str(tmp_path)])
    assert handlers_while_running[0] is signal.SIG_IGN and callable(handlers_while_running[1])
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_sixtysix_match_command_and_errors(tmp_path, capsys):
    assert sixtysix_cli.main(["match", "first", "random", "--deals", "2", "--no-progress", "--bootstrap", "0"]) == 0
    assert "`first`" in capsys.readouterr().out
    assert sixtysix_cli.main(["match", "first", "nosuch", "--deals", "1", "--no-progress"]) == 2
    assert "unknown agent 'nosuch'" in capsys.readouterr().err
    deals = _write_deals(tmp_path, lambda d: d["deals"][0]["deck"].__setitem__(0, "1H"))
    assert match_main  # the same entry point sixtysix_cli dispatches to
    assert sixtysix_cli.main(["match", "first", "random", "--deals-file", str(deals), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert "deck position 1 must be a card name" in error and "got '1H'" in error


def test_agent_seeds_are_derived_per_deal_and_seat():
    assert derive_seed("agent", 0, 1, 0, 1) == derive_seed("agent", 0, 1, 0, 1)
    assert len({derive_seed("agent", 0, 1, swap, seat) for swap in (0, 1) for seat in (0, 1)}) == 4


def test_out_naming_an_existing_file_is_refused_without_a_traceback(tmp_path, capsys):
    existing = tmp_path / "results.txt"
    existing.write_text("keep me")
    code = sixtysix_cli.main(["tournament", "--agents", "random,first", "--deals", "1", "--out", str(existing),
                              "--no-progress"])
    assert code == 2
    error = capsys.readouterr().err
    assert "is an existing file, not a directory" in error and "Traceback" not in error
    assert existing.read_text() == "keep me"


_SELF_KILLING_AGENT = '''
import os, signal
from pathlib import Path
from agents import register
from agents.base import Agent

MARKER = Path(os.environ["SIXTYSIX_TEST_KILL_MARKER"])


class KilledOnce(Agent):
    """Plays the first legal action; the first time the marker file exists, removes it and kills its process."""
    name = "killed-once"

    def act(self, infoset):
        try:
            MARKER.unlink()  # atomic: of two workers seeing the marker, only the one that removes it dies
        except FileNotFoundError:
            return infoset.legal_actions[0]
        os.kill(os.getpid(), signal.SIGKILL)


register("killed-once", lambda seed=None, **params: KilledOnce())
'''


def test_a_worker_killed_with_sigkill_ends_the_run_with_a_message_and_resume_completes(tmp_path, monkeypatch, capsys):
    """kill -9 of a worker: a clear message and exit 1 (no traceback); the same command then finishes the run."""
    (tmp_path / "killer_agent.py").write_text(_SELF_KILLING_AGENT)
    marker = tmp_path / "kill-next"
    marker.write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("SIXTYSIX_TEST_KILL_MARKER", str(marker))
    out = tmp_path / "run"
    command = ["tournament", "--agents", "killed-once,random", "--deals", "3", "--workers", "2", "--out", str(out),
               "--import", "killer_agent", "--no-progress", "--bootstrap", "0"]
    assert sixtysix_cli.main(command) == 1
    error = capsys.readouterr().err
    assert "a tournament worker process died (exit code -9)" in error and "Traceback" not in error
    assert "run the same command again" in error and not marker.exists()
    assert sixtysix_cli.main(command + ["--quiet"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert len(results["units"]) == 3


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting for a parent that never reaps it does not)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in status)
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_workers_end_when_their_main_process_is_killed(tmp_path):
    """kill -9 of a tournament's main process left its workers alive for good, playing queued tasks beside the run
    that continues it; they now end within seconds of losing their parent."""
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "slow_player.py").write_text("import os, time\n\n\ndef play(task):\n    time.sleep(0.05)\n"
                                             "    return os.getpid()\n")
    (tmp_path / "main.py").write_text(
        f"import sys\nsys.path[:0] = [{str(tmp_path)!r}, {str(Path(__file__).resolve().parents[1])!r}]\n"
        "import slow_player\nfrom eval.tournament import play_in_processes\n\nif __name__ == '__main__':\n"
        "    for pid in play_in_processes(slow_player.play, list(range(100000)), 2):\n        print(pid, flush=True)\n")
    main = subprocess.Popen([sys.executable, str(tmp_path / "main.py")], stdout=subprocess.PIPE, text=True)
    workers: set[int] = set()
    while len(workers) < 2:
        workers.add(int(main.stdout.readline()))
    main.send_signal(signal.SIGKILL)
    main.wait()
    deadline = time.time() + 20
    while any(_running(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.2)
    alive = [pid for pid in workers if _running(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"workers {alive} outlived their main process"


def test_ray_backend_gives_the_same_records_as_worker_processes(tmp_path):
    """``--backend ray`` (local Ray actors) and the default worker processes play identical deals and results."""
    pytest.importorskip("ray", reason="the ray backend needs Ray (pip install -e '.[ray]')")
    from eval.tournament import TournamentSettings, run_tournament

    rules = Rules()
    settings = TournamentSettings(agents=("random", "greedy"), rules=rules, deals=tuple(generate_deals(5, 4, rules)),
                                  master_seed=5, bootstrap=0)
    by_processes = run_tournament(settings, workers=2, progress=False, write_outputs=False)
    by_ray = run_tournament(settings, workers=2, progress=False, write_outputs=False, backend="ray")
    assert [unit["games"] for unit in by_ray["units"]] == [unit["games"] for unit in by_processes["units"]]
    assert by_ray["summary"] == by_processes["summary"]


def test_backend_arguments_are_checked():
    from eval.tournament import TournamentSettings, run_tournament

    settings = TournamentSettings(agents=("random", "greedy"), rules=Rules(),
                                  deals=tuple(generate_deals(5, 1, Rules())))
    with pytest.raises(ValueError, match="backend must be one of"):
        run_tournament(settings, progress=False, write_outputs=False, backend="dask")
    with pytest.raises(ValueError, match="Ray cluster"):
        run_tournament(settings, progress=False, write_outputs=False, address="127.0.0.1:6379")


def test_agents_built_in_simultaneous_threads_all_find_the_registry_filled():
    """The registry loads its agents on first use; threads that build agents at the same moment (the browser app's
    games) must each wait for all of them, not see a half-filled registry ("unknown agent"). A fresh process, so no
    earlier test has loaded it."""
    script = (
        "import threading\n"
        "from agents.registry import make_agent\n"
        "start = threading.Barrier(6)\n"
        "errors = []\n"
        "def build():\n"
        "    start.wait()\n"
        "    try:\n"
        "        make_agent('heuristic', seed=0)\n"
        "    except Exception as error:\n"
        "        errors.append(repr(error))\n"
        "threads = [threading.Thread(target=build) for _ in range(6)]\n"
        "[thread.start() for thread in threads]\n"
        "[thread.join() for thread in threads]\n"
        "assert not errors, errors\n"
    )
    from play_helpers import assert_runs_in_a_fresh_process

    assert_runs_in_a_fresh_process(script)


def test_ratings_wait_until_every_pair_has_played_the_same_deals():
    """The ratings' bootstrap resamples deals jointly over the pairs; an unfinished run whose pairs hold as many
    units, but not the same deals, has no ratings yet (it would pair different deals)."""
    from eval.tournament import summarise

    settings = settings_for(["random", "first", "greedy"], count=3)

    def unit(pair, deal):
        games = [game_entry(seat, (seat + deal) % 2, 1) for seat in (0, 1)]
        return {"pair": pair, "deal": deal, "games": games}

    same = [unit(pair, deal) for pair in range(3) for deal in (0, 1)]
    assert "ratings" in summarise(settings, same)
    shifted = [unit(pair, deal) for pair in range(3) for deal in ((0, 2) if pair == 1 else (0, 1))]
    assert "ratings" not in summarise(settings, shifted)


def test_a_fresh_run_writes_its_own_deal_file_over_a_stale_one(tmp_path):
    """R4: deals.json is the deals the results were played on. A run that starts afresh in a folder where an earlier
    run left only its deal file writes its own; eval.pool and --luck read it."""
    out = tmp_path / "run"
    run_tournament(settings_for(["random", "first"], count=2, seed=1), out_dir=out, progress=False)
    for name in (JOURNAL_NAME, "results.json", "results.csv", "table.md", "crosstable.png"):
        (out / name).unlink(missing_ok=True)
    second = settings_for(["random", "first"], count=2, seed=2)
    run_tournament(second, out_dir=out, progress=False)
    deals, _rules = load_deals(out / "deals.json")
    assert [(deal.deck, deal.dealer) for deal in deals] == [(deal.deck, deal.dealer) for deal in second.deals]


def test_a_run_on_another_runs_deal_file_pairs_with_it(tmp_path):
    """A run played on another run's deals.json (--deals-file) pairs with it by deal in eval.pool --minus, though
    their agents' seeds differ; its own deal file names no master seed, since its deals did not come from one."""
    from eval.pool import paired

    first = tmp_path / "first"
    generated = settings_for(["random", "greedy"], count=3, seed=7)
    run_tournament(generated, out_dir=first, progress=False)
    deals, rules = load_deals(first / "deals.json")
    from_file = TournamentSettings(agents=("first", "greedy"), rules=rules, deals=tuple(deals), master_seed=0,
                                   deals_source=f"file {first / 'deals.json'}", bootstrap=50)
    second = tmp_path / "second"
    run_tournament(from_file, out_dir=second, progress=False)
    assert "master_seed" not in json.loads((second / "deals.json").read_text())
    first_a, second_a, opponent, interval = paired(second, first)
    assert (first_a, second_a, opponent, interval.n) == ("first", "random", "greedy", 3)


def test_a_continued_run_rewrites_a_damaged_deal_file_and_clears_temp_records(tmp_path, capsys):
    """A deals.json damaged since (or a record's temp file left by a kill mid-write) stayed as it was when the
    same command continued the run, and `sixtysix replay out/deals.json#N` failed on it."""
    out, records = tmp_path / "out", tmp_path / "records"
    command = ["match", "random", "greedy", "--deals", "2", "--seed", "4", "--out", str(out), "--records",
               str(records), "--quiet", "--no-progress", "--bootstrap", "0"]
    assert sixtysix_cli.main(command) == 0
    saved = (out / "deals.json").read_bytes()
    (out / "deals.json").write_text("garbage")
    stale = records / ".deal0000_random_vs_greedy.json.x1y2z3.tmp"
    stale.write_text("{")
    # and in --out, a result file's (a sweep found them piling up there, one per kill)
    stale_results = [out / ".deals.json.a1b2c3.tmp", out / ".results.json.d4e5f6.tmp"]
    for path in stale_results:
        path.write_text("{")
    assert sixtysix_cli.main(command) == 0
    assert (out / "deals.json").read_bytes() == saved and not stale.exists()
    assert not any(path.exists() for path in stale_results) and not list(out.glob(".*.tmp"))
    deals, _rules = load_deals(out / "deals.json")
    assert len(deals) == 2


def test_an_unreachable_ray_address_is_refused_by_name_at_once(tmp_path):
    """``--backend ray --address HOST:PORT`` where nothing listens: ray.init retried for minutes, printing only its
    own GCS timeouts; the run is now refused within the connect timeout, naming the address."""
    pytest.importorskip("ray", reason="the ray backend needs Ray (pip install -e '.[ray]')")
    import socket
    import time

    from eval.ray_backend import ray_session

    with socket.socket() as listener:  # a port that was just free: nothing listens on it once closed
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
    start = time.monotonic()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(ValueError, match=rf"no Ray cluster answers at '{re.escape(address)}'"):
            with ray_session(2, address):
                pass
    assert time.monotonic() - start < 30


def test_the_recorded_commit_is_this_checkouts_never_a_repository_around_an_install(tmp_path, monkeypatch):
    """results.json's git_commit: the project's own commit in a checkout; None for an installed copy whose
    site-packages lies inside another repository (a venv in the user's project)."""
    import subprocess

    import eval.tournament as tournament

    root = Path(tournament.__file__).resolve().parent.parent
    if (root / ".git").exists():
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
        assert tournament.versions()["git_commit"] == head
    outer = tmp_path / "userproject"
    site = outer / ".venv" / "lib" / "site-packages"
    (site / "eval").mkdir(parents=True)
    (site / "sixtysix_env").mkdir()
    git = ["git", "-c", "user.name=u", "-c", "user.email=u@example.org"]
    subprocess.run(git + ["init", "-q"], cwd=outer, check=True)
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "unrelated"], cwd=outer, check=True)
    monkeypatch.setattr(tournament, "__file__", str(site / "eval" / "tournament.py"))
    assert tournament.versions()["git_commit"] is None


# ------------------------------------------------------------------ found by a mutation review of eval/ (session 72)
def test_a_master_seed_gives_the_same_deals_in_every_version():
    """R4: a master seed names a fixed set of deals, so the seeds docs/strength.md quotes (and the test seeds fixed in
    advance) play the same cards in every release. Pinned: the first two deals of master seed 4242 and the second
    deck of a Bummerl started by the first (R17); a change to the seed derivation would silently change them."""
    deals = generate_deals(4242, 2, STANDARD)
    assert derive_seed("deal", 4242, 0) == 2713113951347655761 == deals[0].seed
    assert [(deal.dealer, " ".join(deal.deck_names)) for deal in deals] == [
        (0, "QD TH KH KS AD TS 9D JD QS AH KC JS TD AS AC QC 9C KD JC 9H 9S QH TC JH"),
        (1, "AC KC KS JC TC JS TH TD JD KH JH QC QS KD 9D 9C 9H AS QD TS AH AD 9S QH"),
    ]
    assert " ".join(CARD_NAMES[card] for card in bummerl_deck(STANDARD, deals[0], 1)) == (
        "KC JD 9S KS KH JC QH AD QS TD AH TS KD 9D 9C TH AS 9H JH QD TC QC AC JS")
    with pytest.raises(ValueError, match="count"):
        generate_deals(4242, 0, STANDARD)


def test_the_deal_set_identity_changes_with_any_dealer_or_deck():
    """A resumed run must play the deals it started with: the settings' identity (which a journal's header must
    match) holds a digest of every deck and dealer, so one deal's dealer alone changes it."""
    import dataclasses

    from eval.deals import deals_digest

    settings = settings_for(["random", "first"], count=3)
    deals = list(settings.deals)
    other_dealer = deals[:2] + [dataclasses.replace(deals[2], dealer=1 - deals[2].dealer)]
    other_deck = deals[:2] + [dataclasses.replace(deals[2], deck=deals[2].deck[::-1])]
    assert len({deals_digest(deals), deals_digest(other_dealer), deals_digest(other_deck)}) == 3
    for changed in (other_dealer, other_deck):
        assert dataclasses.replace(settings, deals=tuple(changed)).identity() != settings.identity()
    assert Game.deal(STANDARD, deck=list(deals[2].deck), dealer=deals[2].dealer)  # the deals are playable as given


def test_a_deal_file_records_its_master_seed(tmp_path):
    deals = generate_deals(3, 2, STANDARD)
    save_deals(tmp_path / "deals.json", deals, STANDARD, master_seed=3)
    assert json.loads((tmp_path / "deals.json").read_text())["master_seed"] == 3
    assert load_deals(tmp_path / "deals.json")[0] == deals


@pytest.mark.parametrize(
    "tamper, message",
    [
        (lambda record: record["games"][0].update(dealer=1 - record["games"][0]["dealer"]), "is not the deal's dealer"),
        (lambda record: record["games"].reverse(), "seat_a must be 0 in entry 0"),
    ],
)
def test_a_journal_line_with_another_dealer_or_the_seatings_swapped_is_refused(tmp_path, tamper, message):
    """R3/R4: a unit's two games are the same deal with the seats swapped, in order; a line whose dealer is not the
    deal's, or whose seatings are exchanged, would credit results to the wrong seat."""
    _tampered_run_is_refused(settings_for(["random", "first"], count=2), tmp_path / "run", tamper, message)


def test_the_cross_tables_mirror_each_pair_for_the_other_agent():
    """The cross-table's cell (j, i) is the pair's result seen by its second agent: the margin negated, the deal win
    rate and its interval reflected (low and high exchanged)."""
    from eval.tournament import summarise

    settings = settings_for(["random", "first", "greedy"], count=3, bootstrap=0)

    def unit(pair, deal, winners):
        return {"pair": pair, "deal": deal, "games": [game_entry(seat, winner, 1 + pair)
                                                      for seat, winner in enumerate(winners)]}

    # Winners by seat in the unit's two games (A sits in seat 0, then seat 1). Pair 0 (random-first, 1 point a game):
    # A's margins 0, +2, 0; pair 1 (random-greedy, 2 points): -4, -4, 0; pair 2 (first-greedy, 3 points): 0, 0, +6.
    winners = {0: [(0, 0), (0, 1), (1, 1)], 1: [(1, 0), (1, 0), (1, 1)], 2: [(0, 0), (1, 1), (0, 1)]}
    records = [unit(pair, deal, winners[pair][deal]) for pair in range(3) for deal in range(3)]
    crosstable = summarise(settings, records)["crosstable"]
    for i, j in settings.pairs:
        forward, backward = crosstable["margin_per_deal"][i][j], crosstable["margin_per_deal"][j][i]
        assert backward["mean"] == -forward["mean"] and backward["half_width"] == forward["half_width"]
        rate, mirrored = crosstable["deal_win_rate"][i][j], crosstable["deal_win_rate"][j][i]
        assert mirrored["rate"] == pytest.approx(1.0 - rate["rate"])
        assert (mirrored["low"], mirrored["high"]) == pytest.approx((1.0 - rate["high"], 1.0 - rate["low"]))
        assert mirrored["low"] <= mirrored["rate"] <= mirrored["high"]
    assert crosstable["margin_per_deal"][0][1]["mean"] == pytest.approx(2 / 6)
    assert crosstable["margin_per_deal"][2][0]["mean"] == pytest.approx(8 / 6)  # greedy's view of pair 1
    assert crosstable["deal_win_rate"][2][0]["rate"] == pytest.approx(5 / 6)  # greedy won 5 of pair 1's 6 games


def test_a_duplicate_pair_with_no_margin_is_a_tie_not_a_win():
    from eval.tournament import summarise_pair

    records = [{"pair": 0, "deal": 0, "games": [game_entry(0, 0, 2), game_entry(1, 0, 2)]},  # +2 - 2 = 0
               {"pair": 0, "deal": 1, "games": [game_entry(0, 0, 1), game_entry(1, 1, 1)]}]  # +2
    assert summarise_pair(records, match=False)["duplicate_pairs"] == {"won": 1, "tied": 1, "lost": 0}


def test_bummerl_summaries_count_every_deal_played_and_average_the_points_per_bummerl():
    """R17 with --match: the deal win rate is over the deals the Bummerls took (not two per unit), and the Bummerl
    points are averaged per Bummerl within a unit before the units are averaged."""
    from eval import stats
    from eval.tournament import summarise_pair

    first = [bummerl_entry(0, 0, [game_entry(0, 0, 3), game_entry(0, 0, 3), game_entry(0, 0, 1)], 3),
             bummerl_entry(1, 1, [game_entry(1, 1, 3)] * 3 + [game_entry(1, 0, 1)], 1)]  # +3 + 1 = +4 over 2
    second = [bummerl_entry(0, 0, [game_entry(0, 0, 3)] * 3, 1),
              bummerl_entry(1, 0, [game_entry(1, 0, 3)] * 3, 2)]  # +1 - 2 = -1 over 2
    summary = summarise_pair([{"pair": 0, "deal": 0, "bummerls": first},
                              {"pair": 0, "deal": 1, "bummerls": second}], match=True)
    assert summary["deals_played"] == 13
    assert summary["deal_win_rate"]["rate"] == pytest.approx(9 / 13)  # A won 3 + 3 + 3 of the 13 deals
    assert summary["bummerl_win_rate"]["wins"] == 3 and summary["bummerl_win_rate"]["bummerls"] == 4
    expected = stats.mean_interval([4 / 2, -1 / 2])
    assert summary["bummerl_points_per_bummerl"]["mean"] == pytest.approx(0.75)
    assert summary["bummerl_points_per_bummerl"]["half_width"] == pytest.approx(expected.half_width)


def test_bummerl_pairs_are_counted_by_their_bummerls_not_by_the_sign_of_their_summed_margin():
    """R17 with --match: a Bummerl pair A splits (wins one 7:0 by 3-pointers, loses the other 6:7) has a positive
    summed margin, so it is a "won" unit by margin, yet by its Bummerls it is split; ties halved, the pair counts
    give back exactly the Bummerl win rate."""
    from eval.tournament import summarise_pair

    split_but_ahead = [bummerl_entry(0, 0, [game_entry(0, 0, 3)] * 3),  # A +9, wins
                       bummerl_entry(1, 0, [game_entry(1, 1, 3)] * 2 + [game_entry(1, 0, 3)] * 3)]  # A +6 - 9, loses
    both = [bummerl_entry(0, 0, [game_entry(0, 0, 3)] * 3), bummerl_entry(1, 1, [game_entry(1, 1, 3)] * 3)]
    neither = [bummerl_entry(0, 1, [game_entry(0, 1, 3)] * 3), bummerl_entry(1, 0, [game_entry(1, 0, 3)] * 3)]
    records = [{"pair": 0, "deal": deal, "bummerls": bummerls}
               for deal, bummerls in enumerate([split_but_ahead, both, neither, both])]
    summary = summarise_pair(records, match=True)
    assert summary["duplicate_pairs"] == {"won": 3, "tied": 0, "lost": 1}  # by the sign of the summed margin
    assert summary["bummerl_pairs"] == {"won_both": 2, "split": 1, "lost_both": 1}
    pairs = summary["bummerl_pairs"]
    assert (pairs["won_both"] + pairs["split"] / 2) / len(records) == summary["bummerl_win_rate"]["rate"] == 5 / 8


def test_times_are_credited_to_the_agent_in_each_seat():
    """A unit's second game has A in seat 1: its seat-1 times are A's, its seat-0 times are B's."""
    from eval.tournament import timing_summary

    settings = settings_for(["random", "first"], count=1)
    record = {"pair": 0, "deal": 0, "games": [game_entry(0, 0, 1, times_us=([1000], [50_000])),
                                               game_entry(1, 0, 1, times_us=([70_000], [3000]))]}
    timing = timing_summary(settings, [record])
    assert timing["random"]["max_ms"] == 3.0 and timing["random"]["decisions"] == 2
    assert timing["first"]["max_ms"] == 70.0 and timing["first"]["median_ms"] == 60.0


def test_results_of_an_unfinished_run_say_so():
    from eval.tournament import build_results

    settings = settings_for(["random", "first"], count=2, bootstrap=0)
    records = [{"pair": 0, "deal": 0, "games": [game_entry(0, 0, 1), game_entry(1, 1, 1)]}]
    assert build_results(settings, records)["settings"]["complete"] is False
    records.append({"pair": 0, "deal": 1, "games": [game_entry(0, 0, 1), game_entry(1, 1, 1)]})
    assert build_results(settings, records)["settings"]["complete"] is True


def test_self_play_of_a_random_agent_draws_fresh_choices_in_each_seating():
    """The agents' generators are seeded by deal, seating and seat, so the two games of a deal pair between two
    copies of one random agent are not mirror images: were they seeded by seat alone, every unit would be the same
    game twice, its margin exactly 0, and self-play's interval would have no width."""
    from eval.tournament import summarise_pair

    settings = settings_for(["random", "random"], count=8)
    context = _Context(settings)
    records = [play_task(context, 0, deal) for deal in range(8)]
    assert any(record["games"][0]["actions"] != record["games"][1]["actions"] for record in records)
    assert summarise_pair(records, match=False)["margin_per_deal"]["half_width"] > 0


def test_tasks_run_deal_by_deal_so_an_interrupted_run_has_every_pair_on_the_same_deals():
    from eval.tournament import tasks_in_order

    settings = settings_for(["random", "first", "greedy"], count=2)
    assert tasks_in_order(settings) == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
