"""The web, for WebFetch and WebSearch: what may be fetched (`urls.py`), the GET itself with its limits
(`fetch.py`), bytes to text (`decode.py`), HTML to Markdown (`markdown.py`), the 15-minute cache (`cache.py`), the
boundary around what a page says (`untrusted.py`) and the search backends (`search.py`, `search_config.py`).

Nothing here is imported at startup: the tools import it on their first call."""
