"""Extraction on realistic chat written by others, labelled by hand: recall and precision per turn.

The turns come from the data sets, never from this repository: a stable sample of LoCoMo turns (the
`PER_CONVERSATION` turns of each conversation with the smallest hash of their id) and of LongMemEval
user sentences that mention the speaker (the `LONGMEMEVAL_SIZE` sentences with the smallest hash of their
id, one per session turn at most). The labels file (`benchmarks/extraction/<name>-labels.jsonl`) holds
only ids and labels:

    {"id": "locomo:conv-26:D3:5", "split": "dev", "items": [{"words": ["pottery", "class"],
     "date": "2023-07-14"}], "forbid": [["wig"]]}

An *item* is something the speaker states about themselves or their life that is worth keeping past the
conversation; it is *covered* when one memory extracted from that turn holds every required word
(`overlap.words`: stemmed, number words as digits) and, when the item names a date, the memory's event
time falls on that date or its text names it. A *forbid* entry is a set of words no memory of that turn
may hold together (a sarcastic claim, a question's content, "remember that."). Precision counts a memory
correct when it covers an item, or when a person judged it acceptable (`judgments-<name>.jsonl`, kept as
hashes like the other judged sets); a memory that holds a forbidden set is wrong whatever the judgment.

Splits are by conversation (LoCoMo) and by question (LongMemEval): the `heldout` part is meant to be
looked at only once the rules are settled. A second draw continues the same hash order (the next
`SECOND_PER_CONVERSATION` turns of every conversation and the next `SECOND_LONGMEMEVAL_SIZE` sentences);
its turns are labelled with the split `heldout2`, whatever their conversation, and were labelled before
the extractor was run on them. Further draws continue the same order, each after the last (`DRAWS`): a third
one, `heldout3` (labelled before any extractor was run on it), then a fourth and a fifth, `train` and
`train2`, each of the first draw's size, labelled for training a learned extractor; then a sixth,
`heldout4` (the size of `heldout3`, labelled blind), and a seventh and an eighth, `train3` and `train4`
(the size of `train`). A turn of a later draw carries its draw's name as split. Only turns with a label
row are scored, so a split labelled in part counts its labelled turns only.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memstrata import InvalidInput
from memstrata.extraction.base import Candidate, Extractor, Message
from memstrata.extraction.rules import RuleExtractor

from .extraction_judged import key, load_judgments
from .extraction_longmemeval import session_time
from .locomo_data import parse_session_date
from .overlap import words

LABELS_DIR = Path(__file__).resolve().parents[1] / "extraction"
NAME = "realistic-others"
PER_CONVERSATION = 30
LONGMEMEVAL_SIZE = 50
HELDOUT_CONVERSATIONS = 2  # of LoCoMo's five dev conversations
SECOND_PER_CONVERSATION = 12  # the second draw (split "heldout2"), after the first in hash order
SECOND_LONGMEMEVAL_SIZE = 20
THIRD_PER_CONVERSATION = 12  # the third draw (split "heldout3"), after the second
THIRD_LONGMEMEVAL_SIZE = 20
FOURTH_PER_CONVERSATION = 30  # the fourth draw (split "train"), after the third
FOURTH_LONGMEMEVAL_SIZE = 50
FIFTH_PER_CONVERSATION = 30  # the fifth draw (split "train2"), after the fourth
FIFTH_LONGMEMEVAL_SIZE = 50
SIXTH_PER_CONVERSATION = 12  # the sixth draw (split "heldout4", blind), after the fifth
SIXTH_LONGMEMEVAL_SIZE = 20
SEVENTH_PER_CONVERSATION = 30  # the seventh draw (split "train3"), after the sixth
SEVENTH_LONGMEMEVAL_SIZE = 50
EIGHTH_PER_CONVERSATION = 30  # the eighth draw (split "train4"), after the seventh
EIGHTH_LONGMEMEVAL_SIZE = 50
# The draws after the first, in hash order: (split, LoCoMo turns per conversation, LongMemEval sentences).
DRAWS = (
    ("heldout2", SECOND_PER_CONVERSATION, SECOND_LONGMEMEVAL_SIZE),
    ("heldout3", THIRD_PER_CONVERSATION, THIRD_LONGMEMEVAL_SIZE),
    ("train", FOURTH_PER_CONVERSATION, FOURTH_LONGMEMEVAL_SIZE),
    ("train2", FIFTH_PER_CONVERSATION, FIFTH_LONGMEMEVAL_SIZE),
    ("heldout4", SIXTH_PER_CONVERSATION, SIXTH_LONGMEMEVAL_SIZE),
    ("train3", SEVENTH_PER_CONVERSATION, SEVENTH_LONGMEMEVAL_SIZE),
    ("train4", EIGHTH_PER_CONVERSATION, EIGHTH_LONGMEMEVAL_SIZE),
)
SPLITS = ("dev", "heldout", "heldout2", "heldout3", "train", "train2", "heldout4", "train3", "train4")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])|\n+")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|we|our|us)\b")
_MONTHS = "january february march april may june july august september october november december".split()


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    text: str
    at: datetime
    speaker: str | None
    split: str

    def message(self) -> Message:
        return Message(role="user", content=self.text, at=self.at, speaker=self.speaker)


@dataclass(frozen=True, slots=True)
class Item:
    words: tuple[str, ...]
    date: str | None = None  # YYYY-MM-DD


@dataclass(frozen=True, slots=True)
class Label:
    items: tuple[Item, ...]
    forbid: tuple[tuple[str, ...], ...]
    split: str


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def locomo_turns(path: str | Path, per_conversation: int = PER_CONVERSATION) -> list[Turn]:
    """The sampled LoCoMo turns; the conversations with the smallest id hash are held out."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"cannot read LoCoMo file {path}: {exc}") from exc
    heldout = set(sorted((str(s["sample_id"]) for s in data), key=_digest)[:HELDOUT_CONVERSATIONS])
    chosen: list[Turn] = []
    for sample in data:
        conversation, sample_id = sample["conversation"], str(sample["sample_id"])
        turns = []
        for name, session in conversation.items():
            if not re.fullmatch(r"session_\d+", name) or not isinstance(session, list):
                continue
            at = parse_session_date(conversation[f"{name}_date_time"])
            for turn in session:
                text = str(turn.get("text", "")).strip()
                if text:
                    turn_id = f"locomo:{sample_id}:{turn['dia_id']}"
                    split = "heldout" if sample_id in heldout else "dev"
                    turns.append(Turn(turn_id, text, at, str(turn["speaker"]), split))
        chosen.extend(sorted(turns, key=lambda t: _digest(t.id))[:per_conversation])
    return chosen


