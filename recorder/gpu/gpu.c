/* gpu.c - the gpu family: NVML sampling, NVML events and the kernel log's
 * Xid lines, turned into `gpu`, `gpu_process` and `gpu_event` rows
 * (gpu.h says how the threads and the loop share the work). */
#include "recorder/gpu/gpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "recorder/family.h"
#include "recorder/gpu/nvml.h"
#include "recorder/gpu/xid.h"
#include "recorder/row.h"
#include "store/store.h"

#define MAX_DEVS 64
#define QUEUE_MAX 8192
#define XID_WAIT_NS (2 * 1000000000ll)	/* for an Xid's other half */
#define RETRY_NS (10 * 1000000000ll)	/* a lost GPU, asked again */
#define EVENT_WAIT_MS 200		/* the event thread's stop latency */
#define KMSG_CURSOR ".kmsg-cursor"
/* The costly asks, this often per GPU at most (a sample a little early
 * still counts): PCIe throughput makes the caller wait 21 ms and spends
 * ~0.95 ms of CPU per direction, the replay counter 0.18 ms, against
 * 2-10 us for each of the others (H100, driver 580: BENCHMARKS.md,
 * tests/gpu/nvml_cost.py). */
#define SLOW_EVERY_NS (9900 * 1000000ll)

struct nvml {
	void *lib;
#define PTR(ret, name, args) ret(*name) args;
	GR_NVML_FNS(PTR)
#undef PTR
	nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*wait)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);
};

/* What a device cannot tell (NOT_SUPPORTED, no permission): not asked
 * again. */
enum metric {
	M_UTIL, M_SM, M_MEMCLK, M_POWER, M_PLIMIT, M_TEMP, M_MEM, M_THR,
	M_TX, M_RX, M_REPLAY, M_SBE, M_DBE, M_REMAP, M_RETIRED, M_NVLINK,
	M_PERSIST, M_PROCS, M_PUTIL, M_MEM2,
};

struct dev {
	nvmlDevice_t h;
	int index;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char pci[40];		/* 0000:3b:00.0 */
	char pci_short[32];	/* 0000:3b:00, as the kernel log says */
	uint64_t unsup;		/* 1 << enum metric */
	uint32_t links;		/* active NVLinks */
	int lost;
	int64_t lost_at;	/* monotonic ns, for the retry */
	int have_prev;
	uint64_t prev_replay, prev_sbe, prev_dbe;
	uint64_t nv_prev[NVML_NVLINK_MAX_LINKS][4];	/* per link, counter */
	uint8_t nv_have[NVML_NVLINK_MAX_LINKS];		/* nv_prev[l][k] read */
	unsigned nv_unsup;				/* counters unsupported */
	unsigned long long prev_mask;
	int prev_persist;	/* -1: unknown */
	unsigned long long putil_seen;	/* process utilization's µs stamp */
	int64_t pcie_at;	/* monotonic ns of the last PCIe asks */
	int have_replay;	/* prev_replay is this run's */
};

/* What a thread saw, queued for the loop: a row whose string columns
 * (@strs) hold malloc'd C strings until the loop interns them. */
struct item {
	struct item *next;
	struct gr_row r;
	uint64_t strs;
	/* An Xid: its GPU's short PCI id, number, and where it came from;
	 * held until due (monotonic ns) for its other half. */
	int is_xid, from_kmsg, xid;
	char pci_short[32];
	int64_t arrived;	/* monotonic ns: the two halves match on it */
	int64_t due;
	uint64_t kmsg_seq;	/* a kernel log Xid: its record */
};

struct gr_gpu {
	struct gr_gpu_opts o;
	struct nvml n;
	struct dev dev[MAX_DEVS];
	int ndev;
	char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	int efd;		/* wakes the loop */
	int stopfd;		/* wakes the sampler to stop */
	int kmsg;		/* /dev/kmsg, or -1 */
	char boot_id[40];
	uint64_t cursor;	/* kernel log records up to this seen */
	int64_t mono_to_utc;	/* CLOCK_MONOTONIC ns + this = UTC ns */
	nvmlEventSet_t set;
	pthread_t sampler, waiter, reader;
	int have_sampler, have_waiter, have_reader, stopped;
	int stuck;		/* a thread did not stop: NVML hangs */
	int live;		/* the threads run: kernel log lines are new */
	volatile int stop;
	int closed;		/* under mu: push drops (the loop is done) */
	uint64_t written_seq;	/* highest kernel log Xid record written */
	uint64_t cursor_next;	/* to save once the writer has flushed */
	int lost_at_open;	/* GPUs NVML could not even hand out */
	int driver_pending;	/* .gpu-driver to write after a flush */

	pthread_mutex_t mu;	/* the queue */
	struct item *head, *tail;
	int nq;
	uint64_t dropped, dropped_seen;
	uint64_t sample_ns;	/* atomic */

	struct item *pending;	/* the loop's: Xids waiting */
	struct gr_gpu_stats st;
};

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* A row's time: the clock the BPF families stamp theirs with (boot time
 * plus the offset gpurecd took at start), so that joins across tables
 * hold whatever the wall clock does later. */
static int64_t utc_now(const struct gr_gpu *g)
{
	return now_ns(CLOCK_BOOTTIME) + g->o.clock_offset_ns;
}

/* ---- pure helpers ----------------------------------------------------------- */

