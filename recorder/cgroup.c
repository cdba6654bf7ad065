/* cgroup.c - owns reading container ids and pod uids out of cgroup paths,
 * reading a process's cgroup path from /proc, and the cgroup v2 id to path
 * cache.
 *
 * Container runtimes and the kubelet name cgroups after what they hold, so
 * the path alone says which container and pod a process belongs to:
 *
 *	systemd driver	/kubepods.slice/kubepods-burstable.slice/
 *			  kubepods-burstable-pod<uid, '_' for '-'>.slice/
 *			  cri-containerd-<id>.scope
 *	cgroupfs driver	/kubepods/burstable/pod<uid>/<id>
 *	plain docker	/system.slice/docker-<id>.scope or /docker/<id>
 *
 * The systemd driver writes the uid's dashes as underscores because a dash
 * in a slice name means nesting to systemd.  Components are matched whole,
 * against exact shapes, so that a service or session named like a
 * container is not taken for one.
 *
 * bpf_get_current_cgroup_id() gives the kernfs id of the task's cgroup v2
 * directory, which is also its inode number in any cgroup2 mount, so the
 * cache walks the mount once and looks ids up by inode.  Cgroups come and
 * go with pods, so a miss walks again.  Kernfs hands out ids in rising
 * order, so an id above every id the last walk saw names a cgroup made
 * since, and is walked for at once: a pod's process that exits within
 * a second of another pod's start must still be named.  Any other miss
 * (a cgroup removed before it was seen, or an id that keeps missing) walks
 * at most once a second, so that a stream of events from an unknown id
 * cannot turn into a stream of walks.  Entries outlive their cgroups: the point is to name processes,
 * and their cgroups, that are already gone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder/cgroup.h"

#define ID_LEN 64		/* a container id: 64 lowercase hex digits */
#define UID_LEN 36		/* a pod uid: 8-4-4-4-12 */
#define MAX_DEPTH 16		/* deepest cgroup walked below the root */
#define REWALK_NS 1000000000LL	/* at most one walk on misses per second */
#define KEEP_GONE 65536		/* past this many entries, forget dead ones */

/* ---- Parsing paths ---- */

/* Whether s (n bytes) is all lowercase hex digits. */
static int is_lhex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int digit = s[i] >= '0' && s[i] <= '9';

		if (!digit && !(s[i] >= 'a' && s[i] <= 'f'))
			return 0;
	}
	return 1;
}

/* Copies s (n bytes) to id if it is a container id; returns whether. */
static int id_take(const char *s, size_t n, char id[65])
{
	if (n != ID_LEN || !is_lhex(s, n))
		return 0;
	memcpy(id, s, ID_LEN);
	id[ID_LEN] = '\0';
	return 1;
}

/* Copies s (n bytes) to pod, with dashes, if it is a uid whose groups are
 * separated by sep; returns whether. */
static int uid_take(const char *s, size_t n, char sep, char pod[37])
{
	char out[UID_LEN + 1];

	if (n != UID_LEN)
		return 0;
	for (size_t i = 0; i < UID_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != sep)
				return 0;
			out[i] = '-';
		} else if (is_lhex(s + i, 1)) {
			out[i] = s[i];
		} else {
			return 0;
		}
	}
	out[UID_LEN] = '\0';
	memcpy(pod, out, sizeof(out));
	return 1;
}

static int starts(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);

	return n >= k && memcmp(s, pre, k) == 0;
}

static int ends(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* Scope prefixes of container runtimes; a conmon scope holds CRI-O's or
 * podman's monitor process, which belongs to no container. */
static const struct {
	const char *prefix;
	int conmon;
} scopes[] = {
	{ "docker-", 0 },
	{ "cri-containerd-", 0 },
	{ "crio-conmon-", 1 },
	{ "crio-", 0 },
	{ "libpod-conmon-", 1 },
	{ "libpod-", 0 },
	{ "containerd-", 0 },
};

/* Matches "<id>.scope" after one of the prefixes above. */
static void scope_match(const char *s, size_t n, char id[65])
{
	if (!ends(s, n, ".scope"))
		return;
	n -= strlen(".scope");
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		size_t k = strlen(scopes[i].prefix);

		if (!starts(s, n, scopes[i].prefix))
			continue;
		if (n - k != ID_LEN || !is_lhex(s + k, ID_LEN))
			continue;
		if (scopes[i].conmon)
			id[0] = '\0';
		else
			id_take(s + k, ID_LEN, id);
		return;
	}
}

