/* test_hostdecode.c - the host families' pure decoders (recorder/sched,
 * recorder/io, recorder/proc decode.c) fed records by hand, without root
 * or BPF: each record kind, truncated and oversized records, exact row
 * values; and the family table of recorder/families.def.
 */
#include "tests/unit/test.h"

#include "recorder/family.h"
#include "recorder/io/decode.h"
#include "recorder/proc/decode.h"
#include "recorder/sched/decode.h"

#define OFF 1000000000000ll	/* boot-time ns + OFF = UTC ns */
#define SID 5000		/* string ids start here */

/* A dictionary: ids are SID + the string's index. */
static char *strs[64];
static int nstrs;

static int64_t intern(void *ctx, const char *s)
{
	(void)ctx;
	for (int i = 0; i < nstrs; i++)
		if (!strcmp(strs[i], s))
			return SID + i;
	if (nstrs == 64)
		abort();
	strs[nstrs] = strdup(s);
	return SID + nstrs++;
}

static const char *str(int64_t id)
{
	return id >= SID && id < SID + nstrs ? strs[id - SID] : NULL;
}

/* The names /sys would give: 8:16 is sdb; 259:0 has none here. */
static const char *devname(void *ctx, uint32_t dev)
{
	(void)ctx;
	return dev == (8 << 20 | 16) ? "sdb" : NULL;
}

static const struct gr_dctx dctx = { OFF, intern, NULL, devname };

/* ---- sched ---------------------------------------------------------------- */

static int stack_calls, irq_answer;

static char *fake_stack(void *ctx, const struct gr_offcpu *e)
{
	(void)ctx;
	stack_calls++;
	return e->ubytes > 0 ? strdup("main;work;[kernel]") : NULL;
}

static int fake_irq(void *ctx, const struct gr_offcpu *e)
{
	(void)ctx;
	(void)e;
	return irq_answer;
}

static const struct gr_sched_hooks hooks = { fake_stack, fake_irq, NULL,
					     NULL };

static void offcpu_rec(struct gr_offcpu *e)
{
	memset(e, 0, sizeof(*e));
	e->rec = GR_REC_OFFCPU;
	e->pid = 100;
	e->tid = 101;
	e->state = 0x2;
	e->ts = 5000;
	e->dur = 2500000;
	e->waker_pid = 200;
	e->waker_tid = 201;
	e->kbytes = 16;
	e->ubytes = 24;
	memcpy(e->comm, "python3", 7);
}

TEST(offcpu_row)
{
	struct gr_offcpu e;
	struct gr_row r;
	offcpu_rec(&e);
	irq_answer = 0;
	CHECK_EQ_INT(gr_sched__decode(&dctx, &hooks, &e, sizeof(e), &r),
		     GR_T_offcpu);
	CHECK_EQ_INT(r.table, GR_T_offcpu);
	CHECK_EQ_INT(r.v[GR_offcpu_ts], OFF + 5000);
	CHECK_EQ_INT(r.v[GR_offcpu_pid], 100);
	CHECK_EQ_INT(r.v[GR_offcpu_tid], 101);
	CHECK_EQ_STR(str(r.v[GR_offcpu_comm]), "python3");
	CHECK_EQ_INT(r.v[GR_offcpu_dur], 2500000);
	CHECK_EQ_STR(str(r.v[GR_offcpu_state]), "D");
	CHECK_EQ_INT(r.v[GR_offcpu_waker_pid], 200);
	CHECK_EQ_INT(r.v[GR_offcpu_waker_tid], 201);
	CHECK_EQ_STR(str(r.v[GR_offcpu_stack]), "main;work;[kernel]");
	CHECK_EQ_INT(r.nm, 0);
}

