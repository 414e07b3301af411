"""The commands the documents show still run: every ``sixtysix ...`` and ``python -m ...`` line of a code block in
README.md and docs/*.md is parsed by the tool it names (nothing is played), and every agent it names is built.

A figure is only as good as the command that reproduces it (docs/strength.md quotes one beside every figure), and an
option renamed or an agent parameter removed would otherwise leave those commands failing unnoticed. Templates (a
command with ``$VAR``, ``[optional]``, ``...``, ``<...>`` or an upper-case placeholder such as ``--seed S``) are not
commands and are left out, as are agents whose files a run makes (``runs/``, ``results/``): those are checked by name
only.
"""

from __future__ import annotations

import argparse
import importlib
import re
import shlex
from pathlib import Path

import pytest

from agents.registry import make_agent, parse_spec, registered_names, resolve_alias, split_agent_list

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# An environment prefix (OMP_NUM_THREADS=1) or a `nice -n 10` may stand before the tool.
COMMAND_START = re.compile(r"^(?:[A-Z_]+=\S+ |nice -n \d+ )*(sixtysix|(?:\.venv/bin/)?python -m [\w.]+) ")
SHELL_TAIL = re.compile(r"\s(?:#|2>|>|\||&&|;).*$")  # a comment, redirection, pipe or next command ends the command
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*$")  # S, SPEC, RUN, KIND: a word the reader fills in
RUN_FILES = ("runs/", "results/")  # folders a run writes into: their files are not in the repository


def documented_commands(path: Path) -> list[tuple[int, str]]:
    """(line number, command) of every command line of ``path``'s fenced code blocks, continuation lines joined and
    a trailing comment, redirection, pipe or ``&&`` cut off."""
    commands, in_block = [], False
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        if line.startswith("```"):
            in_block = not in_block
        elif in_block:
            start = index
            line = line.removeprefix("$ ")
            while line.endswith("\\") and index + 1 < len(lines):
                index += 1
                line = line[:-1] + " " + lines[index].strip()
            if COMMAND_START.match(line):
                commands.append((start + 1, SHELL_TAIL.sub("", line).strip()))
        index += 1
    return commands


def is_template(arguments: list[str]) -> bool:
    """Whether the command is a pattern for the reader to fill in rather than one to run as written."""
    for argument in arguments:
        if any(mark in argument for mark in ("$", "[", "...", "<")):
            return True
        pieces = [argument, *(piece.split("=", 1)[1] for piece in re.split(r"[,:]", argument) if "=" in piece)]
        if any(PLACEHOLDER.match(piece) for piece in pieces):
            return True
    return False


ALL_COMMANDS = [(path, line, command) for path in DOCUMENTS for line, command in documented_commands(path)]
CASES = [case for case in ALL_COMMANDS if not is_template(shlex.split(case[2]))]


class Parsed(Exception):
    """Raised in place of running a tool once its own parser has read the command."""

    def __init__(self, namespace: argparse.Namespace):
        super().__init__("parsed")
        self.namespace = namespace


def parse_only(monkeypatch: pytest.MonkeyPatch, arguments: list[str]) -> argparse.Namespace | None:
    """The namespace the documented command's tool parses from ``arguments`` (None for ``--version``/``--help``,
    which exit 0 by themselves); the tool stops there. A parse error fails the test with argparse's message."""
    real_parse_args = argparse.ArgumentParser.parse_args

    def parse_and_stop(parser, args=None, namespace=None):
        parsed = real_parse_args(parser, args, namespace)
        if parser.prog == "sixtysix" and hasattr(parsed, "rest"):  # the dispatcher: the subcommand parses the rest
            return parsed
        raise Parsed(parsed)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_and_stop)
    while re.match(r"[A-Z_]+=", arguments[0]) or arguments[0] == "nice":
        arguments = arguments[3:] if arguments[0] == "nice" else arguments[1:]  # the prefixes of COMMAND_START
    if arguments[0] == "sixtysix":
        main, argv = importlib.import_module("sixtysix_cli").main, arguments[1:]
    else:
        module_at = arguments.index("-m") + 1
        main, argv = importlib.import_module(arguments[module_at]).main, arguments[module_at + 1:]
    try:
        main(argv)
    except Parsed as parsed:
        return parsed.namespace
    except SystemExit as exit_:
        assert exit_.code == 0, "the tool's parser refused the command"
        return None
    raise AssertionError("the tool ran past its parser")  # parse_args was never called: the stub could not stop it


def named_agents(namespace: argparse.Namespace | None) -> list[str]:
    """The agent specs a parsed command names: a match's two, a tournament's list, play's opponent, a bench tool's
    ``--agent``/``--opponent``."""
    specs: list[str] = []
    for option in ("agent_a", "agent_b", "opponent", "agent", "agents"):
        value = getattr(namespace, option, None)
        if isinstance(value, str):
            specs += split_agent_list(value) if option == "agents" else [value]
        elif isinstance(value, list):
            specs += value
    return specs


@pytest.mark.parametrize(("path", "line", "command"), CASES,
                         ids=[f"{path.name}:{line}" for path, line, _ in CASES])
def test_documented_command_parses_and_its_agents_build(monkeypatch, path, line, command):
    namespace = parse_only(monkeypatch, shlex.split(command))
    monkeypatch.undo()  # the agents' own code may parse arguments
    for spec in named_agents(namespace):
        if any(folder in spec for folder in RUN_FILES):
            name, params = resolve_alias(*parse_spec(spec))
            assert name in registered_names(), f"{spec!r} names no registered agent"
        else:
            make_agent(spec, seed=0)


def test_the_documents_show_many_commands_and_few_templates():
    """A guard on the extraction itself: were the code blocks or the command pattern misread, the test above would
    quietly check nothing."""
    assert len(CASES) > 500
    assert len(ALL_COMMANDS) - len(CASES) < len(ALL_COMMANDS) // 4  # the templates
    assert not any(is_template(shlex.split(command)) for _, _, command in CASES)
    assert any(command.startswith("sixtysix match expert heuristic") for _, _, command in CASES)


def test_the_readme_opens_with_the_two_commands_and_ci_runs_the_second():
    """The README's first code block holds the two commands of a fresh machine, in this order: `make run` (the main
    job) and `make test` (install everything and run the tests); both are Makefile targets, and `.ci/run` runs
    exactly the second."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["make run", "make test"]
    targets = set(re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(), re.M))
    assert {"run", "test"} <= targets
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert ci_lines[-1] == "exec make test"
