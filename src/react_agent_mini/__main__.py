"""`python -m react_agent_mini` runs the CLI."""

from .cli import main

raise SystemExit(main())
