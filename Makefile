# gpurec - build, test, bench.  `make help` lists the targets.
#
# Outputs go under build/: build/gpurec (and build/gpurecd once it exists)
# are the release binaries; build/asan/ holds the ASan+UBSan build that
# `make test` runs.  Without STATIC=1, libcrypto (OpenSSL 3) is linked
# dynamically, so the host's validated module and FIPS mode apply
# (docs/security.md); STATIC=1 links everything statically, glibc and
# libcrypto too (a gpurecd so built cannot load NVML: no GPU sampling).

SHELL   := /bin/bash
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wformat=2 \
           -Wno-format-nonliteral
CPPFLAGS += -I. -D_GNU_SOURCE
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS)
LIBS    := -lsqlite3 -lzstd -lz -lcrypto -lm -lpthread -ldl
# libuv linked in brings an unused getpwuid_r: wrapped away (recorder/nonss.c).
NONSS   := -Wl,--wrap=getpwuid_r
ifeq ($(STATIC),1)
# libcrypto.a too: such a binary does not use the host's OpenSSL or its
# FIPS module (docs/security.md).
LDFLAGS += -static
RLIBS   := $(NONSS) -lbpf -lelf -l:libuv_a.a $(LIBS) -lstdc++
else ifeq ($(PKG),1)
# The packages' binaries (make deb / make rpm, built in build/pkgbin):
# every library but glibc linked in, glibc dynamic, hardened.
ALL_CFLAGS += -fstack-protector-strong -fPIE
CPPFLAGS += -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2
LDFLAGS += -pie -static-libgcc -Wl,-z,relro,-z,now,--as-needed
# libcrypto stays dynamic: the host's OpenSSL, its FIPS module included.
LIBS    := -Wl,-Bstatic -lsqlite3 -lzstd -lz -Wl,-Bdynamic -lcrypto -lm \
           -lpthread -ldl
RLIBS   := $(NONSS) -Wl,-Bstatic -lbpf -lelf -l:libuv_a.a -lsqlite3 -lzstd -lz \
           -lstdc++ -Wl,-Bdynamic -lcrypto -lm -lpthread -ldl
else
RLIBS   := -lbpf -lelf -luv $(LIBS) -lstdc++
endif
CLANG   ?= clang
BPFTOOL ?= bpftool
ARCH    := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=undefined

B := build

STORE_SRC := schema/schema.c store/codec.c store/writer.c store/reader.c \
             store/summary.c \
             store/manifest.c store/verify.c store/crypto.c store/fss.c \
             store/walview.c store/scan.c store/ncclcoll.c common/parse.c
VTAB_SRC  := query/vtab.c query/vt_event.c query/vt_grouped.c \
             query/vt_segments.c query/vt_runs.c query/graph_views.c
QUERY_SRC := query/main.c $(VTAB_SRC) query/sumtab.c query/output.c \
             query/timefmt.c query/outfile.c \
             query/aggregates.c \
             query/report.c query/cuda_errors.c query/status.c query/export.c \
             query/seal.c query/limits.c \
             query/perfetto.c query/cli.c
