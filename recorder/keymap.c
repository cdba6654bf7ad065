/* keymap.c - 128-bit keys to pointers; see keymap.h. */
#include <stdlib.h>

#include "recorder/keymap.h"

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

void *gr_keymap__get(const struct gr_keymap *m, uint64_t k1, uint64_t k2)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix(k1, k2) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].v)
			return NULL;
		if (m->e[i].k1 == k1 && m->e[i].k2 == k2)
			return m->e[i].v;
	}
}

/* Doubles the table (or makes the first); returns 0 or -1. */
static int grow(struct gr_keymap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256;
	struct gr_kment *e = calloc(cap, sizeof(*e));
	if (!e)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->e[i].v)
			continue;
		size_t j = mix(m->e[i].k1, m->e[i].k2) & (cap - 1);
		while (e[j].v)
			j = (j + 1) & (cap - 1);
		e[j] = m->e[i];
	}
	free(m->e);
	m->e = e;
	m->cap = cap;
	return 0;
}

void *gr_keymap__put(struct gr_keymap *m, uint64_t k1, uint64_t k2, void *v)
{
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return v;
	size_t i = mix(k1, k2) & (m->cap - 1);
	for (; m->e[i].v; i = (i + 1) & (m->cap - 1))
		if (m->e[i].k1 == k1 && m->e[i].k2 == k2) {
			void *old = m->e[i].v;
			m->e[i].v = v;
			return old;
		}
	m->e[i] = (struct gr_kment){ k1, k2, v };
	m->n++;
	return NULL;
}

void *gr_keymap__del(struct gr_keymap *m, uint64_t k1, uint64_t k2)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1, i = mix(k1, k2) & mask;
	for (;; i = (i + 1) & mask) {
		if (!m->e[i].v)
			return NULL;
		if (m->e[i].k1 == k1 && m->e[i].k2 == k2)
			break;
	}
	void *old = m->e[i].v;
	for (size_t j = (i + 1) & mask; m->e[j].v; j = (j + 1) & mask) {
		size_t h = mix(m->e[j].k1, m->e[j].k2) & mask;
		/* j may move to the hole i unless its home h lies in (i, j]. */
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		m->e[i] = m->e[j];
		i = j;
	}
	m->e[i] = (struct gr_kment){ 0 };
	m->n--;
	return old;
}

void gr_keymap__free(struct gr_keymap *m)
{
	free(m->e);
	*m = (struct gr_keymap){ 0 };
}
