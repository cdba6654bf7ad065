/* libnvidia-ml.c - a mock NVML (libnvidia-ml.so.1) serving scripted GPUs,
 * for testing gpurecd's gpu family on machines with no GPU.  Every entry
 * point of recorder/gpu/nvml.h's GR_NVML_FNS is defined here with that
 * header's prototype (the X-macro declares them all below, so a definition
 * that differs does not compile; each is referenced and the library is
 * linked -z defs, so one that is missing does not link).
 *
 * The script is the file named by $GR_MOCK_NVML, read by the first
 * nvmlInit/nvmlInit_v2 (they are reference-counted: the last nvmlShutdown
 * forgets it, and the next init reads it again).  $GR_MOCK_NVML unset or
 * unreadable: init returns NVML_ERROR_DRIVER_NOT_LOADED.  A bad line: one
 * line "libnvidia-ml mock: FILE:LINE: why" on stderr, NVML_ERROR_UNKNOWN.
 * One directive a line; '#' (outside quotes) starts a comment.
 *
 *   driver VERSION
 *   gpu N [uuid=S] [pci=DDDDDDDD:BB:DD.F] [name="S"] [mem_total=BYTES]
 *         [power_limit=MW] [nvlinks=K]
 *   step S gpu N KEY=VALUE...
 *   event S gpu N sbe|dbe|xid|clock|pstate [xid=X]
 *   lost S gpu N
 *   fail NAME ERR
 *
 * Devices are 0..7, declared before use and without gaps.  Device N's
 * step: each nvmlDeviceGetUtilizationRates call on N moves it on by one,
 * whatever the call returns; the k-th call (k from 0) and every other
 * getter after it up to the next see step k (before the first call, step
 * 0).  A value is the one of the last step line for that key with
 * S <= step (0 before its first one); a getter whose keys the device never
 * got in the whole script returns NVML_ERROR_NOT_SUPPORTED.  The keys and
 * their getters are in the table `keys` below.  An event falls due once
 * its device's step has reached S through GetUtilizationRates (one at
 * step 0: after the first call) and is delivered once, in script order, to
 * an nvmlEventSetWait(_v2) on a set the device is registered in for that
 * type (an event whose type is not registered stays undelivered).  `lost`:
 * from step S on every call on the device returns NVML_ERROR_GPU_IS_LOST
 * (nvmlDeviceGetHandleByIndex(_v2) excepted).  `fail`: the entry point
 * always returns ERR (checked before `lost`).
 *
 * $GR_MOCK_NVML_LOG=PATH: one line appended per entry-point call, its name
 * and, for a call on a device (or GetHandleByIndex), the device's index:
 * "nvmlDeviceGetPowerUsage 0".
 *
 * One mutex guards everything; nvmlEventSetWait drops it while it sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/gpu/nvml.h"

#define API __attribute__((visibility("default")))

/* Every entry point declared from the X-macro: a definition below whose
 * prototype differs from nvml.h's is a compile error. */
#define DECLARE(ret, name, args) API ret name args;
GR_NVML_FNS(DECLARE)
#undef DECLARE

/* Every entry point referenced: one not defined is an undefined symbol,
 * which the -z defs link refuses. */
#define ADDRESS(ret, name, args) (void *)name,
__attribute__((used)) static void *const defined[] = { GR_NVML_FNS(ADDRESS) };
#undef ADDRESS

/* The entry points by number, for `fail` and the log. */
#define ENUM(ret, name, args) F_##name,
enum fn { GR_NVML_FNS(ENUM) F_COUNT };
#undef ENUM
#define NAME(ret, name, args) #name,
static const char *const fn_names[] = { GR_NVML_FNS(NAME) };
#undef NAME

#define MAX_DEVS 8
#define MAX_SETS 32
#define NO_ERR 0	/* fails[]: no `fail` line (ERR 0 is refused) */

/* The step keys.  U32: unsigned int getters; U64: unsigned long long;
 * BOOL: 0 or 1. */
enum key {
	K_UTIL, K_MEMUTIL, K_SM, K_MEMCLK, K_POWER, K_TEMP, K_USED, K_THROTTLE,
	K_TX, K_RX, K_REPLAY, K_SBE, K_DBE, K_REMAP_CORR, K_REMAP_UNC,
	K_PENDING, K_RETIRED_PENDING, K_NVCRC_FLIT, K_NVCRC_DATA, K_NVREPLAY,
	K_NVRECOVERY, K_PERSIST, K_PROCS, K_COUNT
};
static const struct {
	const char *name;
	unsigned long long max;
} keys[K_COUNT] = {
	[K_UTIL] = { "util", UINT_MAX },	/* GetUtilizationRates .gpu */
	[K_MEMUTIL] = { "memutil", UINT_MAX },	/* GetUtilizationRates .memory */
	[K_SM] = { "sm", UINT_MAX },		/* GetClockInfo SM, GRAPHICS */
	[K_MEMCLK] = { "memclk", UINT_MAX },	/* GetClockInfo MEM */
	[K_POWER] = { "power", UINT_MAX },	/* GetPowerUsage */
	[K_TEMP] = { "temp", UINT_MAX },	/* GetTemperature GPU */
	[K_USED] = { "used", ULLONG_MAX },	/* GetMemoryInfo (with mem_total) */
	[K_THROTTLE] = { "throttle", ULLONG_MAX }, /* GetCurrentClocks*Reasons */
	[K_TX] = { "tx", UINT_MAX },		/* GetPcieThroughput TX */
	[K_RX] = { "rx", UINT_MAX },		/* GetPcieThroughput RX */
	[K_REPLAY] = { "replay", UINT_MAX },	/* GetPcieReplayCounter */
	[K_SBE] = { "sbe", ULLONG_MAX },	/* GetTotalEccErrors CORRECTED */
	[K_DBE] = { "dbe", ULLONG_MAX },	/* GetTotalEccErrors UNCORRECTED */
	[K_REMAP_CORR] = { "remap_corr", UINT_MAX },	/* GetRemappedRows */
	[K_REMAP_UNC] = { "remap_unc", UINT_MAX },	/* GetRemappedRows */
	[K_PENDING] = { "pending", 1 },			/* GetRemappedRows */
	[K_RETIRED_PENDING] = { "retired_pending", 1 },
	[K_NVCRC_FLIT] = { "nvcrc_flit", ULLONG_MAX },	/* NvLinkErrorCounter */
	[K_NVCRC_DATA] = { "nvcrc_data", ULLONG_MAX },
	[K_NVREPLAY] = { "nvreplay", ULLONG_MAX },
	[K_NVRECOVERY] = { "nvrecovery", ULLONG_MAX },
	[K_PERSIST] = { "persist", 1 },		/* GetPersistenceMode */
	[K_PROCS] = { "proc", 0 },	/* proc=PID:MEM:SM:MEM, procs=none */
};

