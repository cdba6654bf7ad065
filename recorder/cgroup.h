/* cgroup.h - which container and Kubernetes pod a process ran in, from its
 * cgroup path, and the path behind a cgroup v2 id.
 *
 * gpurecd tags each process with its cgroup.  A live process's path comes
 * from /proc/PID/cgroup (gr_cgroup__of_pid); a process that exited before
 * gpurecd could read /proc left only the id bpf_get_current_cgroup_id()
 * saw, which struct gr_cgroups turns back into a path.  Either way the
 * container id and pod uid are then read out of the path by
 * gr_cgroup__parse, with no calls to a container runtime or the API server.
 */
#ifndef GR_CGROUP_H
#define GR_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* Container id and Kubernetes pod uid parsed from a cgroup path (no API
 * calls).  Fills id (up to 64 hex chars + NUL, "" if none) and pod ("" if
 * none, in canonical 8-4-4-4-12 dashed form).  Returns 0.
 *
 * Understood: the systemd driver's kubepods[-CLASS]-pod<uid>.slice (the
 * uid's dashes written as underscores) and docker-, cri-containerd-,
 * crio-, libpod- and containerd-<id>.scope; the cgroupfs driver's
 * pod<uid> and bare <id> components.  crio-conmon- and libpod-conmon-
 * scopes hold the runtime's monitor, not the container, and give no id.
 * An id is exactly 64 lowercase hex digits, a uid 8-4-4-4-12 lowercase
 * hex digits; anything else is ignored.  When several components match,
 * the last one wins.  A NULL path gives two empty strings. */
int gr_cgroup__parse(const char *path, char id[65], char pod[37]);

/* The cgroup path of a live process from /proc/PID/cgroup: the cgroup v2
 * line ("0::/...") if it is not just "/", else the first v1 line whose
 * path is not "/" (prefer name=systemd), else "/".  Returns 0 and fills
 * buf, or -errno: fopen(3)'s (-ENOENT for no such process), -ENOENT for a
 * file with no cgroup lines, -ENAMETOOLONG when buf is too small. */
int gr_cgroup__of_pid(int pid, char *buf, size_t len);

/* Resolves cgroup v2 ids (what bpf_get_current_cgroup_id() returns: the
 * inode number of the cgroup's directory in the cgroup2 mount) to paths
 * relative to the cgroup2 root ("/kubepods.slice/..."), for processes that
 * exited before /proc could be read.  Not thread-safe: callers serialize. */
struct gr_cgroups;

/* Finds the cgroup2 mount in /proc/self/mountinfo (on hybrid hosts it is
 * /sys/fs/cgroup/unified, on pure v2 /sys/fs/cgroup).  Nothing is walked
 * until the first lookup.  Returns NULL with errno set on failure: ENOENT
 * when no cgroup2 is mounted (cgroup ids mean nothing then), else
 * fopen(3)'s, stat(2)'s or ENOMEM. */
struct gr_cgroups *gr_cgroups__new(void);

/* Fills buf with the path of cgroup id.  Paths are cached, and kept after
 * the cgroup is removed; a miss re-walks the mount (16 levels deep at
 * most): at once for an id above every id seen (a cgroup made since the
 * last walk), else no more than once a second.  Returns 0, -ENOENT for an
 * id not found, or -ENAMETOOLONG when buf is too small. */
int gr_cgroups__path(struct gr_cgroups *c, uint64_t id, char *buf,
		     size_t len);

/* How many walks of the mount c has begun (for tests). */
uint32_t gr_cgroups__walks(const struct gr_cgroups *c);

/* Frees c; NULL is a no-op. */
void gr_cgroups__free(struct gr_cgroups *c);

#endif
