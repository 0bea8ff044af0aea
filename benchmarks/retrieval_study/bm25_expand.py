"""Document-expansion sweeps: previous/next turns and session date as extra FTS5 columns."""
from bm25_variants import date_text, q_base, q_qwords, run


def ctx_cols(prev_n=1, nxt=False, date=False, nxt_n=1):
    def f(c):
        ts = c.turns
        own = [t.text for t in ts]
        cols = [own]
        prev = []
        for i, t in enumerate(ts):
            parts = [ts[j].text for j in range(max(0, i - prev_n), i) if ts[j].session == t.session]
            prev.append(" ".join(parts))
        cols.append(prev)
        if nxt:
            cols.append([" ".join(ts[j].text for j in range(i + 1, min(len(ts), i + 1 + nxt_n)) if ts[j].session == t.session) for i, t in enumerate(ts)])
        if date:
            cols.append([date_text(t) for t in ts])
        return cols
    return f


if __name__ == "__main__":
    for w in (0.4, 0.5, 0.7, 1.0):
        run(f"prev1 w={w}", ctx_cols(1), q_base, [1, w])
    for w in (0.3, 0.5):
        run(f"prev2 (two previous turns) w={w}", ctx_cols(2), q_base, [1, w])
    for wp, wn in ((0.5, 0.1), (0.5, 0.2), (0.5, 0.3), (0.4, 0.2), (0.7, 0.2)):
        run(f"prev1 w={wp} + next1 w={wn}", ctx_cols(1, True), q_base, [1, wp, wn])
    for wd in (0.3, 0.5, 1.0):
        run(f"prev1 0.5 + next1 0.2 + date w={wd}", ctx_cols(1, True, True), q_base, [1, 0.5, 0.2, wd])
    for wd in (0.5, 1.0):
        run(f"prev1 0.5 + date w={wd}", ctx_cols(1, False, True), q_base, [1, 0.5, wd])
    run("prev1 0.5 + next1 0.2 + date 0.5, qwords", ctx_cols(1, True, True), q_qwords, [1, 0.5, 0.2, 0.5])