struct proc {
	unsigned int pid, sm, mem;
	unsigned long long used;
};

/* One KEY=VALUE of a step line (a line's proc= together are one). */
struct rec {
	unsigned int step;
	enum key key;
	unsigned long long val;
	struct proc *procs;
	unsigned int nprocs;
};

struct nvmlDevice_st {
	int idx, declared;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	int has_pci;
	nvmlPciInfo_t pci;
	int has_mem_total, has_power_limit;
	unsigned long long mem_total;
	unsigned int power_limit, nvlinks;
	long long lost_step;	/* -1: never */
	unsigned long long samples;	/* GetUtilizationRates calls */
	int ever[K_COUNT];
	struct rec *recs;
	size_t nrecs;
};

struct event {
	unsigned int step, dev;
	unsigned long long type, data;
	int delivered;
};

struct nvmlEventSet_st {
	int used;
	unsigned long long mask[MAX_DEVS];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned int refs;	/* nvmlInit minus nvmlShutdown */
static struct nvmlDevice_st devs[MAX_DEVS];
static unsigned int ndevs;
static char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
static struct event *events;
static size_t nevents;
static int fails[F_COUNT];
static struct nvmlEventSet_st sets[MAX_SETS];
static int log_fd = -2;	/* -2: not opened yet, -1: no log */

#define SUPPORTED_EVENTS                                                     \
	(nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError |   \
	 nvmlEventTypeXidCriticalError | nvmlEventTypeClock |                \
	 nvmlEventTypePState)

/* ---- state ---- */

static void forget(void)
{
	for (int i = 0; i < MAX_DEVS; i++) {
		for (size_t j = 0; j < devs[i].nrecs; j++)
			free(devs[i].recs[j].procs);
		free(devs[i].recs);
	}
	memset(devs, 0, sizeof(devs));
	ndevs = 0;
	driver[0] = 0;
	free(events);
	events = NULL;
	nevents = 0;
	for (int i = 0; i < F_COUNT; i++)
		fails[i] = NO_ERR;
	memset(sets, 0, sizeof(sets));
}

static unsigned long long step_of(const struct nvmlDevice_st *d)
{
	return d->samples ? d->samples - 1 : 0;
}

/* The record that holds @key's value at @d's step, or NULL (value 0). */
static const struct rec *current(const struct nvmlDevice_st *d, enum key key)
{
	unsigned long long step = step_of(d);
	const struct rec *best = NULL;
	for (size_t i = 0; i < d->nrecs; i++) {
		const struct rec *r = &d->recs[i];
		if (r->key == key && r->step <= step &&
		    (!best || r->step >= best->step))
			best = r;
	}
	return best;
}

static unsigned long long value(const struct nvmlDevice_st *d, enum key key)
{
	const struct rec *r = current(d, key);
	return r ? r->val : 0;
}

/* ---- the log ---- */

static void log_call(enum fn f, const struct nvmlDevice_st *d)
{
	if (log_fd == -2) {
		const char *p = getenv("GR_MOCK_NVML_LOG");
		log_fd = p && *p ? open(p, O_WRONLY | O_APPEND | O_CREAT |
						   O_CLOEXEC, 0644) : -1;
	}
	if (log_fd < 0)
		return;
	char line[96];
	int n = d ? snprintf(line, sizeof(line), "%s %d\n", fn_names[f], d->idx)
		  : snprintf(line, sizeof(line), "%s\n", fn_names[f]);
	if (n > 0 && write(log_fd, line, (size_t)n) < 0) {
		/* a test's log: nothing to do about it */
	}
}

/* ---- the script ---- */

struct parser {
	const char *file;
	unsigned int line;
	int bad;
};

static void syntax(struct parser *p, const char *why, const char *what)
{
	if (p->bad)
		return;
	p->bad = 1;
	fprintf(stderr, "libnvidia-ml mock: %s:%u: %s%s%s\n", p->file, p->line,
		why, what ? ": " : "", what ? what : "");
}

/* Splits @s in place into at most @max words; quotes group ("a b" is one
 * word, the quotes removed, also in key="a b"); '#' outside quotes ends
 * the line.  -1 on an unterminated quote or too many words. */
static int split(char *s, char **w, int max)
{
	int n = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
			s++;
		if (!*s || *s == '#')
			return n;
		if (n == max)
			return -1;
		char *out = s;
		w[n++] = out;
		while (*s && *s != ' ' && *s != '\t' && *s != '\r' &&
		       *s != '\n' && *s != '#') {
			if (*s == '"') {
				char *q = strchr(s + 1, '"');
				if (!q)
					return -1;
				size_t len = (size_t)(q - s - 1);
				memmove(out, s + 1, len);
				out += len;
				s = q + 1;
			} else {
				*out++ = *s++;
			}
		}
		char c = *s;
		*out = 0;
		if (!c || c == '#')
			return n;
		s++;
	}
}

