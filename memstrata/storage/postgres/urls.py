"""Connection-string helpers: hide passwords before a URL reaches a message or a log (pure)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"
_DSN_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def redact_url(url: str) -> str:
    """`url` with any password replaced by `***`.

    Handles URLs (`postgresql://user:secret@host/db`, `?password=secret`) and
    key/value DSNs (`host=... password=secret`).
    """
    if "://" not in url:
        return _DSN_PASSWORD.sub(rf"\g<1>{REDACTED}", url)
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        credentials, _, hosts = netloc.rpartition("@")
        if ":" in credentials:
            user = credentials.split(":", 1)[0]
            netloc = f"{user}:{REDACTED}@{hosts}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(key.lower() == "password" for key, _ in pairs):
            query = urlencode([(k, REDACTED if k.lower() == "password" else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub(text: str, *secrets: str | None) -> str:
    """`text` with every non-empty secret replaced by `***` (driver messages rarely echo them; be sure)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def password_of(url: str) -> str | None:
    """The password in `url`, if any (so it can be scrubbed from error messages)."""
    if "://" not in url:
        match = _DSN_PASSWORD.search(url)
        return match.group(2).strip("'") if match else None
    parts = urlsplit(url)
    if parts.password:
        return parts.password
    for key, value in parse_qsl(parts.query):
        if key.lower() == "password":
            return value
    return None