# gpurec shell and its line editor.
QUERY_SRC += query/shell.c query/lineedit.c
# Did-you-mean and the global filters' check (report parameters).
QUERY_SRC += query/suggest.c query/filters.c
# The NCCL straggler tables (nccl-skew, nccl-arrivals, rank-pace).
QUERY_SRC += query/nccl_fleet.c
# memcpy-sync and memcpy-pageable in one pass over the copies.
QUERY_SRC += query/memcpy_host.c
# The shared containers (common/hmap.c) go wherever common/parse.c goes.
STORE_SRC += common/hmap.c
# The canned reports, built into gpurec from query/reports/*.sql.
REPORTS_SQL := $(sort $(wildcard query/reports/*.sql))
SYNTH_SRC := bench/synth.c bench/synth_nccl.c bench/synth_gpu.c bench/synth_day.c $(B)/xid.c
# The CUDA family (recorder/cuda/) and the symbol module (recorder/sym/).
CUDA_SRC  := recorder/cuda/cuda.c recorder/cuda/attach.c \
             recorder/cuda/naming.c recorder/cuda/nccl.c \
             recorder/cuda/decode.c recorder/cuda/apis.c
SYM_SRC   := recorder/sym/elfsyms.c recorder/sym/stubreg.c \
             recorder/sym/ksyms.c recorder/sym/procmaps.c \
             recorder/sym/elfcache.c recorder/sym/stacks.c recorder/keymap.c
# The probe families (recorder/families.def), each a folder
# recorder/NAME/ with its BPF side NAME.bpf.c, the records both sides share
# NAME.h, its lifecycle NAME.c and its pure decoders decode.c.  The host
# unit's families are these files alone; the CUDA family's are above.
OPAREN := (
FAMILIES := $(shell sed -n 's/^GR_FAMILY$(OPAREN)\([a-z0-9_]*\),.*/\1/p' \
		recorder/families.def)
HOST_FAMILIES := $(shell sed -n \
		's/^GR_FAMILY$(OPAREN)\([a-z0-9_]*\), *host,.*/\1/p' \
		recorder/families.def)
# The decoders alone: no BPF, no skeleton (the unit tests link them).
DECODE_SRC := $(foreach f,$(HOST_FAMILIES),recorder/$(f)/decode.c) \
              recorder/family.c
# Uprobes in bulk (libbpf: not in the unit tests' link).
ULINK_SRC := recorder/ulink.c
# The gpu family (recorder/gpu/): NVML, dlopened, no BPF; NVIDIA's Xid
# catalog, generated from recorder/gpu/xid.tsv, and the kernel log's Xid
# lines.
XID_SRC   := recorder/gpu/xid.c $(B)/xid.c
GPU_SRC   := recorder/gpu/gpu.c $(XID_SRC)
REC_LIB_SRC := $(CUDA_SRC) $(SYM_SRC) $(ULINK_SRC) $(GPU_SRC) recorder/host.c \
               recorder/cgroup.c \
               $(foreach f,$(HOST_FAMILIES),recorder/$(f)/$(f).c) \
               recorder/proc/ptab.c $(DECODE_SRC)
REC_SRC   := recorder/gpurecd.c recorder/config.c $(REC_LIB_SRC)
REC_SRC   += recorder/sandbox.c recorder/nonss.c
UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))

obj = $(patsubst %.c,$(1)/obj/%.o,$(2))

.PHONY: all test bench deps clean help unit cli-test docs demo store-demo \
        bpf-test pkgbin deb rpm pkg-test
all: $(B)/gpurec $(B)/gpurecd $(B)/gpurec-synth

# eBPF: vmlinux.h from the running kernel's BTF (CO-RE relocates at load),
# one object and skeleton per probe family, each with bpf/common.bpf.h.
$(B)/vmlinux.h:
	@mkdir -p $(B)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c >$@.tmp && mv $@.tmp $@

BPF_CFLAGS = -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) -I$(B) -Ibpf -I.
# Objects in bpf/: the bench's probe_cost.
$(B)/%.bpf.o: bpf/%.bpf.c bpf/%.h bpf/common.bpf.h $(B)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# One family of families.def: its object from its folder, and its
# lifecycle's dependency on its skeleton.
define family_rules
ifneq ($$(wildcard recorder/$(1)/$(1).bpf.c),)
$(B)/$(1).bpf.o: recorder/$(1)/$(1).bpf.c recorder/$(1)/$(1).h \
		bpf/common.bpf.h $(B)/vmlinux.h
	$$(CLANG) $$(BPF_CFLAGS) -c $$< -o $$@
$(B)/obj/recorder/$(1)/$(1).o $(B)/asan/obj/recorder/$(1)/$(1).o: \
		$(B)/$(1).skel.h