static const struct {
	unsigned long long bit;
	const char *name;
} reasons[] = {
	{ nvmlClocksEventReasonSwPowerCap, "sw_power_cap" },
	{ nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown" },
	{ nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal" },
	{ nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal" },
	{ nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake" },
	{ nvmlClocksEventReasonSyncBoost, "sync_boost" },
	{ nvmlClocksEventReasonApplicationsClocksSetting, "app_clocks" },
	{ nvmlClocksEventReasonDisplayClockSetting, "display" },
	{ nvmlClocksEventReasonGpuIdle, "idle" },
};
#define NREASONS (int)(sizeof(reasons) / sizeof(reasons[0]))
/* The reasons whose start and stop are events: the ones that slow work
 * down (idle, application clocks and display clocks are states). */
#define EVENT_REASONS                                                          \
	(nvmlClocksEventReasonSwPowerCap | nvmlClocksThrottleReasonHwSlowdown | \
	 nvmlClocksEventReasonSwThermalSlowdown |                              \
	 nvmlClocksThrottleReasonHwThermalSlowdown |                           \
	 nvmlClocksThrottleReasonHwPowerBrakeSlowdown |                        \
	 nvmlClocksEventReasonSyncBoost)

void gr_gpu__throttle_text(uint64_t mask, char *out, size_t n)
{
	size_t len = 0;
	if (n)
		out[0] = 0;
	for (int i = 0; i < NREASONS; i++) {
		if (!(mask & reasons[i].bit))
			continue;
		size_t w = strlen(reasons[i].name) + (len ? 1 : 0);
		if (len + w >= n)
			return;	/* whole names only */
		snprintf(out + len, n - len, "%s%s", len ? "," : "",
			 reasons[i].name);
		len += w;
	}
}

void gr_gpu__pci_short(const char *bus_id, char *out, size_t n)
{
	/* "00000000:3B:00.0" or "0000:3b:00.0": the last four hex digits
	 * of the domain, bus and device, lower case. */
	unsigned dom = 0, bus = 0, devn = 0;
	if (sscanf(bus_id, "%x:%x:%x", &dom, &bus, &devn) != 3) {
		snprintf(out, n, "%s", bus_id);
		return;
	}
	snprintf(out, n, "%04x:%02x:%02x", dom & 0xffff, bus, devn);
}

/* ---- the queue --------------------------------------------------------------- */

static struct item *item_new(int table, int64_t ts)
{
	struct item *it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	it->r.table = table;
	it->r.nm = gr_tables[table].ncols >= 64
			   ? ~0ull
			   : (1ull << gr_tables[table].ncols) - 1;
	it->r.v[GR_runq_ts] = ts;
	it->r.nm &= ~(1ull << GR_runq_ts);
	return it;
}

static void set_int(struct item *it, int col, int64_t v)
{
	it->r.v[col] = v;
	it->r.nm &= ~(1ull << col);
}

static void set_str(struct item *it, int col, const char *s)
{
	char *c = s ? strdup(s) : NULL;
	if (!c)
		return;
	if (it->strs >> col & 1)
		free((char *)(intptr_t)it->r.v[col]);
	it->r.v[col] = (int64_t)(intptr_t)c;
	it->strs |= 1ull << col;
	it->r.nm &= ~(1ull << col);
}

static void item_free(struct item *it)
{
	for (int c = 0; c < 64; c++)
		if (it->strs >> c & 1)
			free((char *)(intptr_t)it->r.v[c]);
	free(it);
}

static void push(struct gr_gpu *g, struct item *it)
{
	if (!it)
		return;
	pthread_mutex_lock(&g->mu);
	if (g->closed) {	/* a thread NVML held past the stop */
		pthread_mutex_unlock(&g->mu);
		item_free(it);
		return;
	}
	if (g->nq >= QUEUE_MAX) {
		g->dropped++;
		pthread_mutex_unlock(&g->mu);
		item_free(it);
		return;
	}
	if (g->tail)
		g->tail->next = it;
	else
		g->head = it;
	g->tail = it;
	g->nq++;
	pthread_mutex_unlock(&g->mu);
	uint64_t one = 1;
	if (write(g->efd, &one, sizeof(one)) < 0) {
		/* the counter is full: the loop is awake anyway */
	}
}

/* A gpu_event row of @kind for device @d (NULL: not known to NVML). */
static struct item *event_item(const struct dev *d, int64_t ts,
			       const char *kind, const char *detail,
			       const char *source)
{
	struct item *it = item_new(GR_T_gpu_event, ts);
	if (!it)
		return NULL;
	if (d) {
		set_int(it, GR_gpu_event_gpu, d->index);
		set_str(it, GR_gpu_event_pci, d->pci);
	}
	set_str(it, GR_gpu_event_kind, kind);
	set_str(it, GR_gpu_event_detail, detail);
	set_str(it, GR_gpu_event_source, source);
	return it;
}

static void xid_describe(struct item *it, int xid)
{
	const struct gr_xid *x = gr_xid__find(xid);
	set_int(it, GR_gpu_event_xid, xid);
	if (x) {
		set_str(it, GR_gpu_event_meaning, x->meaning);
		set_str(it, GR_gpu_event_action, x->action);
	}
}

/* ---- sampling ---------------------------------------------------------------- */

static const char *nvml_err(struct gr_gpu *g, nvmlReturn_t r)
{
	const char *s = g->n.nvmlErrorString ? g->n.nvmlErrorString(r) : NULL;
	return s ? s : "NVML error";
}

static void lost(struct gr_gpu *g, struct dev *d, nvmlReturn_t r)
{
	if (d->lost)
		return;
	d->lost = 1;
	d->lost_at = now_ns(CLOCK_MONOTONIC);
	/* Counters go on from their last reading when it comes back (one
	 * that went back, a reset, counts from 0). */
	push(g, event_item(d, utc_now(g), "gpu_lost",
			   nvml_err(g, r), "nvml"));
}

/* Whether metric @m's call returned a value; marks what the device
 * cannot tell, and a lost GPU. */
static int ok(struct gr_gpu *g, struct dev *d, int m, nvmlReturn_t r)
{
	if (r == NVML_SUCCESS)
		return 1;
	if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_NO_PERMISSION ||
	    r == NVML_ERROR_FUNCTION_NOT_FOUND)
		d->unsup |= 1ull << m;
	else if (r == NVML_ERROR_GPU_IS_LOST)
		lost(g, d, r);
	return 0;
}

#define ASK(g, d, m, call)                                                     \
	(!((d)->unsup >> (m) & 1) && !(d)->lost && ok(g, d, m, call))

/* A monotonic counter's increase since the previous reading, into
 * column @col: NULL for the first reading (a run's, or a counter's); a
 * counter that went back (a reset) counts from 0. */
static void set_delta(struct item *it, int col, uint64_t now, uint64_t *prev,
		      int have_prev)
{
	if (have_prev)
		set_int(it, col, (int64_t)(now >= *prev ? now - *prev : now));
	*prev = now;
}

static void read_comm(uint32_t pid, char *out, size_t n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	out[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(out, (int)n, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

static void sample_procs(struct gr_gpu *g, struct dev *d, int64_t ts)
{
	nvmlProcessInfo_t pi[256];
	nvmlProcessInfo_v1_t p1[256];
	unsigned n = 256;
	nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
	int v1 = 0;
	if (d->unsup >> M_PROCS & 1 || d->lost)
		return;
	if (g->n.nvmlDeviceGetComputeRunningProcesses_v3)
		r = g->n.nvmlDeviceGetComputeRunningProcesses_v3(d->h, &n, pi);
	if (r == NVML_ERROR_FUNCTION_NOT_FOUND &&
	    g->n.nvmlDeviceGetComputeRunningProcesses_v2) {
		n = 256;
		r = g->n.nvmlDeviceGetComputeRunningProcesses_v2(d->h, &n, pi);
	}
	if (r == NVML_ERROR_FUNCTION_NOT_FOUND &&
	    g->n.nvmlDeviceGetComputeRunningProcesses) {
		n = 256;
		r = g->n.nvmlDeviceGetComputeRunningProcesses(d->h, &n, p1);
		v1 = 1;
	}
	if (!ok(g, d, M_PROCS, r) || n == 0)
		return;
	if (n > 256)
		n = 256;
	/* Their utilization since the previous sample, where NVML keeps it. */
	nvmlProcessUtilizationSample_t us[256];
	unsigned nu = 256;
	if (!(d->unsup >> M_PUTIL & 1) && g->n.nvmlDeviceGetProcessUtilization) {
		r = g->n.nvmlDeviceGetProcessUtilization(d->h, us, &nu,
							 d->putil_seen);
		if (r == NVML_ERROR_NOT_FOUND) {	/* no sample since */
			nu = 0;
		} else if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
			/* More kept than fit (the first ask gets the
			 * driver's whole buffer): ask from one period ago
			 * next time.  Its stamps are CPU time, µs. */
			nu = 0;
			d->putil_seen = (unsigned long long)(
				(ts - g->o.sample_ns) / 1000);
		} else if (!ok(g, d, M_PUTIL, r)) {
			nu = 0;
		}
	} else {
		nu = 0;
	}
	if (nu > 256)
		nu = 256;
	for (unsigned i = 0; i < nu; i++)
		if (us[i].timeStamp > d->putil_seen)
			d->putil_seen = us[i].timeStamp;
	for (unsigned i = 0; i < n; i++) {
		unsigned pid = v1 ? p1[i].pid : pi[i].pid;
		unsigned long long mem = v1 ? p1[i].usedGpuMemory
					    : pi[i].usedGpuMemory;
		struct item *it = item_new(GR_T_gpu_process, ts);
		if (!it)
			return;
		char comm[32];
		read_comm(pid, comm, sizeof(comm));
		set_int(it, GR_gpu_process_pid, pid);
		if (comm[0])
			set_str(it, GR_gpu_process_comm, comm);
		set_int(it, GR_gpu_process_gpu, d->index);
		set_str(it, GR_gpu_process_pci, d->pci);
		if (mem != NVML_VALUE_NOT_AVAILABLE)
			set_int(it, GR_gpu_process_mem_used, (int64_t)mem);
		/* The newest sample of this pid. */
		int best = -1;
		for (unsigned k = 0; k < nu; k++)
			if (us[k].pid == pid &&
			    (best < 0 || us[k].timeStamp > us[best].timeStamp))
				best = (int)k;
		if (best >= 0) {
			set_int(it, GR_gpu_process_sm_util, us[best].smUtil);
			set_int(it, GR_gpu_process_mem_util, us[best].memUtil);
		}
		push(g, it);
	}
}

static void throttle_events(struct gr_gpu *g, struct dev *d, int64_t ts,
			    unsigned long long mask)
{
	unsigned long long was = d->have_prev ? d->prev_mask : 0;
	unsigned long long on = mask & ~was & EVENT_REASONS;
	unsigned long long off = was & ~mask & EVENT_REASONS;
	for (int i = 0; i < NREASONS; i++) {
		if (on & reasons[i].bit)
			push(g, event_item(d, ts, "throttle_start",
					   reasons[i].name, "nvml"));
		if (off & reasons[i].bit)
			push(g, event_item(d, ts, "throttle_stop",
					   reasons[i].name, "nvml"));
	}
	d->prev_mask = mask;
}

static void sample_dev(struct gr_gpu *g, struct dev *d)
{
	struct nvml *n = &g->n;
	int64_t ts = utc_now(g), t0 = now_ns(CLOCK_MONOTONIC);
	if (d->lost) {
		if (t0 - d->lost_at < RETRY_NS)
			return;
		/* Any answer but "lost" (MIG GPUs have no utilization). */
		unsigned int t;
		d->lost_at = t0;
		if (n->nvmlDeviceGetTemperature(d->h, NVML_TEMPERATURE_GPU, &t) ==
		    NVML_ERROR_GPU_IS_LOST)
			return;
		d->lost = 0;
		push(g, event_item(d, ts, "gpu_back", NULL, "nvml"));
	}
	struct item *it = item_new(GR_T_gpu, ts);
	if (!it)
		return;
	unsigned v = 0;
	unsigned long long c = 0;
	nvmlUtilization_t u;
	nvmlMemory_t mem;
	nvmlEnableState_t es;

	if (ASK(g, d, M_UTIL, n->nvmlDeviceGetUtilizationRates(d->h, &u))) {
		set_int(it, GR_gpu_util_gpu, u.gpu);
		set_int(it, GR_gpu_util_mem, u.memory);
	}
	if (ASK(g, d, M_SM, n->nvmlDeviceGetClockInfo(d->h, NVML_CLOCK_SM, &v)))
		set_int(it, GR_gpu_sm_clock, v);
	if (ASK(g, d, M_MEMCLK,
		n->nvmlDeviceGetClockInfo(d->h, NVML_CLOCK_MEM, &v)))
		set_int(it, GR_gpu_mem_clock, v);
	if (ASK(g, d, M_POWER, n->nvmlDeviceGetPowerUsage(d->h, &v)))
		set_int(it, GR_gpu_power_mw, v);
	if (ASK(g, d, M_PLIMIT, n->nvmlDeviceGetEnforcedPowerLimit(d->h, &v)))
		set_int(it, GR_gpu_power_limit_mw, v);
	if (ASK(g, d, M_TEMP,
		n->nvmlDeviceGetTemperature(d->h, NVML_TEMPERATURE_GPU, &v)))
		set_int(it, GR_gpu_temp_c, v);
	/* Version 2 first: used without the driver's reserved memory, as
	 * nvidia-smi shows it. */
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	if (!n->nvmlDeviceGetMemoryInfo_v2)
		d->unsup |= 1ull << M_MEM2;
	if (ASK(g, d, M_MEM2, n->nvmlDeviceGetMemoryInfo_v2(d->h, &m2))) {
		set_int(it, GR_gpu_mem_used, (int64_t)m2.used);
		set_int(it, GR_gpu_mem_total, (int64_t)m2.total);
	} else if (d->unsup >> M_MEM2 & 1 &&
		   ASK(g, d, M_MEM, n->nvmlDeviceGetMemoryInfo(d->h, &mem))) {
		set_int(it, GR_gpu_mem_used, (int64_t)mem.used);
		set_int(it, GR_gpu_mem_total, (int64_t)mem.total);
	}
	if (n->reasons && !(d->unsup >> M_THR & 1) && !d->lost) {
		nvmlReturn_t r = n->reasons(d->h, &c);
		if (r == NVML_ERROR_FUNCTION_NOT_FOUND &&
		    n->reasons != n->nvmlDeviceGetCurrentClocksThrottleReasons &&
		    n->nvmlDeviceGetCurrentClocksThrottleReasons) {
			/* An older driver: the same bits, the older name. */
			n->reasons = n->nvmlDeviceGetCurrentClocksThrottleReasons;
			r = n->reasons(d->h, &c);
		}
		if (ok(g, d, M_THR, r)) {
			char text[160];
			gr_gpu__throttle_text(c, text, sizeof(text));
			if (text[0])
				set_str(it, GR_gpu_throttle, text);
			set_int(it, GR_gpu_throttle_mask, (int64_t)c);
			throttle_events(g, d, ts, c);
		}
	}
	/* PCIe throughput and replays: every 10 s (SLOW_EVERY_NS). */
	if (t0 - d->pcie_at >= SLOW_EVERY_NS) {
		d->pcie_at = t0;
		if (ASK(g, d, M_TX, n->nvmlDeviceGetPcieThroughput(
					   d->h, NVML_PCIE_UTIL_TX_BYTES, &v)))
			set_int(it, GR_gpu_pcie_tx, (int64_t)v * 1024);
		if (ASK(g, d, M_RX, n->nvmlDeviceGetPcieThroughput(
					   d->h, NVML_PCIE_UTIL_RX_BYTES, &v)))
			set_int(it, GR_gpu_pcie_rx, (int64_t)v * 1024);
		/* Links fabric manager brought up since. */
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
			nvmlEnableState_t a;
			nvmlReturn_t r = n->nvmlDeviceGetNvLinkState(d->h, l, &a);
			if (r == NVML_ERROR_NOT_SUPPORTED && l == 0)
				break;
			if (r == NVML_SUCCESS && a == NVML_FEATURE_ENABLED)
				d->links |= 1u << l;
		}
		if (ASK(g, d, M_REPLAY,
			n->nvmlDeviceGetPcieReplayCounter(d->h, &v))) {
			set_delta(it, GR_gpu_pcie_replays, v, &d->prev_replay,
				  d->have_replay);
			d->have_replay = 1;
		}
	}
	if (ASK(g, d, M_SBE, n->nvmlDeviceGetTotalEccErrors(
				    d->h, NVML_MEMORY_ERROR_TYPE_CORRECTED,
				    NVML_VOLATILE_ECC, &c))) {
		set_delta(it, GR_gpu_ecc_corrected, c, &d->prev_sbe,
			  d->have_prev);
		set_int(it, GR_gpu_ecc_corrected_total, (int64_t)c);
	}
	if (ASK(g, d, M_DBE, n->nvmlDeviceGetTotalEccErrors(
				    d->h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
				    NVML_VOLATILE_ECC, &c))) {
		set_delta(it, GR_gpu_ecc_uncorrected, c, &d->prev_dbe,
			  d->have_prev);
		set_int(it, GR_gpu_ecc_uncorrected_total, (int64_t)c);
	}
	unsigned corr = 0, unc = 0, pend = 0, failed = 0;
	int pending = -1;
	if (ASK(g, d, M_REMAP, n->nvmlDeviceGetRemappedRows(d->h, &corr, &unc,
							   &pend, &failed))) {
		set_int(it, GR_gpu_remapped_corr, corr);
		set_int(it, GR_gpu_remapped_unc, unc);
		pending = pend != 0;
	}
	if (ASK(g, d, M_RETIRED,
		n->nvmlDeviceGetRetiredPagesPendingStatus(d->h, &es)))
		pending = pending > 0 || es == NVML_FEATURE_ENABLED;
	if (pending >= 0)
		set_int(it, GR_gpu_remap_pending, pending);
	if (d->links && !d->lost) {
		/* Per link and counter: each its own previous reading (a link
		 * that fails once must not move the sum) and its own
		 * "unsupported". */
		static const nvmlNvLinkErrorCounter_t kinds[4] = {
			NVML_NVLINK_ERROR_DL_CRC_FLIT, NVML_NVLINK_ERROR_DL_CRC_DATA,
			NVML_NVLINK_ERROR_DL_REPLAY, NVML_NVLINK_ERROR_DL_RECOVERY,
		};
		int64_t sum[3] = { 0 };
		int any[3] = { 0 };
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
			if (!(d->links >> l & 1))
				continue;
			for (int k = 0; k < 4; k++) {
				int col = k < 2 ? 0 : k - 1;
				if (d->nv_unsup >> k & 1)
					continue;
				nvmlReturn_t r = n->nvmlDeviceGetNvLinkErrorCounter(
					d->h, l, kinds[k], &c);
				if (r == NVML_ERROR_NOT_SUPPORTED ||
				    r == NVML_ERROR_FUNCTION_NOT_FOUND) {
					d->nv_unsup |= 1u << k;
					continue;
				}
				if (r == NVML_ERROR_GPU_IS_LOST) {
					lost(g, d, r);
					break;
				}
				if (r != NVML_SUCCESS)
					continue;
				uint64_t *prev = &d->nv_prev[l][k];
				int had = d->nv_have[l] >> k & 1;
				d->nv_have[l] |= (uint8_t)(1u << k);
				any[col] = 1;
				if (had)
					sum[col] += (int64_t)(c >= *prev ? c - *prev : c);
				*prev = c;
			}
		}
		if (d->have_prev) {
			if (any[0])
				set_int(it, GR_gpu_nvlink_crc, sum[0]);
			if (any[1])
				set_int(it, GR_gpu_nvlink_replay, sum[1]);
			if (any[2])
				set_int(it, GR_gpu_nvlink_recovery, sum[2]);
		}
	}
	if (ASK(g, d, M_PERSIST, n->nvmlDeviceGetPersistenceMode(d->h, &es))) {
		int p = es == NVML_FEATURE_ENABLED;
		if (d->prev_persist >= 0 && p != d->prev_persist)
			push(g, event_item(d, ts, "persistence", p ? "on" : "off",
					   "nvml"));
		d->prev_persist = p;
	}
	if (d->lost) {	/* lost on the way: no half row */
		item_free(it);
		return;
	}
	sample_procs(g, d, ts);
	d->have_prev = 1;
	set_int(it, GR_gpu_gpu, d->index);
	set_str(it, GR_gpu_uuid, d->uuid);
	set_str(it, GR_gpu_pci, d->pci);
	set_str(it, GR_gpu_name, d->name);
	int64_t took = now_ns(CLOCK_MONOTONIC) - t0;
	set_int(it, GR_gpu_sample_ns, took);
	__atomic_add_fetch(&g->sample_ns, (uint64_t)took, __ATOMIC_RELAXED);
	push(g, it);
}

/* ---- the kernel log ---------------------------------------------------------- */

static void read_boot_id(struct gr_gpu *g)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	g->boot_id[0] = 0;
	if (!f)
		return;
	if (fgets(g->boot_id, sizeof(g->boot_id), f))
		g->boot_id[strcspn(g->boot_id, "\n")] = 0;
	fclose(f);
}

/* The last kernel log record a previous run recorded an Xid from, this
 * boot: a restart does not record its Xids again. */
static void load_cursor(struct gr_gpu *g)
{
	char buf[128], boot[64];
	unsigned long long seq;
	g->cursor = 0;
	if (g->o.dirfd < 0)
		return;
	int fd = openat(g->o.dirfd, KMSG_CURSOR, O_RDONLY | O_CLOEXEC |
						 O_NOFOLLOW);
	if (fd < 0)
		return;
	ssize_t k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (k <= 0)
		return;
	buf[k] = 0;
	if (sscanf(buf, "%63s %llu", boot, &seq) == 2 &&
	    strcmp(boot, g->boot_id) == 0)
		g->cursor = seq;
}

static void save_cursor(struct gr_gpu *g, uint64_t seq)
{
	char tmp[] = KMSG_CURSOR ".tmp", buf[128];
	if (g->o.dirfd < 0 || seq <= g->cursor)
		return;
	__atomic_store_n(&g->cursor, seq, __ATOMIC_RELAXED);
	int fd = openat(g->o.dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC |
						 O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0)
		return;
	int len = snprintf(buf, sizeof(buf), "%s %" PRIu64 "\n", g->boot_id,
			   seq);
	int good = write(fd, buf, (size_t)len) == len;
	close(fd);
	if (!good || renameat(g->o.dirfd, tmp, g->o.dirfd, KMSG_CURSOR) < 0)
		unlinkat(g->o.dirfd, tmp, 0);
}

static const struct dev *dev_by_short(const struct gr_gpu *g, const char *s)
{
	for (int i = 0; i < g->ndev; i++)
		if (strcmp(g->dev[i].pci_short, s) == 0)
			return &g->dev[i];
	return NULL;
}

/* Reads what the kernel log has; each Xid line becomes an item. */
static void read_kmsg(struct gr_gpu *g)
{
	char rec[8192];
	for (;;) {
		ssize_t k = read(g->kmsg, rec, sizeof(rec) - 1);
		if (k < 0) {
			if (errno == EPIPE)	/* overwritten: go on */
				continue;
			return;		/* EAGAIN, or an error */
		}
		if (k == 0)
			return;
		rec[k] = 0;
		uint64_t seq, ts_us;
		const char *text;
		int len = gr_kmsg__split(rec, (size_t)k, &seq, &ts_us, &text);
		if (len < 0 || seq <= __atomic_load_n(&g->cursor, __ATOMIC_RELAXED))
			continue;
		/* The text alone, terminated (the record's dictionary lines
		 * follow its newline). */
		((char *)text)[len] = 0;
		struct gr_xid_line x;
		if (!strstr(text, "NVRM: Xid") || gr_xid__parse_kmsg(text, &x) != 1)
			continue;
		/* The kernel log's clock is not the wall clock's and drifts
		 * from it over days: a record read as it comes is stamped
		 * now; one from before gpurecd started, by the log's time. */
		int64_t ts = (int64_t)ts_us * 1000 + g->mono_to_utc;
		if (g->live)
			ts = utc_now(g);
		const struct dev *d = dev_by_short(g, x.pci);
		struct item *it = event_item(d, ts, "xid", NULL, "kmsg");
		if (!it)
			continue;
		if (!d) {
			char pci[40];
			snprintf(pci, sizeof(pci), "%s.0", x.pci);
			set_str(it, GR_gpu_event_pci, pci);
		}
		xid_describe(it, x.xid);
		if (x.pid > 0)
			set_int(it, GR_gpu_event_pid, x.pid);
		if (x.name[0])
			set_str(it, GR_gpu_event_comm, x.name);
		/* The message as the driver wrote it, without "NVRM: ". */
		const char *m = strstr(text, "Xid");
		set_str(it, GR_gpu_event_text, m ? m : text);
		it->is_xid = it->from_kmsg = 1;
		it->xid = x.xid;
		snprintf(it->pci_short, sizeof(it->pci_short), "%s", x.pci);
		it->kmsg_seq = seq;
		it->arrived = now_ns(CLOCK_MONOTONIC);
		push(g, it);
	}
}

/* ---- the threads -------------------------------------------------------------- */

static void *sampler_main(void *arg)
{
	struct gr_gpu *g = arg;
	int64_t next = now_ns(CLOCK_MONOTONIC);
	while (!g->stop) {
		for (int i = 0; i < g->ndev && !g->stop; i++)
			sample_dev(g, &g->dev[i]);
		next += g->o.sample_ns;
		int64_t now = now_ns(CLOCK_MONOTONIC);
		if (next < now)	/* overran: the next period from now */
			next = now + g->o.sample_ns;
		while (!g->stop && (now = now_ns(CLOCK_MONOTONIC)) < next) {
			struct pollfd p = { .fd = g->stopfd, .events = POLLIN };
			poll(&p, 1, (int)((next - now + 999999) / 1000000));
		}
	}
	return NULL;
}

/* The kernel log on a thread of its own: a GPU whose NVML calls hang
 * (the sampler's) must not keep its Xid lines unread. */
static void *reader_main(void *arg)
{
	struct gr_gpu *g = arg;
	while (!g->stop) {
		struct pollfd p[2] = { { .fd = g->stopfd, .events = POLLIN },
				       { .fd = g->kmsg, .events = POLLIN } };
		if (poll(p, 2, 1000) > 0 && p[1].revents & POLLIN)
			read_kmsg(g);
	}
	return NULL;
}

static const struct dev *dev_by_handle(const struct gr_gpu *g, nvmlDevice_t h)
{
	for (int i = 0; i < g->ndev; i++)
		if (g->dev[i].h == h)
			return &g->dev[i];
	return NULL;
}

static void *waiter_main(void *arg)
{
	struct gr_gpu *g = arg;
	while (!g->stop) {
		nvmlEventData_t e;
		memset(&e, 0, sizeof(e));
		nvmlReturn_t r = g->n.wait(g->set, &e, EVENT_WAIT_MS);
		if (r == NVML_ERROR_TIMEOUT)
			continue;
		if (r != NVML_SUCCESS) {
			struct timespec ts = { 0, EVENT_WAIT_MS * 1000000l };
			nanosleep(&ts, NULL);
			continue;
		}
		const struct dev *d = dev_by_handle(g, e.device);
		int64_t ts = utc_now(g);
		struct item *it = NULL;
		if (e.eventType & nvmlEventTypeXidCriticalError) {
			it = event_item(d, ts, "xid", NULL, "nvml");
			if (it) {
				xid_describe(it, (int)e.eventData);
				it->is_xid = 1;
				it->arrived = now_ns(CLOCK_MONOTONIC);
				it->xid = (int)e.eventData;
				if (d)
					snprintf(it->pci_short,
						 sizeof(it->pci_short), "%s",
						 d->pci_short);
			}
		} else if (e.eventType & nvmlEventTypeSingleBitEccError) {
			it = event_item(d, ts, "ecc_corrected", NULL, "nvml");
		} else if (e.eventType & nvmlEventTypeDoubleBitEccError) {
			it = event_item(d, ts, "ecc_uncorrected", NULL, "nvml");
		}
		push(g, it);
	}
	return NULL;
}

/* ---- open ---------------------------------------------------------------------- */

/* Whether this program is linked statically: its program headers name no
 * interpreter (PT_INTERP).  Asked at run time, where a build flag could
 * outlive a rebuild of the objects. */
static int linked_statically(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	for (unsigned long i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			return 0;
	return ph != NULL;
}

static int load_nvml(struct gr_gpu *g)
{
	struct nvml *n = &g->n;
	/* libnvidia-ml.so.1 needs libc.so.6, whose second copy dlopen()
	 * loads into a statically linked process uninitialized: NVML's
	 * first call died of a divide error in it (H200, driver 580). */
	if (linked_statically()) {
		g->o.log("gpu: this gpurecd is linked statically (make "
			 "STATIC=1) and cannot load NVML: GPU sampling and "
			 "Xid recording off (the packages' gpurecd has both)");
		return -1;
	}
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		const char *e = dlerror();
		g->o.log("gpu: no NVML (%s): GPU sampling off",
			 e ? e : "libnvidia-ml.so.1 not found");
		return -1;
	}
#define SYM(ret, name, args) *(void **)&n->name = dlsym(n->lib, #name);
	GR_NVML_FNS(SYM)
#undef SYM
	if (!n->nvmlInit_v2)
		n->nvmlInit_v2 = n->nvmlInit;
	if (!n->nvmlDeviceGetCount_v2)
		n->nvmlDeviceGetCount_v2 = n->nvmlDeviceGetCount;
	if (!n->nvmlDeviceGetHandleByIndex_v2)
		n->nvmlDeviceGetHandleByIndex_v2 = n->nvmlDeviceGetHandleByIndex;
	if (!n->nvmlDeviceGetPciInfo_v3)
		n->nvmlDeviceGetPciInfo_v3 = n->nvmlDeviceGetPciInfo_v2;
	n->reasons = n->nvmlDeviceGetCurrentClocksEventReasons
			     ? n->nvmlDeviceGetCurrentClocksEventReasons
			     : n->nvmlDeviceGetCurrentClocksThrottleReasons;
	n->wait = n->nvmlEventSetWait_v2 ? n->nvmlEventSetWait_v2
					 : n->nvmlEventSetWait;
	/* What sampling cannot do without. */
	if (!n->nvmlInit_v2 || !n->nvmlShutdown || !n->nvmlDeviceGetCount_v2 ||
	    !n->nvmlDeviceGetHandleByIndex_v2 ||
	    !n->nvmlDeviceGetUtilizationRates || !n->nvmlDeviceGetClockInfo ||
	    !n->nvmlDeviceGetPowerUsage || !n->nvmlDeviceGetEnforcedPowerLimit ||
	    !n->nvmlDeviceGetTemperature || !n->nvmlDeviceGetMemoryInfo ||
	    !n->nvmlDeviceGetPcieThroughput ||
	    !n->nvmlDeviceGetPcieReplayCounter ||
	    !n->nvmlDeviceGetTotalEccErrors ||
	    !n->nvmlDeviceGetRemappedRows ||
	    !n->nvmlDeviceGetRetiredPagesPendingStatus ||
	    !n->nvmlDeviceGetNvLinkState ||
	    !n->nvmlDeviceGetNvLinkErrorCounter ||
	    !n->nvmlDeviceGetPersistenceMode) {
		g->o.log("gpu: libnvidia-ml.so.1 lacks entry points gpurecd "
			 "needs (a driver older than r470?): GPU sampling off");
		dlclose(n->lib);
		n->lib = NULL;
		return -1;
	}
	nvmlReturn_t r = n->nvmlInit_v2();
	if (r != NVML_SUCCESS) {
		g->o.log("gpu: NVML cannot start (%s): GPU sampling off",
			 nvml_err(g, r));
		dlclose(n->lib);
		n->lib = NULL;
		return -1;
	}
	return 0;
}

static void open_devs(struct gr_gpu *g)
{
	struct nvml *n = &g->n;
	unsigned cnt = 0;
	if (n->nvmlSystemGetDriverVersion)
		n->nvmlSystemGetDriverVersion(g->driver, sizeof(g->driver));
	if (n->nvmlDeviceGetCount_v2(&cnt) != NVML_SUCCESS)
		cnt = 0;
	for (unsigned i = 0; i < cnt && g->ndev < MAX_DEVS; i++) {
		struct dev *d = &g->dev[g->ndev];
		memset(d, 0, sizeof(*d));
		nvmlReturn_t hr = n->nvmlDeviceGetHandleByIndex_v2(i, &d->h);
		if (hr == NVML_ERROR_GPU_IS_LOST) {
			/* Lost already (gpurecd restarted after the crash):
			 * an event, not silence. */
			struct item *it = event_item(NULL, utc_now(g),
						     "gpu_lost",
						     nvml_err(g, hr), "nvml");
			if (it)
				set_int(it, GR_gpu_event_gpu, (int)i);
			g->lost_at_open++;
			push(g, it);
			continue;
		}
		if (hr != NVML_SUCCESS)
			continue;
		d->index = (int)i;
		d->prev_persist = -1;
		if (n->nvmlDeviceGetUUID)
			n->nvmlDeviceGetUUID(d->h, d->uuid, sizeof(d->uuid));
		if (n->nvmlDeviceGetName)
			n->nvmlDeviceGetName(d->h, d->name, sizeof(d->name));
		nvmlPciInfo_t pci;
		memset(&pci, 0, sizeof(pci));
		if (n->nvmlDeviceGetPciInfo_v3 &&
		    n->nvmlDeviceGetPciInfo_v3(d->h, &pci) == NVML_SUCCESS) {
			char s[24];
			gr_gpu__pci_short(pci.busId, s, sizeof(s));
			snprintf(d->pci_short, sizeof(d->pci_short), "%s", s);
			const char *fn = strrchr(pci.busId, '.');
			snprintf(d->pci, sizeof(d->pci), "%s.%s", s,
				 fn ? fn + 1 : "0");
		}
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
			nvmlEnableState_t a;
			nvmlReturn_t r = n->nvmlDeviceGetNvLinkState(d->h, l, &a);
			if (r == NVML_SUCCESS && a == NVML_FEATURE_ENABLED)
				d->links |= 1u << l;
			else if (r == NVML_ERROR_NOT_SUPPORTED && l == 0)
				break;
		}
		g->ndev++;
	}
}

static void open_events(struct gr_gpu *g)
{
	struct nvml *n = &g->n;
	if (!n->nvmlEventSetCreate || !n->nvmlDeviceRegisterEvents ||
	    !n->wait || n->nvmlEventSetCreate(&g->set) != NVML_SUCCESS)
		return;
	int any = 0;
	for (int i = 0; i < g->ndev; i++) {
		unsigned long long types = nvmlEventTypeXidCriticalError |
					   nvmlEventTypeSingleBitEccError |
					   nvmlEventTypeDoubleBitEccError;
		unsigned long long sup = 0;
		if (n->nvmlDeviceGetSupportedEventTypes &&
		    n->nvmlDeviceGetSupportedEventTypes(g->dev[i].h, &sup) ==
			    NVML_SUCCESS)
			types &= sup;
		if (types && n->nvmlDeviceRegisterEvents(g->dev[i].h, types,
							 g->set) == NVML_SUCCESS)
			any = 1;
	}
	if (any && pthread_create(&g->waiter, NULL, waiter_main, g) == 0)
		g->have_waiter = 1;
	if (!g->have_waiter) {
		if (n->nvmlEventSetFree)
			n->nvmlEventSetFree(g->set);
		g->set = NULL;
		g->o.log("gpu: NVML gives no Xid or ECC events here: Xids come "
			 "from the kernel log only");
	}
}

/* A driver other than the one the previous run saw (an upgrade, a
 * reload: NVML holds the driver's device files open, so a reload comes
 * with a gpurecd restart): a `driver` event, and the file names the new
 * one once a flush has made the event durable (write_driver). */
static void check_driver(struct gr_gpu *g)
{
	char buf[128] = "", line[300];
	if (g->o.dirfd < 0 || !g->driver[0])
		return;
	int fd = openat(g->o.dirfd, ".gpu-driver", O_RDONLY | O_CLOEXEC |
						     O_NOFOLLOW);
	if (fd >= 0) {
		ssize_t k = read(fd, buf, sizeof(buf) - 1);
		buf[k > 0 ? k : 0] = 0;
		buf[strcspn(buf, "\n")] = 0;
		close(fd);
	}
	if (strcmp(buf, g->driver) == 0)
		return;
	if (buf[0]) {
		snprintf(line, sizeof(line), "%s (was %s)", g->driver, buf);
		push(g, event_item(NULL, utc_now(g), "driver", line, "nvml"));
	}
	g->driver_pending = 1;
}

static void write_driver(struct gr_gpu *g)
{
	char line[128];
	int fd = openat(g->o.dirfd, ".gpu-driver.tmp", O_WRONLY | O_CREAT |
					O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0)
		return;
	int len = snprintf(line, sizeof(line), "%s\n", g->driver);
	int good = write(fd, line, (size_t)len) == len;
	close(fd);
	if (!good || renameat(g->o.dirfd, ".gpu-driver.tmp", g->o.dirfd,
			      ".gpu-driver") < 0)
		unlinkat(g->o.dirfd, ".gpu-driver.tmp", 0);
}

static void open_kmsg(struct gr_gpu *g)
{
	g->kmsg = -1;
	if (!g->o.kmsg)
		return;
	read_boot_id(g);
	load_cursor(g);
	g->kmsg = open(g->o.kmsg, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (g->kmsg < 0)
		g->o.log("gpu: cannot read %s (%s): Xids come from NVML only",
			 g->o.kmsg, strerror(errno));
	g->mono_to_utc = utc_now(g) - now_ns(CLOCK_MONOTONIC);
}

struct gr_gpu *gr_gpu__open(const struct gr_gpu_opts *o)
{
	struct gr_gpu *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->o = *o;
	g->efd = g->stopfd = g->kmsg = -1;
	pthread_mutex_init(&g->mu, NULL);
	if (load_nvml(g) < 0) {
		free(g);
		return NULL;
	}
	g->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	g->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->efd < 0 || g->stopfd < 0) {
		g->o.log("gpu: eventfd: %s", strerror(errno));
		gr_gpu__close(g);
		return NULL;
	}
	open_devs(g);
	if (!g->ndev && !g->lost_at_open) {
		g->o.log("gpu: NVML lists no GPU: GPU sampling off");
		gr_gpu__close(g);
		return NULL;
	}
	check_driver(g);
	open_kmsg(g);
	/* The kernel log since boot first (past the cursor): Xids from
	 * before gpurecd started are the ones an incident starts with. */
	if (g->kmsg >= 0)
		read_kmsg(g);
	open_events(g);
	if (pthread_create(&g->sampler, NULL, sampler_main, g)) {
		g->o.log("gpu: cannot start the sampler: %s", strerror(errno));
		gr_gpu__close(g);
		return NULL;
	}
	g->have_sampler = 1;
	g->live = 1;
	pthread_setname_np(g->sampler, "gpurecd-gpu");
	if (g->kmsg >= 0 &&
	    pthread_create(&g->reader, NULL, reader_main, g) == 0) {
		g->have_reader = 1;
		pthread_setname_np(g->reader, "gpurecd-kmsg");
	}
	if (g->have_waiter)
		pthread_setname_np(g->waiter, "gpurecd-gpuev");
	if (g->lost_at_open)
		g->o.log("gpu: %d GPU%s lost already (NVML cannot reach it)",
			 g->lost_at_open, g->lost_at_open == 1 ? "" : "s");
	g->o.log("gpu: %d GPU%s, driver %s, sampled every %" PRId64 " ms%s%s",
		 g->ndev, g->ndev == 1 ? "" : "s",
		 g->driver[0] ? g->driver : "(unknown)",
		 g->o.sample_ns / 1000000,
		 g->have_waiter ? "; NVML Xid/ECC events" : "",
		 g->kmsg >= 0 ? "; kernel log Xids" : "");
	return g;
}

int gr_gpu__fd(struct gr_gpu *g)
{
	return g->efd;
}

/* ---- the loop's side ------------------------------------------------------------ */

static void write_item(struct gr_gpu *g, struct item *it)
{
	for (int c = 0; c < 64; c++) {
		if (!(it->strs >> c & 1))
			continue;
		char *s = (char *)(intptr_t)it->r.v[c];
		it->r.v[c] = gr_writer__intern(g->o.w, s, strlen(s));
		free(s);
	}
	it->strs = 0;
	if (gr_writer__append(g->o.w, it->r.table, it->r.v, it->r.nm) == 0) {
		if (it->r.table == GR_T_gpu)
			g->st.samples++;
		else if (it->r.table == GR_T_gpu_process)
			g->st.process_rows++;
		else
			g->st.events++;
	}
	if (it->kmsg_seq > g->written_seq)
		g->written_seq = it->kmsg_seq;
	item_free(it);
}

/* An Xid from the other source for the same GPU and number, within the
 * wait: the two are one. */
static struct item **match(struct gr_gpu *g, const struct item *x)
{
	/* On when each arrived (monotonic), not the rows' times: the
	 * kernel log's clock drifts from the wall clock; the nearest. */
	struct item **best = NULL;
	int64_t bdt = 0;
	for (struct item **p = &g->pending; *p; p = &(*p)->next) {
		struct item *q = *p;
		int64_t dt = q->arrived - x->arrived;
		if (dt < 0)
			dt = -dt;
		if (q->from_kmsg != x->from_kmsg && q->xid == x->xid &&
		    strcmp(q->pci_short, x->pci_short) == 0 &&
		    dt <= XID_WAIT_NS && (!best || dt <= bdt))
			best = p, bdt = dt;
	}
	return best;
}

static void take_xid(struct gr_gpu *g, struct item *x)
{
	struct item **p = match(g, x);
	if (!p) {
		x->due = now_ns(CLOCK_MONOTONIC) + XID_WAIT_NS;
		struct item **t = &g->pending;
		while (*t)
			t = &(*t)->next;
		x->next = NULL;
		*t = x;
		return;
	}
	struct item *q = *p;
	*p = q->next;
	/* One row: the kernel log's (it names the process and says more),
	 * at the earlier of the two times. */
	struct item *k = x->from_kmsg ? x : q, *nv = x->from_kmsg ? q : x;
	if (nv->r.v[GR_gpu_event_ts] < k->r.v[GR_gpu_event_ts])
		k->r.v[GR_gpu_event_ts] = nv->r.v[GR_gpu_event_ts];
	if ((k->r.nm >> GR_gpu_event_gpu & 1) &&
	    !(nv->r.nm >> GR_gpu_event_gpu & 1))
		set_int(k, GR_gpu_event_gpu, nv->r.v[GR_gpu_event_gpu]);
	set_str(k, GR_gpu_event_source, "nvml+kmsg");
	item_free(nv);
	k->next = NULL;
	write_item(g, k);
}

int gr_gpu__poll(struct gr_gpu *g)
{
	uint64_t cnt;
	if (read(g->efd, &cnt, sizeof(cnt)) < 0) {
		/* nothing signalled: drain anyway */
	}
	pthread_mutex_lock(&g->mu);
	struct item *it = g->head;
	g->head = g->tail = NULL;
	g->nq = 0;
	pthread_mutex_unlock(&g->mu);
	int rows = 0;
	while (it) {
		struct item *next = it->next;
		it->next = NULL;
		if (it->is_xid) {
			take_xid(g, it);
		} else {
			write_item(g, it);
			rows++;
		}
		it = next;
	}
	return rows;
}

static void stop_threads(struct gr_gpu *g)
{
	if (g->stopped)
		return;
	g->stopped = 1;
	g->stop = 1;
	uint64_t one = 1;
	if (g->stopfd >= 0 && write(g->stopfd, &one, sizeof(one)) < 0) {
		/* the sampler sees g->stop within its poll anyway */
	}
	/* A thread inside an NVML call that hangs (a GPU in trouble) must
	 * not hold up sealing: wait 2 s, then leave it (push drops what it
	 * queues; NVML is not shut down under it). */
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	pthread_t *th[3] = { g->have_sampler ? &g->sampler : NULL,
			     g->have_waiter ? &g->waiter : NULL,
			     g->have_reader ? &g->reader : NULL };
	for (int i = 0; i < 3; i++)
		if (th[i] && pthread_timedjoin_np(*th[i], NULL, &dl) != 0)
			g->stuck = 1;
	g->have_sampler = g->have_waiter = g->have_reader = 0;
	if (g->stuck) {
		pthread_mutex_lock(&g->mu);
		g->closed = 1;
		pthread_mutex_unlock(&g->mu);
		g->o.log("gpu: a thread is still inside NVML 2 s after the "
			 "stop (a GPU not answering); left behind");
	}
}

/* What a flush made durable: the kernel log cursor up to the Xids
 * written before it (none still waiting below it), and the driver seen. */
static void persist(struct gr_gpu *g)
{
	if (g->cursor_next)
		save_cursor(g, g->cursor_next);
	if (g->driver_pending) {
		g->driver_pending = 0;
		write_driver(g);
	}
	uint64_t c = g->written_seq;
	for (struct item *x = g->pending; x; x = x->next)
		if (x->kmsg_seq && x->kmsg_seq - 1 < c)
			c = x->kmsg_seq - 1;
	g->cursor_next = c;
}

void gr_gpu__flush(struct gr_gpu *g, int64_t now, int last)
{
	/* The writer flushed after the last call: what was written then is
	 * on disk. */
	persist(g);
	if (last) {
		stop_threads(g);
		if (g->kmsg >= 0 && !g->stuck)
			read_kmsg(g);
	}
	gr_gpu__poll(g);
	int64_t mono = now_ns(CLOCK_MONOTONIC);
	for (struct item **p = &g->pending; *p;) {
		struct item *x = *p;
		if (!last && x->due > mono) {
			p = &x->next;
			continue;
		}
		*p = x->next;
		x->next = NULL;
		write_item(g, x);
	}
	pthread_mutex_lock(&g->mu);
	uint64_t dropped = g->dropped;
	pthread_mutex_unlock(&g->mu);
	gr_family__drops(g->o.w, GR_FAM_gpu, &dropped, &g->dropped_seen, now);
	if (last)	/* what persist() saves at close, after the seal */
		persist(g);
}

void gr_gpu__stats(const struct gr_gpu *g, struct gr_gpu_stats *st)
{
	*st = g->st;
	st->devices = g->ndev;
	st->lost = g->lost_at_open;
	for (int i = 0; i < g->ndev; i++)
		st->lost += g->dev[i].lost;
	st->sample_ns = __atomic_load_n(&g->sample_ns, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&g->dropped, __ATOMIC_RELAXED);
	snprintf(st->driver, sizeof(st->driver), "%s", g->driver);
}

void gr_gpu__close(struct gr_gpu *g)
{
	if (!g)
		return;
	stop_threads(g);
	/* The writer is closed (sealed) by now: the last rows are on disk. */
	if (g->cursor_next)
		save_cursor(g, g->cursor_next);
	if (g->stuck)	/* its thread may still be inside NVML: leave it */
		return;
	while (g->pending) {
		struct item *x = g->pending;
		g->pending = x->next;
		item_free(x);
	}
	for (struct item *it = g->head; it;) {
		struct item *next = it->next;
		item_free(it);
		it = next;
	}
	if (g->set && g->n.nvmlEventSetFree)
		g->n.nvmlEventSetFree(g->set);
	if (g->n.lib) {
		g->n.nvmlShutdown();
		dlclose(g->n.lib);
	}
	if (g->efd >= 0)
		close(g->efd);
	if (g->stopfd >= 0)
		close(g->stopfd);
	if (g->kmsg >= 0)
		close(g->kmsg);
	pthread_mutex_destroy(&g->mu);
	free(g);
}
