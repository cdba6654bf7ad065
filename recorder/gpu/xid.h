/* xid.h - NVIDIA Xid errors: the catalog and the kernel log's Xid lines.
 *
 * The catalog (gr_xids[], gr_xid__find) is generated at build time from
 * recorder/gpu/xid.tsv by recorder/gpu/gen-xid.py, as NVIDIA publishes it:
 * each Xid's mnemonic, its meaning and the action to take, both short
 * enough for an 80-column report.  The parsers (xid.c) read /dev/kmsg
 * records and the driver's "NVRM: Xid (PCI:...): N, ..." lines in them.
 */
#ifndef GR_RECORDER_GPU_XID_H
#define GR_RECORDER_GPU_XID_H

#include <stddef.h>
#include <stdint.h>

/* Longest meaning and action in the catalog (gen-xid.py enforces it). */
#define GR_XID_TEXT_MAX 70

struct gr_xid {
	int xid;
	const char *name;	/* mnemonic, "ROBUST_CHANNEL_GPU_ECC_DBE" */
	const char *meaning;	/* what it means */
	const char *resolution;	/* catalog's immediate action code, e.g.
				 * "RESET_GPU"; "" where it has none */
	const char *action;	/* what to do */
};

/* The catalog, sorted by xid, each xid once. */
extern const struct gr_xid gr_xids[];
extern const int gr_nxids;

/* The catalog's entry for @xid, or NULL if it has none. */
const struct gr_xid *gr_xid__find(int xid);

/* Splits a /dev/kmsg record, @n bytes at @rec (one read(); not
 * NUL-terminated): "PRIO,SEQ,TS_USEC,FLAGS[,...];TEXT\n[ KEY=VALUE\n]...".
 * Sets *seq, *ts_us (microseconds since boot) and *text (inside @rec).
 * Returns the length of TEXT (up to its newline or the record's end), or
 * -1 if the record is not of that form. */
int gr_kmsg__split(const char *rec, size_t n, uint64_t *seq, uint64_t *ts_us,
		   const char **text);

/* One kernel-log Xid line, as gr_xid__parse_kmsg() found it. */
struct gr_xid_line {
	char pci[32];	/* the GPU's "0000:3b:00" as printed, without "PCI:" */
	int gi, ci;	/* MIG GPU / compute instance ("GPU-I:01"), or -1 */
	int xid;
	int pid;	/* -1 if absent or "'<unknown>'" */
	char name[64];	/* process name; "" if absent or "<unknown>" */
	const char *msg; /* the rest of the text, after the number and the
			  * pid/name part (inside the line, not terminated) */
	size_t msg_len;	/* its length, to the line's NUL or newline */
};

/* Parses a kernel log text (a /dev/kmsg record's TEXT, ending at a NUL or a
 * newline) of the NVIDIA driver's Xid forms:
 *   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, MSG
 *   NVRM: Xid (PCI:0000:3b:00): 13, pid='<unknown>', name=<unknown>, MSG
 *   NVRM: Xid (PCI:0000:c1:00): 31, pid=12890, MSG
 *   NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:00): 13, pid=1, name=x, MSG
 *   NVRM: Xid (0000:3b:00): 79, MSG
 * ("NVRM: Xid " may come after a prefix such as a syslog stamp).  Returns
 * 1 and fills @out for an Xid line, 0 if the text is not one, -1 if it
 * starts like one but is malformed or cut short (then @out is partial). */
int gr_xid__parse_kmsg(const char *line, struct gr_xid_line *out);

#endif
