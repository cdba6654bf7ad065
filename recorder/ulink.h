/* ulink.h - uprobes attached in bulk and detached in parallel
 * (recorder/ulink.c says why). */
#ifndef GR_ULINK_H
#define GR_ULINK_H

#include <stdint.h>

struct bpf_link;
struct bpf_program;

/* One link: a libbpf link (a single uprobe, a raw tracepoint) or the fd
 * of a multi-uprobe link, and how many probes it holds. */
struct gr_ulink {
	struct bpf_link *l;
	int fd;
	int probes;
};

/* A growable set of links. */
struct gr_ulinks {
	struct gr_ulink *v;
	int n, cap;
	int probes; /* the sum of v[].probes */
};

/* The programs a family attaches at each entry point, as loaded for each
 * kind of link (the kernel ties a program to one kind at load): entry and
 * return for single links and for multi links, and one program for a
 * session, which runs at both.  Any but the single pair may be NULL. */
struct gr_uprobe_progs {
	struct bpf_program *entry, *ret;
	struct bpf_program *entry_multi, *ret_multi;
	struct bpf_program *session;
};

/* How a file's probes are attached, best first. */
enum gr_ulink_kind {
	GR_ULINK_SINGLE,  /* a link per probe */
	GR_ULINK_MULTI,   /* a link per file and direction (Linux 6.6) */
	GR_ULINK_SESSION, /* a link per file (Linux 6.13) */
};

/* Sets p's programs up for the best kind this kernel makes before the
 * object is loaded (probed once; in the environment
 * GPURECD_UPROBE_SESSION=0 rules sessions out and GPURECD_UPROBE_MULTI=0
 * both bulk kinds, for tests and a kernel whose links misbehave):
 * the programs of the other kinds are not loaded and their pointers in p
 * become NULL.  Returns the kind. */
enum gr_ulink_kind gr_ulink__prepare(struct gr_uprobe_progs *p);

/* Attaches p's programs at the n file offsets offs of path, offs[i] with
 * cookies[i], for one process (pid > 0) or all (-1), adding the links to
 * v: one session link, or two multi links, or two single links per
 * offset, as prepared.  An offset is attached in both directions or in
 * neither (a lone entry probe would leave frames that never pop).
 * Returns the number of offsets attached; *err gets -errno of the last
 * failure, or 0. */
int gr_ulinks__attach(struct gr_ulinks *v, const struct gr_uprobe_progs *p,
		      const char *path, const uint64_t *offs,
		      const uint64_t *cookies, int n, int pid, int *err);

/* Adds a libbpf link holding probes probes (0 for a tracepoint).
 * Returns 0 or -ENOMEM (then l is destroyed). */
int gr_ulinks__add(struct gr_ulinks *v, struct bpf_link *l, int probes);

/* Detaches the links added after the first n, one by one (a family's
 * attachment undone). */
void gr_ulinks__truncate(struct gr_ulinks *v, int n);

/* Detaches every link of the nsets sets, from several threads at once
 * (the kernel's synchronizations then overlap), and empties them.
 * Returns the number of links detached. */
int gr_ulinks__detach(struct gr_ulinks *const *sets, int nsets);

/* Detaches v's links in a background thread, so that the caller's loop
 * does not wait; v is emptied at once.  gr_ulinks__wait() waits for
 * every such thread to be gone (joined: the sandbox that follows it in
 * gpurecd counts the process's threads). */
void gr_ulinks__detach_later(struct gr_ulinks *v);
void gr_ulinks__wait(void);

#endif