/* Woken in an interrupt, no stack, no hooks at all. */
TEST(offcpu_nulls)
{
	struct gr_offcpu e;
	struct gr_row r;
	offcpu_rec(&e);
	e.ubytes = -14;
	irq_answer = 1;
	CHECK_EQ_INT(gr_sched__decode(&dctx, &hooks, &e, sizeof(e), &r),
		     GR_T_offcpu);
	CHECK_EQ_INT(r.nm, 1ull << GR_offcpu_waker_pid |
			   1ull << GR_offcpu_waker_tid |
			   1ull << GR_offcpu_stack);
	CHECK_EQ_INT(r.v[GR_offcpu_waker_pid], 0);
	e.waker_tid = 0;	/* no waker seen: no hook asked */
	CHECK_EQ_INT(gr_sched__decode(&dctx, NULL, &e, sizeof(e), &r),
		     GR_T_offcpu);
	CHECK_EQ_INT(r.nm, 1ull << GR_offcpu_waker_pid |
			   1ull << GR_offcpu_waker_tid |
			   1ull << GR_offcpu_stack);
	/* A comm of all 16 bytes, no NUL: all of it. */
	memcpy(e.comm, "abcdefghijklmnop", 16);
	CHECK_EQ_INT(gr_sched__decode(&dctx, NULL, &e, sizeof(e), &r),
		     GR_T_offcpu);
	CHECK_EQ_STR(str(r.v[GR_offcpu_comm]), "abcdefghijklmnop");
}

TEST(task_states)
{
	CHECK_EQ_STR(gr_sched__task_state(0x1), "S");
	CHECK_EQ_STR(gr_sched__task_state(0x2), "D");
	CHECK_EQ_STR(gr_sched__task_state(0x402), "I");
	CHECK_EQ_STR(gr_sched__task_state(0x4), "T");
	CHECK_EQ_STR(gr_sched__task_state(0x8), "t");
	CHECK_EQ_STR(gr_sched__task_state(0x40), "P");
	CHECK_EQ_STR(gr_sched__task_state(0x20), "Z");
	CHECK_EQ_STR(gr_sched__task_state(0x10), "X");
	CHECK_EQ_STR(gr_sched__task_state(0x80), "X");
	CHECK_EQ_STR(gr_sched__task_state(0), "?");
}

TEST(runq_row)
{
	struct gr_runq e = { .rec = GR_REC_RUNQ, .pid = 7, .tid = 8, .cpu = 3,
			     .ts = 42, .dur = 900 };
	struct gr_row r;
	memcpy(e.comm, "worker", 6);
	CHECK_EQ_INT(gr_sched__decode(&dctx, NULL, &e, sizeof(e), &r),
		     GR_T_runq);
	CHECK_EQ_INT(r.v[GR_runq_ts], OFF + 42);
	CHECK_EQ_INT(r.v[GR_runq_pid], 7);
	CHECK_EQ_INT(r.v[GR_runq_tid], 8);
	CHECK_EQ_STR(str(r.v[GR_runq_comm]), "worker");
	CHECK_EQ_INT(r.v[GR_runq_dur], 900);
	CHECK_EQ_INT(r.v[GR_runq_cpu], 3);
	CHECK_EQ_INT(r.nm, 0);
}

/* Short records are refused (the hooks never asked), longer ones taken,
 * other kinds refused. */
TEST(sched_sizes)
{
	static unsigned char buf[sizeof(struct gr_offcpu) + 64];
	struct gr_offcpu e;
	struct gr_row r;
	offcpu_rec(&e);
	memcpy(buf, &e, sizeof(e));
	stack_calls = 0;
	CHECK_EQ_INT(gr_sched__decode(&dctx, &hooks, buf, sizeof(e) - 1, &r),
		     -1);
	CHECK_EQ_INT(gr_sched__decode(&dctx, &hooks, buf, 3, &r), -1);
	CHECK_EQ_INT(stack_calls, 0);
	CHECK_EQ_INT(gr_sched__decode(&dctx, &hooks, buf, sizeof(buf), &r),
		     GR_T_offcpu);
	CHECK_EQ_INT(r.v[GR_offcpu_pid], 100);
	CHECK_EQ_INT(stack_calls, 1);
	struct gr_runq q = { .rec = GR_REC_RUNQ };
	CHECK_EQ_INT(gr_sched__decode(&dctx, NULL, &q, sizeof(q) - 1, &r), -1);
	q.rec = GR_REC_BLOCK;	/* another family's kind */
	CHECK_EQ_INT(gr_sched__decode(&dctx, NULL, &q, sizeof(q), &r), -1);
}

/* An interval still open written in pieces (the walk every 5 s, the last
 * flush), then its record: the pieces are contiguous, sum to it, and the
 * record adds only what is left, with the waker. */
