#!/usr/bin/env bash
# nccl.sh - gpurecd records NCCL calls into the nccl table (root, eBPF).
#
# nccl_calls.c dlopens a libnccl and calls it with known arguments:
# (a) "calls" against the real libnccl.so.2, where present: every hooked
#     entry point once, with no communicator; without a GPU each call is
#     refused, but made, and its row must come back exactly (op, count,
#     datatype, bytes, redop, peer, stream, ret; the unique id passed by
#     value on the stack hashed into comm_id);
# (b) "comms" against a mock libnccl (tests/cuda/mock/libnccl.c) that
#     makes communicators without a GPU, twice, as rank 0 and rank 1 of
#     one unique id: comm_id, rank, nranks and seq must be exact, and the
#     same collective must carry the same comm_id and seq on both ranks;
#     and a process that made its communicator before gpurecd started,
#     whose calls on it carry no comm_id.
set -uo pipefail
SUITE=nccl
. "$(dirname "$0")/lib.sh"

M=build/cuda-tests/mock
P=build/cuda-tests/nccl_calls
REAL=${NCCL_LIB:-/usr/local/cuda/lib64/libnccl.so.2}
[ -x $P ] && [ -e $M/libnccl.so.2 ] || { bad "nccl_calls" "not built: run make bpf-test"; finish; exit 1; }

$P $M/libnccl.so.2 early "$T/go.early" >"$T/early.out" & pe=$!
sleep 0.2 # its communicator is made before gpurecd starts
start_gpurecd --cuda-lib $M/libnccl.so.2
touch "$T/go.early"; wait $pe
eq "(early) runs" "$?" 0
$P $M/libnccl.so.2 comms 0 >"$T/r0.out" & p0=$!; wait $p0
eq "(rank 0) runs" "$?" 0
$P $M/libnccl.so.2 comms 1 >"$T/r1.out" & p1=$!; wait $p1
eq "(rank 1) runs" "$?" 0
pr=
if [ -e "$REAL" ]; then
	$P "$REAL" calls >"$T/real.out" & pr=$!; wait $pr
	eq "(real) runs" "$?" 0
fi
sleep 0.3
stop_gpurecd

L="$T/gpurecd.log"
grep -q "attached 42 probes (21 entry points) to $M/libnccl.so.2" "$L" && ok "the mock: each entry point attached once (ncclX and pncclX share an address)" || bad "mock attach log" "$(grep attached "$L")"

C="SELECT api, op, count, datatype, bytes, redop, peer, comm_id, rank, nranks, seq, stream, ret FROM nccl"
# id CASE NAME: a comm_id the program computed ("id NAME VALUE").
id() { sed -n "s/^id $2 //p" "$T/$1.out"; }

for r in 0 1; do
	pid=$p0; [ $r = 1 ] && pid=$p1
	o=$((1 - r))
	h=$(id r$r init) hs=$(id r$r split) ha=$(id r$r all) h2=$(id r$r config) h3=$(id r$r scalable)
	eq "(rank $r) the program's calls succeed where they should" "$(sed -n 's/^ret //p' "$T/r$r.out")" \
		"0 0 0 0 0 0 0 4 0 0 0 0 0 0 0 0 0 0 0 0 0"
	eq "(rank $r) every call, its communicator, rank, nranks and seq" \
		"$(q "$C WHERE pid = $pid ORDER BY ts")" \
		"ncclCommInitRank,CommInitRank,,,,,,$h,$r,2,,,0 ncclAllReduce,AllReduce,1000,float32,4000,sum,,$h,$r,2,0,17,0 ncclGroupStart,GroupStart,,,,,,,,,,,0 ncclSend,Send,64,int8,64,,$o,$h,$r,2,,18,0 ncclRecv,Recv,64,int8,64,,$o,$h,$r,2,,18,0 ncclGroupEnd,GroupEnd,,,,,,,,,,,0 ncclAllGather,AllGather,500,bfloat16,1000,,,$h,$r,2,1,19,0 ncclAllReduce,AllReduce,1,99,,sum,,$h,$r,2,,20,4 ncclBroadcast,Broadcast,3,int32,12,,0,$h,$r,2,2,21,0 ncclReduce,Reduce,4,float64,32,min,1,$h,$r,2,3,22,0 ncclCommSplit,CommSplit,,,,,,$hs,,,,,0 ncclAllReduce,AllReduce,2,int64,16,prod,,$hs,,,0,23,0 ncclCommSplit,CommSplit,,,,,,,,,,,0 ncclCommInitAll,CommInitAll,,,,,,$ha,,3,,,0 ncclAllReduce,AllReduce,5,float32,20,max,,$ha,2,3,0,24,0 ncclCommInitRankConfig,CommInitRankConfig,,,,,,$h2,$r,2,,,0 ncclReduceScatter,ReduceScatter,6,float32,24,sum,,$h2,$r,2,0,25,0 ncclCommInitRankScalable,CommInitRankScalable,,,,,,$h3,$r,2,,,0 ncclAlltoAll,AllToAll,7,float32,28,,,$h3,$r,2,0,26,0 ncclCommDestroy,CommDestroy,,,,,,$h,$r,2,,,0 ncclAllReduce,AllReduce,8,float32,32,sum,,,,,,27,0 "
