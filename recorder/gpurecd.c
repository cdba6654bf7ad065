/* gpurecd.c - the recorder daemon: one libuv loop around the store.
 *
 * The loop owns everything, single-threaded: the CUDA probe family's ring
 * buffer (drained every 5 ms by the discovery timer, and at once through
 * its epoll fd on a uv_poll when an exec arrives or a quarter of it fills:
 * a wakeup per record would cost every traced launch a context switch),
 * the flush timer (blocks, drops, the status file, the systemd watchdog),
 * the discovery timer (processes that exec'd are scanned at once and again
 * as they load libraries), SIGINT/SIGTERM and --duration (flush, seal,
 * exit 0).  Writing a block is the only blocking work and runs once per
 * flush interval; the ring buffer absorbs bursts meanwhile, and what does
 * not fit is counted in `drops`, never waited for: a slow disk never
 * stalls the traced processes.  The one other thread is the loader of the
 * ELF cache that CUDA kernel naming and off-CPU stacks share
 * (recorder/sym/elfcache.h): it reads large libraries' symbols off the
 * loop.
 *
 * gpurecd opens no network socket: sd_notify uses an AF_UNIX datagram.
 * Once the probes are attached it sandboxes itself (recorder/sandbox.c):
 * no_new_privs, capabilities cut to what discovery needs, and a seccomp
 * filter that refuses every socket but AF_UNIX (libcrypto, which it
 * hashes and seals with, is initialised before).  It resolves no names
 * either: nothing here calls getpw*, getgr*, getaddrinfo or anything else
 * that goes through NSS (which could reach LDAP or DNS); a test checks
 * the binary's symbols (tests/host/sandbox.sh).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <glob.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <bpf/libbpf.h>

#include "recorder/config.h"
#include "recorder/cuda/family.h"
#include "recorder/gpu/gpu.h"
#include "recorder/host.h"
#include "recorder/sandbox.h"
#include "recorder/ulink.h"
#include "recorder/sym/elfcache.h"
#include "store/crypto.h"
#include "store/store.h"

#include "common/version.h"
#define DEFAULT_CONFIG "/etc/gpurec/gpurec.conf"

/* When an exec'd process is scanned again: libraries arrive by dlopen
 * after exec, often seconds later (Python importing torch). */
static const int rescan_ms[] = { 0, 20, 100, 500, 2000, 10000, 30000 };
#define NRESCAN (int)(sizeof(rescan_ms) / sizeof(rescan_ms[0]))
#define FULL_SCAN_MS 30000

struct rescan {
	int pid;
	int step;
	uint64_t due_ms;
};

static struct {
	struct gr_config cfg;
	struct gr_writer *w;
	struct gr_cuda *cuda;
	struct gr_host *host;
	struct gr_gpu *gpu;
	struct gr_elfcache *elfs; /* the families' one ELF cache */
	uv_loop_t *loop;
	uv_timer_t flush_timer, scan_timer, stop_timer;
	uv_signal_t sigint, sigterm;
	struct rescan *rescans;
	int nrescans, rescans_cap;
	uint64_t last_full_scan;
	int64_t started_ns;
	int64_t clock_offset_ns;
	int watchdog;
	int64_t flush_due_ns;	/* CLOCK_MONOTONIC: the next flush's start */
	int dirfd;		/* the data directory, for status.json */
	int exit_code;
	int stopping;
	uint64_t mem_limit;	/* the cgroup's memory.max; 0: none */
	uint64_t sheds;		/* times keep_small shed the caches */
	int64_t last_shed_ns;	/* CLOCK_MONOTONIC */
	int futile_sheds;	/* in a row, each leaving it over the mark */
} d;

/* The ELF cache's budget: PyTorch's libraries took 8.4 MiB on the H100. */
#define ELF_CACHE_BUDGET (64 << 20)
/* Shedding again within this would only read the files again. */
#define SHED_EVERY_NS (10 * 1000000000ll)

static void logf_(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "gpurecd: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void store_log(void *ctx, const char *line)
{
	(void)ctx;
	logf_("%s", line);
}

static int libbpf_log(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_DEBUG || (!d.cfg.verbose && lvl == LIBBPF_INFO))
		return 0;
	fprintf(stderr, "gpurecd: libbpf: ");
	return vfprintf(stderr, fmt, ap);
}

static int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- sd_notify over AF_UNIX, without libsystemd --------------------------- */

static void sd_notify_(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0; /* abstract namespace */
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				    strlen(path));
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   len) < 0 && d.cfg.verbose)
		logf_("sd_notify: %s", strerror(errno));
	close(fd);
}

/* ---- status file ------------------------------------------------------------ */

/* @s as a JSON string's contents: quotes, backslashes and control
 * characters escaped (a data directory's name may hold any of them). */
