"""`ram usage`: what the saved sessions cost — tokens, prefix-cache share and list-price dollars, by day, project,
model or session, as a table or `--json`.

Every model call leaves a `call` record in its session's transcript (call_record.py): its model and the provider's
token counts. `transcripts.py` finds the transcripts (a session's subagents count into it), `scan.py` reads the
call records of one file without decoding anything else, `totals.py` adds them up by the chosen key and prices
them (pricing.py), `report.py` prints the result, `cli.py` parses the command line. Nothing here is imported
unless `ram usage` (or `ram view`, which shows the same numbers) runs.
"""
