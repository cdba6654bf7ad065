/* report.c - canned reports: parsing their headers, binding their
 * parameters, and the SQL functions they use.  See report.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/cli.h"
#include "query/cuda_errors.h"
#include "query/report.h"

/* Copies the rest of a header line (after the prefix) into out. */
static void rest(const char *p, char *out, size_t len)
{
	while (*p == ' ')
		p++;
	size_t n = strcspn(p, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = 0;
}

int gr_report__get(const char *name, struct gr_report *r)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < gr_nreport_srcs; i++) {
		if (strcmp(gr_report_srcs[i].name, name) != 0)
			continue;
		r->name = gr_report_srcs[i].name;
		r->sql = gr_report_srcs[i].sql;
		const char *raw = strstr(r->sql, "\n-- raw:\n");
		r->sql_len = raw ? (size_t)(raw - r->sql) + 1 : strlen(r->sql);
		r->raw_sql = raw ? raw + 9 : NULL;
		for (const char *l = r->sql; l && !strncmp(l, "--", 2);
		     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			if (!strncmp(l, "-- description:", 15)) {
				rest(l + 15, r->description,
				     sizeof(r->description));
			} else if (!strncmp(l, "-- param:", 9) &&
				   r->nparams < GR_REPORT_MAX_PARAMS) {
				char spec[256], *eq, *sp;
				rest(l + 9, spec, sizeof(spec));
				sp = strchr(spec, ' ');
				if (sp)
					*sp++ = 0;
				eq = strchr(spec, '=');
				if (eq)
					*eq++ = 0;
				typeof(r->params[0]) *p = &r->params[r->nparams++];
				rest(spec, p->key, sizeof(p->key));
				rest(eq ? eq : "", p->def, sizeof(p->def));
				rest(sp ? sp : "", p->help, sizeof(p->help));
			}
		}
		return 0;
	}
	return -ENOENT;
}

static int param_index(const struct gr_report *r, const char *key,
		       size_t len)
{
	for (int i = 0; i < r->nparams; i++)
		if (strlen(r->params[i].key) == len &&
		    !strncmp(r->params[i].key, key, len))
			return i;
	return -1;
}

static int is_int(const char *v)
{
	char *end;
	errno = 0;
	(void)strtoll(v, &end, 10);
	return *v && !*end && !errno;
}

/* Whether @v is a whole number, 0 or more, in decimal digits alone. */
static int is_natural(const char *v)
{
	return is_int(v) && strspn(v, "0123456789") == strlen(v);
}

/* Whether parameter @k of @r takes a whole number that may not be
 * negative: every parameter whose default is one (limits, thresholds,
 * intervals: SQLite reads LIMIT -5 as no limit at all) and, without a
 * default, pid and at.  Typing parameters in the report headers would
 * say this for each one; until then, this is what the headers imply. */
static int is_count(const struct gr_report *r, int k)
{
	return is_int(r->params[k].def) || !strcmp(r->params[k].key, "pid") ||
	       !strcmp(r->params[k].key, "at");
}

int gr_report__check_params(const struct gr_report *r, char *const *kv,
			    int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		const char *eq = strchr(kv[i], '=');
		if (!eq || eq == kv[i])
			return gr_cli__fail(err, errlen, -EINVAL,
					    "bad --param '%s': expected "
					    "KEY=VALUE", kv[i]);
		int k = param_index(r, kv[i], (size_t)(eq - kv[i]));
		if (k >= 0 && is_count(r, k) && !is_natural(eq + 1))
			return gr_cli__fail(err, errlen, -EINVAL,
					    "bad --param '%s': %s takes a "
					    "whole number, 0 or more", kv[i],
					    r->params[k].key);
		if (k < 0)
			return gr_cli__fail(err, errlen, -EINVAL,
					    "report %s takes no parameter '%.*s' "
					    "(gpurec report list shows its "
					    "parameters)", r->name,
					    (int)(eq - kv[i]), kv[i]);
	}
	for (int k = 0; k < r->nparams; k++) {
		int given = 0;
		for (int i = 0; i < n && !given; i++)
			given = !strncmp(kv[i], r->params[k].key,
					 strlen(r->params[k].key)) &&
				kv[i][strlen(r->params[k].key)] == '=';
		if (!r->params[k].def[0] && !given)
			return gr_cli__fail(err, errlen, -EINVAL,
					    "report %s needs --param %s=… "
					    "(%s)", r->name, r->params[k].key,
					    r->params[k].help);
	}
	return 0;
}

static void bind_value(sqlite3_stmt *st, int idx, const char *v)
{
	if (is_int(v))
		sqlite3_bind_int64(st, idx, strtoll(v, NULL, 10));
	else
		sqlite3_bind_text(st, idx, v, -1, SQLITE_TRANSIENT);
}

int gr_report__bind(const struct gr_report *r, sqlite3_stmt *st,
		    char *const *kv, int n, char *err, size_t errlen)
{
	for (int idx = 1; idx <= sqlite3_bind_parameter_count(st); idx++) {
		const char *name = sqlite3_bind_parameter_name(st, idx);
		if (!name)
			continue;
		name++; /* ':' */
		const char *v = NULL;
		for (int i = n - 1; i >= 0 && !v; i--) /* the last one wins */
			if (!strncmp(kv[i], name, strlen(name)) &&
			    kv[i][strlen(name)] == '=')
				v = kv[i] + strlen(name) + 1;
		int p = param_index(r, name, strlen(name));
		if (!v && p >= 0)
			v = r->params[p].def;
		if (!v)
			return gr_cli__fail(err, errlen, -EINVAL,
					    "report %s uses :%s but declares "
					    "no default for it", r->name, name);
		bind_value(st, idx, v);
	}
	return 0;
}

/* cuda_error_name(api, code): cudaError_t names for runtime APIs (cuda*,
 * __cuda*), CUresult names for the driver's (cu*); NULL for others. */
static void fn_cuda_error_name(sqlite3_context *ctx, int argc,
			       sqlite3_value **argv)
{
	(void)argc;
	const char *api = (const char *)sqlite3_value_text(argv[0]);
	if (!api || sqlite3_value_type(argv[1]) != SQLITE_INTEGER)
		return;
	int driver;
	if (!strncmp(api, "cuda", 4) || !strncmp(api, "__cuda", 6))
		driver = 0;
	else if (!strncmp(api, "cu", 2))
		driver = 1;
	else
		return;
	const char *s = gr_cuda_error_name(driver,
					   sqlite3_value_int64(argv[1]));
	if (s)
		sqlite3_result_text(ctx, s, -1, SQLITE_STATIC);
}

int gr_report__register(sqlite3 *db)
{
	return sqlite3_create_function(db, "cuda_error_name", 2,
				       SQLITE_UTF8 | SQLITE_INNOCUOUS |
				       SQLITE_DETERMINISTIC, NULL,
				       fn_cuda_error_name, NULL, NULL);
}
