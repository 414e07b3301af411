"""A check for the commands that refuse bad options before their work: the work is replaced by a failure, so a
refusal that comes after it (or never) fails the test, not only one with the wrong words."""

from __future__ import annotations

import pytest


def refused_before(monkeypatch, capsys, main, arguments: list[str], owner, work: str, what: str) -> str:
    """Run ``main(arguments)`` with ``owner.work`` replaced by a failure naming ``what`` (the work it would start);
    the command must exit with code 2 (argparse's usage error). Returns its standard error."""
    monkeypatch.setattr(owner, work, lambda *args, **kwargs: pytest.fail(what))
    with pytest.raises(SystemExit) as stop:
        main(arguments)
    assert stop.value.code == 2
    return capsys.readouterr().err
