"""The tools the tool kit comes with (the framework they are built on, `base`, `runner` and `declared`, is
`tools/`). They import nothing above `tools/`; a built-in tool that needs a higher part (WebFetch and WebSearch need
the web package, which asks a model) lives with that part, and `builtin_tools` knows them all by name.
"""
