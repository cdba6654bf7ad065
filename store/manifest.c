/* manifest.c - the data directory's append-only MANIFEST.
 *
 * One line per sealed segment ("seal NAME sha256=… prev=… start=… end=…
 * events=… bytes=… host=…") and one per segment retention deleted
 * ("delete NAME reason=… at=…").  Lines are only ever appended, each with
 * one write(2) followed by fsync(2), so a crash leaves at worst a torn last
 * line, which readers count as bad and otherwise ignore, and which the
 * next writer cuts off before it appends (writer.c,
 * manifest_repair_tail).  The manifest is the second copy of the hash
 * chain (the first is each segment's prev_sha256), which lets `gpurec
 * verify` notice a deleted or reordered segment as well as a changed one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

static int field(const char *line, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *p = line;
	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			p += kl + 1;
			size_t n = strcspn(p, " \n");
			if (n >= len)
				return -1;
			memcpy(out, p, n);
			out[n] = 0;
			return 0;
		}
		p += kl;
	}
	return -1;
}

static int field_i64(const char *line, const char *key, int64_t *v)
{
	char buf[32], *end;
	if (field(line, key, buf, sizeof(buf)))
		return -1;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	return errno || *end ? -1 : 0;
}

int gr_manifest__read(const char *dir, struct gr_manifest *m)
{
	char path[4096], line[2048];
	FILE *f;
	int lineno = 0;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%s/%s", dir, GR_MANIFEST);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		char name[96];
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		int bad = !strchr(line, '\n') ||
			  sscanf(line, "%*s %95s", name) != 1;
		if (!bad && strncmp(line, "seal ", 5) == 0) {
			struct gr_manifest_entry e = { 0 };
			int64_t ev, by;
			snprintf(e.name, sizeof(e.name), "%s", name);
			if (field(line, "sha256", e.sha256, sizeof(e.sha256)) ||
			    field(line, "prev", e.prev, sizeof(e.prev)) ||
			    field_i64(line, "start", &e.start_ts) ||
			    field_i64(line, "end", &e.end_ts) ||
			    field_i64(line, "events", &ev) ||
			    field_i64(line, "bytes", &by) ||
			    field(line, "host", e.host, sizeof(e.host))) {
				bad = 1;
			} else {
				e.events = (uint64_t)ev;
				e.bytes = (uint64_t)by;
				void *p = realloc(m->e, (size_t)(m->n + 1) *
							       sizeof(*m->e));
				if (!p) {
					fclose(f);
					gr_manifest__free(m);
					return -ENOMEM;
				}
				m->e = p;
				m->e[m->n++] = e;
			}
		} else if (!bad && strncmp(line, "delete ", 7) == 0) {
			for (int i = 0; i < m->n; i++)
				if (strcmp(m->e[i].name, name) == 0)
					m->e[i].deleted = 1;
		} else {
			bad = 1;
		}
		if (bad && !m->bad_lines++)
			m->first_bad_line = lineno;
	}
	fclose(f);
	return 0;
}

void gr_manifest__free(struct gr_manifest *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

const struct gr_manifest_entry *
gr_manifest__find(const struct gr_manifest *m, const char *name)
{
	/* The last seal line wins; a name is sealed once in practice. */
	for (int i = m->n - 1; i >= 0; i--)
		if (strcmp(m->e[i].name, name) == 0)
			return &m->e[i];
	return NULL;
}