/* A number: decimal, or hex after 0x. */
static int number(const char *s, unsigned long long max,
		  unsigned long long *v)
{
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, base);
	if (errno || *end || x > max)
		return -1;
	*v = x;
	return 0;
}

/* "gpu N" at @w: the declared device, or NULL. */
static struct nvmlDevice_st *device_ref(struct parser *p, char **w)
{
	unsigned long long n;
	if (strcmp(w[0], "gpu") || number(w[1], MAX_DEVS - 1, &n)) {
		syntax(p, "expected gpu N (N 0..7)", NULL);
		return NULL;
	}
	if (!devs[n].declared) {
		syntax(p, "gpu not declared", w[1]);
		return NULL;
	}
	return &devs[n];
}

static int parse_pci(const char *s, nvmlPciInfo_t *pci)
{
	unsigned int dom, bus, dev, fn;
	int end = -1;
	if (strlen(s) >= sizeof(pci->busId) ||
	    sscanf(s, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &end) != 4 ||
	    end != (int)strlen(s) || bus > 0xff || dev > 0x1f || fn > 7 ||
	    strchr(s, '-') || strchr(s, '+') || strchr(s, ' '))
		return -1;
	memset(pci, 0, sizeof(*pci));
	strcpy(pci->busId, s);
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy),
		 "%04X:%02X:%02X.%X", dom & 0xffff, bus, dev, fn);
	pci->domain = dom;
	pci->bus = bus;
	pci->device = dev;
	return 0;
}

static void parse_gpu(struct parser *p, char **w, int n)
{
	unsigned long long idx, v;
	if (n < 2 || number(w[1], MAX_DEVS - 1, &idx))
		return syntax(p, "expected gpu N (N 0..7)", NULL);
	struct nvmlDevice_st *d = &devs[idx];
	if (d->declared)
		return syntax(p, "gpu declared twice", w[1]);
	if (idx != ndevs)
		return syntax(p, "gpus must be declared 0, 1, ... in order",
			      w[1]);
	d->declared = 1;
	d->idx = (int)idx;
	d->lost_step = -1;
	ndevs++;
	for (int i = 2; i < n; i++) {
		char *eq = strchr(w[i], '=');
		if (!eq)
			return syntax(p, "expected key=value", w[i]);
		*eq = 0;
		const char *k = w[i], *val = eq + 1;
		if (!strcmp(k, "uuid")) {
			if (!*val || strlen(val) >= sizeof(d->uuid))
				return syntax(p, "bad uuid", val);
			strcpy(d->uuid, val);
		} else if (!strcmp(k, "name")) {
			if (!*val || strlen(val) >= sizeof(d->name))
				return syntax(p, "bad name", val);
			strcpy(d->name, val);
		} else if (!strcmp(k, "pci")) {
			if (parse_pci(val, &d->pci))
				return syntax(p, "bad pci bus id", val);
			d->has_pci = 1;
		} else if (!strcmp(k, "mem_total")) {
			if (number(val, ULLONG_MAX, &d->mem_total))
				return syntax(p, "bad mem_total", val);
			d->has_mem_total = 1;
		} else if (!strcmp(k, "power_limit")) {
			if (number(val, UINT_MAX, &v))
				return syntax(p, "bad power_limit", val);
			d->power_limit = (unsigned int)v;
			d->has_power_limit = 1;
		} else if (!strcmp(k, "nvlinks")) {
			if (number(val, NVML_NVLINK_MAX_LINKS, &v))
				return syntax(p, "bad nvlinks (0..18)", val);
			d->nvlinks = (unsigned int)v;
		} else {
			return syntax(p, "unknown gpu key", k);
		}
	}
}

static int add_rec(struct nvmlDevice_st *d, const struct rec *r)
{
	struct rec *t = realloc(d->recs, (d->nrecs + 1) * sizeof(*t));
	if (!t)
		return -1;
	d->recs = t;
	d->recs[d->nrecs++] = *r;
	d->ever[r->key] = 1;
	return 0;
}

/* proc=PID:MEMBYTES|na:SM:MEM */
static int parse_proc(const char *s, struct proc *pr)
{
	char buf[128], *f[4], *save = NULL;
	unsigned long long v;
	int n = 0;
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (char *t = strtok_r(buf, ":", &save); t;
	     t = strtok_r(NULL, ":", &save)) {
		if (n == 4)
			return -1;
		f[n++] = t;
	}
	if (n != 4 || strstr(s, "::") || s[strlen(s) - 1] == ':')
		return -1;
	if (number(f[0], UINT_MAX, &v) || !v)
		return -1;
	pr->pid = (unsigned int)v;
	if (!strcmp(f[1], "na"))
		pr->used = NVML_VALUE_NOT_AVAILABLE;
	else if (number(f[1], ULLONG_MAX - 1, &pr->used))
		return -1;
	if (number(f[2], UINT_MAX, &v))
		return -1;
	pr->sm = (unsigned int)v;
	if (number(f[3], UINT_MAX, &v))
		return -1;
	pr->mem = (unsigned int)v;
	return 0;
}