endif
endef
$(foreach f,$(FAMILIES),$(eval $(call family_rules,$(f))))

# The host families share proc's GR_TRACKED_WORDS.
$(patsubst %,$(B)/%.bpf.o,$(filter-out proc,$(HOST_FAMILIES))): \
		recorder/proc/proc.h
# cuda's too: cuInit's entry marks its process traced.
$(B)/cuda.bpf.o: recorder/proc/proc.h

$(B)/%.skel.h: $(B)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $*_bpf >$@.tmp && mv $@.tmp $@

$(B)/obj/recorder/cuda/attach.o $(B)/asan/obj/recorder/cuda/attach.o: \
		$(B)/cuda.skel.h
$(B)/obj/recorder/%.o: CPPFLAGS += -I$(B)
$(B)/asan/obj/recorder/%.o: CPPFLAGS += -I$(B)

$(B)/gpurecd: $(call obj,$(B),$(REC_SRC) $(STORE_SRC))
	$(CC) $(LDFLAGS) -o $@ $^ $(RLIBS)

$(B)/asan/gpurecd: $(call obj,$(B)/asan,$(REC_SRC) $(STORE_SRC))
	$(CC) $(SAN) -o $@ $^ $(RLIBS)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@
# The block codec's per-column loops run over every value the recorder
# writes and every value a scan reads: -O3 lets the compiler vectorize
# them (-O2 vectorizes only loops of a known trip count).
$(B)/obj/store/codec.o: ALL_CFLAGS += -O3

$(B)/asan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 $(SAN) -MMD -MP -c $< -o $@

$(B)/reports.c: query/gen-reports.sh $(REPORTS_SQL)
	@mkdir -p $(B)
	bash query/gen-reports.sh $(REPORTS_SQL) >$@.tmp && mv $@.tmp $@

$(B)/xid.c: recorder/gpu/gen-xid.py recorder/gpu/xid.tsv
	@mkdir -p $(B)
	python3 recorder/gpu/gen-xid.py recorder/gpu/xid.tsv >$@.tmp && mv $@.tmp $@

$(B)/gpurec: $(call obj,$(B),$(QUERY_SRC) $(STORE_SRC) $(B)/reports.c)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/gpurec-synth: $(call obj,$(B),bench/synth_main.c $(SYNTH_SRC) $(STORE_SRC))
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/bench-store: $(call obj,$(B),bench/bench_store.c $(SYNTH_SRC) \
		$(STORE_SRC) $(VTAB_SRC) query/aggregates.c)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/asan/gpurec: $(call obj,$(B)/asan,$(QUERY_SRC) $(STORE_SRC) \
		$(B)/reports.c)
	$(CC) $(SAN) -o $@ $^ $(LIBS)

$(B)/asan/gpurec-synth: $(call obj,$(B)/asan,bench/synth_main.c \
		$(SYNTH_SRC) $(STORE_SRC))
	$(CC) $(SAN) -o $@ $^ $(LIBS)

# Unit tests link whatever modules they need; all of them, sanitized.
$(B)/asan/test_%: $(call obj,$(B)/asan,tests/unit/test_%.c $(STORE_SRC) \
		$(SYNTH_SRC) $(VTAB_SRC) query/output.c query/timefmt.c \
		query/aggregates.c \
		recorder/config.c recorder/cgroup.c $(SYM_SRC) $(DECODE_SRC) \
		$(GPU_SRC))
	$(CC) $(SAN) -o $@ $^ $(LIBS) -lelf -lstdc++
# Did-you-mean, alone.
$(B)/asan/test_suggest: $(call obj,$(B)/asan,query/suggest.c)
# Report headers and typed parameters, over the test's own reports.
$(B)/asan/test_report: $(call obj,$(B)/asan,query/report.c \
		query/cuda_errors.c query/cli.c)
