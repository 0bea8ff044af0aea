"""Same LongMemEval top 10 for two versions with the same schema (main and the change): the first N dev
questions' haystacks ingested once (`bench longmemeval`'s own `ingest`, turn granularity) with the first
version, the file copied for the second, every question searched as `bench longmemeval` searches it, twice
in a row (the second search sees what the layer remembered from the first), and the top 10 compared.

Usage: lme_same.py OUT_JSON N PKG_A PKG_B (renamed package copies on PYTHONPATH, as for `paired.py`)."""
import importlib, json, os, shutil, sys, tempfile

out_path, n, first, second = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
data = os.environ.get("LONGMEMEVAL", "/work/shared/data/longmemeval/longmemeval_s_dev100.json.gz")
mod = {p: (importlib.import_module(f"{p}.memory"), importlib.import_module(f"{p}.bench.longmemeval"),
           importlib.import_module(f"{p}.bench.longmemeval_data")) for p in (first, second)}
cases = [c for c in mod[first][2].load(data, limit=n)]
tmp = tempfile.mkdtemp()
db = {first: os.path.join(tmp, "a.db"), second: os.path.join(tmp, "b.db")}
with mod[first][0].Memory(store=db[first], embedder="static", track_access=False) as m:
    for case in cases:
        mod[first][1].ingest(m, case, "turn")
shutil.copy(db[first], db[second])
tops = {}
for p in (first, second):
    with mod[p][0].Memory(store=db[p], embedder="static", track_access=False) as m:
        tops[p] = [[mod[p][1].search(m, c, k=10) for c in cases] for _ in range(2)]
same = [sum(a == b for a, b in zip(tops[first][i], tops[second][i])) for i in range(2)]
out = {"command": f"lme_same.py {n} {first} {second}", "questions": len(cases),
       "same_top10_first_search": same[0], "same_top10_second_search": same[1],
       "second_search_same_as_first": {p: sum(a == b for a, b in zip(*tops[p])) for p in tops}}
json.dump(out, open(out_path, "w"), indent=1)
print(json.dumps(out, indent=1))
shutil.rmtree(tmp)
