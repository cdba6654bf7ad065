/* shell.h - `gpurec shell`: an interactive SQL prompt over the recording
 * (the sqlite3 and osqueryi habit).
 *
 * The command (query/main.c) opens the recording exactly as `gpurec sql`
 * does and hands the shell its connection and the commands it already
 * has, as callbacks: the shell owns the reading (the line editor or
 * plain lines from a pipe), statements across lines, the dot commands,
 * Ctrl-C and the per-statement deadline; main.c owns everything that
 * touches the connection, so SQL typed here is refused, limited and
 * printed exactly as `gpurec sql` would.
 */
#ifndef GR_QUERY_SHELL_H
#define GR_QUERY_SHELL_H

#include <sqlite3.h>

#include "query/output.h"

struct gr_shell {
	sqlite3 *db;		/* the recording's connection: Ctrl-C
				 * interrupts it */
	enum gr_format fmt;	/* the output mode (.mode); --format at first */
	void *ctx;		/* the callbacks' */
	/* Each returns an exit status (0, EXIT_USER, EXIT_INTERNAL) after
	 * printing the rows, or one line on stderr. */
	/* Runs one or more SQL statements, as `gpurec sql`. */
	int (*sql)(void *ctx, const char *sql, enum gr_format fmt);
	/* Lists the tables (@table NULL) or a table's columns, as
	 * `gpurec tables` and `gpurec schema TABLE`. */
	int (*catalog)(void *ctx, const char *table, enum gr_format fmt);
	/* Lists the canned reports, as `gpurec report list`. */
	int (*reports)(void *ctx, enum gr_format fmt);
	/* Runs report @name with @nkv "KEY=VALUE" parameters, as `gpurec
	 * report NAME --param KEY=VALUE...`. */
	int (*report)(void *ctx, const char *name, char *const *kv, int nkv,
		      enum gr_format fmt);
};

/* Reads statements and dot commands from standard input until .quit or
 * the end of input: with line editing, a prompt and history where stdin
 * and stdout are terminals, else plain lines, no prompt.  Returns the
 * shell's exit status: 0 interactive; piped, the worst status of any
 * statement (0 all ran, EXIT_USER, EXIT_INTERNAL), so a script's failure
 * is not hidden by a later success. */
int gr_shell__run(struct gr_shell *sh);

#endif
