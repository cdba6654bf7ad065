/* main.c - `gpurec`, the query CLI.
 *
 * Subcommands are a {name, function, summary, help} table (bpftool's
 * shape): `gpurec help CMD` and `gpurec CMD --help` print CMD's help.
 * Options may stand before or after the subcommand: getopt_long permutes.
 * Exit status is the product contract: 0 success, 1 a user error (bad SQL,
 * bad option, no data) with one line on stderr naming it, 2 an internal
 * failure.  gpurec never loads BPF and never writes to the data
 * directory: segments are opened read-only (sealed ones immutable).  The
 * one exception is seal-setup, which creates DIR/fss.key (query/seal.c).
 *
 * A query cannot run away: every connection gets a wall-clock deadline
 * (--timeout, checked by a progress handler on the monotonic clock), a
 * ceiling on SQLite's heap (--max-memory: sqlite3_hard_heap_limit64) and
 * on any one string or blob (SQLITE_LIMIT_LENGTH), so printf('%.*c', 2e9,
 * 'x'), zeroblob(2e9) or a recursive CTE end at once with one line and
 * exit 1.  SQL functions that hand out pointers (fts3_tokenizer) are
 * refused like load_extension.
 *
 * Rows for a person: on a terminal, table output is cut to the
 * terminal's width (--wide: not) and goes through a pager as git's and
 * journalctl's does ($GPUREC_PAGER, $PAGER, else less with LESS=FRSX),
 * started only when the first row is about to print, so an error before
 * it reaches the terminal alone.  -o FILE writes the result whole or not
 * at all (query/outfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/parse.h"
#include "query/aggregates.h"
#include "query/cli.h"
#include "query/export.h"
#include "query/filters.h"
#include "query/graph_views.h"
#include "query/limits.h"
#include "query/memcpy_host.h"
#include "query/nccl_fleet.h"
#include "query/outfile.h"
#include "query/output.h"
#include "query/report.h"
#include "query/seal.h"
#include "query/shell.h"
#include "query/status.h"
#include "query/suggest.h"
#include "query/sumtab.h"
#include "query/timefmt.h"
#include "query/vtab.h"
#include "schema/schema.h"
#include "store/fss.h"
#include "store/store.h"

#define DEFAULT_DATA "/var/lib/gpurec"
#define DEFAULT_TIMEOUT "10m"
#define DEFAULT_MAX_MEMORY "1G"
#include "common/version.h"

struct opts {
	char **data;          /* --data, in order given, globs expanded */
	int ndata;
	char **data_owned;    /* the expanded names, freed at exit */
	int ndata_owned;
	const char *since, *until;
	enum gr_format format;
	const char *format_arg; /* --format as given: export has its own */
	int format_set;
	const char *output;   /* -o, --output: export's file or directory;
			       * sql's and report's file */
	const char *time_format; /* --time-format as given */
	int local;            /* --local: --time-format local */
	int no_header;        /* --no-header: table, csv, tsv */
	int wide;             /* --wide: tables not cut to the terminal */
	int no_pager;         /* --no-pager */
	struct gr_output_opts out; /* how sql, report, tables, schema print */
	int force;            /* --force: export may replace files,
				 seal-setup an existing key */
	const char *interval; /* seal-setup --interval, as given */
	int has_pid;
	int raw;              /* report --raw: from raw events */
	int64_t pid;
	const char *host;
	int verbose;
	const char *vkey;     /* verify --verification-key: text, or - */
	char **params;        /* --param KEY=VALUE, in order given */
	int nparams;
	const char *timeout;  /* --timeout as given (DEFAULT_TIMEOUT) */
	int64_t timeout_ns;   /* 0: no deadline */
	const char *max_memory; /* --max-memory as given */
	int64_t max_memory_bytes;
	int argc;             /* what remains after the subcommand */
	char **argv;
	char **cmdline;       /* argv as typed (getopt permutes argv) */
	int ncmdline;
};

/* ---- read-only SQL ----------------------------------------------------- */

struct auth {
	const char *why; /* the reason the authorizer last refused */
	bool pragma_read; /* the statement reads a pragma SQLite does not
			   * call read-only (journal_mode) */
};

/* Functions refused by name: load_extension runs code; fts3_tokenizer
 * with one argument returns a pointer into gpurec's memory (an address
 * that defeats ASLR), with two it installs one. */
static const char *const refused_functions[] = {
	"load_extension", "fts3_tokenizer",
};

/* Allows reading and computing; refuses anything that would write, attach
 * or load code.  gpurec's connection is an in-memory database, so a write
 * could not reach a segment anyway, but SQL that looks like it changes
 * the recording must fail loudly, not pretend. */
static int authorize(void *ctx, int action, const char *a1, const char *a2,
		     const char *db, const char *trigger)
{
	struct auth *au = ctx;
	(void)db;
	(void)trigger;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		for (size_t i = 0; a2 && i < sizeof(refused_functions) /
						 sizeof(*refused_functions); i++)
			if (strcasecmp(a2, refused_functions[i]) == 0) {
				au->why = strcasecmp(a2, "load_extension") ?
					"fts3_tokenizer is not allowed (it "
					"returns a pointer)" :
					"load_extension is not allowed";
				return SQLITE_DENY;
			}
		return SQLITE_OK;
	case SQLITE_PRAGMA: {
		/* Introspection pragmas take an argument and only read;
		 * any other pragma may be read (no argument), never set. */
		static const char *const readers[] = {
			"table_info", "table_xinfo", "table_list",
			"function_list", "module_list", "pragma_list",
			"compile_options", "collation_list", "index_list",
			"index_info", "index_xinfo",
		};
		for (size_t i = 0; i < sizeof(readers) / sizeof(*readers); i++)
			if (a1 && strcasecmp(a1, readers[i]) == 0)
				return SQLITE_OK;
		if (a2 == NULL) {
			/* Reading journal_mode changes nothing, but SQLite
			 * cannot tell it from setting it
			 * (sqlite3_stmt_readonly says no). */
			if (a1 && strcasecmp(a1, "journal_mode") == 0)
				au->pragma_read = true;
			return SQLITE_OK;
		}
		au->why = "PRAGMA assignments are not allowed";
		return SQLITE_DENY;
	}
	case SQLITE_UPDATE:
		/* SQLite authorizes an internal schema update when a
		 * table-valued pragma (pragma_table_info) first runs; real
		 * schema writes stay impossible (defensive mode, no
		 * writable_schema). */
		if (a1 && (strcmp(a1, "sqlite_master") == 0 ||
			   strcmp(a1, "sqlite_temp_master") == 0))
			return SQLITE_OK;
		au->why = "the recording is read-only: only SELECT (and WITH, "
			  "EXPLAIN, reading PRAGMAs) may run";
		return SQLITE_DENY;
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		au->why = "ATTACH and DETACH are not allowed";
		return SQLITE_DENY;
	default:
		au->why = "the recording is read-only: only SELECT (and WITH, "
			  "EXPLAIN, reading PRAGMAs) may run";
		return SQLITE_DENY;
	}
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Opens the catalog of --data directories and the query context. */
static void open_qctx(struct opts *o, struct gr_qctx *q)
{
	char *err = NULL;
	int64_t now = now_ns();

	memset(q, 0, sizeof(*q));
	q->since = INT64_MIN;
	q->until = INT64_MAX;
	q->warn = stderr;
	q->stop = gr_limits__stop;
	if (o->since && gr_parse_time(o->since, now, &q->since))
		die_user("bad --since '%s': expected a time like 2h, -1h30m, "
			 "today, yesterday, \"2026-11-25 10:00\" (local), "
			 "2026-11-25T10:00:00Z or @1795611544", o->since);
	if (o->until && gr_parse_time(o->until, now, &q->until))
		die_user("bad --until '%s': expected a time like 2h, -1h30m, "
			 "today, yesterday, \"2026-11-25 10:00\" (local), "
			 "2026-11-25T10:00:00Z or @1795611544", o->until);
	if (o->since && o->until && q->since > q->until) {
		char a[GR_TIMEFMT_BUF], b[GR_TIMEFMT_BUF];

		gr_timefmt__iso(q->since, 0, a, sizeof(a));
		gr_timefmt__iso(q->until, 0, b, sizeof(b));
		die_user("--since %s (%s) is after --until %s (%s)", o->since,
			 a, o->until, b);
	}
	q->has_pid = o->has_pid;
	q->pid = o->pid;
	q->host = o->host;
	if (gr_catalog__open(&q->cat, o->data, o->ndata, &err))
		die_user("%s", err);
	if (q->cat.nsegs == 0) {
		if (o->ndata == 1)
			die_user("no recording in %s (no segment files)",
				 o->data[0]);
		die_user("no recording in the %d --data directories", o->ndata);
	}
}