static void parse_step(struct parser *p, char **w, int n)
{
	unsigned long long s;
	if (n < 4 || number(w[1], UINT_MAX, &s))
		return syntax(p, "expected step S gpu N key=value...", NULL);
	struct nvmlDevice_st *d = device_ref(p, w + 2);
	if (!d)
		return;
	if (n < 5)
		return syntax(p, "step without key=value", NULL);
	struct rec pl = { .step = (unsigned int)s, .key = K_PROCS };
	int procs = 0, none = 0;
	for (int i = 4; i < n; i++) {
		char *eq = strchr(w[i], '=');
		if (!eq)
			return syntax(p, "expected key=value", w[i]);
		*eq = 0;
		const char *k = w[i], *val = eq + 1;
		if (!strcmp(k, "proc")) {
			struct proc pr;
			if (parse_proc(val, &pr)) {
				free(pl.procs);
				return syntax(p, "bad proc (PID:MEMBYTES|na:SM:MEM)",
					      val);
			}
			struct proc *t = realloc(pl.procs,
						 (pl.nprocs + 1) * sizeof(*t));
			if (!t) {
				free(pl.procs);
				return syntax(p, "out of memory", NULL);
			}
			pl.procs = t;
			pl.procs[pl.nprocs++] = pr;
			procs = 1;
			continue;
		}
		if (!strcmp(k, "procs")) {
			if (strcmp(val, "none")) {
				free(pl.procs);
				return syntax(p, "procs= takes none", val);
			}
			none = 1;
			continue;
		}
		enum key key = K_COUNT;
		for (int j = 0; j < K_PROCS; j++)
			if (!strcmp(k, keys[j].name))
				key = (enum key)j;
		struct rec r = { .step = (unsigned int)s, .key = key };
		if (key == K_COUNT) {
			free(pl.procs);
			return syntax(p, "unknown step key", k);
		}
		if (number(val, keys[key].max, &r.val)) {
			free(pl.procs);
			return syntax(p, "bad value", val);
		}
		if (add_rec(d, &r)) {
			free(pl.procs);
			return syntax(p, "out of memory", NULL);
		}
	}
	if (procs && none) {
		free(pl.procs);
		return syntax(p, "proc= and procs=none on one line", NULL);
	}
	if ((procs || none) && add_rec(d, &pl)) {
		free(pl.procs);
		return syntax(p, "out of memory", NULL);
	}
}

static void parse_event(struct parser *p, char **w, int n)
{
	static const struct {
		const char *name;
		unsigned long long type;
	} types[] = {
		{ "sbe", nvmlEventTypeSingleBitEccError },
		{ "dbe", nvmlEventTypeDoubleBitEccError },
		{ "xid", nvmlEventTypeXidCriticalError },
		{ "clock", nvmlEventTypeClock },
		{ "pstate", nvmlEventTypePState },
	};
	unsigned long long s;
	if (n < 5 || n > 6 || number(w[1], UINT_MAX, &s))
		return syntax(p, "expected event S gpu N TYPE [xid=X]", NULL);
	struct nvmlDevice_st *d = device_ref(p, w + 2);
	if (!d)
		return;
	struct event e = { .step = (unsigned int)s, .dev = (unsigned int)d->idx };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(w[4], types[i].name))
			e.type = types[i].type;
	if (!e.type)
		return syntax(p, "unknown event type", w[4]);
	if (e.type == nvmlEventTypeXidCriticalError) {
		if (n != 6 || strncmp(w[5], "xid=", 4) ||
		    number(w[5] + 4, ULLONG_MAX, &e.data))
			return syntax(p, "xid event needs xid=X", NULL);
	} else if (n != 5) {
		return syntax(p, "only xid events take xid=", w[5]);
	}
	struct event *t = realloc(events, (nevents + 1) * sizeof(*t));
	if (!t)
		return syntax(p, "out of memory", NULL);
	events = t;
	events[nevents++] = e;
}

static void parse_line(struct parser *p, char *line)
{
	char *w[64];
	int n = split(line, w, 64);
	unsigned long long v;
	if (n < 0)
		return syntax(p, "unterminated quote or too many words", NULL);
	if (!n)
		return;
	if (!strcmp(w[0], "driver")) {
		if (n != 2 || strlen(w[1]) >= sizeof(driver))
			return syntax(p, "expected driver VERSION", NULL);
		strcpy(driver, w[1]);
	} else if (!strcmp(w[0], "gpu")) {
		parse_gpu(p, w, n);
	} else if (!strcmp(w[0], "step")) {
		parse_step(p, w, n);
	} else if (!strcmp(w[0], "event")) {
		parse_event(p, w, n);
	} else if (!strcmp(w[0], "lost")) {
		if (n != 4 || number(w[1], UINT_MAX, &v))
			return syntax(p, "expected lost S gpu N", NULL);
		struct nvmlDevice_st *d = device_ref(p, w + 2);
		if (d && (d->lost_step < 0 || (long long)v < d->lost_step))
			d->lost_step = (long long)v;
	} else if (!strcmp(w[0], "fail")) {
		if (n != 3)
			return syntax(p, "expected fail NAME ERR", NULL);
		int f = -1;
		for (int i = 0; i < F_COUNT; i++)
			if (!strcmp(w[1], fn_names[i]))
				f = i;
		if (f < 0 || f == F_nvmlErrorString)
			return syntax(p, "no such entry point (or one that cannot fail)",
				      w[1]);
		if (number(w[2], INT_MAX, &v) || !v)
			return syntax(p, "bad NVML error number", w[2]);
		fails[f] = (int)v;
	} else {
		syntax(p, "unknown directive", w[0]);
	}
}

