#!/usr/bin/env python3
"""flip_block.py SEGMENT N [TABLE]: flips one bit inside the payload of
the N-th block (0-based, by id) of a sealed segment, of TABLE's blocks
where given, so that the block fails its checksum (tests of verify and of
queries that skip a bad block).  The byte is 100 bytes into the payload:
a payload longer than a page continues on overflow pages elsewhere in the
file, so only its start is found by its bytes."""
import os
import sqlite3
import sys

path, n = sys.argv[1], int(sys.argv[2])
table = sys.argv[3] if len(sys.argv) > 3 else None
db = sqlite3.connect("file:" + path + "?immutable=1", uri=True)
sql = "SELECT payload FROM blocks" + (" WHERE tbl = ?" if table else "") + \
    " ORDER BY id LIMIT 1 OFFSET ?"
row = db.execute(sql, ((table, n) if table else (n,))).fetchone()
db.close()
if row is None or len(row[0]) < 200:
    sys.exit("flip_block.py: %s has no block %d%s of 200 bytes or more"
             % (path, n, " of " + table if table else ""))
data = bytearray(open(path, "rb").read())
off = data.find(row[0][:200])
if off < 0:
    sys.exit("flip_block.py: the payload is not in %s" % path)
os.chmod(path, 0o640)
data[off + 100] ^= 0x01
open(path, "wb").write(data)
