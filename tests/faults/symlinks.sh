#!/usr/bin/env bash
# symlinks.sh - root recording into a data directory another user owns
# (issue 15, defect 1).
#
# An unprivileged user (uid 65534, through setpriv) owns DIR and plants
# symlinks under the names gpurecd writes: MANIFEST, .lock,
# status.json.tmp, status.json, a *.seg and a temporary segment name, each
# pointing at a root-only file.  Root then runs gpurecd --data DIR.  The
# targets' owner, mode and content must be unchanged, and gpurecd must
# refuse (.lock, MANIFEST) or ignore (the rest) the plant, saying so.
# Root only.  Env: GPUREC, GPURECD (binaries under test), TRIALS
# (repetitions, default 1), CI (true: never skip).
set -uo pipefail
GPUREC=${GPUREC:-build/asan/gpurec}
GPURECD=${GPURECD:-build/asan/gpurecd}
TRIALS=${TRIALS:-1}
. "$(dirname "$0")/lib.bash"
needs_root symlinks.sh "setpriv, BPF"
T=$(mktemp -d /tmp/gpurec-symlinks.XXXXXX)
chmod 755 "$T"
trap 'chattr -R -i "$T" 2>/dev/null; rm -rf "$T"' EXIT
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
R=$T/root; mkdir -m 700 "$R"   # root's files: the user cannot read them
SEG=20260101T000000.000000000Z.seg
TMPSEG=.20260101T000000.000000001Z.seg.tmp
PLANTS="MANIFEST .lock status.json.tmp status.json $SEG $TMPSEG"

targets() { # owner, mode and hash of every target, one line each
	for p in $PLANTS; do
		echo "$p $(stat -c '%u:%g %a' "$R/t$p") $(sha256sum <"$R/t$p" | cut -c1-16)"
	done
}
plant() { # DIR NAMES...: the user makes DIR and plants NAMES
	local dir=$1; shift
	mkdir -m 755 "$dir"; chown 65534:65534 "$dir"
	for p in "$@"; do
		as_user ln -s "$R/t$p" "$dir/$p" ||
			bad "plant $p" "the user cannot make the link"
	done
}
run() { # DIR LOG: root records a few seconds of scheduling into DIR
	timeout 60 "$GPURECD" --config /dev/null --data "$1" --no-cuda \
		--no-io --sched-all --duration 2 --flush-interval 100 \
		>"$2" 2>&1
	echo $?
}

for trial in $(seq 1 "$TRIALS"); do
	echo "# trial $trial"
	for p in $PLANTS; do
		printf 'root only: %s\n' "$p" >"$R/t$p"
		chmod 600 "$R/t$p"
	done
	before=$(targets)
	eq "the user cannot read the targets" \
		"$(as_user cat "$R/tMANIFEST" 2>/dev/null)" ""

	# 1. Everything planted: the .lock link stops gpurecd at once.
	D=$T/d1-$trial; plant "$D" $PLANTS
	rc=$(run "$D" "$T/log1")
	eq "1: all planted: gpurecd refuses to start (exit 2)" "$rc" 2
	eq "1: it says .lock is a symbolic link, refused" \
		"$(grep -c '\.lock: a symbolic link: refused' "$T/log1")" 1
	eq "1: the targets' owner, mode and content are unchanged" \
		"$(targets)" "$before"

	# 2. Only MANIFEST: refused as .lock is (the chain cannot be
	# written through someone else's link), the target untouched.
	D=$T/d2m-$trial; plant "$D" MANIFEST
	rc=$(run "$D" "$T/log2m")
	eq "2: MANIFEST planted: gpurecd refuses to start (exit 2)" "$rc" 2
	eq "2: it says the MANIFEST link is refused" \
		"$(grep -c 'MANIFEST: a symbolic link: refused' "$T/log2m")" 1
	eq "2: the targets' owner, mode and content are unchanged" \
		"$(targets)" "$before"

	# 2b. The rest: gpurecd records; the *.seg link is left alone, the
	# temporary one removed (the link, not its target), status.json.tmp
	# and status.json replaced.
	D=$T/d2-$trial; plant "$D" status.json.tmp status.json $SEG $TMPSEG
	rc=$(run "$D" "$T/log2")
	eq "2b: gpurecd records and exits 0" "$rc" 0
	eq "2b: it says the *.seg link is refused and left alone" \
		"$(grep -c "$SEG: a symbolic link: refused (.*); left as is" "$T/log2")" 1
	eq "2b: the temporary segment link is removed" \
		"$([ -e "$D/$TMPSEG" ] || [ -L "$D/$TMPSEG" ] || echo gone)" gone
	eq "2b: status.json is gpurecd's own file now, the user's" \
		"$([ -L "$D/status.json" ] || stat -c '%u %F' "$D/status.json")" \
		"65534 regular file"
	eq "2: the targets' owner, mode and content are unchanged" \
		"$(targets)" "$before"

	# 3. Only a *.seg link: ignored, and the recording is whole.
	D=$T/d3-$trial; plant "$D" $SEG
	rc=$(run "$D" "$T/log3")
	eq "3: a *.seg link only: gpurecd records and exits 0" "$rc" 0
	eq "3: every file gpurecd made belongs to the user" \
		"$(find "$D" -mindepth 1 ! -user 65534 | wc -l)" 0
	eq "3: a segment was sealed" "$(grep -c '^seal ' "$D/MANIFEST" 2>/dev/null)" 1
	eq "3: the targets' owner, mode and content are unchanged" \
		"$(targets)" "$before"
	"$GPUREC" --data "$D" verify >"$T/verify3" 2>&1
	eq "3: gpurec verify names the planted link (not a valid segment)" \
		"$(grep -c "$SEG" "$T/verify3" | awk '{print ($1 > 0)}')" 1
done
finish