/* 0, or an NVML error with the state forgotten. */
static nvmlReturn_t load(void)
{
	forget();
	const char *path = getenv("GR_MOCK_NVML");
	FILE *f = path && *path ? fopen(path, "re") : NULL;
	if (!f)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	struct parser p = { .file = path };
	char *line = NULL;
	size_t cap = 0;
	while (!p.bad && getline(&line, &cap, f) >= 0) {
		p.line++;
		parse_line(&p, line);
	}
	free(line);
	fclose(f);
	if (p.bad) {
		forget();
		return NVML_ERROR_UNKNOWN;
	}
	return NVML_SUCCESS;
}

/* ---- entry and exit ---- */

static nvmlReturn_t leave(nvmlReturn_t r)
{
	pthread_mutex_unlock(&mu);
	return r;
}

/* Locks; logs; checks init and `fail`.  The caller leave()s. */
static nvmlReturn_t enter(enum fn f)
{
	pthread_mutex_lock(&mu);
	log_call(f, NULL);
	if (!refs)
		return NVML_ERROR_UNINITIALIZED;
	if (fails[f] != NO_ERR)
		return (nvmlReturn_t)fails[f];
	return NVML_SUCCESS;
}

static struct nvmlDevice_st *valid(nvmlDevice_t d)
{
	for (unsigned int i = 0; i < ndevs; i++)
		if (d == &devs[i])
			return d;
	return NULL;
}

/* enter() for a call on a device: also the handle and `lost`. */
static nvmlReturn_t enter_dev(enum fn f, nvmlDevice_t d)
{
	pthread_mutex_lock(&mu);
	struct nvmlDevice_st *v = refs ? valid(d) : NULL;
	log_call(f, v);
	if (!refs)
		return NVML_ERROR_UNINITIALIZED;
	if (!v)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (f == F_nvmlDeviceGetUtilizationRates)
		v->samples++;
	if (fails[f] != NO_ERR)
		return (nvmlReturn_t)fails[f];
	if (v->lost_step >= 0 &&
	    step_of(v) >= (unsigned long long)v->lost_step)
		return NVML_ERROR_GPU_IS_LOST;
	return NVML_SUCCESS;
}

static nvmlReturn_t init(enum fn f)
{
	pthread_mutex_lock(&mu);
	log_call(f, NULL);
	if (refs) {
		refs++;
		return leave(NVML_SUCCESS);
	}
	nvmlReturn_t r = load();
	if (r == NVML_SUCCESS && fails[f] != NO_ERR) {
		r = (nvmlReturn_t)fails[f];
		forget();
	}
	if (r == NVML_SUCCESS)
		refs = 1;
	return leave(r);
}

API nvmlReturn_t nvmlInit_v2(void)
{
	return init(F_nvmlInit_v2);
}

API nvmlReturn_t nvmlInit(void)
{
	return init(F_nvmlInit);
}

API nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t r = enter(F_nvmlShutdown);
	if (r == NVML_SUCCESS && !--refs)
		forget();
	return leave(r);
}

API const char *nvmlErrorString(nvmlReturn_t r)
{
	pthread_mutex_lock(&mu);
	log_call(F_nvmlErrorString, NULL);
	pthread_mutex_unlock(&mu);
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT: return "Timeout";
	case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
	case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
	case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
	case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
	case NVML_ERROR_OPERATING_SYSTEM:
		return "The operating system has blocked the request.";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		return "RM has detected an NVML/RM version mismatch.";
	case NVML_ERROR_IN_USE: return "In use by another client";
	case NVML_ERROR_MEMORY: return "Insufficient Memory";
	case NVML_ERROR_NO_DATA: return "No data";
	case NVML_ERROR_UNKNOWN: return "Unknown Error";
	}
	return "Unknown Error";
}

/* ---- system ---- */

static nvmlReturn_t copy_str(const char *s, char *buf, unsigned int len)
{
	if (!*s)
		return NVML_ERROR_NOT_SUPPORTED;
	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (len < strlen(s) + 1)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, s);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	nvmlReturn_t r = enter(F_nvmlSystemGetDriverVersion);
	if (r == NVML_SUCCESS)
		r = copy_str(driver, version, length);
	return leave(r);
}

static nvmlReturn_t count(enum fn f, unsigned int *n)
{
	nvmlReturn_t r = enter(f);
	if (r == NVML_SUCCESS && !n)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*n = ndevs;
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	return count(F_nvmlDeviceGetCount_v2, n);
}

API nvmlReturn_t nvmlDeviceGetCount(unsigned int *n)
{
	return count(F_nvmlDeviceGetCount, n);
}