TEST(offcpu_open_pieces)
{
	struct gr_sched_opens open = { 0 };
	const struct gr_sched_hooks k = { fake_stack, fake_irq, NULL, &open };
	struct gr_offcpu e, o;
	struct gr_row r;
	irq_answer = 0;
	offcpu_rec(&e);		/* the record: [5000, 5000 + 2500000) */
	o = e;			/* what the walk sees: no waker, open */
	o.waker_pid = o.waker_tid = 0;
	o.dur = 1000000;
	CHECK_EQ_INT(gr_sched__open_piece(&dctx, &k, &o, &r), GR_T_offcpu);
	CHECK_EQ_INT(r.v[GR_offcpu_ts], OFF + 5000);
	CHECK_EQ_INT(r.v[GR_offcpu_dur], 1000000);
	CHECK_EQ_STR(str(r.v[GR_offcpu_state]), "D");
	CHECK_EQ_STR(str(r.v[GR_offcpu_stack]), "main;work;[kernel]");
	CHECK_EQ_INT(r.nm, 1ull << GR_offcpu_waker_pid |
			   1ull << GR_offcpu_waker_tid);
	CHECK_EQ_INT(open.n, 1);
	/* Nothing new since: no row. */
	CHECK_EQ_INT(gr_sched__open_piece(&dctx, &k, &o, &r), -1);
	o.dur = 1500000;
	CHECK_EQ_INT(gr_sched__open_piece(&dctx, &k, &o, &r), GR_T_offcpu);
	CHECK_EQ_INT(r.v[GR_offcpu_ts], OFF + 5000 + 1000000);
	CHECK_EQ_INT(r.v[GR_offcpu_dur], 500000);
	/* Another thread's record passes through whole. */
	struct gr_offcpu x = e;
	x.tid = 102;
	CHECK_EQ_INT(gr_sched__decode(&dctx, &k, &x, sizeof(x), &r),
		     GR_T_offcpu);
	CHECK_EQ_INT(r.v[GR_offcpu_ts], OFF + 5000);
	CHECK_EQ_INT(r.v[GR_offcpu_dur], 2500000);
	/* The record: only the rest, with its waker; the tid forgotten. */
	CHECK_EQ_INT(gr_sched__decode(&dctx, &k, &e, sizeof(e), &r),
		     GR_T_offcpu);
	CHECK_EQ_INT(r.v[GR_offcpu_ts], OFF + 5000 + 1500000);
	CHECK_EQ_INT(r.v[GR_offcpu_dur], 1000000);
	CHECK_EQ_INT(r.v[GR_offcpu_waker_tid], 201);
	CHECK_EQ_INT(open.n, 0);
	/* The thread's next interval is whole again. */
	e.ts += 10000000;
	CHECK_EQ_INT(gr_sched__decode(&dctx, &k, &e, sizeof(e), &r),
		     GR_T_offcpu);
	CHECK_EQ_INT(r.v[GR_offcpu_dur], 2500000);

	/* A record ending where the last piece did: nothing left. */
	o.ts = e.ts + 100000000;
	o.dur = 2000;
	CHECK_EQ_INT(gr_sched__open_piece(&dctx, &k, &o, &r), GR_T_offcpu);
	x = o;
	CHECK_EQ_INT(gr_sched__decode(&dctx, &k, &x, sizeof(x), &r), -1);
	CHECK_EQ_INT(open.n, 0);
	/* An open interval whose record was lost: the thread's next
	 * interval, walked or recorded, replaces it. */
	CHECK_EQ_INT(gr_sched__open_piece(&dctx, &k, &o, &r), GR_T_offcpu);
	o.ts += 50000;
	CHECK_EQ_INT(gr_sched__open_piece(&dctx, &k, &o, &r), GR_T_offcpu);
	CHECK_EQ_INT(r.v[GR_offcpu_ts], OFF + (int64_t)o.ts);
	CHECK_EQ_INT(r.v[GR_offcpu_dur], 2000);
	CHECK_EQ_INT(open.n, 1);
	x = o;
	x.ts += 50000;
	CHECK_EQ_INT(gr_sched__decode(&dctx, &k, &x, sizeof(x), &r),
		     GR_T_offcpu);
	CHECK_EQ_INT(r.v[GR_offcpu_ts], OFF + (int64_t)x.ts);
	CHECK_EQ_INT(r.v[GR_offcpu_dur], 2000);
	CHECK_EQ_INT(open.n, 0);

	/* Many threads at once, in any order: each its own. */
	static const uint32_t tids[] = { 50, 7, 900, 3, 120, 64, 65, 1 };
	for (int i = 0; i < 8; i++) {
		o.tid = tids[i];
		o.ts = 1000 + tids[i];
		CHECK_EQ_INT(gr_sched__open_piece(&dctx, &k, &o, &r),
			     GR_T_offcpu);
	}
	CHECK_EQ_INT(open.n, 8);
	for (size_t i = 1; i < open.n; i++)
		CHECK(open.v[i - 1].tid < open.v[i].tid);
	for (int i = 7; i >= 0; i--) {
		x = o;
		x.tid = tids[i];
		x.ts = 1000 + tids[i];
		x.dur = 5000;
		CHECK_EQ_INT(gr_sched__decode(&dctx, &k, &x, sizeof(x), &r),
			     GR_T_offcpu);
		CHECK_EQ_INT(r.v[GR_offcpu_ts], OFF + 1000 + tids[i] + 2000);
		CHECK_EQ_INT(r.v[GR_offcpu_dur], 3000);
		CHECK(!gr_sched__open_find(&open, tids[i]));
		CHECK_EQ_INT(open.n, (size_t)i);
	}
	gr_sched__open_free(&open);
}

