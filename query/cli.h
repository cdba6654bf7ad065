/* cli.h - the exit status of `gpurec` and its one way of reporting errors.
 *
 * The exit status is the product contract (gpurec(1)): 0 success,
 * EXIT_USER a user error (bad SQL, bad option, no data), EXIT_INTERNAL an
 * internal failure.  Either way stderr gets exactly one line naming what
 * failed, "gpurec: <what>".
 *
 * Two layers, one dialect each:
 *  - commands (query/main.c, query/seal.c) print that line themselves:
 *    die_user()/die_internal() when nothing is left to release, and
 *    gr_cli__error() to print and return the status when a command must
 *    close what it opened first;
 *  - the modules a command calls (export, perfetto, report) print
 *    nothing: they return a status or -errno and put the one-line reason
 *    in a caller's buffer with gr_cli__fail(); the command prints it.
 * output.c's printers are the one exception, on purpose: they run a
 * statement for the caller like sqlite3_exec() and answer like it, an
 * SQLite result code and a malloc'd message (*pzErr).
 */
#ifndef GR_QUERY_CLI_H
#define GR_QUERY_CLI_H

#include <stddef.h>
#include <stdio.h>

#define EXIT_USER 1
#define EXIT_INTERNAL 2

/* Print "gpurec: <message>" and a newline on stderr and exit with
 * EXIT_USER, or EXIT_INTERNAL. */
void die_user(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
void die_internal(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/* Prints "gpurec: <message>" and a newline on @f (stderr, or where the
 * caller sends its messages).  Returns @status. */
int gr_cli__error(FILE *f, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes a one-line reason (no "gpurec: ", no newline) into @err, of
 * @len bytes.  Returns @rc. */
int gr_cli__fail(char *err, size_t len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
