"""MCP fixture servers (run as subprocesses by the MCP tests): the faults real servers rarely show on demand."""
