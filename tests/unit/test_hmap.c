/* test_hmap.c - common/hmap.h and common/vec.h: exact behaviours.
 *
 * Collisions are made, not hoped for: keys are picked by their home slot
 * in the first table (GR_HMAP_MIN_CAP slots), found through
 * gr_hmap__hash, so a chain of entries sharing one home, one that wraps
 * past the table's end, and deletion from the middle of a chain are each
 * exercised on purpose.
 */
#include "tests/unit/test.h"
#include "common/hmap.h"
#include "common/vec.h"

#include <errno.h>

#define V(x) ((void *)(uintptr_t)(x))

/* Fills @out with @n keys whose home slot in a table of @cap slots is
 * @slot, the smallest such keys from 1 up. */
static void keys_at(size_t slot, size_t cap, uint64_t *out, int n)
{
	for (uint64_t k = 1; n > 0; k++)
		if ((gr_hmap__hash(k) & (cap - 1)) == slot) {
			*out++ = k;
			n--;
		}
}

/* The slot that holds @key, or -1. */
static long slot_of(const struct gr_hmap *m, uint64_t key)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].val && m->slots[i].key == key)
			return (long)i;
	return -1;
}

TEST(empty)
{
	struct gr_hmap m = { 0 };
	size_t pos = 0;

	CHECK(gr_hmap__get(&m, 0) == NULL);
	CHECK(gr_hmap__del(&m, 7) == NULL);
	CHECK_EQ_INT(gr_hmap__next(&m, &pos, NULL, NULL), 0);
	CHECK_EQ_INT(gr_hmap__put(&m, 1, NULL), -EINVAL);
	CHECK_EQ_INT(m.n, 0);
	CHECK_EQ_INT(m.cap, 0);
	gr_hmap__free(&m);
}

TEST(put_get_replace)
{
	struct gr_hmap m = { 0 };

	CHECK_EQ_INT(gr_hmap__put(&m, 0, V(10)), 0);	/* key 0 is a key */
	CHECK_EQ_INT(gr_hmap__put(&m, UINT64_MAX, V(20)), 0);
	CHECK_EQ_INT(m.n, 2);
	CHECK_EQ_INT(m.cap, GR_HMAP_MIN_CAP);
	CHECK(gr_hmap__get(&m, 0) == V(10));
	CHECK(gr_hmap__get(&m, UINT64_MAX) == V(20));
	CHECK(gr_hmap__get(&m, 1) == NULL);
	CHECK_EQ_INT(gr_hmap__put(&m, 0, V(11)), 0);
	CHECK_EQ_INT(m.n, 2);
	CHECK(gr_hmap__get(&m, 0) == V(11));
	gr_hmap__free(&m);
	CHECK(m.slots == NULL);
	CHECK_EQ_INT(m.n, 0);
}

