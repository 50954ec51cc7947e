#!/usr/bin/env python3
"""PreToolUse hook for Bash: refuse commands this project does not want (after Anthropic's example validator)."""

import json
import re
import sys

RULES = [
    (r"^\s*rm\s+-[a-z]*r[a-z]*f?\b", "Do not delete directories with rm -rf; move them to trash/ instead."),
    (r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance."),
]

payload = json.load(sys.stdin)
if payload.get("tool_name") != "Bash":
    sys.exit(0)
command = payload.get("tool_input", {}).get("command", "")
problems = [message for pattern, message in RULES if re.search(pattern, command)]
if problems:
    for message in problems:
        print(f"• {message}", file=sys.stderr)
    sys.exit(2)  # block: stderr goes to the model
sys.exit(0)