static void json_chars(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

struct drops_out {
	FILE *f;
	int first;
};

static int status_drop(void *ctx, const char *source, uint64_t n)
{
	struct drops_out *o = ctx;
	fprintf(o->f, "%s\"", o->first ? "" : ",");
	json_chars(o->f, source);
	fprintf(o->f, "\":%" PRIu64, n);
	o->first = 0;
	return 0;
}

/* gpurecd's resident and peak resident memory (VmRSS, VmHWM), bytes; 0
 * where /proc says nothing. */
static void self_rss(uint64_t *rss, uint64_t *hwm)
{
	char line[128];
	unsigned long long kb;
	FILE *f = fopen("/proc/self/status", "re");
	*rss = *hwm = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			*rss = (uint64_t)kb << 10;
		else if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			*hwm = (uint64_t)kb << 10;
	}
	fclose(f);
}

/* What gpurecd holds now: resident and peak, its memory limit, and the
 * parts it can name (docs/status.md, "memory"). */
struct memory {
	uint64_t rss, hwm, limit, heap, bpf_maps;
	uint64_t elf_bytes, elf_evicted, names, names_bytes, writer;
	int elf_files, elf_read;
};

/* The bytes of BPF maps mapped into gpurecd that are resident (the ring
 * buffers: the kernel maps each one's data twice, back to back, and RSS
 * counts both), from /proc/self/smaps. */
static uint64_t bpf_maps_rss(void)
{
	char line[256];
	unsigned long long kb;
	uint64_t sum = 0;
	int in_bpf = 0;
	FILE *f = fopen("/proc/self/smaps", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ':') &&
		    isxdigit((unsigned char)line[0]) && !strchr(line, '\t'))
			in_bpf = strstr(line, "bpf-map") != NULL ||
				 strstr(line, "bpf_ringbuf") != NULL;
		else if (in_bpf && sscanf(line, "Rss: %llu kB", &kb) == 1)
			sum += (uint64_t)kb << 10;
	}
	fclose(f);
	return sum;
}

/* The memory limit of gpurecd's own cgroup (the unit's MemoryMax=):
 * cgroup v2's memory.max, or v1's memory.limit_in_bytes; 0 if none. */
static uint64_t cgroup_limit(void)
{
	char line[512], path[600];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return 0;
	path[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		const char *c = strchr(line, ':');
		const char *p = c ? strchr(c + 1, ':') : NULL;
		if (!p)
			continue;
		if (!strncmp(line, "0::", 3) && !path[0])
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max",
				 p + 1);
		else if (!strncmp(c + 1, "memory:", 7))
			snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/"
				 "memory.limit_in_bytes", p + 1);
	}
	fclose(f);
	if (!path[0] || !(f = fopen(path, "re")))
		return 0;
	if (fscanf(f, "%llu", &v) != 1 || v >= 1ull << 62) /* "max", none */
		v = 0;
	fclose(f);
	return v;
}

static void memory_now(struct memory *m)
{
	*m = (struct memory){ .limit = d.mem_limit, .bpf_maps = bpf_maps_rss() };
	self_rss(&m->rss, &m->hwm);
	struct mallinfo2 mi = mallinfo2();
	m->heap = mi.uordblks + mi.hblkhd;
	struct gr_writer_stats ws;
	gr_writer__stats(d.w, &ws);
	m->writer = ws.buffer_bytes;
	if (d.elfs) {
		struct gr_elfcache_usage u;
		gr_elfcache__usage(d.elfs, &u);
		m->elf_files = u.files;
		m->elf_read = u.read;
		m->elf_bytes = u.bytes;
		m->elf_evicted = u.evicted;
	}
	if (d.cuda) {
		struct gr_cuda_stats cs;
		gr_cuda__stats(d.cuda, &cs);
		m->names = cs.names;
		m->names_bytes = cs.names_bytes;
	}
}

/* status.json's "memory". */
static void render_memory(FILE *f)
{
	struct memory m;
	memory_now(&m);
	fprintf(f, "\"memory\":{\"rss_bytes\":%" PRIu64 ",\"peak_rss_bytes\":%"
		PRIu64 ",\"limit_bytes\":%" PRIu64 ",\"heap_bytes\":%" PRIu64
		",\"bpf_maps_bytes\":%" PRIu64 ",\"writer_bytes\":%" PRIu64
		",\"elf_cache_files\":%d,"
		"\"elf_cache_read\":%d,\"elf_cache_bytes\":%" PRIu64
		",\"elf_cache_evicted\":%" PRIu64 ",\"kernel_names\":%" PRIu64
		",\"kernel_names_bytes\":%" PRIu64 ",\"sheds\":%" PRIu64 "},",
		m.rss, m.hwm, m.limit, m.heap, m.bpf_maps, m.writer, m.elf_files,
		m.elf_read, m.elf_bytes, m.elf_evicted, m.names, m.names_bytes,
		d.sheds);
}

/* Keeps the ELF cache within its budget, and sheds it whole (with
 * malloc's free pages) when gpurecd nears its memory limit: a cache is
 * read again, a process killed by the OOM killer records nothing.  Called
 * from the event loop between callbacks (elfcache.h). */