static sqlite3 *open_db(struct gr_qctx *q, struct auth *au)
{
	sqlite3 *db;
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		die_internal("cannot open SQLite: %s", sqlite3_errmsg(db));
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	/* GROUP BY and ORDER BY over millions of rows are sorts: let
	 * SQLite's sorter use a helper thread per core (up to 8). */
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int helpers = cores > 8 ? 8 : cores > 1 ? (int)cores : 0;
	char pragma[32];
	snprintf(pragma, sizeof(pragma), "PRAGMA threads=%d", helpers);
	sqlite3_exec(db, pragma, NULL, NULL, NULL);
	int rc = gr_limits__apply(db);
	if (rc == SQLITE_OK)
		rc = gr_aggregates__register(db);
	if (rc == SQLITE_OK)
		rc = gr_report__register(db);
	if (rc == SQLITE_OK)
		rc = gr_timefmt__register(db);
	if (rc == SQLITE_OK && q)
		rc = gr_vtab__register(db, q);
	if (rc == SQLITE_OK && q)
		rc = gr_sumtab__register(db, q);
	if (rc == SQLITE_OK && q)
		rc = gr_graph_views__create(db);
	if (rc == SQLITE_OK && q)
		rc = gr_nccl_fleet__register(db, q);
	if (rc == SQLITE_OK && q)
		rc = gr_memcpy_host__register(db, q);
	if (rc != SQLITE_OK)
		die_internal("cannot set up tables: %s", sqlite3_errmsg(db));
	if (au)
		sqlite3_set_authorizer(db, authorize, au);
	return db;
}

/* Says why SQLite would not prepare a statement (@rc).  Returns an exit
 * status. */
static int prepare_error(sqlite3 *db, const struct auth *au, int rc)
{
	int status = rc == SQLITE_NOMEM ? EXIT_INTERNAL : EXIT_USER;

	if (gr_limits__explain(rc))
		return EXIT_USER;
	if (au && au->why)
		return gr_cli__error(stderr, status, "refused: %s", au->why);
	if (strstr(sqlite3_errmsg(db), "may not be modified"))
		return gr_cli__error(stderr, status, "refused: the recording "
				     "is read-only (%s)", sqlite3_errmsg(db));
	return gr_cli__error(stderr, status, "SQL error: %s",
			     sqlite3_errmsg(db));
}

/* ---- the pager ---------------------------------------------------------- */

static struct {
	const char *cmd;	/* to start before the first row; NULL: none */
	pid_t pid;		/* running, its stdin our stdout */
} pager;

/* Waits for the pager to finish: it reads to our end of output, and the
 * shell's prompt must not come back under it (git's wait_for_pager). */
static void pager_wait(void)
{
	fflush(stdout);
	close(STDOUT_FILENO);
	while (pager.pid > 0 && waitpid(pager.pid, NULL, 0) < 0 &&
	       errno == EINTR)
		;
	pager.pid = 0;
}

/* Starts the pager chosen in settle_options(), once, with our stdout as
 * its stdin.  Where the pipe or the fork fails, output goes to the
 * terminal as it would without a pager. */
static void pager_start(void)
{
	int fds[2];
	pid_t pid;

	if (!pager.cmd || pager.pid)
		return;
	fflush(stdout);
	if (pipe2(fds, O_CLOEXEC) != 0)
		return;
	/* less: quit if one screen (F), pass colours (R), chop long lines
	 * (S), no clearing (X), unless the user said.  Set here, not in the
	 * child: after fork() in a process with threads (limits.c's
	 * backstop) only async-signal-safe calls are safe, and setenv()
	 * allocates. */
	if (!getenv("LESS"))
		setenv("LESS", "FRSX", 1);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		execl("/bin/sh", "sh", "-c", pager.cmd, (char *)NULL);
		_exit(127);
	}
	dup2(fds[1], STDOUT_FILENO);
	close(fds[0]);
	close(fds[1]);
	pager.pid = pid;
	pager.cmd = NULL;
	atexit(pager_wait);
}

/* Runs every statement of sql, printing each one's rows to @out as @oo
 * says, with the parameters of report r bound (r NULL: plain SQL).
 * Returns an exit status. */
static int run_sql_params(sqlite3 *db, struct auth *au, const char *sql,
			  const struct gr_output_opts *oo, FILE *out,
			  const struct gr_report *r, char *const *kv, int nkv,
			  int64_t now)
{
	const char *tail = sql;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		if (au) {
			au->why = NULL;
			au->pragma_read = false;
		}
		int rc = sqlite3_prepare_v2(db, tail, -1, &st, &tail);
		if (rc != SQLITE_OK)
			return prepare_error(db, au, rc);
		if (!st)
			continue; /* whitespace or a comment */
		if (!sqlite3_stmt_readonly(st) && !(au && au->pragma_read)) {
			sqlite3_finalize(st);
			return gr_cli__error(stderr, EXIT_USER, "refused: the "
					     "recording is read-only");
		}
		char berr[256];
		if (r && gr_report__bind(r, st, kv, nkv, now, berr,
					 sizeof(berr))) {
			sqlite3_finalize(st);
			/* a report's own defect */
			return gr_cli__error(stderr, EXIT_INTERNAL, "%s", berr);
		}
		char *err = NULL;
		if (out == stdout)
			pager_start();
		rc = gr_output__run_opts(st, oo, out, &err);
		sqlite3_finalize(st);
		if (rc != SQLITE_OK && gr_limits__explain(rc)) {
			free(err);
			return EXIT_USER;
		}
		if (rc != SQLITE_OK) {
			int status = rc == SQLITE_NOMEM || rc == SQLITE_IOERR ?
				     EXIT_INTERNAL : EXIT_USER;

			gr_cli__error(stderr, status, "SQL error: %s",
				      err ? err : sqlite3_errstr(rc));
			free(err);
			return status;
		}
	}
	if (fflush(out) != 0)
		return gr_cli__error(stderr, EXIT_INTERNAL, "cannot write "
				     "output: %s", strerror(errno));
	return 0;
}

/* run_sql_params() into -o's file when there is one: renamed into place
 * when every statement succeeded, removed when one failed. */
static int run_sql_to(struct opts *o, sqlite3 *db, struct auth *au,
		      const char *sql, const struct gr_report *r, int64_t now)
{
	struct gr_outfile of;
	char err[512];
	int rc;

	if (!o->output || strcmp(o->output, "-") == 0)
		return run_sql_params(db, au, sql, &o->out, stdout, r,
				      o->params, o->nparams, now);
	rc = gr_outfile__open(&of, o->output, o->force, err, sizeof(err));
	if (rc)
		return gr_cli__error(stderr, rc, "%s", err);
	rc = run_sql_params(db, au, sql, &o->out, of.f, r, o->params,
			    o->nparams, now);
	if (rc) {
		gr_outfile__abort(&of);
		return rc;
	}
	rc = gr_outfile__commit(&of, err, sizeof(err));
	if (rc)
		return gr_cli__error(stderr, rc, "%s", err);
	return 0;
}

static int run_sql(struct opts *o, sqlite3 *db, struct auth *au,
		   const char *sql)
{
	return run_sql_params(db, au, sql, &o->out, stdout, NULL, NULL, 0, 0);
}

static char *read_stdin(void)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	size_t n;
	if (!buf)
		return NULL;
	while ((n = fread(buf + len, 1, cap - len - 1, stdin)) > 0) {
		len += n;
		if (cap - len < 2) {
			char *p = realloc(buf, cap *= 2);
			if (!p) {
				free(buf);
				return NULL;
			}
			buf = p;
		}
	}
	buf[len] = 0;
	return buf;
}

/* ---- commands ---------------------------------------------------------- */

/* GPUREC_DEBUG_STATS: how much of the recording a query read (the tests
 * check that the planner skips what it can). */
static void print_stats(const struct gr_qctx *q)
{
	if (getenv("GPUREC_DEBUG_STATS"))
		fprintf(stderr, "gpurec: stats: segments_opened=%" PRIu64
			" nccl_coll_read=%" PRIu64 " blocks_read=%" PRIu64
			"\n", q->segments_opened, q->coll_blocks_read,
			q->blocks_read);
}

