/* limits.c - the deadline, the memory ceiling and the guarded printf().
 * See limits.h.
 *
 * The deadline is checked by a progress handler every PROGRESS_OPS
 * virtual-machine steps, on CLOCK_MONOTONIC (a wall-clock step must not
 * end or stretch a query); returning non-zero makes the statement fail
 * with SQLITE_INTERRUPT, and `expired` tells that apart from an error.
 *
 * SQLITE_LIMIT_LENGTH makes zeroblob(), randomblob(), replace(),
 * group_concat() and the rest fail with SQLITE_TOOBIG as soon as a result
 * would pass it.  printf() is the exception: SQLite 3.40 builds a
 * '%.*c' of 2e9 one character at a time up to the limit and then returns
 * NULL with no error (the 14 minutes of issue 15, at the default
 * 1,000,000,000-byte limit).  So printf() and format() are registered over
 * the built-in: the format is scanned as SQLite's own printf scans it, and
 * a call whose widths, precisions and arguments could pass the limit fails
 * with SQLITE_TOOBIG at once; any other call is handed to the built-in on
 * a private connection (the only way to reach it once overridden), whose
 * output is then exact.
 *
 * Work done in C inside one VM step (a scan grouping a table's rows in
 * its first step, the report tables' walks of the blocks) asks
 * gr_limits__stop() between blocks, which is the progress handler's test
 * and Ctrl-C's too.
 *
 * The progress handler runs only between VM steps, so one slow function
 * call (instr() of a 30 MB needle in a 60 MB haystack: hours) never
 * reaches it.  The backstop is a thread, started with the first
 * connection, that sleeps until the deadline and GR_LIMITS_GRACE_NS more;
 * if the process is still running then, it removes the export's
 * temporary file (gr_limits__temp_file()), writes the timeout line with
 * write(2) and ends the process with _exit(EXIT_USER), the status the
 * progress handler's path returns.  gpurec writes nothing else that a
 * sudden end could leave half done: recordings are read-only, an export
 * is renamed into place only when complete.
 *
 * `gpurec shell` runs many statements in one process: its clock starts
 * again for each (gr_limits__restart()) and stands still while the shell
 * waits at its prompt (gr_limits__pause()).  So the backstop waits on a
 * condition variable, on the monotonic clock, for whatever the deadline
 * is now, and a new deadline wakes it to wait again.
 */
#include "query/limits.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "query/cli.h"

#define PROGRESS_OPS 1000	/* VM steps between two looks at the clock */
#define MAX_ARGS 127		/* SQLITE_MAX_FUNCTION_ARG's default */
#define NUMBER_BYTES 400	/* the most a number without width prints */

static struct {
	/* CLOCK_MONOTONIC; INT64_MAX: none.  Read by the backstop. */
	_Atomic int64_t deadline_ns;
	int64_t timeout_ns;	/* --timeout; 0: none */
	const char *after;	/* --timeout as given, for the message */
	/* The progress handler, or gr_limits__stop() in a scan's thread,
	 * stopped a statement. */
	_Atomic bool expired;
} lim = { INT64_MAX, 0, "", false };

/* The backstop's state, read by its thread. */
static struct {
	atomic_bool armed;	/* the thread has been started (under lock) */
	atomic_bool claimed;	/* one of the two is reporting the timeout */
	pthread_mutex_t lock;	/* the deadline's changes and the wait */
	pthread_cond_t moved;	/* the deadline changed (CLOCK_MONOTONIC) */
	char line[160];		/* "gpurec: query timed out ...\n" */
	size_t nline;
	pthread_mutex_t tmp_lock;
	char tmp[PATH_MAX];	/* an export's temporary file; "": none */
} stop = { .lock = PTHREAD_MUTEX_INITIALIZER,
	    .tmp_lock = PTHREAD_MUTEX_INITIALIZER };

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sets the deadline @timeout_ns from now (<= 0: none) and wakes the
 * backstop to wait for it: the statement before, if it timed out, has
 * been reported. */
static void set_deadline(int64_t timeout_ns)
{
	int64_t now = mono_ns();

	pthread_mutex_lock(&stop.lock);
	lim.deadline_ns = timeout_ns <= 0 ? INT64_MAX :
			  timeout_ns > INT64_MAX - now ? INT64_MAX :
			  now + timeout_ns;
	lim.expired = false;
	atomic_store(&stop.claimed, false);
	if (atomic_load(&stop.armed))
		pthread_cond_signal(&stop.moved);
	pthread_mutex_unlock(&stop.lock);
}

static void backstop__arm(void);

/* Ctrl-C in the shell while a statement runs (gr_limits__interrupt()):
 * set by the handler on whichever thread takes the signal, read by the
 * scans' threads; a lock-free atomic is safe for both. */
static atomic_int interrupted;

void gr_limits__restart(void)
{
	atomic_store(&interrupted, 0);
	set_deadline(lim.timeout_ns);
	backstop__arm();
}

void gr_limits__interrupt(void)
{
	atomic_store(&interrupted, 1);
}

