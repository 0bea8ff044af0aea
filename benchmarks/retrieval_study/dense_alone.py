import numpy as np
from lab import dense, report

for m in ("m2v", "m2vprev", "e5"):
    S = dense(m)
    report(f"dense alone: {m}", lambda ci, qi: np.argsort(-S[ci][qi])[:50].tolist())
