/* hmap.h - a small open-addressing hash map: u64 keys to pointers.
 *
 * For the users that are not on a hot path (the Perfetto exporter's
 * tracks, and whatever else needs "this id, seen before?" once per row
 * group rather than once per event).  The recorder keys its tables by two
 * words ((dev, inode) of a file, (pid, handle) of what a process made) and
 * looks them up per event: recorder/keymap.h, the same probing scheme with
 * 128-bit keys and its entries walked in place.  Linear probing in a power-of-two table kept at most half
 * full, so a miss ends within a few slots.  Deletion shifts the entries
 * after the hole back (no tombstones), so probe chains stay exact and a
 * long run of put/del never degrades lookups.
 *
 * Values are non-NULL pointers: NULL is "absent" (an integer value is
 * stored as (void *)(uintptr_t)(v + 1) or similar).  A zeroed struct is an
 * empty map; nothing is allocated before the first put.
 */
#ifndef GR_COMMON_HMAP_H
#define GR_COMMON_HMAP_H

#include <stddef.h>
#include <stdint.h>

#define GR_HMAP_MIN_CAP 16	/* slots of the first table */

struct gr_hmap_slot {
	uint64_t key;
	void *val;		/* NULL: the slot is empty */
};

struct gr_hmap {
	struct gr_hmap_slot *slots;
	size_t cap;		/* 0, or a power of two >= GR_HMAP_MIN_CAP */
	size_t n;		/* entries; n <= cap / 2 */
};

/* The hash of @key; its low bits pick the home slot (tests use it to make
 * keys collide). */
uint64_t gr_hmap__hash(uint64_t key);

/* Returns the value of @key, or NULL when absent. */
void *gr_hmap__get(const struct gr_hmap *m, uint64_t key);

/* Sets @key to @val (replacing any value it had).  Returns 0, -EINVAL for
 * a NULL @val, or -ENOMEM (the map is unchanged). */
int gr_hmap__put(struct gr_hmap *m, uint64_t key, void *val);

/* Removes @key.  Returns the value it had, or NULL when absent. */
void *gr_hmap__del(struct gr_hmap *m, uint64_t key);

/* Steps an iteration: start with *@pos = 0; each call that returns 1 sets
 * *@key and *@val (either may be NULL) to the next entry, in slot order;
 * 0 means done.  The map must not change during the iteration. */
int gr_hmap__next(const struct gr_hmap *m, size_t *pos, uint64_t *key,
		  void **val);

/* Frees the table; the map is empty again and may be reused. */
void gr_hmap__free(struct gr_hmap *m);

#endif
