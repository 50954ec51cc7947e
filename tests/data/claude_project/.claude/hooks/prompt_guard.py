#!/usr/bin/env python3
"""UserPromptSubmit hook: refuse prompts that contain secrets; otherwise add the time as context."""

import json
import re
import sys

payload = json.load(sys.stdin)
prompt = payload.get("prompt", "")
if re.search(r"(?i)\b(password|api[_-]?key)\s*[:=]", prompt):
    print(json.dumps({"decision": "block", "reason": "Your prompt seems to contain a secret; remove it and retry."}))
    sys.exit(0)
print("Project rule reminder: prices are integers in cents.")
