"""The browser app in a real browser (issue 13, item 4): Playwright drives Debian's chromium (never the browser
download of ``playwright install``). Skipped with the reason where chromium or Playwright is missing.

``pytest -m browser`` runs these alone. With ``SIXTYSIX_SCREENSHOTS=docs/screenshots`` the tests also save the
screenshots of docs/play.md."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
uvicorn = pytest.importorskip("uvicorn")

from hidden_cards import card_tokens, hidden_cards  # noqa: E402
from play.web.server import ServerSettings, create_app  # noqa: E402

CHROMIUM = next((path for path in (os.environ.get("SIXTYSIX_CHROMIUM"), shutil.which("chromium"),
                                   "/usr/bin/chromium", shutil.which("chromium-browser")) if path and Path(path).exists()),
                None)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
SCREENSHOTS = os.environ.get("SIXTYSIX_SCREENSHOTS")

if CHROMIUM is None:
    pytest.skip("no chromium executable (install Debian's package: apt-get install chromium)", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app served by uvicorn in a thread of this process (so the test can look at the real game)."""
    db = tmp_path_factory.mktemp("browser") / "play.sqlite3"
    app = create_app(ServerSettings(db=str(db), agents=("heuristic", "random", "pimc", "ppo"), hint_seconds=0.1,
                                    analysis_seconds=3))
    port = _free_port()
    instance = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not instance.started:
        assert time.time() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield app, f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as playwright:
        try:
            instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        except Exception as error:  # a chromium that cannot start here (missing libraries...)
            pytest.skip(f"chromium at {CHROMIUM} does not start: {error}")
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors: {errors}"


def _shot(page, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=True)


def _live_session(app, page):
    game_id = re.search(r"game=([A-Za-z0-9_-]+)", page.url).group(1)
    return game_id, app.state.house.cache[game_id].session


def _start_game(app, page, base: str, query: str, player: str, opponent: str, length: str | None = None):
    """Open the play page, start a game against ``opponent``; returns the game id and the server's session."""
    page.goto(base + "/?" + query)
    page.fill("#player", player)
    page.select_option("#opponent", opponent)
    if length is not None:
        page.select_option("#length", length)
    page.click("#start-button")
    page.wait_for_selector("#hand .card")
    return _live_session(app, page)


def _wait_for_a_decision_or_the_end(page) -> None:
    page.wait_for_function("document.querySelector('#hand .card.legal, #actions button[data-action]') || "
                           "!document.querySelector('#deal-over').classList.contains('hidden')")


def _wait_until_the_page_shows(page, session) -> None:
    """Wait until the page has drawn the server's current deal and hand: a click's response arrives before the page
    draws it, so the screen may still show the position before it (at a new deal, the last one's cards)."""
    view = session.view()
    page.wait_for_function(
        "([deal, hand]) => document.querySelector('#deal-info').textContent.startsWith('Deal ' + deal + ' ') && "
        "JSON.stringify([...document.querySelectorAll('#hand .card')].map(c => c.dataset.card).sort()) === "
        "JSON.stringify(hand)", arg=[view["deal"], sorted(view["hand"])])


