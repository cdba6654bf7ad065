/* cli.c - the exit status of `gpurec` and its one way of reporting errors
 * (the contract is in cli.h).
 */
#include "query/cli.h"

#include <stdarg.h>
#include <stdlib.h>

/* Prints "gpurec: ", the message of printf format @fmt and the variadic
 * arguments of the function it is used in, and a newline, on @f. */
#define SAY(f, fmt)							\
	do {								\
		va_list ap;						\
									\
		va_start(ap, fmt);					\
		fprintf(f, "gpurec: ");					\
		vfprintf(f, fmt, ap);					\
		fputc('\n', f);						\
		va_end(ap);						\
	} while (0)

void die_user(const char *fmt, ...)
{
	SAY(stderr, fmt);
	exit(EXIT_USER);
}

void die_internal(const char *fmt, ...)
{
	SAY(stderr, fmt);
	exit(EXIT_INTERNAL);
}

int gr_cli__error(FILE *f, int status, const char *fmt, ...)
{
	SAY(f, fmt);
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
