#!/bin/bash
# readonly.sh - a crashed recording read as evidence.
#
# A writer is killed with SIGKILL mid-recording, leaving an unsealed
# segment with committed frames in its WAL.  The oracle is SQLite itself
# on a scratch copy (normal WAL recovery): the events every committed
# block holds.  Then:
#   - on read-only media (a tmpfs remounted ro; root), with and without
#     the -shm file, gpurec reads exactly the oracle's count;
#   - on writable media, gpurec sql and verify create no file (no -shm,
#     no -wal) and change no byte (sha256sum before and after).
#
# env: GPUREC, SYNTH, TRIALS (crashes, default 2).
set -u
cd "$(dirname "$0")/../.."
GPUREC=${GPUREC:-build/asan/gpurec}
SYNTH=${SYNTH:-build/asan/gpurec-synth}
TRIALS=${TRIALS:-2}
T=$(mktemp -d)
RO=
cleanup() {
	[ -n "$RO" ] && umount "$RO" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
pass=0; fail=0; skipped=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

oracle() { # DIR: events in committed blocks, by SQLite's own recovery
	python3 - "$1" <<'PY'
import glob, os, shutil, sqlite3, sys, tempfile
d = tempfile.mkdtemp()
n = 0
for p in glob.glob(sys.argv[1] + "/*.seg"):
    q = os.path.join(d, os.path.basename(p))
    for suf in ("", "-wal"):
        if os.path.exists(p + suf):
            shutil.copyfile(p + suf, q + suf)
    db = sqlite3.connect(q)
    n += db.execute("SELECT coalesce(sum(count), 0) FROM blocks "
                    "WHERE tbl = 'cuda_kernel'").fetchone()[0]
    db.close()
shutil.rmtree(d)
print(n)
PY
}
count() { "$GPUREC" --data "$1" sql "SELECT count(*) FROM cuda_kernel" 2>"$T/err" |
	tail -1 | tr -d ' \r'; }
state() { (cd "$1" && find . -type f | sort && find . -type f -print0 |
	sort -z | xargs -0 sha256sum); }

for trial in $(seq "$TRIALS"); do
	# A kill between a seal and the next segment's creation leaves no
	# WAL (a legitimate state, not this test's): kill again then.
	for try in 1 2 3 4 5; do
		rm -rf "$T/rec"; mkdir -p "$T/rec"
		"$SYNTH" --data "$T/rec/d" --events 100000000 --rate 50000 \
			--flush-every 1000 --rotate-every 40000 >/dev/null 2>&1 &
		pid=$!
		sleep "1.$((RANDOM % 9))"
		kill -9 "$pid"; wait "$pid" 2>/dev/null
		ls "$T/rec/d"/*.seg-wal >/dev/null 2>&1 && break
	done
	ls "$T/rec/d"/*.seg-wal >/dev/null 2>&1 ||
		{ bad "trial $trial: no WAL left by 5 crashes"; continue; }
	want=$(oracle "$T/rec/d")
	[ "$want" -gt 0 ] || { bad "trial $trial: oracle read nothing"; continue; }

	# Writable media: nothing created, nothing changed.
	rm -rf "$T/w"; cp -a "$T/rec/d" "$T/w"; rm -f "$T/w"/*-shm
	state "$T/w" >"$T/before"
	got=$(count "$T/w")
	"$GPUREC" --data "$T/w" verify >"$T/vout" 2>&1; vrc=$?
	"$GPUREC" --data "$T/w" status >/dev/null 2>&1
	"$GPUREC" --data "$T/w" sql "SELECT * FROM segments" >/dev/null 2>&1
	state "$T/w" >"$T/after"
	[ "$got" = "$want" ] && ok "trial $trial: a writable copy reads all $want committed events" ||
		bad "trial $trial: writable copy read $got of $want ($(cat "$T/err"))"
	[ $vrc -eq 0 ] && ok "trial $trial: the crashed copy verifies" ||
		bad "trial $trial: verify: $(head -3 "$T/vout")"
	cmp -s "$T/before" "$T/after" &&
		ok "trial $trial: no file created or byte changed by sql, verify and status" ||
		bad "trial $trial: the copy changed: $(diff "$T/before" "$T/after" | head -4)"

	# Read-only media.
	if [ "$(id -u)" -ne 0 ]; then
		if [ "${CI:-}" = true ]; then bad "read-only media needs root"
		else echo "skip read-only media: not root"; skipped=$((skipped + 1)); fi
		continue
	fi
	RO="$T/ro"; mkdir -p "$RO"
	mount -t tmpfs -o size=256m tmpfs "$RO" ||
		{ bad "cannot mount a tmpfs"; RO=; continue; }
	cp -a "$T/rec/d" "$RO/with-shm"
	cp -a "$T/rec/d" "$RO/no-shm"; rm -f "$RO/no-shm"/*-shm
	mount -o remount,ro "$RO"
	for c in with-shm no-shm; do
		got=$(count "$RO/$c")
		[ "$got" = "$want" ] &&
			ok "trial $trial: read-only media ($c) reads all $want committed events" ||
			bad "trial $trial: read-only media ($c) read $got of $want ($(cat "$T/err"))"
		"$GPUREC" --data "$RO/$c" verify >"$T/vout" 2>&1 &&
			ok "trial $trial: read-only media ($c) verifies" ||
			bad "trial $trial: read-only media ($c) verify: $(head -3 "$T/vout")"
	done
	umount "$RO"; RO=
done

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