def test_play_a_whole_deal_by_clicks(server, page):
    """Start a Bummerl, ask for a hint, click cards until the deal ends (the screen checked against the server's
    game at every step, and no hidden card in the page), reload mid-deal, then "could I have won?"."""
    app, base = server
    # A fixed deal (seed and seat in the address): the test is the same every run.
    game_id, session = _start_game(app, page, base, "seed=8&seat=0", "Browser Tester", "heuristic")
    clicks = 0
    hinted = reloaded = False
    while True:
        _wait_for_a_decision_or_the_end(page)
        session = app.state.house.cache[game_id].session
        if session.game.is_over:
            break
        _wait_until_the_page_shows(page, session)  # the screen's hand is the server's (or the wait fails)
        shown = page.locator("#hand .card").evaluate_all("cards => cards.map(c => c.dataset.card)")
        assert not card_tokens(page.content()) & hidden_cards(session.game, session.human)
        assert f"talon {session.game.talon_size}" in page.inner_text("#talon-count") or session.game.talon_size == 0
        if not hinted:
            page.click("#hint-button")
            page.wait_for_selector("#hint-table tbody tr")
            assert page.locator("#hint-table tbody tr").count() == len(session.legal_moves())
            assert page.locator("#hand .card .badge").count() >= 1
            _shot(page, "play")
            hinted = True
        if clicks == 2 and not reloaded:  # the page reloads and the game goes on
            page.reload()
            page.wait_for_selector("#hand .card")
            assert sorted(page.locator("#hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")) == sorted(shown)
            reloaded = True
        legal_cards = page.locator("#hand .card.legal")
        target = legal_cards.first if legal_cards.count() else page.locator("#actions button[data-action]").first
        with page.expect_response(lambda response: response.url.endswith("/move")) as answer:
            if clicks == 1 and legal_cards.count():  # once by keyboard: focus the card, press Enter
                target.focus()
                page.keyboard.press("Enter")
            else:
                target.click()
        assert answer.value.status == 200
        expected = sorted(app.state.house.cache[game_id].session.view()["hand"])
        page.wait_for_function("expected => JSON.stringify([...document.querySelectorAll('#hand .card')]"
                               ".map(c => c.dataset.card).sort()) === JSON.stringify(expected)", arg=expected)
        clicks += 1
    page.wait_for_selector("#deal-over:not(.hidden)")
    result = session.game.result
    headline = page.inner_text("#deal-result")
    assert (("You win" in headline) if result.winner == session.human else ("wins" in headline or "Not scored" in headline))
    assert f"{result.points[session.human]}" in page.inner_text("#deal-points")
    assert reloaded and clicks >= 3
    page.click("#analysis-button")
    page.wait_for_selector("#analysis-table tbody tr", timeout=30000)
    assert page.locator("#analysis-table tbody tr").count() == len(session.deal_decisions(1))
    assert page.inner_text("#analysis-headline").strip()
    _shot(page, "could-i-have-won")
    if not session.session_over:
        page.click("#next-button")
        page.wait_for_function("document.querySelector('#deal-over').classList.contains('hidden')")
        assert "Deal 2" in page.inner_text("#deal-info")

    # the finished deal in the replay viewer, stepped back and forth
    page.goto(f"{base}/replay?game={game_id}&deal=1")
    page.wait_for_selector(".open-table [data-seat='0'] .hand .card")
    frames = len(session.game.history) if session.game.is_over else len(session.deal_record(1)["actions"])
    assert page.inner_text("#position") == f"move 0 of {frames}"
    page.click("#forward")
    page.click("#forward")
    page.click("#back")
    assert page.inner_text("#position") == f"move 1 of {frames}"
    page.click("#last")
    assert "wins" in page.inner_text(".frame-text") or "not scored" in page.inner_text(".frame-text")
    page.click("#first")
    page.click("#forward")
    page.click("#forward")
    page.click("#forward")
    _shot(page, "replay")

    page.goto(f"{base}/history")
    page.wait_for_selector("#agents tbody tr")
    row = page.inner_text("#agents tbody tr")
    assert "heuristic" in row
    _shot(page, "history")


def test_history_shows_a_tied_single_deal_as_not_scored(server, page):
    """R15: a single deal tied at 65:65 has no winner; the history lists it as not scored, a won one as won."""
    app, base = server
    store = app.state.store
    for game_id, winner in (("tiedgame01", None), ("wongame001", "you")):
        store.create_game(game_id, "Tie Tester", "random", {}, bummerl=False)
        store.save_game(game_id, {}, True, winner, [], "Tie Tester", "random", 0)
    page.goto(f"{base}/history?player=Tie%20Tester")
    page.wait_for_selector("#games tbody tr")
    states = sorted(page.locator("#games tbody tr td:nth-child(3)").all_inner_texts())
    assert states == ["not scored", "won"]


def test_watch_two_agents_step_and_autoplay(server, page):
    app, base = server
    page.goto(base + "/watch")
    page.select_option("#agent0", "heuristic")
    page.select_option("#agent1", "random")
    page.fill("#seed", "2024")
    page.click("#deal-button")
    page.wait_for_selector(".open-table [data-seat='0'] .hand .card")
    assert page.locator(".open-table [data-seat='0'] .hand .card").count() == 6
    page.click("#step")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 1 ')")
    page.click("#step")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 2 ')")
    page.click("#back")
    assert page.inner_text("#position").startswith("move 1 of 2")
    page.evaluate("document.querySelector('#speed').value = document.querySelector('#speed').max")
    page.click("#auto")
    page.wait_for_function("document.querySelector('#position').textContent.includes('deal over')", timeout=40000)
    assert page.locator("#log li").count() >= 12
    page.click("#back")
    page.click("#back")
    _shot(page, "watch")


