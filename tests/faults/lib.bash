# lib.bash - what the root fault scripts share (sourced, not run: the
# fault-test loop runs tests/faults/*.sh only): the ok/FAIL lines and
# their closing count, the root check, and polling (tests/wait.sh's waits
# too, scaled to the load).
. "$(dirname "${BASH_SOURCE[0]}")/../wait.sh"
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
# Prints `N passed, N failed, N skipped` and exits 1 on a failure, else 0.
finish() { echo "$pass passed, $fail failed, $skipped skipped"; [ "$fail" -eq 0 ]; exit $?; }

# needs_root SCRIPT WHY: not root, skips the script (saying so), or fails
# it under CI=true, where nothing may be skipped.
needs_root() {
	[ "$(id -u)" = 0 ] && return
	if [ "${CI:-}" = true ]; then bad "$1" "needs root"; finish; fi
	echo "skip $1: needs root ($2)"
	skipped=$((skipped + 1))
	finish
}

# waitfor SECONDS CMD...: polls CMD every 0.2 s; returns its last status.
waitfor() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}