done
eq "the ranks derive the same ids from the same unique id and split" \
	"$(id r0 init) $(id r0 split) $(id r0 config)" "$(id r1 init) $(id r1 split) $(id r1 config)"
eq "the same collective has the same comm_id and seq on both ranks" \
	"$(q "SELECT comm_id, seq, op, count FROM nccl WHERE pid = $p0 AND seq IS NOT NULL AND comm_id NOT IN (SELECT comm_id FROM nccl WHERE op = 'CommInitAll') ORDER BY ts")" \
	"$(q "SELECT comm_id, seq, op, count FROM nccl WHERE pid = $p1 AND seq IS NOT NULL AND comm_id NOT IN (SELECT comm_id FROM nccl WHERE op = 'CommInitAll') ORDER BY ts")"
eq "(early) a communicator made before gpurecd: its calls recorded, comm_id, rank, nranks, seq NULL" \
	"$(sed -n 's/^ret //p' "$T/early.out") $(q "$C WHERE pid = $pe ORDER BY ts")" \
	"0 0 0 ncclAllReduce,AllReduce,16,float32,64,sum,,,,,,40,0 ncclCommDestroy,CommDestroy,,,,,,,,,,,0 "
eq "(rank 0) NCCL's rows are only in nccl" "$(q "SELECT count(*) FROM cuda_api WHERE pid = $p0")" "0 "

if [ -z "$pr" ]; then
	skip "no libnccl.so.2 at $REAL"
fi
grep -q "attached [0-9]* probes (2[1-9] entry points) to .*libnccl.so.2 " "$L" && ok "(real) the toolkit's libnccl is attached at start" || bad "real attach log" "$(grep attached "$L")"
read -r -a R <<<"$(sed -n 's/^ret //p' "$T/real.out")"
h=$(id real init)
eq "(real) every entry point, its arguments and return code" \
	"$(q "$C WHERE pid = $pr ORDER BY ts")" \
	"ncclAllReduce,AllReduce,1024,float32,4096,sum,,,,,,81,${R[0]} ncclAllGather,AllGather,256,bfloat16,512,,,,,,,82,${R[1]} ncclReduceScatter,ReduceScatter,100,float64,800,max,,,,,,83,${R[2]} ncclBroadcast,Broadcast,3,int8,3,,2,,,,,84,${R[3]} ncclReduce,Reduce,10,int64,80,avg,3,,,,,85,${R[4]} ncclAlltoAll,AllToAll,7,uint32,28,,,,,,,86,${R[5]} ncclSend,Send,5,float16,10,,1,,,,,87,${R[6]} ncclRecv,Recv,9,uint8,9,,0,,,,,88,${R[7]} ncclBcast,Broadcast,11,float8e4m3,11,,1,,,,,89,${R[8]} ncclGather,Gather,2,uint64,16,,0,,,,,90,${R[9]} ncclScatter,Scatter,4,int32,16,,1,,,,,91,${R[10]} ncclAllReduce,AllReduce,8,float8e5m2,8,premulsum,,,,,,92,${R[11]} ncclAllReduce,AllReduce,6,12,,prod,,,,,,93,${R[12]} ncclGroupStart,GroupStart,,,,,,,,,,,${R[13]} ncclGroupEnd,GroupEnd,,,,,,,,,,,${R[14]} ncclCommInitRank,CommInitRank,,,,,,$h,1,2,,,${R[15]} ncclCommInitRankConfig,CommInitRankConfig,,,,,,$h,3,4,,,${R[16]} ncclCommInitAll,CommInitAll,,,,,,,,2,,,${R[17]} ncclCommSplit,CommSplit,,,,,,,,,,,${R[18]} ncclCommFinalize,CommFinalize,,,,,,,,,,,${R[19]} ncclCommDestroy,CommDestroy,,,,,,,,,,,${R[20]} ncclCommAbort,CommAbort,,,,,,,,,,,${R[21]} "
eq "(real) without a GPU: collectives refused (ncclInvalidArgument), groups fine" \
	"${R[*]:0:15}" "4 4 4 4 4 4 4 4 4 4 4 4 4 0 0"
eq "nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 "
"$GPUREC" --data "$D" verify >/dev/null 2>&1; eq "the recording verifies" "$?" 0
finish
