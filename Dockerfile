# The memstrata server: REST API, MCP at /mcp, Web UI at /ui (docs/deployment.md).
# With compose.yaml it runs on PostgreSQL + pgvector with a Redis session buffer.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY memstrata ./memstrata
# server: the REST API and Web UI; mcp: /mcp (on by default); postgres, redis: the production backends.
RUN pip install ".[server,mcp,postgres,redis]" && rm -rf /src

RUN useradd --create-home --uid 10001 memstrata
USER memstrata
WORKDIR /home/memstrata
# Owned by the server's user, so a volume mounted here is writable (the default SQLite store).
RUN mkdir .memstrata
# Without MEMSTRATA_STORE the server uses SQLite in /home/memstrata/.memstrata (mount a volume there).
EXPOSE 8420
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8420/healthz', timeout=4)"]
CMD ["memstrata", "serve", "--host", "0.0.0.0"]
