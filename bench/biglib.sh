#!/usr/bin/env bash
# biglib.sh - builds OUT, a shared library shaped like one of PyTorch's for
# gpurecd's memory: N functions (200,000) with mangled C++ names of ~100
# bytes, stripped to .dynsym, a 21 MiB string table (libtorch_cuda's is
# larger).  For bench/rss_bench.sh; kept between runs (rebuilt when this
# script is newer).
#
#   bash bench/biglib.sh OUT [N]
set -euo pipefail
out=${1:?usage: biglib.sh OUT [N]}
n=${2:-200000}
[ -f "$out" ] && [ "$out" -nt "$0" ] && exit 0
tmp=$(mktemp -d /tmp/gpurec-biglib.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
awk -v n="$n" 'BEGIN {
	split("at native cuda detail TensorIterator vectorized elementwise_kernel " \
	      "reduce_kernel ReduceOp MeanOps func_wrapper_t BinaryFunctor " \
	      "unrolled_elementwise_kernel OffsetCalculator LoadWithCast " \
	      "StoreWithCast float Half BFloat16 c10 complex Array", p, " ")
	np = length(p); srand(1)
	for (i = 0; i < n; i++) {
		s = ""
		for (k = 0; k < 8; k++) { w = p[int(rand() * np) + 1]; s = s length(w) w }
		name = sprintf("_ZN%sILi%dEEEvi%d", s, i % 512, i)
		printf ".globl %s\n.type %s,@function\n%s:\nret\n.size %s, .-%s\n", name, name, name, name, name
	}
	print ".section .note.GNU-stack,\"\",@progbits"
}' >"$tmp/big.s"
gcc -shared -s -o "$tmp/libbig.so" "$tmp/big.s"
mkdir -p "$(dirname "$out")"
mv "$tmp/libbig.so" "$out"
