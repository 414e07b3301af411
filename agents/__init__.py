"""Agents for Sixty-six: random, rule-based, solver-backed and search players, built from spec strings."""

from .base import Agent, RandomAgent
from .registry import agent_for_rules, make_agent, parse_spec, register, registered_names

__all__ = ["Agent", "RandomAgent", "agent_for_rules", "make_agent", "parse_spec", "register", "registered_names"]
