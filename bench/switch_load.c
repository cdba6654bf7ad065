/* switch_load.c - build/switch-load: a host that context-switches N times a
 * second, in a process no probe is interested in, for bench/sched_bench.sh.
 *
 *   switch-load [--rate N] [--seconds S]
 *
 * Two threads pinned to CPU 0 pass one byte back and forth over two pipes:
 * the pacer writes to `ping` and blocks reading `pong`; the echo thread
 * blocks reading `ping` and answers on `pong`.  With both on one CPU every
 * round trip is two context switches (pacer -> echo -> pacer), whether or
 * not the wakeup preempts the writer, and nothing else gets in between:
 * the cheapest switch the kernel has, so a probe on sched_switch shows its
 * cost here at its largest.
 *
 * The pacer holds the rate in 1 ms slices: at each slice it runs the round
 * trips that are due since the start, then sleeps to the next slice.  Its
 * own sleeps are switches too (pacer -> idle -> pacer), so they are counted
 * against the budget, and N is what the process itself switches per second.
 * A backlog (the pacer preempted, or a probe making each switch dearer) is
 * caught up at most SLICES_BEHIND slices at a time; what is left over is
 * not made up, and the output line says the rate was missed.
 *
 * It prints one line:
 *   switches_per_s H roundtrips_per_s R cpu_s C [short_of_target N]
 * H is the host-wide rate from /proc/stat's ctxt counter over the run (what
 * a probe on sched_switch sees, background included); R is its own round
 * trips per second; C is its user+system CPU time (getrusage RUSAGE_SELF),
 * which includes what BPF programs on sched_switch/sched_wakeup cost it,
 * since they run in the switching task's context.  Exit 0, or 1 with a
 * message naming what failed.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define SLICE_NS 1000000LL   /* one pacing slice: 1 ms */
#define SLICES_BEHIND 10     /* the largest backlog run in one go, in slices */
#define PIN_CPU 0

static struct {
	long rate;            /* target context switches per second (own) */
	double seconds;       /* how long to run */
	int ping[2];          /* pacer -> echo */
	int pong[2];          /* echo -> pacer */
	long long roundtrips; /* completed by the pacer */
	long long sleeps;     /* slices the pacer slept to */
	long long own;        /* the pacer's place in the schedule, in
			       * switches: 2 per round trip, 2 per sleep,
			       * plus any backlog dropped */
	int err;              /* errno of a failed read/write, 0 if none */
	const char *err_what; /* which call failed */
} s = { .rate = 100000, .seconds = 5.0 };

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Reads the host's context switch count ("ctxt" in /proc/stat) into @out.
 * Returns 0 on success, -errno on failure. */
