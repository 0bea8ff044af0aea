"""PII redaction (pure): replace personal data with typed placeholders before text leaves the machine.

`redact(["Mail me at ann@example.org"])` returns the texts with `[EMAIL_1]` in place of the address
and the placeholder → original mapping, which stays local: `Redaction.restore` puts the originals
back into a model's answer. Stored text is never redacted; only what is sent to an external LLM or
embedding API is (see `memstrata.redacting`).

Detectors, in priority order (an earlier kind wins where matches overlap):

| kind    | finds                                                    | validated by                        |
|---------|----------------------------------------------------------|-------------------------------------|
| SECRET  | API keys and tokens with a known shape (sk-, ghp_, AKIA…) | prefix and length                   |
| EMAIL   | addresses                                                | shape                               |
| IBAN    | international bank account numbers, with or without spaces| ISO 13616 mod-97 checksum           |
| CARD    | payment card numbers (13-19 digits, spaces/dashes)        | Luhn checksum                       |
| SSN     | US social security numbers (AAA-GG-SSSS)                  | area/group/serial rules             |
| IP      | IPv4 and IPv6 addresses                                   | `ipaddress`                         |
| PHONE   | international (+…/00…) and national numbers               | digit count, grouping, context      |

Names, street addresses and other free-text PII need a named-entity model and are not detected.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ..errors import InvalidInput


class PIIKind(StrEnum):
    SECRET = "secret"
    EMAIL = "email"
    IBAN = "iban"
    CARD = "card"
    SSN = "ssn"
    IP = "ip"
    PHONE = "phone"

    @classmethod
    def parse_many(cls, values: Iterable[str | PIIKind]) -> tuple[PIIKind, ...]:
        parsed = []
        for value in values:
            try:
                parsed.append(cls(str(value).strip().lower()))
            except ValueError:
                known = ", ".join(k.value for k in cls)
                raise InvalidInput(f"unknown PII kind {value!r}; known kinds: {known}") from None
        return tuple(parsed)


ALL_KINDS: tuple[PIIKind, ...] = tuple(PIIKind)


@dataclass(frozen=True, slots=True)
class Finding:
    """One piece of PII in a text: its kind and character span."""

    kind: PIIKind
    start: int
    end: int
    value: str


@dataclass(frozen=True, slots=True)
class Redaction:
    """Redacted texts and the placeholder → original mapping (keep it local; never send it)."""

    texts: tuple[str, ...]
    originals: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The single redacted text (for one-text calls)."""
        if len(self.texts) != 1:
            raise InvalidInput(f"this redaction holds {len(self.texts)} texts; use .texts")
        return self.texts[0]

    @property
    def counts(self) -> dict[str, int]:
        """How many distinct values of each kind were replaced."""
        counts: dict[str, int] = {}
        for placeholder in self.originals:
            kind = placeholder[1:].split("_")[0].lower()
            counts[kind] = counts.get(kind, 0) + 1
        return counts

    def restore(self, text: str) -> str:
        """`text` with every placeholder of this redaction replaced by its original value."""
        if not self.originals:
            return text
        return _PLACEHOLDER.sub(lambda m: self.originals.get(m.group(0), m.group(0)), text)


_PLACEHOLDER = re.compile(r"\[(?:SECRET|EMAIL|IBAN|CARD|SSN|IP|PHONE)_\d+\]")

# -- detectors ---------------------------------------------------------------------------------

