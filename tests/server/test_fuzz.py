"""Property-based fuzzing of the REST API from its own OpenAPI schema (schemathesis) over real HTTP.

Every default check runs: never a 5xx; statuses, content types, headers and bodies conform to the
documented schema; schema-invalid requests (wrong types, unknown fields or query parameters, no key)
are refused. One check is left out: `positive_data_acceptance` (every schema-valid request must
succeed), because some rules cannot be written in OpenAPI — a repeated `user_id` must equal the path's
user, `created_after` must precede `created_before`, text must not be only whitespace — and those
requests rightly get a 422.

It runs with an admin key, a user key and an ingest-only key (whose answers are receipts). Every id
parameter states the id rule (pattern, length) in the schema, so generated ids follow it, and the
negative cases break it.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from memstrata.models import utcnow
from memstrata.namespaces import SYSTEM_USER
from memstrata.server.app import create_app
from memstrata.server.auth import API_KEY_NAMESPACE, ApiKey, hash_token, new_token
from memstrata.server.config import ServerConfig
from memstrata.server.roles import Role

from .conftest import TENANT, Server

# The schema comes from the app factory (no store is opened); requests go to the live `server` fixture.
schema = schemathesis.openapi.from_dict(create_app(config=ServerConfig(mcp=False, ui=False)).openapi())
# A body over the size limit (1 MiB; the schema allows more, e.g. 200 messages of 64 KiB) is refused
# with the documented 413 before it is validated: a rejection too.
schema.config.checks.negative_data_rejection.expected_statuses.append("413")
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
# Known before collection, because schemathesis applies auth while it generates cases.
ADMIN_TOKEN, ALICE_TOKEN, INGEST_TOKEN = new_token(), new_token(), new_token()
ID_RULE = {"pattern": "^[A-Za-z0-9][A-Za-z0-9_.:@+\\-]*$", "maxLength": 128, "minLength": 1}


@schema.auth()
class BearerKey:
    """Schemathesis applies the key itself, so its negative cases can also leave it out (→ 401)."""

    def get(self, case: schemathesis.Case, context: Any) -> str:
        return ADMIN_TOKEN

    def set(self, case: schemathesis.Case, data: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


@pytest.fixture(scope="module")
def fuzz_keys(server: Server) -> None:
    """Install the two known tokens as keys of the running server (only their hashes, as usual)."""
    for token, user, role in (
        (ADMIN_TOKEN, None, Role.ADMIN),
        (ALICE_TOKEN, "alice", Role.USER),
        (INGEST_TOKEN, None, Role.INGEST_ONLY),
    ):
        key = ApiKey(id=hash_token(token)[:16], tenant=TENANT, user=user, name="fuzz", created_at=utcnow(), role=role)
        server.memory.store.put_item(SYSTEM_USER, API_KEY_NAMESPACE, hash_token(token), key.to_value())


@schema.parametrize()
@FUZZ
def test_api_conforms_to_its_schema_with_an_admin_key(case: schemathesis.Case, server: Server, fuzz_keys: None) -> None:
    case.call_and_validate(base_url=server.url, excluded_checks=[positive_data_acceptance])


@schema.parametrize()
@settings(FUZZ, max_examples=10)
def test_api_conforms_to_its_schema_with_a_user_key(case: schemathesis.Case, server: Server, fuzz_keys: None) -> None:
    if case.headers and "Authorization" in case.headers:
        case.headers["Authorization"] = f"Bearer {ALICE_TOKEN}"
    case.call_and_validate(base_url=server.url, excluded_checks=[positive_data_acceptance])


@schema.parametrize()
@settings(FUZZ, max_examples=5)
def test_api_conforms_to_its_schema_with_an_ingest_only_key(
    case: schemathesis.Case, server: Server, fuzz_keys: None
) -> None:
    """A write-only key's answers (receipts, refusals) conform to the schema too."""
    if case.headers and "Authorization" in case.headers:
        case.headers["Authorization"] = f"Bearer {INGEST_TOKEN}"
    case.call_and_validate(base_url=server.url, excluded_checks=[positive_data_acceptance])


def id_rules(raw: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(operation, parameter, its schema) of every path or query parameter that is an id."""
    found = []
    for path, operations in raw["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "id" or parameter["name"].endswith("_id"):
                    schema = parameter["schema"]
                    schema = next((s for s in schema.get("anyOf", []) if s.get("type") == "string"), schema)
                    found.append((f"{method.upper()} {path}", parameter["name"], schema))
    return found


def test_every_id_parameter_states_the_id_rule() -> None:
    """So that schemathesis generates ids by the rule (and off it, for its negative cases)."""
    rules = id_rules(schema.raw_schema)
    assert len(rules) >= 30
    wrong = [(op, name, s) for op, name, s in rules if {k: s.get(k) for k in ID_RULE} != ID_RULE]
    assert wrong == []


def test_a_sessions_offset_beyond_any_integer_is_a_422_not_a_5xx(server: Server) -> None:
    """Found by the schema run: an offset past SQLite's integers answered 500; the route bounds it."""
    with server.client(server.keys.admin) as admin:
        response = admin.get("/v1/users/w0H/sessions", params={"offset": 4394169268441457094214700985483264})
    assert response.status_code == 422, response.text