static int cmd_sql(struct opts *o)
{
	struct gr_qctx q;
	struct auth au = { 0 };
	char *sql;

	if (o->argc != 1)
		die_user("sql takes one argument: the SQL text, or - to read "
			 "it from stdin");
	if (strcmp(o->argv[0], "-") == 0) {
		if (!(sql = read_stdin()))
			die_internal("cannot read stdin");
	} else {
		sql = strdup(o->argv[0]);
	}
	if (!sql)
		return EXIT_INTERNAL;
	open_qctx(o, &q);
	sqlite3 *db = open_db(&q, &au);
	int rc = run_sql_to(o, db, &au, sql, NULL, 0);
	if (rc == 0)
		gr_filters__check(db, &q, stderr);
	print_stats(&q);
	sqlite3_close(db);
	free(sql);
	free(q.warned);
	gr_catalog__free(&q.cat);
	return rc;
}

/* One table or view of the catalog: its row in t. */
static int catalog_table(sqlite3 *db, const char *name, const char *desc)
{
	sqlite3_stmt *ins;
	int rc = sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?,?)", -1, &ins,
				    NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(ins, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 2, desc, -1, SQLITE_STATIC);
	rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	sqlite3_finalize(ins);
	return rc;
}

/* One column of table tbl, at pos, through ins (INSERT INTO c). */
static int catalog_column(sqlite3_stmt *ins, const char *tbl, int pos,
			  const char *name, enum gr_coltype type,
			  const char *desc)
{
	sqlite3_bind_text(ins, 1, tbl, -1, SQLITE_STATIC);
	sqlite3_bind_int(ins, 2, pos);
	sqlite3_bind_text(ins, 3, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 4, gr_coltype__name(type), -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 5, gr_coltype__sql(type), -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 6, desc, -1, SQLITE_STATIC);
	int rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	sqlite3_reset(ins);
	return rc;
}

/* tables and schema print through the same output formats as SQL, from a
 * table filled from the schema descriptors, then the CUDA graph views
 * after the tables they read. */
static int print_catalog(struct opts *o, const char *only)
{
	sqlite3 *db = open_db(NULL, NULL);
	sqlite3_stmt *ins = NULL;
	int rc = sqlite3_exec(db,
		"CREATE TABLE t(name TEXT, description TEXT);"
		"CREATE TABLE c(tbl TEXT, pos INTEGER, name TEXT, type TEXT,"
		" sql_type TEXT, description TEXT)", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO c VALUES (?,?,?,?,?,?)",
					-1, &ins, NULL);
	for (int t = 0; t < GR_NTABLES && rc == SQLITE_OK; t++) {
		const struct gr_table *tab = &gr_tables[t];
		rc = catalog_table(db, tab->name, tab->desc);
		for (int c = 0; c < tab->ncols && rc == SQLITE_OK; c++)
			rc = catalog_column(ins, tab->name, c,
					    tab->cols[c].name,
					    tab->cols[c].type,
					    tab->cols[c].desc);
	}
	for (int v = 0; v < gr_graph_nviews && rc == SQLITE_OK; v++) {
		const struct gr_view *w = &gr_graph_views[v];
		rc = catalog_table(db, w->name, w->desc);
		for (int c = 0; c < w->ncols && rc == SQLITE_OK; c++)
			rc = catalog_column(ins, w->name, c, w->cols[c].name,
					    w->cols[c].type, w->cols[c].desc);
	}
	sqlite3_finalize(ins);
	if (rc != SQLITE_OK) {
		gr_cli__error(stderr, EXIT_INTERNAL, "%s", sqlite3_errmsg(db));
		sqlite3_close(db);
		return EXIT_INTERNAL;
	}
	char *sql;
	if (!only)
		sql = sqlite3_mprintf("SELECT name, description FROM t");
	else if (strcmp(only, "*") == 0)
		sql = sqlite3_mprintf("SELECT tbl AS \"table\", name AS column,"
				      " sql_type AS type, description FROM c"
				      " ORDER BY rowid");
	else
		sql = sqlite3_mprintf("SELECT name AS column, sql_type AS type,"
				      " description FROM c WHERE tbl=%Q"
				      " ORDER BY pos", only);
	rc = run_sql(o, db, NULL, sql);
	sqlite3_free(sql);
	sqlite3_close(db);
	return rc;
}

/* An unknown table's one line, with the nearest table name if one is
 * near ("cuda-api" for cuda_api). */
static void __attribute__((noreturn)) no_table(const char *name)
{
	const char *names[GR_NTABLES];
	for (int t = 0; t < GR_NTABLES; t++)
		names[t] = gr_tables[t].name;
	const char *near = gr_suggest(name, names, GR_NTABLES);
	if (near)
		die_user("no table '%s'; did you mean '%s'? (gpurec tables "
			 "lists them)", name, near);
	die_user("no table '%s' (gpurec tables lists them)", name);
}

static int cmd_tables(struct opts *o)
{
	if (o->argc)
		die_user("tables takes no arguments");
	return print_catalog(o, NULL);
}

static int cmd_schema(struct opts *o)
{
	if (o->argc > 1)
		die_user("schema takes at most one table name");
	if (o->argc && gr_table__find(o->argv[0]) < 0 &&
	    !gr_graph_view__find(o->argv[0]))
		no_table(o->argv[0]);
	return print_catalog(o, o->argc ? o->argv[0] : "*");
}

/* status and verify answer with one document: JSON for --format json
 * (a member per line) and jsonl (one line), text otherwise (csv and line
 * have no rows to lay out here). */
static int doc_json(const struct opts *o)
{
	return o->format_set && (o->format == GR_FMT_JSON ||
				 o->format == GR_FMT_JSONL);
}

static int cmd_status(struct opts *o)
{
	if (o->argc)
		die_user("status takes no arguments");
	if (o->since || o->until || o->has_pid || o->host || o->nparams)
		die_user("status describes whole directories: --since, --until, "
			 "--pid, --host and --param do not apply");
	struct gr_status_opts so = {
		.dirs = o->data,
		.ndirs = o->ndata,
		.json = doc_json(o),
		.pretty = o->format == GR_FMT_JSON,
		.now_ns = now_ns(),
		.out = stdout,
	};
	return gr_status__print(&so);
}

/* verify's findings: printed as they come (text), or kept for the JSON
 * document. */
struct vout {
	int json, verbose;
	struct vseg {
		char *path;
		long blocks;
		int state, ok;      /* enum gr_verify_state */
	} *segs;
	int nsegs;
	struct vprob {
		char *path, *reason;
	} *probs;
	int nprobs;
	struct vprob *notes;    /* path, text */
	int nnotes;
	struct vdir {           /* per --data directory, in order */
		char host[sizeof(((struct gr_manifest_entry *)0)->host)];
		int segments, problems;
		long blocks;
	} *dirs;
	int oom;
};

static const char *const vstate_names[] = {
	[GR_VS_OPEN] = "open",
	[GR_VS_SEALED] = "sealed",
	[GR_VS_SEALING] = "open (sealing)",
	[GR_VS_BUSY] = "open (busy)",
};

static void v_note(void *ctx, const char *path, const char *text)
{
	struct vout *v = ctx;
	if (!v->json) {
		printf("note %s: %s\n", path, text);
		return;
	}
	void *p = realloc(v->notes, (size_t)(v->nnotes + 1) * sizeof(*v->notes));
	if (!p) {
		v->oom = 1;
		return;
	}
	v->notes = p;
	v->notes[v->nnotes].path = strdup(path);
	v->notes[v->nnotes].reason = strdup(text);
	if (!v->notes[v->nnotes].path || !v->notes[v->nnotes].reason)
		v->oom = 1;
	v->nnotes++;
}

static void v_problem(void *ctx, const char *path, const char *reason)
{
	struct vout *v = ctx;
	if (!v->json) {
		printf("FAIL %s: %s\n", path, reason);
		return;
	}
	void *p = realloc(v->probs, (size_t)(v->nprobs + 1) * sizeof(*v->probs));
	if (!p) {
		v->oom = 1;
		return;
	}
	v->probs = p;
	v->probs[v->nprobs].path = strdup(path);
	v->probs[v->nprobs].reason = strdup(reason);
	if (!v->probs[v->nprobs].path || !v->probs[v->nprobs].reason)
		v->oom = 1;
	v->nprobs++;
}

static void v_segment(void *ctx, const char *path, long blocks, int sealed,
		      int ok)
{
	struct vout *v = ctx;
	if (!v->verbose)
		return;
	if (!v->json) {
		if (ok)
			printf("ok   %s (%ld blocks, %s)\n", path, blocks,
			       vstate_names[sealed]);
		return;
	}
	void *p = realloc(v->segs, (size_t)(v->nsegs + 1) * sizeof(*v->segs));
	if (!p) {
		v->oom = 1;
		return;
	}
	v->segs = p;
	v->segs[v->nsegs] = (struct vseg){ strdup(path), blocks, sealed, ok };
	if (!v->segs[v->nsegs].path)
		v->oom = 1;
	v->nsegs++;
}

