"""react-agent-mini: a small, fast, trustworthy terminal coding agent.

Importing the package has no side effects and imports nothing heavy: the CLI entry point
(`react_agent_mini.cli:main`) decides what to load.
"""

__version__ = "0.1.0"
