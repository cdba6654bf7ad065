/* config.c - gpurecd's options: the defaults, the config file
 * (/etc/gpurec/gpurec.conf, `key = value` lines) and the command line.
 *
 * One table of keys drives the file parser, getopt_long's option list,
 * --help and gr_config__print(), so the four cannot drift apart.  argv is
 * scanned twice: the first pass only checks its syntax and finds --config
 * (and --help/--version), then the file is applied, then the second pass
 * applies the options over it, so the command line wins wherever --config
 * appears.  Every bad key or value is refused before the daemon starts,
 * naming the file and line, or the option.  The file is stricter than the
 * command line: a key may be set once (cuda-lib once per library), paths
 * are absolute, and a value carries no quotes or trailing comment, so
 * what a reviewer reads is what the daemon does.
 */
#include "recorder/config.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/parse.h"

#define NS_PER_MS 1000000LL
#define NS_PER_SEC 1000000000LL

#define FLUSH_MIN_NS (10 * NS_PER_MS)
#define FLUSH_MAX_NS (60 * NS_PER_SEC)

enum kind {
	K_PATH,		/* char *, not empty */
	K_LIST,		/* appended to cuda_libs */
	K_SIZE,		/* uint64_t bytes, above 0 */
	K_AUTO_SIZE,	/* uint64_t bytes, or "auto" (auto_flag()):
			 * journald's defaults, resolved by
			 * gr_config__resolve_auto() */
	K_DURATION,	/* int64_t ns, bare number = seconds, 0 allowed */
	K_AGE,		/* int64_t ns, bare number = seconds, above 0 */
	K_MS,		/* int64_t ns, bare number = ms, 10 ms to 60 s */
	K_BOOL,		/* int, yes/no; a bare --flag means yes */
	K_US,		/* int64_t ns, a whole number of microseconds,
			 * 0 to 60 s */
};

struct key {
	const char *name;	/* option name and file key */
	const char *arg;	/* placeholder in --help, NULL for flags */
	enum kind kind;
	size_t off;		/* field in struct gr_config */
	const char *help;
};

#define OFF(f) offsetof(struct gr_config, f)
static const struct key keys[] = {
	{ "data", "DIR", K_PATH, OFF(data_dir),
	  "data directory (" GR_CONFIG_DEFAULT_DATA ")" },
	{ "duration", "SECONDS", K_DURATION, OFF(duration_ns),
	  "stop after this long (0: until SIGINT/SIGTERM)" },
	{ "max-disk", "SIZE", K_AUTO_SIZE, OFF(max_disk),
	  "segments' cap (auto: 10% of the fs, at most 4G)" },
	{ "keep-free", "SIZE", K_AUTO_SIZE, OFF(keep_free),
	  "keep this much free, 0: none (auto: 15% of the fs, at most 4G)" },
	{ "max-age", "SECONDS", K_DURATION, OFF(max_age_ns),
	  "delete segments whose newest event is older (0: keep)" },
	{ "min-age", "SECONDS", K_DURATION, OFF(min_age_ns),
	  "never delete a segment sealed less than this ago (0: none)" },
	{ "segment-size", "SIZE", K_SIZE, OFF(segment_size),
	  "start a new segment at this size (256M)" },
	{ "segment-age", "SECONDS", K_AGE, OFF(segment_age_ns),
	  "start a new segment after this long (1h)" },
	{ "flush-interval", "MS", K_MS, OFF(flush_interval_ns),
	  "write out blocks this often, 10 ms to 60 s (1000)" },
	{ "memory-max", "SIZE", K_AUTO_SIZE, OFF(memory_max),
	  "shed caches over 3/4 of this (auto: its cgroup's limit)" },
	{ "cuda-lib", "PATH", K_LIST, OFF(cuda_libs),
	  "also probe this CUDA library or binary (repeatable)" },
	/* One key per family that can be turned off (--no-cuda, ...). */
#define GR_FAMILY_KEY(name, key, field, help) \
	{ key, NULL, K_BOOL, OFF(field), help },
#include "recorder/families.def"
	{ "sched-all", NULL, K_BOOL, OFF(sched_all),
	  "trace every process's scheduling and files, not only CUDA ones" },
	{ "offcpu-min-us", "US", K_US, OFF(offcpu_min_ns),
	  "record off-CPU intervals at least this long (1000)" },
	{ "runq-min-us", "US", K_US, OFF(runq_min_ns),
	  "record run-queue waits at least this long (0)" },
	{ "file-io-min-us", "US", K_US, OFF(file_io_min_ns),
	  "record file calls at least this long; opens always (1000)" },
	{ "gpu-sample-ms", "MS", K_MS, OFF(gpu_sample_ns),
	  "sample the GPUs this often, 10 ms to 60 s (1000)" },
	{ "verbose", NULL, K_BOOL, OFF(verbose), "log more" },
};
#define NKEYS ((int)(sizeof(keys) / sizeof(keys[0])))