TEST(collisions)
{
	struct gr_hmap m = { 0 };
	uint64_t k[4];

	keys_at(5, GR_HMAP_MIN_CAP, k, 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(gr_hmap__put(&m, k[i], V(100 + i)), 0);
	CHECK_EQ_INT(m.cap, GR_HMAP_MIN_CAP);
	/* One home: they sit in slots 5, 6, 7, 8 in the order put. */
	for (int i = 0; i < 4; i++) {
		CHECK_EQ_INT(slot_of(&m, k[i]), 5 + i);
		CHECK(gr_hmap__get(&m, k[i]) == V(100 + i));
	}
	gr_hmap__free(&m);
}

TEST(delete_with_probing)
{
	struct gr_hmap m = { 0 };
	uint64_t a[3], b[1];

	/* a0 a1 a2 share home 14; b0's home is 15, so it probes to 1:
	 * slots 14, 15, 0 hold the a's, slot 1 holds b0 (a wrap). */
	keys_at(14, GR_HMAP_MIN_CAP, a, 3);
	keys_at(15, GR_HMAP_MIN_CAP, b, 1);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(gr_hmap__put(&m, a[i], V(1 + i)), 0);
	CHECK_EQ_INT(gr_hmap__put(&m, b[0], V(9)), 0);
	CHECK_EQ_INT(slot_of(&m, a[2]), 0);
	CHECK_EQ_INT(slot_of(&m, b[0]), 1);
	/* Deleting a0 shifts a1, a2 back and b0 with them (its home 15 is
	 * not in the hole..j range once the hole reaches 0). */
	CHECK(gr_hmap__del(&m, a[0]) == V(1));
	CHECK_EQ_INT(m.n, 3);
	CHECK_EQ_INT(slot_of(&m, a[1]), 14);
	CHECK_EQ_INT(slot_of(&m, a[2]), 15);
	CHECK_EQ_INT(slot_of(&m, b[0]), 0);
	CHECK(gr_hmap__get(&m, a[0]) == NULL);
	CHECK(gr_hmap__get(&m, b[0]) == V(9));
	/* Deleting from the middle keeps the rest of the chain found. */
	CHECK(gr_hmap__del(&m, a[2]) == V(3));
	CHECK(gr_hmap__get(&m, a[1]) == V(2));
	CHECK(gr_hmap__get(&m, b[0]) == V(9));
	CHECK_EQ_INT(slot_of(&m, b[0]), 15);	/* now at its home */
	CHECK(gr_hmap__del(&m, a[2]) == NULL);	/* twice: absent */
	CHECK_EQ_INT(m.n, 2);
	gr_hmap__free(&m);
}

TEST(delete_keeps_entry_at_home)
{
	struct gr_hmap m = { 0 };
	uint64_t a[2], d[1];

	/* a0 at its home 3, d0 at its home 4, a1 (home 3) probed to 5.
	 * Deleting a0: d0 must stay (moved to 3 it would sit before its
	 * home, lost to lookups), a1 moves back into the hole at 3. */
	keys_at(3, GR_HMAP_MIN_CAP, a, 2);
	keys_at(4, GR_HMAP_MIN_CAP, d, 1);
	CHECK_EQ_INT(gr_hmap__put(&m, a[0], V(1)), 0);
	CHECK_EQ_INT(gr_hmap__put(&m, d[0], V(2)), 0);
	CHECK_EQ_INT(gr_hmap__put(&m, a[1], V(3)), 0);
	CHECK_EQ_INT(slot_of(&m, a[1]), 5);
	CHECK(gr_hmap__del(&m, a[0]) == V(1));
	CHECK_EQ_INT(slot_of(&m, d[0]), 4);
	CHECK_EQ_INT(slot_of(&m, a[1]), 3);
	CHECK(gr_hmap__get(&m, d[0]) == V(2));
	CHECK(gr_hmap__get(&m, a[1]) == V(3));
	gr_hmap__free(&m);
}

TEST(growth)
{
	struct gr_hmap m = { 0 };

	for (uint64_t k = 0; k < 8; k++)
		CHECK_EQ_INT(gr_hmap__put(&m, k * 1000, V(k + 1)), 0);
	CHECK_EQ_INT(m.cap, 16);	/* 8 of 16: half full, no more */
	CHECK_EQ_INT(gr_hmap__put(&m, 8000, V(9)), 0);
	CHECK_EQ_INT(m.cap, 32);
	for (uint64_t k = 9; k < 5000; k++)
		CHECK_EQ_INT(gr_hmap__put(&m, k * 1000, V(k + 1)), 0);
	CHECK_EQ_INT(m.n, 5000);
	CHECK_EQ_INT(m.cap, 16384);	/* 5000 > 4096 = 8192 / 2 */
	for (uint64_t k = 0; k < 5000; k++)
		CHECK(gr_hmap__get(&m, k * 1000) == V(k + 1));
	CHECK(gr_hmap__get(&m, 1) == NULL);
	/* Delete every other key: the rest all still found. */
	for (uint64_t k = 0; k < 5000; k += 2)
		CHECK(gr_hmap__del(&m, k * 1000) == V(k + 1));
	CHECK_EQ_INT(m.n, 2500);
	for (uint64_t k = 0; k < 5000; k++)
		CHECK(gr_hmap__get(&m, k * 1000) == (k & 1 ? V(k + 1) : NULL));
	gr_hmap__free(&m);
}

TEST(iteration)
{
	struct gr_hmap m = { 0 };
	static unsigned char seen[300];
	uint64_t key, sum = 0;
	size_t pos = 0;
	void *val;
	int count = 0;

	for (uint64_t k = 0; k < 300; k++)
		CHECK_EQ_INT(gr_hmap__put(&m, k, V(k + 1)), 0);
	for (uint64_t k = 0; k < 300; k += 3)
		CHECK(gr_hmap__del(&m, k) != NULL);
	while (gr_hmap__next(&m, &pos, &key, &val)) {
		CHECK(key < 300 && key % 3 != 0);
		CHECK(val == V(key + 1));
		CHECK_EQ_INT(seen[key]++, 0);
		sum += key;
		count++;
	}
	CHECK_EQ_INT(count, 200);
	CHECK_EQ_INT(count, m.n);
	/* 0..299 sum to 44850; the multiples of 3 to 14850. */
	CHECK_EQ_INT(sum, 30000);
	CHECK_EQ_INT(gr_hmap__next(&m, &pos, &key, &val), 0);
	gr_hmap__free(&m);
}

TEST(vec)
{
	struct pt {
		int x, y;
	};
	GR_VEC(struct pt) v = { 0 };
	struct pt *p;

	for (int i = 0; i < 100; i++) {
		CHECK((p = gr_vec__push(&v)) != NULL);
		CHECK_EQ_INT(p->x, 0);	/* zeroed */
		CHECK_EQ_INT(p->y, 0);
		p->x = i;
		p->y = -i;
	}
	CHECK_EQ_INT(v.n, 100);
	CHECK_EQ_INT(v.cap, 128);	/* 16, 32, 64, 128 */
	for (int i = 0; i < 100; i++) {
		CHECK_EQ_INT(v.v[i].x, i);
		CHECK_EQ_INT(v.v[i].y, -i);
	}
	gr_vec__free(&v);
	CHECK(v.v == NULL);
	CHECK_EQ_INT(v.n, 0);
	CHECK_EQ_INT(v.cap, 0);
}

TEST_MAIN(
	TEST_ENTRY(empty)
	TEST_ENTRY(put_get_replace)
	TEST_ENTRY(collisions)
	TEST_ENTRY(delete_with_probing)
	TEST_ENTRY(delete_keeps_entry_at_home)
	TEST_ENTRY(growth)
	TEST_ENTRY(iteration)
	TEST_ENTRY(vec)
)
