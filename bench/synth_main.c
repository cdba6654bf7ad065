/* synth_main.c - `gpurec-synth`: writes synthetic streams into a data
 * directory through the store, for tests and benchmarks.  Not installed. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench/synth.h"
#include "bench/synth_day.h"
#include "bench/synth_nccl.h"
#include "common/parse.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpurec-synth --data DIR [--events N] [--table T]...\n"
		"  --table T          cuda_kernel (default), offcpu, block_io, "
		"file_io,\n"
		"                     drops, nccl, gpu; repeatable\n"
		"  --events N         events per table (default 100000; nccl "
		"alone: its whole\n"
		"                     job; nccl stops where its job ends)\n"
		"  --host NAME        host name in the metadata (default "
		"synthetic)\n"
		"  --start T          first ts: RFC 3339 or ns since the epoch "
		"(default now-1h)\n"
		"  --interval NS      exact spacing, no jitter (tests)\n"
		"  --seed N           (default 1)\n"
		"  --procs N          launching processes (default 4)\n"
		"  --flush-every N    flush every N events (default 65536)\n"
		"  --block-rows N     events per block at most (default 65536)\n"
		"  --segment-size S   rotate at S bytes (default 256M)\n"
		"  --max-disk S       retention cap (default none)\n"
		"  --rotate-every N   seal a segment every N events per table\n"
		"                     (with --rows: every N rows)\n"
		"  --rate R           launches per second, all processes\n"
		"  --memcpy-every N   a copy after every Nth launch\n"
		"  --offcpu-gap NS    mean spacing of off-CPU intervals "
		"(default 200000)\n"
		"  --rows FILE        also exact rows, one a line: TABLE, then "
		"COL=VALUE\n"
		"                     fields, tab-separated; columns left out "
		"are NULL\n"
		"                     (alone, no generated events unless --table)\n"
		"Live (tests/faults/kill9.sh): append in real time until "
		"killed\n"
		"  --live R           R events per second of wall clock, each "
		"table\n"
		"  --flush-ms MS      with --live, flush every MS ms (default "
		"1000)\n"
		"  --progress FILE    with --live, counters in FILE (a "
		"MAP_SHARED page of u64:\n"
		"                     magic, appended, committed, flushes; per "
		"table)\n"
		"NCCL job (--table nccl; bench/synth_nccl.h has the model):\n"
		"  --nccl-ranks N     ranks in the job (default 8)\n"
		"  --nccl-host-ranks A-B  the ranks this host writes (default "
		"all)\n"
		"  --nccl-iters N     iterations (default 100)\n"
		"  --nccl-step-ms MS  iteration time, no rank late (default "
		"1000)\n"
		"  --nccl-jitter-us US  arrival spread of on-time ranks "
		"(default 200)\n"
		"  --nccl-late-rank R --nccl-late-ms MS  rank R enters "
		"collectives MS late\n"
		"  --nccl-late-every K  only every Kth collective (seq %% K == "
		"0; default 1)\n"
		"  --nccl-async       calls return after the enqueue; waits "
		"fall outside them\n"
		"GPUs (--table gpu: the gpu, gpu_process and gpu_event tables; "
		"bench/synth_gpu.h):\n"
		"  --gpus N           GPUs sampled once a second (default 8); "
		"with other\n"
		"                     tables, over the time they cover, else "
		"--events gpu rows\n"
		"A busy day of an 8-GPU host, every table (bench/synth_day.h; "
		"--table and\n"
		"--events are ignored):\n"
		"  --day SECONDS      its length; --rate sets the launches/s "
		"(default 30000)\n"
		"  --job-hosts N      hosts of the NCCL job (default 1), 8 ranks "
		"each\n"
		"  --host-index I     this host's ranks: 8 I .. 8 I + 7 (default "
		"0)\n"
		"                     Every stream's seed is --seed mixed with "
		"--host, but the\n"
		"                     job's is --seed alone: hosts given the same "
		"--seed and\n"
		"                     --start agree on its collectives\n");
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "gpurec-synth: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t num(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || !*s)
		die("bad %s", what);
	return v;
}

enum {
	O_RANKS = 256, O_HOST_RANKS, O_ITERS, O_STEP, O_JITTER, O_LATE_RANK,
	O_LATE_MS, O_LATE_EVERY, O_ASYNC, O_LIVE, O_FLUSH_MS, O_PROGRESS, O_GPUS,
	O_ROWS, O_OFFCPU_GAP,
	O_DAY, O_JOB_HOSTS, O_HOST_INDEX,
};

#define PROGRESS_MAGIC 0x7370726f67726570ull /* "pergorps" */

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --live: appends each table's stream at rate events a second of wall
 * clock (the events due so far, every millisecond) and flushes every
 * flush_ms, until killed or `events` per table are written.  The counters
 * live in a MAP_SHARED file page, so they outlast a kill -9: after the
 * kill, appended - what the store holds is what the kill lost, and
 * committed (stored with one aligned 8-byte write after a flush returns)
 * is what it must not have lost.  Returns 0 or -errno. */