static int verify_json(struct opts *o, struct vout *v,
		       const struct gr_verify *r)
{
	struct gr_json j;
	gr_json__init(&j, stdout, o->format == GR_FMT_JSON);
	gr_json__begin(&j, NULL, '{');
	gr_json__bool(&j, "ok", r->problems == 0);
	gr_json__int(&j, "dirs_checked", o->ndata);
	gr_json__int(&j, "segments_checked", r->segments);
	gr_json__int(&j, "blocks_checked", r->blocks);
	gr_json__begin(&j, "problems", '[');
	for (int i = 0; i < v->nprobs; i++) {
		gr_json__begin(&j, NULL, '{');
		gr_json__str(&j, "path", v->probs[i].path);
		gr_json__str(&j, "reason", v->probs[i].reason);
		gr_json__end(&j, '{');
	}
	gr_json__end(&j, '[');
	gr_json__begin(&j, "notes", '[');
	for (int i = 0; i < v->nnotes; i++) {
		gr_json__begin(&j, NULL, '{');
		gr_json__str(&j, "path", v->notes[i].path);
		gr_json__str(&j, "text", v->notes[i].reason);
		gr_json__end(&j, '{');
	}
	gr_json__end(&j, '[');
	/* Like the text form's verdict lines: only over several. */
	if (o->ndata > 1) {
		gr_json__begin(&j, "dirs", '[');
		for (int d = 0; d < o->ndata; d++) {
			gr_json__begin(&j, NULL, '{');
			gr_json__str(&j, "dir", o->data[d]);
			gr_json__str(&j, "host", v->dirs[d].host);
			gr_json__int(&j, "segments", v->dirs[d].segments);
			gr_json__int(&j, "blocks", v->dirs[d].blocks);
			gr_json__int(&j, "problems", v->dirs[d].problems);
			gr_json__end(&j, '{');
		}
		gr_json__end(&j, '[');
	}
	gr_json__int(&j, "manifest_lines", r->lines);
	gr_json__int(&j, "sealed_lines", r->lines_tagged);
	if (r->vkey)
		gr_json__int(&j, "unauthenticated_lines",
			     r->lines_unauthenticated);
	if (o->verbose) {
		gr_json__begin(&j, "segments", '[');
		for (int i = 0; i < v->nsegs; i++) {
			gr_json__begin(&j, NULL, '{');
			gr_json__str(&j, "path", v->segs[i].path);
			gr_json__bool(&j, "sealed",
				      v->segs[i].state == GR_VS_SEALED);
			gr_json__str(&j, "state", vstate_names[v->segs[i].state]);
			if (v->segs[i].blocks < 0)
				gr_json__null(&j, "blocks");
			else
				gr_json__int(&j, "blocks", v->segs[i].blocks);
			gr_json__bool(&j, "ok", v->segs[i].ok);
			gr_json__end(&j, '{');
		}
		gr_json__end(&j, '[');
	}
	gr_json__end(&j, '{');
	return gr_json__finish(&j);
}

static void vout_free(struct vout *v)
{
	for (int i = 0; i < v->nsegs; i++)
		free(v->segs[i].path);
	for (int i = 0; i < v->nprobs; i++) {
		free(v->probs[i].path);
		free(v->probs[i].reason);
	}
	for (int i = 0; i < v->nnotes; i++) {
		free(v->notes[i].path);
		free(v->notes[i].reason);
	}
	free(v->segs);
	free(v->probs);
	free(v->notes);
	free(v->dirs);
}

static int cmd_verify(struct opts *o)
{
	struct vout v = { .json = doc_json(o),
			  .verbose = o->verbose };
	struct gr_verify r = { .problem = v_problem, .segment = v_segment,
			       .note = v_note, .ctx = &v };
	if (o->argc)
		die_user("verify takes no arguments");
	if (o->vkey) {
		char buf[GR_FSS_VKEY_MAX + 2], *err = NULL;
		const char *text = o->vkey;
		if (strcmp(text, "-") == 0) {
			/* Off the command line, out of ps and shell history. */
			if (!fgets(buf, sizeof(buf), stdin))
				die_user("--verification-key -: nothing on "
					 "stdin");
			buf[strcspn(buf, "\r\n")] = 0;
			text = buf;
		}
		if (gr_fss_vkey__parse(text, &r.vkey, &err))
			die_user("bad --verification-key: %s",
				 err ? err : "malformed");
	}
	int nsegs = 0;
	/* Over several directories (a fleet's copies, one per host) each
	 * gets its own verdict line, naming its host, so that one bad copy
	 * among hundreds is found without reading every FAIL line. */
	if (!(v.dirs = calloc((size_t)o->ndata, sizeof(*v.dirs))))
		return gr_cli__error(stderr, EXIT_INTERNAL, "out of memory");
	for (int d = 0; d < o->ndata; d++) {
		struct gr_catalog cat;
		char *err = NULL;
		if (gr_catalog__open(&cat, &o->data[d], 1, &err))
			die_user("%s", err);
		const struct gr_manifest *m = &cat.manifests[0];
		snprintf(v.dirs[d].host, sizeof(v.dirs[d].host), "%s",
			 m->n ? m->e[m->n - 1].host : "?");
		/* A recorder stopped before its first event leaves a manifest
		 * (its start and stop lines) and no segment: still a chain
		 * to check. */
		int empty = cat.nsegs == 0 && cat.manifests[0].nl == 0;
		nsegs += cat.nsegs;
		gr_catalog__free(&cat);
		if (empty)
			die_user("no recording in %s (no segment files)",
				 o->data[d]);
	}
	for (int d = 0; d < o->ndata; d++) {
		int segs0 = r.segments;
		long blocks0 = r.blocks;
		int n = gr_verify__dir(o->data[d], &r);
		if (n == -ENOMEM || v.oom) {
			vout_free(&v);
			return gr_cli__error(stderr, EXIT_INTERNAL,
					     "out of memory");
		}
		if (n == -EAGAIN)
			die_user("%s: its recorder changed it faster than verify "
				 "could take a consistent snapshot for 30 s; "
				 "try again", o->data[d]);
		if (n < 0)
			die_user("cannot read data directory %s: %s", o->data[d],
				 strerror(-n));
		v.dirs[d].segments = r.segments - segs0;
		v.dirs[d].blocks = r.blocks - blocks0;
		v.dirs[d].problems = n;
		if (o->ndata > 1 && !v.json)
			printf("%s %s (host %s): %d segment%s, %ld block%s, "
			       "%d problem%s\n", n ? "FAIL" : "ok  ",
			       o->data[d], v.dirs[d].host, v.dirs[d].segments,
			       v.dirs[d].segments == 1 ? "" : "s",
			       v.dirs[d].blocks,
			       v.dirs[d].blocks == 1 ? "" : "s", n,
			       n == 1 ? "" : "s");
	}
	int rc = 0;
	if (v.json)
		rc = verify_json(o, &v, &r);
	vout_free(&v);
	gr_fss_vkey__free(r.vkey);
	if (rc)
		return gr_cli__error(stderr, EXIT_INTERNAL, "cannot write "
				     "output: %s", strerror(-rc));
	fflush(stdout);
	if (r.problems)
		return gr_cli__error(stderr, EXIT_USER, "verify: %d problem%s "
				     "found", r.problems,
				     r.problems == 1 ? "" : "s");
	if (!v.json)
		printf(nsegs ? "verify: all segments intact\n" :
			       "verify: no segment recorded; the manifest is "
			       "intact\n");
	return 0;
}

/* report list: every canned report with its parameters, the description
 * last (the long column: a terminal cuts the last one). */
static int report_list(struct opts *o)
{
	sqlite3 *db = open_db(NULL, NULL);
	int rc = sqlite3_exec(db, "CREATE TABLE r(name TEXT, description "
			      "TEXT, params TEXT)", NULL, NULL, NULL);
	for (int i = 0; i < gr_nreport_srcs && rc == SQLITE_OK; i++) {
		struct gr_report r;
		char params[1024];
		if (gr_report__get(gr_report_srcs[i].name, &r) == -EPROTO) {
			sqlite3_close(db);
			return gr_cli__error(stderr, EXIT_INTERNAL, "report %s: "
					     "%s", r.name, r.defect);
		}
		gr_report__params_text(&r, params, sizeof(params));
		char *sql = sqlite3_mprintf("INSERT INTO r VALUES (%Q, %Q, %Q)",
					    r.name, r.description, params);
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
	}
	if (rc != SQLITE_OK) {
		gr_cli__error(stderr, EXIT_INTERNAL, "%s", sqlite3_errmsg(db));
		sqlite3_close(db);
		return EXIT_INTERNAL;
	}
	rc = run_sql_to(o, db, NULL, "SELECT name AS report, params AS "
			"parameters, description FROM r ORDER BY name", NULL,
			0);
	sqlite3_close(db);
	return rc;
}

