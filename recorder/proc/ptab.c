/* ptab.c - the pid-keyed process table (ptab.h). */
#include <errno.h>
#include <stdlib.h>

#include "recorder/proc/ptab.h"

/* nb is a power of 2: a mask, not a division, for a lookup made for
 * every CUDA call recorded (gr_proc__track) and every off-CPU stack. */
static size_t bucket(size_t nb, uint32_t pid)
{
	return pid & (nb - 1);
}

struct gr_pinfo *gr_ptab__get(const struct gr_ptab *t, uint32_t pid)
{
	if (!t->nb)
		return NULL;
	for (struct gr_pinfo *p = t->b[bucket(t->nb, pid)]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

/* Inserts p (its pid not present).  Returns 0 or -ENOMEM. */
static int ptab_add(struct gr_ptab *t, struct gr_pinfo *p)
{
	if ((t->n + 1) > t->nb) {
		size_t nb = t->nb ? t->nb * 2 : 1024;
		struct gr_pinfo **b = calloc(nb, sizeof(*b));
		if (!b)
			return -ENOMEM;
		for (size_t i = 0; i < t->nb; i++)
			for (struct gr_pinfo *q = t->b[i], *nx; q; q = nx) {
				nx = q->next;
				q->next = b[bucket(nb, q->pid)];
				b[bucket(nb, q->pid)] = q;
			}
		free(t->b);
		t->b = b;
		t->nb = nb;
	}
	p->next = t->b[bucket(t->nb, p->pid)];
	t->b[bucket(t->nb, p->pid)] = p;
	t->n++;
	return 0;
}

struct gr_pinfo *gr_ptab__get_or_add(struct gr_ptab *t, uint32_t pid)
{
	struct gr_pinfo *p = gr_ptab__get(t, pid);
	if (p)
		return p;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	if (ptab_add(t, p)) {
		free(p);
		return NULL;
	}
	return p;
}

static void pinfo_free(struct gr_pinfo *p)
{
	if (!p)
		return;
	free(p->exe);
	free(p->cmdline);
	free(p->cgroup);
	gr_pmaps__free(&p->pm);
	free(p);
}

void gr_ptab__forget(struct gr_ptab *t, struct gr_pinfo *p)
{
	for (struct gr_pinfo **pp = &t->b[bucket(t->nb, p->pid)]; *pp;
	     pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			t->n--;
			break;
		}
	pinfo_free(p);
}

void gr_ptab__clear(struct gr_ptab *t)
{
	for (size_t i = 0; i < t->nb; i++)
		for (struct gr_pinfo *p = t->b[i], *nx; p; p = nx) {
			nx = p->next;
			pinfo_free(p);
		}
	free(t->b);
	t->b = NULL;
	t->nb = t->n = 0;
}
