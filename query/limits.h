/* limits.h - what keeps a query from running away: a wall-clock deadline,
 * a ceiling on SQLite's memory and on any one string or blob, and a
 * printf() that refuses a width or precision no output could hold.
 *
 * gr_limits__start() once per run (the deadline and the heap ceiling are
 * the process's), gr_limits__apply() on every connection, and
 * gr_limits__explain() where a statement failed: it says so when a limit,
 * not the SQL, ended it.
 */
#ifndef GR_QUERY_LIMITS_H
#define GR_QUERY_LIMITS_H

#include <stdint.h>
#include <sqlite3.h>

#define GR_LIMITS_MAX_STRING (64 << 20) /* the longest string or blob */
#define GR_LIMITS_MIN_MEMORY (16ll << 20) /* below this SQLite cannot work */
#define GR_LIMITS_GRACE_NS 2000000000ll /* past the deadline: the backstop */

/* Starts the clock: statements stop @timeout_ns from now (0: never), on
 * the monotonic clock; @timeout_arg is how the user wrote it, for the
 * message.  Caps SQLite's heap at @max_memory bytes for the whole process
 * (sqlite3_hard_heap_limit64: every connection, the sorter's threads, an
 * export's attached file). */
void gr_limits__start(int64_t timeout_ns, const char *timeout_arg,
		      int64_t max_memory);

/* Sets @db's string and blob limit, its progress handler (the deadline)
 * and the guarded printf() and format().  The first call with a deadline
 * also starts the backstop: a thread that, GR_LIMITS_GRACE_NS after the
 * deadline, removes the temporary file named by gr_limits__temp_file(),
 * prints the timeout line and exits with EXIT_USER, for a statement that
 * one long function call keeps from the progress handler.  Returns
 * SQLITE_OK or the error code. */
int gr_limits__apply(sqlite3 *db);

/* Prints one line on stderr when the statement that failed with @rc was
 * ended by a limit: the deadline, the memory ceiling (SQLITE_NOMEM) or
 * the string limit (SQLITE_TOOBIG).  Returns 1 if it printed, else 0. */
int gr_limits__explain(int rc);

/* For a process that runs statement after statement (gpurec shell):
 * gr_limits__restart() gives the next statement the whole --timeout from
 * now; gr_limits__pause() takes the deadline away until the next restart
 * (the shell waits at its prompt), the backstop with it. */
void gr_limits__restart(void);
void gr_limits__pause(void);

/* Names the file the backstop removes before it ends the process: an
 * export's temporary file while it is being written; NULL: none. */
void gr_limits__temp_file(const char *path);

/* Whether the deadline has stopped a statement. */
int gr_limits__expired(void);

/* Ctrl-C while a statement runs (gpurec shell's SIGINT handler; async-
 * signal-safe): gr_limits__stop() says stop until the next restart. */
void gr_limits__interrupt(void);
/* Whether work in C within one statement (scans, walks; any thread) is
 * to stop: past the deadline (then gr_limits__expired() says so, as for
 * the progress handler) or after gr_limits__interrupt().  The caller
 * fails the statement with SQLITE_INTERRUPT. */
int gr_limits__stop(void);

#endif