static nvmlReturn_t by_index(enum fn f, unsigned int i, nvmlDevice_t *d)
{
	pthread_mutex_lock(&mu);
	log_call(f, refs && i < ndevs ? &devs[i] : NULL);
	if (!refs)
		return leave(NVML_ERROR_UNINITIALIZED);
	if (fails[f] != NO_ERR)
		return leave((nvmlReturn_t)fails[f]);
	if (i >= ndevs || !d)
		return leave(NVML_ERROR_INVALID_ARGUMENT);
	*d = &devs[i];
	return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	return by_index(F_nvmlDeviceGetHandleByIndex_v2, i, d);
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d)
{
	return by_index(F_nvmlDeviceGetHandleByIndex, i, d);
}

/* ---- per-device getters ---- */

/* @key's value at @d's step into *@out (unsigned int or long long). */
static nvmlReturn_t get_u32(nvmlDevice_t d, enum key key, unsigned int *out)
{
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->ever[key])
		return NVML_ERROR_NOT_SUPPORTED;
	*out = (unsigned int)value(d, key);
	return NVML_SUCCESS;
}

static nvmlReturn_t get_u64(nvmlDevice_t d, enum key key,
			    unsigned long long *out)
{
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->ever[key])
		return NVML_ERROR_NOT_SUPPORTED;
	*out = value(d, key);
	return NVML_SUCCESS;
}

static nvmlReturn_t get_state(nvmlDevice_t d, enum key key,
			      nvmlEnableState_t *out)
{
	unsigned int v;
	nvmlReturn_t r = get_u32(d, key, &v);
	if (r == NVML_SUCCESS && !out)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*out = v ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return r;
}

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name,
				   unsigned int length)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetName, d);
	if (r == NVML_SUCCESS)
		r = copy_str(d->name, name, length);
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid,
				   unsigned int length)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetUUID, d);
	if (r == NVML_SUCCESS)
		r = copy_str(d->uuid, uuid, length);
	return leave(r);
}

static nvmlReturn_t pci_info(enum fn f, nvmlDevice_t d, nvmlPciInfo_t *pci)
{
	nvmlReturn_t r = enter_dev(f, d);
	if (r == NVML_SUCCESS && !d->has_pci)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && !pci)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*pci = d->pci;
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
	return pci_info(F_nvmlDeviceGetPciInfo_v3, d, pci);
}

API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
	return pci_info(F_nvmlDeviceGetPciInfo_v2, d, pci);
}

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d,
					       nvmlUtilization_t *u)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetUtilizationRates, d);
	if (r == NVML_SUCCESS && !d->ever[K_UTIL] && !d->ever[K_MEMUTIL])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && !u)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS) {
		u->gpu = (unsigned int)value(d, K_UTIL);
		u->memory = (unsigned int)value(d, K_MEMUTIL);
	}
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type,
					unsigned int *mhz)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetClockInfo, d);
	if (r != NVML_SUCCESS)
		return leave(r);
	switch (type) {
	case NVML_CLOCK_GRAPHICS:
	case NVML_CLOCK_SM:
		return leave(get_u32(d, K_SM, mhz));
	case NVML_CLOCK_MEM:
		return leave(get_u32(d, K_MEMCLK, mhz));
	case NVML_CLOCK_VIDEO:
		return leave(NVML_ERROR_NOT_SUPPORTED);
	}
	return leave(NVML_ERROR_INVALID_ARGUMENT);
}

API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetPowerUsage, d);
	if (r == NVML_SUCCESS)
		r = get_u32(d, K_POWER, mw);
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d,
						 unsigned int *mw)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetEnforcedPowerLimit, d);
	if (r == NVML_SUCCESS && !d->has_power_limit)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && !mw)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*mw = d->power_limit;
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d,
					  nvmlTemperatureSensors_t s,
					  unsigned int *c)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetTemperature, d);
	if (r == NVML_SUCCESS && s != NVML_TEMPERATURE_GPU)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		r = get_u32(d, K_TEMP, c);
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetMemoryInfo, d);
	if (r == NVML_SUCCESS && !d->has_mem_total)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && !m)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS) {
		unsigned long long used = value(d, K_USED);
		m->total = d->mem_total;
		m->used = used;
		m->free = used < d->mem_total ? d->mem_total - used : 0;
	}
	return leave(r);
}

/* Version 2: the mock's GPUs reserve nothing, so used is the same. */
API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetMemoryInfo_v2, d);
	if (r == NVML_SUCCESS && !d->has_mem_total)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && (!m || m->version != nvmlMemory_v2))
		r = m ? (nvmlReturn_t)25 /* ARGUMENT_VERSION_MISMATCH */
		      : NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS) {
		unsigned long long used = value(d, K_USED);
		m->total = d->mem_total;
		m->reserved = 0;
		m->used = used;
		m->free = used < d->mem_total ? d->mem_total - used : 0;
	}
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d,
						       unsigned long long *mask)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetCurrentClocksEventReasons, d);
	if (r == NVML_SUCCESS)
		r = get_u64(d, K_THROTTLE, mask);
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(
	nvmlDevice_t d, unsigned long long *mask)
{
	nvmlReturn_t r =
		enter_dev(F_nvmlDeviceGetCurrentClocksThrottleReasons, d);
	if (r == NVML_SUCCESS)
		r = get_u64(d, K_THROTTLE, mask);
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d,
					     nvmlPcieUtilCounter_t c,
					     unsigned int *kbps)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetPcieThroughput, d);
	if (r == NVML_SUCCESS && c != NVML_PCIE_UTIL_TX_BYTES &&
	    c != NVML_PCIE_UTIL_RX_BYTES)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		r = get_u32(d, c == NVML_PCIE_UTIL_TX_BYTES ? K_TX : K_RX, kbps);
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d,
						unsigned int *n)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetPcieReplayCounter, d);
	if (r == NVML_SUCCESS)
		r = get_u32(d, K_REPLAY, n);
	return leave(r);
}