static int run_live(struct gr_writer *w, struct gr_synth *s, const int *tables,
		    int ntables, double rate, int64_t flush_ms,
		    const char *progress, uint64_t events)
{
	volatile uint64_t *pg = NULL, dummy[4] = { 0 };
	if (progress) {
		/* stdio, not open(2): fcntl.h's O_ASYNC is an option here. */
		FILE *f = fopen(progress, "w+e");
		if (!f || ftruncate(fileno(f), 4096) < 0) {
			if (f)
				fclose(f);
			return -errno;
		}
		pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			  fileno(f), 0);
		fclose(f);
		if (pg == MAP_FAILED)
			return -errno;
		pg[0] = PROGRESS_MAGIC;
	} else {
		pg = dummy;
	}
	int64_t t0 = mono_ns(), next_flush = t0 + flush_ms * 1000000;
	uint64_t appended = 0;
	int err;
	for (;;) {
		int64_t now = mono_ns();
		uint64_t due = (uint64_t)((double)(now - t0) * rate / 1e9);
		if (events && due > events)
			due = events;
		if (due > appended) {
			for (int i = 0; i < ntables; i++)
				if ((err = gr_synth__write(s, tables[i],
							   due - appended, 0)))
					return err;
			appended = due;
			pg[1] = appended;
		}
		if (now >= next_flush || (events && appended == events)) {
			if ((err = gr_writer__flush(w)))
				return err;
			pg[2] = appended;
			pg[3]++;
			next_flush += flush_ms * 1000000;
			if (next_flush <= mono_ns())
				next_flush = mono_ns() + flush_ms * 1000000;
			if (events && appended == events)
				return 0;
		}
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
}

/* --rows FILE: appends the rows of FILE as they are, for tests that need
 * exact values in tables the generator does not fill (runq, cuda_mem).
 * A line is TABLE, then COL=VALUE fields, tab-separated (a value may hold
 * spaces); '#' starts a comment line.  Numbers take C's prefixes (0x...
 * for pointers); columns left out are NULL.  Returns 0 or -errno. */
/* Appends the rows of --rows FILE, sealing a segment after every
 * rotate_every of them (0: never). */
static int write_rows(struct gr_writer *w, const char *path,
		      uint64_t rotate_every)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int lineno = 0;
	uint64_t n = 0;

	if (!f)
		die("cannot open --rows %s", path);
	while (fgets(line, sizeof(line), f)) {
		int64_t v[GR_MAX_COLS] = { 0 };
		uint64_t nm = ~0ull;
		char *save, *tok = strtok_r(line, "\t\n", &save);
		int t;

		lineno++;
		if (!tok || *tok == '#')
			continue;
		if ((t = gr_table__find(tok)) < 0)
			die("--rows: no table %s", tok);
		const struct gr_table *tab = &gr_tables[t];
		while ((tok = strtok_r(NULL, "\t\n", &save))) {
			char *eq = strchr(tok, '=');
			int c;
			if (!eq)
				die("--rows: expected COL=VALUE, not %s", tok);
			*eq++ = 0;
			for (c = 0; c < tab->ncols; c++)
				if (!strcmp(tab->cols[c].name, tok))
					break;
			if (c == tab->ncols)
				die("--rows: no column %s", tok);
			if (tab->cols[c].type == GR_STR)
				v[c] = gr_writer__intern(w, eq, strlen(eq));
			else
				v[c] = (int64_t)strtoull(eq, NULL, 0);
			nm &= ~(1ull << c);
		}
		int err = gr_writer__append(w, t, v, nm);
		if (!err && rotate_every && ++n % rotate_every == 0)
			err = gr_writer__rotate(w);
		if (err) {
			fclose(f);
			fprintf(stderr, "gpurec-synth: --rows line %d: %s\n",
				lineno, strerror(-err));
			return err;
		}
	}
	fclose(f);
	return gr_writer__flush(w);
}