/* getopt_long values: keys[i] is OPT_KEY + i; the rest are argv-only. */
enum {
	OPT_CONFIG = 0x100,
	OPT_CHECK_CONFIG,
	OPT_HELP,
	OPT_VERSION,
	OPT_KEY = 0x200,
};

static const struct option extra_opts[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
};
#define NEXTRA ((int)(sizeof(extra_opts) / sizeof(extra_opts[0])))

/* Formats the message into @err.  Returns @rc. */
static int fail(int rc, char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(int rc, char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* Returns the key called @name ('_' taken as '-'), or NULL. */
static const struct key *key__find(const char *name)
{
	for (int i = 0; i < NKEYS; i++) {
		const char *a = keys[i].name, *b = name;

		while (*a && (*a == *b || (*a == '-' && *b == '_'))) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return &keys[i];
	}
	return NULL;
}

static int parse_bool(const char *v, int *out)
{
	static const char *const yes[] = { "yes", "true", "1", "on" };
	static const char *const no[] = { "no", "false", "0", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

/* Parses a flush interval: a bare number (fraction allowed) is
 * milliseconds, anything else goes to gr_parse_duration_ns().  Returns 0,
 * -EINVAL if malformed or -ERANGE if too large. */
static int parse_ms(const char *v, int64_t *out)
{
	size_t n = strspn(v, "0123456789");
	char buf[64];

	if (v[n] == '.')
		n += 1 + strspn(v + n + 1, "0123456789");
	if (n && !v[n]) {
		if (n + sizeof("ms") > sizeof(buf))
			return -ERANGE;
		snprintf(buf, sizeof(buf), "%sms", v);
		v = buf;
	}
	return gr_parse_duration_ns(v, out);
}

/* The offset of the "auto" flag of K_AUTO_SIZE key @k in gr_config. */
static size_t auto_off(const struct key *k)
{
	return k->off == OFF(max_disk) ? OFF(max_disk_auto) :
	       k->off == OFF(memory_max) ? OFF(memory_max_auto) :
					   OFF(keep_free_auto);
}

/* Sets key @k from the text @v.  Returns 0, -ENOMEM, or -EINVAL with
 * *@why saying what was expected. */
/* K_PATH and K_LIST: a path, or one more cuda-lib. */
static int set_path(const struct key *k, struct gr_config *c, void *p,
		    const char *v, const char **why)
{
	char *s;

	if (!*v) {
		*why = "expected a path";
		return -EINVAL;
	}
	s = strdup(v);
	if (!s)
		return -ENOMEM;
	if (k->kind == K_PATH) {
		free(*(char **)p);
		*(char **)p = s;
	} else {
		char **l = realloc(c->cuda_libs, (size_t)(c->ncuda_libs + 1) *
				   sizeof(*l));

		if (!l) {
			free(s);
			return -ENOMEM;
		}
		l[c->ncuda_libs++] = s;
		c->cuda_libs = l;
	}
	return 0;
}

/* K_SIZE and K_AUTO_SIZE. */
static int set_size(const struct key *k, struct gr_config *c, void *p,
		    const char *v, const char **why)
{
	uint64_t size;
	int rc;

	if (k->kind == K_AUTO_SIZE && !strcasecmp(v, "auto")) {
		*(uint64_t *)p = 0;
		*(int *)((char *)c + auto_off(k)) = 1;
		return 0;
	}
	rc = gr_parse_size(v, &size);
	if (rc == -ERANGE) {
		*why = "out of range";
		return -EINVAL;
	}
	if (rc) {
		*why = k->kind == K_SIZE ?
			"expected a size like 256M" :
			"expected a size like 256M, or auto";
		return -EINVAL;
	}
	if (k->kind == K_SIZE && !size) {
		*why = "must be above 0";
		return -EINVAL;
	}
	/* 0 used to mean auto, silently: now it is what it says where it
	 * means something (keep nothing free), and an error where it does
	 * not (a cap of nothing). */
	if (k->kind == K_AUTO_SIZE && !size && k->off != OFF(keep_free)) {
		*why = "must be a size above 0, or auto";
		return -EINVAL;
	}
	*(uint64_t *)p = size;
	if (k->kind == K_AUTO_SIZE)
		*(int *)((char *)c + auto_off(k)) = 0;
	return 0;
}

/* K_DURATION, K_AGE, K_MS and K_US: int64_t ns. */
static int set_ns(const struct key *k, int64_t *p, const char *v,
		  const char **why)
{
	int64_t ns;
	int rc;

	switch (k->kind) {
	case K_DURATION:
	case K_AGE:
		rc = gr_parse_duration_ns(v, &ns);
		if (rc == -ERANGE) {
			*why = "out of range";
			return -EINVAL;
		}
		if (rc) {
			*why = "expected seconds or a duration like 15m";
			return -EINVAL;
		}
		if (k->kind == K_AGE && !ns) {
			*why = "must be above 0";
			return -EINVAL;
		}
		*p = ns;
		return 0;
	case K_MS:
		rc = parse_ms(v, &ns);
		if (rc == -EINVAL) {
			*why = "expected milliseconds or a duration like 500ms";
			return -EINVAL;
		}
		if (rc || ns < FLUSH_MIN_NS || ns > FLUSH_MAX_NS) {
			*why = "must be 10ms to 60s";
			return -EINVAL;
		}
		*p = ns;
		return 0;
	default: {	/* K_US */
		char *end;
		errno = 0;
		unsigned long long us = strtoull(v, &end, 10);
		if (!*v || *v == '-' || *end || errno || us > 60000000ull) {
			*why = "expected microseconds, 0 to 60000000";
			return -EINVAL;
		}
		*p = (int64_t)us * 1000;
		return 0;
	}
	}
}

static int key__set(const struct key *k, struct gr_config *c, const char *v,
		    const char **why)
{
	void *p = (char *)c + k->off;

	switch (k->kind) {
	case K_PATH:
	case K_LIST:
		return set_path(k, c, p, v, why);
	case K_SIZE:
	case K_AUTO_SIZE:
		return set_size(k, c, p, v, why);
	case K_DURATION:
	case K_AGE:
	case K_MS:
	case K_US:
		return set_ns(k, p, v, why);
	case K_BOOL:
		if (parse_bool(v, (int *)p)) {
			*why = "expected yes or no";
			return -EINVAL;
		}
		return 0;
	}
	*why = "unsupported key";
	return -EINVAL;
}

/* Strips blanks (and the line end) from both ends of @s, in place. */
static char *strip(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Says what is wrong with the file's value @v for @k before it is parsed:
 * what the command line would take in a shell's quotes or relative to its
 * working directory reads differently in a file.  Returns NULL if nothing. */
static const char *file_value__check(const struct key *k, const char *v)
{
	size_t n = strlen(v);

	/* '#' starts a comment only at a line's start ('/x#y.so' is a
	 * path), so "data = /srv # big disk" would silently be a directory
	 * named "/srv # big disk". */
	for (size_t i = 0; i < n; i++)
		if (v[i] == '#' && (!i || v[i - 1] == ' ' || v[i - 1] == '\t'))
			return "a comment must be on a line of its own";
	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0])
		return "write it without quotes";
	/* The daemon's working directory is / under systemd, not where the
	 * file is. */
	if ((k->kind == K_PATH || k->kind == K_LIST) && v[0] != '/')
		return "expected an absolute path";
	return NULL;
}

/* Applies one line (@lineno of @path) of a config file; @seen holds, per
 * key, the line that set it (0: none yet).  Returns 0, -EINVAL or -ENOMEM
 * with a message in @err. */
static int config__apply_line(struct gr_config *c, char *line,
			      const char *path, int lineno, int *seen,
			      char *err, size_t len)
{
	const struct key *k;
	const char *why = "";
	char *s = strip(line), *eq, *name, *v;
	int rc;

	if (!*s || *s == '#')
		return 0;
	eq = strchr(s, '=');
	if (!eq)
		return fail(-EINVAL, err, len,
			    "%s:%d: expected 'key = value', got '%s'", path,
			    lineno, s);
	*eq = '\0';
	name = strip(s);
	v = strip(eq + 1);
	k = key__find(name);
	if (!k)
		return fail(-EINVAL, err, len, "%s:%d: unknown key '%s'", path,
			    lineno, name);
	/* One line per key (cuda-lib adds one library per line): a second
	 * line that silently won would hide the first from a reviewer. */
	if (k->kind != K_LIST && seen[k - keys])
		return fail(-EINVAL, err, len,
			    "%s:%d: duplicate key '%s' (first set at line %d)",
			    path, lineno, k->name, seen[k - keys]);
	seen[k - keys] = lineno;
	why = file_value__check(k, v);
	if (why)
		return fail(-EINVAL, err, len, "%s:%d: bad value '%s' for %s: %s",
			    path, lineno, v, k->name, why);
	rc = key__set(k, c, v, &why);
	if (rc == -ENOMEM)
		return fail(rc, err, len, "out of memory");
	if (rc)
		return fail(rc, err, len, "%s:%d: bad value '%s' for %s: %s",
			    path, lineno, v, k->name, why);
	return 0;
}

/* Reads the config file @path into @c; a missing file is fine unless
 * @must.  Returns 0, -EINVAL or -ENOMEM with a message in @err. */
static int config__read_file(struct gr_config *c, const char *path, int must,
			     char *err, size_t len)
{
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, rc = 0, seen[NKEYS] = { 0 };
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		if (!must && errno == ENOENT)
			return 0;
		return fail(-EINVAL, err, len, "cannot read config file %s: %s",
			    path, strerror(errno));
	}
	c->config_path = strdup(path);
	if (!c->config_path) {
		fclose(f);
		return fail(-ENOMEM, err, len, "out of memory");
	}
	for (;;) {
		ssize_t n;

		errno = 0;
		if ((n = getline(&line, &cap, f)) < 0) {
			if (ferror(f))
				rc = fail(-EINVAL, err, len,
					  "cannot read config file %s: %s",
					  path, strerror(errno ? errno : EIO));
			break;
		}
		/* A NUL would end the value where a reader of the file
		 * sees more of it. */
		if (memchr(line, '\0', (size_t)n)) {
			rc = fail(-EINVAL, err, len, "%s:%d: a NUL byte in the "
				  "line", path, lineno + 1);
			break;
		}
		rc = config__apply_line(c, line, path, ++lineno, seen, err,
					len);
		if (rc)
			break;
	}
	free(line);
	fclose(f);
	return rc;
}

/* Returns the option with getopt value @val in @opts. */
static const char *opt_name(const struct option *opts, int val)
{
	for (int i = 0; opts[i].name; i++)
		if (opts[i].val == val)
			return opts[i].name;
	return "?";
}

/* Words an unknown or ambiguous long option @arg ("--name[=value]"). */
static int bad_long_option(const struct option *opts, const char *arg,
			   char *err, size_t len)
{
	size_t n = strcspn(arg + 2, "="), off = 0;
	char alts[256] = "";
	int matches = 0;

	for (int i = 0; opts[i].name; i++) {
		if (strncmp(opts[i].name, arg + 2, n) != 0)
			continue;
		matches++;
		if (off < sizeof(alts))
			off += (size_t)snprintf(alts + off, sizeof(alts) - off,
						"%s--%s", off ? ", " : "",
						opts[i].name);
	}
	if (matches > 1)
		return fail(-EINVAL, err, len, "ambiguous option '%.*s' (%s)",
			    (int)n + 2, arg, alts);
	return fail(-EINVAL, err, len, "unknown option '%.*s'", (int)n + 2,
		    arg);
}

/* Scans argv with getopt_long.  Every pass checks the syntax and records
 * --config (in *@file), --check-config, --help and --version; with @apply
 * it also sets the keys.  Returns 0, -EINVAL or -ENOMEM with a message in
 * @err. */
static int config__scan_argv(struct gr_config *c, int argc, char **argv,
			     int apply, const char **file, char *err,
			     size_t len)
{
	struct option opts[NKEYS + NEXTRA + 1];
	int saved_opterr = opterr, rc = 0, o;

	for (int i = 0; i < NKEYS; i++)
		opts[i] = (struct option){
			.name = keys[i].name,
			.has_arg = keys[i].kind == K_BOOL ? optional_argument :
							    required_argument,
			.val = OPT_KEY + i,
		};
	memcpy(opts + NKEYS, extra_opts, sizeof(extra_opts));
	opts[NKEYS + NEXTRA] = (struct option){ 0 };

	/* "-": non-options come back in order as 1, so nothing is permuted;
	 * ":": a missing value is ':', not '?'.  optind 0 restarts GNU
	 * getopt from scratch, as this runs more than once. */
	opterr = 0;
	optind = 0;
	while (!rc && (o = getopt_long(argc, argv, "-:", opts, NULL)) != -1) {
		const struct key *k;
		const char *why = "";

		switch (o) {
		case 1:
			rc = fail(-EINVAL, err, len, "unexpected argument '%s'",
				  optarg);
			break;
		case ':':
			rc = fail(-EINVAL, err, len, "option --%s needs a value",
				  opt_name(opts, optopt));
			break;
		case '?':
			if (optopt >= OPT_CONFIG)
				rc = fail(-EINVAL, err, len,
					  "option --%s takes no value",
					  opt_name(opts, optopt));
			else if (optopt)
				rc = fail(-EINVAL, err, len,
					  "unknown option '-%c'", optopt);
			else
				rc = bad_long_option(opts, argv[optind - 1],
						     err, len);
			break;
		case OPT_CONFIG:
			*file = optarg;
			break;
		case OPT_CHECK_CONFIG:
			c->check_config = 1;
			break;
		case OPT_HELP:
			c->help = 1;
			break;
		case OPT_VERSION:
			c->version = 1;
			break;
		default:
			if (!apply || o < OPT_KEY || o >= OPT_KEY + NKEYS)
				break;
			k = &keys[o - OPT_KEY];
			rc = key__set(k, c, optarg ? optarg : "yes", &why);
			if (rc == -ENOMEM)
				rc = fail(rc, err, len, "out of memory");
			else if (rc)
				rc = fail(rc, err, len,
					  "bad value '%s' for --%s: %s",
					  optarg, k->name, why);
			break;
		}
	}
	/* What follows "--" is not an option either. */
	if (!rc && optind < argc)
		rc = fail(-EINVAL, err, len, "unexpected argument '%s'",
			  argv[optind]);
	opterr = saved_opterr;
	return rc;
}

int gr_config__load(struct gr_config *c, int argc, char **argv,
		    const char *default_path, char *err, size_t errlen)
{
	const char *file = NULL;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	memset(c, 0, sizeof(*c));
	c->segment_size = 256ULL << 20;
	c->segment_age_ns = 3600 * NS_PER_SEC;
	c->flush_interval_ns = 1000 * NS_PER_MS;
	c->gpu_sample_ns = 1000 * NS_PER_MS;
	c->offcpu_min_ns = 1000000;
	c->file_io_min_ns = 1000000;
	c->max_disk_auto = c->keep_free_auto = c->memory_max_auto = 1;
	c->data_dir = strdup(GR_CONFIG_DEFAULT_DATA);
	if (!c->data_dir)
		return fail(-ENOMEM, err, errlen, "out of memory");

	rc = config__scan_argv(c, argc, argv, 0, &file, err, errlen);
	if (rc || c->help || c->version)
		goto out;
	if (file)
		rc = config__read_file(c, file, 1, err, errlen);
	else if (default_path)
		rc = config__read_file(c, default_path, 0, err, errlen);
	if (!rc)
		rc = config__scan_argv(c, argc, argv, 1, &file, err, errlen);
	/* min-age spares a segment from every deletion, max-age's too: a
	 * segment between the two would be both due and spared. */
	if (!rc && c->max_age_ns && c->max_age_ns < c->min_age_ns)
		rc = fail(-EINVAL, err, errlen,
			  "max-age (%llds) is shorter than min-age (%llds): "
			  "segments between the two could not be deleted",
			  (long long)(c->max_age_ns / NS_PER_SEC),
			  (long long)(c->min_age_ns / NS_PER_SEC));
out:
	if (rc)
		gr_config__free(c);
	return rc;
}

void gr_config__free(struct gr_config *c)
{
	free(c->config_path);
	free(c->data_dir);
	for (int i = 0; i < c->ncuda_libs; i++)
		free(c->cuda_libs[i]);
	free(c->cuda_libs);
	memset(c, 0, sizeof(*c));
}

int gr_config__check_data_dir(const struct gr_config *c, char *msg,
			      size_t len)
{
	const char *dir = c->data_dir, *p;
	struct stat st;
	char *parent;
	int rc = 0, e;

	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 :
			fail(-ENOTDIR, msg, len,
			     "data directory %s is not a directory", dir);
	e = errno;
	if (e != ENOENT && e != ENOTDIR)
		return fail(-e, msg, len, "data directory %s: %s", dir,
			    strerror(e));
	parent = strdup(dir);
	if (!parent)
		return fail(-ENOMEM, msg, len, "out of memory");
	/* dirname() may return a static "." or "/", or modify its argument. */
	p = dirname(parent);
	if (stat(p, &st) < 0) {
		e = errno;
		rc = fail(-e, msg, len,
			  "data directory %s cannot be created: %s: %s", dir,
			  p, strerror(e));
	} else if (!S_ISDIR(st.st_mode)) {
		rc = fail(-ENOTDIR, msg, len,
			  "data directory %s cannot be created: %s is not a "
			  "directory", dir, p);
	}
	free(parent);
	return rc;
}

/* Writes @v as the shortest exact size gr_parse_size() reads ("256M"). */
static void print_size(FILE *f, uint64_t v)
{
	static const char units[] = "KMGTPE";
	int u = -1;

	while (v && !(v & 1023) && units[u + 1]) {
		v >>= 10;
		u++;
	}
	if (u < 0)
		fprintf(f, "%llu\n", (unsigned long long)v);
	else
		fprintf(f, "%llu%c\n", (unsigned long long)v, units[u]);
}

/* Writes @ns exactly in the largest unit that divides it, from @first
 * on ("1h", "90s", "1500ms"); 0 is "0". */
static void print_duration(FILE *f, int64_t ns, int first)
{
	static const struct {
		const char *name;
		int64_t ns;
	} units[] = {
		{ "d", 86400 * NS_PER_SEC },
		{ "h", 3600 * NS_PER_SEC },
		{ "m", 60 * NS_PER_SEC },
		{ "s", NS_PER_SEC },
		{ "ms", NS_PER_MS },
		{ "us", 1000 },
		{ "ns", 1 },
	};
	int i = first;

	if (!ns) {
		fprintf(f, "0\n");
		return;
	}
	while (ns % units[i].ns)
		i++;
	fprintf(f, "%lld%s\n", (long long)(ns / units[i].ns), units[i].name);
}

void gr_config__print(const struct gr_config *c, FILE *f)
{
	if (c->config_path)
		fprintf(f, "# gpurecd: defaults, %s, command line\n",
			c->config_path);
	else
		fprintf(f, "# gpurecd: defaults, command line\n");
	for (int i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		const void *p = (const char *)c + k->off;
		uint64_t v;

		switch (k->kind) {
		case K_PATH:
			fprintf(f, "%s = %s\n", k->name,
				*(char *const *)p ? *(char *const *)p : "");
			break;
		case K_LIST:
			for (int j = 0; j < c->ncuda_libs; j++)
				fprintf(f, "%s = %s\n", k->name, c->cuda_libs[j]);
			break;
		case K_SIZE:
		case K_AUTO_SIZE:
			v = *(const uint64_t *)p;
			fprintf(f, "%s = ", k->name);
			if (k->kind == K_AUTO_SIZE &&
			    *(const int *)((const char *)c + auto_off(k)))
				fprintf(f, "auto\n");
			else
				print_size(f, v);
			break;
		case K_DURATION:
		case K_AGE:
			fprintf(f, "%s = ", k->name);
			print_duration(f, *(const int64_t *)p, 0);
			break;
		case K_MS:
			fprintf(f, "%s = ", k->name);
			print_duration(f, *(const int64_t *)p, 4);
			break;
		case K_US:
			fprintf(f, "%s = %lld\n", k->name,
				(long long)(*(const int64_t *)p / 1000));
			break;
		case K_BOOL:
			fprintf(f, "%s = %s\n", k->name,
				*(const int *)p ? "yes" : "no");
			break;
		}
	}
}

void gr_config__resolve_auto(struct gr_config *c, uint64_t fs_bytes)
{
	const uint64_t cap = 4ull << 30;
	/* 15% without overflowing 64 bits on any file system */
	uint64_t pct15 = fs_bytes / 100 * 15 + fs_bytes % 100 * 15 / 100;

	if (c->max_disk_auto)
		c->max_disk = fs_bytes / 10 < cap ? fs_bytes / 10 : cap;
	if (c->keep_free_auto)
		c->keep_free = pct15 < cap ? pct15 : cap;
	c->max_disk_auto = c->keep_free_auto = 0;
}

void gr_config__usage(FILE *f)
{
	char opt[64];

	fprintf(f,
		"Usage: gpurecd [OPTION]...\n"
		"Record the CUDA calls, scheduling and I/O of GPU processes\n"
		"into a data directory.\n\n");
	fprintf(f, "  %-24s%s\n", "--config FILE",
		"read FILE instead of " GR_CONFIG_DEFAULT_PATH);
	for (int i = 0; i < NKEYS; i++) {
		snprintf(opt, sizeof(opt), "--%s%s%s", keys[i].name,
			 keys[i].arg ? " " : "", keys[i].arg ? keys[i].arg : "");
		fprintf(f, "  %-24s%s\n", opt, keys[i].help);
	}
	fprintf(f, "  %-24s%s\n", "--check-config",
		"check the configuration, print it and exit");
	fprintf(f, "  %-24s%s\n", "--help", "print this help and exit");
	fprintf(f, "  %-24s%s\n", "--version", "print the version and exit");
	fprintf(f,
		"\n"
		"SIZE: bytes, or with K, M, G, T (1024-based): 512M, 1.5G.\n"
		"SECONDS: a number of seconds, or 90s, 15m, 1h, 2d.\n"
		"MS: a number of milliseconds, or 500ms, 1s.\n"
		"A flag takes =no to turn off what the file turned on "
		"(--no-io=no).\n"
		"\n"
		"Every option but --config, --check-config, --help and "
		"--version is also a\n"
		"key of the config file, without the dashes, set on one line "
		"(each cuda-lib\n"
		"line adds one; paths absolute; '#' starts a comment line):\n"
		"    segment-size = 512M\n"
		"    no-io = yes\n"
		"    cuda-lib = /opt/app/lib/libcudart.so.12\n"
		"The command line wins over the file.\n");
}
