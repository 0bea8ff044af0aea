"""The names a user is known by: what a query may call the memory owner instead of "the user".

They are the value of the user's `identity:name` profile fact and the values it replaced (a corrected name
still names the same person). The fact is set by what the user says ("my name is Maya", through learning's
profile slots) or by the `known_name` a caller passes to `learn` when the profile has no name yet.
"""

from __future__ import annotations

from .. import namespaces
from ..storage.base import Item, ItemRead, Store

NAME_KEY = "identity:name"
"""The profile item that holds the user's name."""


NAME_READ = ItemRead(namespaces.PROFILE, NAME_KEY)
"""The read of the name item (for `Store.read_many`)."""


def known_names(store: Store, user_id: str) -> tuple[str, ...]:
    """The user's known names, the current one first (empty when none is known)."""
    return names_of(store.get_item(user_id, NAME_READ.namespace, NAME_READ.key))


def names_of(item: Item | None) -> tuple[str, ...]:
    """The known names the name item (`NAME_READ`) holds."""
    if item is None:
        return ()
    values = [
        item.value.get("value"),
        *(p.get("value") for p in item.value.get("previous") or [] if isinstance(p, dict)),
    ]
    return tuple(dict.fromkeys(v.strip() for v in values if isinstance(v, str) and v.strip()))


__all__ = ["NAME_KEY", "NAME_READ", "known_names", "names_of"]
