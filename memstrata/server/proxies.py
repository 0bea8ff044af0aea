"""Which address a request comes from: its peer, or — only when the peer is a trusted proxy — the
client that the proxy names in `X-Forwarded-For`.

`MEMSTRATA_TRUSTED_PROXIES` lists the proxies' addresses or networks (`10.0.0.5,192.168.0.0/16`);
by default none, so a forwarded header is ignored whoever sends it and no client can choose the
address its requests count against (the per-address rate limit of failed authentications). With
proxies configured, the client is the rightmost address of `X-Forwarded-For` that is not itself a
trusted proxy (each proxy appends the address it saw; everything left of the first untrusted one is
the client's own say). `TrustedProxyMiddleware` puts that address in the ASGI scope's `client`
before anything else reads it; uvicorn must therefore not rewrite the client itself
(`app.UVICORN_OPTIONS`: `proxy_headers=False`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import InvalidInput

Network = IPv4Network | IPv6Network
SETTING = "MEMSTRATA_TRUSTED_PROXIES"


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """The trusted proxies of the setting: addresses (one host each) or networks in CIDR notation."""
    networks = []
    for value in values:
        try:
            networks.append(ip_network(value.strip(), strict=False))
        except ValueError:
            raise InvalidInput(
                f"{SETTING}: {value!r} is not an IP address or network (write e.g. 10.0.0.5 or 10.0.0.0/8)"
            ) from None
    return tuple(networks)


def _address(text: str) -> IPv4Address | IPv6Address | None:
    try:
        return ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def is_trusted(address: str, networks: Sequence[Network]) -> bool:
    parsed = _address(address)
    return parsed is not None and any(parsed in network for network in networks)


def client_address(peer: str, forwarded_for: Sequence[str], networks: Sequence[Network]) -> str:
    """The address a request comes from (pure): `peer` unless it is a trusted proxy; then the
    rightmost `X-Forwarded-For` hop (over every such header, in order) that is not one. A hop that is
    no IP address ends the walk at the last address known good."""
    if not is_trusted(peer, networks):
        return peer
    hops = [hop.strip() for header in forwarded_for for hop in header.split(",") if hop.strip()]
    current = peer
    for hop in reversed(hops):
        if _address(hop) is None:
            return current
        current = hop.strip("[]")
        if not is_trusted(hop, networks):
            return current
    return current


class TrustedProxyMiddleware:
    def __init__(self, app: ASGIApp, *, networks: Sequence[Network]) -> None:
        self.app = app
        self.networks = tuple(networks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and scope.get("client"):
            host, port = scope["client"]
            forwarded = [v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"x-forwarded-for"]
            source = client_address(host, forwarded, self.networks)
            if source != host:
                scope = {**scope, "client": (source, port)}
        await self.app(scope, receive, send)