# The CUDA decoders, without BPF (no skeleton: root-free).
$(B)/asan/test_cudadecode: $(call obj,$(B)/asan,recorder/cuda/decode.c \
		recorder/cuda/nccl.c recorder/cuda/apis.c)

# The line editor's buffer, widths and history, without a terminal.
$(B)/asan/test_lineedit: $(call obj,$(B)/asan,query/lineedit.c)

unit: $(addprefix $(B)/asan/,$(UNIT_TESTS)) $(B)/gpu-mock/selftest
	@fail=0; for t in $^; do echo "== $$t"; $$t || fail=1; done; \
	  test $$fail = 0

cli-test: $(B)/asan/gpurec $(B)/asan/gpurec-synth
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/run.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/limits.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/time.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/export3p.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/shell.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/params.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/graph_kernels.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/busyday.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/fanin.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cli/docs.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cli/completion.sh
	GPUREC=$(B)/asan/gpurec bash tests/cli/seal.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd \
	  SYNTH=$(B)/asan/gpurec-synth bash tests/cli/daemon.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd \
	  SYNTH=$(B)/asan/gpurec-synth bash tests/cli/retention.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/gapsum.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/ncclsum.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/gapslots.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/lookups.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/latsum.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/syncsum.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/ncclfleet.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/restrep.sh
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/memcpyhost.sh
# Man pages, shipped config and completion, checked against both programs.
cli-test: $(B)/asan/gpurecd

# A mock CUDA driver and runtime (tests/cuda/mock): the driver layer's
# test and the probe-cost bench call through them on machines with no GPU.
MOCK := $(B)/cuda-tests/mock
MOCK_LIBS := $(MOCK)/libcuda.so.1 $(MOCK)/libcudart.so.13
# Frame pointers: the off-CPU stacks of a hung cuInit unwind (hung.sh).
MOCK_CFLAGS := -O1 -g -fno-omit-frame-pointer -Wall -Wextra -fPIC -shared
$(MOCK)/libcuda.so.1: tests/cuda/mock/libcuda.c tests/cuda/mock/mockcuda.h
	@mkdir -p $(dir $@)
	$(CC) $(MOCK_CFLAGS) -Wl,-soname,libcuda.so.1 -o $@ $<
$(MOCK)/libcudart.so.13: tests/cuda/mock/libcudart.c \
		tests/cuda/mock/mockcuda.h $(MOCK)/libcuda.so.1
	$(CC) $(MOCK_CFLAGS) -Wl,-soname,libcudart.so.13 -o $@ $< \
	  -L$(MOCK) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN'
# A mock NCCL (communicators without a GPU) and the NCCL test program,
# which dlopens the mock or the real libnccl.so.2 (tests/cuda/nccl.sh).
$(MOCK)/libnccl.so.2: tests/cuda/mock/libnccl.c tests/cuda/mock/mocknccl.h
	@mkdir -p $(dir $@)
	$(CC) $(MOCK_CFLAGS) -Wl,-soname,libnccl.so.2 -o $@ $<
$(B)/cuda-tests/nccl_calls: tests/cuda/nccl_calls.c tests/cuda/mock/mocknccl.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) -Itests/cuda -o $@ $< -ldl
$(B)/cuda-tests/drv_calls: tests/cuda/drv_calls.c $(MOCK_LIBS)
	$(CC) -O1 -g -Wall -Wextra -Itests/cuda -o $@ $< -L$(MOCK) \
	  -l:libcudart.so.13 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/mock'
# Frame pointers: the off-CPU stacks of its sleeps unwind.
$(B)/cuda-tests/graphs_gaps: tests/cuda/graphs_gaps.c $(MOCK_LIBS)
	$(CC) -O1 -g -fno-omit-frame-pointer $(WARN) -D_GNU_SOURCE \
	  -Itests/cuda -o $@ $< -L$(MOCK) -l:libcudart.so.13 -l:libcuda.so.1 \
	  -lpthread -Wl,-rpath,'$$ORIGIN/mock'

