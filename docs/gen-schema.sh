#!/usr/bin/env bash
# gen-schema.sh GPUREC - prints docs/schema.md from `gpurec tables` and
# `gpurec schema`, so the reference never drifts from schema/tables.def.
# `make docs` writes it; tests/cli/run.sh checks it is current.
set -euo pipefail
gpurec=${1:-build/gpurec}
python3 - "$gpurec" <<'PY'
import csv, io, subprocess, sys
g = sys.argv[1]
def rows(*args):
    out = subprocess.run([g, "--format", "csv", *args], check=True,
                         capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out, newline="")))
print("# gpurec tables\n")
print("Generated from `schema/tables.def` by `make docs`; do not edit by hand.\n")
print("Times are ns since the Unix epoch (UTC). API timestamps are host-side call")
print("entry (enqueue), not GPU execution; durations of async calls are enqueue time.\n")
for t in rows("tables"):
    print(f"## {t['name']}\n\n{t['description']}.\n")
    print("| column | type | meaning |\n|---|---|---|")
    for c in rows("schema", t["name"]):
        print(f"| `{c['column']}` | {c['type']} | {c['description']} |")
    print()
PY