/* Matches the systemd driver's pod slice: an optional "<anything>-" (a
 * kubelet whose cgroup root is itself a slice, "kubelet-kubepods-..."),
 * "kubepods-", an optional QoS class, then "pod<uid>.slice". */
static void slice_match(const char *s, size_t n, char pod[37])
{
	static const char *const kinds[] = {
		"kubepods-", "kubepods-burstable-", "kubepods-besteffort-",
	};
	size_t k;

	if (!ends(s, n, ".slice"))
		return;
	n -= strlen(".slice");
	if (n < strlen("kubepods-pod") + UID_LEN)
		return;
	k = n - UID_LEN - strlen("pod");
	if (memcmp(s + k, "pod", 3) != 0)
		return;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t m = strlen(kinds[i]);

		if (!ends(s, k, kinds[i]))
			continue;
		if (k != m && s[k - m - 1] != '-')
			continue;
		uid_take(s + n - UID_LEN, UID_LEN, '_', pod);
		return;
	}
}

int gr_cgroup__parse(const char *path, char id[65], char pod[37])
{
	const char *p = path;

	id[0] = '\0';
	pod[0] = '\0';
	if (!p)
		return 0;
	while (*p) {
		const char *s;
		size_t n;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - s);
		if (n == 0)
			continue;
		if (id_take(s, n, id))
			continue;
		if (n == strlen("pod") + UID_LEN && starts(s, n, "pod") &&
		    uid_take(s + 3, UID_LEN, '-', pod))
			continue;
		scope_match(s, n, id);
		slice_match(s, n, pod);
	}
	return 0;
}

/* ---- /proc/PID/cgroup ---- */

/* Whether the comma-separated controller list ctl names name=systemd. */
static int has_systemd(const char *ctl)
{
	size_t k = strlen("name=systemd");

	while (*ctl) {
		size_t n = strcspn(ctl, ",");

		if (n == k && memcmp(ctl, "name=systemd", k) == 0)
			return 1;
		ctl += n;
		if (*ctl == ',')
			ctl++;
	}
	return 0;
}

static int set_once(char **slot, const char *s)
{
	if (*slot)
		return 0;
	*slot = strdup(s);
	return *slot ? 0 : -ENOMEM;
}

int gr_cgroup__of_pid(int pid, char *buf, size_t len)
{
	char name[64], *line = NULL;
	char *v2 = NULL, *sysd = NULL, *v1 = NULL;
	const char *pick;
	size_t cap = 0;
	ssize_t n;
	int err = 0, any = 0;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/cgroup", pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	/* Each line is "hierarchy:controllers:path"; the path may itself
	 * hold colons, so only the first two split. */
	while (!err && (n = getline(&line, &cap, f)) >= 0) {
		char *ctl, *path;

		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		ctl = strchr(line, ':');
		if (!ctl)
			continue;
		*ctl++ = '\0';
		path = strchr(ctl, ':');
		if (!path)
			continue;
		*path++ = '\0';
		if (path[0] != '/')
			continue;
		/* The kernel marks a v2 cgroup removed under a zombie. */
		if (ends(path, strlen(path), " (deleted)"))
			path[strlen(path) - strlen(" (deleted)")] = '\0';
		any = 1;
		if (strcmp(line, "0") == 0 && ctl[0] == '\0')
			err = set_once(&v2, path);
		else if (strcmp(path, "/") == 0)
			continue;
		else if (has_systemd(ctl))
			err = set_once(&sysd, path);
		else
			err = set_once(&v1, path);
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	if (!err && !any)
		err = -ENOENT;
	if (!err) {
		if (v2 && strcmp(v2, "/") != 0)
			pick = v2;
		else if (sysd)
			pick = sysd;
		else if (v1)
			pick = v1;
		else
			pick = "/";
		if (strlen(pick) >= len)
			err = -ENAMETOOLONG;
		else
			memcpy(buf, pick, strlen(pick) + 1);
	}
	free(v2);
	free(sysd);
	free(v1);
	return err;
}

/* ---- The cgroup v2 id cache ---- */

struct ent {
	uint64_t id;		/* inode of the cgroup's directory; 0: empty */
	uint32_t walk;		/* the last walk that saw it */
	char *path;		/* relative to the cgroup2 root, "/" for it */
};

struct gr_cgroups {
	char mnt[PATH_MAX];	/* where cgroup2 is mounted */
	char root[PATH_MAX];	/* the mount's root in the hierarchy, "" for
				 * "/": prefixed, so that paths read as
				 * /proc/PID/cgroup has them */
	dev_t dev;		/* the mount's device: walks stay on it */
	struct ent *tab;	/* open addressing, linear probing */
	size_t cap;		/* slots, a power of two (0 before a walk) */
	size_t n;		/* slots used */
	uint32_t walks;		/* walks begun */
	int64_t last_ns;	/* CLOCK_MONOTONIC of the last walk */
	uint64_t max_id;	/* the largest id any walk saw */
	uint64_t miss_id;	/* the last id a walk did not find */
	int err;		/* the current walk's first error, -errno */
};

static size_t slot_of(const struct gr_cgroups *c, uint64_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h ^ (h >> 29)) & (c->cap - 1);
}

