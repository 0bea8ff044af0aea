"""The static embedder reads token ids word by word (`embed_query`, `embed_documents`): the same ids as
the tokenizer, and `embed_query` the same floats as `embed_documents`."""

from __future__ import annotations

import random
import string

import numpy as np
import pytest

from memstrata.embedders import StaticEmbedder
from memstrata.embedders.wordpiece_cache import WordPieceCache, is_bert_wordpiece

TEXTS = [
    "I love experimenting in the kitchen with my sister Maria, it's been great lately.",
    "Losing my job was a bummer, but it pushed me to take the plunge!",
    "don't U.S.A. e-mail ## ##ing 3.14 $5 #tag @me (see: [this]) {x} ~y `z` a|b c\\d",
    "Pneumonoultramicroscopicsilicovolcanoconiosis and antidisestablishmentarianism",
    "x" * 150 + " then a word",  # longer than WordPiece's 100 characters: unknown
    "[UNK] and [PAD] written in the text are the tokenizer's added tokens",
    "I’m at the café — naïve résumé 東京 ſ K",  # not plain ASCII: the tokenizer reads it
    "tabs\tand\nline\r\nbreaks",
    "control\x01character and \x7f delete",
    "word " * 700,  # past 512 tokens: truncated
    "",
    "   ",
    "!!!",
]


@pytest.fixture(scope="module")
def static() -> StaticEmbedder:
    embedder = StaticEmbedder()
    embedder.load()
    return embedder


def _random_texts(count: int) -> list[str]:
    rng = random.Random(16)
    alphabet = string.printable + "éü—’“”"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(count)]


def test_the_shipped_tokenizer_is_read_word_by_word(static: StaticEmbedder) -> None:
    model = static._loaded()
    assert is_bert_wordpiece(model.tokenizer)
    assert model.words.enabled


@pytest.mark.parametrize("text", TEXTS)
def test_ids_equal_the_tokenizers(static: StaticEmbedder, text: str) -> None:
    model = static._loaded()
    assert model.words.ids(text) == model.tokenizer_ids([text])[0]


def test_ids_equal_the_tokenizers_on_random_printable_text(static: StaticEmbedder) -> None:
    model = static._loaded()
    texts = _random_texts(2000)
    assert [model.words.ids(t) for t in texts] == model.tokenizer_ids(texts)


def test_a_batch_read_word_by_word_equals_the_tokenizers_batch(static: StaticEmbedder) -> None:
    """`embed_documents` reads a batch's plain texts word by word and sends the others to the tokenizer
    in one batch: each text keeps its own ids, in order."""
    model = static._loaded()
    texts = [*TEXTS, *_random_texts(300), *TEXTS]
    assert any(not text.isascii() for text in texts) and any(text.isascii() for text in texts)
    assert model.token_ids(texts) == model.tokenizer_ids(texts)


def test_texts_of_remembered_lines_keep_the_tokenizers_ids(static: StaticEmbedder) -> None:
    """Lines are remembered: a text made of lines read before (a turn, then the context holding it),
    of empty lines, or cut at 512 tokens across lines still has the tokenizer's ids."""
    model = static._loaded()
    fresh = WordPieceCache(model.tokenizer, model.tokenizer.encode_batch, 512)
    turns = ["I love my sister's cooking.", "We went hiking (again)!", "", "word " * 300]
    texts = [*turns, "\n".join(turns[:2]), "\n\n".join(turns), turns[1] + "\r\n" + turns[0], "\n".join(turns[3:] * 2)]
    assert fresh.ids_many(texts) == model.tokenizer_ids(texts)
    assert [fresh.ids(text) for text in texts] == model.tokenizer_ids(texts)


def test_a_fresh_cache_and_a_warm_one_agree(static: StaticEmbedder) -> None:
    model = static._loaded()
    fresh = WordPieceCache(model.tokenizer, model.tokenizer.encode_batch, 512)
    for text in TEXTS + TEXTS:
        assert fresh.ids(text) == model.tokenizer_ids([text])[0]


def test_embed_query_is_bit_identical_to_embed_documents(static: StaticEmbedder) -> None:
    texts = TEXTS + _random_texts(500)
    rows = static.embed_documents(texts)
    for text, row in zip(texts, rows, strict=True):
        single = static.embed_query(text)
        assert single.dtype == np.float32
        assert np.array_equal(single.view(np.uint32), row.view(np.uint32)), text
