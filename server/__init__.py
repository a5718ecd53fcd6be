"""agentls: an editor backend for coding agents."""

__version__ = "0.1.0"
