/* report.c - canned reports: parsing their headers, binding their
 * parameters, and the SQL functions they use.  See report.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
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

static const struct {
	const char *name;
	enum gr_param_type type;
} param_types[] = {
	{ "int", GR_PT_INT },
	{ "count", GR_PT_COUNT },
	{ "pid", GR_PT_PID },
	{ "time", GR_PT_TIME },
	{ "duration", GR_PT_DURATION },
};

/* Sets p's type from its name in the header ("count", "enum(a|b)").
 * Returns 0, or -EPROTO if there is no such type (or an enum's list too
 * long to keep whole). */
static int set_type(struct gr_report_param *p, const char *t)
{
	size_t n = strlen(t);

	if (n >= sizeof(p->type_name))
		return -EPROTO;
	memcpy(p->type_name, t, n + 1);
	if (!strncmp(t, "enum(", 5) && n > 6 && t[n - 1] == ')') {
		p->type = GR_PT_ENUM;
		return 0;
	}
	for (size_t i = 0; i < sizeof(param_types) / sizeof(*param_types);
	     i++)
		if (!strcmp(t, param_types[i].name)) {
			p->type = param_types[i].type;
			return 0;
		}
	return -EPROTO;
}

/* Parses the spec of a `-- param:` line, "KEY:TYPE=DEFAULT meaning", into
 * a new parameter of r.  Returns 0, or -EPROTO with r->defect set. */
static int parse_param(struct gr_report *r, const char *line)
{
	char spec[256], *eq, *sp, *colon;

	if (r->nparams >= GR_REPORT_MAX_PARAMS) {
		snprintf(r->defect, sizeof(r->defect), "more than %d "
			 "parameters", GR_REPORT_MAX_PARAMS);
		return -EPROTO;
	}
	rest(line, spec, sizeof(spec));
	sp = strchr(spec, ' ');
	if (sp)
		*sp++ = 0;
	eq = strchr(spec, '=');
	if (eq)
		*eq++ = 0;
	colon = strchr(spec, ':');
	if (colon)
		*colon++ = 0;
	struct gr_report_param *p = &r->params[r->nparams++];
	rest(spec, p->key, sizeof(p->key));
	rest(eq ? eq : "", p->def, sizeof(p->def));
	rest(sp ? sp : "", p->help, sizeof(p->help));
	if (!colon || set_type(p, colon)) {
		snprintf(r->defect, sizeof(r->defect), "parameter %s has %s "
			 "type", p->key, colon ? "an unknown" : "no");
		return -EPROTO;
	}
	return 0;
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
			if (!strncmp(l, "-- description:", 15))
				rest(l + 15, r->description,
				     sizeof(r->description));
			else if (!strncmp(l, "-- param:", 9) &&
				 parse_param(r, l + 9))
				return -EPROTO;
		}
		return 0;
	}
	return -ENOENT;
}

void gr_report__params_text(const struct gr_report *r, char *buf,
			    size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int k = 0; k < r->nparams && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s=%s (%s; %s)",
					k ? ", " : "", r->params[k].key,
					r->params[k].def,
					r->params[k].type_name,
					r->params[k].help);
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

/* Whether @v is an integer in decimal, an optional '-' then digits only
 * (strtoll alone would take " 5" and "+5"), that fits int64; into *out. */
static int whole(const char *v, int64_t *out)
{
	char *end;
	const char *d = v + (*v == '-');

	if (!*d || strspn(d, "0123456789") != strlen(d))
		return 0;
	errno = 0;
	*out = strtoll(v, &end, 10);
	return !errno && !*end;
}

/* Whether @v is one of enum(a|b|c)'s values. */
static int in_enum(const char *type_name, const char *v)
{
	const char *p = type_name + 5; /* past "enum(" */
	size_t n = strlen(v);

	while (*p && *p != ')') {
		size_t len = strcspn(p, "|)");
		if (len == n && !strncmp(p, v, n))
			return 1;
		p += len + (p[len] == '|');
	}
	return 0;
}

/* A duration: with a unit as gr_parse_duration_ns() reads it; digits
 * alone in the unit @key ends with (_ns, _us, _ms, _s), else seconds. */