/* The global --pid is the pid parameter of a report that takes one, so
 * `report process --pid N` means `--param pid=N`; both given, they must
 * agree.  Appends "pid=N" to o->params (it has room: one slot per
 * argument). */
static void pid_param(struct opts *o, const struct gr_report *r)
{
	static char kv[32];
	int takes = 0;

	for (int k = 0; k < r->nparams; k++)
		takes |= !strcmp(r->params[k].key, "pid");
	if (!takes || !o->has_pid)
		return;
	snprintf(kv, sizeof(kv), "pid=%" PRId64, o->pid);
	for (int i = 0; i < o->nparams; i++)
		if (!strncmp(o->params[i], "pid=", 4) &&
		    strcmp(o->params[i], kv) != 0)
			die_user("--pid %" PRId64 " and --param %s disagree: "
				 "give one", o->pid, o->params[i]);
	o->params[o->nparams++] = kv;
}

static int cmd_report(struct opts *o)
{
	struct gr_report r;
	char err[512];
	int64_t now = now_ns();

	if (o->argc != 1)
		die_user("report takes one argument: a report name, or list");
	if (!strcmp(o->argv[0], "list")) {
		if (o->nparams)
			die_user("report list takes no --param");
		return report_list(o);
	}
	int got = gr_report__get(o->argv[0], &r);
	if (got == -EPROTO)
		die_internal("report %s: %s", r.name, r.defect);
	if (got) {
		const char *names[64];
		int n = 0;
		for (int i = 0; i < gr_nreport_srcs && n < 64; i++)
			names[n++] = gr_report_srcs[i].name;
		const char *near = gr_suggest(o->argv[0], names, n);
		if (near)
			die_user("no report '%s'; did you mean '%s'? (gpurec "
				 "report list shows them)", o->argv[0], near);
		die_user("no report '%s' (gpurec report list shows them)",
			 o->argv[0]);
	}
	pid_param(o, &r);
	if (gr_report__check_params(&r, o->params, o->nparams, now, err,
				    sizeof(err)))
		die_user("%s", err);
	struct gr_qctx q;
	struct auth au = { 0 };
	open_qctx(o, &q);
	/* and --param pid=N is --pid N: the same rows, the same check that
	 * the process is in the recording at all */
	for (int i = 0; i < o->nparams; i++)
		if (!strncmp(o->params[i], "pid=", 4)) {
			q.has_pid = 1;
			q.pid = strtoll(o->params[i] + 4, NULL, 10);
		}
	sqlite3 *db = open_db(&q, &au);
	/* --raw: the form that reads raw events, where the report has one
	 * (the others read raw events already). */
	char *body = o->raw && r.raw_sql ? strdup(r.raw_sql) :
		     strndup(r.sql, r.sql_len);
	int rc = EXIT_INTERNAL;
	if (body)
		rc = run_sql_to(o, db, &au, body, &r, now);
	else
		gr_cli__error(stderr, rc, "out of memory");
	free(body);
	if (rc == 0)
		gr_filters__check(db, &q, stderr);
	print_stats(&q);
	sqlite3_close(db);
	free(q.warned);
	gr_catalog__free(&q.cat);
	return rc;
}

/* gpurec shell: the recording opened as for sql, and what sql, tables,
 * schema and report do, handed to query/shell.c as its callbacks. */
struct shell_ctx {
	struct opts *o;
	sqlite3 *db;
	struct auth au;
};

static int terminal_width(void);

/* The shell's output mode @fmt for what it runs next: on a terminal a
 * table fits its width as for sql (taken again: it may have changed). */
static struct opts *shell_out(struct shell_ctx *s, enum gr_format fmt)
{
	struct opts *o = s->o;

	o->format = o->out.fmt = fmt;
	o->out.width = fmt == GR_FMT_TABLE && !o->wide &&
		       isatty(STDOUT_FILENO) ? terminal_width() : 0;
	return o;
}

static int shell_sql(void *ctx, const char *sql, enum gr_format fmt)
{
	struct shell_ctx *s = ctx;

	return run_sql(shell_out(s, fmt), s->db, &s->au, sql);
}

/* @table NULL: the tables; "*": every column; else that table's. */
static int shell_catalog(void *ctx, const char *table, enum gr_format fmt)
{
	struct shell_ctx *s = ctx;

	if (table && strcmp(table, "*") && gr_table__find(table) < 0)
		return gr_cli__error(stderr, EXIT_USER, "no table '%s' (.tables "
				     "lists them)", table);
	return print_catalog(shell_out(s, fmt), table);
}

static int shell_reports(void *ctx, enum gr_format fmt)
{
	return report_list(shell_out(ctx, fmt));
}

/* As cmd_report, with the parameters of the dot command. */
static int shell_report(void *ctx, const char *name, char *const *kv, int nkv,
			enum gr_format fmt)
{
	struct shell_ctx *s = ctx;
	struct gr_report r;
	char err[512];
	int64_t now = now_ns();

	int got = gr_report__get(name, &r);
	if (got == -EPROTO)
		return gr_cli__error(stderr, EXIT_INTERNAL, "report %s: %s",
				     r.name, r.defect);
	if (got) {
		const char *names[64];
		int n = 0;
		for (int i = 0; i < gr_nreport_srcs && n < 64; i++)
			names[n++] = gr_report_srcs[i].name;
		const char *near = gr_suggest(name, names, n);
		if (near)
			return gr_cli__error(stderr, EXIT_USER, "no report "
					     "'%s'; did you mean '%s'? "
					     "(.reports lists them)", name,
					     near);
		return gr_cli__error(stderr, EXIT_USER, "no report '%s' "
				     "(.reports lists them)", name);
	}
	if (gr_report__check_params(&r, kv, nkv, now, err, sizeof(err)))
		return gr_cli__error(stderr, EXIT_USER, "%s", err);
	char *body = strndup(r.sql, r.sql_len);
	if (!body)
		return gr_cli__error(stderr, EXIT_INTERNAL, "out of memory");
	int rc = run_sql_params(s->db, &s->au, body, &shell_out(s, fmt)->out,
				stdout, &r, kv, nkv, now);
	free(body);
	return rc;
}

static int cmd_shell(struct opts *o)
{
	struct shell_ctx s = { .o = o };
	struct gr_qctx q;

	if (o->argc)
		die_user("shell takes no arguments (it reads SQL from its "
			 "input)");
	if (o->nparams || o->raw)
		die_user("--param and --raw apply to report only (in the "
			 "shell: .report NAME KEY=VALUE)");
	open_qctx(o, &q);
	s.db = open_db(&q, &s.au);
	struct gr_shell sh = {
		.db = s.db, .fmt = o->format, .ctx = &s,
		.sql = shell_sql, .catalog = shell_catalog,
		.reports = shell_reports, .report = shell_report,
	};
	int rc = gr_shell__run(&sh);
	print_stats(&q);
	sqlite3_close(s.db);
	free(q.warned);
	gr_catalog__free(&q.cat);
	return rc;
}

static int cmd_export(struct opts *o)
{
	struct gr_export x = { .out = o->output, .force = o->force,
			       .data = o->data, .ndata = o->ndata };
	char err[512];

	if (!o->format_arg)
		die_user("export needs --format perfetto, csv, jsonl or sqlite");
	if (gr_export_format__parse(o->format_arg, &x.fmt))
		die_user("bad --format '%s' for export: expected perfetto, csv, "
			 "jsonl or sqlite", o->format_arg);
	if (!o->output)
		die_user("export needs -o FILE (csv and jsonl: -o DIR, or a file "
			 "for one table)");
	for (int i = 0; i < o->argc; i++)
		if (gr_table__find(o->argv[i]) < 0)
			no_table(o->argv[i]);
	if (gr_export__prepare(&x, o->argv, o->argc, err, sizeof(err)))
		die_user("%s", err);

	struct gr_qctx q;
	open_qctx(o, &q);
	x.since = q.since;
	x.until = q.until;
	x.has_pid = q.has_pid;
	x.pid = q.pid;
	x.host = q.host;
	x.cmdline = o->cmdline;
	x.ncmdline = o->ncmdline;
	x.msg = stderr;
	sqlite3 *db = open_db(&q, NULL);
	int rc = gr_export__run(&x, db, err, sizeof(err));
	if (rc && gr_limits__expired() && gr_limits__explain(rc))
		rc = EXIT_USER; /* the partial file is gone already */
	else if (rc)
		gr_cli__error(stderr, rc, "%s", err);
	sqlite3_close(db);
	free(q.warned);
	gr_catalog__free(&q.cat);
	return rc;
}