def test_agents_that_cannot_play_the_rules_chosen_are_greyed_out(server, page):
    """``ppo`` (a network of the standard rules, R19-R20) is offered, but a game of it under scharf is refused with a
    400: the play and watch pages grey it out under the rules it cannot play, and move a select left on it."""
    app, base = server
    page.goto(base + "/")
    page.wait_for_selector("#opponent option[value='ppo']", state="attached")
    page.select_option("#opponent", "ppo")
    page.select_option("#rules", "scharf")
    assert page.eval_on_selector("#opponent option[value='ppo']", "o => o.disabled")
    assert page.inner_text("#opponent option[value='ppo']") == "ppo (plays standard)"
    assert page.input_value("#opponent") == "heuristic"  # the first agent that plays scharf
    assert not page.eval_on_selector("#opponent option[value='random']", "o => o.disabled")
    page.select_option("#rules", "standard")
    assert not page.eval_on_selector("#opponent option[value='ppo']", "o => o.disabled")
    assert page.inner_text("#opponent option[value='ppo']") == "ppo"
    page.goto(base + "/watch")
    page.wait_for_selector("#agent0 option[value='ppo']", state="attached")
    page.select_option("#agent0", "ppo")
    page.select_option("#rules", "paderborn")
    for select in ("#agent0", "#agent1"):
        assert page.eval_on_selector(f"{select} option[value='ppo']", "o => o.disabled"), select
    assert page.input_value("#agent0") == "heuristic" and page.input_value("#agent1") == "pimc"
    page.fill("#seed", "7")
    page.click("#deal-button")
    page.click("#step")  # a paderborn deal the server plays: no 400 on the way
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 1 ')")


def test_watch_with_a_drawn_seed_steps_through_the_deal_it_shows(server, page):
    """A seed the server draws comes back to the page and with every step: it must be one JavaScript holds exactly,
    or the steps would play another deck (R4) than the first frame shows. A typed seed it cannot hold is refused."""
    from sixtysix_env import Game, Rules
    from sixtysix_env.cards import CARD_NAMES

    app, base = server
    page.goto(base + "/watch")
    for _ in range(3):
        page.fill("#seed", "")
        page.click("#deal-button")
        page.wait_for_function("document.querySelector('#seed').value !== ''")
        seed = int(page.input_value("#seed"))
        page.wait_for_selector(".open-table [data-seat='0'] .hand .card")
        shown = {seat: sorted(page.locator(f".open-table [data-seat='{seat}'] .hand .card").evaluate_all(
            "cards => cards.map(card => card.dataset.card)")) for seat in (0, 1)}
        game = Game.deal(Rules(), seed=seed, dealer=seed % 2)
        assert shown == {seat: sorted(CARD_NAMES[card] for card in range(24) if game.hands[seat] >> card & 1)
                         for seat in (0, 1)}, seed
    page.fill("#seed", str(2**53 + 1))
    page.click("#deal-button")
    page.wait_for_function("document.body.innerText.includes('seed must be a whole number')")