/* --nccl-host-ranks A-B or A. */
static void host_ranks(const char *arg, struct gr_synth_nccl *n)
{
	char lo[32];
	const char *dash = strchr(arg, '-');
	size_t len = dash ? (size_t)(dash - arg) : strlen(arg);
	if (len >= sizeof(lo))
		die("bad --nccl-host-ranks %s", arg);
	memcpy(lo, arg, len);
	lo[len] = 0;
	n->rank_lo = (int)num(lo, "--nccl-host-ranks");
	int hi = dash ? (int)num(dash + 1, "--nccl-host-ranks") : n->rank_lo;
	if (hi < n->rank_lo)
		die("bad --nccl-host-ranks %s", arg);
	n->host_ranks = hi - n->rank_lo + 1;
}

/* FNV-1a of a host name: --day's streams differ from host to host. */
static uint64_t host_hash(const char *h)
{
	uint64_t x = 0xcbf29ce484222325ull;
	for (; *h; h++)
		x = (x ^ (unsigned char)*h) * 0x100000001b3ull;
	return x;
}

/* --day: the whole day through one writer (bench/synth_day.h). */
static int busy_day(struct gr_store_opts *so, struct gr_synth_opts *sy,
		    struct gr_day_opts *day, uint64_t flush_every,
		    int late_rank)
{
	struct gr_writer_stats st;
	const char *why;
	if (day->host_index < 0 || day->host_index >= day->hosts)
		die("%s", "--host-index must be below --job-hosts");
	if (late_rank != (sy->nccl.late_ns > 0))
		die("%s", "--nccl-late-rank and --nccl-late-ms go together");
	day->job_seed = sy->seed;
	day->flush_every = flush_every;
	gr_day__synth_opts(day, sy);
	if ((why = gr_nccl_job__invalid(&sy->nccl)))
		die("%s", why);
	sy->seed ^= host_hash(so->host);
	so->no_immutable = 1;
	struct gr_writer *w = gr_writer__open(so);
	if (!w)
		die("cannot open %s", so->dir);
	struct gr_synth *s = gr_synth__new(w, sy);
	if (!s)
		die("out of memory%s", "");
	int err = gr_day__write(s, w, sy, day);
	gr_writer__stats(w, &st);
	gr_synth__free(s);
	if (err) {
		fprintf(stderr, "gpurec-synth: write failed: %s\n",
			strerror(-err));
		gr_writer__close(w);
		return 2;
	}
	if (gr_writer__close(w)) {
		fprintf(stderr, "gpurec-synth: close failed\n");
		return 2;
	}
	printf("wrote %" PRIu64 " events in %" PRIu64 " blocks\n", st.events,
	       st.blocks);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "data", 1, NULL, 'd' },      { "events", 1, NULL, 'n' },
		{ "table", 1, NULL, 't' },     { "host", 1, NULL, 'H' },
		{ "start", 1, NULL, 's' },     { "interval", 1, NULL, 'i' },
		{ "seed", 1, NULL, 'S' },      { "procs", 1, NULL, 'p' },
		{ "flush-every", 1, NULL, 'f' }, { "block-rows", 1, NULL, 'b' },
		{ "segment-size", 1, NULL, 'z' }, { "max-disk", 1, NULL, 'm' },
		{ "rotate-every", 1, NULL, 'r' }, { "help", 0, NULL, 'h' },
		{ "rate", 1, NULL, 'R' },       { "memcpy-every", 1, NULL, 'M' },
		{ "nccl-ranks", 1, NULL, O_RANKS },
		{ "nccl-host-ranks", 1, NULL, O_HOST_RANKS },
		{ "nccl-iters", 1, NULL, O_ITERS },
		{ "nccl-step-ms", 1, NULL, O_STEP },
		{ "nccl-jitter-us", 1, NULL, O_JITTER },
		{ "nccl-late-rank", 1, NULL, O_LATE_RANK },
		{ "nccl-late-ms", 1, NULL, O_LATE_MS },
		{ "nccl-late-every", 1, NULL, O_LATE_EVERY },
		{ "nccl-async", 0, NULL, O_ASYNC },
		{ "live", 1, NULL, O_LIVE },
		{ "flush-ms", 1, NULL, O_FLUSH_MS },
		{ "progress", 1, NULL, O_PROGRESS },
		{ "gpus", 1, NULL, O_GPUS },
		{ "rows", 1, NULL, O_ROWS },
		{ "offcpu-gap", 1, NULL, O_OFFCPU_GAP },
		{ "day", 1, NULL, O_DAY },
		{ "job-hosts", 1, NULL, O_JOB_HOSTS },
		{ "host-index", 1, NULL, O_HOST_INDEX },
		{ NULL, 0, NULL, 0 },
	};
	struct gr_store_opts so = { .host = "synthetic" };
	struct gr_synth_opts sy = { .seed = 1 };
	uint64_t events = 100000, flush_every = 65536, rotate_every = 0;
	int tables[8], ntables = 0, nccl = 0, events_given = 0, late_rank = 0,
	    gpu = 0, gpus = 8, c;
	uint64_t live = 0, flush_ms = 1000;
	const char *progress = NULL, *rows = NULL;
	struct gr_day_opts day = { .hosts = 1 };
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	sy.start_ns = ((int64_t)now.tv_sec - 3600) * 1000000000;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'd': so.dir = optarg; break;
		case 'n': events = num(optarg, "--events");
			  events_given = 1;
			  break;
		case 't':
			if (ntables == 8 || (tables[ntables] =
					     gr_table__find(optarg)) < 0)
				die("bad --table %s", optarg);
			if (tables[ntables] == GR_T_gpu_process ||
			    tables[ntables] == GR_T_gpu_event)
				die("%s comes with --table gpu", optarg);
			if (tables[ntables] == GR_T_gpu) {
				gpu = 1; /* written apart: see below */
				break;
			}
			nccl += tables[ntables++] == GR_T_nccl;
			break;
		case 'H': so.host = optarg; break;
		case 's':
			if (optarg[0] >= '0' && optarg[0] <= '9' &&
			    !strchr(optarg, '-'))
				sy.start_ns = (int64_t)num(optarg, "--start");
			else if (gr_parse_time(optarg, 0, &sy.start_ns))
				die("bad --start %s", optarg);
			break;
		case 'i': sy.interval_ns = (int64_t)num(optarg, "--interval");
			break;
		case 'S': sy.seed = num(optarg, "--seed"); break;
		case 'p': sy.nprocs = (int)num(optarg, "--procs"); break;
		case 'f': flush_every = num(optarg, "--flush-every"); break;
		case 'b': so.block_rows = (uint32_t)num(optarg, "--block-rows");
			break;
		case 'z':
			if (gr_parse_size(optarg, &so.segment_size))
				die("bad --segment-size %s", optarg);
			break;
		case 'm':
			if (gr_parse_size(optarg, &so.max_disk))
				die("bad --max-disk %s", optarg);
			break;
		case 'r': rotate_every = num(optarg, "--rotate-every"); break;
		case 'R': sy.rate = (double)num(optarg, "--rate"); break;
		case 'M': sy.memcpy_every = (int)num(optarg, "--memcpy-every");
			  break;
		case O_RANKS: sy.nccl.ranks = (int)num(optarg, "--nccl-ranks");
			      break;
		case O_HOST_RANKS: host_ranks(optarg, &sy.nccl); break;
		case O_ITERS: sy.nccl.iters = (int)num(optarg, "--nccl-iters");
			      break;
		case O_STEP:
			sy.nccl.step_ns = (int64_t)num(optarg, "--nccl-step-ms") *
					  1000000;
			break;
		case O_JITTER:
			sy.nccl.jitter_ns = (int64_t)num(optarg,
							 "--nccl-jitter-us") * 1000;
			if (!sy.nccl.jitter_ns)
				sy.nccl.jitter_ns = -1; /* none, not the default */
			break;
		case O_LATE_RANK:
			sy.nccl.late_rank = (int)num(optarg, "--nccl-late-rank");
			late_rank = 1;
			break;
		case O_LATE_MS:
			sy.nccl.late_ns = (int64_t)num(optarg, "--nccl-late-ms") *
					  1000000;
			break;
		case O_LATE_EVERY:
			sy.nccl.late_every = (int)num(optarg, "--nccl-late-every");
			if (!sy.nccl.late_every)
				die("bad %s", "--nccl-late-every");
			break;
		case O_ASYNC: sy.nccl.async = 1; break;
		case O_LIVE: live = num(optarg, "--live"); break;
		case O_FLUSH_MS: flush_ms = num(optarg, "--flush-ms"); break;
		case O_PROGRESS: progress = optarg; break;
		case O_GPUS: gpus = (int)num(optarg, "--gpus");
			     if (gpus < 1 || gpus > 256)
				     die("bad %s", "--gpus");
			     break;
		case O_ROWS: rows = optarg; break;
		case O_OFFCPU_GAP:
			sy.offcpu_gap_ns = (int64_t)num(optarg, "--offcpu-gap");
			if (sy.offcpu_gap_ns < 1)
				die("bad %s", "--offcpu-gap");
			break;
		case O_DAY: day.seconds = (int64_t)num(optarg, "--day");
			    if (!day.seconds)
				    die("bad %s", "--day");
			    break;
		case O_JOB_HOSTS: day.hosts = (int)num(optarg, "--job-hosts");
				  if (day.hosts < 1 || day.hosts > 1024)
					  die("bad %s", "--job-hosts");
				  break;
		case O_HOST_INDEX:
			day.host_index = (int)num(optarg, "--host-index");
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	/* Tests of a clock step (tests/faults/live_verify.sh): the writer's
	 * realtime clock jumps after its first rotation. */
	const char *step = getenv("GPUREC_TEST_CLOCK_STEP_NS");
	if (step)
		so.test_clock_step_ns = strtoll(step, NULL, 10);
	if (!so.dir || optind != argc) {
		usage(stderr);
		return 1;
	}
	if (day.seconds)
		return busy_day(&so, &sy, &day, flush_every, late_rank);
	if (rows && !ntables && !gpu)
		events = 0;
	else if (!ntables && !gpu)
		tables[ntables++] = GR_T_cuda_kernel;
	if (gpu)
		sy.gpus = gpus;
	if (late_rank != (sy.nccl.late_ns > 0))
		die("%s", "--nccl-late-rank and --nccl-late-ms go together");
	const char *why = nccl ? gr_nccl_job__invalid(&sy.nccl) : NULL;
	if (why)
		die("%s", why);
	so.no_immutable = 1; /* tests tamper with sealed files on purpose */
	struct gr_writer *w = gr_writer__open(&so);
	if (!w)
		die("cannot open %s", so.dir);
	struct gr_synth *s = gr_synth__new(w, &sy);
	if (!s || (nccl && gr_synth__nccl_rows(s) < 0))
		die("out of memory%s", "");
	if (nccl && nccl == ntables && !events_given)
		events = (uint64_t)gr_synth__nccl_rows(s);
	if (live) {
		if (nccl || gpu || !flush_ms)
			die("%s", "--live takes no nccl or gpu table, "
			    "--flush-ms > 0");
		if (run_live(w, s, tables, ntables, (double)live,
			     (int64_t)flush_ms, progress,
			     events_given ? events : 0)) {
			fprintf(stderr, "gpurec-synth: write failed\n");
			return 2;
		}
		events = 0; /* written */
	}
	for (uint64_t done = 0; done < events;) {
		uint64_t n = rotate_every ? rotate_every : events;
		if (n > events - done)
			n = events - done;
		for (int i = 0; i < ntables; i++)
			if (gr_synth__write(s, tables[i], n, flush_every)) {
				fprintf(stderr, "gpurec-synth: write failed\n");
				return 2;
			}
		/* The GPUs: alone, n gpu rows; else over the same time. */
		if (gpu && (ntables ? gr_synth__write_gpu_until(
					      s, gr_synth__last_ts(s), flush_every)
				    : gr_synth__write(s, GR_T_gpu, n,
						      flush_every))) {
			fprintf(stderr, "gpurec-synth: write failed\n");
			return 2;
		}
		done += n;
		if (rotate_every && done < events && gr_writer__rotate(w))
			die("rotate failed%s", "");
	}
	if (rows && write_rows(w, rows, rotate_every)) {
		fprintf(stderr, "gpurec-synth: write failed\n");
		return 2;
	}
	struct gr_writer_stats st;
	gr_writer__flush(w);
	gr_writer__stats(w, &st);
	gr_synth__free(s);
	if (gr_writer__close(w)) {
		fprintf(stderr, "gpurec-synth: close failed\n");
		return 2;
	}
	printf("wrote %" PRIu64 " events in %" PRIu64 " blocks\n", st.events,
	       st.blocks);
	return 0;
}