static int cmd_seal_setup(struct opts *o)
{
	struct gr_seal_setup s = { .force = o->force, .out = stdout,
				   .msg = stderr };
	struct timespec ts;
	int64_t iv = (int64_t)GR_FSS_DEFAULT_INTERVAL_S * 1000000000;

	if (o->argc)
		die_user("seal-setup takes no arguments");
	if (o->ndata != 1)
		die_user("seal-setup takes one --data directory");
	if (o->interval && (gr_parse_duration_ns(o->interval, &iv) ||
			    iv % 1000000000 || iv < 1000000000))
		die_user("bad --interval '%s': expected whole seconds, at least "
			 "1s (15m, 1h, 900)", o->interval);
	clock_gettime(CLOCK_REALTIME, &ts);
	s.dir = o->data[0];
	s.interval_s = iv / 1000000000;
	s.now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return gr_seal_setup__run(&s);
}

struct command {
	const char *name;
	int (*fn)(struct opts *o);
	const char *args, *summary;
	/* `gpurec help NAME`, `gpurec NAME --help`: what it does, the
	 * options that apply to it (gpurec --help has them all) and
	 * examples. */
	const char *help;
};

static int cmd_help(struct opts *o);

static const struct command commands[] = {
	{ "sql", cmd_sql, "\"SELECT …\" | -",
	  "run read-only SQL over the recording (- reads it from stdin)",
	  "Runs read-only SQL over the recording: SELECT, WITH, EXPLAIN and\n"
	  "reading PRAGMAs; - reads the SQL from stdin.  gpurec tables and\n"
	  "gpurec schema show the tables and their columns.\n"
	  "\noptions:\n"
	  "  --data DIR, --since T, --until T, --pid N, --host NAME  what is read\n"
	  "  --format F       table, csv, tsv, json, jsonl or line\n"
	  "  --time-format F  iso, local, ns or s (--local: local time)\n"
	  "  --no-header, --wide, --no-pager  how a table prints\n"
	  "  -o, --output F   write to F, whole or not at all (--force: replace)\n"
	  "  --timeout D, --max-memory S  limits on the query\n"
	  "\nexamples:\n"
	  "  gpurec sql 'SELECT api, count(*) FROM cuda_api GROUP BY api'\n"
	  "  echo 'SELECT count(*) FROM offcpu' | gpurec --since 1h sql -\n" },
	{ "tables", cmd_tables, "", "list the tables",
	  "Lists the tables of the recording, one line each with what it holds.\n"
	  "\noptions:\n"
	  "  --format F       table, csv, tsv, json, jsonl or line\n"
	  "\nexample:\n"
	  "  gpurec tables\n" },
	{ "schema", cmd_schema, "[TABLE]",
	  "show columns with their types and meaning",
	  "Shows the columns of TABLE (of every table without one): name, SQL\n"
	  "type and meaning.\n"
	  "\noptions:\n"
	  "  --format F       table, csv, tsv, json, jsonl or line\n"
	  "\nexamples:\n"
	  "  gpurec schema cuda_kernel\n"
	  "  gpurec schema --format csv\n" },
	{ "status", cmd_status, "",
	  "recorder health; segments, span, disk use, events and drops",
	  "Tells whether the recorder is running and what the recording holds:\n"
	  "segments, time span, disk use, events and drops, per directory.\n"
	  "\noptions:\n"
	  "  --data DIR       a recording directory (repeatable)\n"
	  "  --format F       text, or json / jsonl for one JSON object\n"
	  "\nexamples:\n"
	  "  gpurec status\n"
	  "  gpurec status --format json\n" },
	{ "verify", cmd_verify, "",
	  "check every block checksum and the segment hash chain",
	  "Checks every block checksum of every segment and the hash chain of\n"
	  "the manifest; with --verification-key, its sealing tags too.  Exit 1\n"
	  "names the problems found.\n"
	  "\noptions:\n"
	  "  --data DIR       a recording directory (repeatable)\n"
	  "  -v, --verbose    list every segment checked\n"
	  "  --verification-key K  check the sealing tags (- reads K from stdin)\n"
	  "  --format F       text, or json / jsonl for one JSON object\n"
	  "\nexamples:\n"
	  "  gpurec verify\n"
	  "  gpurec verify --verification-key - < key.txt\n" },
	{ "report", cmd_report, "list | NAME",
	  "canned forensic reports (--param KEY=VALUE sets theirs)",
	  "Runs the canned report NAME (gpurec report list names them, with\n"
	  "their parameters and types; gpurec help report NAME tells one).\n"
	  "--pid, --host, --since and --until apply to every report; --pid N\n"
	  "is --param pid=N for a report that takes a pid.  A filter that\n"
	  "matches nothing in the recording is said on stderr.\n"
	  "\noptions:\n"
	  "  --param K=V      set one of the report's parameters (repeatable)\n"
	  "  --raw            answer from raw events, not the summaries\n"
	  "  --data DIR, --since T, --until T, --pid N, --host NAME  what is read\n"
	  "  --format F       table, csv, tsv, json, jsonl or line\n"
	  "  --time-format F  iso, local, ns or s (--local: local time)\n"
	  "  --no-header, --wide, --no-pager  how a table prints\n"
	  "  -o, --output F   write to F, whole or not at all (--force: replace)\n"
	  "  --timeout D, --max-memory S  limits on the query\n"
	  "\nexamples:\n"
	  "  gpurec report list\n"
	  "  gpurec --since 2h report cuda-api-sum --param limit=10\n"
	  "  gpurec report timeline --param at=2026-11-25T12:59:05Z "
	  "--param delta_ms=250ms\n" },
	{ "shell", cmd_shell, "",
	  "interactive SQL over the recording (.help inside)",
	  "An interactive SQL prompt over the recording, opened as gpurec sql\n"
	  "opens it: a statement runs when it ends with ';'.  Line editing and\n"
	  "history (~/.gpurec_history, or $XDG_STATE_HOME/gpurec/history) on a\n"
	  "terminal; piped input runs as a script, exit status the worst of its\n"
	  "statements.  Dot commands: .tables, .schema [TABLE], .mode FORMAT,\n"
	  ".reports, .report NAME [KEY=VALUE...], .help, .quit.  Ctrl-C stops\n"
	  "a running query, Ctrl-D on an empty line leaves.\n"
	  "\noptions:\n"
	  "  --data DIR, --since T, --until T, --pid N, --host NAME  what is read\n"
	  "  --format F       the first .mode: table, csv, tsv, json, jsonl or line\n"
	  "  --time-format F  iso, local, ns or s (--local: local time)\n"
	  "  --no-header, --wide  how a table prints\n"
	  "  --timeout D, --max-memory S  limits on each statement\n"
	  "\nexamples:\n"
	  "  gpurec shell\n"
	  "  echo 'SELECT count(*) FROM cuda_kernel;' | gpurec shell\n" },
	{ "export", cmd_export, "-o PATH [TABLE...]",
	  "decoded data for other tools: --format perfetto, csv, jsonl or "
	  "sqlite",
	  "Writes the recording (the TABLEs named, else all) decoded for other\n"
	  "tools: a Perfetto trace, CSV or JSON Lines per table, or one SQLite\n"
	  "database.\n"
	  "\noptions:\n"
	  "  --format F       perfetto, csv, jsonl or sqlite (needed)\n"
	  "  -o, --output P   the file (csv, jsonl: a directory; - is stdout)\n"
	  "  --force          replace files that exist\n"
	  "  --data DIR, --since T, --until T, --pid N, --host NAME  what is read\n"
	  "  --timeout D, --max-memory S  limits on the queries\n"
	  "\nexamples:\n"
	  "  gpurec --since 10m export --format perfetto -o trace.json\n"
	  "  gpurec export --format csv -o out/ cuda_kernel offcpu\n" },
	{ "seal-setup", cmd_seal_setup, "",
	  "install a forward-secure sealing key; print the verification key",
	  "Creates DIR/fss.key, a forward-secure sealing key the recorder uses\n"
	  "to seal the manifest, and prints the verification key to keep\n"
	  "elsewhere (gpurec verify --verification-key checks with it).\n"
	  "\noptions:\n"
	  "  --data DIR       the one recording directory\n"
	  "  --interval D     a new sealing key every D (default 15m)\n"
	  "  --force          replace an existing key\n"
	  "\nexample:\n"
	  "  gpurec seal-setup --data /var/lib/gpurec > verification-key.txt\n" },
	{ "help", cmd_help, "[COMMAND]",
	  "this help, or COMMAND's own (as gpurec COMMAND --help)",
	  "Prints gpurec's help, or COMMAND's: what it does, its options,\n"
	  "examples.  gpurec help report NAME describes one report.\n"
	  "\nexamples:\n"
	  "  gpurec help sql\n"
	  "  gpurec help report timeline\n" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* An unknown command's one line, with the nearest command if one is
 * near: "gpurec: unknown command 'stauts'; did you mean 'status'?". */
static void __attribute__((noreturn)) unknown_command(const char *name)
{
	const char *names[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	const char *near = gr_suggest(name, names, (int)NCOMMANDS);
	if (near)
		die_user("unknown command '%s'; did you mean '%s'? (gpurec "
			 "--help lists them)", name, near);
	die_user("unknown command '%s' (gpurec --help lists them)", name);
}

static void command_help(const struct command *c)
{
	printf("usage: gpurec [OPTIONS] %s%s%s\n\n%s", c->name,
	       c->args[0] ? " " : "", c->args, c->help);
}

/* help report NAME: one report, its description and typed parameters. */
static int report_help(const char *name)
{
	struct gr_report r;
	int got = gr_report__get(name, &r);

	if (got == -EPROTO)
		die_internal("report %s: %s", r.name, r.defect);
	if (got)
		die_user("no report '%s' (gpurec report list shows them)", name);
	printf("usage: gpurec [OPTIONS] report %s%s\n\n%s\n", r.name,
	       r.nparams ? " [--param KEY=VALUE]..." : "", r.description);
	if (r.nparams)
		printf("\nparameters (KEY:TYPE=DEFAULT):\n");
	for (int k = 0; k < r.nparams; k++)
		printf("  %s:%s=%s  %s\n", r.params[k].key,
		       r.params[k].type_name, r.params[k].def,
		       r.params[k].help);
	return fflush(stdout) ? EXIT_INTERNAL : 0;
}

static void usage(FILE *f);

static int cmd_help(struct opts *o)
{
	if (o->argc == 0) {
		usage(stdout);
		return 0;
	}
	if (o->argc == 2 && !strcmp(o->argv[0], "report"))
		return report_help(o->argv[1]);
	if (o->argc > 1)
		die_user("help takes one command (or report NAME)");
	const struct command *c = find_command(o->argv[0]);
	if (!c)
		unknown_command(o->argv[0]);
	command_help(c);
	return fflush(stdout) ? EXIT_INTERNAL : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gpurec [OPTIONS] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %-18s %s\n", commands[i].name,
			commands[i].args, commands[i].summary);
	fprintf(f,
		"\noptions (before or after the command):\n"
		"  --data DIR       a recording directory (repeatable: one per "
		"host, merged;\n"
		"                   default " DEFAULT_DATA ")\n"
		"  --since T        only events at or after T: 2h, -1h30m (ago), "
		"today,\n"
		"                   yesterday, \"2026-11-25 10:00\" (local), "
		"2026-11-25,\n"
		"                   2026-11-25T10:00:00Z, @1795611544 "
		"(systemd.time(7))\n"
		"  --until T        only events at or before T\n"
		"  --pid N          only events of process N\n"
		"  --host NAME      only events recorded on host NAME\n"
		"  --format F       table, csv, tsv, json, jsonl or line "
		"(default: table on a\n"
		"                   terminal, csv otherwise); status and verify: "
		"text,\n"
		"                   or one JSON object with json or jsonl; "
		"export: perfetto,\n"
		"                   csv, jsonl or sqlite\n"
		"  --time-format F  iso, local, ns or s: times and durations "
		"(ts, *_ts, minute,\n"
		"                   dur, *_ns columns); default iso (with units) "
		"for table and\n"
		"                   line, ns for csv, tsv, json and jsonl\n"
		"  --local          --time-format local: local time with its "
		"offset\n"
		"  --no-header      table, csv, tsv: no header row\n"
		"  --wide           a table on a terminal: do not cut lines to "
		"its width\n"
		"  --no-pager       do not page output on a terminal "
		"($GPUREC_PAGER, $PAGER,\n"
		"                   less)\n"
		"  -o, --output P   sql, report: write the result to P, whole or "
		"not at all;\n"
		"                   export: the file (csv and jsonl: a directory, "
		"of\n"
		"                   TABLE.csv or TABLE.jsonl; a file for one table); "
		"- is stdout\n"
		"  --force          -o: replace a file that exists; "
		"seal-setup: replace the key\n"
		"  --interval D     seal-setup: a new sealing key every D "
		"(default 15m)\n"
		"  --param K=V      report: set one of its parameters "
		"(repeatable)\n"
		"  --raw            report: answer from raw events, not the "
		"summaries\n"
		"  --timeout D      sql, report, export, shell: stop a query "
		"after D (90s,\n"
		"                   10m, 1h; 0: never; default " DEFAULT_TIMEOUT
		")\n"
		"  --max-memory S   sql, report, export, shell: SQLite's memory "
		"at most S\n"
		"                   (default " DEFAULT_MAX_MEMORY "; a string or "
		"blob at most 64M)\n"
		"  -v, --verbose    verify: list every segment checked\n"
		"  --verification-key K  verify: check the MANIFEST's sealing "
		"tags (K from\n"
		"                   gpurec seal-setup; - reads it from stdin)\n"
		"  -h, --help       this help; after a command, its own help\n"
		"  --version        print the version\n"
		"\nexit status: 0 success, 1 user error (bad SQL, option, no "
		"data), 2 internal\n");
}

/* Long options with no short form: values above any character. */
enum {
	OPT_TIME_FORMAT = 0x7400,
	OPT_LOCAL,
	OPT_NO_HEADER,
	OPT_WIDE,
	OPT_NO_PAGER,
};

static const struct option longopts[] = {
	{ "data", required_argument, NULL, 'd' },
	{ "since", required_argument, NULL, 's' },
	{ "until", required_argument, NULL, 'u' },
	{ "format", required_argument, NULL, 'f' },
	{ "pid", required_argument, NULL, 'p' },
	{ "host", required_argument, NULL, 'H' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "param", required_argument, NULL, 'P' },
	{ "raw", no_argument, NULL, 'R' },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'F' },
	{ "interval", required_argument, NULL, 'I' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "max-memory", required_argument, NULL, 'M' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "verification-key", required_argument, NULL, 'K' },
	{ "time-format", required_argument, NULL, OPT_TIME_FORMAT },
	{ "local", no_argument, NULL, OPT_LOCAL },
	{ "no-header", no_argument, NULL, OPT_NO_HEADER },
	{ "wide", no_argument, NULL, OPT_WIDE },
	{ "no-pager", no_argument, NULL, OPT_NO_PAGER },
	{ NULL, 0, NULL, 0 },
};

static void set_pid(struct opts *o, const char *arg)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || *end || !*arg || v < 0)
		die_user("bad --pid '%s': expected a process id", arg);
	o->has_pid = 1;
	o->pid = v;
}

