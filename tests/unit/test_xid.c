/* test_xid.c - the generated Xid catalog, /dev/kmsg records and the
 * driver's Xid lines.
 *
 * The lines are real ones from bug reports (the issue named beside each)
 * or, where marked, built from the driver's format strings
 * (open-gpu-kernel-modules, src/nvidia/src/kernel/gpu/rc/kernel_rc.c) and
 * NVIDIA's Xid documentation.  Each is parsed from a buffer of exactly its
 * own size, so ASan sees any read past its end.
 */
#include "tests/unit/test.h"
#include "recorder/gpu/xid.h"

#include <ctype.h>
#include <limits.h>

TEST(table_sorted_unique)
{
	CHECK(gr_nxids == 172);
	CHECK_EQ_INT(gr_xids[0].xid, 1);
	CHECK_EQ_INT(gr_xids[gr_nxids - 1].xid, 172);
	for (int i = 1; i < gr_nxids; i++)
		CHECK(gr_xids[i - 1].xid < gr_xids[i].xid);
}

TEST(table_fields)
{
	int none = 0;

	for (int i = 0; i < gr_nxids; i++) {
		const struct gr_xid *x = &gr_xids[i];

		CHECK(x->name && x->meaning && x->resolution && x->action);
		CHECK(*x->name && *x->meaning && *x->action);
		CHECK(strlen(x->meaning) <= GR_XID_TEXT_MAX);
		CHECK(strlen(x->action) <= GR_XID_TEXT_MAX);
		for (const char *c = x->name; *c; c++)
			CHECK(isupper((unsigned char)*c) ||
			      isdigit((unsigned char)*c) || *c == '_');
		for (const char *c = x->resolution; *c; c++)
			CHECK(isupper((unsigned char)*c) ||
			      isdigit((unsigned char)*c) || *c == '_');
		none += !*x->resolution;
	}
	/* The catalog names no immediate action for 162-172. */
	CHECK_EQ_INT(none, 11);
}

