import numpy as np, make_models as mm
raw = np.load("/tmp/e5static/raw_passage.npy")
mm.build("e5s-passage-384", raw, pca_dims=None)
mm.build("e5s-passage-pca384", raw, pca_dims=384)
mm.build("e5s-passage-256-nosif", raw, sif=False)