/* ---- io ------------------------------------------------------------------- */

TEST(block_row)
{
	struct gr_block e = { .rec = GR_REC_BLOCK, .pid = 9, .tid = 10,
			      .dev = 8 << 20 | 16, .ts = 1, .dur = 300,
			      .sector = 123456789, .bytes = 4096, .op = 1 };
	struct gr_row r;
	memcpy(e.comm, "dd", 2);
	CHECK_EQ_INT(gr_io__decode(&dctx, &e, sizeof(e), &r), GR_T_block_io);
	CHECK_EQ_INT(r.v[GR_block_io_ts], OFF + 1);
	CHECK_EQ_INT(r.v[GR_block_io_pid], 9);
	CHECK_EQ_INT(r.v[GR_block_io_tid], 10);
	CHECK_EQ_STR(str(r.v[GR_block_io_comm]), "dd");
	CHECK_EQ_INT(r.v[GR_block_io_dur], 300);
	CHECK_EQ_STR(str(r.v[GR_block_io_dev]), "8:16");
	CHECK_EQ_STR(str(r.v[GR_block_io_disk]), "sdb");
	CHECK_EQ_STR(str(r.v[GR_block_io_op]), "W");
	CHECK_EQ_INT(r.v[GR_block_io_bytes], 4096);
	CHECK_EQ_INT(r.v[GR_block_io_sector], 123456789);
	CHECK_EQ_INT(r.nm, 0);
}

TEST(block_ops_and_no_task)
{
	static const struct { uint32_t op; const char *want; } ops[] = {
		{ 0, "R" }, { 1, "W" }, { 2, "F" }, { 3, "D" }, { 4, "?" },
		{ 5, "D" }, { 9, "W" }, { 10, "?" }, { 200, "?" },
	};
	struct gr_block e = { .rec = GR_REC_BLOCK, .dev = 259 << 20 };
	struct gr_row r;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		e.op = ops[i].op;
		CHECK_EQ_INT(gr_io__decode(&dctx, &e, sizeof(e), &r),
			     GR_T_block_io);
		CHECK_EQ_STR(str(r.v[GR_block_io_op]), ops[i].want);
	}
	CHECK_EQ_STR(str(r.v[GR_block_io_dev]), "259:0");
	/* a device /sys does not name: disk NULL */
	CHECK_EQ_INT(r.nm, 1ull << GR_block_io_pid | 1ull << GR_block_io_tid |
			   1ull << GR_block_io_comm | 1ull << GR_block_io_disk);
}