/* Aggregate (lifetime) counts are the volatile ones: one driver load. */
API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d,
					     nvmlMemoryErrorType_t t,
					     nvmlEccCounterType_t c,
					     unsigned long long *n)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetTotalEccErrors, d);
	if (r == NVML_SUCCESS &&
	    ((t != NVML_MEMORY_ERROR_TYPE_CORRECTED &&
	      t != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) ||
	     (c != NVML_VOLATILE_ECC && c != NVML_AGGREGATE_ECC)))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		r = get_u64(d, t == NVML_MEMORY_ERROR_TYPE_CORRECTED ? K_SBE
								     : K_DBE,
			    n);
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr,
					   unsigned int *unc,
					   unsigned int *pending,
					   unsigned int *failed)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetRemappedRows, d);
	if (r == NVML_SUCCESS && !d->ever[K_REMAP_CORR] &&
	    !d->ever[K_REMAP_UNC] && !d->ever[K_PENDING])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && (!corr || !unc || !pending || !failed))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS) {
		*corr = (unsigned int)value(d, K_REMAP_CORR);
		*unc = (unsigned int)value(d, K_REMAP_UNC);
		*pending = (unsigned int)value(d, K_PENDING);
		*failed = 0;
	}
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(
	nvmlDevice_t d, nvmlEnableState_t *pending)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetRetiredPagesPendingStatus, d);
	if (r == NVML_SUCCESS)
		r = get_state(d, K_RETIRED_PENDING, pending);
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link,
					  nvmlEnableState_t *active)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetNvLinkState, d);
	if (r == NVML_SUCCESS && link >= NVML_NVLINK_MAX_LINKS)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && link >= d->nvlinks)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && !active)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*active = NVML_FEATURE_ENABLED;
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d,
						 unsigned int link,
						 nvmlNvLinkErrorCounter_t c,
						 unsigned long long *n)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetNvLinkErrorCounter, d);
	if (r != NVML_SUCCESS)
		return leave(r);
	if (link >= NVML_NVLINK_MAX_LINKS)
		return leave(NVML_ERROR_INVALID_ARGUMENT);
	if (link >= d->nvlinks)
		return leave(NVML_ERROR_NOT_SUPPORTED);
	switch (c) {
	case NVML_NVLINK_ERROR_DL_REPLAY:
		return leave(get_u64(d, K_NVREPLAY, n));
	case NVML_NVLINK_ERROR_DL_RECOVERY:
		return leave(get_u64(d, K_NVRECOVERY, n));
	case NVML_NVLINK_ERROR_DL_CRC_FLIT:
		return leave(get_u64(d, K_NVCRC_FLIT, n));
	case NVML_NVLINK_ERROR_DL_CRC_DATA:
		return leave(get_u64(d, K_NVCRC_DATA, n));
	}
	return leave(NVML_ERROR_INVALID_ARGUMENT);
}

API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d,
					      nvmlEnableState_t *mode)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetPersistenceMode, d);
	if (r == NVML_SUCCESS)
		r = get_state(d, K_PERSIST, mode);
	return leave(r);
}

/* ---- processes ---- */

/* The process list at @d's step, or NOT_SUPPORTED; *@n checked against
 * it as NVML does: too small (or no buffer while there are processes),
 * INSUFFICIENT_SIZE with *@n set to the count. */
