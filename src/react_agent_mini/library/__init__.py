"""ram as a Python library: `Agent` (async), `run` (sync), and the types they take and give.

Import the public names from `react_agent_mini` itself; this package holds their parts: `options` (arguments →
provider and session options), `permission` (the `can_use_tool` callback), `results` (events and `Result`),
`agent` (`Agent` and `run`).
"""
