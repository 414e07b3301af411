"""The browser app's test server (play/web/server.py), shared by the web test files. Import it after
``pytest.importorskip("httpx")`` and ``pytest.importorskip("starlette")``: the app needs both."""

from __future__ import annotations

import warnings

with warnings.catch_warnings():  # starlette's notice about httpx versions is not ours to fix
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from play.web.server import ServerSettings, create_app

JSON = {"Content-Type": "application/json"}


def web_settings(tmp_path, agents, **overrides) -> ServerSettings:
    """A test server's settings: its database in ``tmp_path``, these agents, short hints and analyses."""
    return ServerSettings(db=str(tmp_path / "play.sqlite3"), agents=agents, hint_seconds=0.05, analysis_seconds=2,
                          **overrides)


def web_client(tmp_path, agents, **overrides) -> TestClient:
    """A client of an app with :func:`web_settings`, speaking to it as a loopback browser does."""
    return TestClient(create_app(web_settings(tmp_path, agents, **overrides)), base_url="http://127.0.0.1")


def api_error(response, status: int, *words: str) -> str:
    """The error message of an API answer with ``status``, which holds each of ``words``."""
    assert response.status_code == status, (response.status_code, response.text)
    message = response.json()["error"]
    for word in words:
        assert word in message, message
    return message