def test_replay_viewer_loads_a_record_file_and_a_deals_json_entry(server, page, tmp_path):
    """The replay page reads a JSON record (sixtysix_env/record.py) and entry N of a tournament's deals.json (R4
    decks; two agents play it), and steps through them."""
    import json

    from sixtysix_env import Game, Rules
    from sixtysix_env.record import game_to_record

    app, base = server
    game = _replay_a_random_deal(page, base, tmp_path, Rules(), seed=77, dealer=1)
    assert not page.is_visible(".open-table [data-seat='2']")  # two seats drawn for a two-player deal
    page.click("#last")
    assert page.inner_text("#position") == f"move {len(game.history)} of {len(game.history)}"
    page.keyboard.press("ArrowLeft")
    assert page.inner_text("#position") == f"move {len(game.history) - 1} of {len(game.history)}"

    deals = {"format": "sixtysix-deals", "version": 1, "rules": Rules().to_dict(),
             "deals": [{"dealer": 0, "deck": game_to_record(Game.deal(Rules(), seed=n))["deck"]} for n in range(3)]}
    deals_path = tmp_path / "deals.json"
    deals_path.write_text(json.dumps(deals))
    page.set_input_files("#file", str(deals_path))
    page.fill("#index", "3")
    page.click("#load-button")
    page.wait_for_function("document.querySelector('#position').textContent === 'move 0 of ' + "
                           "document.querySelector('#slider').max")
    hands = page.locator(".open-table [data-seat='1'] .hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
    third = Game.deal(Rules(), deck=deals["deals"][2]["deck"], dealer=0)
    assert sorted(hands) == sorted(game_to_record(third)["deck"][i] for i in (0, 1, 2, 6, 7, 8))  # forehand's cards (R4)


def test_replay_viewer_shows_a_three_player_record(server, page, tmp_path):
    """R21: a three-player record (``sixtysix tournament --rules three --records``) is drawn with three open hands
    of eight cards, no talon and the trump named by forehand; stepping shows each trick's three cards."""
    from sixtysix_env import Rules
    from sixtysix_env.cards import CARD_NAMES
    from sixtysix_env.record import game_to_record

    app, base = server
    game = _replay_a_random_deal(page, base, tmp_path, Rules.preset("three"), seed=21, dealer=0)
    hands = [page.locator(f".open-table [data-seat='{seat}'] .hand .card").evaluate_all(
        "cs => cs.map(c => c.dataset.card)") for seat in range(3)]
    assert sorted(card for hand in hands for card in hand) == sorted(game_to_record(game)["deck"])
    assert [len(hand) for hand in hands] == [8, 8, 8] and page.is_visible(".open-table [data-seat='2']")
    assert "trump not named yet" in page.inner_text(".open-table .count")
    first_trick = _moves_to_first_trick(game)
    page.fill("#slider", str(first_trick))
    page.wait_for_function(f"document.querySelector('#position').textContent === 'move {first_trick} of "
                           f"{len(game.history)}'")
    shown = page.locator(".open-table .trick-cards .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
    assert shown == [CARD_NAMES[card] for card in game.tricks[0][1]]  # the first trick, in play order
    count = page.inner_text(".open-table .count")
    assert count.startswith("trump ") and "not named" not in count and "talon" not in count
    _shot(page, "replay_three")


def _replay_a_random_deal(page, base: str, tmp_path, rules, seed: int, dealer: int):
    """Play a deal of ``rules`` at random, load its JSON record into the replay page and check it shows move 0;
    returns the finished game."""
    import json
    import random

    from sixtysix_env import Game
    from sixtysix_env.record import game_to_record

    game = Game.deal(rules, seed=seed, dealer=dealer)
    rng = random.Random(seed)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    record_path = tmp_path / f"deal_{seed}.json"
    record_path.write_text(json.dumps(game_to_record(game)))
    page.goto(base + "/replay")
    page.set_input_files("#file", str(record_path))
    page.click("#load-button")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 0 of')")
    assert page.inner_text("#position") == f"move 0 of {len(game.history)}"
    return game


def _moves_to_first_trick(game) -> int:
    """How many actions of ``game`` it takes until its first trick is finished."""
    from sixtysix_env import Game

    replay = Game.deal(game.rules, deck=list(game.deck), dealer=game.dealer)
    for number, action in enumerate(game.history, start=1):
        replay.apply(action)
        if replay.tricks:
            return number
    raise AssertionError("the deal has no finished trick")


def test_play_a_bummerl_to_its_end_by_clicks(server, page):
    """A whole Bummerl (R17: to 7 game points) by clicks against `random`: every deal played out, "next deal"
    between them, until the page announces who won the Bummerl, which matches the server's session."""
    app, base = server
    game_id, session = _start_game(app, page, base, "seed=21&seat=1", "Bummerl Tester", "random", "bummerl")
    deals = 1
    for _ in range(400):  # a Bummerl against random ends after a few deals; the bound only stops a runaway loop
        _wait_for_a_decision_or_the_end(page)
        session = app.state.house.cache[game_id].session
        if session.game.is_over:
            page.wait_for_selector("#deal-over:not(.hidden)")
            if session.session_over:
                break
            page.click("#next-button")
            deals += 1
            page.wait_for_function("n => document.querySelector('#deal-over').classList.contains('hidden') && "
                                   "document.querySelector('#deal-info').textContent.includes('Deal ' + n)", arg=deals)
            continue
        _wait_until_the_page_shows(page, session)
        assert not card_tokens(page.content()) & hidden_cards(session.game, session.human)
        legal_cards = page.locator("#hand .card.legal")
        target = legal_cards.first if legal_cards.count() else page.locator("#actions button[data-action]").first
        with page.expect_response(lambda response: response.url.endswith("/move")) as answer:
            target.click()
        assert answer.value.status == 200
    assert session.session_over, "the Bummerl did not end"
    headline = page.inner_text("#deal-result")
    assert "You win the Bummerl!" in headline or "The Bummerl goes to random" in headline
    loser_score = min(session.match.bummerl_history[-1].scores)
    assert ("Schneider" in headline) is (loser_score == 0)  # R17: a Bummerl lost with no game point counts double
    assert page.locator("#next-button.hidden").count() == 1
    assert deals >= 2


def test_a_second_tab_recovers_from_a_stale_view_and_names_an_unknown_game(server, page):
    """Two tabs on one game: a move (or hint) from the tab whose view the game has left is refused (409), and that
    tab then shows the game as it is. A name in any script is taken. An unknown game id in the address is named,
    and the game this browser plays is resumed instead of forgotten."""
    app, base = server
    game_id, session = _start_game(app, page, base, "seed=12&seat=0", "Jürgen", "heuristic")
    assert "Jürgen" in page.inner_text("header.top .who")
    other = page.context.new_page()
    other.goto(f"{base}/?game={game_id}")
    other.wait_for_selector("#hand .card.legal")
    _wait_for_a_decision_or_the_end(page)
    with page.expect_response(lambda response: response.url.endswith("/move")) as answer:
        page.locator("#hand .card.legal").first.click()
    assert answer.value.status == 200
    _wait_until_the_page_shows(page, app.state.house.cache[game_id].session)
    with other.expect_response(lambda response: response.url.endswith("/move")) as stale:
        other.locator("#hand .card.legal").first.click()
    assert stale.value.status == 409
    other.wait_for_selector("#error:has-text('moved on since your view')")
    _wait_until_the_page_shows(other, app.state.house.cache[game_id].session)  # redrawn without a reload
    other.close()

    page.goto(f"{base}/?game=doesnotexist123")
    page.wait_for_selector("#error:has-text('doesnotexist123')")
    page.wait_for_selector("#hand .card")  # the stored game, resumed
    assert f"game={game_id}" in page.url


def test_replay_buttons_and_deal_numbers_say_where_they_stop(server, page, tmp_path):
    import json

    from sixtysix_env import Game, Rules
    from sixtysix_env.record import game_to_record

    _app, base = server
    deals = {"format": "sixtysix-deals", "version": 1, "rules": Rules().to_dict(),
             "deals": [{"dealer": 0, "deck": game_to_record(Game.deal(Rules(), seed=n))["deck"]} for n in range(3)]}
    path = tmp_path / "three_deals.json"
    path.write_text(json.dumps(deals))
    page.goto(f"{base}/replay")
    page.set_input_files("#file", str(path))
    page.fill("#index", "9")
    page.click("#load-button")
    page.wait_for_selector("#error:has-text('holds deals 1 to 3: deal number 9 is not one of them')")
    page.fill("#index", "1")
    page.click("#load-button")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 0 of')")
    assert page.is_disabled("#first") and page.is_disabled("#back") and not page.is_disabled("#forward")
    page.click("#last")
    assert page.is_disabled("#forward") and page.is_disabled("#last") and not page.is_disabled("#back")


@pytest.mark.parametrize("width", [390, 320])
def test_the_pages_fit_a_phone_held_upright(server, browser, width):
    """390 px wide: nothing scrolls sideways (the table's middle row, the header and the history table were wider).
    320 px (the smallest phones): the replay's file chooser and the grid column of a wide table were wider."""
    _app, base = server
    context = browser.new_context(viewport={"width": width, "height": 844})
    narrow = context.new_page()
    narrow.goto(base + "/?seed=3&seat=0")
    narrow.fill("#player", "Narrow")
    narrow.click("#start-button")
    narrow.wait_for_selector("#hand .card")
    widths = {"play": narrow.evaluate("document.documentElement.scrollWidth")}
    for path in ("watch", "history", "history?player=Browser Tester", "replay"):
        narrow.goto(f"{base}/{path}")
        narrow.wait_for_load_state("networkidle")
        widths[path] = narrow.evaluate("document.documentElement.scrollWidth")
    context.close()
    assert all(scrolled <= width for scrolled in widths.values()), widths


def test_keyboard_play_keeps_the_focus_in_the_hand_and_moves_are_announced(server, page):
    """After a move made from the keyboard the focus went to the page's start; the opponent's card backs had no
    text, and no live region told a screen reader what was played."""
    app, base = server
    game_id, _session = _start_game(app, page, base, "seed=21&seat=0", "Keys", "random")
    page.wait_for_selector("#hand .card.legal")
    page.locator("#hand .card.legal").first.focus()
    with page.expect_response(lambda response: response.url.endswith("/move")):
        page.keyboard.press("Enter")
    session = app.state.house.cache[game_id].session
    _wait_until_the_page_shows(page, session)
    if session.human_to_move:
        assert page.evaluate("Boolean(document.activeElement.closest('#hand, #actions'))")
    assert page.inner_text("#announce").strip()  # the latest move, in words
    size = session.view()["opponent_hand_size"]
    assert page.get_attribute("#opponent-hand", "aria-label") == f"the opponent holds {size} cards"
    assert page.locator("#replay-link button").count() == 0  # one Tab stop: a link, not a button inside a link


def _requests_to(page, suffix: str, method: str = "POST") -> list:
    """The requests the page sends to an address ending in ``suffix`` from now on (a list that fills as they go)."""
    sent = []
    page.on("request", lambda request: sent.append(request) if request.method == method and
            request.url.split("?")[0].endswith(suffix) else None)
    return sent


def test_overlapping_clicks_send_one_request(server, page):
    """Found by a browser sweep: a Step pressed while Auto-play's step was on its way sent the same move list twice
    (the deal stuck on a 400 "illegal action"); a double-clicked Deal dealt two games, one left in progress for ever;
    a Hint asked while a move was on its way got a 409 "stale view"."""
    app, base = server
    page.goto(base + "/watch")
    page.wait_for_selector("#rules option", state="attached")
    page.fill("#seed", "78")
    page.click("#deal-button")
    page.wait_for_selector(".open-table [data-seat='0'] .hand .card")
    steps = _requests_to(page, "/api/watch/step")
    page.evaluate("() => { step(); step(); }")  # what the timer and the button did, in one go
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 1 of 1')")
    page.click("#step")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 2 of 2')")
    assert len(steps) == 2 and [len(request.post_data_json["moves"]) for request in steps] == [0, 1]

    page.goto(base + "/?seed=31&seat=0")
    page.fill("#player", "Dora")
    deals = _requests_to(page, "/api/games")
    page.dblclick("#start-button")
    page.wait_for_selector("#hand .card.legal")
    page.wait_for_timeout(300)  # room for a second request, had the page sent one
    assert len(deals) == 1
    assert len(app.state.house.store.history("Dora")["games"]) == 1

    hints = _requests_to(page, "/hint")
    with page.expect_response(lambda response: response.url.endswith("/move")) as moved:
        page.evaluate("() => { document.querySelector('#hand .card.legal').click(); askHint(); }")
    assert moved.value.status == 200
    _wait_for_a_decision_or_the_end(page)
    assert hints == [] and page.locator("#error:not(.hidden)").count() == 0


def test_a_seed_link_deals_a_new_game_and_a_game_can_be_left_mid_deal(server, page):
    """A /?seed=N link was replaced by the stored game and its seed never sent; mid-deal there was no way to start
    another game. Leaving keeps the game resumable from the history."""
    app, base = server
    game_id, _ = _start_game(app, page, base, "seed=40&seat=0", "Erik", "random")
    assert page.evaluate("document.activeElement.matches('#hand .card.legal, #actions button')")  # keyboard goes on
    page.goto(base + "/?seed=41&seat=1")
    page.wait_for_selector("#start:not(.hidden)")
    assert page.locator("#game.hidden").count() == 1
    page.fill("#player", "Erik")
    with page.expect_request(lambda request: request.url.endswith("/api/games")) as sent:
        page.click("#start-button")
    assert sent.value.post_data_json["seed"] == 41 and sent.value.post_data_json["seat"] == 1
    page.wait_for_selector("#hand .card")
    assert _live_session(app, page)[1].settings.seed == 41
    page.click("#leave-button")
    page.wait_for_selector("#start:not(.hidden)")
    page.goto(base + "/history?player=Erik")
    page.wait_for_selector("#games tbody tr")
    assert page.locator("#games a:has-text('resume')").count() == 2  # both games, left mid-deal, can be resumed
    assert game_id in page.inner_html("#games")


def test_history_and_replay_name_bad_input_and_keep_the_keys_of_a_drop_down(server, page, tmp_path):
    """A name with "/" got a bare "Not Found" and left the previous player's table on screen, and ".." too (the
    browser tidies the address); a file holding null showed a JavaScript error; the replay's arrow keys stepped
    through the deal while they also changed the agent drop-down that had the focus."""
    from sixtysix_env import Game, Rules
    from sixtysix_env.record import game_to_record

    app, base = server
    _start_game(app, page, base, "seed=50&seat=0", "Fritz", "random")
    page.goto(base + "/history?player=Fritz")
    page.wait_for_selector("#summary:not(.hidden)")
    for name, message in (("a/b", "bad player name"), ("..", "not only dots and spaces")):
        page.fill("#player", name)
        page.click("#show-button")
        page.wait_for_selector(f"#error:has-text('{message}')")
        assert page.locator("#summary.hidden").count() == 1, name

    page.goto(base + "/replay")
    (tmp_path / "null.json").write_text("null")
    page.set_input_files("#file", str(tmp_path / "null.json"))
    page.click("#load-button")
    page.wait_for_selector("#error:has-text('bad game record')")
    game = Game.deal(Rules(), seed=5, dealer=0)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    (tmp_path / "record.json").write_text(json.dumps(game_to_record(game)))
    page.set_input_files("#file", str(tmp_path / "record.json"))
    page.click("#load-button")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 0 ')")
    page.focus("#agent0")
    before = page.input_value("#agent0")
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#position").startswith("move 0 ")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowRight")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 1 ')")
    assert before  # the drop-down kept its arrow key (its own business), the replay did not move with it


def test_a_request_the_server_never_answers_is_named(server, page):
    """The page showed the browser's own "Failed to fetch" when the server was gone."""
    _app, base = server
    page.goto(base + "/")
    page.wait_for_selector("#opponent option", state="attached")
    page.fill("#player", "Gone")
    page.route("**/api/games", lambda route: route.abort())
    page.click("#start-button")
    page.wait_for_selector("#error:has-text('the server did not answer')")
    assert page.locator("#start-button:not([disabled])").count() == 1  # and Deal can be pressed again


def test_the_replay_page_greys_out_agents_that_cannot_play_a_deal_files_rules(server, page, tmp_path):
    """A deal file is played by the two agents chosen; ``ppo`` (a network of the standard rules, R19-R20) under a
    paderborn file got the server's 400 only after Load. Choosing the file greys it out; a standard file does not."""
    from eval.deals import generate_deals, save_deals
    from sixtysix_env import Rules

    _app, base = server
    page.goto(base + "/replay")
    page.wait_for_selector("#agent0 option[value='ppo']", state="attached")
    page.select_option("#agent0", "ppo")
    for preset, greyed in (("paderborn", True), ("standard", False)):
        rules = Rules.preset(preset)
        path = tmp_path / f"{preset}.json"
        save_deals(path, generate_deals(2, 1, rules), rules)
        page.set_input_files("#file", str(path))
        page.wait_for_function("greyed => document.querySelector('#agent1 option[value=\"ppo\"]').disabled === greyed",
                               arg=greyed)
        assert page.eval_on_selector("#agent0 option[value='ppo']", "o => o.disabled") is greyed, preset
    assert page.input_value("#agent0") == "heuristic"  # moved off ppo under paderborn
    page.click("#load-button")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith('move 0 ')")
