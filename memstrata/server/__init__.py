"""The memory server: REST API (FastAPI), MCP endpoint and Web UI in one process.

Build the app with `memstrata.server.app.create_app(...)`; run it with `memstrata serve`.
Nothing is imported or started here.
"""