# Graph captures and replays (tests/cuda/graph_kernels.sh).
$(B)/cuda-tests/graph_kernels: tests/cuda/graph_kernels.c $(MOCK_LIBS)
	$(CC) -O1 -g $(WARN) -Itests/cuda -o $@ $< -L$(MOCK) \
	  -l:libcudart.so.13 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/mock'

# A mock NVML (tests/gpu-mock): scripted GPUs for the gpu family's tests,
# built from recorder/gpu/nvml.h (-z defs: every entry point defined).
# Its self-test, root-free, runs with the unit tests.
GPU_MOCK := $(B)/gpu-mock
$(GPU_MOCK)/libnvidia-ml.so.1: tests/gpu-mock/libnvidia-ml.c recorder/gpu/nvml.h
	@mkdir -p $(dir $@)
	$(CC) $(MOCK_CFLAGS) -std=gnu11 -I. -D_GNU_SOURCE \
	  -Wl,-soname,libnvidia-ml.so.1 -Wl,-z,defs -o $@ $< -lpthread
$(GPU_MOCK)/selftest: tests/gpu-mock/selftest.c recorder/gpu/nvml.h \
		tests/unit/test.h $(GPU_MOCK)/libnvidia-ml.so.1
	$(CC) -O1 -g -std=gnu11 $(WARN) $(SAN) -I. -D_GNU_SOURCE -o $@ $< \
	  -ldl -lpthread

# Frame pointers: the off-CPU stacks of its sleeps and of a hung cuInit
# unwind.
$(B)/cuda-tests/hung: tests/cuda/hung.c $(MOCK_LIBS)
	$(CC) -O1 -g -fno-omit-frame-pointer $(WARN) -Itests/cuda -o $@ $< \
	  -L$(MOCK) -l:libcudart.so.13 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/mock'

# Root and eBPF: gpurecd records real CUDA programs (skips only outside CI).
$(B)/asan/obj/tests/bpf/%.o: CPPFLAGS += -I$(B)
# The recorder's library whole, as probe-cost links it: a list of its
# own would fall behind whenever a module moves.
$(B)/asan/test_ringbuf_drops: $(call obj,$(B)/asan,tests/bpf/test_ringbuf_drops.c \
		$(REC_LIB_SRC) $(VTAB_SRC) query/aggregates.c $(STORE_SRC))
	$(CC) $(SAN) -o $@ $^ $(RLIBS)
$(B)/asan/obj/tests/bpf/test_ringbuf_drops.o: $(B)/cuda.skel.h

# host_load: known host-side work from a process that touched CUDA (the
# host context test and the demo).  Frame pointers, so that its stacks
# unwind.
$(B)/host-tests/host_load: tests/host/host_load.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fno-omit-frame-pointer $(WARN) -D_GNU_SOURCE -o $@ $< \
	  -ldl -lpthread

# sandbox_exiting: the sandbox applied while a joined thread still exits
# (tests/host/sandbox.sh).
$(B)/host-tests/sandbox_exiting: tests/host/sandbox_exiting.c recorder/sandbox.c \
		recorder/sandbox.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) -D_GNU_SOURCE -I. -o $@ $< recorder/sandbox.c -lpthread

