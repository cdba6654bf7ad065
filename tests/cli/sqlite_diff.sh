#!/usr/bin/env bash
# sqlite_diff.sh - compares a database from `gpurec export --format sqlite`,
# read by the sqlite3 CLI, with what `gpurec sql` answers, table by table:
# the row count; per column its declared type, count, and for integers the
# sum (mod a prime, so that epoch ns cannot overflow), min and max, for text
# the total bytes, the extremes' bytes and the distinct values.  Prints one
# line per difference, nothing when all agree.
#
# usage: sqlite_diff.sh GPUREC DB TABLE... -- GPUREC-OPTIONS...
set -uo pipefail
gpurec=$1 db=$2
shift 2
tables=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do tables+=("$1"); shift; done
shift
for t in "${tables[@]}"; do
	cols=$("$gpurec" --format csv schema "$t" | tr -d '\r' | tail -n +2 | cut -d, -f1,2)
	types=$(sqlite3 -csv "$db" "SELECT name, type FROM pragma_table_info('$t')")
	[ "$types" == "$cols" ] || echo "$t: columns [$types] want [$cols]"
	sel="count(*)"
	while IFS=, read -r c ty; do
		if [ "$ty" = INTEGER ]; then
			sel+=", sum($c % 1000000007), min($c), max($c), count($c)"
		else
			sel+=", sum(length(CAST($c AS BLOB))), hex(min(CAST($c AS BLOB))),"
			sel+=" hex(max(CAST($c AS BLOB))), count(DISTINCT $c), count($c)"
		fi
	done <<<"$cols"
	want=$("$gpurec" "$@" --format csv sql "SELECT $sel FROM $t" | tr -d '\r' | tail -n +2)
	got=$(sqlite3 -csv "$db" "SELECT $sel FROM $t")
	[ -n "$want" ] && [ "$got" == "$want" ] || echo "$t: [$got] want [$want]"
done
