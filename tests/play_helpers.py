"""Shared test helpers: a checked play loop for the agent tests (every choice must be legal; an optional hook sees
each decision), a random human's deal in a play session, the Python engine's account of a network continuation, the
engine loaded from its source for comparisons with the compiled one, a script run in a fresh process (for what a
process loads once), and an opponent that closes the talon at once."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from agents.solver import solve_value
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.game import FOLLOW, LEAD


def play_checked_deal(agents, rules: Rules, seed: int, dealer: int, on_decision=None) -> Game:
    """One deal between ``agents`` (seat order); ``on_decision(agent, infoset, action)`` is called before each
    action is applied. Returns the finished game."""
    game = Game.deal(rules, seed=seed, dealer=dealer)
    for player, agent in enumerate(agents):
        agent.start_deal(player, rules)
    while not game.is_over:
        player = game.to_move
        infoset = InformationSet(game, player)
        action = agents[player].act(infoset)
        assert action in game.legal_actions(), (agents[player], game.render(), action)
        if on_decision is not None:
            on_decision(agents[player], infoset, action)
        game.apply(action)
    return game


def play_session_deal(session, rng=None, check=None) -> None:
    """Plays a human-vs-agent session's current deal to its end (two or three players: both sessions have
    ``run_agent``), the human's moves drawn by ``rng`` from his legal ones, or his first legal move without one;
    ``check(session)`` sees each position where the human is to move."""
    session.run_agent()
    while not session.game.is_over:
        if check:
            check(session)
        legal = session.legal_moves()
        session.play(legal[0] if rng is None else rng.choice(legal))
        session.run_agent()


def heuristic_self_play_to_lead(seed: int, tricks: int) -> tuple[bool, bool, list[int]]:
    """Heuristic self-play of deal ``seed`` (dealer ``seed % 2``, the players seeded ``seed`` and ``seed + 1``, as
    bench.inference_fallback plays it without deviation) up to the lead of the viewer (seat ``seed % 2``) after
    ``tricks`` tricks: (whether the viewer comes to that lead, whether his opponent could exchange (R9) or announce
    (R11) on the way, the actions played)."""
    from agents.registry import make_agent
    from sixtysix_env.actions import EXCHANGE, MARRY_BASE

    rules = Rules()
    game = Game.deal(rules, seed=seed, dealer=seed % 2)
    players = [make_agent("heuristic", seed=seed + seat) for seat in (0, 1)]
    for seat, player in enumerate(players):
        player.start_deal(seat, rules)
    viewer, could = seed % 2, False
    while not game.is_over:
        if game.to_move == viewer and game.stage == LEAD and len(game.tricks) == tricks:
            return True, could, list(game.history)
        legal = game.legal_actions()
        could |= game.to_move != viewer and (EXCHANGE in legal or any(MARRY_BASE <= a < EXCHANGE for a in legal))
        game.apply(players[game.to_move].act(InformationSet(game, game.to_move)))
    return False, could, list(game.history)


def network_playout(game: Game, action: int, agent, me: int, solve_closed: bool = False) -> int:
    """Game points (R16) for ``me`` when ``action`` is played in ``game`` (unchanged) and ``agent`` then plays both
    seats from each mover's own view, a phase 2 after the talon's exhaustion (R8) solved exactly, and with
    ``solve_closed`` one after a closing (R10) too: the Python engine's account of a continuation label."""
    game = game.clone()
    game.apply(action)
    while not game.is_over:
        if game.phase2 and (solve_closed or game.closed_by is None) and game.stage in (LEAD, FOLLOW):
            value = solve_value(game)  # for the player to move
            return value if game.current_player == me else -value
        legal = game.legal_actions()
        game.apply(legal[0] if len(legal) == 1 else agent.act(InformationSet(game, game.current_player)))
    return game.result.returns()[me]


_SOURCE_MODULE_NAME = "sixtysix_env._game_source_for_tests"


def source_game_module():
    """game.py loaded from source under another name (its relative imports still resolve in the package): the
    pure Python engine, whichever backend ``sixtysix_env`` itself uses."""
    module = sys.modules.get(_SOURCE_MODULE_NAME)
    if module is None:
        path = Path(__file__).resolve().parent.parent / "sixtysix_env" / "game.py"
        spec = importlib.util.spec_from_file_location(_SOURCE_MODULE_NAME, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


def assert_runs_in_a_fresh_process(script: str) -> None:
    """Run the Python ``script`` in a new interpreter at the repository's root; it must exit 0 (its asserts hold).
    For what a process loads once, which an earlier test in this process may already have loaded."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr[-2000:]


class ClosesAtOnce:
    """``greedy``, but closing the talon (R10) whenever it may: as forehand at his very first lead, so the other
    seat's first decision is already one that comes after a closing (an endgame search's case)."""

    def __init__(self):
        from agents.registry import make_agent

        self.greedy = make_agent("greedy", seed=1)

    def seed(self, seed):
        self.greedy.seed(seed)

    def start_deal(self, player, rules):
        self.greedy.start_deal(player, rules)

    def act(self, infoset):
        from sixtysix_env.actions import CLOSE

        return CLOSE if CLOSE in infoset.legal_actions else self.greedy.act(infoset)
