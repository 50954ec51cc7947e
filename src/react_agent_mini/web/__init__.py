"""The web, for WebFetch and WebSearch: what may be fetched (`urls.py`), the GET itself with its limits
(`fetch.py`), bytes to text (`decode.py`), HTML to Markdown (`markdown.py`), the 15-minute cache (`cache.py`), the
boundary around what a page says (`untrusted.py`) and the search backends (`search.py`, `search_config.py`); and the
tools themselves (`fetch_tool.py`, `search_tool.py`), built on the tool kit (`tools/`) from above it.

Only the tool modules load with a session: the rest is imported at a tool's first call."""