static void keep_small(void)
{
	uint64_t freed = 0, rss, hwm;
	if (!d.elfs)
		return;
	int n = gr_elfcache__trim(d.elfs, ELF_CACHE_BUDGET, &freed);
	if (n && d.cfg.verbose)
		logf_("memory: the ELF cache forgot %d files (%.1f MiB) past "
		      "its %d MiB", n, (double)freed / 1048576,
		      ELF_CACHE_BUDGET >> 20);
	if (!d.mem_limit)
		return;
	self_rss(&rss, &hwm);
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	/* A shed that left gpurecd over the mark (its memory is elsewhere:
	 * a limit set too low) doubles the wait for the next one, up to
	 * 64 times: each reads the cache's files again. */
	int64_t wait = SHED_EVERY_NS << (d.futile_sheds > 1 ?
		(d.futile_sheds - 1 < 6 ? d.futile_sheds - 1 : 6) : 0);
	if (rss <= d.mem_limit / 4 * 3) {
		d.futile_sheds = 0;
		return;
	}
	if (d.last_shed_ns && now - d.last_shed_ns < wait)
		return;
	d.last_shed_ns = now;
	d.sheds++;
	n = gr_elfcache__trim(d.elfs, 0, &freed);
	malloc_trim(0);
	uint64_t after;
	self_rss(&after, &hwm);
	d.futile_sheds = after > d.mem_limit / 4 * 3 ? d.futile_sheds + 1 : 0;
	logf_("memory: RSS %.1f MiB is over 3/4 of the limit (%.1f MiB): shed "
	      "the ELF cache, %d files, %.1f MiB; RSS now %.1f MiB (shed %"
	      PRIu64 ")", (double)rss / 1048576, (double)d.mem_limit / 1048576,
	      n, (double)freed / 1048576, (double)after / 1048576, d.sheds);
}

/* status.json's "retention": the budgets in force (auto sizes resolved),
 * the deletions for age, and the budget the directory stays over because
 * min-age keeps its oldest segment (docs/storage.md, "Retention"). */
static void render_retention(FILE *f, const struct gr_writer_stats *ws)
{
	fprintf(f, "\"retention\":{\"max_disk\":%" PRIu64 ",\"keep_free\":%"
		PRIu64 ",\"max_age_ns\":%" PRId64 ",\"min_age_ns\":%" PRId64
		",\"deleted_max_age\":%" PRIu64 ",\"over_budget\":",
		d.cfg.max_disk, d.cfg.keep_free, d.cfg.max_age_ns,
		d.cfg.min_age_ns, ws->deleted_max_age);
	if (ws->over_budget)
		fprintf(f, "\"%s\"},", ws->over_budget);
	else
		fprintf(f, "null},");
}

/* DIR/status.json: what `gpurec status` shows about the recorder. Written
 * to a temporary file and renamed, so readers never see half of it; the
 * temporary file is made with O_EXCL|O_NOFOLLOW relative to the data
 * directory's fd (after removing a stale one), so a link planted under
 * its name by the directory's owner is never written through, and only
 * that new file is given to the owner. */
static void render_status(FILE *f, const char *state)
{
	struct gr_writer_stats ws;
	struct gr_cuda_stats cs = { 0 };
	gr_writer__stats(d.w, &ws);
	if (d.cuda)
		gr_cuda__stats(d.cuda, &cs);
	fprintf(f, "{\"state\":\"%s\",\"pid\":%d,\"version\":\"%s\","
		"\"started_ns\":%" PRId64 ",\"updated_ns\":%" PRId64 ","
		"\"segment\":\"", state, getpid(), GPUREC_VERSION, d.started_ns,
		clock_ns(CLOCK_REALTIME));
	json_chars(f, gr_writer__segment_path(d.w));
	fprintf(f, "\",\"events\":%" PRIu64 ",\"blocks\":%" PRIu64
		",\"segments_sealed\":%" PRIu64 ",\"segments_deleted\":%" PRIu64
		",\"disk_bytes\":%" PRIu64 ",", ws.events, ws.blocks,
		ws.segments, ws.deleted, ws.disk_bytes);
	render_retention(f, &ws);
	fprintf(f, "\"cuda\":{\"enabled\":%s,"
		"\"records\":%" PRIu64 ",\"rows\":%" PRIu64 ",\"files\":%" PRIu64
		",\"probes\":%" PRIu64 ",\"named_launches\":%" PRIu64
		",\"unnamed_launches\":%" PRIu64
		",\"handle_names\":%" PRIu64 "},\"host\":{",
		d.cuda ? "true" : "false", cs.records, cs.rows,
		cs.files_attached, cs.probes, cs.named_launches,
		cs.unnamed_launches, cs.handles_read);
	/* The host unit's families, in families.def's order. */
#define GR_FAMILY(name, unit, status)                                          \
	GR_UNIT_##unit(fprintf(f, "\"%s\":%s,", status,                          \
			       gr_host__running(d.host, GR_FAM_##name) ?       \
			       "true" : "false");)
