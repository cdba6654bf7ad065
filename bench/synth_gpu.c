/* synth_gpu.c - the synthetic gpu family (see synth_gpu.h for the model). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/synth_gpu.h"
#include "recorder/gpu/xid.h"

#define S_NS 1000000000ll
#define MS 1000000ll
#define CYCLE_S 1200            /* training, evaluation, checkpoint */
#define TRAIN_S 1080
#define EVAL_S 60
#define HANG_PERIOD_S 43200
#define HANG_S 240
#define CAP_BLOCK_S 300
#define HOT_S 180
#define MEM_TOTAL (81559ll << 20)
#define POWER_LIMIT_MW 700000
#define PCIE_EVERY 10           /* samples between PCIe readings */

/* NVML clocks event reasons (recorder/gpu/nvml.h). */
#define R_IDLE 0x1ull
#define R_SW_POWER_CAP 0x4ull
#define R_HW_THERMAL 0x40ull

static const struct {
	uint64_t bit;
	const char *name;
} reasons[] = { /* gpurecd's order (gr_gpu__throttle_text) */
	{ R_SW_POWER_CAP, "sw_power_cap" },
	{ R_HW_THERMAL, "hw_thermal" },
	{ R_IDLE, "idle" },
};
#define NREASONS (int)(sizeof(reasons) / sizeof(reasons[0]))
#define EVENT_REASONS (R_SW_POWER_CAP | R_HW_THERMAL)

/* The day's Xids: second, GPU (mod ngpus), xid, whether the kernel log
 * names the process, the log line after "NVRM: Xid (PCI:...): N, ". */
static const struct xid_at {
	int64_t t;
	int gpu, xid, named;
	const char *msg;
} xids[] = {
	{ 45, 2, 13, 1, "Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): "
	  "Out Of Range Address" },
	{ 4 * 3600 + 17, 6, 31, 1, "Ch 00000008, intr 00000000. MMU Fault: "
	  "ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f1c_00200000. Fault is "
	  "of type FAULT_PDE ACCESS_TYPE_VIRT_READ" },
	{ 14 * 3600 + 301, 3, 94, 1, "Contained: CE User Channel (0x9). RST: "
	  "No, D-RST: No" },
	{ 14 * 3600 + 302, 3, 63, 0, "Row Remapper: New row (0x0000000000a3f2c0)"
	  " is marked for remapping, reset gpu to activate." },
	{ 20 * 3600 + 1234, 0, 119, 0, "Timeout after 6s of waiting for RPC "
	  "response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) "
	  "(0x20800a4c 0x4)." },
};
#define NXIDS (int)(sizeof(xids) / sizeof(xids[0]))
static const int64_t hot_at[] = { 2 * 3600, 10 * 3600, 18 * 3600 };

static const uint8_t buses[8] = { 0x1b, 0x43, 0x52, 0x61,
				  0x9d, 0xc3, 0xd1, 0xdf };

struct gpu {
	int64_t uuid, pci;              /* dictionary ids */
	int64_t pid;
	double temp;
	uint64_t prev_mask;
	int64_t mem_used;
	int remapped_unc, pending, ecc_unc_next;
	char pci_short[16];
};

struct row {
	int t;
	int64_t v[GR_MAX_COLS];
	uint64_t nm;
};

struct gr_gpu_synth {
	struct gr_synth *s;
	int n;
	int64_t start;
	uint64_t rng, capkey;            /* capkey: which blocks are capped */
	int64_t k;                      /* next tick */
	struct gpu *g;
	int64_t name, comm, kinds[6], src[3], masks_id[8];
	uint64_t masks[8];
	int nmasks;
	struct row *q;                  /* the tick's rows, ts order */
	int nq, iq, cap;
};

static uint64_t rnd(struct gr_gpu_synth *j)
{
	j->rng ^= j->rng >> 12;
	j->rng ^= j->rng << 25;
	j->rng ^= j->rng >> 27;
	return j->rng * 2685821657736338717ull;
}

static int64_t urange(struct gr_gpu_synth *j, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd(j) % (uint64_t)(hi - lo + 1));
}

