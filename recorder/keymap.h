/* keymap.h - a small open-addressing hash map from 128-bit keys to
 * pointers: (dev, ino) for files, (pid, handle) for what a process made.
 *
 * Values are non-NULL (NULL marks an empty slot).  Linear probing; a
 * delete shifts the rest of its run back, so there are no tombstones and
 * iterating e[0..cap) sees every live entry once.  Not thread-safe.
 * common/hmap.h is the same scheme with one-word keys, for gpurec's
 * users off the hot path.
 */
#ifndef GR_KEYMAP_H
#define GR_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

struct gr_kment {
	uint64_t k1, k2;
	void *v;	/* NULL: an empty slot */
};

struct gr_keymap {
	struct gr_kment *e;
	size_t cap, n;	/* cap: 0 or a power of 2 */
};

/* The value of (k1, k2), or NULL. */
void *gr_keymap__get(const struct gr_keymap *m, uint64_t k1, uint64_t k2);

/* Sets (k1, k2) to v (non-NULL), returning the old value or NULL.
 * Returns v itself on allocation failure, so callers can tell. */
void *gr_keymap__put(struct gr_keymap *m, uint64_t k1, uint64_t k2, void *v);

/* Removes (k1, k2), returning its value (NULL if absent). */
void *gr_keymap__del(struct gr_keymap *m, uint64_t k1, uint64_t k2);

/* Frees the table (not the values) and empties m. */
void gr_keymap__free(struct gr_keymap *m);

#endif