TEST(find_known)
{
	const struct gr_xid *x = gr_xid__find(79);

	CHECK(x && x->xid == 79);
	CHECK_EQ_STR(x->name, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS");
	CHECK_EQ_STR(x->meaning,
		     "GPU has fallen off the bus (no longer reachable over PCIe)");
	CHECK_EQ_STR(x->resolution, "RESTART_BM");
	CHECK_EQ_STR(x->action,
		     "Drain the node; check PCIe/power/thermals; reboot; "
		     "RMA if it recurs");

	x = gr_xid__find(48);
	CHECK(x && x->xid == 48);
	CHECK_EQ_STR(x->name, "ROBUST_CHANNEL_GPU_ECC_DBE");
	CHECK_EQ_STR(x->meaning, "Uncorrectable double-bit ECC error (DBE)");
	CHECK_EQ_STR(x->resolution, "WORKFLOW_XID_48");

	x = gr_xid__find(13);
	CHECK(x && x->xid == 13);
	CHECK_EQ_STR(x->name, "ROBUST_CHANNEL_GR_EXCEPTION");
	CHECK_EQ_STR(x->resolution, "RESTART_APP");

	x = gr_xid__find(54);
	CHECK(x && !strcmp(x->resolution, "CHECK_MECHANICALS"));
	x = gr_xid__find(95);
	CHECK(x && !strcmp(x->name, "ROBUST_CHANNEL_UNCONTAINED_ERROR") &&
	      !strcmp(x->resolution, "RESET_GPU"));
	x = gr_xid__find(119);
	CHECK(x && !strcmp(x->name, "GSP_RPC_TIMEOUT"));
	x = gr_xid__find(149);
	CHECK(x && !strcmp(x->resolution, "WORKFLOW_NVLINK5_ERR"));
	x = gr_xid__find(1);
	CHECK(x && !strcmp(x->name, "ROBUST_CHANNEL_FIFO_ERROR_FIFO_METHOD"));
	x = gr_xid__find(172);
	CHECK(x && !strcmp(x->name, "UNCORRECTABLE_SRAM_ERROR") &&
	      !strcmp(x->resolution, ""));

	/* The common ones are all there, and every entry is found. */
	static const int common[] = { 13, 31, 32, 43, 45, 48, 61, 62, 63, 64,
				      68, 69, 74, 79, 92, 94, 95, 109, 119,
				      120, 121, 140, 143, 144, 145, 146, 147,
				      148, 149, 150, 154 };
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		CHECK(gr_xid__find(common[i]));
	for (int i = 0; i < gr_nxids; i++)
		CHECK(gr_xid__find(gr_xids[i].xid) == &gr_xids[i]);
}

TEST(find_unknown)
{
	CHECK(!gr_xid__find(0));
	CHECK(!gr_xid__find(-1));
	CHECK(!gr_xid__find(173));
	CHECK(!gr_xid__find(1000));
	CHECK(!gr_xid__find(22013));
	CHECK(!gr_xid__find(INT_MIN));
	CHECK(!gr_xid__find(INT_MAX));
}

/* A heap copy of @s without its NUL, @n bytes. */
static char *rec(const char *s, size_t n)
{
	char *p = malloc(n ? n : 1);

	if (p)
		memcpy(p, s, n);
	return p;
}

TEST(kmsg_split)
{
	static const char r1[] =
		"4,1234,5678901,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has "
		"fallen off the bus.\n SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n";
	static const char r2[] = "6,99,100,-,caller=T123;hello";
	static const char r3[] = "6,18446744073709551615,0,c;";
	uint64_t seq = 0, ts = 0;
	const char *text = NULL;
	char *b;
	int n;

	b = rec(r1, sizeof(r1) - 1);
	n = gr_kmsg__split(b, sizeof(r1) - 1, &seq, &ts, &text);
	CHECK_EQ_INT(n, (int)strlen("NVRM: Xid (PCI:0000:3b:00): 79, GPU has "
				    "fallen off the bus."));
	CHECK_EQ_INT(seq, 1234);
	CHECK_EQ_INT(ts, 5678901);
	CHECK(text == b + 17);
	free(b);

	b = rec(r2, sizeof(r2) - 1);
	n = gr_kmsg__split(b, sizeof(r2) - 1, &seq, &ts, &text);
	CHECK_EQ_INT(n, 5);
	CHECK(!memcmp(text, "hello", 5));
	CHECK_EQ_INT(seq, 99);
	CHECK_EQ_INT(ts, 100);
	free(b);

	b = rec(r3, sizeof(r3) - 1);
	n = gr_kmsg__split(b, sizeof(r3) - 1, &seq, &ts, &text);
	CHECK_EQ_INT(n, 0);
	CHECK(seq == UINT64_MAX);
	free(b);
}

TEST(kmsg_split_bad)
{
	static const char *const bad[] = {
		"", "x", "6", "6,", "6,1", "6,1,", "6,1,2", "6,1,2,-",
		"6,1,2-;x", ",1,2,-;x", "6,,2,-;x", "6,1,,-;x", "6,1,2x,-;x",
		"-6,1,2,-;x", "6,18446744073709551616,2,-;x",
		"6,1,2,-\n;x", "4294967296,1,2,-;x",
	};
	uint64_t seq = 7, ts = 7;
	const char *text = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *b = rec(bad[i], strlen(bad[i]));
		int n = gr_kmsg__split(b, strlen(bad[i]), &seq, &ts, &text);

		free(b);
		if (n != -1) {
			fprintf(stderr, "split \"%s\" -> %d\n", bad[i], n);
			CHECK(0);
		}
	}
	CHECK(seq == 7 && ts == 7 && !text);
	CHECK_EQ_INT(gr_kmsg__split(NULL, 0, &seq, &ts, &text), -1);
	/* Cut short: the record's end is n, not a NUL. */
	CHECK_EQ_INT(gr_kmsg__split("6,1,2,-;x", 7, &seq, &ts, &text), -1);
}

struct want {
	const char *line;
	const char *pci;
	int gi, ci, xid, pid;
	const char *name, *msg;
};

