# meta.sh - what both package builders say about the package (sourced).
PKG_NAME=gpurec
PKG_MAINTAINER="gpurec maintainers <maintainers@users.noreply.a-seed-4b8b51d6.example>"
PKG_SUMMARY="Always-on flight recorder for GPU hosts"
# The long description, one paragraph per line.
PKG_DESCRIPTION=(
"gpurecd records with eBPF what GPU processes ask of the CUDA runtime and driver, NCCL calls, off-CPU intervals, run-queue latency and block and file I/O into rotating, compressed, checksummed SQLite segments on the local disk; it opens no network socket and sends nothing off the host. gpurec answers SQL and canned forensic reports over the recording, offline, hours later."
"The service is installed but neither enabled nor started. Both programs link every library but glibc statically."
)

# pkg_args BINDIR VERSION OUTDIR: the builders' arguments, checked; sets
# bin, version and out, and makes OUTDIR.
pkg_args() {
	bin=$1 version=$2 out=$3
	[[ $version =~ ^[0-9][A-Za-z0-9.+~]*$ ]] ||
		{ echo "${0##*/}: bad version '$version'" >&2; exit 1; }
	mkdir -p "$out"
}
