"""Packing prompt parts into a token budget (pure: the token counter is an argument).

Blocks come in priority order; each holds items in its own priority order; the parts kept may be
shown in another order (`display`), e.g. the live conversation packed first but shown last. Packing walks the blocks
from the most important, gives each as many of its items as still fit (first-fit, or contiguous for
blocks whose items only make sense as an unbroken run, like recent turns), and renders the kept items
in display order. The first block that cannot fit its header and one item is dropped, and so is every
block after it: the parts kept are always the most important ones. So when the budget is short,
lower-priority blocks lose items, then disappear, before a higher-priority block loses anything.
The result never exceeds the budget: every part is counted again as rendered, and so is the final
text, unless the counter is `additive` (counts of texts joined with whitespace add up, as the shipped
tokenizer's do: `core.tokens.HFTokenCounter.additive`), when the rendered counts are those sums. Same input,
same output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..errors import InvalidInput

CountMany = Callable[[Sequence[str]], list[int]]
ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Block:
    """One part of a prompt before packing.

    `items` are in priority order (most important first); with `keep="last"` the LAST items are the
    most important (a conversation given oldest first). `order` gives each item's display position
    (default: as given). `empty` is rendered under the header when there are no items at all.
    `truncate` lets a block whose first-priority item alone is too long keep a cut version of it.
    """

    name: str
    header: str = ""
    items: Sequence[str] = ()
    keep: Literal["first", "last"] = "first"
    contiguous: bool = False
    empty: str | None = None
    order: Sequence[float] | None = None
    truncate: bool = False
    separator: str = "\n"
    inline: bool = False
    """Render as `header items...` on one line (e.g. "Last talked about: a, b") instead of a list."""

    def __post_init__(self) -> None:
        if self.order is not None and len(self.order) != len(self.items):
            raise InvalidInput(f"block {self.name!r}: order has {len(self.order)} keys for {len(self.items)} items")


@dataclass(frozen=True, slots=True)
class PackedPart:
    name: str
    text: str
    tokens: int
    items: int
    total_items: int


@dataclass(frozen=True, slots=True)
class Packing:
    text: str
    tokens: int
    max_tokens: int
    parts: tuple[PackedPart, ...] = ()
    dropped: tuple[str, ...] = field(default=())


_PUNCTUATION_SEPARATORS = frozenset(",;")


def _joins_cleanly(separator: str) -> bool:
    """Whether `separator` joins items without touching their tokens under an additive counter: whitespace,
    and punctuation the tokenizer keeps as tokens of their own (",", ";")."""
    return all(c.isspace() or c in _PUNCTUATION_SEPARATORS for c in separator)


def _render(block: Block, items: Sequence[str]) -> str:
    body = block.separator.join(items)
    if not block.header:
        return body
    return f"{block.header}{' ' if block.inline else chr(10)}{body}"


def _truncate(text: str, limit: int, count_one: Callable[[str], int]) -> str | None:
    """The longest word-boundary prefix of `text` + "…" within `limit` tokens, or None."""
    words = text.split(" ")
    low, high, best = 1, len(words) - 1, None
    while low <= high:
        middle = (low + high) // 2
        candidate = " ".join(words[:middle]).rstrip() + ELLIPSIS
        if count_one(candidate) <= limit:
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    return best


def _pack_block(
    block: Block, budget: int, count_many: CountMany, additive: bool = False
) -> tuple[str, int, int] | None:
    """(text, tokens, kept items) of the block within `budget` tokens, or None if it cannot fit. `additive`:
    the rendered text's count is its header's, its items' and its separators' added up (see `pack`)."""

    def count_one(text: str) -> int:
        return count_many([text])[0]

    if budget <= 0:
        return None
    if not block.items:
        if block.empty is None:
            return None
        text = _render(block, [block.empty])
        tokens = count_one(text)
        return (text, tokens, 0) if tokens <= budget else None
    header_cost = count_one(block.header) if block.header else 0
    separator_cost = count_one(block.separator)
    costs = count_many(list(block.items))
    indexes = range(len(block.items))
    priority = list(reversed(indexes)) if block.keep == "last" else list(indexes)
    left = budget - header_cost
    chosen: list[int] = []
    texts = dict(enumerate(block.items))
    for i in priority:
        cost = costs[i] + (separator_cost if chosen else 0)
        if cost <= left:
            chosen.append(i)
            left -= cost
        elif not chosen and block.truncate and left > 1:
            cut = _truncate(block.items[i], left, count_one)
            if cut is not None:
                texts[i] = cut
                chosen.append(i)
                left -= count_one(cut)
            if block.contiguous:
                break
        elif block.contiguous:
            break
    order = block.order if block.order is not None else [float(i) for i in indexes]
    if additive and chosen and _joins_cleanly(block.separator):  # header, items, separators: joined with whitespace
        shown = sorted(chosen, key=lambda i: (order[i], i))
        return _render(block, [texts[i] for i in shown]), budget - left, len(chosen)
    while chosen:
        shown = sorted(chosen, key=lambda i: (order[i], i))
        text = _render(block, [texts[i] for i in shown])
        tokens = count_one(text)
        if tokens <= budget:
            return text, tokens, len(chosen)
        chosen.pop()  # a tokenizer that is not additive over joins: drop the least important item
    return None


def pack(
    blocks: Sequence[Block],
    max_tokens: int,
    count_many: CountMany,
    *,
    joiner: str = "\n\n",
    display: Sequence[str] | None = None,
    additive: bool = False,
) -> Packing:
    """Pack `blocks` (most important first) into at most `max_tokens` tokens; the kept parts are shown
    in `display` order of block names (default: the priority order). `additive`: `count_many` counts texts
    joined with whitespace as the sum of their counts, so a rendered part (and the whole text, its parts
    joined with the whitespace `joiner`) is counted by adding up, not counted again: the same numbers."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidInput(f"max_tokens must be a positive integer, got {max_tokens!r}")
    names = [b.name for b in blocks]
    if len(set(names)) != len(names):
        raise InvalidInput(f"block names must be unique, got {names}")
    joiner_cost = count_many([joiner])[0]
    parts: list[PackedPart] = []
    dropped: list[str] = []
    used = 0
    full = False
    for block in blocks:
        has_content = bool(block.items) or block.empty is not None
        overhead = joiner_cost if parts else 0
        packed = None if full else _pack_block(block, max_tokens - used - overhead, count_many, additive)
        if packed is None:
            if has_content:  # from the first block that does not fit on, every block is dropped
                dropped.append(block.name)
                full = True
            continue
        text, tokens, kept = packed
        parts.append(PackedPart(block.name, text, tokens, kept, len(block.items)))
        used += tokens + overhead
    if display is not None:
        position = {name: i for i, name in enumerate(display)}
        parts.sort(key=lambda p: position.get(p.name, len(position)))
    text = joiner.join(p.text for p in parts)
    summed = additive and not joiner.strip()  # parts joined with whitespace: their counts add up
    tokens = sum(p.tokens for p in parts) if summed else (count_many([text])[0] if text else 0)
    while parts and tokens > max_tokens:  # non-additive tokenizer across parts: drop the least important
        least = max(parts, key=lambda p: names.index(p.name))
        parts.remove(least)
        dropped.append(least.name)
        text = joiner.join(p.text for p in parts)
        tokens = count_many([text])[0] if text else 0
    return Packing(text=text, tokens=tokens, max_tokens=max_tokens, parts=tuple(parts), dropped=tuple(dropped))


__all__ = ["Block", "CountMany", "PackedPart", "Packing", "pack"]
