#!/usr/bin/env bash
# latsum_bench.sh [BUILD] [BASE] - what sum_runq and sum_io (issue 20,
# summary kinds 7 and 8) buy and cost, before and after in one run.  BASE
# is a build of the tree before them (its gpurec reads runq, block_io and
# file_io raw; its gpurec-synth writes neither kind); without BASE only the
# after figures print.
#
# The busy day's first 10 minutes (gpurec-synth --day 600 --seed 1 --host
# host0, as bench/busyday.sh makes it at 10m: runq 20,000/s, file calls
# 1,000/s, block requests 500/s beside 30,000 launches/s), written by this
# build into BUILD/bench-latsum-10m and by BASE into
# BUILD/bench-latsum-10m-base, each made once and reused while its stamp
# matches (~190 MB each).
#   latsum.runq_latency_10m_s        from sum_runq, best of 3
#   latsum.runq_latency_10m_raw_s    --raw (every wait), best of 3
#   latsum.runq_latency_10m_base_s   BASE's report (exact median over every
#                                    wait, what it ran before), best of 3
#   latsum.io_latency_10m{,_raw,_base}_s   the same for io-latency
#   latsum.{runq,io}_latency_equals_raw    1 if both forms printed the same
# A report that runs past CAP (default 600) seconds prints ">CAP".
# Then the write side, CPU seconds (user + sys) of gpurec-synth writing the
# 10 minutes again (into BUILD/bench-latsum-ingest, removed after), so the
# figure is per core; this build and BASE in turn, twice, the least of each:
#   latsum.events                          events written (every table)
#   latsum.ingest_events_per_s{,_base}     (generating the events included)
#   latsum.bytes{,_base}                   on disk, apparent size
#   latsum.sum_runq_b_per_runq_event       bytes of the kind's summary rows
#   latsum.sum_io_b_per_io_event           (minute and segment rows: the
#                                          segment's size less the size
#                                          without them, both VACUUMed)
#                                          per event of its tables
set -euo pipefail
B=${1:-build}
BASE=${2:-}
CAP=${CAP:-600}
START=2026-11-01T00:00:00Z
STAMP="v1 day=600 seed=1 host=host0"

# write DIR SYNTH: the 10 minutes into DIR; prints the CPU seconds.
write() {
	local d=$1 synth=$2
	chattr -R -i "$d" 2>/dev/null || true
	rm -rf "$d"
	/usr/bin/time -f '%U %S' -o "$d.cpu" "$synth" --data "$d" \
		--start $START --flush-every 300000 --day 600 --seed 1 \
		--host host0 >/dev/null 2>&1
	awk '{ printf "%.2f\n", $1 + $2 }' "$d.cpu"
	rm -f "$d.cpu"
}
# make DIR SYNTH: the 10 minutes into DIR unless its stamp matches.
make_day() {
	local d=$1 synth=$2
	if [ "$(cat "$d/.stamp" 2>/dev/null)" = "$STAMP" ]; then return; fi
	echo "# generating $d (once): $STAMP" >&2
	write "$d" "$synth" >/dev/null
	echo "$STAMP" >"$d/.stamp"
}

D=$B/bench-latsum-10m
make_day "$D" "$B/gpurec-synth"
if [ -n "$BASE" ]; then
	make_day "$D-base" "$BASE/gpurec-synth"
fi

secs() { awk -v n="$1" 'BEGIN { printf "%.3f", n / 1e9 }'; }
once() { # wall ns of "$@" (or -1 past CAP), its output in $B/bench-latsum.out
	local t0 t1
	t0=$(date +%s%N)
	if ! timeout "$CAP" "$@" >"$B/bench-latsum.out"; then
		echo -1
		return
	fi
	t1=$(date +%s%N)
	echo $(( t1 - t0 ))
}
best() { # best of 3 wall times of "$@", seconds
	local b="" s
	for _ in 1 2 3; do
		s=$(once "$@")
		if [ "$s" -lt 0 ]; then
			echo ">$CAP"
			return
		fi
		if [ -z "$b" ] || [ "$s" -lt "$b" ]; then b=$s; fi
	done
	secs "$b"
}

