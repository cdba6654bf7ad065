/* vec.h - a growable array of any element type.
 *
 *	GR_VEC(struct thing) things = { 0 };
 *	struct thing *t = gr_vec__push(&things);   (NULL: out of memory)
 *	...things.v[i] for i < things.n...
 *	gr_vec__free(&things);
 *
 * The capacity doubles from GR_VEC_MIN_CAP, so n pushes cost O(n) copies
 * in all.  A push that fails leaves the vector as it was.  Pointers into
 * v[] move on a push: keep indexes, not pointers, across pushes.
 */
#ifndef GR_COMMON_VEC_H
#define GR_COMMON_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GR_VEC_MIN_CAP 16

#define GR_VEC(type)							\
	struct {							\
		type *v;						\
		uint32_t n, cap;					\
	}

/* Makes room for one more element of @size bytes in *@v, of which *@cap
 * are allocated and @n used.  Returns 0, or -1 (nothing changed) when out
 * of memory or past UINT32_MAX elements. */
static inline int gr_vec__reserve_(void **v, uint32_t n, uint32_t *cap,
				   size_t size)
{
	uint32_t c;
	void *p;

	if (n < *cap)
		return 0;
	if (*cap > UINT32_MAX / 2)
		return -1;
	c = *cap ? 2 * *cap : GR_VEC_MIN_CAP;
	if (!(p = realloc(*v, (size_t)c * size)))
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* Appends one zeroed element to *@vec.  Returns a pointer to it, or NULL
 * when out of memory. */
#define gr_vec__push(vec)						\
	(gr_vec__reserve_((void **)&(vec)->v, (vec)->n, &(vec)->cap,	\
			  sizeof(*(vec)->v)) ? NULL :			\
	 (typeof((vec)->v))memset(&(vec)->v[(vec)->n++], 0,		\
				  sizeof(*(vec)->v)))

/* Frees the elements' array (not what they point to); the vector is
 * empty again. */
#define gr_vec__free(vec)						\
	do {								\
		free((vec)->v);						\
		(vec)->v = NULL;					\
		(vec)->n = (vec)->cap = 0;				\
	} while (0)

#endif
