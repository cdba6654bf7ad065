/* shell.c - `gpurec shell`, the interactive SQL prompt (see shell.h).
 *
 * Input is lines: from the line editor where stdin and stdout are
 * terminals, else from stdin as it comes (a script, a pipe), without a
 * prompt.  Lines gather into a statement until SQLite says it is complete
 * (sqlite3_complete(): it ends with a ';' outside quotes, comments and
 * trigger bodies); a line that starts with '.' when no statement is
 * pending is a dot command instead, as in sqlite3.  At the end of piped
 * input a pending statement without its ';' still runs.
 *
 * A statement, or a dot command that runs SQL, gets the whole --timeout
 * of its own (gr_limits__restart()) and none while the shell waits for
 * input.  While it runs the terminal is as the user left it, so Ctrl-C is
 * SIGINT, whose handler interrupts the statement (sqlite3_interrupt(),
 * meant to be called from another thread or a signal handler) and leaves
 * the shell running; one that comes between Enter and the statement's
 * start keeps it from starting (sqlite3_interrupt() is lost on a
 * connection with nothing running).  At the prompt Ctrl-C is a key that
 * drops the line.
 *
 * The history, one line per statement, is kept in
 * $XDG_STATE_HOME/gpurec/history, else ~/.gpurec_history: mode 0600 (SQL
 * may name what a user looked for), the newest HISTORY_MAX lines,
 * rewritten after each statement so a killed shell loses nothing.
 */
#include "query/shell.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/version.h"
#include "query/cli.h"
#include "query/limits.h"
#include "query/lineedit.h"

#define HISTORY_MAX 1000
#define PROMPT "gpurec> "
#define PROMPT_MORE "   ...> "
#define MAX_WORDS 64	/* words of a dot command */

struct state {
	struct gr_shell *sh;
	bool interactive;	/* the line editor, prompts, history */
	struct gr_le le;
	char *hist_path;	/* NULL: no history file */
	bool hist_warned;	/* a failed save was reported once */
	char *stmt;		/* the statement typed so far, its lines
				 * joined by '\n'; NULL: none */
	size_t stmt_len;
	int worst;		/* the worst status of any statement */
	bool quit;		/* .quit */
};

/* ---- Ctrl-C -------------------------------------------------------------- */

/* The connection while a statement runs on it, else NULL. */
static sqlite3 *volatile running_db;
static volatile sig_atomic_t interactive_run;
/* Ctrl-C came after the line was entered but before its statement
 * started: the statement is not to run. */
static volatile sig_atomic_t early_interrupt;