/* Takes option @c (getopt_long's answer) into @o; a bad one ends the
 * program.  Returns 'h' for --help, 'V' for --version, 0 for the others. */
static int take_option(struct opts *o, int c, char **argv)
{
	switch (c) {
	case 'd': o->data[o->ndata++] = optarg; break;
	case 's': o->since = optarg; break;
	case 'u': o->until = optarg; break;
	case 'f':
		o->format_arg = optarg;
		o->format_set = 1;
		break;
	case 'o': o->output = optarg; break;
	case 'F': o->force = 1; break;
	case 'I': o->interval = optarg; break;
	case 'p': set_pid(o, optarg); break;
	case 'H': o->host = optarg; break;
	case 'v': o->verbose = 1; break;
	case 'P': o->params[o->nparams++] = optarg; break;
	case 'R': o->raw = 1; break;
	case 'K': o->vkey = optarg; break;
	case 'T': o->timeout = optarg; break;
	case 'M': o->max_memory = optarg; break;
	case OPT_TIME_FORMAT: o->time_format = optarg; break;
	case OPT_LOCAL: o->local = 1; break;
	case OPT_NO_HEADER: o->no_header = 1; break;
	case OPT_WIDE: o->wide = 1; break;
	case OPT_NO_PAGER: o->no_pager = 1; break;
	case 'h':
	case 'V':
		return c;
	case ':':
		die_user("option %s needs a value", argv[optind - 1]);
	case '?':
	default:
		if (optopt)
			die_user("unknown option -%c (gpurec --help lists "
				 "them)", optopt);
		die_user("unknown option %s (gpurec --help lists them)",
			 argv[optind - 1]);
	}
	return 0;
}

