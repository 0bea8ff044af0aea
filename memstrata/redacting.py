"""Wrappers that redact PII before text reaches an external embedding or LLM API.

    embedder = RedactingEmbedder(OpenAICompatibleEmbedder(...))
    llm = RedactingLLM(resolve_llm("openai:gpt-4o-mini"))

Only what is *sent* is redacted: the caller's texts, and therefore everything memstrata stores, stay
unchanged. `RedactingLLM` puts the original values back into the model's answer (the placeholder →
value mapping never leaves the process), so an extracted memory says "email is ann@example.org",
not "email is [EMAIL_1]". Both wrappers satisfy the protocols they wrap and can wrap any
implementation. Detection rules: `memstrata.core.redact`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from .core.redact import ALL_KINDS, PIIKind, redact
from .embedders.base import Embedder, Vectors
from .llm.base import ChatMessage, LLMClient, LLMResponse


class RedactingEmbedder:
    """An `Embedder` that embeds redacted copies of the texts with `inner`.

    `name` and `dimensions` are the inner model's: the vectors come from the same model, so a store
    bound to it stays compatible whether or not redaction is on.
    """

    def __init__(self, inner: Embedder, *, kinds: Collection[PIIKind] = ALL_KINDS) -> None:
        self.inner = inner
        self.kinds = tuple(kinds)

    def __repr__(self) -> str:
        return f"RedactingEmbedder({self.inner!r})"

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed_documents(self, texts: Sequence[str], /) -> Vectors:
        # Each text is redacted on its own: numbering across a batch would make vectors depend on batching.
        return self.inner.embed_documents([redact(text, self.kinds).text for text in texts])

    def embed_query(self, text: str, /) -> Vectors:
        return self.inner.embed_query(redact(text, self.kinds).text)


class RedactingLLM:
    """An `LLMClient` that sends redacted messages to `inner` and restores the originals in its answer.

    Placeholders are numbered per request across all messages ("[EMAIL_1]" means the same address in
    the system prompt and in the conversation). `restore=False` returns the answer as the model wrote it.
    """

    def __init__(self, inner: LLMClient, *, kinds: Collection[PIIKind] = ALL_KINDS, restore: bool = True) -> None:
        self.inner = inner
        self.kinds = tuple(kinds)
        self.restore = restore

    def __repr__(self) -> str:
        return f"RedactingLLM({self.inner!r})"

    @property
    def usage(self) -> Any:
        """The inner client's token accounting."""
        return getattr(self.inner, "usage", None)

    @property
    def model(self) -> Any:
        return getattr(self.inner, "model", None)

    def close(self) -> None:
        self.inner.close()

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMResponse:
        redaction = redact([m.content for m in messages], self.kinds)
        sent = [ChatMessage(m.role, text) for m, text in zip(messages, redaction.texts, strict=True)]
        response = self.inner.complete(sent, max_tokens=max_tokens, temperature=temperature, json_mode=json_mode)
        if not self.restore or not redaction.originals:
            return response
        return replace(response, text=redaction.restore(response.text))


def leaves_machine(client: object) -> bool:
    """Whether text given to `client` (an LLM or embedder) goes to another machine: an HTTP client
    whose base URL names a host other than localhost or a loopback address. A client whose endpoint
    is unknown counts as remote (the safe side)."""
    url = getattr(client, "base_url", None) or getattr(client, "url", None) or getattr(client, "_url", None)
    if not isinstance(url, str):
        return not _known_local(client)
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def _known_local(client: object) -> bool:
    """In-process clients: local embedding models and the scripted offline LLM."""
    module = type(client).__module__
    return module.startswith(("memstrata.embedders", "memstrata.llm.scripted"))


def should_redact(setting: bool | None, client: object) -> bool:
    """`redact_pii` resolved for one collaborator: an explicit True/False wins; unset (None, the
    default) means on exactly when text given to it leaves the machine."""
    return leaves_machine(client) if setting is None else setting


def redacting(
    embedder: Embedder,
    llm: LLMClient | None,
    *,
    kinds: Collection[PIIKind] = ALL_KINDS,
    embeddings: bool = True,
) -> tuple[Embedder, LLMClient | None]:
    """Wrap an LLM (when there is one) and, unless `embeddings=False`, the embedder.

    Wrapping twice is harmless: an already-wrapped collaborator is returned as it is.
    """
    if embeddings and not isinstance(embedder, RedactingEmbedder):
        embedder = RedactingEmbedder(embedder, kinds=kinds)
    if llm is not None and not isinstance(llm, RedactingLLM):
        llm = RedactingLLM(llm, kinds=kinds)
    return embedder, llm


__all__ = ["RedactingEmbedder", "RedactingLLM", "leaves_machine", "redacting", "should_redact"]