#include "recorder/families.def"
	fprintf(f, "\"switch_ins_recovered\":%" PRIu64
		   ",\"wakeups_unseen\":%" PRIu64 "},",
		gr_host__sched_counter(d.host, GR_SCHED_RECOVERED),
		gr_host__sched_counter(d.host, GR_SCHED_WAKEUPS_UNSEEN));
	struct gr_gpu_stats gs = { 0 };
	if (d.gpu)
		gr_gpu__stats(d.gpu, &gs);
	fprintf(f, "\"gpu\":{\"enabled\":%s,\"devices\":%d,\"lost\":%d,"
		"\"driver\":\"", d.gpu ? "true" : "false", gs.devices, gs.lost);
	json_chars(f, gs.driver);
	fprintf(f, "\",\"samples\":%" PRIu64 ",\"process_rows\":%" PRIu64
		",\"events\":%" PRIu64 ",\"sample_ns\":%" PRIu64 "},",
		gs.samples, gs.process_rows, gs.events, gs.sample_ns);
	render_memory(f);
	fprintf(f, "\"drops_pending\":%" PRIu64 ",\"drops\":{",
		ws.drops_pending);
	/* Every source counted since start: the probe families' ring
	 * buffers and user space, and the store's own losses. */
	struct drops_out o = { f, 1 };
	gr_writer__drops(d.w, status_drop, &o);
	fprintf(f, "}}\n");
}

/* On a disk too full for a new file, status.json is overwritten in place
 * (opened without following a link, checked: a plain file, one link), the
 * rest padded with blanks: the pages it has are reused, and the loss it
 * reports is the one thing that must still be seen.  A reader may catch
 * it half written, and reads "unreadable" for that moment. */
static void write_status_in_place(const char *text, size_t len)
{
	struct stat sb;
	int fd = openat(d.dirfd, "status.json", O_WRONLY | O_NOFOLLOW |
				  O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	/* Longer than the file is tried too: its last page may hold it. */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink == 1) {
		char pad[256];
		off_t off = (off_t)len;
		memset(pad, ' ', sizeof(pad));
		if (pwrite(fd, text, len, 0) == (ssize_t)len)
			while (off < sb.st_size - 1) {
				size_t n = (size_t)(sb.st_size - 1 - off);
				n = n < sizeof(pad) ? n : sizeof(pad);
				if (pwrite(fd, pad, n, off) < 0)
					break;
				off += (off_t)n;
			}
	}
	close(fd);
}

static void write_status(const char *state)
{
	static const char tmp[] = "status.json.tmp";
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return;
	render_status(m, state);
	if (fclose(m) != 0) {
		free(text);
		return;
	}
	if (unlinkat(d.dirfd, tmp, 0) < 0 && errno != ENOENT) {
		free(text);
		return;
	}
	int fd = openat(d.dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
				      O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		/* As the store does with its files: root recording into
		 * another user's directory gives the file to that user. */
		struct stat dst;
		if (geteuid() == 0 && fstat(d.dirfd, &dst) == 0 &&
		    dst.st_uid != 0 && fchown(fd, dst.st_uid, dst.st_gid) < 0)
			logf_("%s/%s: cannot give it to uid %u: %s",
			      d.cfg.data_dir, tmp, (unsigned)dst.st_uid,
			      strerror(errno));
	}
	errno = 0;
	if (fd >= 0 && write(fd, text, len) == (ssize_t)len &&
	    fsync(fd) == 0 &&
	    renameat(d.dirfd, tmp, d.dirfd, "status.json") == 0) {
		close(fd);
		free(text);
		return;
	}
	int err = errno;
	if (fd >= 0) {
		close(fd);
		unlinkat(d.dirfd, tmp, 0);
	}
	if (err == ENOSPC || err == EDQUOT)
		write_status_in_place(text, len);
	free(text);
}

/* ---- loop callbacks ----------------------------------------------------------- */

static void flush_if_due(void);

/* The units of recorder/families.def, each opened, polled through its
 * ring buffers' epoll fd, flushed and closed by the loop: in this order,
 * but opened last to first, as the host families must be there for the
 * CUDA family's track-pid callback (track_pid). */
struct unit {
	const char *name;
	int (*open)(void);	/* 0, or -1: logged, the others go on */
	int (*fd)(void);
	int (*poll)(void);
	void (*flush)(int64_t now_ns);
	void (*close)(void);
	int rings;		/* BPF ring buffers: drained on a timer too */
	int open_;
	uv_poll_t poll_h;
};

static int open_host(void);
static int open_cuda(void);
static int open_gpu(void);
static int gpu_fd(void) { return gr_gpu__fd(d.gpu); }
static int gpu_poll(void) { return gr_gpu__poll(d.gpu); }
static void gpu_flush(int64_t now) { gr_gpu__flush(d.gpu, now, d.stopping); }
static void gpu_close(void) { gr_gpu__close(d.gpu); }
static int cuda_fd(void) { return gr_cuda__fd(d.cuda); }
static int cuda_poll(void) { return gr_cuda__poll(d.cuda); }
static void cuda_close(void) { gr_cuda__close(d.cuda); }
static int host_fd(void) { return gr_host__fd(d.host); }
static int host_poll(void) { return gr_host__poll(d.host); }
static void host_flush(int64_t now)
{
	gr_host__flush(d.host, now, d.stopping);
}
static void host_close(void) { gr_host__close(d.host); }

static void cuda_flush(int64_t now)
{
	gr_cuda__poll(d.cuda);
	gr_cuda__report_drops(d.cuda, now);
}

