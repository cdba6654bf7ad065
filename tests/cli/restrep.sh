#!/usr/bin/env bash
# restrep.sh - the reports that read summaries to find where to look
# (issue 20): cuda-errors and process read failing calls raw only in the
# minutes sum_api counted errors, process's off-CPU time comes from
# sum_offcpu, and xid reads off-CPU intervals raw only in the minutes
# sum_offcpu says can reach the Xid; recording counts events with
# table_rows(), from block headers but for the blocks across the window's
# ends.  Each prints exactly what it prints --raw, over the whole
# recording and over a 10-minute window cut mid-minute at both ends, and
# the rows are checked one by one: failures on both sides of each cut,
# successes and NULL returns in a failing minute, two comms of one pid,
# a D wait that began minutes before the Xid it reaches.
# Env: GPUREC, SYNTH (binaries under test).  No root.
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
SYNTH=$(realpath "${SYNTH:-build/gpurec-synth}")
T=$(mktemp -d /tmp/gpurec-restrep.XXXXXX)
cleanup() { chattr -R -i "$T" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
# CSV lines end in CRLF (RFC 4180): compared as lines here.
g() { "$GPUREC" --data "$T/a" --data "$T/b" --format csv "$@" 2>>"$T/err" | tr -d '\r'; }

# 20 minutes of launches (20/s, pids 41000, 41017, 41034), off-CPU
# intervals and 4 GPUs' samples over four segments, all successful, with
# the generator's Xid 13 at 00:00:45 on GPU 2; beside them, exact rows of
# the same host: failing calls, calls that did not fail in their minutes,
# pid 700's off-CPU intervals and an Xid naming it at 00:05:30.2.
synth --data "$T/a" --table cuda_kernel --table offcpu --table gpu \
	--gpus 4 --events 24000 --rate 20 --offcpu-gap 50000000 --procs 3 \
	--rotate-every 7000 --start 2026-11-01T00:00:00Z
S=1793491200000000000
at() { echo $((S + $1)); } # at NS: ns after 00:00:00
call() { # call TABLE TS PID COMM API RET [MORE]
	printf '%s\tts=%s\tpid=%s\ttid=%s\tcomm=%s\tdur=1000\tapi=%s\t%s%s\n' \
		"$1" "$2" "$3" "$3" "$4" "$5" "${6:+ret=$6}" "${7:+	$7}"
}
{
	call cuda_kernel "$(at 70000000000)" 41000 py cudaLaunchKernel 2
	call cuda_kernel "$(at 180200000000)" 41000 py cudaLaunchKernel 2
	call cuda_kernel "$(at 180700000000)" 41000 py cudaLaunchKernel 2
	call cuda_kernel "$(at 180800000000)" 41000 py cudaLaunchKernel 0
	call cuda_sync "$(at 450000000000)" 41000 py cudaDeviceSynchronize 700
	call cuda_sync "$(at 450100000000)" 41000 py cudaDeviceSynchronize ""
	call cuda_memcpy "$(at 780100000000)" 41017 py cudaMemcpy 1 \
		'kind=H2D	bytes=4096	async=0'
	call cuda_memcpy "$(at 780400000000)" 41017 py cudaMemcpy 1 \
		'kind=H2D	bytes=4096	async=0'
	call cuda_memcpy "$(at 1140000000000)" 41017 loader cudaMemcpy 1 \
		'kind=H2D	bytes=4096	async=0'
	call cuda_sync "$(at 300000000000)" 700 trainer cudaDeviceSynchronize 700
	call cuda_sync "$(at 300000000000)" 700 trainer cudaStreamSynchronize 4
	for i in 0 1 2; do
		printf 'offcpu\tts=%s\tpid=700\ttid=700\tcomm=trainer\tdur=%s\tstate=%s\n' \
			"$(at $((240000000000 + i * 90000000000)))" \
			$((250000000 * (i + 1))) "$([ $i = 1 ] && echo S || echo D)"
	done
	# A D wait of another thread from 00:02:10 to the Xid: read because
	# sum_offcpu's minute 2 lasts until then, not because it is near.
	printf 'offcpu\tts=%s\tpid=700\ttid=701\tcomm=loader\tdur=200000000000\tstate=D\tstack=main;cuInit\n' \
		"$(at 130000000000)"
	printf 'gpu_event\tts=%s\tpid=700\tcomm=trainer\tgpu=2\tpci=0000:52:00.0\tkind=xid\txid=79\tsource=kmsg\n' \
		"$(at 330200000000)"
} >"$T/rows.tsv"
synth --data "$T/b" --host synthetic --rows "$T/rows.tsv"
W="--since 2026-11-01T00:03:00.5Z --until 2026-11-01T00:13:00.25Z"
# The Xids' windows: 00:00:40.5 to 00:10:30.25.
XW="--since 2026-11-01T00:00:40.5Z --until 2026-11-01T00:10:30.25Z"

eq "sum_api counts the failing calls in the minutes they fell in" \
	"$(g sql 'SELECT pid, minute - 1793491200000000000, sum(errors) FROM sum_api WHERE errors > 0 GROUP BY 1, 2 ORDER BY 1, 2' | tail -n +2 | tr '\n' ' ')" \
	"700,300000000000,2 41000,60000000000,1 41000,180000000000,2 41000,420000000000,1 41017,780000000000,2 41017,1140000000000,1 "
eq "cuda-errors: every failing call, by API, code, pid and comm" \
	"$(g report cuda-errors | cut -d, -f1-6 | tail -n +2 | tr '\n' ' ')" \
	"cudaLaunchKernel,2,cudaErrorMemoryAllocation,41000,py,3 cudaMemcpy,1,cudaErrorInvalidValue,41017,py,2 cudaDeviceSynchronize,700,cudaErrorIllegalAddress,700,trainer,1 cudaDeviceSynchronize,700,cudaErrorIllegalAddress,41000,py,1 cudaMemcpy,1,cudaErrorInvalidValue,41017,loader,1 cudaStreamSynchronize,4,cudaErrorCudartUnloading,700,trainer,1 "
eq "cuda-errors in the window: the failures inside its cut minutes, not those beside them" \
	"$(g $W report cuda-errors | cut -d, -f1,4,5,6,7,8 | tail -n +2 | tr '\n' ' ')" \
	"cudaDeviceSynchronize,700,trainer,1,$(at 300000000000),$(at 300000000000) cudaDeviceSynchronize,41000,py,1,$(at 450000000000),$(at 450000000000) cudaLaunchKernel,41000,py,1,$(at 180700000000),$(at 180700000000) cudaMemcpy,41017,py,1,$(at 780100000000),$(at 780100000000) cudaStreamSynchronize,700,trainer,1,$(at 300000000000),$(at 300000000000) "
eq "process 41000: its failing calls by code" \
	"$(g report process --param pid=41000 | grep '^cuda errors,' | tr '\n' ' ')" \
	"cuda errors,cudaDeviceSynchronize 700,1,cudaErrorIllegalAddress cuda errors,cudaLaunchKernel 2,3,cudaErrorMemoryAllocation "
eq "process 700: off-CPU by state from sum_offcpu" \
	"$(g report process --param pid=700 | grep '^off-cpu,' | tr '\n' ' ')" \
	"off-cpu,state D,3,201.0 s off-cpu,state S,1,0.5 s "
eq "xid: each Xid's processes (41034 on GPU 2 by NVML, 700 named by the driver)" \
	"$(g report xid | cut -d, -f1,2,4,6,8,9 | tail -n +2 | tr '\n' ' ')" \
	"$(at 45404835168),2,13,41034,71,0 $(at 330200000000),2,79,700,0,0 $(at 330200000000),2,79,41034,65,0 "
eq "xid: pid 700's longest D wait, whole, as the off-CPU column" \
	"$(g report xid | grep -o 'D 200.0 s tid 701: main;cuInit$')" \
	"D 200.0 s tid 701: main;cuInit"
for w in whole window; do
	[ $w = whole ] && win="" || win=$W
	for r in cuda-errors "process --param pid=41000" \
		 "process --param pid=41017" "process --param pid=700"; do
		# shellcheck disable=SC2086
		g $win report $r >"$T/sum"
		# shellcheck disable=SC2086
		g $win report $r --raw >"$T/raw"
		n=$(($(wc -l <"$T/raw") - 1))
		if [ "$n" -gt 1 ] && cmp -s "$T/sum" "$T/raw"; then
			ok "$w: $r from summaries equals --raw ($n rows)"
		else
			bad "$w: $r from summaries equals --raw" \
				"$(diff "$T/sum" "$T/raw" | head -5) ($n rows)"
		fi
	done
done
for w in whole window; do
	[ $w = whole ] && win="" || win=$XW
	for b in 10 200; do
		# shellcheck disable=SC2086
		g $win report xid --param before_s=$b >"$T/sum"
		# shellcheck disable=SC2086
		g $win report xid --param before_s=$b --raw >"$T/raw"
		n=$(($(wc -l <"$T/raw") - 1))
		if [ "$n" -gt 2 ] && cmp -s "$T/sum" "$T/raw"; then
			ok "$w: xid before_s=$b from summaries equals --raw ($n rows)"
		else
			bad "$w: xid before_s=$b from summaries equals --raw" \
				"$(diff "$T/sum" "$T/raw" | head -5) ($n rows)"
		fi
	done
done
# table_rows() against count(*), table by table, under every filter
# that cuts blocks: a window cut mid-minute at both ends, one ending
# inside the first block, --pid, --host, and 40 s inside one block of
# pid 700's intervals (00:02:10 to 00:07:00), across both its ends.
for f in "" "$W" "--until 2026-11-01T00:00:00.5Z" "--pid 41017" \
	 "--pid 700 $W" "--host synthetic $W" \
	 "--since 2026-11-01T00:05:00.5Z --until 2026-11-01T00:05:40.25Z"; do
	bad=""
	for t in cuda_kernel cuda_memcpy cuda_sync offcpu gpu gpu_event \
		 gpu_process process; do
		# shellcheck disable=SC2086
		a=$(g $f sql "SELECT table_rows('$t')" | tail -1)
		# shellcheck disable=SC2086
		b=$(g $f sql "SELECT count(*) FROM $t" | tail -1)
		[ "$a" = "$b" ] || bad="$bad $t: $a not $b;"
	done
	# shellcheck disable=SC2086
	n=$(g $f sql 'SELECT table_rows('"'"'cuda_kernel'"'"') + table_rows('"'"'offcpu'"'"')' | tail -1)
	if [ -z "$bad" ] && [ "$n" -gt 0 ]; then
		ok "table_rows equals count(*) for 8 tables [${f:-whole}] ($n launches and intervals)"
	else
		bad "table_rows equals count(*) [${f:-whole}]" "$bad ($n)"
	fi
	# shellcheck disable=SC2086
	g $f report recording >"$T/sum"
	# shellcheck disable=SC2086
	g $f report recording --raw >"$T/raw"
	if grep -q '^events,' "$T/raw"; then
		if cmp -s "$T/sum" "$T/raw"; then
			ok "recording equals --raw [${f:-whole}]"
		else
			bad "recording equals --raw [${f:-whole}]" \
				"$(diff "$T/sum" "$T/raw" | head -5)"
		fi
	else
		bad "recording [${f:-whole}] lists events" "$(head -5 "$T/raw")"
	fi
done
eq "recording: events per table, the window's" \
	"$(g $W report recording | grep '^events,' | tr '\n' ' ')" \
	"$(for t in cuda_kernel cuda_memcpy cuda_sync offcpu process; do
		n=$(g $W sql "SELECT count(*) FROM $t" | tail -1)
		[ "$n" -gt 0 ] && printf 'events,%s,%s, ' $t "$n"
	done)"
"$GPUREC" --data "$T/a" sql "SELECT table_rows('cuda_api')" >/dev/null \
	2>"$T/union.err"
eq "table_rows of a union table: one line, exit 1" "$?:$(cat "$T/union.err")" \
	"1:gpurec: SQL error: table_rows: cuda_api is not a stored event table"
eq "no warnings" "$(cat "$T/err")" ""
finish
