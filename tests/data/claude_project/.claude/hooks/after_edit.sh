#!/usr/bin/env bash
# PostToolUse hook for edits: tell the model which file changed and remind it of the style rule.
file=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"].get("file_path",""))')
cat <<JSON
{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "Edited $file: keep the code free of I/O and run the tests."}}
JSON
