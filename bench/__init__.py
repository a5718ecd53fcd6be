"""Benchmarks against real agentls processes and the loopback fake model."""
