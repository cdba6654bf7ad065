/* test_elfcache.c - the shared ELF cache (recorder/sym/elfcache.c): files
 * read once per (device, inode), in the background or at once, failures
 * remembered, a clean stop while the loader is busy, and stacks
 * (recorder/sym/stacks.c) naming user frames through it without waiting.
 * Uses this test's own mappings: no root needed. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/sym/elfcache.h"
#include "recorder/sym/stacks.h"
#include "test.h"

/* A function of this binary to find by address. */
__attribute__((noinline)) int gr_elfcache_test_marker(int x);
__attribute__((noinline)) int gr_elfcache_test_marker(int x)
{
	return x * 3 + 1;
}

/* The mapping of this process holding addr, read into pm. */
static const struct gr_mapping *own_mapping(struct gr_maps *pm, uint64_t addr)
{
	if (gr_maps__read(getpid(), pm))
		return NULL;
	return gr_maps__find(pm, addr);
}

/* Checks that ELF e, of mapping m holding addr, names the marker there. */
static void names_marker(const struct gr_elf *e, const struct gr_mapping *m,
			 uint64_t addr)
{
	uint64_t va, in = 99;
	CHECK_EQ_INT(gr_elf__off_to_vaddr(e, addr - m->start + m->off, &va), 0);
	char *name = gr_elf__symbolize(e, va, &in);
	CHECK_EQ_STR(name, "gr_elfcache_test_marker");
	CHECK_EQ_INT(in, 0);
	free(name);
}

/* Reads this binary's file through a cache with or without a loader,
 * names the marker from it, and checks it is read once. */
static void read_once(int loader)
{
	struct gr_maps pm;
	uint64_t addr = (uint64_t)(uintptr_t)&gr_elfcache_test_marker;
	const struct gr_mapping *m = own_mapping(&pm, addr);
	CHECK(m != NULL);
	struct gr_elfcache *ec = gr_elfcache__new(loader);
	CHECK(ec != NULL);
	int pending = -1;
	struct gr_elfcache_usage u;
	struct gr_elf *e = gr_elfcache__get(ec, (uint32_t)getpid(), m, &pending);
	if (loader) {
		/* The first ask queues it: never ready at once. */
		CHECK(e == NULL);
		CHECK_EQ_INT(pending, 1);
		e = gr_elfcache__wait(ec, (uint32_t)getpid(), m);
	} else {
		/* Without a loader, get reads at once, as wait does. */
		CHECK_EQ_INT(pending, 0);
	}
	CHECK(e != NULL);
	names_marker(e, m, addr);
	/* Read once: the same object, and no longer pending. */
	CHECK(gr_elfcache__get(ec, (uint32_t)getpid(), m, &pending) == e);
	CHECK_EQ_INT(pending, 0);
	CHECK(gr_elfcache__wait(ec, (uint32_t)getpid(), m) == e);
	gr_elfcache__usage(ec, &u);
	CHECK_EQ_INT(u.files, 1);
	CHECK_EQ_INT(u.read, 1);
	gr_elfcache__free(ec);
	gr_maps__free(&pm);
	CHECK_EQ_INT(gr_elfcache_test_marker(2), 7);
}

TEST(wait_reads_and_names)
{
	read_once(1);
}

TEST(no_loader)
{
	read_once(0);
}

/* Trimming forgets the least recently used files past the budget, and a
 * file forgotten is read again when next asked for. */
TEST(trim_forgets_lru)
{
	struct gr_maps pm;
	uint64_t addr = (uint64_t)(uintptr_t)&gr_elfcache_test_marker;
	const struct gr_mapping *m = own_mapping(&pm, addr);
	CHECK(m != NULL);
	struct gr_elfcache *ec = gr_elfcache__new(1);
	CHECK(ec != NULL);
	uint32_t pid = (uint32_t)getpid();
	/* Every file this process maps, then this binary last. */
	for (int i = 0; i < pm.n; i++)
		(void)gr_elfcache__wait(ec, pid, &pm.m[i]);
	CHECK(gr_elfcache__wait(ec, pid, m) != NULL);
	struct gr_elfcache_usage u0, u1, u2;
	gr_elfcache__usage(ec, &u0);
	CHECK(u0.read >= 2);
	CHECK(u0.bytes > 0);
	CHECK_EQ_INT(u0.evicted, 0);
	/* Within budget: nothing goes. */
	uint64_t freed = 99;
	CHECK_EQ_INT(gr_elfcache__trim(ec, u0.bytes, &freed), 0);
	CHECK_EQ_INT(freed, 0);
	/* A budget of this binary's bytes alone keeps it, the most
	 * recently used, and forgets the rest. */
	struct gr_elf *e = gr_elfcache__get(ec, pid, m, NULL);
	CHECK(e != NULL);
	size_t mine = gr_elf__bytes(e);
	int n = gr_elfcache__trim(ec, mine, &freed);
	gr_elfcache__usage(ec, &u1);
	CHECK_EQ_INT(u1.read, 1);
	CHECK_EQ_INT(u1.bytes, mine);
	CHECK_EQ_INT(freed, u0.bytes - mine);
	CHECK_EQ_INT(u1.evicted, (uint64_t)n);
	CHECK_EQ_INT(u1.files, u0.files - n);
	CHECK(gr_elfcache__get(ec, pid, m, NULL) == e);
	/* Shed all: then it is queued and read again. */
	CHECK(gr_elfcache__trim(ec, 0, &freed) >= 1);
	gr_elfcache__usage(ec, &u2);
	CHECK_EQ_INT(u2.read, 0);
	CHECK_EQ_INT(u2.bytes, 0);
	int pending = -1;
	CHECK(gr_elfcache__get(ec, pid, m, &pending) == NULL);
	CHECK_EQ_INT(pending, 1);
	e = gr_elfcache__wait(ec, pid, m);
	CHECK(e != NULL);
	names_marker(e, m, addr);
	gr_elfcache__free(ec);
	gr_maps__free(&pm);
}