for r in runq-latency io-latency; do
	n=${r//-/_}
	echo "latsum.${n}_10m_s $(best "$B/gpurec" --data "$D" --format csv report $r) s"
	cp "$B/bench-latsum.out" "$B/bench-latsum.sum"
	echo "latsum.${n}_10m_raw_s $(best "$B/gpurec" --data "$D" --format csv report $r --raw) s"
	same=0
	cmp -s "$B/bench-latsum.out" "$B/bench-latsum.sum" && same=1
	if [ -n "$BASE" ]; then
		echo "latsum.${n}_10m_base_s $(best "$BASE/gpurec" --data "$D" --format csv report $r) s"
	fi
	echo "latsum.${n}_equals_raw $same"
done

events=$("$B/gpurec" --data "$D" --format csv sql \
	'SELECT sum(events) FROM segments' | tail -1 | tr -d '\r')
echo "latsum.events $events"
least() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
cpu="" cpu_base=""
for _ in 1 2; do
	cpu=$(least "$(write "$B/bench-latsum-ingest" "$B/gpurec-synth")" "$cpu")
	if [ -n "$BASE" ]; then
		cpu_base=$(least "$(write "$B/bench-latsum-ingest" \
			"$BASE/gpurec-synth")" "$cpu_base")
	fi
done
chattr -R -i "$B/bench-latsum-ingest" 2>/dev/null || true
rm -rf "$B/bench-latsum-ingest"
rate() { awk -v n="$events" -v c="$1" 'BEGIN { printf "%.0f", n / c }'; }
echo "latsum.ingest_events_per_s $(rate "$cpu") (cpu $cpu s)"
echo "latsum.bytes $(du -b --apparent-size -s "$D" | cut -f1)"
if [ -n "$BASE" ]; then
	echo "latsum.ingest_events_per_s_base $(rate "$cpu_base") (cpu $cpu_base s)"
	echo "latsum.bytes_base $(du -b --apparent-size -s "$D-base" | cut -f1)"
fi

# Each kind's bytes: its segments VACUUMed with and without its rows.
python3 - "$D" <<'EOF'
import glob, os, sqlite3, sys, tempfile
tables = {7: ("runq", ("runq",)), 8: ("io", ("block_io", "file_io"))}
size = {7: 0, 8: 0}
events = {7: 0, 8: 0}
tmp = tempfile.mkdtemp(prefix="latsum-bench.")
for seg in sorted(glob.glob(os.path.join(sys.argv[1], "*.seg"))):
    src = sqlite3.connect("file:" + seg + "?immutable=1", uri=True)
    for k, (_, ts) in tables.items():
        for t in ts:
            events[k] += src.execute("SELECT coalesce(sum(count), 0) FROM "
                                     "blocks WHERE tbl = ?", (t,)).fetchone()[0]
    prev = os.path.join(tmp, "all.db")
    src.execute("VACUUM INTO ?", (prev,))
    src.close()
    for k in (7, 8):
        db = sqlite3.connect(prev)
        db.execute("DELETE FROM summary WHERE kind = ?", (k,))
        db.commit()
        nxt = os.path.join(tmp, "no%d.db" % k)
        db.execute("VACUUM INTO ?", (nxt,))
        db.close()
        size[k] += os.path.getsize(prev) - os.path.getsize(nxt)
        os.remove(prev)
        prev = nxt
    os.remove(prev)
os.rmdir(tmp)
for k, (name, _) in tables.items():
    print("latsum.sum_%s_b_per_%s_event %.4f (%d bytes, %d events)" %
          (name, name, size[k] / max(events[k], 1), size[k], events[k]))
EOF