int gr_limits__stop(void)
{
	if (atomic_load(&interrupted))
		return 1;
	if (mono_ns() < lim.deadline_ns)
		return 0;
	lim.expired = true;
	return 1;
}

void gr_limits__pause(void)
{
	atomic_store(&interrupted, 0); /* nothing runs now to interrupt */
	set_deadline(0);
}

void gr_limits__start(int64_t timeout_ns, const char *timeout_arg,
		      int64_t max_memory)
{
	lim.timeout_ns = timeout_ns;
	set_deadline(timeout_ns);
	lim.after = timeout_arg;
	lim.expired = false;
	int n = snprintf(stop.line, sizeof(stop.line), "gpurec: query timed "
			 "out after %s (--timeout)\n", timeout_arg);
	stop.nline = n < 0 ? 0 : (size_t)n < sizeof(stop.line) ?
		     (size_t)n : sizeof(stop.line) - 1;
	if (stop.nline && stop.line[stop.nline - 1] != '\n')
		stop.line[stop.nline - 1] = '\n';
	sqlite3_hard_heap_limit64(max_memory);
}

void gr_limits__temp_file(const char *path)
{
	pthread_mutex_lock(&stop.tmp_lock);
	if (!path || strlen(path) >= sizeof(stop.tmp))
		stop.tmp[0] = '\0';
	else
		strcpy(stop.tmp, path);
	pthread_mutex_unlock(&stop.tmp_lock);
}

/* The backstop: ends the process once the deadline and the grace have
 * passed, whatever the main thread is doing. */
static void *backstop(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&stop.lock);
	for (;;) {
		int64_t d = lim.deadline_ns;
		int64_t at = d > INT64_MAX - GR_LIMITS_GRACE_NS ? INT64_MAX :
			     d + GR_LIMITS_GRACE_NS;
		struct timespec ts = { .tv_sec = at / 1000000000,
				       .tv_nsec = at % 1000000000 };

		if (at == INT64_MAX) {
			pthread_cond_wait(&stop.moved, &stop.lock);
			continue;
		}
		if (mono_ns() < at) {
			pthread_cond_timedwait(&stop.moved, &stop.lock, &ts);
			continue;
		}
		if (!atomic_exchange(&stop.claimed, true))
			break;
		/* The main thread is reporting it; a shell goes on to
		 * its next statement and a new deadline. */
		pthread_cond_wait(&stop.moved, &stop.lock);
	}
	pthread_mutex_unlock(&stop.lock);
	/* Holding the lock, the temporary file cannot be renamed into
	 * place or replaced by the next one under us. */
	pthread_mutex_lock(&stop.tmp_lock);
	if (stop.tmp[0])
		(void)unlink(stop.tmp);
	(void)!write(STDERR_FILENO, stop.line, stop.nline);
	_exit(EXIT_USER);
}

/* Starts the backstop once, if there is a deadline.  Under stop.lock, so
 * that set_deadline() signals the condition only once it exists. */
static void backstop__arm(void)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	pthread_t t;

	pthread_mutex_lock(&stop.lock);
	if (lim.deadline_ns == INT64_MAX || atomic_load(&stop.armed))
		goto out;
	if (pthread_condattr_init(&ca) != 0)
		goto out;
	int rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (rc == 0)
		rc = pthread_cond_init(&stop.moved, &ca);
	pthread_condattr_destroy(&ca);
	if (rc != 0 || pthread_attr_init(&attr) != 0)
		goto out;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 << 10);
	if (pthread_create(&t, &attr, backstop, NULL) == 0)
		atomic_store(&stop.armed, true);
	else
		pthread_cond_destroy(&stop.moved);
	pthread_attr_destroy(&attr);
out:
	pthread_mutex_unlock(&stop.lock);
}

/* Non-zero interrupts the running statement: the scans' own test, which
 * also sees a Ctrl-C that came before the statement's first step (that
 * step clears SQLite's own interrupt flag). */
static int progress(void *ctx)
{
	(void)ctx;
	return gr_limits__stop();
}

int gr_limits__expired(void)
{
	return lim.expired;
}

int gr_limits__explain(int rc)
{
	if (lim.expired && atomic_exchange(&stop.claimed, true))
		for (;;)
			pause(); /* the backstop is ending the process */
	if (lim.expired)
		return gr_cli__error(stderr, 1, "query timed out after %s "
				     "(--timeout)", lim.after);
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return gr_cli__error(stderr, 1, "out of memory: the query needs "
				     "more than --max-memory allows");
	case SQLITE_TOOBIG:
		return gr_cli__error(stderr, 1, "string or blob too big (at most "
				     "%d bytes)", GR_LIMITS_MAX_STRING);
	}
	return 0;
}

/* ---- printf() ------------------------------------------------------------ */

/* The built-in printf() on a private connection: a statement per number
 * of arguments, prepared on first use. */
struct fmt {
	sqlite3 *db;
	sqlite3_stmt *st[MAX_ARGS + 1];
};