static struct ent *ent_find(const struct gr_cgroups *c, uint64_t id)
{
	if (!c->cap)
		return NULL;
	for (size_t i = slot_of(c, id);; i = (i + 1) & (c->cap - 1)) {
		if (c->tab[i].id == id)
			return &c->tab[i];
		if (!c->tab[i].id)
			return NULL;
	}
}

/* Moves every entry seen by walk keep (or all, for keep 0) into a table of
 * cap slots; frees the paths of the rest.  Returns 0 or -ENOMEM. */
static int tab_rebuild(struct gr_cgroups *c, size_t cap, uint32_t keep)
{
	struct ent *old = c->tab;
	size_t ocap = c->cap;
	struct ent *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	c->tab = tab;
	c->cap = cap;
	c->n = 0;
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[i].id)
			continue;
		if (keep && old[i].walk != keep) {
			free(old[i].path);
			continue;
		}
		j = slot_of(c, old[i].id);
		while (tab[j].id)
			j = (j + 1) & (cap - 1);
		tab[j] = old[i];
		c->n++;
	}
	free(old);
	return 0;
}

/* Records that the cgroup at rel (below the mount) has inode id. */
static int ent_put(struct gr_cgroups *c, uint64_t id, const char *rel)
{
	char full[PATH_MAX];
	struct ent *e;
	size_t i;
	int len;

	len = snprintf(full, sizeof(full), "%s%s", c->root, rel);
	if (len < 0 || (size_t)len >= sizeof(full))
		return -ENAMETOOLONG;
	if (len == 0)
		strcpy(full, "/");
	e = ent_find(c, id);
	if (e) {
		/* Ids are not reused, but a path is rewritten if it changed. */
		if (strcmp(e->path, full) != 0) {
			char *p = strdup(full);

			if (!p)
				return -ENOMEM;
			free(e->path);
			e->path = p;
		}
		e->walk = c->walks;
		return 0;
	}
	if ((c->n + 1) * 2 > c->cap) {
		int err = tab_rebuild(c, c->cap ? c->cap * 2 : 256, 0);

		if (err)
			return err;
	}
	i = slot_of(c, id);
	while (c->tab[i].id)
		i = (i + 1) & (c->cap - 1);
	c->tab[i].path = strdup(full);
	if (!c->tab[i].path)
		return -ENOMEM;
	c->tab[i].id = id;
	c->tab[i].walk = c->walks;
	c->n++;
	return 0;
}

static void note_err(struct gr_cgroups *c, int err)
{
	if (err && !c->err)
		c->err = err;
}

/* Records every directory below dfd (which it takes and closes), whose
 * path below the mount is rel (rlen bytes; rel has PATH_MAX), at depth. */
