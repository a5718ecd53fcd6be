"""MCP servers as tool sources.

    config.py      which servers a session gets (config files, `.mcp.json`, clients), trust
    connection.py  one server on the `mcp` SDK, in a task of its own
    pool.py        running servers, shared by sessions of a project with the same config
    tools.py       a server's tools as agentls tools (`mcp__<server>__<tool>`), results
    session.py     one session's servers, tools and queued `mcp_status` notes
    engine.py      what the native engine calls (start, attach, close, dispose)
    doors.py       what the front doors call (`session/new` servers, `mcp/list`, stream-json)

Importing this package costs nothing: the SDK loads when a session has servers to start.
"""
