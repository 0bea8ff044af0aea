"""Texts' token ids read word by word (the static embedder's `embed_query` and `embed_documents`).

A BERT tokenizer (`BertNormalizer` + `BertPreTokenizer` + `WordPiece`) lower-cases the text, splits it
at whitespace and around every punctuation mark, and cuts each word into pieces on its own: a text's
ids are its words' ids one after another. For plain ASCII text (printable characters, tabs and line
breaks) the split is a regular expression, and a word the vocabulary holds whole is one piece (WordPiece
tries the whole word first), so its id is looked up; any other word is tokenized; both are remembered. A
clause costs a split and a few dictionary reads instead of a call into the tokenizer (on LoCoMo's 8,152
turns and contexts: 0.4 s against 0.9-1.5 s for the tokenizer's batch encoding on 2 shared cores). Any other text
(accents, other scripts, control characters, an added token such as "[UNK]" written in the text), or a
tokenizer of another kind, goes to the tokenizer as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

from tokenizers import Tokenizer

MAX_WORDS = 200_000
"""Words remembered at most (a few tens of MB at worst); past it a new word is tokenized every time."""

MAX_LINES = 8192
"""Lines' ids remembered at most (a few MB); when full, the remembered lines are forgotten at once."""

_PLAIN = re.compile(r"[ -~\t\n\r]*")
"""Plain ASCII: nothing for the normalizer to remove, strip of accents or set apart (CJK)."""
_WORDS = re.compile(r"[a-z0-9]+|[^a-z0-9\s]")
"""BertPreTokenizer on lower-cased plain ASCII: runs of letters and digits, each punctuation mark alone
(every printable ASCII character that is not a letter, a digit or a space is BERT punctuation)."""


class WordPieceCache:
    """`ids(text)`: the same ids as the tokenizer's encoding of `text` without special tokens,
    truncated to `max_tokens`; thread-safe (dictionary reads and single writes)."""

    def __init__(self, tokenizer: Tokenizer, encode_batch: Callable[..., Any], max_tokens: int | None) -> None:
        self._tokenizer = tokenizer
        self._encode_batch = encode_batch
        self._max_tokens = max_tokens
        self._added = tuple(token.content for token in tokenizer.get_added_tokens_decoder().values())
        self.enabled = is_bert_wordpiece(tokenizer)
        self._longest = int(getattr(tokenizer.model, "max_input_chars_per_word", 100))
        self._words: dict[str, tuple[int, ...]] = {}
        self._lines: dict[str, tuple[int, ...]] = {}

    def ids(self, text: str) -> list[int]:
        if not self._readable(text):
            return self._encode_batch([text], add_special_tokens=False)[0].ids
        return self._read([text])[0]

    def ids_many(self, texts: Sequence[str]) -> list[list[int]]:
        """`ids` of each text: the texts read word by word are read together (their new words learned in
        one batch), the others go to the tokenizer in one batch."""
        readable = [self._readable(text) for text in texts]
        read = iter(self._read([text for text, plain in zip(texts, readable, strict=True) if plain]))
        others = [text for text, plain in zip(texts, readable, strict=True) if not plain]
        encoded = iter(self._encode_batch(others, add_special_tokens=False) if others else ())
        return [next(read) if plain else next(encoded).ids for plain in readable]

    def _readable(self, text: str) -> bool:
        """Whether `text` is read word by word (plain ASCII for a BERT WordPiece tokenizer, no added token)."""
        return self.enabled and _PLAIN.fullmatch(text) is not None and not any(t in text for t in self._added)

    def _read(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids of plain texts, line by line: a line break separates words, so a text's ids are its
        lines' ids one after another. Lines are remembered (`MAX_LINES`): a conversation turn is
        embedded as a memory's content and again as a line of the next turns' context."""
        split = [text.split("\n") for text in texts]
        lines = self._lines
        found: dict[str, tuple[int, ...]] = {}
        todo: dict[str, list[str]] = {}
        for line in dict.fromkeys(chain.from_iterable(split)):
            pieces = lines.get(line)
            if pieces is None:
                todo[line] = _WORDS.findall(line.lower())
            else:
                found[line] = pieces
        if todo:
            known = self._words
            missing = [word for word in dict.fromkeys(chain.from_iterable(todo.values())) if word not in known]
            fresh = self._learn(missing) if missing else {}
            learned = {
                line: tuple(piece for word in words for piece in (known.get(word) or fresh[word]))
                for line, words in todo.items()
            }
            found |= learned
            if len(lines) + len(learned) > MAX_LINES:
                lines.clear()
            lines.update(learned)
        out = [[piece for line in text_lines for piece in found[line]] for text_lines in split]
        return out if self._max_tokens is None else [ids[: self._max_tokens] for ids in out]

    def _learn(self, words: Sequence[str]) -> dict[str, tuple[int, ...]]:
        """The pieces of words not seen before, remembered: one id for a word the vocabulary holds whole
        (WordPiece's first try; a word longer than its limit is unknown instead), else the tokenizer's."""
        found: dict[str, tuple[int, ...]] = {}
        for word in words:
            whole = self._tokenizer.token_to_id(word) if len(word) <= self._longest else None
            if whole is not None:
                found[word] = (whole,)
        rest = [word for word in words if word not in found]
        if rest:
            encodings = self._encode_batch(rest, add_special_tokens=False)
            found.update((word, tuple(encoding.ids)) for word, encoding in zip(rest, encodings, strict=True))
        for word, pieces in found.items():
            if len(self._words) < MAX_WORDS:
                self._words[word] = pieces
        return found


def is_bert_wordpiece(tokenizer: Tokenizer) -> bool:
    """True for the tokenizer the word-by-word reading is exact for: a lower-casing `BertNormalizer`
    that cleans the text, a `BertPreTokenizer` and a `WordPiece` model."""
    normalizer, pre_tokenizer, model = tokenizer.normalizer, tokenizer.pre_tokenizer, tokenizer.model
    return (
        type(normalizer).__name__ == "BertNormalizer"
        and bool(getattr(normalizer, "lowercase", False))
        and bool(getattr(normalizer, "clean_text", False))
        and type(pre_tokenizer).__name__ == "BertPreTokenizer"
        and type(model).__name__ == "WordPiece"
    )