static void on_sigint(int sig)
{
	sqlite3 *db = running_db;

	if (db) {
		sqlite3_interrupt(db);
		gr_limits__interrupt(); /* work in C between two VM steps */
		/* The terminal echoed "^C": the error line goes below it. */
		if (interactive_run)
			(void)!write(STDOUT_FILENO, "\n", 1);
		return;
	}
	/* At the prompt the terminal is raw and Ctrl-C is a key; it is a
	 * signal only between Enter and the statement's start.  Between
	 * statements of a script, Ctrl-C ends the script as it ends any
	 * program. */
	if (interactive_run) {
		early_interrupt = 1;
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Runs @fn (a dot command, or do_sql), with the output so far flushed
 * (it must come before the statement's errors), its own deadline, and
 * Ctrl-C aimed at what it runs.  Returns its status. */
static int run_guarded(struct state *st, int (*fn)(struct state *st,
		       int argc, char **argv), int argc, char **argv)
{
	int rc;

	fflush(stdout);
	/* The deadline, and a Ctrl-C of the statement before forgotten,
	 * before a Ctrl-C can reach this one. */
	gr_limits__restart();
	running_db = st->sh->db;
	/* Checked once running_db is set: a Ctrl-C from now on interrupts
	 * the connection and sets gr_limits__interrupt(), which the progress
	 * handler and the scans between blocks then see (SQLite forgets its
	 * own flag when the statement's first step starts). */
	if (early_interrupt) {
		running_db = NULL;
		early_interrupt = 0;
		gr_limits__pause();
		fputc('\n', stdout);
		return gr_cli__error(stderr, EXIT_USER, "interrupted");
	}
	rc = fn(st, argc, argv);
	gr_limits__pause();
	running_db = NULL;
	fflush(stdout);
	return rc;
}

/* ---- history ------------------------------------------------------------- */

/* $XDG_STATE_HOME/gpurec/history (the directory made, 0700), else
 * ~/.gpurec_history; NULL where neither is set or memory ran out. */
static char *history_path(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char *dir, *path = NULL;

	/* The XDG spec: a relative path is invalid and to be ignored. */
	if (state && state[0] == '/') {
		if (asprintf(&dir, "%s/gpurec", state) < 0)
			return NULL;
		(void)mkdir(state, 0700);
		if (mkdir(dir, 0700) == 0 || errno == EEXIST)
			if (asprintf(&path, "%s/history", dir) < 0)
				path = NULL;
		free(dir);
		return path;
	}
	if (home && home[0])
		if (asprintf(&path, "%s/.gpurec_history", home) < 0)
			path = NULL;
	return path;
}

/* Adds @line to the history and writes the file. */
static void history_add(struct state *st, const char *line)
{
	int rc;

	if (!st->interactive || gr_history__add(&st->le.hist, line) ||
	    !st->hist_path)
		return;
	rc = gr_history__save(&st->le.hist, st->hist_path);
	if (rc && !st->hist_warned) {
		st->hist_warned = true;
		gr_cli__error(stderr, 0, "warning: cannot save the history "
			      "in %s: %s", st->hist_path, strerror(-rc));
	}
}

/* ---- dot commands -------------------------------------------------------- */

/* Splits @line, in place, into at most @max words at blanks; a word in
 * '...' or "..." may hold blanks.  Returns the count, or -1 for an
 * unterminated quote or too many words. */
static int split_words(char *line, char **w, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return n;
		if (n == max)
			return -1;
		if (*p == '\'' || *p == '"') {
			char q = *p++;

			w[n++] = p;
			p = strchr(p, q);
			if (!p)
				return -1;
		} else {
			w[n++] = p;
			p += strcspn(p, " \t");
			if (!*p)
				return n;
		}
		*p++ = '\0';
	}
}

static int dot_help(struct state *st, int argc, char **argv);

static int dot_tables(struct state *st, int argc, char **argv)
{
	return st->sh->catalog(st->sh->ctx, NULL, st->sh->fmt);
}

static int dot_schema(struct state *st, int argc, char **argv)
{
	return st->sh->catalog(st->sh->ctx, argc > 1 ? argv[1] : "*",
			       st->sh->fmt);
}

static int dot_mode(struct state *st, int argc, char **argv)
{
	char names[128] = "";
	size_t off = 0;
	int n = 0;

	if (argc == 1) {
		printf("current output mode: %s\n", gr_format__name(st->sh->fmt));
		return 0;
	}
	if (gr_format__parse(argv[1], &st->sh->fmt) == 0)
		return 0;
	/* Every mode output.c has, so a new format shows up here:
	 * "table, csv, ... or line". */
	while (gr_format__name((enum gr_format)n))
		n++;
	for (int f = 0; f < n && off < sizeof(names); f++)
		off += (size_t)snprintf(names + off, sizeof(names) - off,
					"%s%s", f == 0 ? "" : f == n - 1 ?
					" or " : ", ",
					gr_format__name((enum gr_format)f));
	return gr_cli__error(stderr, EXIT_USER, "bad mode '%s': expected %s",
			     argv[1], names);
}

static int dot_reports(struct state *st, int argc, char **argv)
{
	return st->sh->reports(st->sh->ctx, st->sh->fmt);
}

static int dot_report(struct state *st, int argc, char **argv)
{
	return st->sh->report(st->sh->ctx, argv[1], argv + 2, argc - 2,
			      st->sh->fmt);
}

static int dot_quit(struct state *st, int argc, char **argv)
{
	st->quit = true;
	return 0;
}

/* The dot commands, SQLite shell's way: name, arguments, help, and how
 * many words (the name included) each takes. */
static const struct dot {
	const char *name, *args, *help;
	int (*fn)(struct state *st, int argc, char **argv);
	int min, max;
} dots[] = {
	{ ".tables", "", "list the tables", dot_tables, 1, 1 },
	{ ".schema", "[TABLE]", "the columns of TABLE (of every table "
	  "without)", dot_schema, 1, 2 },
	{ ".mode", "[MODE]", "output as --format MODE does (without MODE: "
	  "the current one)", dot_mode, 1, 2 },
	{ ".reports", "", "list the canned reports and their parameters",
	  dot_reports, 1, 1 },
	{ ".report", "NAME [KEY=VALUE...]", "run a canned report",
	  dot_report, 2, MAX_WORDS },
	{ ".help", "", "this help", dot_help, 1, 1 },
	{ ".quit", "", "leave the shell (also .exit, Ctrl-D)", dot_quit, 1,
	  1 },
	{ ".exit", NULL, NULL, dot_quit, 1, 1 },
};

static int dot_help(struct state *st, int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(dots) / sizeof(*dots); i++) {
		char use[64];

		if (!dots[i].help)
			continue;
		snprintf(use, sizeof(use), "%s %s", dots[i].name, dots[i].args);
		printf("%-28s %s\n", use, dots[i].help);
	}
	printf("SQL statements end with ';' and may span lines; Ctrl-C "
	       "interrupts one\n");
	return 0;
}

/* Runs the dot command on @line (its '.' first). */
static int run_dot(struct state *st, char *line)
{
	char *w[MAX_WORDS];
	int n = split_words(line, w, MAX_WORDS);

	if (n < 0)
		return gr_cli__error(stderr, EXIT_USER, "cannot read the dot "
				     "command: an unclosed quote, or more than "
				     "%d words", MAX_WORDS);
	for (size_t i = 0; i < sizeof(dots) / sizeof(*dots); i++) {
		const struct dot *d = &dots[i];

		if (strcmp(w[0], d->name) != 0)
			continue;
		if (n < d->min || n > d->max)
			return gr_cli__error(stderr, EXIT_USER, "usage: %s%s%s",
					     d->name, d->args && d->args[0] ?
					     " " : "", d->args ? d->args : "");
		return run_guarded(st, d->fn, n, w);
	}
	return gr_cli__error(stderr, EXIT_USER, "unknown command '%s' (.help "
			     "lists them)", w[0]);
}

/* ---- statements ---------------------------------------------------------- */

/* Appends @line (and a '\n' after the text before it) to the pending
 * statement.  Returns 0 or -ENOMEM. */
static int stmt_append(struct state *st, const char *line)
{
	size_t n = strlen(line), sep = st->stmt ? 1 : 0;
	char *s = realloc(st->stmt, st->stmt_len + sep + n + 1);

	if (!s)
		return -ENOMEM;
	if (sep)
		s[st->stmt_len++] = '\n';
	memcpy(s + st->stmt_len, line, n + 1);
	st->stmt = s;
	st->stmt_len += n;
	return 0;
}

static void stmt_drop(struct state *st)
{
	free(st->stmt);
	st->stmt = NULL;
	st->stmt_len = 0;
}

/* Runs argv[0]: SQL. */
static int do_sql(struct state *st, int argc, char **argv)
{
	return st->sh->sql(st->sh->ctx, argv[0], st->sh->fmt);
}

/* Runs the pending statement and forgets it. */
static int stmt_run(struct state *st)
{
	int rc;

	if (st->interactive) {
		/* One history line per statement: recalled whole. */
		char *one = strdup(st->stmt);

		if (one) {
			for (char *p = one; *p; p++)
				if (*p == '\n')
					*p = ' ';
			history_add(st, one);
			free(one);
		}
	}
	rc = run_guarded(st, do_sql, 1, &st->stmt);
	stmt_drop(st);
	return rc;
}

/* Takes one line of input.  Returns the status of what it ran (0 when
 * it only continued a statement), or -ENOMEM. */
static int take_line(struct state *st, char *line)
{
	const char *p = line + strspn(line, " \t");

	if (!st->stmt && *p == '.') {
		history_add(st, p);
		return run_dot(st, line + (p - line));
	}
	if (!st->stmt && !*p)
		return 0;
	if (stmt_append(st, line))
		return -ENOMEM;
	if (!sqlite3_complete(st->stmt))
		return 0;
	return stmt_run(st);
}

static void note_status(struct state *st, int rc)
{
	if (rc > st->worst)
		st->worst = rc;
}

/* Reads the lines of a script or pipe. */
static int loop_piped(struct state *st)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	while (!st->quit && (n = getline(&line, &cap, stdin)) >= 0) {
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		rc = take_line(st, line);
		if (rc < 0)
			break;
		note_status(st, rc);
	}
	free(line);
	if (rc >= 0 && ferror(stdin))
		return gr_cli__error(stderr, EXIT_INTERNAL, "cannot read "
				     "stdin: %s", strerror(errno));
	/* The last statement without its ';'. */
	if (rc >= 0 && !st->quit && st->stmt &&
	    st->stmt[strspn(st->stmt, " \t\n")])
		note_status(st, rc = stmt_run(st));
	return rc < 0 ? rc : 0;
}