TEST(failure_remembered)
{
	struct gr_elfcache *ec = gr_elfcache__new(1);
	CHECK(ec != NULL);
	/* No such mapping in this process, no such file. */
	struct gr_mapping m = { .start = 0x1000, .end = 0x2000, .dev = 1,
				.ino = 999999999, .path = "/nonexistent/lib.so" };
	int pending = -1;
	struct gr_elfcache_usage u;
	CHECK(gr_elfcache__wait(ec, (uint32_t)getpid(), &m) == NULL);
	CHECK(gr_elfcache__get(ec, (uint32_t)getpid(), &m, &pending) == NULL);
	CHECK_EQ_INT(pending, 0);
	gr_elfcache__usage(ec, &u);
	CHECK_EQ_INT(u.files, 1);
	CHECK_EQ_INT(u.read, 0);
	gr_elfcache__free(ec);
}

TEST(background_then_stop)
{
	struct gr_maps pm;
	CHECK_EQ_INT(gr_maps__read(getpid(), &pm), 0);
	CHECK(pm.n > 0);
	struct gr_elfcache *ec = gr_elfcache__new(1);
	CHECK(ec != NULL);
	/* Queue every file this process maps; the loader reads them in
	 * the background.  Files shared by several mappings count once. */
	for (int i = 0; i < pm.n; i++)
		gr_elfcache__get(ec, (uint32_t)getpid(), &pm.m[i], NULL);
	int distinct = 0;
	struct gr_elfcache_usage u;
	for (int i = 0; i < pm.n; i++) {
		int dup = 0;
		for (int j = 0; j < i; j++)
			dup |= pm.m[j].dev == pm.m[i].dev &&
			       pm.m[j].ino == pm.m[i].ino;
		distinct += !dup;
	}
	gr_elfcache__usage(ec, &u);
	CHECK_EQ_INT(u.files, distinct);
	/* Waiting for the last makes it ready whatever the loader did. */
	(void)gr_elfcache__wait(ec, (uint32_t)getpid(), &pm.m[pm.n - 1]);
	int pending = -1;
	gr_elfcache__get(ec, (uint32_t)getpid(), &pm.m[pm.n - 1], &pending);
	CHECK_EQ_INT(pending, 0);
	/* Freed while the loader may still be busy: it stops cleanly and
	 * nothing leaks (ASan). */
	gr_elfcache__free(ec);
	gr_maps__free(&pm);
}

/* Stacks ask the cache they are given and never wait: a frame in a file
 * not read yet is "[file+0xoffset]", and named once the file is read,
 * from the same entry the CUDA family's naming would use. */
TEST(stacks_share_the_cache)
{
	struct gr_elfcache *ec = gr_elfcache__new(1);
	CHECK(ec != NULL);
	struct gr_stacks *s = gr_stacks__new(ec);
	CHECK(s != NULL);
	struct gr_pmaps pm = { 0 };
	uint64_t addr = (uint64_t)(uintptr_t)&gr_elfcache_test_marker;
	uint32_t pid = (uint32_t)getpid();
	char *f = gr_stacks__fold(s, pid, &pm, &addr, 1, NULL, 0);
	CHECK(f != NULL);
	CHECK(f && !strncmp(f, "[test_elfcache+0x", 17));
	free(f);
	const struct gr_mapping *m = gr_maps__find(&pm.maps, addr);
	CHECK(m != NULL);
	CHECK(m && gr_elfcache__wait(ec, pid, m) != NULL);
	f = gr_stacks__fold(s, pid, &pm, &addr, 1, NULL, 0);
	CHECK_EQ_STR(f, "gr_elfcache_test_marker");
	free(f);
	struct gr_elfcache_usage u;
	gr_elfcache__usage(ec, &u);
	CHECK_EQ_INT(u.files, 1);
	CHECK_EQ_INT(u.read, 1);
	/* Without a cache, user frames go unnamed. */
	gr_stacks__free(s);
	s = gr_stacks__new(NULL);
	CHECK(s != NULL);
	f = gr_stacks__fold(s, pid, &pm, &addr, 1, NULL, 0);
	CHECK(f && !strncmp(f, "[test_elfcache+0x", 17));
	free(f);
	gr_stacks__free(s);
	gr_pmaps__free(&pm);
	gr_elfcache__free(ec);
}

TEST_MAIN(
	TEST_ENTRY(wait_reads_and_names)
	TEST_ENTRY(trim_forgets_lru)
	TEST_ENTRY(failure_remembered)
	TEST_ENTRY(background_then_stop)
	TEST_ENTRY(stacks_share_the_cache)
	TEST_ENTRY(no_loader)
)