TEST(file_rows)
{
	struct gr_file e = { .rec = GR_REC_FILE, .pid = 11, .tid = 12,
			     .nr = NR_openat, .ts = 77, .dur = 5, .fd = 3,
			     .ret = 3 };
	struct gr_row r;
	memcpy(e.comm, "cat", 3);
	strcpy(e.path, "/etc/hosts");
	CHECK_EQ_INT(gr_io__decode(&dctx, &e, sizeof(e), &r), GR_T_file_io);
	CHECK_EQ_INT(r.v[GR_file_io_ts], OFF + 77);
	CHECK_EQ_INT(r.v[GR_file_io_pid], 11);
	CHECK_EQ_INT(r.v[GR_file_io_tid], 12);
	CHECK_EQ_STR(str(r.v[GR_file_io_comm]), "cat");
	CHECK_EQ_INT(r.v[GR_file_io_dur], 5);
	CHECK_EQ_STR(str(r.v[GR_file_io_syscall]), "openat");
	CHECK_EQ_INT(r.v[GR_file_io_fd], 3);
	CHECK_EQ_INT(r.v[GR_file_io_bytes], 3);
	CHECK_EQ_STR(str(r.v[GR_file_io_path]), "/etc/hosts");
	CHECK_EQ_INT(r.nm, 0);
	/* Not an open: no path, whatever the record holds. */
	e.nr = NR_pread64;
	e.ret = -5;
	CHECK_EQ_INT(gr_io__decode(&dctx, &e, sizeof(e), &r), GR_T_file_io);
	CHECK_EQ_STR(str(r.v[GR_file_io_syscall]), "pread64");
	CHECK_EQ_INT(r.v[GR_file_io_bytes], -5);
	CHECK_EQ_INT(r.nm, 1ull << GR_file_io_path);
	/* A path filling the buffer: cut at its last byte. */
	e.nr = NR_open;
	memset(e.path, 'x', sizeof(e.path));
	CHECK_EQ_INT(gr_io__decode(&dctx, &e, sizeof(e), &r), GR_T_file_io);
	CHECK_EQ_INT(strlen(str(r.v[GR_file_io_path])), GR_PATH_BYTES - 1);
	e.nr = 999;
	CHECK_EQ_INT(gr_io__decode(&dctx, &e, sizeof(e), &r), GR_T_file_io);
	CHECK_EQ_STR(str(r.v[GR_file_io_syscall]), "?");
}

TEST(io_sizes)
{
	static unsigned char buf[sizeof(struct gr_file) + 100];
	struct gr_file f = { .rec = GR_REC_FILE, .pid = 5, .nr = NR_write };
	struct gr_block b = { .rec = GR_REC_BLOCK, .pid = 6 };
	struct gr_row r;
	memcpy(buf, &f, sizeof(f));
	CHECK_EQ_INT(gr_io__decode(&dctx, buf, sizeof(f) - 1, &r), -1);
	CHECK_EQ_INT(gr_io__decode(&dctx, buf, sizeof(buf), &r), GR_T_file_io);
	CHECK_EQ_INT(r.v[GR_file_io_pid], 5);
	memcpy(buf, &b, sizeof(b));
	CHECK_EQ_INT(gr_io__decode(&dctx, buf, sizeof(b) - 1, &r), -1);
	CHECK_EQ_INT(gr_io__decode(&dctx, buf, sizeof(buf), &r),
		     GR_T_block_io);
	CHECK_EQ_INT(r.v[GR_block_io_pid], 6);
	CHECK_EQ_INT(gr_io__decode(&dctx, buf, 2, &r), -1);
	b.rec = GR_REC_OFFCPU;
	CHECK_EQ_INT(gr_io__decode(&dctx, &b, sizeof(b), &r), -1);
}

/* ---- proc ----------------------------------------------------------------- */

TEST(exec_event)
{
	struct gr_pexec e = { .rec = GR_REC_PEXEC, .pid = 300, .ppid = 1,
			      .args_len = 12, .ts = 10, .start = 8,
			      .cgroup = 4242, .exe_ino = 77, .exe_dev = 5 };
	struct gr_proc_ev ev;
	memcpy(e.comm, "train.py", 8);
	strcpy(e.exe, "./train");
	memcpy(e.args, "python\0-m\0x\0", 12);
	CHECK_EQ_INT(gr_proc__decode(&dctx, &e, sizeof(e), &ev), GR_REC_PEXEC);
	CHECK_EQ_INT(ev.pid, 300);
	CHECK_EQ_INT(ev.ppid, 1);
	CHECK_EQ_INT(ev.ts, OFF + 10);
	CHECK_EQ_INT(ev.start_ts, OFF + 8);
	CHECK_EQ_INT(ev.cgroup_id, 4242);
	CHECK_EQ_INT(ev.exe_ino, 77);
	CHECK_EQ_INT(ev.exe_dev, 5);
	CHECK_EQ_STR(ev.comm, "train.py");
	CHECK_EQ_STR(ev.exe, "./train");
	CHECK_EQ_STR(ev.cmdline, "python -m x");
	free(ev.cmdline);
	/* No arguments: no cmdline; a 16-byte comm cut to 15. */
	e.args_len = 0;
	memcpy(e.comm, "abcdefghijklmnop", 16);
	CHECK_EQ_INT(gr_proc__decode(&dctx, &e, sizeof(e), &ev), GR_REC_PEXEC);
	CHECK(ev.cmdline == NULL);
	CHECK_EQ_STR(ev.comm, "abcdefghijklmno");
	/* A length past the buffer: the buffer, no more. */
	e.args_len = 100000;
	memset(e.args, 'a', sizeof(e.args));
	CHECK_EQ_INT(gr_proc__decode(&dctx, &e, sizeof(e), &ev), GR_REC_PEXEC);
	CHECK_EQ_INT(strlen(ev.cmdline), GR_ARGS_BYTES);
	free(ev.cmdline);
}