static nvmlReturn_t procs(nvmlDevice_t d, unsigned int *n, const void *buf,
			  const struct rec **out)
{
	if (!d->ever[K_PROCS])
		return NVML_ERROR_NOT_SUPPORTED;
	if (!n)
		return NVML_ERROR_INVALID_ARGUMENT;
	const struct rec *r = current(d, K_PROCS);
	unsigned int have = r ? r->nprocs : 0;
	if (have > *n || (have && !buf)) {
		*n = have;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*n = have;
	*out = r;
	return NVML_SUCCESS;
}

static nvmlReturn_t running(enum fn f, nvmlDevice_t d, unsigned int *n,
			    nvmlProcessInfo_t *p)
{
	const struct rec *l = NULL;
	nvmlReturn_t r = enter_dev(f, d);
	if (r == NVML_SUCCESS)
		r = procs(d, n, p, &l);
	for (unsigned int i = 0; r == NVML_SUCCESS && i < *n; i++)
		p[i] = (nvmlProcessInfo_t){
			.pid = l->procs[i].pid,
			.usedGpuMemory = l->procs[i].used,
			.gpuInstanceId = 0xffffffffu,	/* not MIG */
			.computeInstanceId = 0xffffffffu,
		};
	return leave(r);
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d,
							 unsigned int *n,
							 nvmlProcessInfo_t *p)
{
	return running(F_nvmlDeviceGetComputeRunningProcesses_v3, d, n, p);
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d,
							 unsigned int *n,
							 nvmlProcessInfo_t *p)
{
	return running(F_nvmlDeviceGetComputeRunningProcesses_v2, d, n, p);
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d,
						      unsigned int *n,
						      nvmlProcessInfo_v1_t *p)
{
	const struct rec *l = NULL;
	nvmlReturn_t r =
		enter_dev(F_nvmlDeviceGetComputeRunningProcesses, d);
	if (r == NVML_SUCCESS)
		r = procs(d, n, p, &l);
	for (unsigned int i = 0; r == NVML_SUCCESS && i < *n; i++)
		p[i] = (nvmlProcessInfo_v1_t){
			.pid = l->procs[i].pid,
			.usedGpuMemory = l->procs[i].used,
		};
	return leave(r);
}

/* One sample per listed process, stamped now (CLOCK_REALTIME, µs), if now
 * is after @last_seen_us; none: NVML_ERROR_NOT_FOUND, as the driver. */
API nvmlReturn_t nvmlDeviceGetProcessUtilization(
	nvmlDevice_t d, nvmlProcessUtilizationSample_t *s, unsigned int *n,
	unsigned long long last_seen_us)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetProcessUtilization, d);
	if (r != NVML_SUCCESS)
		return leave(r);
	if (!d->ever[K_PROCS])
		return leave(NVML_ERROR_NOT_SUPPORTED);
	if (!n)
		return leave(NVML_ERROR_INVALID_ARGUMENT);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long long now = (unsigned long long)ts.tv_sec * 1000000ull +
				 (unsigned long long)ts.tv_nsec / 1000;
	const struct rec *l = current(d, K_PROCS);
	unsigned int have = l && now > last_seen_us ? l->nprocs : 0;
	if (!have)
		return leave(NVML_ERROR_NOT_FOUND);
	if (!s || *n < have) {
		*n = have;
		return leave(NVML_ERROR_INSUFFICIENT_SIZE);
	}
	*n = have;
	for (unsigned int i = 0; i < have; i++)
		s[i] = (nvmlProcessUtilizationSample_t){
			.pid = l->procs[i].pid,
			.timeStamp = now,
			.smUtil = l->procs[i].sm,
			.memUtil = l->procs[i].mem,
		};
	return leave(NVML_SUCCESS);
}

/* ---- events ---- */

API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d,
						  unsigned long long *types)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceGetSupportedEventTypes, d);
	if (r == NVML_SUCCESS && !types)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*types = SUPPORTED_EVENTS;
	return leave(r);
}

static struct nvmlEventSet_st *valid_set(nvmlEventSet_t set)
{
	for (int i = 0; i < MAX_SETS; i++)
		if (set == &sets[i] && sets[i].used)
			return set;
	return NULL;
}

API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	nvmlReturn_t r = enter(F_nvmlEventSetCreate);
	if (r == NVML_SUCCESS && !set)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r != NVML_SUCCESS)
		return leave(r);
	for (int i = 0; i < MAX_SETS; i++)
		if (!sets[i].used) {
			memset(&sets[i], 0, sizeof(sets[i]));
			sets[i].used = 1;
			*set = &sets[i];
			return leave(NVML_SUCCESS);
		}
	return leave(NVML_ERROR_MEMORY);
}

API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d,
					  unsigned long long types,
					  nvmlEventSet_t set)
{
	nvmlReturn_t r = enter_dev(F_nvmlDeviceRegisterEvents, d);
	if (r == NVML_SUCCESS && !valid_set(set))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && (!types || types & ~SUPPORTED_EVENTS))
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS)
		set->mask[d->idx] |= types;
	return leave(r);
}

static unsigned long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000ull +
	       (unsigned long long)ts.tv_nsec / 1000000;
}

static nvmlReturn_t wait_event(enum fn f, nvmlEventSet_t set,
			       nvmlEventData_t *e, unsigned int ms)
{
	nvmlReturn_t r = enter(f);
	if (r == NVML_SUCCESS && (!valid_set(set) || !e))
		r = NVML_ERROR_INVALID_ARGUMENT;
	unsigned long long start = now_ms();
	while (r == NVML_SUCCESS) {
		for (size_t i = 0; i < nevents; i++) {
			struct event *ev = &events[i];
			struct nvmlDevice_st *d = &devs[ev->dev];
			if (ev->delivered || !(set->mask[ev->dev] & ev->type) ||
			    !d->samples || step_of(d) < ev->step)
				continue;
			ev->delivered = 1;
			*e = (nvmlEventData_t){
				.device = d,
				.eventType = ev->type,
				.eventData = ev->data,
				.gpuInstanceId = 0xffffffffu,
				.computeInstanceId = 0xffffffffu,
			};
			return leave(NVML_SUCCESS);
		}
		unsigned long long spent = now_ms() - start;
		if (spent >= ms)
			return leave(NVML_ERROR_TIMEOUT);
		unsigned long long nap = ms - spent < 5 ? ms - spent : 5;
		pthread_mutex_unlock(&mu);
		nanosleep(&(struct timespec){ .tv_nsec = (long)nap * 1000000 },
			  NULL);
		pthread_mutex_lock(&mu);
		/* Shut down or freed while asleep. */
		if (!refs)
			r = NVML_ERROR_UNINITIALIZED;
		else if (!valid_set(set))
			r = NVML_ERROR_INVALID_ARGUMENT;
	}
	return leave(r);
}

API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *e,
				     unsigned int ms)
{
	return wait_event(F_nvmlEventSetWait_v2, set, e, ms);
}

API nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *e,
				  unsigned int ms)
{
	return wait_event(F_nvmlEventSetWait, set, e, ms);
}

API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	nvmlReturn_t r = enter(F_nvmlEventSetFree);
	if (r == NVML_SUCCESS && !valid_set(set))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		set->used = 0;
	return leave(r);
}