static const struct want good[] = {
	/* The forms the issue names (NVIDIA's documentation and reports). */
	{ "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has "
	  "fallen off the bus.",
	  "0000:3b:00", -1, -1, 79, 1234, "python",
	  "GPU has fallen off the bus." },
	{ "NVRM: Xid (PCI:0000:3b:00): 13, pid='<unknown>', name=<unknown>, "
	  "Graphics Exception: ESR 0x505648=0x1000e 0x505650=0x0",
	  "0000:3b:00", -1, -1, 13, -1, "",
	  "Graphics Exception: ESR 0x505648=0x1000e 0x505650=0x0" },
	{ "NVRM: Xid (PCI:0000:01:00): 31, pid=2368, name=python3, Ch "
	  "00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 "
	  "faulted @ 0x7f1c_00000000. Fault is of type FAULT_PDE "
	  "ACCESS_TYPE_VIRT_READ",
	  "0000:01:00", -1, -1, 31, 2368, "python3",
	  "Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS "
	  "GPCCLIENT_T1_0 faulted @ 0x7f1c_00000000. Fault is of type "
	  "FAULT_PDE ACCESS_TYPE_VIRT_READ" },
	{ "NVRM: Xid (0000:3b:00): 79, GPU has fallen off the bus.",
	  "0000:3b:00", -1, -1, 79, -1, "", "GPU has fallen off the bus." },
	{ "NVRM: Xid (PCI:0000:3b:00): 48, An uncorrectable double bit error "
	  "(DBE) has been detected on GPU in the framebuffer at partition 6, "
	  "subpartition 0.",
	  "0000:3b:00", -1, -1, 48, -1, "",
	  "An uncorrectable double bit error (DBE) has been detected on GPU in "
	  "the framebuffer at partition 6, subpartition 0." },
	/* NVIDIA's Xid documentation, the oldest form. */
	{ "NVRM: Xid (0000:03:00): 14, Channel 00000001",
	  "0000:03:00", -1, -1, 14, -1, "", "Channel 00000001" },
	/* doitsujin/dxvk#1799: pid, no name. */
	{ "NVRM: Xid (PCI:0000:c1:00): 31, pid=12890, Ch 0000003b, intr "
	  "00000000. MMU Fault: ENGINE HOST0 HUBCLIENT_HOST_CPU faulted @ "
	  "0x1_0c3c0000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE",
	  "0000:c1:00", -1, -1, 31, 12890, "",
	  "Ch 0000003b, intr 00000000. MMU Fault: ENGINE HOST0 "
	  "HUBCLIENT_HOST_CPU faulted @ 0x1_0c3c0000. Fault is of type "
	  "FAULT_PDE ACCESS_TYPE_VIRT_WRITE" },
	/* doitsujin/dxvk#1027: neither pid nor name. */
	{ "NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000052 intr 02000000",
	  "0000:01:00", -1, -1, 32, -1, "", "Channel ID 00000052 intr 02000000" },
	/* madMAx43v3r/chia-gigahorse#301. */
	{ "NVRM: Xid (PCI:0000:0a:00): 62, pid='<unknown>', name=<unknown>, "
	  "2023b230 20238a3a 2023e8b6 2023eac4 2023ec3c 2023ea86 00000000 "
	  "00000000",
	  "0000:0a:00", -1, -1, 62, -1, "",
	  "2023b230 20238a3a 2023e8b6 2023eac4 2023ec3c 2023ea86 00000000 "
	  "00000000" },
	/* modal.com's GPU health guide: a name with ':' and brackets. */
	{ "NVRM: Xid (PCI:0000:c6:00): 79, pid=1101234, name=nvc:[driver], "
	  "GPU has fallen off the bus.",
	  "0000:c6:00", -1, -1, 79, 1101234, "nvc:[driver]",
	  "GPU has fallen off the bus." },
	/* leptonai/gpud's Xid README. */
	{ "NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, "
	  "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005",
	  "0000:cb:00", -1, -1, 109, 1797828, "pt_main_thread",
	  "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005" },
	/* NVIDIA/open-gpu-kernel-modules#1134, after a 31. */
	{ "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from "
	  "0x0 (None) to 0x1 (PF FLR)",
	  "0000:01:00", -1, -1, 154, -1, "",
	  "GPU recovery action changed from 0x0 (None) to 0x1 (PF FLR)" },
	/* Built from kernel_rc.c's MIG formats. */
	{ "NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:00): 13, pid=4242, "
	  "name=python, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): "
	  "Illegal Instruction Encoding",
	  "0000:3b:00", 1, 0, 13, 4242, "python",
	  "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Illegal "
	  "Instruction Encoding" },
	{ "NVRM: Xid (PCI:0000:3b:00 GPU-I:13): 31, pid=7, name=x, MMU Fault",
	  "0000:3b:00", 13, -1, 31, 7, "x", "MMU Fault" },
	/* kernel_rc.c with no message: "name=%s, %s" of "". */
	{ "NVRM: Xid (PCI:0000:3b:00): 43, pid=77, name=a.out, ",
	  "0000:3b:00", -1, -1, 43, 77, "a.out", "" },
	/* A syslog line (journalctl -k), and a /dev/kmsg text's newline. */
	{ "Nov 29 11:28:11 zeus kernel: NVRM: Xid (PCI:0000:c1:00): 31, "
	  "pid=12890, Ch 0000003e",
	  "0000:c1:00", -1, -1, 31, 12890, "", "Ch 0000003e" },
	{ "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus\n"
	  " SUBSYSTEM=pci",
	  "0000:44:00", -1, -1, 79, -1, "", "GPU has fallen off the bus" },
	/* A number alone. */
	{ "NVRM: Xid (PCI:0000:3b:00): 79", "0000:3b:00", -1, -1, 79, -1, "",
	  "" },
};