/* A hash of (seed, a, b): which blocks are capped. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ x >> 33;
}

enum { K_XID, K_TSTART, K_TSTOP, K_ECC_C, K_ECC_U };

struct gr_gpu_synth *gr_gpu_synth__new(struct gr_synth *s,
				       const struct gr_synth_opts *o,
				       int ngpus)
{
	struct gr_gpu_synth *j = calloc(1, sizeof(*j));
	char buf[96];
	if (!j)
		return NULL;
	j->s = s;
	j->n = ngpus > 0 ? ngpus : 8;
	j->start = o->start_ns;
	j->rng = o->seed * 0x9e3779b97f4a7c15ull + 0x67707573796e7468ull;
	j->capkey = mix(o->seed + 0x636170ull);
	j->g = calloc((size_t)j->n, sizeof(*j->g));
	j->cap = j->n * 8;
	j->q = calloc((size_t)j->cap, sizeof(*j->q));
	if (!j->g || !j->q)
		goto fail;
	j->name = gr_synth__intern(s, "NVIDIA H100 80GB HBM3");
	j->comm = gr_synth__intern(s, "python3");
	static const char *const kinds[] = {
		"xid", "throttle_start", "throttle_stop", "ecc_corrected",
		"ecc_uncorrected",
	};
	for (int i = 0; i < 5; i++)
		j->kinds[i] = gr_synth__intern(s, kinds[i]);
	j->src[0] = gr_synth__intern(s, "nvml");
	j->src[1] = gr_synth__intern(s, "kmsg");
	j->src[2] = gr_synth__intern(s, "nvml+kmsg");
	for (int i = 0; i < j->n; i++) {
		struct gpu *g = &j->g[i];
		unsigned bus = i < 8 ? buses[i] : (unsigned)(0x20 + i) & 0xff;
		uint64_t a = rnd(j), b = rnd(j);
		snprintf(buf, sizeof(buf), "GPU-%08x-%04x-%04x-%04x-%012llx",
			 (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
			 0x4000 | ((unsigned)a & 0x0fff),
			 0x8000 | ((unsigned)(b >> 48) & 0x3fff),
			 (unsigned long long)(b & 0xffffffffffffull));
		g->uuid = gr_synth__intern(s, buf);
		snprintf(buf, sizeof(buf), "0000:%02x:00.0", bus);
		g->pci = gr_synth__intern(s, buf);
		snprintf(g->pci_short, sizeof(g->pci_short), "0000:%02x:00",
			 bus);
		g->pid = GR_GPU_SYNTH_PID(i);
		g->temp = 38 + (double)(rnd(j) % 4);
		g->mem_used = (71ll << 30) + (int64_t)(rnd(j) % (2ull << 30));
		if (g->uuid < 0 || g->pci < 0)
			goto fail;
	}
	if (j->name < 0 || j->comm < 0 || j->src[2] < 0)
		goto fail;
	return j;
fail:
	gr_gpu_synth__free(j);
	errno = ENOMEM;
	return NULL;
}

void gr_gpu_synth__free(struct gr_gpu_synth *j)
{
	if (!j)
		return;
	free(j->g);
	free(j->q);
	free(j);
}

int gr_gpu_synth__ngpus(const struct gr_gpu_synth *j)
{
	return j->n;
}

static int64_t hang_off_s(int g)
{
	return (5400 + 5100 * (int64_t)g) % HANG_PERIOD_S;
}

int64_t gr_gpu_synth__hang_end(const struct gr_gpu_synth *j, int g,
			       int64_t t)
{
	if (g < 0 || g >= j->n || t < j->start)
		return 0;
	int64_t rel = t - j->start - hang_off_s(g) * S_NS;
	if (rel < 0)
		return 0;
	int64_t in = rel % (HANG_PERIOD_S * S_NS);
	return in < HANG_S * S_NS ? t - in + HANG_S * S_NS : 0;
}

int64_t gr_gpu_synth__next_hang(const struct gr_gpu_synth *j, int g,
				int64_t t)
{
	int64_t first = j->start + hang_off_s(g) * S_NS, p = HANG_PERIOD_S * S_NS;
	if (g < 0 || g >= j->n)
		return INT64_MAX;
	if (t <= first)
		return first;
	return first + (t - first + p - 1) / p * p;
}

static int hung(int g, int64_t t)
{
	int64_t r = t - hang_off_s(g);
	return r >= 0 && r % HANG_PERIOD_S < HANG_S;
}

static int hot(const struct gr_gpu_synth *j, int g, int64_t t)
{
	if (g != 5 % j->n)
		return 0;
	for (int i = 0; i < 3; i++)
		if (t >= hot_at[i] && t < hot_at[i] + HOT_S)
			return 1;
	return 0;
}

static int64_t mask_text(struct gr_gpu_synth *j, uint64_t mask)
{
	char text[96];
	size_t len = 0;
	for (int i = 0; i < j->nmasks; i++)
		if (j->masks[i] == mask)
			return j->masks_id[i];
	text[0] = 0;
	for (int i = 0; i < NREASONS; i++)
		if (mask & reasons[i].bit)
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"%s%s", len ? "," : "",
						reasons[i].name);
	int64_t id = gr_synth__intern(j->s, text);
	if (j->nmasks < 8) {
		j->masks[j->nmasks] = mask;
		j->masks_id[j->nmasks++] = id;
	}
	return id;
}

static struct row *push(struct gr_gpu_synth *j, int t, int64_t ts)
{
	struct row *r = &j->q[j->nq++];
	r->t = t;
	memset(r->v, 0, sizeof(r->v));
	r->v[GR_EV_ts] = ts;
	/* NULL until set, but ts (and host, from the metadata). */
	r->nm = (gr_tables[t].ncols >= 64 ? ~0ull :
		 (1ull << gr_tables[t].ncols) - 1) &
		~(1ull << GR_EV_ts | 1ull << GR_EV_host);
	return r;
}

