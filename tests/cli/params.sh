#!/usr/bin/env bash
# params.sh - report parameters, global filters, did-you-mean, per-command
# help and the report fixes of issue 19 (points 3, 4 and 8), over
# recordings written by gpurec-synth: generated launches, and exact rows
# (--rows) where a report needs tables the generator does not fill.  Every
# check compares exact text.
# Env: GPUREC, SYNTH (binaries under test).
set -uo pipefail
GPUREC=${GPUREC:-build/gpurec}
SYNTH=${SYNTH:-build/gpurec-synth}
T=$(mktemp -d /tmp/gpurec-params.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
# eq NAME GOT WANT
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
# qa ARGS…: csv rows without the header; stderr in $T/stderr
qa() { "$GPUREC" --format csv "$@" 2>"$T/stderr" | tr -d '\r' | tail -n +2; }
# head1 ARGS…: the csv header
head1() { "$GPUREC" --format csv "$@" 2>/dev/null | tr -d '\r' | head -1; }
synth() { "$SYNTH" "$@" >/dev/null 2>"$T/synth.log" || { cat "$T/synth.log"; exit 2; }; }
# user_error NAME LINE ARGS…: exit 1 and exactly LINE on stderr, nothing
# on stdout
user_error() {
	local name=$1 want=$2; shift 2
	"$GPUREC" "$@" >"$T/out" 2>"$T/err"; local rc=$?
	eq "$name" "$rc|$(cat "$T/err")|$(wc -c <"$T/out")" "1|$want|0"
}

S=1795000000   # 2026-11-18T11:06:40Z
S_NS=${S}000000000
rfc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# 100,000 launches 1 ms apart from pids 41000, 41017, 41034 and 41051 in
# turn: 100 s from S, over the minutes that begin at S-40, S+20 and S+80.
A="$T/a"
synth --data "$A" --events 100000 --interval 1000000 --start "$S_NS" \
	--host alpha

# --- every parameter typed --------------------------------------------------
user_error "time: at=abc" \
	"gpurec: bad --param 'at=abc': at takes a time: ns since the epoch (as gpurec prints ts), now, a duration ago like 2h, or RFC 3339 like 2026-11-22T14:00:00Z" \
	--data "$A" report timeline --param at=abc
user_error "time: an impossible date" \
	"gpurec: bad --param 'at=2026-13-01T00:00:00Z': at takes a time: ns since the epoch (as gpurec prints ts), now, a duration ago like 2h, or RFC 3339 like 2026-11-22T14:00:00Z" \
	--data "$A" report timeline --param at=2026-13-01T00:00:00Z
user_error "pid: pid=abc" \
	"gpurec: bad --param 'pid=abc': pid takes a process id, 1 to 4194304" \
	--data "$A" report process --param pid=abc
user_error "pid: pid=-1" \
	"gpurec: bad --param 'pid=-1': pid takes a process id, 1 to 4194304" \
	--data "$A" report process --param pid=-1
user_error "pid: pid=0" \
	"gpurec: bad --param 'pid=0': pid takes a process id, 1 to 4194304" \
	--data "$A" report process --param pid=0
user_error "count: limit=x" \
	"gpurec: bad --param 'limit=x': limit takes a whole number, 0 or more" \
	--data "$A" report top-kernels --param limit=x
user_error "count: limit=-5 (LIMIT -5 would be no limit)" \
	"gpurec: bad --param 'limit=-5': limit takes a whole number, 0 or more" \
	--data "$A" report cuda-api-sum --param limit=-5
user_error "count: limit=' 5' (strtoll alone takes it)" \
	"gpurec: bad --param 'limit= 5': limit takes a whole number, 0 or more" \
	--data "$A" report cuda-api-sum --param "limit= 5"
user_error "duration: delta_ms=x" \
	"gpurec: bad --param 'delta_ms=x': delta_ms takes a duration like 250ms, 2s or 1h" \
	--data "$A" report timeline --param at=$S_NS --param delta_ms=x
user_error "duration: min_ms=-3" \
	"gpurec: bad --param 'min_ms=-3': min_ms takes a duration like 250ms, 2s or 1h" \
	--data "$A" report launch-gaps --param min_ms=-3
user_error "enum: sync=2" \
	"gpurec: bad --param 'sync=2': sync takes one of 0|1" \
	--data "$A" report memcpy-pageable --param sync=2
user_error "a parameter the report does not take" \
	"gpurec: report top-kernels takes no parameter 'nope' (gpurec report list shows its parameters)" \
	--data "$A" report top-kernels --param nope=1
eq "report list: every parameter with its type" \
	"$(qa report list | grep -E '^(timeline|memcpy-pageable|process),')" \
	"memcpy-pageable,\"sync=0 (enum(0|1); 1 to list blocking API calls too, not only async ones), limit=20 (count; most calls listed after the sums)\",\"copies whose host side is pageable (nsys rule cuda_memcpy_async): per process, API and direction, then the longest calls; pageable = in no allocation gpurec saw live (pinned before the recording looks pageable)\"
process,pid= (pid; the process id),\"one process's story: identity, container and pod, CUDA calls and errors by minute, off-CPU and I/O, exit\"
timeline,\"at= (time; the time: RFC 3339, 2h (ago), or digits alone: ns since the epoch (as gpurec prints ts)), delta_ms=100ms (duration; how long either side of it (digits alone: ms))\",\"every event of every table within delta_ms of a time, merged and ordered: what the host was doing then\""

# The values each type takes mean the same thing in every spelling.
at=$((S_NS + 10000000000))
tl() { qa --data "$A" report timeline "$@" | md5sum; }
want=$(tl --param at=$at --param delta_ms=5)
eq "time: RFC 3339 is the ns it names" "$(tl --param at="$(rfc $((S + 10)))" --param delta_ms=5)" "$want"
eq "duration: 5ms, 0.005s and 5000us are delta_ms=5" \
	"$(tl --param at=$at --param delta_ms=5ms) $(tl --param at=$at --param delta_ms=0.005s) $(tl --param at=$at --param delta_ms=5000us)" \
	"$want $want $want"
eq "duration: delta_ms=5 is 5 ms either side: 11 launches" \
	"$(qa --data "$A" report timeline --param at=$at --param delta_ms=5 | wc -l)" 11
eq "enum: sync=1 runs" "$("$GPUREC" --data "$A" --format csv report memcpy-pageable --param sync=1 >/dev/null 2>&1; echo $?)" 0

# --- global filters in every report ------------------------------------------
# process: --pid N is --param pid=N, row for row; the hand count is a
# GROUP BY over the raw calls.
proc() { qa --data "$A" report process "$@"; }
eq "process --pid 41017: the CUDA calls of pid 41017 by minute" "$(proc --pid 41017)" \
	"cuda,minute 2026-11-18T11:06:00.000000000Z,5000,\"5000 launches, 0 errors\"
cuda,minute 2026-11-18T11:07:00.000000000Z,15000,\"15000 launches, 0 errors\"
cuda,minute 2026-11-18T11:08:00.000000000Z,5000,\"5000 launches, 0 errors\""
eq "... which a GROUP BY over cuda_api counts too" \
	"$(qa --data "$A" sql 'SELECT ts / 60000000000 * 60000000000, count(*) FROM cuda_api WHERE pid = 41017 GROUP BY 1' | tr '\n' ' ')" \
	"1794999960000000000,5000 1795000020000000000,15000 1795000080000000000,5000 "
eq "process --param pid=41017 is the same" "$(proc --param pid=41017)" "$(proc --pid 41017)"
eq "process --pid and --param pid, agreeing, are the same" \
	"$(proc --pid 41017 --param pid=41017)" "$(proc --pid 41017)"
user_error "process --pid and --param pid, disagreeing: refused" \
	"gpurec: --pid 41017 and --param pid=41000 disagree: give one" \
	--data "$A" report process --pid 41017 --param pid=41000
eq "process --since/--until: only the window's calls (S+10 s .. S+30 s)" \
	"$(proc --pid 41017 --since "$(rfc $((S + 10)))" --until "$(rfc $((S + 30)))")" \
	"cuda,minute 2026-11-18T11:06:00.000000000Z,2500,\"2500 launches, 0 errors\"
cuda,minute 2026-11-18T11:07:00.000000000Z,2500,\"2500 launches, 0 errors\""
eq "process --host: another host's recording has no such rows" \
	"$(proc --pid 41017 --host alpha | wc -l) $(proc --pid 41017 --host beta | wc -l)" "3 0"
eq "cuda-api-sum: the whole recording" \
	"$(qa --data "$A" report cuda-api-sum | cut -d, -f1,11 | tr '\n' ' ')" \
	"80000,cudaLaunchKernel 20000,cuLaunchKernelEx "
eq "cuda-api-sum --pid 41017 --since S+10 s: only its calls in the window" \
	"$(qa --data "$A" --pid 41017 --since "$(rfc $((S + 10)))" report cuda-api-sum | cut -d, -f1,11 | tr '\n' ' ')" \
	"$(qa --data "$A" sql "SELECT count(*), api FROM cuda_api WHERE pid = 41017 AND ts >= $((S_NS + 10000000000)) GROUP BY api ORDER BY sum(dur) DESC" | tr '\n' ' ')"
eq "... 22500 of them" \
	"$(qa --data "$A" --pid 41017 --since "$(rfc $((S + 10)))" report cuda-api-sum | awk -F, '{ n += $1 } END { print n }')" 22500

# A filter that matches nothing: the report runs, one line says so.
matched_nothing() { # NAME LINE ARGS…: exit 0, a header alone, LINE on stderr
	local name=$1 want=$2; shift 2
	"$GPUREC" --format csv "$@" >"$T/out" 2>"$T/err"; local rc=$?
	eq "$name" "$rc|$(wc -l <"$T/out")|$(cat "$T/err")" "0|1|$want"
}
matched_nothing "process --param pid=99999: no such process" \
	"gpurec: no process 99999 in the recording (--pid matched nothing)" \
	--data "$A" report process --param pid=99999
matched_nothing "cuda-api-sum --pid 99999: no such process" \
	"gpurec: no process 99999 in the recording (--pid matched nothing)" \
	--data "$A" --pid 99999 report cuda-api-sum
matched_nothing "--host nosuch: no such host" \
	"gpurec: no host 'nosuch' in the recording (--host matched nothing)" \
	--data "$A" --host nosuch report top-kernels
matched_nothing "--since after the recording: the window lies outside it" \
	"gpurec: the window of --since/--until lies outside the recording (2026-11-18T11:06:40.000000000Z .. 2026-11-18T11:08:19.999000000Z): it matched nothing" \
	--data "$A" --since "$(rfc $((S + 3600)))" report cuda-api-sum
"$GPUREC" --data "$A" --format csv --host nosuch sql 'SELECT count(*) FROM cuda_api' >"$T/out" 2>"$T/err"
eq "sql --host nosuch: the count, and the line" "$(tr -d '\r' <"$T/out" | tail -1)|$(cat "$T/err")" \
	"0|gpurec: no host 'nosuch' in the recording (--host matched nothing)"
"$GPUREC" --data "$A" --format csv --pid 41017 --host alpha report cuda-api-sum >/dev/null 2>"$T/err"
eq "filters that match say nothing" "$(wc -c <"$T/err")" 0

# --- did you mean -----------------------------------------------------------
user_error "report cuda_api_sum: did you mean cuda-api-sum" \
	"gpurec: no report 'cuda_api_sum'; did you mean 'cuda-api-sum'? (gpurec report list shows them)" \
	--data "$A" report cuda_api_sum
user_error "report nosuch: nothing near" \
	"gpurec: no report 'nosuch' (gpurec report list shows them)" \
	--data "$A" report nosuch
user_error "schema cuda-api: did you mean cuda_api" \
	"gpurec: no table 'cuda-api'; did you mean 'cuda_api'? (gpurec tables lists them)" \
	schema cuda-api
user_error "export cuda_kernal: did you mean cuda_kernel" \
	"gpurec: no table 'cuda_kernal'; did you mean 'cuda_kernel'? (gpurec tables lists them)" \
	--data "$A" export --format csv -o "$T/x.csv" cuda_kernal
user_error "a command: stauts" \
	"gpurec: unknown command 'stauts'; did you mean 'status'? (gpurec --help lists them)" \
	stauts

# --- help CMD, CMD --help ------------------------------------------------------
"$GPUREC" --help >"$T/global"
eq "gpurec help is the global help" "$("$GPUREC" help | md5sum)" "$(md5sum <"$T/global")"
cmds=$(sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p' "$T/global")
eq "the commands" "$(echo $cmds)" "sql tables schema status verify report shell export seal-setup help"
for c in $cmds; do
	"$GPUREC" help "$c" >"$T/h1" 2>&1; r1=$?
	"$GPUREC" "$c" --help >"$T/h2" 2>&1; r2=$?
	"$GPUREC" -h "$c" >"$T/h3" 2>&1; r3=$?
	eq "help $c = $c --help = -h $c, exit 0" "$r1$r2$r3 $(md5sum <"$T/h2") $(md5sum <"$T/h3")" \
		"000 $(md5sum <"$T/h1") $(md5sum <"$T/h1")"
	eq "help $c: its synopsis first, then more than the global line" \
		"$(head -1 "$T/h1" | cut -d' ' -f1-4) $(cmp -s "$T/h1" "$T/global" || echo differs) $([ "$(wc -l <"$T/h1")" -ge 5 ] && echo long)" \
		"usage: gpurec [OPTIONS] $c differs long"
	# every option it names is one gpurec --help knows
	miss=
	for o in $(grep -o -- '--[a-z-]*' "$T/h1" | sort -u); do
		grep -q -- "^  .*$o[ ,]" "$T/global" || miss+=" $o"
	done
	eq "help $c: names only real options" "${miss# }" ""
done
eq "help sql: its options and an example" \
	"$("$GPUREC" help sql | grep -c -e '--timeout' -e "gpurec sql 'SELECT")" 2
user_error "help nosuch: one line, exit 1" \
	"gpurec: unknown command 'nosuch' (gpurec --help lists them)" help nosuch
eq "help report timeline: the report, its typed parameters" "$("$GPUREC" help report timeline)" \
	"usage: gpurec [OPTIONS] report timeline [--param KEY=VALUE]...

every event of every table within delta_ms of a time, merged and ordered: what the host was doing then

parameters (KEY:TYPE=DEFAULT):
  at:time=  the time: RFC 3339, 2h (ago), or digits alone: ns since the epoch (as gpurec prints ts)
  delta_ms:duration=100ms  how long either side of it (digits alone: ms)"
user_error "help report nosuch" "gpurec: no report 'nosuch' (gpurec report list shows them)" \
	help report nosuch

# --- report fixes ------------------------------------------------------------
# Exact rows: pid 500's main thread waits 2 us for a CPU, its worker 40
# and 45 us; pid 600 allocates twice 2 s apart and frees three times 10 us
# apart, then copies from pageable memory (no allocation holds its src).
W="$T/w"
{
	printf 'runq\tts=%s\tpid=500\ttid=500\tcomm=main\tdur=2000\tcpu=1\n' $((S_NS + 1000))
	printf 'runq\tts=%s\tpid=500\ttid=501\tcomm=worker\tdur=40000\tcpu=2\n' $((S_NS + 2000))
	printf 'runq\tts=%s\tpid=500\ttid=501\tcomm=worker\tdur=45000\tcpu=2\n' $((S_NS + 3000))
	printf 'cuda_mem\tts=%s\tpid=600\ttid=600\tcomm=trainer\tdur=5000\tapi=cudaMalloc\top=alloc\tbytes=4096\tptr=0x7f0000200000\tret=0\n' $((S_NS + 10000))
	printf 'cuda_mem\tts=%s\tpid=600\ttid=600\tcomm=trainer\tdur=7000\tapi=cudaMalloc\top=alloc\tbytes=8192\tptr=0x7f0000400000\tret=0\n' $((S_NS + 2000010000))
	for i in 0 1 2; do
		printf 'cuda_mem\tts=%s\tpid=600\ttid=600\tcomm=trainer\tdur=%s\tapi=cudaFree\top=free\tptr=0x7f000020%d000\tret=0\n' \
			$((S_NS + 2100000000 + i * 10000)) $((3000 + i * 1000)) $i
	done
	# block requests: one on a named disk, one from before names were kept
	printf 'block_io\tts=%s\tdur=100000\tdev=259:0\top=R\tbytes=4096\tsector=8\tdisk=nvme0n1\n' $((S_NS + 4000))
	printf 'block_io\tts=%s\tdur=300000\tdev=8:0\top=W\tbytes=8192\tsector=16\n' $((S_NS + 5000))
	printf 'cuda_memcpy\tts=%s\tpid=600\ttid=600\tcomm=trainer\tdur=9000\tapi=cudaMemcpyAsync\tkind=H2D\tbytes=65536\tasync=1\tstream=0x5555deadbee0\tret=0\tsrc=0x7ffc12345000\tdst=0x7f0000200000\n' $((S_NS + 2200000000))
} >"$T/rows.tsv"
synth --data "$W" --rows "$T/rows.tsv" --host gamma

eq "runq-latency: one comm per pid, its main thread's, on every bucket" \
	"$(qa --data "$W" report runq-latency | cut -d, -f1-4)" \
	"500,main,,3
500,main,2,1
500,main,32,2"
eq "mem-churn: no rate for 3 frees 20 us apart; 2 allocs 2 s apart: 0.5/s" \
	"$(qa --data "$W" report mem-churn)" \
	"600,trainer,cudaFree,free,3,0,,,12288
600,trainer,cudaMalloc,alloc,2,0,12288,0.5,12288"
eq "io-latency: a device by major:minor and its recorded name, or major:minor alone" \
	"$(qa --data "$W" report io-latency | grep '^block,' | cut -d, -f2,3,5 | tr '\n' ' ')" \
	"259:0 nvme0n1,R,1 8:0,W,1 259:0 nvme0n1,R,1 8:0,W,1 "
eq "memcpy-pageable: pointers in hex" \
	"$(qa --data "$W" report memcpy-pageable | grep '^call,' | cut -d, -f13,14)" \
	"0x7ffc12345000,0x7f0000200000"
eq "cuda-api-sum: min_ns, and the API last" \
	"$(head1 --data "$W" report cuda-api-sum) $(qa --data "$W" report cuda-api-sum | cut -d, -f5,11 | tr '\n' ' ')" \
	"calls,time_pct,total_ns,avg_ns,min_ns,med_ns,p99_ns,max_ns,stddev_ns,errors,api 3000,cudaFree 5000,cudaMalloc 9000,cudaMemcpyAsync "
eq "cuda-api-sum min_ns is min(dur) over the raw calls, summaries and --raw alike" \
	"$(qa --data "$W" report cuda-api-sum | cut -d, -f5,11 | tr '\n' ' ')| $(qa --data "$W" report cuda-api-sum --raw | cut -d, -f5,11 | tr '\n' ' ')" \
	"$(qa --data "$W" sql 'SELECT min(dur), api FROM cuda_api GROUP BY api ORDER BY sum(dur) DESC, api' | tr '\n' ' ')| $(qa --data "$W" sql 'SELECT min(dur), api FROM cuda_api GROUP BY api ORDER BY sum(dur) DESC, api' | tr '\n' ' ')"
eq "cuda-api-sum stddev_ns: the sample standard deviation of the raw calls" \
	"$(qa --data "$W" report cuda-api-sum | cut -d, -f9,11 | tr '\n' ' ')" \
	"$(qa --data "$W" sql 'SELECT round(coalesce(sqrt((sum(dur * dur) - 1.0 * sum(dur) * sum(dur) / count(*)) / (count(*) - 1)), 0), 1), api FROM cuda_api GROUP BY api ORDER BY sum(dur) DESC, api' | tr '\n' ' ')"
eq "... which is 1000.0, 1414.2, and 0.0 for one call" \
	"$(qa --data "$W" report cuda-api-sum --raw | cut -d, -f9 | tr '\n' ' ')" "1000.0 1414.2 0.0 "
eq "stddev_ns(): exact where the squares pass int64 (5 s and 7 s calls)" \
	"$(qa --data "$W" sql 'SELECT stddev_ns(d), stddev_ns(NULL), stddev_ns(d) FILTER (WHERE d < 0) FROM (SELECT 5000000000 AS d UNION ALL SELECT 7000000000)')" \
	"1414213562.3731,,"
# A recording begun before dur_sq was kept (tests/fixtures), continued by
# this writer: its old segments are summarized from their raw blocks.
F="$T/f1"
mkdir -p "$F"
zstd -dc tests/fixtures/format1-recording.tar.zst | tar -C "$F" -xf -
chmod -R u+w "$F"
synth --data "$F/oldrec" --events 200 --rotate-every 100 --start 1763000001000000000
eq "cuda-api-sum over old and new segments: summaries and --raw agree, stddev_ns the raw calls'" \
	"$(qa --data "$F/oldrec" report cuda-api-sum | md5sum) $(qa --data "$F/oldrec" report cuda-api-sum | cut -d, -f1,9,11 | tr '\n' ' ')" \
	"$(qa --data "$F/oldrec" report cuda-api-sum --raw | md5sum) $(qa --data "$F/oldrec" sql 'SELECT count(*), round(sqrt((sum(dur * dur) - 1.0 * sum(dur) * sum(dur) / count(*)) / (count(*) - 1)), 1), api FROM cuda_api GROUP BY api ORDER BY sum(dur) DESC, api' | tr '\n' ' ')"
eq "cuda-api-sum: summaries and --raw agree, window and all" \
	"$(qa --data "$A" --since "$(rfc $((S + 7)))" --until "$(rfc $((S + 61)))" report cuda-api-sum | md5sum)" \
	"$(qa --data "$A" --since "$(rfc $((S + 7)))" --until "$(rfc $((S + 61)))" report cuda-api-sum --raw | md5sum)"
eq "top-kernels: the kernel's name last" "$(head1 --data "$A" report top-kernels)" \
	"launches,pct,shapes,shape,launches_per_s,kernel"
eq "top-kernels: pct is the share of launches" \
	"$(qa --data "$A" report top-kernels --param limit=1 | cut -d, -f1,2)" \
	"$(qa --data "$A" sql 'SELECT count(*), round(100.0 * count(*) / (SELECT count(*) FROM cuda_kernel), 1) FROM cuda_kernel GROUP BY kernel ORDER BY count(*) DESC, kernel LIMIT 1')"
eq "launch-gaps: the top stack last" "$(head1 --data "$A" report launch-gaps)" \
	"pid,tid,comm,gap_start_ts,gap_end_ts,gap_ms,ended_by,offcpu_ms,states,top_stack_ms,file_calls,reads,read_bytes,writes,write_bytes,host,top_stack"
eq "process: the value last" "$(head1 --data "$A" report process --pid 41017)" "section,item,n,value"
eq "recording: the value last" "$(qa --data "$A" report recording | grep -v '^run,')" \
	"segments,alpha,1,\"1 sealed, $(qa --data "$A" sql 'SELECT sum(bytes) FROM segments') bytes\"
span,alpha,99.999,2026-11-18T11:06:40.000000000Z .. 2026-11-18T11:08:19.999000000Z
events,cuda_kernel,100000,"
eq "report list: the description last" "$(head1 report list)" "report,parameters,description"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
