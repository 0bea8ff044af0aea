"""Property-based fuzzing of the REST API from its own OpenAPI schema (schemathesis) over real HTTP.

Every default check runs: never a 5xx; statuses, content types, headers and bodies conform to the
documented schema; schema-invalid requests (wrong types, unknown fields or query parameters, no key)
are refused. One check is left out: `positive_data_acceptance` (every schema-valid request must
succeed), because some rules cannot be written in OpenAPI — a repeated `user_id` must equal the path's
user, `created_after` must precede `created_before`, text must not be only whitespace — and those
requests rightly get a 422.
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
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
# Known before collection, because schemathesis applies auth while it generates cases.
ADMIN_TOKEN, ALICE_TOKEN = new_token(), new_token()


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
    for token, user in ((ADMIN_TOKEN, None), (ALICE_TOKEN, "alice")):
        role = Role.ADMIN if user is None else Role.USER
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