# tests/host/sandbox.sh also checks the release gpurecd (its filter, symbols).
bpf-test: $(B)/gpurecd
bpf-test: $(B)/asan/gpurecd $(B)/asan/gpurec $(B)/asan/test_ringbuf_drops \
		$(B)/cuda-tests/drv_calls $(B)/cuda-tests/graphs_gaps \
		$(B)/cuda-tests/hung $(B)/cuda-tests/graph_kernels \
		$(B)/cuda-tests/nccl_calls $(MOCK)/libnccl.so.2 \
		$(GPU_MOCK)/libnvidia-ml.so.1 $(B)/host-tests/host_load \
		$(B)/host-tests/sandbox_exiting $(B)/gpurec
	@if [ "$$(id -u)" = 0 ]; then $(B)/asan/test_ringbuf_drops; \
	 elif [ "$$CI" = true ]; then echo "FAIL ringbuf test: not root"; \
	   echo "0 passed, 1 failed, 0 skipped"; exit 1; \
	 else echo "skip ringbuf test: not root"; \
	   echo "0 passed, 0 failed, 1 skipped"; fi
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cuda/run.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cuda/driver.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cuda/graphs_gaps.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cuda/graph_kernels.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cuda/hung.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd GPU_MOCK=$(GPU_MOCK) \
	  bash tests/cuda/gpu.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cuda/nccl.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cuda/stop.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cuda/memory.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/cuda/signals.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/host/run.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/host/openoff.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd GPURECD_RELEASE=$(B)/gpurecd bash tests/host/sandbox.sh
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd bash tests/host/service_creds.sh
	bash tests/demo/check.sh

# Fuzzers (tests/fuzz, docs/reliability.md): libFuzzer harnesses for the
# block decoder and the segment reader, built with clang's fuzzer, ASan and
# UBSan; seed corpora made from gpurec-synth's segments at build time.
# `make fuzz FUZZ_SECONDS=N` runs each for N s (the corpus in
# build/fuzz/corpus grows across runs); fuzz-smoke, a part of make test,
# runs a few thousand inputs each.
FUZZ_CC ?= clang-14
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
            -fno-omit-frame-pointer
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_RUNS ?= 3000
FUZZERS := $(B)/fuzz/fuzz_block $(B)/fuzz/fuzz_segment
$(B)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=gnu11 -g -O1 $(FUZZ_SAN) \
	  -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
$(B)/fuzz/fuzz_%: $(call obj,$(B)/fuzz,tests/fuzz/fuzz_%.c $(STORE_SRC))
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LIBS)
$(B)/fuzz/seeds/.made: tests/fuzz/seeds.sh $(B)/gpurec-synth
	bash tests/fuzz/seeds.sh $(B)/gpurec-synth $(B)/fuzz/seeds
	@touch $@
.PHONY: fuzz fuzz-smoke fault-test reliability
fuzz: $(FUZZERS) $(B)/fuzz/seeds/.made
	FUZZ_DIR=$(B)/fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh
fuzz-smoke: $(FUZZERS) $(B)/fuzz/seeds/.made
	FUZZ_DIR=$(B)/fuzz FUZZ_RUNS=$(FUZZ_SMOKE_RUNS) FUZZ_NICE=0 \
	  bash tests/fuzz/run.sh

# Fault tests (tests/faults/*.sh, docs/reliability.md): each run once, with
# its CI number of trials; each prints ok/FAIL lines and `N passed, N
# failed, N skipped`.
# killpoint.so (tests/faults/killpoint.c) holds a writer at a named point
# for kill9.sh; plain cc, no sanitizer, preloaded into the ASan binaries.
FAULT_BINS := $(B)/asan/gpurec $(B)/asan/gpurecd $(B)/asan/gpurec-synth \
              $(B)/faults/killpoint.so $(B)/switch-load