TEST(exit_event)
{
	struct gr_pexit e = { .rec = GR_REC_PEXIT, .pid = 301, .code = 256,
			      .ts = 99, .start = 50 };
	struct gr_proc_ev ev;
	memcpy(e.comm, "sh", 2);
	CHECK_EQ_INT(gr_proc__decode(&dctx, &e, sizeof(e), &ev), GR_REC_PEXIT);
	CHECK_EQ_INT(ev.pid, 301);
	CHECK_EQ_INT(ev.code, 256);
	CHECK_EQ_INT(ev.ts, OFF + 99);
	CHECK_EQ_INT(ev.start_ts, OFF + 50);
	CHECK_EQ_STR(ev.comm, "sh");
	CHECK(ev.cmdline == NULL);
}

TEST(proc_sizes)
{
	static unsigned char buf[sizeof(struct gr_pexec) + 8];
	struct gr_pexec x = { .rec = GR_REC_PEXEC, .pid = 1 };
	struct gr_pexit y = { .rec = GR_REC_PEXIT, .pid = 2 };
	struct gr_proc_ev ev;
	memcpy(buf, &x, sizeof(x));
	CHECK_EQ_INT(gr_proc__decode(&dctx, buf, sizeof(x) - 1, &ev), -1);
	CHECK(ev.cmdline == NULL);
	CHECK_EQ_INT(gr_proc__decode(&dctx, buf, sizeof(buf), &ev),
		     GR_REC_PEXEC);
	CHECK_EQ_INT(ev.pid, 1);
	memcpy(buf, &y, sizeof(y));
	CHECK_EQ_INT(gr_proc__decode(&dctx, buf, sizeof(y) - 1, &ev), -1);
	CHECK_EQ_INT(gr_proc__decode(&dctx, buf, sizeof(y) + 8, &ev),
		     GR_REC_PEXIT);
	CHECK_EQ_INT(ev.pid, 2);
	CHECK_EQ_INT(gr_proc__decode(&dctx, buf, 0, &ev), -1);
	y.rec = GR_REC_RUNQ;
	CHECK_EQ_INT(gr_proc__decode(&dctx, &y, sizeof(y), &ev), -1);
}

TEST(process_row)
{
	struct gr_pinfo p = { .pid = 400, .ppid = 399, .have_id = 1,
			      .first_ts = 111, .start_ts = 100 };
	struct gr_row r;
	strcpy(p.comm, "trainer");
	p.exe = "/usr/bin/python3";
	p.cmdline = "python3 train.py";
	p.cgroup = "/system.slice/x.service";
	strcpy(p.cid, "abc");
	gr_proc__row(&dctx, &p, &r);
	CHECK_EQ_INT(r.table, GR_T_process);
	CHECK_EQ_INT(r.v[GR_process_ts], 111);
	CHECK_EQ_INT(r.v[GR_process_pid], 400);
	CHECK_EQ_INT(r.v[GR_process_tid], 400);
	CHECK_EQ_STR(str(r.v[GR_process_comm]), "trainer");
	CHECK_EQ_INT(r.v[GR_process_ppid], 399);
	CHECK_EQ_STR(str(r.v[GR_process_exe]), "/usr/bin/python3");
	CHECK_EQ_STR(str(r.v[GR_process_cmdline]), "python3 train.py");
	CHECK_EQ_STR(str(r.v[GR_process_cgroup]), "/system.slice/x.service");
	CHECK_EQ_STR(str(r.v[GR_process_container_id]), "abc");
	CHECK_EQ_INT(r.v[GR_process_start_ts], 100);
	CHECK_EQ_INT(r.nm, 1ull << GR_process_pod_uid |
			   1ull << GR_process_exit_ts |
			   1ull << GR_process_exit_code);
	/* Exited, identity unknown, nothing read. */
	struct gr_pinfo q = { .pid = 401, .exited = 1, .code = 9,
			      .exit_ts = 555 };
	gr_proc__row(&dctx, &q, &r);
	CHECK_EQ_INT(r.v[GR_process_exit_ts], 555);
	CHECK_EQ_INT(r.v[GR_process_exit_code], 9);
	CHECK_EQ_STR(str(r.v[GR_process_comm]), "");
	CHECK_EQ_INT(r.nm, 1ull << GR_process_ppid | 1ull << GR_process_exe |
			   1ull << GR_process_cmdline |
			   1ull << GR_process_cgroup |
			   1ull << GR_process_container_id |
			   1ull << GR_process_pod_uid |
			   1ull << GR_process_start_ts);
}

