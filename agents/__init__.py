"""Agents for Sixty-six: random, rule-based, solver-backed and search players, built from spec strings."""

from .base import Agent, RandomAgent
from .registry import make_agent, parse_spec, register, registered_names

__all__ = ["Agent", "RandomAgent", "make_agent", "parse_spec", "register", "registered_names"]