static struct unit units[] = {
	{ .name = "cuda", .open = open_cuda, .fd = cuda_fd, .poll = cuda_poll,
	  .flush = cuda_flush, .close = cuda_close, .rings = 1 },
	{ .name = "host", .open = open_host, .fd = host_fd, .poll = host_poll,
	  .flush = host_flush, .close = host_close, .rings = 1 },
	{ .name = "gpu", .open = open_gpu, .fd = gpu_fd, .poll = gpu_poll,
	  .flush = gpu_flush, .close = gpu_close },
};
#define NUNITS (int)(sizeof(units) / sizeof(units[0]))

static void on_unit(uv_poll_t *h, int status, int events)
{
	struct unit *u = h->data;
	(void)events;
	if (status < 0)
		return;
	int n = u->poll();
	if (n < 0 && n != -EINTR)
		logf_("%s: ring buffer: %s", u->name, strerror(-n));
	flush_if_due();
}

/* The CUDA family's one hook into the host families: a process that maps
 * a CUDA library, enters cuInit or makes a recorded call is traced by them
 * from then on (its scheduling, files, `process` row). */
static void track_pid(void *ctx, uint32_t pid)
{
	(void)ctx;
	gr_host__track(d.host, pid);
}

static void flush_all(void)
{
	for (int i = 0; i < NUNITS; i++)
		if (units[i].open_)
			units[i].flush(clock_ns(CLOCK_REALTIME));
	int err = gr_writer__flush(d.w);
	if (err)
		logf_("flush to %s failed: %s", d.cfg.data_dir, strerror(-err));
}

/* Flushes on a deadline, not on a repeating timer: a kill -9 loses what
 * came after the start of the last flush that finished, so a flush must
 * start at most one interval after the one before it did, less the time
 * a flush takes.  A repeating uv timer slips: it runs only between loop
 * iterations, after every ring-buffer callback of the iteration (a drain
 * that fills and encodes blocks can take a long time under load), and
 * the flush's own duration comes on top.  So the deadline is also checked
 * after each drain (flush_if_due), and the next one is set from this
 * flush's start minus its duration. */
static void on_flush(uv_timer_t *t)
{
	(void)t;
	int64_t interval = d.cfg.flush_interval_ns;
	int64_t start = clock_ns(CLOCK_MONOTONIC);
	flush_all();
	keep_small();
	write_status("recording");
	if (d.watchdog)
		sd_notify_("WATCHDOG=1");
	int64_t took = clock_ns(CLOCK_MONOTONIC) - start;
	if (took > interval / 2)
		took = interval / 2;
	d.flush_due_ns = start + interval - took;
	int64_t wait = d.flush_due_ns - clock_ns(CLOCK_MONOTONIC);
	/* At least 1 ms: libuv (1.44) runs every timer due at the loop's
	 * time, which it does not advance while it runs them, so a timer
	 * started again for 0 ms from its own callback ran again at once,
	 * forever where each flush took half an interval or more (ASan and
	 * strace, --flush-interval 100): the loop never reached --duration's
	 * timer, SIGTERM or the ring buffers. */
	uv_timer_start(&d.flush_timer, on_flush,
		       wait >= 2000000 ? (uint64_t)(wait / 1000000) : 1, 0);
}

static void flush_if_due(void)
{
	if (!d.stopping && d.flush_due_ns &&
	    clock_ns(CLOCK_MONOTONIC) >= d.flush_due_ns)
		on_flush(&d.flush_timer);
}

static void schedule_rescan(int pid, int step)
{
	if (step >= NRESCAN)
		return;
	if (d.nrescans == d.rescans_cap) {
		int cap = d.rescans_cap ? d.rescans_cap * 2 : 64;
		void *p = realloc(d.rescans, (size_t)cap * sizeof(*d.rescans));
		if (!p)
			return;
		d.rescans = p;
		d.rescans_cap = cap;
	}
	d.rescans[d.nrescans++] = (struct rescan){
		pid, step, uv_now(d.loop) + (uint64_t)rescan_ms[step] };
}

static void on_scan(uv_timer_t *t)
{
	(void)t;
	uint64_t now = uv_now(d.loop);
	int pids[256], n;
	if (d.host)
		gr_host__poll(d.host);
	flush_if_due();
	if (!d.cuda)
		return;
	/* Draining first delivers the exec records waiting. */
	gr_cuda__poll(d.cuda);
	while ((n = gr_cuda__take_execs(d.cuda, pids, 256)) > 0)
		for (int i = 0; i < n; i++)
			schedule_rescan(pids[i], 0);
	gr_cuda__retry(d.cuda);
	for (int i = 0; i < d.nrescans;) {
		struct rescan r = d.rescans[i];
		if (r.due_ms > now) {
			i++;
			continue;
		}
		d.rescans[i] = d.rescans[--d.nrescans];
		if (gr_cuda__scan_pid(d.cuda, r.pid) != -ESRCH)
			schedule_rescan(r.pid, r.step + 1);
	}
	if (now - d.last_full_scan >= FULL_SCAN_MS) {
		gr_cuda__scan_all(d.cuda);
		d.last_full_scan = now;
	}
}