/* Reads lines from the editor. */
static int loop_interactive(struct state *st)
{
	printf("gpurec %s shell: SQL over the recording. .help lists the dot "
	       "commands; Ctrl-D leaves.\n", GPUREC_VERSION);
	while (!st->quit) {
		fflush(stdout);
		early_interrupt = 0;
		int rc = gr_le__read(&st->le, st->stmt ? PROMPT_MORE : PROMPT);

		if (rc < 0)
			return rc;
		if (rc == GR_LE_EOF)
			break;
		if (rc == GR_LE_CANCEL) {
			stmt_drop(st);
			continue;
		}
		rc = take_line(st, st->le.line.s);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int gr_shell__run(struct gr_shell *sh)
{
	struct state st = { .sh = sh };
	struct sigaction sa = { .sa_handler = on_sigint }, old_int;
	int rc;

	st.interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	interactive_run = st.interactive;
	/* No SA_RESTART: a read of a pipe ends at Ctrl-C too. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	gr_limits__pause();
	if (st.interactive) {
		gr_le__open(&st.le, STDIN_FILENO, HISTORY_MAX);
		st.hist_path = history_path();
		if (st.hist_path) {
			rc = gr_history__load(&st.le.hist, st.hist_path);
			if (rc)
				gr_cli__error(stderr, 0, "warning: cannot read "
					      "the history in %s: %s",
					      st.hist_path, strerror(-rc));
		}
		rc = loop_interactive(&st);
		gr_le__close(&st.le);
	} else {
		rc = loop_piped(&st);
	}
	sigaction(SIGINT, &old_int, NULL);
	stmt_drop(&st);
	free(st.hist_path);
	if (rc == -ENOMEM)
		return gr_cli__error(stderr, EXIT_INTERNAL, "out of memory");
	if (rc < 0)
		return gr_cli__error(stderr, EXIT_INTERNAL, "cannot read the "
				     "terminal: %s", strerror(-rc));
	return st.interactive ? 0 : st.worst;
}