static void set(struct row *r, int col, int64_t v)
{
	r->v[col] = v;
	r->nm &= ~(1ull << col);
}

static struct row *event(struct gr_gpu_synth *j, int g, int64_t ts, int kind,
			 int64_t src)
{
	struct row *r = push(j, GR_T_gpu_event, ts);
	set(r, GR_gpu_event_gpu, g);
	set(r, GR_gpu_event_pci, j->g[g].pci);
	set(r, GR_gpu_event_kind, j->kinds[kind]);
	set(r, GR_gpu_event_source, src);
	return r;
}

static void xid_event(struct gr_gpu_synth *j, const struct xid_at *x,
		      int64_t ts)
{
	int g = x->gpu % j->n;
	char text[320];
	struct row *r = event(j, g, ts, K_XID, j->src[x->named ? 2 : 1]);
	set(r, GR_gpu_event_xid, x->xid);
	if (x->named) {
		set(r, GR_gpu_event_pid, j->g[g].pid);
		set(r, GR_gpu_event_comm, j->comm);
		snprintf(text, sizeof(text),
			 "NVRM: Xid (PCI:%s): %d, pid=%lld, name=python3, %s",
			 j->g[g].pci_short, x->xid, (long long)j->g[g].pid,
			 x->msg);
	} else {
		snprintf(text, sizeof(text), "NVRM: Xid (PCI:%s): %d, %s",
			 j->g[g].pci_short, x->xid, x->msg);
	}
	set(r, GR_gpu_event_text, gr_synth__intern(j->s, text));
	const struct gr_xid *c = gr_xid__find(x->xid);
	if (c) {
		set(r, GR_gpu_event_meaning, gr_synth__intern(j->s, c->meaning));
		set(r, GR_gpu_event_action, gr_synth__intern(j->s, c->action));
	}
	if (x->xid == 94) {
		/* The uncorrected error the contained one was. */
		event(j, g, ts + MS, K_ECC_U, j->src[0]);
		j->g[g].ecc_unc_next = 1;
	}
	if (x->xid == 63) {
		j->g[g].remapped_unc++;
		j->g[g].pending = 1;
	}
}