_SECRET = re.compile(
    r"(?<![\w-])(?:"
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}"  # OpenAI / Anthropic keys
    r"|gh[pousr]_[A-Za-z0-9]{30,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{30,}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|AKIA[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_\-]{35}"  # Google API keys
    r"|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"  # JWTs
    r")(?![\w-])"
)
_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,24}(?![\w-])"
)
_GAP = r"[ \t\u00a0-]{0,2}"
"""What may separate the groups of a card number or an IBAN: up to two spaces, tabs, no-break
spaces or dashes (adversarial spacing like "4111  1111-1111 1111" must not hide one)."""
_IBAN = re.compile(rf"(?<![A-Za-z0-9])[A-Za-z]{{2}}\d{{2}}(?:{_GAP}[A-Za-z0-9]){{11,30}}(?![A-Za-z0-9])")
_DIGIT_RUN = re.compile(rf"(?<![\d.,])\d(?:{_GAP}\d)*")
_DIGITS = re.compile(r"\d+")
_SSN = re.compile(r"(?<![\d-])(\d{3})-(\d{2})-(\d{4})(?![\d-])")
_IPV4 = re.compile(
    r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.]*\d)"
)
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%\w+)?(?![\w:])")
_PHONE = re.compile(r"(?<![\w+])(?:(?:\+|00)\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{2,14}(?:[ .-]\d{2,8}){0,5}(?![\w])")
_PHONE_CONTEXT = re.compile(
    r"\b(?:phone|tel|telephone|mobile|cell|call|text|sms|whatsapp|signal|fax|number|nummer|numéro)\b",
    re.IGNORECASE,
)
_DATE_LIKE = re.compile(r"^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$")


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a digit string (payment cards)."""
    if not digits.isdigit():
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(candidate: str) -> bool:
    """ISO 13616: 15-34 alphanumerics, country letters, and the mod-97 checksum equal to 1."""
    iban = re.sub(r"[^A-Za-z0-9]", "", candidate).upper()
    if not 15 <= len(iban) <= 34 or not iban[:2].isalpha() or not iban[2:4].isdigit() or not iban.isalnum():
        return False
    rearranged = iban[4:] + iban[:4]
    number = "".join(str(int(c, 36)) for c in rearranged)
    return int(number) % 97 == 1


def _secrets(text: str) -> Iterable[tuple[int, int]]:
    return ((m.start(), m.end()) for m in _SECRET.finditer(text))


def _emails(text: str) -> Iterable[tuple[int, int]]:
    return ((m.start(), m.end()) for m in _EMAIL.finditer(text))


def _ibans(text: str) -> Iterable[tuple[int, int]]:
    """A spaced IBAN may run into the next word or the next IBAN: shrink each match from the right
    until the checksum holds, then look again right after what was found (not after the match)."""
    position = 0
    while (match := _IBAN.search(text, position)) is not None:
        value = match.group(0)
        end = None
        while len(re.sub(r"[^A-Za-z0-9]", "", value)) >= 15:
            if iban_valid(value):
                end = match.start() + len(value)
                break
            value = value[:-1].rstrip(" \t\u00a0-")
        if end is None:
            position = match.start() + 1
            continue
        yield match.start(), end
        position = end


def _cards(text: str) -> Iterable[tuple[int, int]]:
    for run in _DIGIT_RUN.finditer(text):
        groups = [(m.start() + run.start(), m.end() + run.start()) for m in _DIGITS.finditer(run.group(0))]
        yield from card_spans(text, groups)


def card_spans(text: str, groups: Sequence[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    """Card numbers among consecutive digit groups: from the first group, the longest run of whole
    groups with 13-19 digits that passes Luhn, then the same again right after it (so "4111 1111 1111
    1111 12 dollars" yields the card, and two cards side by side yield both). A card never starts in
    the middle of other digits (the tail of a longer number is not a card)."""
    first = 0
    while first < len(groups):
        digits, best = "", None
        for last in range(first, len(groups)):
            digits += text[groups[last][0] : groups[last][1]]
            if len(digits) > 19:
                break
            if len(digits) >= 13 and luhn_valid(digits) and len(set(digits)) > 1:
                best = last
        if best is None:
            return  # a number starts only where the digits start, or right after another number
        yield groups[first][0], groups[best][1]
        first = best + 1


def _ssns(text: str) -> Iterable[tuple[int, int]]:
    for match in _SSN.finditer(text):
        area, group, serial = match.groups()
        if area not in ("000", "666") and not area.startswith("9") and group != "00" and serial != "0000":
            yield match.start(), match.end()


def _ips(text: str) -> Iterable[tuple[int, int]]:
    for match in _IPV4.finditer(text):
        yield match.start(), match.end()
    for match in _IPV6.finditer(text):
        value = match.group(0).split("%")[0]
        if value.count(":") < 2 or ("::" not in value and value.count(":") != 7):
            continue
        try:
            ipaddress.IPv6Address(value)
        except ValueError:
            continue
        yield match.start(), match.end()


def _phones(text: str) -> Iterable[tuple[int, int]]:
    for match in _PHONE.finditer(text):
        value = match.group(0)
        if _looks_like_phone(value, text[max(0, match.start() - 30) : match.start()]):
            yield match.start(), match.end()


def _looks_like_phone(value: str, before: str) -> bool:
    digits = re.sub(r"\D", "", value)
    if value.startswith(("+", "00")):
        return 8 <= len(digits) <= 15
    if not 9 <= len(digits) <= 13 or _DATE_LIKE.match(value):
        return False
    if "(" in value:
        return True
    groups = re.split(r"[ .-]", value)
    separators = set(re.findall(r"[ .-]", value))
    if separators & {"-", "."} and len(separators) == 1 and 2 <= len(groups) <= 4:
        return len(digits) in (10, 11)  # 555-123-4567, 555.123.4567, 1-555-123-4567
    if separators == {" "} and groups[0].startswith("0") and len(groups) <= 5:
        return True  # national trunk prefix: 020 7946 0958, 030 1234567, 06 12 34 56 78
    # Anything else needs a word like "call" or "phone" shortly before it, with no other number between.
    context = list(_PHONE_CONTEXT.finditer(before))
    return bool(context) and not any(c.isdigit() for c in before[context[-1].end() :])


_DETECTORS: tuple[tuple[PIIKind, Callable[[str], Iterable[tuple[int, int]]]], ...] = (
    (PIIKind.SECRET, _secrets),
    (PIIKind.EMAIL, _emails),
    (PIIKind.IBAN, _ibans),
    (PIIKind.CARD, _cards),
    (PIIKind.SSN, _ssns),
    (PIIKind.IP, _ips),
    (PIIKind.PHONE, _phones),
)


def find_pii(text: str, kinds: Collection[PIIKind] = ALL_KINDS) -> list[Finding]:
    """Non-overlapping findings in text order; where detectors overlap, the higher-priority kind wins."""
    taken: list[Finding] = []
    for kind, detect in _DETECTORS:
        if kind not in kinds:
            continue
        for start, end in detect(text):
            if all(end <= f.start or start >= f.end for f in taken):
                taken.append(Finding(kind, start, end, text[start:end]))
    return sorted(taken, key=lambda f: f.start)


def redact(texts: Sequence[str] | str, kinds: Collection[PIIKind] = ALL_KINDS) -> Redaction:
    """Replace PII in `texts` with `[KIND_n]` placeholders, numbered per kind across all texts.

    The same value gets the same placeholder everywhere, so a model can still tell two addresses apart
    and refer back to one. Text that already looks like a placeholder is left as it is.
    """
    items = [texts] if isinstance(texts, str) else list(texts)
    placeholders: dict[tuple[PIIKind, str], str] = {}
    originals: dict[str, str] = {}
    counters: dict[PIIKind, int] = {}
    redacted: list[str] = []
    for text in items:
        if not isinstance(text, str):
            raise InvalidInput(f"redact expects strings, got {type(text).__name__}")
        parts: list[str] = []
        cursor = 0
        for finding in find_pii(text, kinds):
            key = (finding.kind, _normal(finding.kind, finding.value))
            if key not in placeholders:
                counters[finding.kind] = counters.get(finding.kind, 0) + 1
                placeholders[key] = f"[{finding.kind.value.upper()}_{counters[finding.kind]}]"
                originals[placeholders[key]] = finding.value
            parts.extend([text[cursor : finding.start], placeholders[key]])
            cursor = finding.end
        parts.append(text[cursor:])
        redacted.append("".join(parts))
    return Redaction(tuple(redacted), originals)


def _normal(kind: PIIKind, value: str) -> str:
    """The form two mentions of one value share (case and separators folded where they don't matter)."""
    if kind in (PIIKind.CARD, PIIKind.PHONE, PIIKind.IBAN, PIIKind.SSN):
        return re.sub(r"[^0-9A-Za-z+]", "", value).upper()
    if kind in (PIIKind.EMAIL, PIIKind.IP):
        return value.lower()
    return value


__all__ = [
    "ALL_KINDS",
    "Finding",
    "PIIKind",
    "Redaction",
    "find_pii",
    "iban_valid",
    "luhn_valid",
    "redact",
]
