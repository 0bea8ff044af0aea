import numpy as np, make_models as mm
p, q = np.load("raw_passage_lit.npy"), np.load("raw_query_lit.npy")
mm.build("e5s-lit-passage-256", p)
mm.build("e5s-lit-mean-256", (p + q) / 2)
mm.build("e5s-lit-mean-384", (p + q) / 2, pca_dims=None)