/* The width a table is cut to on a terminal: $COLUMNS as the shell
 * keeps it, else the terminal's, else 80. */
static int terminal_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	char *end;
	long v;

	if (env && *env) {
		errno = 0;
		v = strtol(env, &end, 10);
		if (!errno && !*end && v > 0 && v < 100000)
			return (int)v;
	}
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* The pager for a terminal: $GPUREC_PAGER, else $PAGER, else less; NULL
 * when the one named is empty or cat (git's rule). */
static const char *pager_command(void)
{
	const char *cmd = getenv("GPUREC_PAGER");

	if (!cmd)
		cmd = getenv("PAGER");
	if (!cmd)
		cmd = "less";
	if (!*cmd || strcmp(cmd, "cat") == 0)
		return NULL;
	return cmd;
}

/* Appends p to the array *v of *n names (room for *cap), growing it. */
static void push_name(char ***v, int *n, int *cap, char *p)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		if (!(*v = reallocarray(*v, (size_t)*cap, sizeof(**v))))
			die_internal("out of memory");
	}
	(*v)[(*n)++] = p;
}

/* Expands each --data that holds a glob character (* ? [) into the
 * directories it matches, sorted, in place of the pattern.  gpurec does it
 * itself so that a quoted '/srv/gpurec/node*' works past the shell's argument
 * limit, for thousands of hosts.  A pattern that matches no directory is a
 * user error: reading nothing for a mistyped fleet path would answer an
 * empty report as if all were well.  A name without glob characters is
 * kept as given (a missing directory is the catalog's error, which names
 * it). */
static void expand_data(struct opts *o)
{
	char **out = NULL;
	int n = 0, cap = 0, owned_cap = 0;

	for (int d = 0; d < o->ndata; d++) {
		const char *arg = o->data[d];
		size_t kept = 0;
		glob_t g;
		int rc;

		if (!strpbrk(arg, "*?[")) {
			push_name(&out, &n, &cap, (char *)arg);
			continue;
		}
		rc = glob(arg, GLOB_ONLYDIR, NULL, &g);
		if (rc && rc != GLOB_NOMATCH)
			die_internal("--data %s: %s", arg, rc == GLOB_NOSPACE ?
				     "out of memory" : "cannot read a directory");
		for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++) {
			struct stat sb;
			char *p;
			/* GLOB_ONLYDIR is only a hint to glob(3) */
			if (stat(g.gl_pathv[i], &sb) || !S_ISDIR(sb.st_mode))
				continue;
			if (!(p = strdup(g.gl_pathv[i])))
				die_internal("out of memory");
			push_name(&o->data_owned, &o->ndata_owned, &owned_cap, p);
			push_name(&out, &n, &cap, p);
			kept++;
		}
		if (rc == 0)
			globfree(&g);
		if (!kept)
			die_user("--data %s matches no directory", arg);
	}
	free(o->data);
	o->data = out;
	o->ndata = n;
}

/* Checks the options that every command shares and applies them: the
 * query limits, the default --data, the output format (export names its
 * own formats: cmd_export checks them). */
static void settle_options(struct opts *o, int exporting)
{
	uint64_t mem;

	if (gr_parse_duration_ns(o->timeout, &o->timeout_ns))
		die_user("bad --timeout '%s': expected a duration like 90s, "
			 "10m or 1h (0: none)", o->timeout);
	if (gr_parse_size(o->max_memory, &mem) || mem > INT64_MAX ||
	    (int64_t)mem < GR_LIMITS_MIN_MEMORY)
		die_user("bad --max-memory '%s': expected a size like 512M or "
			 "4G, at least 16M", o->max_memory);
	o->max_memory_bytes = (int64_t)mem;
	gr_limits__start(o->timeout_ns, o->timeout, o->max_memory_bytes);
	if (!o->ndata)
		o->data[o->ndata++] = DEFAULT_DATA;
	expand_data(o);
	if (o->format_set && !exporting &&
	    gr_format__parse(o->format_arg, &o->format))
		die_user("bad --format '%s': expected table, csv, tsv, json, "
			 "jsonl or line", o->format_arg);
	/* -o FILE is no terminal: its default is csv, as for a pipe */
	int to_file = o->output && strcmp(o->output, "-") != 0;
	int tty = !to_file && isatty(STDOUT_FILENO);
	if (!o->format_set)
		o->format = tty ? GR_FMT_TABLE : GR_FMT_CSV;
	o->out.fmt = o->format;
	if (o->time_format &&
	    gr_time_format__parse(o->time_format, &o->out.time))
		die_user("bad --time-format '%s': expected iso, local, ns or s",
			 o->time_format);
	if (o->local && o->time_format && o->out.time != GR_TIME_LOCAL)
		die_user("--local is --time-format local: not with "
			 "--time-format %s", o->time_format);
	if (o->local)
		o->out.time = GR_TIME_LOCAL;
	if (o->no_header && !exporting && o->format != GR_FMT_TABLE &&
	    o->format != GR_FMT_CSV && o->format != GR_FMT_TSV)
		die_user("--no-header applies to table, csv and tsv, not %s",
			 gr_format__name(o->format));
	o->out.no_header = o->no_header;
	if (tty && o->format == GR_FMT_TABLE && !o->wide)
		o->out.width = terminal_width();
	if (tty && !o->no_pager)
		pager.cmd = pager_command();
}

/* Refuses an option given to a command it does not apply to. */
static void check_applies(const struct opts *o, const char *name)
{
	int exporting = strcmp(name, "export") == 0;
	int sealing = strcmp(name, "seal-setup") == 0;

	if (o->vkey && strcmp(name, "verify") != 0)
		die_user("--verification-key applies to verify only");
	int printing = !strcmp(name, "sql") || !strcmp(name, "report") ||
		       !strcmp(name, "tables") || !strcmp(name, "schema") ||
		       !strcmp(name, "shell");
	int to_file = !strcmp(name, "sql") || !strcmp(name, "report");

	if (!exporting && !to_file && o->output)
		die_user("-o applies to sql, report and export only");
	if (!exporting && !sealing && !to_file && o->force)
		die_user("--force applies to sql -o, report -o, export and "
			 "seal-setup only");
	if (!printing && (o->time_format || o->local || o->no_header ||
			  o->wide))
		die_user("--%s applies to sql, report, tables, schema and shell "
			 "only",
			 o->time_format ? "time-format" : o->local ? "local" :
			 o->no_header ? "no-header" : "wide");
	/* Status and verify write text of their own; only row output pages,
	 * and not the shell's: a pager would hold its stdout to the end. */
	if (!printing || !strcmp(name, "shell"))
		pager.cmd = NULL;
	if (!sealing && o->interval)
		die_user("--interval applies to seal-setup only");
}

static void opts_free(struct opts *o)
{
	for (int i = 0; i < o->ndata_owned; i++)
		free(o->data_owned[i]);
	free(o->data_owned);
	free(o->data);
	free(o->params);
	free(o->cmdline);
}

int main(int argc, char **argv)
{
	struct opts o = { .timeout = DEFAULT_TIMEOUT,
			  .max_memory = DEFAULT_MAX_MEMORY };
	int c, help = 0;

	o.data = calloc((size_t)argc + 1, sizeof(char *));
	o.params = calloc((size_t)argc + 1, sizeof(char *));
	o.cmdline = calloc((size_t)argc + 1, sizeof(char *));
	if (!o.data || !o.params || !o.cmdline)
		return EXIT_INTERNAL;
	memcpy(o.cmdline, argv, (size_t)argc * sizeof(char *));
	o.ncmdline = argc;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vho:", longopts, NULL)) != -1) {
		if (take_option(&o, c, argv) == 'V') {
			printf("gpurec %s (schema %d)\n", GPUREC_VERSION,
			       GR_SCHEMA_VERSION);
			opts_free(&o);
			return 0;
		}
		help |= c == 'h';
	}
	if (optind >= argc) {
		usage(help ? stdout : stderr);
		opts_free(&o);
		return help ? 0 : EXIT_USER;
	}
	const char *name = argv[optind];
	const struct command *cmd = find_command(name);
	if (!cmd)
		unknown_command(name);
	/* gpurec CMD --help (or -h, before or after it): CMD's own help */
	if (help) {
		command_help(cmd);
		opts_free(&o);
		return fflush(stdout) ? EXIT_INTERNAL : 0;
	}
	settle_options(&o, strcmp(name, "export") == 0);
	o.argc = argc - optind - 1;
	o.argv = argv + optind + 1;
	check_applies(&o, name);
	int rc = cmd->fn(&o);
	opts_free(&o);
	return rc;
}