TEST(join_args)
{
	char *s = gr_proc__join_args("a\0bc\0\0\0", 7);
	CHECK_EQ_STR(s, "a bc");
	free(s);
	s = gr_proc__join_args("", 0);
	CHECK_EQ_STR(s, "");
	free(s);
}

/* ---- families.def ----------------------------------------------------------- */

TEST(family_table)
{
	CHECK_EQ_INT(GR_NFAMILIES, 5);
	CHECK_EQ_STR(gr_families[GR_FAM_cuda].name, "cuda");
	CHECK_EQ_INT(gr_families[GR_FAM_cuda].host, 0);
	CHECK_EQ_INT(gr_families[GR_FAM_cuda].ndrops, 3);
	CHECK_EQ_STR(gr_families[GR_FAM_cuda].drops[2], "cuda:unmatched");
	CHECK_EQ_STR(gr_families[GR_FAM_proc].status, "processes");
	CHECK_EQ_INT(gr_families[GR_FAM_proc].host, 1);
	CHECK_EQ_INT(gr_families[GR_FAM_proc].ndrops, GR_PROC_NDROPS);
	CHECK_EQ_STR(gr_families[GR_FAM_proc].drops[GR_PROC_DROP_RINGBUF],
		     "proc:ringbuf");
	CHECK_EQ_STR(gr_families[GR_FAM_sched].status, "sched");
	CHECK_EQ_INT(gr_families[GR_FAM_sched].ndrops, GR_SCHED_NDROPS);
	CHECK_EQ_STR(gr_families[GR_FAM_sched].drops[GR_SCHED_DROP_THREADS],
		     "sched:threads");
	CHECK_EQ_STR(gr_families[GR_FAM_io].name, "io");
	CHECK_EQ_INT(gr_families[GR_FAM_io].ndrops, GR_IO_NDROPS);
	CHECK_EQ_STR(gr_families[GR_FAM_io].drops[GR_IO_DROP_RINGBUF],
		     "io:ringbuf");
	CHECK_EQ_STR(gr_families[GR_FAM_gpu].status, "gpu");
	CHECK_EQ_INT(gr_families[GR_FAM_gpu].host, 0);
	/* The host unit's process table serves the BPF families only. */
	CHECK_EQ_INT(gr_families[GR_FAM_gpu].procs, 0);
	CHECK_EQ_INT(gr_families[GR_FAM_cuda].procs, 1);
	CHECK_EQ_INT(gr_families[GR_FAM_io].procs, 1);
	CHECK_EQ_INT(gr_families[GR_FAM_gpu].ndrops, 1);
	CHECK_EQ_STR(gr_families[GR_FAM_gpu].drops[0], "gpu:queue");
	for (int f = 0; f < GR_NFAMILIES; f++)
		CHECK(gr_families[f].ndrops <= GR_FAMILY_MAXDROPS);
}

TEST_MAIN(TEST_ENTRY(offcpu_row) TEST_ENTRY(offcpu_nulls)
	  TEST_ENTRY(offcpu_open_pieces)
	  TEST_ENTRY(task_states) TEST_ENTRY(runq_row) TEST_ENTRY(sched_sizes)
	  TEST_ENTRY(block_row) TEST_ENTRY(block_ops_and_no_task)
	  TEST_ENTRY(file_rows) TEST_ENTRY(io_sizes) TEST_ENTRY(exec_event)
	  TEST_ENTRY(exit_event) TEST_ENTRY(proc_sizes)
	  TEST_ENTRY(process_row) TEST_ENTRY(join_args)
	  TEST_ENTRY(family_table))