static int duration(const char *key, const char *v, int64_t *out)
{
	static const char *const units[] = { "_ns", "_us", "_ms", "_s" };
	size_t kl = strlen(key);
	char buf[96];

	if (*v && strspn(v, "0123456789.") == strlen(v))
		for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++) {
			size_t ul = strlen(units[i]);
			if (kl > ul && !strcmp(key + kl - ul, units[i])) {
				snprintf(buf, sizeof(buf), "%s%s", v,
					 units[i] + 1);
				return gr_parse_duration_ns(buf, out) == 0;
			}
		}
	return gr_parse_duration_ns(v, out) == 0;
}

/* What a value of parameter @p must look like, for the error line. */
static const char *expected(const struct gr_report_param *p)
{
	switch (p->type) {
	case GR_PT_INT:
		return "a whole number";
	case GR_PT_COUNT:
		return "a whole number, 0 or more";
	case GR_PT_PID:
		return "a process id, 1 to 4194304";
	case GR_PT_TIME:
		return "a time: ns since the epoch (as gpurec prints ts), now, "
		       "a duration ago like 2h, or RFC 3339 like "
		       "2026-11-22T14:00:00Z";
	case GR_PT_DURATION:
		return "a duration like 250ms, 2s or 1h";
	case GR_PT_ENUM:
		return NULL;
	}
	return NULL;
}

/* Converts value @v of parameter @k by its type: *num and *is_num for a
 * number (times and durations in ns), else the text stays @v.  Returns 0,
 * or -EINVAL with the reason in err. */
static int convert(const struct gr_report *r, int k, const char *v,
		   int64_t now_ns, int64_t *num, int *is_num, char *err,
		   size_t errlen)
{
	const struct gr_report_param *p = &r->params[k];
	int good;

	*is_num = 0;
	switch (p->type) {
	case GR_PT_INT:
		good = whole(v, num);
		break;
	case GR_PT_COUNT:
		good = whole(v, num) && *num >= 0;
		break;
	case GR_PT_PID:
		good = whole(v, num) && *num >= 1 && *num <= 4194304;
		break;
	case GR_PT_TIME:
		good = *v && strspn(v, "0123456789") == strlen(v) ?
		       whole(v, num) : gr_parse_time(v, now_ns, num) == 0;
		break;
	case GR_PT_DURATION:
		good = duration(p->key, v, num);
		break;
	case GR_PT_ENUM:
		if (!in_enum(p->type_name, v))
			return gr_cli__fail(err, errlen, -EINVAL,
					    "bad --param '%s=%s': %s takes one "
					    "of %.*s", p->key, v, p->key,
					    (int)strlen(p->type_name) - 6,
					    p->type_name + 5);
		/* enum(0|1): bound as the number SQL compares it to */
		*is_num = whole(v, num);
		return 0;
	default:
		good = 0;
	}
	if (!good)
		return gr_cli__fail(err, errlen, -EINVAL,
				    "bad --param '%s=%s': %s takes %s", p->key,
				    v, p->key, expected(p));
	*is_num = 1;
	return 0;
}

int gr_report__check_params(const struct gr_report *r, char *const *kv,
			    int n, int64_t now_ns, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		const char *eq = strchr(kv[i], '=');
		int64_t num;
		int is_num;

		if (!eq || eq == kv[i])
			return gr_cli__fail(err, errlen, -EINVAL,
					    "bad --param '%s': expected "
					    "KEY=VALUE", kv[i]);
		int k = param_index(r, kv[i], (size_t)(eq - kv[i]));
		if (k < 0)
			return gr_cli__fail(err, errlen, -EINVAL,
					    "report %s takes no parameter '%.*s' "
					    "(gpurec report list shows its "
					    "parameters)", r->name,
					    (int)(eq - kv[i]), kv[i]);
		if (convert(r, k, eq + 1, now_ns, &num, &is_num, err, errlen))
			return -EINVAL;
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

int gr_report__bind(const struct gr_report *r, sqlite3_stmt *st,
		    char *const *kv, int n, int64_t now_ns, char *err,
		    size_t errlen)
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
		if (p < 0)
			return gr_cli__fail(err, errlen, -EINVAL,
					    "report %s uses :%s but does not "
					    "declare it", r->name, name);
		if (!v)
			v = r->params[p].def;
		int64_t num;
		int is_num;
		if (convert(r, p, v, now_ns, &num, &is_num, err, errlen))
			return -EINVAL;
		if (is_num)
			sqlite3_bind_int64(st, idx, num);
		else
			sqlite3_bind_text(st, idx, v, -1, SQLITE_TRANSIENT);
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