TEST(parse_real_lines)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const struct want *w = &good[i];
		size_t n = strlen(w->line) + 1;
		char *b = rec(w->line, n);
		struct gr_xid_line x;
		int rc = gr_xid__parse_kmsg(b, &x);

		if (rc != 1 || strcmp(x.pci, w->pci) || x.gi != w->gi ||
		    x.ci != w->ci || x.xid != w->xid || x.pid != w->pid ||
		    strcmp(x.name, w->name) || x.msg_len != strlen(w->msg) ||
		    memcmp(x.msg, w->msg, x.msg_len) ||
		    x.msg < b || x.msg + x.msg_len > b + n - 1) {
			fprintf(stderr, "line %zu: rc %d pci \"%s\" gi %d ci %d "
				"xid %d pid %d name \"%s\" msg \"%.*s\"\n", i, rc,
				x.pci, x.gi, x.ci, x.xid, x.pid, x.name,
				(int)x.msg_len, x.msg);
			free(b);
			CHECK(0);
		}
		free(b);
	}
}

TEST(parse_long_name)
{
	char line[256];
	struct gr_xid_line x;

	snprintf(line, sizeof(line), "NVRM: Xid (PCI:0000:3b:00): 13, pid=1, "
		 "name=%0100d, Graphics Exception", 0);
	CHECK_EQ_INT(gr_xid__parse_kmsg(line, &x), 1);
	CHECK_EQ_INT(strlen(x.name), sizeof(x.name) - 1);
	CHECK_EQ_INT(x.msg_len, strlen("Graphics Exception"));
	CHECK(!memcmp(x.msg, "Graphics Exception", x.msg_len));
}

TEST(parse_not_xid)
{
	static const char *const other[] = {
		"",
		"hello",
		"NVRM: GPU at PCI:0000:3b:00: "
		"GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7",
		"NVRM: The NVIDIA GPU 0000:b3:00.0",
		"NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  "
		"570.158.01  Release Build",
		"NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x23:0x65:1426)",
		"NVRM: Xid",
		"NVRM: Xid 79",
		"NVRM: Xid(PCI:0000:3b:00): 79, x",
		"nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected "
		"invalid context, skipping further processing",
		"mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE",
		/* The Xid past the text's end (its newline) does not count. */
		"NVRM: GPU at PCI:0000:3b:00\nNVRM: Xid (PCI:0000:3b:00): 79, x",
	};
	struct gr_xid_line x;

	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		char *b = rec(other[i], strlen(other[i]) + 1);
		int rc = gr_xid__parse_kmsg(b, &x);

		free(b);
		if (rc != 0) {
			fprintf(stderr, "\"%s\" -> %d\n", other[i], rc);
			CHECK(0);
		}
	}
	CHECK_EQ_INT(gr_xid__parse_kmsg(NULL, &x), 0);
}

TEST(parse_malformed)
{
	static const char *const bad[] = {
		"NVRM: Xid (",
		"NVRM: Xid ()",
		"NVRM: Xid (PCI:): 79, x",
		"NVRM: Xid (PCI:zzzz): 79, x",
		"NVRM: Xid (PCI:00003b00): 79, x",
		"NVRM: Xid (PCI:0000:3b:00 79, x",
		"NVRM: Xid (PCI:0000:3b:00) 79, x",
		"NVRM: Xid (PCI:0000:3b:00):79, x",
		"NVRM: Xid (PCI:0000:3b:00): , x",
		"NVRM: Xid (PCI:0000:3b:00): x",
		"NVRM: Xid (PCI:0000:3b:00): -1, x",
		"NVRM: Xid (PCI:0000:3b:00): 79 x",
		"NVRM: Xid (PCI:0000:3b:00): 9999999999, x",
		"NVRM: Xid (PCI:0000:3b:00): 79, pid=",
		"NVRM: Xid (PCI:0000:3b:00): 79, pid=abc, name=x, m",
		"NVRM: Xid (PCI:0000:3b:00): 79, pid=99999999999, name=x, m",
		"NVRM: Xid (PCI:0000:3b:00): 79, pid=12 name=x, m",
		"NVRM: Xid (PCI:0000:3b:00 GPU-I:): 13, x",
		"NVRM: Xid (PCI:0000:3b:00 GPU-CI:x): 13, x",
		"NVRM: Xid (PCI:0000:0000:0000:0000:0000:0000:3b:00): 79, x",
	};
	struct gr_xid_line x;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *b = rec(bad[i], strlen(bad[i]) + 1);
		int rc = gr_xid__parse_kmsg(b, &x);

		free(b);
		if (rc != -1) {
			fprintf(stderr, "\"%s\" -> %d\n", bad[i], rc);
			CHECK(0);
		}
	}
}

