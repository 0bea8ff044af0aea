"""Search-time cost (median/p95 over 3 x 760 queries) and FTS5 index size, plain vs expanded."""
import os
import sqlite3

import final_eval as fe

print("load avg before:", os.getloadavg())
for expanded in (False, True):
    db = fe.build_fts(expanded)
    db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    pages = db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
    print(f"FTS5 db size {'expanded' if expanded else 'plain'}: {pages / 1024:.0f} KiB")
fe.timing()
print("load avg after:", os.getloadavg())
