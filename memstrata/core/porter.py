"""Porter's stemmer as SQLite's FTS5 `porter` tokenizer applies it (pure).

FTS5 follows the reference implementation of Porter (1980), which departs from the paper (and from
Snowball's "porter", PyStemmer's) in a few rules: step 2 rewrites `bli` → `ble` and `logi` → `log`,
step 1b undoubles every double consonant but `l`, `s`, `z`, and a rule applies only when it is the
first of its step whose suffix matches (rules are tried by the suffix's next-to-last letter). The
stemmer works on the token's UTF-8 bytes: letters outside ASCII count as consonants. Tokens shorter
than 3 or longer than 64 bytes are not stemmed.
"""

from __future__ import annotations

import re
from functools import lru_cache

_MIN_BYTES = 3
_MAX_BYTES = 64

Rule = tuple[str, str, str]
"""(suffix, condition, replacement); condition is "m>0", "m>1", "m>1 s|t" or "*v*"."""

_STEP_1B: tuple[Rule, ...] = (("eed", "m>0", "ee"), ("ed", "*v*", ""), ("ing", "*v*", ""))
_STEP_2: tuple[Rule, ...] = (
    ("ational", "m>0", "ate"),
    ("tional", "m>0", "tion"),
    ("enci", "m>0", "ence"),
    ("anci", "m>0", "ance"),
    ("izer", "m>0", "ize"),
    ("logi", "m>0", "log"),
    ("bli", "m>0", "ble"),
    ("alli", "m>0", "al"),
    ("entli", "m>0", "ent"),
    ("eli", "m>0", "e"),
    ("ousli", "m>0", "ous"),
    ("ization", "m>0", "ize"),
    ("ation", "m>0", "ate"),
    ("ator", "m>0", "ate"),
    ("alism", "m>0", "al"),
    ("iveness", "m>0", "ive"),
    ("fulness", "m>0", "ful"),
    ("ousness", "m>0", "ous"),
    ("aliti", "m>0", "al"),
    ("iviti", "m>0", "ive"),
    ("biliti", "m>0", "ble"),
)
_STEP_3: tuple[Rule, ...] = (
    ("icate", "m>0", "ic"),
    ("ative", "m>0", ""),
    ("alize", "m>0", "al"),
    ("iciti", "m>0", "ic"),
    ("ical", "m>0", "ic"),
    ("ful", "m>0", ""),
    ("ness", "m>0", ""),
)
_STEP_4: tuple[Rule, ...] = tuple(
    (suffix, "m>1 s|t" if suffix == "ion" else "m>1", "")
    for suffix in "al ance ence er ic able ible ant ement ment ent ion ou ism ate iti ous ive ize".split()
)


_CLASSES = "".join("v" if chr(i) in "aeiou" else "y" if chr(i) == "y" else "c" for i in range(256)).encode("ascii")
"""`bytes.translate` table: a, e, i, o, u to `v`, y to `y` (`_classes` resolves it), any other byte to `c`."""
_VOWEL = re.compile("[aeiou]|.y", re.DOTALL)
"""Porter's *v* as FTS5 reads it: a vowel, or a `y` after the first letter."""


def _classes(stem: str) -> str:
    """Each letter of the stem as `c` (consonant) or `v` (vowel: a, e, i, o, u, and y after a consonant;
    a first y is a consonant). Computed in C but for y; the stem's letters are bytes (latin-1)."""
    pattern = stem.encode("latin-1").translate(_CLASSES).decode("ascii")
    if "y" not in pattern:
        return pattern
    out: list[str] = []
    for char in pattern:
        out.append(("v" if out and out[-1] == "c" else "c") if char == "y" else char)
    return "".join(out)


def _measure(stem: str) -> int:
    """Porter's m: how many vowel-consonant sequences the stem has (a consonant right after a vowel ends
    one, and such pairs never overlap)."""
    return _classes(stem).count("vc")


def _has_vowel(stem: str) -> bool:
    """Porter's *v*, as FTS5 reads it: a vowel, or a `y` after the first letter."""
    return _VOWEL.search(stem) is not None


def _ends_cvc(stem: str) -> bool:
    """Porter's *o: consonant-vowel-consonant at the end, the last not w, x or y."""
    if not stem or stem[-1] in "wxy":
        return False
    return _classes(stem)[-3:] == "cvc"


def _holds(condition: str, stem: str) -> bool:
    if condition == "*v*":
        return _has_vowel(stem)
    if condition == "m>0":
        return _measure(stem) > 0
    if condition == "m>1":
        return _measure(stem) > 1
    return stem[-1:] in ("s", "t") and _measure(stem) > 1  # "m>1 s|t"


def _by_next_to_last(rules: tuple[Rule, ...]) -> dict[str, tuple[Rule, ...]]:
    """A step's rules grouped by their suffix's next-to-last letter, each group in the step's order."""
    groups: dict[str, list[Rule]] = {}
    for rule in rules:
        groups.setdefault(rule[0][-2], []).append(rule)
    return {letter: tuple(group) for letter, group in groups.items()}


_GROUPS = {id(rules): _by_next_to_last(rules) for rules in (_STEP_1B, _STEP_2, _STEP_3, _STEP_4)}
"""Each step's rules by next-to-last letter: `_apply` tries only the rules sharing the word's."""


def _apply(word: str, rules: tuple[Rule, ...]) -> tuple[str, bool]:
    """The first rule whose suffix matches (and is shorter than the word), among those sharing the
    word's next-to-last letter; (the word after it, whether it applied)."""
    for suffix, condition, replacement in _GROUPS[id(rules)].get(word[-2:-1], ()):
        if len(word) <= len(suffix) or not word.endswith(suffix):
            continue
        stem = word[: -len(suffix)]
        if _holds(condition, stem):
            return stem + replacement, True
        return word, False
    return word, False


def _step_1a(word: str) -> str:
    if not word.endswith("s"):
        return word
    if word.endswith("es"):
        if (len(word) > 4 and word.endswith("sses")) or (len(word) > 3 and word.endswith("ies")):
            return word[:-2]
        return word[:-1]
    return word if word.endswith("ss") else word[:-1]


def _step_1b(word: str) -> str:
    stemmed, applied = _apply(word, _STEP_1B)
    if not applied or word.endswith("eed"):  # only a removed -ed or -ing goes on
        return stemmed
    word = stemmed
    for suffix, replacement in (("at", "ate"), ("bl", "ble"), ("iz", "ize")):
        if len(word) > 2 and word.endswith(suffix):
            return word[:-2] + replacement
    last = word[-1:]
    if len(word) > 1 and last not in "aeiou" and last not in "lsz" and word[-2] == last:
        return word[:-1]
    if _measure(word) == 1 and _ends_cvc(word):
        return word + "e"
    return word


def _step_5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            word = stem
    if len(word) > 1 and word.endswith("ll") and _measure(word[:-1]) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=65536)
def porter_stem(token: str) -> str:
    """The stem FTS5's porter tokenizer gives a folded (lower-case) token."""
    raw = token.encode("utf-8")
    if not _MIN_BYTES <= len(raw) <= _MAX_BYTES:
        return token
    word = _step_1b(_step_1a(raw.decode("latin-1")))
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    for rules in (_STEP_2, _STEP_3, _STEP_4):
        word, _ = _apply(word, rules)
    return _step_5(word).encode("latin-1").decode("utf-8", errors="replace")