static void walk_dir(struct gr_cgroups *c, int dfd, char *rel, size_t rlen,
		     int depth)
{
	struct dirent *de;
	DIR *d = fdopendir(dfd);

	if (!d) {
		note_err(c, -errno);
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		size_t k = strlen(de->d_name);
		int fd;

		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (rlen + 1 + k >= PATH_MAX)
			continue;
		/* A cgroup removed since readdir fails here, and is skipped. */
		fd = openat(dirfd(d), de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) != 0 || st.st_dev != c->dev) {
			close(fd);
			continue;
		}
		if ((uint64_t)st.st_ino > c->max_id)
			c->max_id = (uint64_t)st.st_ino;
		rel[rlen] = '/';
		memcpy(rel + rlen + 1, de->d_name, k + 1);
		note_err(c, ent_put(c, (uint64_t)st.st_ino, rel));
		if (depth + 1 < MAX_DEPTH)
			walk_dir(c, fd, rel, rlen + 1 + k, depth + 1);
		else
			close(fd);
		rel[rlen] = '\0';
	}
	closedir(d);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Walks the whole mount into the cache.  Returns 0 or the first -errno. */
static int cgroups__walk(struct gr_cgroups *c)
{
	char rel[PATH_MAX] = "";
	struct stat st;
	int fd;

	c->walks++;
	c->last_ns = now_ns();
	c->err = 0;
	fd = open(c->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	note_err(c, ent_put(c, (uint64_t)st.st_ino, rel));
	walk_dir(c, fd, rel, 0, 0);
	/* Forget the cgroups this walk did not see once they crowd the
	 * table: on a busy node pods come and go all day. */
	if (!c->err && c->n > KEEP_GONE)
		note_err(c, tab_rebuild(c, c->cap, c->walks));
	return c->err;
}

/* Decodes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Finds the cgroup2 mount: the first whose root is the hierarchy's, else
 * the first.  Returns 0, -ENOENT for none, or fopen(3)'s -errno. */
static int cgroups__find_mount(struct gr_cgroups *c)
{
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SRC
	 * SUPEROPTS": optional tags end at the lone dash. */
	while (found < 2 && getline(&line, &cap, f) >= 0) {
		char *sep = strstr(line, " - "), *save = NULL, *tok[5];
		int i;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		*sep = '\0';
		for (i = 0; i < 5; i++) {
			tok[i] = strtok_r(i ? NULL : line, " ", &save);
			if (!tok[i])
				break;
		}
		if (i < 5 || strlen(tok[3]) >= sizeof(c->root) ||
		    strlen(tok[4]) >= sizeof(c->mnt))
			continue;
		unescape(tok[3]);
		unescape(tok[4]);
		if (found && strcmp(tok[3], "/") != 0)
			continue;
		strcpy(c->mnt, tok[4]);
		strcpy(c->root, strcmp(tok[3], "/") == 0 ? "" : tok[3]);
		found = strcmp(tok[3], "/") == 0 ? 2 : 1;
	}
	free(line);
	fclose(f);
	return found ? 0 : -ENOENT;
}

struct gr_cgroups *gr_cgroups__new(void)
{
	struct gr_cgroups *c = calloc(1, sizeof(*c));
	struct stat st;
	int err;

	if (!c)
		return NULL;
	err = cgroups__find_mount(c);
	if (!err && stat(c->mnt, &st) != 0)
		err = -errno;
	if (err) {
		free(c);
		errno = -err;
		return NULL;
	}
	c->dev = st.st_dev;
	return c;
}

int gr_cgroups__path(struct gr_cgroups *c, uint64_t id, char *buf,
		     size_t len)
{
	struct ent *e;
	size_t n;

	if (!c || !id)
		return -ENOENT;
	e = ent_find(c, id);
	if (!e && (!c->walks || now_ns() - c->last_ns >= REWALK_NS ||
		   (id > c->max_id && id != c->miss_id))) {
		/* A partial walk still fills what it reached; a miss is a
		 * miss whatever the reason. */
		(void)cgroups__walk(c);
		e = ent_find(c, id);
		if (!e)
			c->miss_id = id;
	}
	if (!e)
		return -ENOENT;
	n = strlen(e->path);
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, e->path, n + 1);
	return 0;
}

uint32_t gr_cgroups__walks(const struct gr_cgroups *c)
{
	return c ? c->walks : 0;
}

void gr_cgroups__free(struct gr_cgroups *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		free(c->tab[i].path);
	free(c->tab);
	free(c);
}
