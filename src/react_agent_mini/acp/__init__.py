"""`ram acp`: ram as an Agent Client Protocol agent, for editors (Zed, Neovim's CodeCompanion and avante.nvim,
JetBrains, Emacs) that drive coding agents over JSON-RPC on stdio.

Built on `host.SessionHost` (one per ACP session) and the `agent-client-protocol` package, which is imported only
from here, so plain `ram` runs never load it:

    main       the command: its flags, stdout kept for the protocol alone, the event loop
    wire       JSON-RPC messages over stdin/stdout, tolerant of broken lines
    agent      the ACP methods (initialize, authenticate, session/new, load, list, set_mode, set_config_option,
               prompt, cancel), one `AcpSession` per session id
    session    one session: its host, its prompt turns, cancellation
    commands   the slash commands a session offers and runs (/compact, skills, MCP prompts)
    options    what a session offers: permission modes and models
    servers    the client's MCP servers, in ACP's form, as `.mcp.json` entries
    prompt     a prompt's content blocks as our text and context messages
    cards      how a tool call looks in the editor: kind, title, locations, diff
    updates    our turn's events as `session/update` notifications
    history    a loaded transcript replayed as `session/update` notifications
    permission our "ask" as `session/request_permission`
    files      Read, Write and Edit through the client's `fs/*` (the editor's unsaved buffers)
    terminal   Bash in the client's terminal (`terminal/*`)
    link       the client connection and the session id, as the tools and the asker reach them
    errors     the JSON-RPC errors it answers with, each with a message a person can read
"""
