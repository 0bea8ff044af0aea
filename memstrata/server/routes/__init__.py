"""Route modules of the REST API: each exposes `router`. Handlers: parse, call Memory, render."""