static void fmt__free(void *p)
{
	struct fmt *f = p;

	for (int i = 0; i <= MAX_ARGS; i++)
		sqlite3_finalize(f->st[i]);
	sqlite3_close(f->db);
	free(f);
}

/* Adds @b to *@sum, saturating at INT64_MAX. */
static void add_sat(int64_t *sum, int64_t b)
{
	if (b < 0 || __builtin_add_overflow(*sum, b, sum))
		*sum = INT64_MAX;
}

/* Reads a width or precision at *@p: digits (saturating) or '*', which
 * takes the next argument as SQLite's getIntArg() does. */
static int64_t fmt__number(const char **p, int argc, sqlite3_value **argv,
			   int *arg)
{
	int64_t v = 0;

	if (**p == '*') {
		(*p)++;
		if (*arg >= argc)
			return 0;
		v = sqlite3_value_int64(argv[(*arg)++]);
		/* a negative width left-justifies: its size counts */
		return v == INT64_MIN ? INT64_MAX : v < 0 ? -v : v;
	}
	while (**p >= '0' && **p <= '9') {
		if (v < INT64_MAX / 10)
			v = v * 10 + (**p - '0');
		(*p)++;
	}
	return v;
}

/* Returns at least the length printf(@argv[0], ...) could reach: the
 * format's bytes and, per conversion, the largest of its width, its
 * precision and its argument (quoted: twice its bytes, and two). */
static int64_t fmt__bound(int argc, sqlite3_value **argv)
{
	const char *p = (const char *)sqlite3_value_text(argv[0]);
	int64_t sum = 0;
	int arg = 1;

	if (!p)
		return 0;
	add_sat(&sum, sqlite3_value_bytes(argv[0]));
	while ((p = strchr(p, '%')) != NULL) {
		int64_t width, prec = 0, one = NUMBER_BYTES;

		p++;
		while (*p && strchr("-+ #!0,", *p))
			p++;
		width = fmt__number(&p, argc, argv, &arg);
		if (*p == '.') {
			p++;
			prec = fmt__number(&p, argc, argv, &arg);
		}
		while (*p == 'l')
			p++;
		if (!*p)
			break;
		if (*p == '%') {
			p++;
			continue;
		}
		if (!strchr("dsgzqQwcouxXfeEGinp", *p))
			break; /* SQLite stops at an unknown conversion */
		if (*p != 'n' && arg < argc) {
			int64_t n = sqlite3_value_bytes(argv[arg++]);

			if (strchr("sqQwz", *p))
				add_sat(&n, n + 2);
			one = n > one ? n : one;
		}
		p++;
		one = width > one ? width : one;
		one = prec > one ? prec : one;
		add_sat(&sum, one);
		add_sat(&sum, NUMBER_BYTES);
	}
	return sum;
}

static void fn_printf(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct fmt *f = sqlite3_user_data(ctx);
	sqlite3_stmt *st;
	int rc;

	if (argc < 1 || argc > MAX_ARGS)
		return;
	if (fmt__bound(argc, argv) > GR_LIMITS_MAX_STRING) {
		sqlite3_result_error_toobig(ctx);
		return;
	}
	if (!f->st[argc]) {
		char sql[16 + 5 * MAX_ARGS];
		int n = snprintf(sql, sizeof(sql), "SELECT printf(?1");

		for (int i = 2; i <= argc; i++)
			n += snprintf(sql + n, sizeof(sql) - (size_t)n, ",?%d", i);
		snprintf(sql + n, sizeof(sql) - (size_t)n, ")");
		if (sqlite3_prepare_v2(f->db, sql, -1, &f->st[argc], NULL)) {
			sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
			return;
		}
	}
	st = f->st[argc];
	for (int i = 0; i < argc; i++)
		sqlite3_bind_value(st, i + 1, argv[i]);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
	else if (rc == SQLITE_NOMEM)
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

int gr_limits__apply(sqlite3 *db)
{
	struct fmt *f = calloc(1, sizeof(*f));
	int rc;

	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, GR_LIMITS_MAX_STRING);
	sqlite3_progress_handler(db, PROGRESS_OPS, progress, NULL);
	backstop__arm();
	if (!f)
		return SQLITE_NOMEM;
	rc = sqlite3_open_v2(":memory:", &f->db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		fmt__free(f);
		return rc;
	}
	sqlite3_limit(f->db, SQLITE_LIMIT_LENGTH, GR_LIMITS_MAX_STRING);
	/* printf() and format() (its name since SQLite 3.38) share @f:
	 * it is freed with the last of them. */
	rc = sqlite3_create_function_v2(db, "printf", -1, SQLITE_UTF8 |
					SQLITE_INNOCUOUS | SQLITE_DETERMINISTIC,
					f, fn_printf, NULL, NULL, fmt__free);
	if (rc != SQLITE_OK)
		return rc; /* sqlite3 called fmt__free */
	return sqlite3_create_function_v2(db, "format", -1, SQLITE_UTF8 |
					  SQLITE_INNOCUOUS |
					  SQLITE_DETERMINISTIC, f, fn_printf,
					  NULL, NULL, NULL);
}