def sentences(text: str) -> list[str]:
    """A user turn's sentences (a plain split on end punctuation and line breaks)."""
    return [part.strip() for part in _SENTENCE.split(text) if part and part.strip()]


def longmemeval_turns(path: str | Path, size: int = LONGMEMEVAL_SIZE) -> list[Turn]:
    """Sampled LongMemEval user sentences that mention the speaker (5-40 words), one per user turn."""
    raw = Path(path)
    if not raw.is_file():
        raise InvalidInput(f"LongMemEval file not found: {raw}")
    opener = gzip.open if raw.suffix == ".gz" else open
    with opener(raw, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    seen: set[str] = set()
    candidates: list[Turn] = []
    for row in data:
        question = str(row["question_id"])
        split = "heldout" if int(_digest(question)[:8], 16) % 3 == 0 else "dev"
        for sid, when, session in zip(
            row["haystack_session_ids"], row["haystack_dates"], row["haystack_sessions"], strict=True
        ):
            if sid in seen:
                continue
            seen.add(sid)
            at = session_time(when)
            for index, turn in enumerate(session):
                if turn["role"] != "user":
                    continue
                options = [
                    (f"longmemeval:{sid}:{index}:{number}", sentence)
                    for number, sentence in enumerate(sentences(str(turn["content"])))
                    if 5 <= len(sentence.split()) <= 40 and _FIRST_PERSON.search(sentence)
                ]
                if options:
                    turn_id, sentence = min(options, key=lambda option: _digest(option[0]))
                    candidates.append(Turn(turn_id, sentence, at, None, split))
    return sorted(candidates, key=lambda t: _digest(t.id))[:size]


def _draw(rank: int, sizes: Sequence[int]) -> str | None:
    """The later draw a turn at `rank` (0-based, in hash order) falls in, given each draw's size."""
    end = 0
    for (split, *_), size in zip(DRAWS, sizes, strict=True):
        end += size
        if rank < end:
            return split
    return None


def _with_draws(chosen: Sequence[Turn], first: int, sizes: Sequence[int]) -> list[Turn]:
    """`chosen` (one hash-ordered sample) with the turns after the first `first` split by their draw."""
    return [
        turn if rank < first else replace(turn, split=_draw(rank - first, sizes) or turn.split)
        for rank, turn in enumerate(chosen)
    ]


def turns(locomo: str | Path, longmemeval: str | Path) -> list[Turn]:
    """Every draw: the first sample, and after it in the same hash order the later ones (`DRAWS`)."""
    per_conversation = [size for _, size, _ in DRAWS]
    sentence_sizes = [size for _, _, size in DRAWS]
    conversations: dict[str, list[Turn]] = {}
    for turn in locomo_turns(locomo, PER_CONVERSATION + sum(per_conversation)):
        conversations.setdefault(turn.id.split(":")[1], []).append(turn)
    out = [t for part in conversations.values() for t in _with_draws(part, PER_CONVERSATION, per_conversation)]
    sampled = longmemeval_turns(longmemeval, LONGMEMEVAL_SIZE + sum(sentence_sizes))
    return out + _with_draws(sampled, LONGMEMEVAL_SIZE, sentence_sizes)


def load_labels(path: str | Path) -> dict[str, Label]:
    """id -> Label from a labels file; raise `InvalidInput` naming the line of a malformed row."""
    labels: dict[str, Label] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            items = tuple(Item(tuple(i["words"]), i.get("date")) for i in row.get("items", []))
            forbid = tuple(tuple(group) for group in row.get("forbid", []))
            labels[str(row["id"])] = Label(items, forbid, str(row["split"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInput(f"{path}:{number}: malformed label ({exc})") from exc
    return labels


def _root(word: str) -> str:
    """`overlap.words`' stem without a final "e", so that "love" and "loves" ("lov") are one word."""
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def _holds(required: Sequence[str], memory: Candidate) -> bool:
    wanted = {_root(w) for word in required for w in words(word)}
    return bool(wanted) and wanted <= {_root(w) for w in words(memory.content)}


def _names_date(date: str, memory: Candidate) -> bool:
    if memory.event_time is not None and memory.event_time.date().isoformat() == date:
        return True
    year, month, day = (int(part) for part in date.split("-"))
    text = memory.content.casefold()
    return f"{day} {_MONTHS[month - 1]} {year}" in text or f"{_MONTHS[month - 1]} {day}, {year}" in text


def covers(item: Item, memory: Candidate, *, with_date: bool = True) -> bool:
    """True when `memory` holds every required word of `item` (and its date, when asked)."""
    return _holds(item.words, memory) and (not with_date or item.date is None or _names_date(item.date, memory))


def forbidden(label: Label, memory: Candidate) -> bool:
    return any(_holds(group, memory) for group in label.forbid)


@dataclass(frozen=True, slots=True)
class TurnResult:
    turn: Turn
    label: Label
    memories: tuple[Candidate, ...]

    def covered(self, *, with_date: bool = True) -> list[bool]:
        return [any(covers(item, m, with_date=with_date) for m in self.memories) for item in self.label.items]

    def verdicts(self, judgments: dict[str, bool]) -> list[bool | None]:
        """Per memory: True (covers an item or judged ok), False (forbidden or judged wrong), None (unjudged)."""
        out: list[bool | None] = []
        for memory in self.memories:
            if forbidden(self.label, memory):
                out.append(False)
            elif any(covers(item, memory, with_date=False) for item in self.label.items):
                out.append(True)
            else:
                out.append(judgments.get(key(self.turn.message(), memory)))
        return out


def unjudged(results: Sequence[TurnResult], judgments: dict[str, bool]) -> list[dict[str, str]]:
    """The memories that match no label and have no judgment yet, for a person to judge."""
    return [
        {"key": key(r.turn.message(), m), "message": r.turn.text, "memory": m.content}
        for r in results
        for m, verdict in zip(r.memories, r.verdicts(judgments), strict=True)
        if verdict is None
    ]


def score(results: Sequence[TurnResult], judgments: dict[str, bool]) -> dict[str, Any]:
    """Recall (strict: words and date; and words only), precision, forbid violations of `results`."""
    strict = [hit for r in results for hit in r.covered()]
    loose = [hit for r in results for hit in r.covered(with_date=False)]
    dated = [
        hit
        for r in results
        for item, hit in zip(r.label.items, r.covered(with_date=False), strict=True)
        if item.date and hit
    ]
    dated_right = sum(hit for r in results for item, hit in zip(r.label.items, r.covered(), strict=True) if item.date)
    verdicts = [v for r in results for v in r.verdicts(judgments)]
    judged = [v for v in verdicts if v is not None]
    violations = sum(any(forbidden(r.label, m) for m in r.memories) for r in results if r.label.forbid)
    return {
        "turns": len(results),
        "items": len(strict),
        "recall": round(sum(strict) / len(strict), 4) if strict else None,
        "covered": sum(strict),
        "recall_words_only": round(sum(loose) / len(loose), 4) if loose else None,
        "dates_right": f"{dated_right}/{len(dated)}",
        "memories": len(verdicts),
        "precision": round(sum(judged) / len(judged), 4) if judged else None,
        "correct": sum(judged),
        "unjudged": len(verdicts) - len(judged),
        "forbid_turns": sum(bool(r.label.forbid) for r in results),
        "forbid_violated": violations,
    }


def evaluate(
    locomo: str | Path,
    longmemeval: str | Path,
    *,
    name: str = NAME,
    labels_dir: str | Path = LABELS_DIR,
    extractor: Extractor | None = None,
    splits: Sequence[str] = SPLITS,
    show_unjudged: bool = False,
) -> tuple[dict[str, Any], list[TurnResult]]:
    """Scores per split (and per source) of the labelled turns, and the per-turn results."""
    labels = load_labels(Path(labels_dir) / f"{name}-labels.jsonl")
    judgments = load_judgments(Path(labels_dir) / f"judgments-{name}.jsonl")
    chosen = extractor or RuleExtractor()
    results = [
        TurnResult(turn, labels[turn.id], tuple(chosen.extract([turn.message()])))
        for turn in turns(locomo, longmemeval)
        if turn.id in labels and labels[turn.id].split in splits
    ]
    out: dict[str, Any] = {"benchmark": "extraction-realistic", "labels": name, "labelled_by": LABELLED_BY}
    for split in splits:
        part = [r for r in results if r.label.split == split]
        out[split] = score(part, judgments)
        for source in ("locomo", "longmemeval"):
            out[split][source] = score([r for r in part if r.turn.id.startswith(source)], judgments)
        if show_unjudged:
            out[split]["unjudged_memories"] = unjudged(part, judgments)
    return out, results


LABELLED_BY = (
    "self-written labels on text written by others: the labels and judgments are by the author of the rules, "
    "made before the extractor was run on these turns"
)


def per_item(results: Sequence[TurnResult]) -> dict[str, list[bool]]:
    """turn id -> strict hit per item (to check that a change loses no hit)."""
    return {r.turn.id: r.covered() for r in results}


def dump(locomo: str | Path, longmemeval: str | Path) -> Iterator[str]:
    """The sampled turns as JSON lines (id, split, date, speaker, text) for labelling; never stored here."""
    for turn in turns(locomo, longmemeval):
        row = {"id": turn.id, "split": turn.split, "at": turn.at.date().isoformat(), "speaker": turn.speaker}
        yield json.dumps(row | {"text": turn.text})


if __name__ == "__main__":  # pragma: no cover - manual entry point: print the turns to label
    for line in dump(sys.argv[1], sys.argv[2]):
        print(line)
