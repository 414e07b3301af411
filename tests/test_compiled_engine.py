"""The optional compiled engine (sixtysix_env/compile.py): the backend switch, and — when a build is present — that
the mypyc build of game.py plays exactly like the source (same legal actions, states and results, R3–R16)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import sixtysix_env
from sixtysix_env import Game, Rules
from sixtysix_env.game import _clone

from play_helpers import source_game_module

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ("standard", "paderborn", "scharf")


_SOURCE = source_game_module()
ATTRIBUTES = _SOURCE.Game.__slots__  # a compiled (native) class has no __slots__ to read


def _state(game) -> tuple:
    return tuple(getattr(game, name) if not isinstance(getattr(game, name), list) else list(getattr(game, name))
                 for name in ATTRIBUTES if name != "rules")


def test_clone_copies_every_attribute_and_the_annotations_list_them_all():
    # One concept, one place: __slots__, the annotations mypyc compiles from, and _clone must agree.
    annotated = [name for name, kind in _SOURCE.Game.__annotations__.items()
                 if not name.startswith("_") and not str(kind).startswith("ClassVar")]  # the game's facts: per class
    assert sorted(annotated) == sorted(ATTRIBUTES)
    game = Game.deal(Rules.preset("paderborn"), seed=3)
    game.apply(game.legal_actions()[0])
    copy = _clone(game)
    for name in ATTRIBUTES:
        value = getattr(game, name)
        assert getattr(copy, name) == value, name
        if isinstance(value, list) and name != "stock":
            assert getattr(copy, name) is not value, f"{name} must be copied, not shared"


def test_the_backend_is_reported_and_can_be_forced_to_pure_python():
    assert sixtysix_env.ENGINE_BACKEND in ("compiled", "python")
    assert sixtysix_env.ENGINE_BACKEND == ("compiled" if sixtysix_env.game.__file__.endswith((".so", ".pyd")) else "python")
    code = "import sixtysix_env; print(sixtysix_env.ENGINE_BACKEND, sixtysix_env.game.__file__)"
    forced = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "SIXTYSIX_PURE_PYTHON": "1"}, check=True)
    backend, path = forced.stdout.split()
    assert backend == "python" and path.endswith("game.py")


@pytest.mark.skipif(sixtysix_env.ENGINE_BACKEND != "compiled", reason="no compiled engine built (make compile)")
@pytest.mark.parametrize("preset", PRESETS)
def test_the_compiled_engine_plays_exactly_like_the_source(preset):
    pure = _SOURCE
    rules = Rules.preset(preset)
    rng = random.Random(preset)
    for deal in range(300):
        compiled_game = Game.deal(rules, seed=deal, dealer=deal % 2)
        source_game = pure.Game.deal(rules, seed=deal, dealer=deal % 2)
        while not compiled_game.is_over:
            legal = compiled_game.legal_actions()
            assert legal == source_game.legal_actions()
            action = rng.choice(legal)
            if rng.random() < 0.05:  # the same errors for illegal actions
                bad = rng.randrange(37)
                if bad not in legal:
                    with pytest.raises(ValueError) as compiled_error:
                        compiled_game.apply(bad)
                    with pytest.raises(ValueError) as source_error:
                        source_game.apply(bad)
                    assert str(compiled_error.value) == str(source_error.value)
            compiled_game.apply(action)
            source_game.apply(action)
            assert _state(compiled_game) == _state(source_game)
            if rng.random() < 0.1:
                assert _state(compiled_game.clone()) == _state(compiled_game)
        assert source_game.is_over and compiled_game.result == source_game.result


def test_a_stale_build_is_never_used(tmp_path):
    """An edited game.py is not shadowed by an old extension: the stamp must match, else the source is loaded."""
    package = tmp_path / "sixtysix_env"
    package.mkdir()
    for path in (ROOT / "sixtysix_env").glob("*.py"):
        (package / path.name).write_bytes(path.read_bytes())
    # A fake 'extension' that would fail loudly if it were imported, and a stamp of another source.
    (package / "game.cpython-311-x86_64-linux-gnu.so").write_bytes(b"not an extension")
    (package / "game.build-stamp").write_text("0" * 64 + "\n")
    code = "import sixtysix_env; print(sixtysix_env.ENGINE_BACKEND, sixtysix_env.game.__file__)"
    completed = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True,
                               cwd=tmp_path, env={**{key: value for key, value in os.environ.items()
                                                      if key != "SIXTYSIX_PURE_PYTHON"}, "PYTHONPATH": str(tmp_path)})
    assert completed.returncode == 0, completed.stderr
    backend, path = completed.stdout.split()
    assert backend == "python" and path.endswith("game.py")
    assert "does not match sixtysix_env/game.py" in completed.stderr


def test_the_optional_build_skips_cleanly_without_a_compiler(monkeypatch, capsys):
    from sixtysix_env import compile as compile_module

    monkeypatch.setattr(compile_module.shutil, "which", lambda name: None)
    monkeypatch.setattr(compile_module, "build", lambda quiet=False: pytest.fail("must not build without a compiler"))
    assert compile_module.main(["--optional"]) == 0
    assert "no C compiler found" in capsys.readouterr().out