static void stop(const char *why)
{
	if (d.stopping)
		return;
	d.stopping = 1;
	logf_("%s: flushing and sealing", why);
	sd_notify_("STOPPING=1");
	uv_stop(d.loop);
}

static void on_signal(uv_signal_t *s, int signum)
{
	(void)s;
	stop(signum == SIGINT ? "SIGINT" : "SIGTERM");
}

/* A SIGINT or SIGTERM that came before libuv's handlers were installed
 * (opening the store, loading and attaching the families). */
static volatile sig_atomic_t early_signal;

static void on_early_signal(int signum)
{
	early_signal = signum;
}

/* From the first line of main on, a stop signal is kept, never acted on
 * by the default action (which would leave the segment unsealed). */
static void catch_early_signals(void)
{
	struct sigaction sa = { .sa_handler = on_early_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void on_stop_timer(uv_timer_t *t)
{
	(void)t;
	stop("--duration elapsed");
}

/* ---- setup ------------------------------------------------------------------ */

/* journald's defaults: max-disk 10 %, keep-free 15 % of the file system,
 * each capped at 4 GiB. */
static void resolve_auto_sizes(void)
{
	struct statvfs sv;
	if (statvfs(d.cfg.data_dir, &sv) < 0)
		return;
	gr_config__resolve_auto(&d.cfg, (uint64_t)sv.f_blocks * sv.f_frsize);
}

/* Places where CUDA libraries live before any process maps them, so that
 * processes started later are covered from their first call. */
static void attach_known_paths(void)
{
	/* The driver first: once one is attached, the runtime's launch
	 * entry points are left to it (recorder/cuda/cuda.c). */
	static const char *const globs[] = {
		"/usr/lib/x86_64-linux-gnu/libcuda.so*",
		"/usr/lib64/libcuda.so*",
		"/usr/local/nvidia/lib64/libcuda.so*",
		"/usr/local/cuda*/lib64/libcudart.so*",
		"/usr/local/cuda*/targets/*/lib/libcudart.so*",
		"/usr/lib/x86_64-linux-gnu/libcudart.so*",
		"/usr/local/cuda*/lib64/libnccl.so*",
		"/usr/lib/x86_64-linux-gnu/libnccl.so*",
	};
	for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++) {
		glob_t g = { 0 };
		if (glob(globs[i], 0, NULL, &g) == 0)
			for (size_t k = 0; k < g.gl_pathc; k++)
				gr_cuda__attach_path(d.cuda, g.gl_pathv[k]);
		globfree(&g);
	}
	for (int i = 0; i < d.cfg.ncuda_libs; i++) {
		int r = gr_cuda__attach_path(d.cuda, d.cfg.cuda_libs[i]);
		if (r < 0)
			logf_("--cuda-lib %s: %s", d.cfg.cuda_libs[i],
			      strerror(-r));
		else if (r == 0)
			logf_("--cuda-lib %s: no CUDA entry points found (or "
			      "attached already)", d.cfg.cuda_libs[i]);
	}
}

/* The options: -1 to go on, or the exit code (--help, --version,
 * --check-config, a bad option). */
static int options(int argc, char **argv)
{
	char err[512];
	if (gr_config__load(&d.cfg, argc, argv, DEFAULT_CONFIG, err,
			    sizeof(err))) {
		fprintf(stderr, "gpurecd: %s\n", err);
		return 1;
	}
	if (d.cfg.help) {
		gr_config__usage(stdout);
		return 0;
	}
	if (d.cfg.version) {
		printf("gpurecd %s\n", GPUREC_VERSION);
		return 0;
	}
	if (d.cfg.check_config) {
		gr_config__print(&d.cfg, stdout);
		/* A warning, not a failure: the directory may be a mount
		 * or made by tmpfiles after the check. */
		if (gr_config__check_data_dir(&d.cfg, err, sizeof(err)))
			fprintf(stderr, "gpurecd: warning: %s\n", err);
		return 0;
	}
	return -1;
}

/* libcrypto, the data directory and the writer.  Returns 0 or the exit
 * code. */
static int open_store(void)
{
	struct gr_store_opts so = {
		.dir = d.cfg.data_dir,
		.segment_size = d.cfg.segment_size,
		.segment_age_ns = d.cfg.segment_age_ns,
		.max_age_ns = d.cfg.max_age_ns,
		.min_age_ns = d.cfg.min_age_ns,
		.log = store_log,
	};
	/* libcrypto loads its configuration and providers (the FIPS module
	 * where the host's openssl.cnf names it) and seeds its DRBG now:
	 * the sandbox comes later, and the store hashes and seals with it.
	 * A recorder that cannot hash its evidence does not start. */
	if (gr_crypto__init()) {
		char cerr[256];

		logf_("cannot initialise libcrypto (%s): %s",
		      gr_crypto__version(), gr_crypto__error(cerr, sizeof(cerr)));
		return 2;
	}
	/* Which module hashes and seals: for the record (docs/security.md). */
	logf_("libcrypto: %s (FIPS mode %s)", gr_crypto__version(),
	      gr_crypto__fips() ? "on" : "off");
	if (mkdir(d.cfg.data_dir, 0750) < 0 && errno != EEXIST) {
		logf_("cannot create %s: %s", d.cfg.data_dir, strerror(errno));
		return 1;
	}
	resolve_auto_sizes();
	so.max_disk = d.cfg.max_disk;
	so.keep_free = d.cfg.keep_free;
	d.w = gr_writer__open(&so);
	if (!d.w) {
		logf_("cannot open the data directory %s: %s", d.cfg.data_dir,
		      strerror(errno));
		return errno == EBUSY ? 1 : 2;
	}
	d.dirfd = open(d.cfg.data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.dirfd < 0) {
		logf_("cannot open the data directory %s: %s", d.cfg.data_dir,
		      strerror(errno));
		gr_writer__close(d.w);
		return 2;
	}
	logf_("recording to %s (segment %s, max-disk %" PRIu64 " MiB, "
	      "keep-free %" PRIu64 " MiB, max-age %" PRId64 " s, min-age %"
	      PRId64 " s)", d.cfg.data_dir, gr_writer__segment_path(d.w),
	      d.cfg.max_disk >> 20, d.cfg.keep_free >> 20,
	      d.cfg.max_age_ns / 1000000000, d.cfg.min_age_ns / 1000000000);
	return 0;
}

/* The host unit, if any BPF family that can be turned off is on (proc
 * only runs with them: the gpu family needs no process table). */
static int open_host(void)
{
	struct gr_host_opts ho = {
		.w = d.w, .log = logf_,
		.clock_offset_ns = d.clock_offset_ns,
		.verbose = d.cfg.verbose,
		.trace_all = d.cfg.sched_all,
		.offcpu_min_ns = d.cfg.offcpu_min_ns,
		.runq_min_ns = d.cfg.runq_min_ns,
		.file_io_min_ns = d.cfg.file_io_min_ns,
		.elfs = d.elfs,
	};
	int any = 0;
#define GR_FAMILY_KEY(name, key, field, help)                                  \
	ho.off[GR_FAM_##name] = d.cfg.field;                                   \
	if (gr_families[GR_FAM_##name].procs)                                  \
		any |= !d.cfg.field;
#include "recorder/families.def"
	if (!any)
		return -1;
	if (!(d.host = gr_host__open(&ho))) {
		logf_("host: probe families disabled (see above); "
		      "other families continue");
		return -1;
	}
	return 0;
}

static int open_cuda(void)
{
	if (d.cfg.no_cuda)
		return -1;
	struct gr_cuda_opts co = { .w = d.w, .log = logf_,
				   .clock_offset_ns = d.clock_offset_ns,
				   .verbose = d.cfg.verbose,
				   .on_pid = d.host ? track_pid : NULL,
				   .tracked_fd = gr_host__tracked_fd(d.host),
				   .elfs = d.elfs };
	if (!(d.cuda = gr_cuda__open(&co))) {
		logf_("cuda: probe family disabled (see above); other "
		      "families continue");
		return -1;
	}
	attach_known_paths();
	int n = gr_cuda__scan_all(d.cuda);
	d.last_full_scan = uv_now(d.loop);
	logf_("cuda: %d probes attached after scanning running "
	      "processes", n);
	return 0;
}

/* The gpu family: NVML's threads and the kernel log (opened before the
 * sandbox, which takes CAP_SYSLOG away). */
static int open_gpu(void)
{
	if (d.cfg.no_gpu)
		return -1;
	struct gr_gpu_opts go = { .w = d.w, .log = logf_,
				  .clock_offset_ns = d.clock_offset_ns,
				  .sample_ns = d.cfg.gpu_sample_ns,
				  .verbose = d.cfg.verbose, .dirfd = d.dirfd,
				  .kmsg = "/dev/kmsg" };
	const char *k = getenv("GPURECD_KMSG"); /* tests: another file */
	if (k)
		go.kmsg = *k ? k : NULL;
	return (d.gpu = gr_gpu__open(&go)) ? 0 : -1;
}

/* The ELF cache the CUDA family (kernel naming) and the sched family
 * (off-CPU stacks) share, if either is wanted: one loader thread, started
 * here, before the sandbox, which cuts its capabilities with the main
 * thread's (recorder/sandbox.c); freed in finish(), after the families.
 * Without it, CUDA reads files on the loop and stacks go unnamed. */
static void open_elfcache(void)
{
	const char *from = "--memory-max";
	if (d.cfg.memory_max_auto || !(d.mem_limit = d.cfg.memory_max)) {
		d.mem_limit = cgroup_limit();
		from = "its cgroup's";
	}
	if (d.mem_limit)
		logf_("memory: limit %.1f MiB (%s): over 3/4 of it, caches "
		      "are shed", (double)d.mem_limit / 1048576, from);
	if (d.cfg.no_cuda && d.cfg.no_sched)
		return;
	if (!(d.elfs = gr_elfcache__new(1)))
		logf_("cannot start the ELF loader thread (%s): CUDA kernel "
		      "names are read on the event loop, off-CPU stacks' user "
		      "frames go unnamed", strerror(errno));
}

static void open_families(void)
{
	int any = 0;
	open_elfcache();
	for (int i = NUNITS - 1; i >= 0; i--) {
		struct unit *u = &units[i];
		if (u->open())
			continue;
		u->open_ = 1;
		any |= u->rings;
		u->poll_h.data = u;
		uv_poll_init(d.loop, &u->poll_h, u->fd());
		uv_poll_start(&u->poll_h, UV_READABLE, on_unit);
	}
	if (any) { /* drains the ring buffers every 5 ms (not gpu's queue:
		    * its eventfd says when) */
		uv_timer_init(d.loop, &d.scan_timer);
		uv_timer_start(&d.scan_timer, on_scan, 5, 5);
	}
}

static void start_timers(void)
{
	uint64_t flush_ms = (uint64_t)(d.cfg.flush_interval_ns / 1000000);
	uv_timer_init(d.loop, &d.flush_timer);
	d.flush_due_ns = clock_ns(CLOCK_MONOTONIC) + d.cfg.flush_interval_ns;
	uv_timer_start(&d.flush_timer, on_flush, flush_ms, 0);
	uv_signal_init(d.loop, &d.sigint);
	uv_signal_start(&d.sigint, on_signal, SIGINT);
	uv_signal_init(d.loop, &d.sigterm);
	uv_signal_start(&d.sigterm, on_signal, SIGTERM);
	if (d.cfg.duration_ns > 0) {
		uv_timer_init(d.loop, &d.stop_timer);
		uv_timer_start(&d.stop_timer, on_stop_timer,
			       (uint64_t)(d.cfg.duration_ns / 1000000), 0);
	}
}

/* Everything that needed more than the kept capabilities is done:
 * kallsyms is read, the BPF objects are loaded, the probes are attached.
 * A daemon that cannot sandbox itself stops rather than record
 * unconfined. */
static void sandbox_and_run(void)
{
	struct gr_sandbox_opts sb = { .log = logf_, .data_dir = d.cfg.data_dir };
	/* Links detached in the background at start (the runtime's launch
	 * probes, once a driver took over) finish first: the sandbox then
	 * meets only gpurecd's lasting threads, and no thread is born with
	 * the capabilities it is cutting. */
	gr_ulinks__wait();
	if (gr_sandbox__apply(&sb) < 0) {
		logf_("cannot sandbox gpurecd (see above); stopping");
		d.exit_code = 2;
		return;
	}
	/* Test hook (docs/recorder.md): try what the sandbox refuses. */
	const char *st = getenv("GPURECD_SANDBOX_SELFTEST");
	if (st && strcmp(st, "1") == 0)
		gr_sandbox__selftest(logf_);
	d.watchdog = getenv("WATCHDOG_USEC") != NULL;
	write_status("recording");
	sd_notify_("READY=1");
	logf_("ready");

	uv_run(d.loop, UV_RUN_DEFAULT);
}

/* Flush, seal, then the probes.  Returns the exit code. */
static int finish(void)
{
	d.stopping = 1; /* the last flush, whatever ended the loop */
	flush_all();
	write_status("stopped");
	struct memory m;
	memory_now(&m);
	logf_("memory: peak RSS %.1f MiB, RSS %.1f MiB (heap %.1f, writer %.1f, "
	      "BPF maps %.1f); ELF cache %d files read, %.1f MiB, %" PRIu64 " forgotten; "
	      "%" PRIu64 " kernel names, %.1f MiB; shed %" PRIu64 " times",
	      (double)m.hwm / 1048576, (double)m.rss / 1048576,
	      (double)m.heap / 1048576, (double)m.writer / 1048576,
	      (double)m.bpf_maps / 1048576,
	      m.elf_read, (double)m.elf_bytes / 1048576, m.elf_evicted,
	      m.names, (double)m.names_bytes / 1048576, d.sheds);
	/* Seal first: the kernel takes tens of ms to remove each uprobe,
	 * minutes on a big host, and a service manager's stop timeout must
	 * not find the segment unsealed. */
	int rc = gr_writer__close(d.w);
	if (rc)
		logf_("closing %s: %s", d.cfg.data_dir, strerror(-rc));
	for (int i = 0; i < NUNITS; i++)
		if (units[i].open_)
			units[i].close();
	gr_elfcache__free(d.elfs); /* the families used it */
	close(d.dirfd);
	free(d.rescans);
	gr_config__free(&d.cfg);
	return rc || d.exit_code ? 2 : 0;
}

int main(int argc, char **argv)
{
	int rc = options(argc, argv);
	if (rc >= 0)
		return rc;
	catch_early_signals();
	libbpf_set_print(libbpf_log);
	d.started_ns = clock_ns(CLOCK_REALTIME);
	d.clock_offset_ns = d.started_ns - clock_ns(CLOCK_BOOTTIME);
	if ((rc = open_store()))
		return rc;
	d.loop = uv_default_loop();
	open_families();
	start_timers(); /* libuv's signal handlers replace the early ones */
	if (early_signal)
		stop(early_signal == SIGINT ? "SIGINT" : "SIGTERM");
	else
		sandbox_and_run();
	return finish();
}