$(B)/faults/killpoint.so: tests/faults/killpoint.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) -fPIC -shared -o $@ $< -ldl
fault-test: $(FAULT_BINS)
	@fail=0; for t in $(sort $(wildcard tests/faults/*.sh)); do \
	  echo "== $$t"; GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd \
	  SYNTH=$(B)/asan/gpurec-synth KILLPOINT_SO=$(B)/faults/killpoint.so \
	  SWITCH_LOAD=$(B)/switch-load bash $$t || fail=1; done; \
	  test $$fail = 0

# make reliability DURATION=1h (root): the fault tests in a loop with
# RELIABILITY_TRIALS trials each, and the fuzzers, for DURATION in all
# (half each); prints a summary for docs/reliability.md.
DURATION ?= 1h
RELIABILITY_TRIALS ?= 50
reliability: $(FAULT_BINS) $(FUZZERS) $(B)/fuzz/seeds/.made
	GPUREC=$(B)/asan/gpurec GPURECD=$(B)/asan/gpurecd \
	  SYNTH=$(B)/asan/gpurec-synth KILLPOINT_SO=$(B)/faults/killpoint.so \
	  SWITCH_LOAD=$(B)/switch-load FUZZ_DIR=$(B)/fuzz TRIALS=$(RELIABILITY_TRIALS) bash tests/reliability.sh $(DURATION)

# make test: every test, sanitized; the last line counts them all.
test:
	@mkdir -p $(B)
	@$(MAKE) --no-print-directory unit cli-test fault-test fuzz-smoke \
	  bpf-test pkg-test 2>&1 | \
	  tee $(B)/test.log; \
	  st=$${PIPESTATUS[0]}; \
	  awk '/^[0-9]+ passed, [0-9]+ failed/ {p+=$$1; f+=$$3; s+=$$5} \
	       END {printf "all: %d passed, %d failed, %d skipped\n", p, f, s}' \
	    $(B)/test.log; \
	  exit $$st

$(B)/obj/bench/probe_cost.o: $(B)/cuda.skel.h $(B)/probe_cost.skel.h
$(B)/obj/bench/probe_cost.o: CPPFLAGS += -I$(B)
$(B)/probe-cost: $(call obj,$(B),bench/probe_cost.c $(REC_LIB_SRC) \
		$(STORE_SRC))
	$(CC) $(LDFLAGS) -o $@ $^ $(RLIBS)

$(B)/switch-load: bench/switch_load.c
	@mkdir -p $(B)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -lpthread

# launch-loop: launches through the mock runtime, for bench/launch_bench.sh.
$(B)/launch-loop: bench/launch_loop.c $(MOCK_LIBS)
	$(CC) $(ALL_CFLAGS) -Itests/cuda -o $@ $< -L$(MOCK) \
	  -l:libcudart.so.13 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/cuda-tests/mock'

# libbig.so: a library shaped like PyTorch's, for bench/rss_bench.sh.
$(B)/bench/libbig.so: bench/biglib.sh
	bash bench/biglib.sh $@

# bench/busyday.sh's day, in hours (or minutes: 10m); its recordings are
# made once under $(B)/busyday and reused.
BUSYDAY_HOURS ?= 24
# Its 8 hosts' day: 8 x 24 h is about 217 GB on disk (one host 27 GB).
BUSYDAY_FLEET_HOURS ?= $(BUSYDAY_HOURS)
bench: $(B)/bench-store $(B)/probe-cost $(B)/gpurec $(MOCK_LIBS) \
		$(B)/gpurecd $(B)/switch-load $(B)/gpurec-synth $(B)/launch-loop \
		$(B)/bench/libbig.so
	$(B)/probe-cost $(MOCK)
	bash bench/sched_bench.sh $(B)/gpurecd
	bash bench/daemon_bench.sh $(B)/gpurecd $(MOCK)
	bash bench/launch_bench.sh $(B)/gpurecd $(B)/gpurec $(B)/launch-loop $(MOCK)
	bash bench/rss_bench.sh $(B)/gpurecd $(B)/launch-loop $(MOCK) \
	  $(B)/bench/libbig.so
	$(B)/bench-store $(BENCH_ARGS)
	bash bench/reports_bench.sh $(B)
	bash bench/gapsum_bench.sh $(B)
	bash bench/latsum_bench.sh $(B)
	bash bench/fanin_bench.sh $(B)
	bash bench/gapslots_bench.sh $(B)
	bash bench/export_bench.sh $(B)
	bash bench/graph_kernels_bench.sh $(B)
	bash bench/busyday.sh $(B) $(BUSYDAY_HOURS) $(BUSYDAY_FLEET_HOURS)
	bash bench/ncclfleet_bench.sh $(B)
	bash bench/ncclday_bench.sh $(B)
	bash bench/restrep_bench.sh $(B)

deps:
	bash packaging/deps.sh

# Packages (docs/packaging.md): the binaries built with PKG=1 in
# $(B)/pkgbin, packed into $(PKGDIR).  VERSION=x.y.z overrides the version
# of common/version.h (the upgrade test builds a second one).
PKGBIN  := $(B)/pkgbin
PKGDIR  ?= $(B)/pkg
ifneq ($(origin VERSION),command line)
VERSION := $(shell sed -n 's/^\#define GPUREC_VERSION "\(.*\)"/\1/p' \
		common/version.h)
endif
pkgbin:
	@$(MAKE) --no-print-directory B=$(PKGBIN) PKG=1 $(PKGBIN)/gpurec \
	  $(PKGBIN)/gpurecd
deb: pkgbin
	bash packaging/deb/build.sh $(PKGBIN) $(VERSION) $(PKGDIR)
rpm: pkgbin
	bash packaging/rpm/build.sh $(PKGBIN) $(VERSION) $(PKGDIR)
# Root: the .deb is installed into a debootstrap chroot.
pkg-test: service-test
	bash tests/pkg/deb.sh
	bash tests/pkg/rpm.sh
# The systemd unit, sysusers and tmpfiles entries (docs/service.md); a
# part of pkg-test.
.PHONY: service-test
service-test: $(B)/gpurecd
	bash tests/pkg/service.sh $(B)/gpurecd

docs: $(B)/gpurec
	bash docs/gen-schema.sh $(B)/gpurec >docs/schema.md

# The live demo records this machine (root); its CUDA program is built
# where nvcc is (it runs without a GPU too: the calls fail, and are
# recorded).  store-demo needs neither root nor BPF.
NVCC ?= /usr/local/cuda/bin/nvcc
$(B)/demo/demo_cuda: tests/demo/demo.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -o $@ $<

demo: all $(B)/host-tests/host_load $(if $(wildcard $(NVCC)),$(B)/demo/demo_cuda)
	bash tests/demo/demo.sh
# bpf-test runs the demo as a user would (tests/demo/check.sh).
bpf-test: $(if $(wildcard $(NVCC)),$(B)/demo/demo_cuda)

store-demo: $(B)/gpurec $(B)/gpurec-synth
	bash tests/demo/store-demo.sh

clean:
	rm -rf $(B)

help:
	@echo "make [all]   build build/gpurec (and tools)"
	@echo "make deps    install build dependencies (apt-get or dnf)"
	@echo "make test    build with ASan+UBSan and run every test"
	@echo "make bench   run the benchmarks (results: BENCHMARKS.md)"
	@echo "make fuzz FUZZ_SECONDS=N  run each fuzzer N s (tests/fuzz)"
	@echo "make fault-test  the fault tests once (tests/faults)"
	@echo "make reliability DURATION=1h  (root) fault tests and fuzzers in"
	@echo "             a loop; a summary for docs/reliability.md"
	@echo "make demo    (root) record this machine running a CUDA program and"
	@echo "             host load for a few seconds, then query it with gpurec"
	@echo "make store-demo  a synthetic recording made by the store, queried"
	@echo "make docs    regenerate docs/schema.md from the schema"
	@echo "make STATIC=1  link statically (for the GPU machine; libcrypto"
	@echo "             too: not the host's FIPS module; no NVML: PKG=1 samples)"
	@echo "make deb, make rpm  the packages, in build/pkg (VERSION=x.y.z"
	@echo "             overrides the version; docs/packaging.md)"
	@echo "make pkg-test  (root) lintian, rpmlint, install/upgrade/purge"
	@echo "             in a debootstrap root"

.SECONDARY:

-include $(shell find $(B) -name '*.d' -type f 2>/dev/null)
