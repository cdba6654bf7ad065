/* xid.c - /dev/kmsg records and the NVIDIA driver's Xid lines in them.
 *
 * The driver prints (src/nvidia/src/kernel/gpu/rc/kernel_rc.c in
 * open-gpu-kernel-modules) "NVRM: Xid (PCI:%04x:%02x:%02x): %d, pid=%s,
 * name=%s, %s", with " GPU-I:%02u" and " GPU-CI:%02u" inside the
 * parenthesis when the Xid is attributed to a MIG instance, and pid
 * "'<unknown>'" and name "<unknown>" when no process is known.  Older
 * drivers left out the name, or pid and name both, and before them the
 * "PCI:" (NVIDIA's Xid documentation: "NVRM: Xid (0000:03:00): 14, Channel
 * 00000001").  The catalog itself (gr_xids[]) is generated: gen-xid.py.
 */
#include "recorder/gpu/xid.h"

#include <string.h>

/* Reads decimal digits at *p (before @end) into *v; at least one, at most
 * @max in value.  Returns 0 and advances *p, or -1. */
static int digits(const char **p, const char *end, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (x > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	*p = s;
	return 0;
}

int gr_kmsg__split(const char *rec, size_t n, uint64_t *seq, uint64_t *ts_us,
		   const char **text)
{
	const char *p = rec, *end = rec + n, *semi, *nl;
	uint64_t prio, s, ts;

	if (!rec || digits(&p, end, UINT32_MAX, &prio) || p >= end ||
	    *p++ != ',' || digits(&p, end, UINT64_MAX, &s) || p >= end ||
	    *p++ != ',' || digits(&p, end, UINT64_MAX, &ts) || p >= end ||
	    (*p != ',' && *p != ';'))
		return -1;
	/* The flags, and whatever fields a newer kernel adds, up to ';'. */
	semi = memchr(p, ';', (size_t)(end - p));
	if (!semi || memchr(p, '\n', (size_t)(semi - p)))
		return -1;
	p = semi + 1;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl)
		nl = end;
	if (nl - p > INT32_MAX)
		return -1;
	*seq = s;
	*ts_us = ts;
	*text = p;
	return (int)(nl - p);
}

static int starts(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

static int hexdigit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* Inside the parenthesis: "[PCI:]DDDD:BB:DD[ GPU-I:N[ GPU-CI:N]]". */
static int parse_gpu(const char **pp, const char *end, struct gr_xid_line *out)
{
	const char *p = *pp, *a;
	uint64_t v;
	int colons = 0;

	if (starts(p, end, "PCI:"))
		p += 4;
	for (a = p; p < end && (hexdigit(*p) || *p == ':' || *p == '.'); p++)
		colons += *p == ':';
	if (p == a || !colons || (size_t)(p - a) >= sizeof(out->pci))
		return -1;
	memcpy(out->pci, a, (size_t)(p - a));
	out->pci[p - a] = '\0';
	while (p < end && *p == ' ') {
		p++;
		if (starts(p, end, "GPU-I:")) {
			p += 6;
			if (digits(&p, end, 9999, &v))
				return -1;
			out->gi = (int)v;
		} else if (starts(p, end, "GPU-CI:")) {
			p += 7;
			if (digits(&p, end, 9999, &v))
				return -1;
			out->ci = (int)v;
		} else {
			/* An attribution this parser does not know: skipped. */
			while (p < end && *p != ' ' && *p != ')')
				p++;
		}
	}
	if (p >= end || *p != ')')
		return -1;
	*pp = p + 1;
	return 0;
}

/* Past ", " (or a lone ',' ending the text).  Returns 0, or -1 if neither
 * is at @p and the text goes on. */
static int comma(const char **pp, const char *end)
{
	const char *p = *pp;

	if (p == end)
		return 0;
	if (*p != ',')
		return -1;
	p++;
	if (p < end && *p == ' ')
		p++;
	*pp = p;
	return 0;
}

int gr_xid__parse_kmsg(const char *line, struct gr_xid_line *out)
{
	static const char tag[] = "NVRM: Xid (";
	const char *p, *end;
	uint64_t v;

	if (!line || !out)
		return 0;
	memset(out, 0, sizeof(*out));
	out->gi = out->ci = out->pid = -1;
	end = line + strcspn(line, "\n");
	out->msg = end;
	p = memmem(line, (size_t)(end - line), tag, sizeof(tag) - 1);
	if (!p)
		return 0;
	p += sizeof(tag) - 1;

	if (parse_gpu(&p, end, out) || !starts(p, end, ": "))
		return -1;
	p += 2;
	if (digits(&p, end, 999999, &v))
		return -1;
	out->xid = (int)v;
	if (comma(&p, end))
		return -1;

	if (starts(p, end, "pid=")) {
		p += 4;
		if (starts(p, end, "'<unknown>'"))
			p += 11;
		else if (starts(p, end, "<unknown>"))
			p += 9;
		else if (digits(&p, end, INT32_MAX, &v))
			return -1;
		else
			out->pid = (int)v;
		if (comma(&p, end))
			return -1;
	}
	if (starts(p, end, "name=")) {
		const char *a = p + 5, *z;
		size_t n;

		/* Up to ", ": a name holding one is cut there. */
		z = memmem(a, (size_t)(end - a), ", ", 2);
		if (!z) {
			z = end;
			if (z > a && z[-1] == ',')
				z--;
		}
		n = (size_t)(z - a);
		if (n == 9 && memcmp(a, "<unknown>", 9) == 0)
			n = 0;
		if (n >= sizeof(out->name))
			n = sizeof(out->name) - 1;
		memcpy(out->name, a, n);
		out->name[n] = '\0';
		p = z;
		if (comma(&p, end))
			return -1;
	}
	out->msg = p;
	out->msg_len = (size_t)(end - p);
	return 1;
}