/* One GPU's sample at tick t (seconds), ts its time. */
static int64_t sample(struct gr_gpu_synth *j, int gi, int64_t t, int64_t ts)
{
	struct gpu *g = &j->g[gi];
	int64_t c = t % CYCLE_S, util, umem, sm, power, target, ns;
	uint64_t mask = 0;
	int is_hot = hot(j, gi, t);
	if (hung(gi, t)) {
		util = 100;
		umem = 0;
		sm = 1980;
		power = urange(j, 118000, 142000);
		target = 41;
	} else if (c < TRAIN_S) {
		util = urange(j, 93, 100);
		umem = urange(j, 42, 68);
		sm = 1980;
		power = urange(j, 560000, 660000);
		target = 66 + (gi == 5 % j->n ? 7 : gi % 3);
		/* About 3 capped blocks a day a GPU, wholly in training. */
		if (t / CAP_BLOCK_S % 4 < 3 &&
		    mix(j->capkey + (uint64_t)gi * 1000003u +
			(uint64_t)(t / CAP_BLOCK_S)) % 96 == 0) {
			mask |= R_SW_POWER_CAP;
			power = urange(j, 694000, 700000);
			sm = urange(j, 1740, 1860);
		}
	} else if (c < TRAIN_S + EVAL_S) {
		util = urange(j, 35, 60);
		umem = urange(j, 15, 30);
		sm = 1980;
		power = urange(j, 290000, 380000);
		target = 55;
	} else {
		util = urange(j, 0, 2);
		umem = util ? 1 : 0;
		sm = util ? 1980 : 345;
		power = urange(j, 88000, 112000);
		target = 40;
		if (!util)
			mask |= R_IDLE;
	}
	if (is_hot) {
		mask |= R_HW_THERMAL;
		target = 90;
		sm = urange(j, 1260, 1400);
	}
	/* Toward the phase's temperature, a minute's time constant. */
	g->temp += ((double)target - g->temp) / (is_hot ? 20.0 : 60.0);
	int64_t temp = (int64_t)(g->temp + 0.5) + (int64_t)(rnd(j) % 3) - 1;

	struct row *r = push(j, GR_T_gpu, ts);
	int pcie = t % PCIE_EVERY == 0;
	ns = pcie ? urange(j, 20150000, 20400000) : urange(j, 160000, 290000);
	set(r, GR_gpu_gpu, gi);
	set(r, GR_gpu_uuid, g->uuid);
	set(r, GR_gpu_pci, g->pci);
	set(r, GR_gpu_name, j->name);
	set(r, GR_gpu_util_gpu, util);
	set(r, GR_gpu_util_mem, umem);
	set(r, GR_gpu_sm_clock, sm);
	set(r, GR_gpu_mem_clock, 2619);
	set(r, GR_gpu_power_mw, power);
	set(r, GR_gpu_power_limit_mw, POWER_LIMIT_MW);
	set(r, GR_gpu_temp_c, temp);
	g->mem_used += ((int64_t)(rnd(j) % 33) - 16) * (1ll << 20);
	if (g->mem_used > (74ll << 30) || g->mem_used < (70ll << 30))
		g->mem_used = 72ll << 30;
	set(r, GR_gpu_mem_used, g->mem_used);
	set(r, GR_gpu_mem_total, MEM_TOTAL);
	if (mask)
		set(r, GR_gpu_throttle, mask_text(j, mask));
	set(r, GR_gpu_throttle_mask, (int64_t)mask);
	if (pcie) {
		int busy = util > 10;
		set(r, GR_gpu_pcie_tx, busy ? urange(j, 900, 2600) << 20 :
					      urange(j, 1, 40) << 10);
		set(r, GR_gpu_pcie_rx, busy ? urange(j, 1500, 4200) << 20 :
					      urange(j, 1, 40) << 10);
		/* The run's first reading: since the driver loaded. */
		set(r, GR_gpu_pcie_replays,
		    gi != 4 % j->n ? 0 : t == 0 ? 7 :
		    rnd(j) % 400 == 0 ? urange(j, 1, 3) : 0);
	}
	int64_t sbe = gi != 3 % j->n ? 0 : t == 0 ? 2 :
		      rnd(j) % 20000 == 0 ? urange(j, 1, 4) : 0;
	set(r, GR_gpu_ecc_corrected, sbe);
	set(r, GR_gpu_ecc_uncorrected, g->ecc_unc_next);
	g->ecc_unc_next = 0;
	set(r, GR_gpu_remap_pending, g->pending);
	set(r, GR_gpu_remapped_corr, gi == 3 % j->n);
	set(r, GR_gpu_remapped_unc, g->remapped_unc);
	int64_t crc = gi == 1 % j->n && rnd(j) % 5000 == 0 ? urange(j, 1, 20)
							   : 0;
	set(r, GR_gpu_nvlink_crc, crc);
	set(r, GR_gpu_nvlink_replay, crc / 2);
	set(r, GR_gpu_nvlink_recovery, crc > 15);
	set(r, GR_gpu_sample_ns, ns);

	/* gpurecd's events: reasons that start or stop, ECC counts. */
	uint64_t on = mask & ~g->prev_mask & EVENT_REASONS,
		 off = g->prev_mask & ~mask & EVENT_REASONS;
	for (int i = 0; i < NREASONS; i++) {
		if (on & reasons[i].bit)
			set(event(j, gi, ts, K_TSTART, j->src[0]),
			    GR_gpu_event_detail,
			    gr_synth__intern(j->s, reasons[i].name));
		if (off & reasons[i].bit)
			set(event(j, gi, ts, K_TSTOP, j->src[0]),
			    GR_gpu_event_detail,
			    gr_synth__intern(j->s, reasons[i].name));
	}
	g->prev_mask = mask;
	if (sbe && t)
		event(j, gi, ts - 300 * MS, K_ECC_C, j->src[0]);

	/* Its process, as NVML lists it (no utilization sample at 0). */
	r = push(j, GR_T_gpu_process, ts);
	set(r, GR_gpu_process_pid, g->pid);
	set(r, GR_gpu_process_comm, j->comm);
	set(r, GR_gpu_process_gpu, gi);
	set(r, GR_gpu_process_pci, g->pci);
	set(r, GR_gpu_process_mem_used, g->mem_used - (530ll << 20));
	if (util) {
		int64_t su = util - (int64_t)(rnd(j) % 3);
		set(r, GR_gpu_process_sm_util, su > 0 ? su : 0);
		set(r, GR_gpu_process_mem_util, umem);
	}
	return ns;
}

