/* hmap.c - a small open-addressing hash map: u64 keys to pointers (the
 * contract and the design are in hmap.h).
 */
#include "common/hmap.h"

#include <errno.h>
#include <stdlib.h>

uint64_t gr_hmap__hash(uint64_t key)
{
	/* splitmix64's finalizer: consecutive ids (pids, indexes) spread
	 * over the whole table. */
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ull;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebull;
	return key ^ (key >> 31);
}

/* The slot holding @key, or the empty slot that ends its probe chain. */
static size_t find(const struct gr_hmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = gr_hmap__hash(key) & mask;

	while (m->slots[i].val && m->slots[i].key != key)
		i = (i + 1) & mask;
	return i;
}

void *gr_hmap__get(const struct gr_hmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	return m->slots[find(m, key)].val;
}

/* Moves every entry into a table of @cap slots.  Returns 0 or -ENOMEM. */
static int resize(struct gr_hmap *m, size_t cap)
{
	struct gr_hmap old = *m;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].val)
			m->slots[find(m, old.slots[i].key)] = old.slots[i];
	free(old.slots);
	return 0;
}

int gr_hmap__put(struct gr_hmap *m, uint64_t key, void *val)
{
	size_t i;

	if (!val)
		return -EINVAL;
	if (2 * (m->n + 1) > m->cap &&
	    resize(m, m->cap ? 2 * m->cap : GR_HMAP_MIN_CAP))
		return -ENOMEM;
	i = find(m, key);
	if (!m->slots[i].val)
		m->n++;
	m->slots[i].key = key;
	m->slots[i].val = val;
	return 0;
}

void *gr_hmap__del(struct gr_hmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, hole, j;
	void *val;

	if (!m->cap || !(val = m->slots[hole = find(m, key)].val))
		return NULL;
	/* Close the hole: an entry after it moves back into it unless its
	 * home slot lies cyclically in (hole, j], where it is found anyway
	 * and moving it would put it before its home. */
	for (j = (hole + 1) & mask; m->slots[j].val; j = (j + 1) & mask) {
		size_t home = gr_hmap__hash(m->slots[j].key) & mask;

		if (hole <= j ? hole < home && home <= j :
				hole < home || home <= j)
			continue;
		m->slots[hole] = m->slots[j];
		hole = j;
	}
	m->slots[hole].val = NULL;
	m->slots[hole].key = 0;
	m->n--;
	return val;
}

int gr_hmap__next(const struct gr_hmap *m, size_t *pos, uint64_t *key,
		  void **val)
{
	for (; *pos < m->cap; ++*pos) {
		const struct gr_hmap_slot *s = &m->slots[*pos];

		if (!s->val)
			continue;
		if (key)
			*key = s->key;
		if (val)
			*val = s->val;
		++*pos;
		return 1;
	}
	return 0;
}

void gr_hmap__free(struct gr_hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}
