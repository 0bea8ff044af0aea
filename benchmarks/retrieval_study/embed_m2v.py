"""Embed dev turns/questions with the m2v-minilm-256 static model (memstrata StaticEmbedder;
M2V below is the minimal loader used before it existed); cache to cache/m2v*_*.npy. Variants of the document text too."""
from pathlib import Path
import json
import sys

import numpy as np
from tokenizers import Tokenizer

from data import load

D = str(Path(__file__).resolve().parents[2] / "memstrata/embedders/models/m2v-minilm-256")


class M2V:
    def __init__(self, d=D):
        self.tok = Tokenizer.from_file(f"{d}/tokenizer.json")
        self.emb = np.load(f"{d}/embeddings.npy").astype(np.float32)
        self.unk = self.tok.token_to_id(json.load(open(f"{d}/config.json"))["unk_token"])

    def encode(self, texts):
        out = np.zeros((len(texts), self.emb.shape[1]), np.float32)
        for i, e in enumerate(self.tok.encode_batch(list(texts), add_special_tokens=False)):
            ids = [t for t in e.ids if t != self.unk]
            if ids:
                v = self.emb[ids].mean(0)
                out[i] = v / (np.linalg.norm(v) or 1.0)
        return out


def doc_texts(c, variant):
    ts = c.turns
    if variant == "own":
        return [t.text for t in ts]
    if variant == "prev1":
        return [(ts[i - 1].text + " " if i and ts[i - 1].session == t.session else "") + t.text for i, t in enumerate(ts)]
    raise ValueError(variant)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from memstrata.embedders.static import StaticEmbedder  # verified identical to M2V (max diff 1e-7)

    m = StaticEmbedder()
    m.encode = m.embed_documents
    for c in load():
        np.save(f"cache/m2v_{c.sample_id}_qs.npy", m.encode([q.text for q in c.questions]))
        np.save(f"cache/m2v_{c.sample_id}_docs.npy", m.encode(doc_texts(c, "own")))
        np.save(f"cache/m2vprev_{c.sample_id}_qs.npy", m.encode([q.text for q in c.questions]))
        np.save(f"cache/m2vprev_{c.sample_id}_docs.npy", m.encode(doc_texts(c, "prev1")))
    print("done")