static void tick(struct gr_gpu_synth *j)
{
	int64_t t = j->k++, ts = j->start + t * S_NS;
	j->nq = j->iq = 0;
	for (int i = 0; i < j->n; i++)
		ts += sample(j, i, t, ts);
	for (int i = 0; i < NXIDS; i++)
		if (xids[i].t == t)
			xid_event(j, &xids[i],
				  j->start + t * S_NS + 400 * MS +
				  (int64_t)(rnd(j) % (100 * MS)));
	/* ts order (insertion sort, stable: a handful out of place). */
	for (int a = 1; a < j->nq; a++) {
		struct row tmp = j->q[a];
		int b = a;
		while (b > 0 && j->q[b - 1].v[GR_EV_ts] > tmp.v[GR_EV_ts]) {
			j->q[b] = j->q[b - 1];
			b--;
		}
		j->q[b] = tmp;
	}
}

int64_t gr_gpu_synth__peek_ts(const struct gr_gpu_synth *j)
{
	if (j->iq < j->nq)
		return j->q[j->iq].v[GR_EV_ts];
	return j->start + j->k * S_NS;
}

void gr_gpu_synth__next(struct gr_gpu_synth *j, int *table, int64_t *vals,
			uint64_t *nullmask)
{
	if (j->iq >= j->nq)
		tick(j);
	const struct row *r = &j->q[j->iq++];
	*table = r->t;
	memcpy(vals, r->v, sizeof(r->v));
	*nullmask = r->nm;
}