/* Every prefix of every line: a clean answer, never a read past it; cut
 * before the number, it is no Xid line, or a malformed one. */
TEST(parse_truncated)
{
	struct gr_xid_line x;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const char *l = good[i].line;
		const char *num = strstr(l, "): ");
		size_t len = strlen(l);

		CHECK(num);
		for (size_t n = 0; n <= len; n++) {
			char *b = rec(l, n + 1);
			int rc;

			b[n] = '\0';
			rc = gr_xid__parse_kmsg(b, &x);
			free(b);
			CHECK(rc >= -1 && rc <= 1);
			if (n < (size_t)(num - l) + 4)
				CHECK(rc != 1);
		}
	}
}

/* Random bytes and random mutations of real lines: no crash, no read
 * past the end (ASan), a return of -1, 0 or 1. */
TEST(parse_garbage)
{
	static const char alphabet[] = "NVRM: Xid(PCI)0123456789abcdef:,'<>"
				       "=pidnameGPU-IC \n\t\x01\xff";
	uint32_t s = 12345;
	struct gr_xid_line x;
	uint64_t seq, ts;
	const char *text;

	for (int round = 0; round < 20000; round++) {
		char buf[160];
		size_t n;

		s = s * 1103515245u + 12345u;
		if (round & 1) {
			const char *l = good[(s >> 8) %
					     (sizeof(good) / sizeof(good[0]))].line;

			n = strlen(l) < sizeof(buf) - 1 ? strlen(l) :
							  sizeof(buf) - 1;
			memcpy(buf, l, n);
			for (int k = 0; k < 3 && n; k++) {
				s = s * 1103515245u + 12345u;
				buf[(s >> 8) % n] =
					alphabet[(s >> 20) % (sizeof(alphabet) - 1)];
			}
		} else {
			n = (s >> 8) % (sizeof(buf) - 1);
			for (size_t k = 0; k < n; k++) {
				s = s * 1103515245u + 12345u;
				buf[k] = alphabet[(s >> 16) %
						  (sizeof(alphabet) - 1)];
			}
		}
		char *b = rec(buf, n + 1);
		int rc;

		b[n] = '\0';
		rc = gr_xid__parse_kmsg(b, &x);
		CHECK(rc >= -1 && rc <= 1);
		if (rc == 1)
			CHECK(x.msg >= b && x.msg + x.msg_len <= b + n);
		rc = gr_kmsg__split(b, n, &seq, &ts, &text);
		CHECK(rc == -1 || (text > b && text + rc <= b + n));
		free(b);
	}
}

/* A whole /dev/kmsg record, split then parsed. */
TEST(kmsg_record_to_xid)
{
	static const char r[] =
		"3,5012,7011223344,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, "
		"name=python, GPU has fallen off the bus.\n SUBSYSTEM=pci\n";
	char *b = rec(r, sizeof(r) - 1);
	uint64_t seq, ts;
	const char *text;
	char line[512];
	struct gr_xid_line x;
	int n = gr_kmsg__split(b, sizeof(r) - 1, &seq, &ts, &text);

	CHECK(n > 0 && (size_t)n < sizeof(line));
	memcpy(line, text, (size_t)n);
	line[n] = '\0';
	free(b);
	CHECK_EQ_INT(seq, 5012);
	CHECK_EQ_INT(ts, 7011223344ULL);
	CHECK_EQ_INT(gr_xid__parse_kmsg(line, &x), 1);
	CHECK_EQ_STR(x.pci, "0000:3b:00");
	CHECK_EQ_INT(x.xid, 79);
	CHECK_EQ_INT(x.pid, 1234);
	CHECK_EQ_STR(x.name, "python");
	CHECK_EQ_INT(x.msg_len, strlen("GPU has fallen off the bus."));
	CHECK_EQ_STR(gr_xid__find(x.xid)->resolution, "RESTART_BM");
}

TEST_MAIN(TEST_ENTRY(table_sorted_unique) TEST_ENTRY(table_fields)
	  TEST_ENTRY(find_known) TEST_ENTRY(find_unknown)
	  TEST_ENTRY(kmsg_split) TEST_ENTRY(kmsg_split_bad)
	  TEST_ENTRY(parse_real_lines) TEST_ENTRY(parse_long_name)
	  TEST_ENTRY(parse_not_xid) TEST_ENTRY(parse_malformed)
	  TEST_ENTRY(parse_truncated) TEST_ENTRY(parse_garbage)
	  TEST_ENTRY(kmsg_record_to_xid))