static int ctxt_read(unsigned long long *out)
{
	char line[512];
	FILE *f = fopen("/proc/stat", "re");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %llu", out) == 1) {
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

/* Writes one byte to @fd and records a failure.  Returns 0 or -1. */
static int put(int fd, char c, const char *what)
{
	ssize_t n;

	do
		n = write(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		return 0;
	s.err = n < 0 ? errno : EIO;
	s.err_what = what;
	return -1;
}

/* Reads one byte from @fd into @c and records a failure.  Returns 0 or -1. */
static int get(int fd, char *c, const char *what)
{
	ssize_t n;

	do
		n = read(fd, c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		return 0;
	s.err = n < 0 ? errno : EPIPE;
	s.err_what = what;
	return -1;
}

/* Answers every byte on ping with one on pong, until it reads 'q'. */
static void *echo_main(void *arg)
{
	char c;

	for (;;) {
		if (get(s.ping[0], &c, "echo: read ping") || c == 'q')
			break;
		if (put(s.pong[1], c, "echo: write pong"))
			break;
	}
	return NULL;
}

/* Runs the paced round trips for s.seconds, then tells the echo to stop. */
static void *pacer_main(void *arg)
{
	long long start = now_ns(), end = start + (long long)(s.seconds * 1e9);
	long long slice = start;
	char c;

	for (;;) {
		long long t = now_ns();
		long long due, cap;

		if (t >= end)
			break;
		/* Switches due by now; a backlog beyond SLICES_BEHIND slices
		 * is dropped, not burst out. */
		due = (long long)((double)(t - start) * s.rate / 1e9);
		cap = (long long)((double)SLICES_BEHIND * SLICE_NS * s.rate / 1e9);
		if (due - s.own > cap)
			s.own = due - cap;
		while (s.own < due) {
			if (put(s.ping[1], 'x', "pacer: write ping") ||
			    get(s.pong[0], &c, "pacer: read pong"))
				goto out;
			s.roundtrips++;
			s.own += 2;
		}
		/* Sleep to the next slice boundary after now. */
		while (slice <= t)
			slice += SLICE_NS;
		if (slice > end)
			slice = end;
		struct timespec ts = { slice / 1000000000LL,
				       slice % 1000000000LL };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
		s.sleeps++;
		s.own += 2;
	}
out:
	put(s.ping[1], 'q', "pacer: write stop");
	return NULL;
}

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: switch-load [--rate SWITCHES_PER_S] [--seconds S]\n"
		   "  two threads on CPU %d ping-pong a byte over pipes at "
		   "that rate (default 100000/s, 5 s)\n", PIN_CPU);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long long c0, c1;
	pthread_t pacer, echo;
	pthread_attr_t attr;
	cpu_set_t cpus;
	struct rusage ru;
	long long t0, t1;
	double wall, cpu_s;
	char *end;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help"))
			return usage(stdout, 0);
		if (i + 1 >= argc)
			return usage(stderr, 2);
		if (!strcmp(argv[i], "--rate")) {
			s.rate = strtol(argv[++i], &end, 10);
			if (*end || s.rate < 2) {
				fprintf(stderr, "switch-load: --rate %s: want "
					"an integer >= 2\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--seconds")) {
			s.seconds = strtod(argv[++i], &end);
			if (*end || !(s.seconds > 0 && s.seconds <= 3600)) {
				fprintf(stderr, "switch-load: --seconds %s: "
					"want a number in (0, 3600]\n",
					argv[i]);
				return 2;
			}
		} else {
			return usage(stderr, 2);
		}
	}

	if (pipe(s.ping) || pipe(s.pong)) {
		fprintf(stderr, "switch-load: pipe: %s\n", strerror(errno));
		return 1;
	}
	CPU_ZERO(&cpus);
	CPU_SET(PIN_CPU, &cpus);
	pthread_attr_init(&attr);
	rc = pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	if (rc) {
		fprintf(stderr, "switch-load: pin to CPU %d: %s\n", PIN_CPU,
			strerror(rc));
		return 1;
	}
	rc = ctxt_read(&c0);
	if (rc) {
		fprintf(stderr, "switch-load: /proc/stat ctxt: %s\n",
			strerror(-rc));
		return 1;
	}
	t0 = now_ns();
	rc = pthread_create(&echo, &attr, echo_main, NULL);
	if (!rc) {
		rc = pthread_create(&pacer, &attr, pacer_main, NULL);
		if (rc) {
			/* Let the echo thread go before reporting. */
			put(s.ping[1], 'q', "main: write stop");
			pthread_join(echo, NULL);
		}
	}
	if (rc) {
		fprintf(stderr, "switch-load: pthread_create (pinned to CPU "
			"%d): %s\n", PIN_CPU, strerror(rc));
		return 1;
	}
	pthread_join(pacer, NULL);
	pthread_join(echo, NULL);
	t1 = now_ns();
	rc = ctxt_read(&c1);
	if (rc) {
		fprintf(stderr, "switch-load: /proc/stat ctxt: %s\n",
			strerror(-rc));
		return 1;
	}
	if (s.err) {
		fprintf(stderr, "switch-load: %s: %s\n", s.err_what,
			strerror(s.err));
		return 1;
	}
	if (getrusage(RUSAGE_SELF, &ru)) {
		fprintf(stderr, "switch-load: getrusage: %s\n",
			strerror(errno));
		return 1;
	}
	wall = (t1 - t0) / 1e9;
	cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("switches_per_s %.0f roundtrips_per_s %.0f cpu_s %.3f",
	       (c1 - c0) / wall, s.roundtrips / wall, cpu_s);
	/* Its own switches fell more than 2% short of the target. */
	if (2.0 * (s.roundtrips + s.sleeps) / wall < 0.98 * s.rate)
		printf(" short_of_target %ld", s.rate);
	putchar('\n');
	return 0;
}
