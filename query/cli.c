/* cli.c - the exit status of `gpurec` and its one way of reporting errors
 * (the contract is in cli.h).
 */
#include "query/cli.h"

#include <stdarg.h>
#include <stdlib.h>

static void vsay(FILE *f, const char *fmt, va_list ap)
{
	fprintf(f, "gpurec: ");
	vfprintf(f, fmt, ap);
	fputc('\n', f);
}

void die_user(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(stderr, fmt, ap);
	va_end(ap);
	exit(EXIT_USER);
}

void die_internal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(stderr, fmt, ap);
	va_end(ap);
	exit(EXIT_INTERNAL);
}

int gr_cli__error(FILE *f, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(f, fmt, ap);
	va_end(ap);
	return status;
}

int gr_cli__fail(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return rc;
}
