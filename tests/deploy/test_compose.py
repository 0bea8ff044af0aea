"""The Docker deployment (Dockerfile, compose.yaml, deploy/) holds together without a Docker engine:
compose.yaml has the three services with their healthchecks, every MEMSTRATA_* variable it gives the
server is a setting the server reads, the store URLs name the roles and database the mounted init
script creates, and that script runs verbatim with psql against the real PostgreSQL as a fresh
database, leaving a store memstrata opens as the app role with row-level security in force."""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from psycopg import sql

from memstrata import Memory, cli
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.server.config import ServerConfig
from memstrata.settings import Settings
from memstrata.storage.postgres import PostgresStore

ROOT = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def server_environment() -> dict[str, str]:
    return {k: str(v) for k, v in SERVICES["memstrata"]["environment"].items()}


def interpolated(value: str) -> str:
    """`value` as compose substitutes it with no .env variable but the passwords: `${X:-default}` is
    the default, `${X}` and `${X:?message}` a password."""
    return re.sub(r"\$\{\w+(?::-([^}]*)|:\?[^}]*)?\}", lambda m: m[1] if m[1] is not None else "secret", value)


def test_three_services_with_the_images_users_expect() -> None:
    assert set(SERVICES) == {"postgres", "redis", "memstrata"}
    assert SERVICES["postgres"]["image"] == "pgvector/pgvector:pg16"
    assert SERVICES["redis"]["image"] == "redis:7"
    assert SERVICES["redis"]["command"] == ["redis-server", "--appendonly", "yes"]
    assert SERVICES["memstrata"]["build"] == "."
    for name in ("postgres", "redis"):
        assert SERVICES[name]["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL")
        assert SERVICES["memstrata"]["depends_on"][name] == {"condition": "service_healthy"}
    assert "HEALTHCHECK" in DOCKERFILE and "/healthz" in DOCKERFILE


def test_every_server_variable_is_a_setting_the_server_reads() -> None:
    known = {f"MEMSTRATA_{name.upper()}" for name in (*Settings.model_fields, *ServerConfig.model_fields)}
    given = {k for k in server_environment() if k.startswith("MEMSTRATA_")}
    assert given and given <= known, given - known
    assert set(server_environment()) == given  # nothing else is passed to the server


def test_the_server_settings_parse_as_the_server_will_read_them(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in server_environment().items():
        monkeypatch.setenv(key, interpolated(value))
    config = ServerConfig()
    assert (config.host, config.port, config.tenant) == ("0.0.0.0", 8420, "default")
    assert config.allowed_hosts  # /mcp keeps its DNS-rebinding protection off loopback
    settings = Settings()
    assert settings.buffer == "redis://redis:6379/0"
    app, owner = urlsplit(settings.store), urlsplit(settings.store_owner or "")
    assert (app.username, owner.username, app.hostname, app.path) == (
        "memstrata_app",
        "memstrata_owner",
        "postgres",
        "/memstrata",
    )


def test_the_dockerfile_installs_real_extras_and_serves_on_every_interface() -> None:
    assert DOCKERFILE.splitlines()[2] == "FROM python:3.11-slim"
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    installed = re.search(r'pip install "\.\[([\w,]+)\]"', DOCKERFILE)
    assert installed and {"server", "postgres", "redis", "mcp"} <= set(installed[1].split(",")) <= extras
    command = re.search(r"^CMD (\[.*\])$", DOCKERFILE, re.MULTILINE)
    assert command and yaml.safe_load(command[1]) == ["memstrata", "serve", "--host", "0.0.0.0"]
    cli.build_parser().parse_args(yaml.safe_load(command[1])[1:])
    mount = next(v for v in SERVICES["postgres"]["volumes"] if "initdb.d" in v)
    assert (ROOT / mount.split(":")[0]).is_file()


def test_the_env_example_sets_every_password_compose_requires() -> None:
    required = set(re.findall(r"\$\{(\w+):\?", (ROOT / "compose.yaml").read_text()))
    lines = (ROOT / "deploy" / "env.example").read_text().splitlines()
    example = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    assert required == set(example) == {"POSTGRES_PASSWORD", "MEMSTRATA_OWNER_PASSWORD", "MEMSTRATA_APP_PASSWORD"}


@pytest.mark.postgres
def test_the_init_script_runs_verbatim_and_leaves_a_store_for_the_app_role() -> None:
    from tests.support.pg import admin_url, connect_admin, role_url

    if shutil.which("psql") is None:
        pytest.skip("psql is not installed")
    script = ROOT / SERVICES["postgres"]["volumes"][1].split(":")[0]
    suffix = secrets.token_hex(4)
    names = {"owner_role": f"deploy_owner_{suffix}", "app_role": f"deploy_app_{suffix}", "database": f"deploy_{suffix}"}
    passwords = {"MEMSTRATA_OWNER_PASSWORD": secrets.token_hex(8), "MEMSTRATA_APP_PASSWORD": secrets.token_hex(8)}
    variables = [part for name, value in names.items() for part in ("-v", f"{name}={value}")]
    command = ["psql", admin_url(), "-X", "-q", "-v", "ON_ERROR_STOP=1", *variables, "-f", str(script)]
    try:
        done = subprocess.run(command, env={**os.environ, **passwords}, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{shlex.join(command)}: {done.stderr}"
        app_url = role_url(names["app_role"], passwords["MEMSTRATA_APP_PASSWORD"], names["database"])
        owner_url = role_url(names["owner_role"], passwords["MEMSTRATA_OWNER_PASSWORD"], names["database"])
        store = PostgresStore.open(app_url, owner_url=owner_url)
        assert store.row_security_enforced
        with Memory(store=store, embedder=HashingEmbedder(64)) as memory:
            memory.add("Alice deploys with compose", scope="alice")
            assert [h.memory.content for h in memory.search("compose", scope="alice")] == ["Alice deploys with compose"]
            assert memory.list(scope="bob") == []
        with connect_admin(names["database"]) as db:
            row = db.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s", [names["app_role"]])
            assert row.fetchone() == (False, False)
    finally:
        with connect_admin() as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(names["database"])))
            for role in (names["app_role"], names["owner_role"]):
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@pytest.mark.postgres
def test_the_init_script_refuses_to_run_without_the_passwords() -> None:
    from tests.support.pg import admin_url

    if shutil.which("psql") is None:
        pytest.skip("psql is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    suffix = secrets.token_hex(4)
    roles = ["-v", f"owner_role=never_{suffix}", "-v", f"app_role=never_a_{suffix}"]
    command = ["psql", admin_url(), "-X", "-q", *roles, "-f", str(ROOT / "deploy" / "postgres" / "init.sql")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "set MEMSTRATA_OWNER_PASSWORD" in done.stderr
