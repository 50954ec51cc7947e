#!/usr/bin/env python3
"""Stop hook: the first time the agent wants to stop, ask it to run the tests; then let it stop."""

import json
import sys

payload = json.load(sys.stdin)
if payload.get("stop_hook_active"):
    sys.exit(0)
print(json.dumps({"decision": "block", "reason": "Run the tests with `python -m pytest -q` before you finish."}))
