# gpurec - build, test, bench.  `make help` lists the targets.
#
# Outputs go under build/: build/gpurec (and build/gpurecd once it exists)
# are the release binaries; build/asan/ holds the ASan+UBSan build that
# `make test` runs.  STATIC=1 links everything but glibc statically.

SHELL   := /bin/bash
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wformat=2 \
           -Wno-format-nonliteral
CPPFLAGS += -I. -D_GNU_SOURCE
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS)
LIBS    := -lsqlite3 -lzstd -lz -lm -lpthread -ldl
ifeq ($(STATIC),1)
LDFLAGS += -static
endif
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=undefined

B := build

STORE_SRC := schema/schema.c store/codec.c store/writer.c store/reader.c \
             store/manifest.c store/verify.c store/sha256.c common/parse.c
QUERY_SRC := query/main.c query/vtab.c query/output.c query/aggregates.c
SYNTH_SRC := bench/synth.c
UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))

obj = $(patsubst %.c,$(1)/obj/%.o,$(2))

.PHONY: all test bench deps clean help unit cli-test docs demo
all: $(B)/gpurec $(B)/gpurec-synth

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(B)/asan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 $(SAN) -MMD -MP -c $< -o $@

$(B)/gpurec: $(call obj,$(B),$(QUERY_SRC) $(STORE_SRC))
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/gpurec-synth: $(call obj,$(B),bench/synth_main.c $(SYNTH_SRC) $(STORE_SRC))
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/bench-store: $(call obj,$(B),bench/bench_store.c $(SYNTH_SRC) \
		$(STORE_SRC) query/vtab.c query/aggregates.c)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/asan/gpurec: $(call obj,$(B)/asan,$(QUERY_SRC) $(STORE_SRC))
	$(CC) $(SAN) -o $@ $^ $(LIBS)

$(B)/asan/gpurec-synth: $(call obj,$(B)/asan,bench/synth_main.c \
		$(SYNTH_SRC) $(STORE_SRC))
	$(CC) $(SAN) -o $@ $^ $(LIBS)

# Unit tests link whatever modules they need; all of them, sanitized.
$(B)/asan/test_%: $(call obj,$(B)/asan,tests/unit/test_%.c $(STORE_SRC) \
		$(SYNTH_SRC) query/vtab.c query/output.c query/aggregates.c)
	$(CC) $(SAN) -o $@ $^ $(LIBS)

unit: $(addprefix $(B)/asan/,$(UNIT_TESTS))
	@fail=0; for t in $^; do echo "== $$t"; $$t || fail=1; done; \
	  test $$fail = 0

cli-test: $(B)/asan/gpurec $(B)/asan/gpurec-synth
	GPUREC=$(B)/asan/gpurec SYNTH=$(B)/asan/gpurec-synth \
	  bash tests/cli/run.sh

# make test: every test, sanitized; the last line counts them all.
test:
	@mkdir -p $(B)
	@$(MAKE) --no-print-directory unit cli-test 2>&1 | tee $(B)/test.log; \
	  st=$${PIPESTATUS[0]}; \
	  awk '/^[0-9]+ passed, [0-9]+ failed/ {p+=$$1; f+=$$3} \
	       END {printf "all: %d passed, %d failed\n", p, f}' $(B)/test.log; \
	  exit $$st

bench: $(B)/bench-store $(B)/gpurec
	$(B)/bench-store $(BENCH_ARGS)

deps:
	bash packaging/deps.sh

docs: $(B)/gpurec
	bash docs/gen-schema.sh $(B)/gpurec >docs/schema.md

demo: all
	bash tests/demo/store-demo.sh

clean:
	rm -rf $(B)

help:
	@echo "make [all]   build build/gpurec (and tools)"
	@echo "make deps    install build dependencies (apt-get or dnf)"
	@echo "make test    build with ASan+UBSan and run every test"
	@echo "make bench   run the benchmarks (results: BENCHMARKS.md)"
	@echo "make demo    a recording made by the store, queried with gpurec"
	@echo "make docs    regenerate docs/schema.md from the schema"
	@echo "make STATIC=1  link statically (for the GPU machine, packages)"

.SECONDARY:

-include $(shell find $(B) -name '*.d' 2>/dev/null)
