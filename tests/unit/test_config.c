/* test_config.c - gpurecd's configuration: defaults, the config file, the
 * command line over it, and the exact wording of every error.
 *
 * Config files are written with mkstemp and unlinked right after loading,
 * before anything is checked, so a failed CHECK leaves nothing behind.
 */
#include "tests/unit/test.h"
#include "recorder/config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#define NS 1000000000LL
#define MS 1000000LL
#define NOFILE "/nonexistent-gpurec-test/gpurec.conf"

static char err[512];

/* Loads from argv ("gpurecd" then the arguments) over @def. */
#define LOAD(c, def, ...)                                                  \
	load_((c), (def), (char *[]){ "gpurecd", ##__VA_ARGS__, NULL })

static int load_(struct gr_config *c, const char *def, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(err, 0, sizeof(err));
	return gr_config__load(c, argc, argv, def, err, sizeof(err));
}

/* Writes @text to a new temporary file whose name goes to @path (at least
 * 64 bytes).  Returns 0, or -1 on error. */
static int write_tmp(const char *text, char *path)
{
	size_t n = strlen(text);
	int fd;

	strcpy(path, "/tmp/gr_test_config.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, text, n) != (ssize_t)n) {
		close(fd);
		unlink(path);
		return -1;
	}
	return close(fd);
}

/* Loads the config file @text (as the default path) under argv. */
#define LOAD_TEXT(c, text, path, ...)                                      \
	load_text_((c), (text), (path),                                        \
		   (char *[]){ "gpurecd", ##__VA_ARGS__, NULL })

static int load_text_(struct gr_config *c, const char *text, char *path,
		      char **argv)
{
	int rc;

	if (write_tmp(text, path))
		return -12345;
	rc = load_(c, path, argv);
	unlink(path);
	return rc;
}

/* Returns what gr_config__print() writes for @c (free it). */
static char *print_str(const struct gr_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	gr_config__print(c, f);
	fclose(f);
	return buf;
}

/* Checks that loading @text fails with "PATH:" + @msg. */
#define CHECK_FILE_ERR(text, msg)                                          \
	do {                                                               \
		struct gr_config c_;                                       \
		char p_[64], want_[512];                                   \
		CHECK_EQ_INT(LOAD_TEXT(&c_, (text), p_), -EINVAL);         \
		snprintf(want_, sizeof(want_), "%s:%s", p_, (msg));        \
		CHECK_EQ_STR(err, want_);                                  \
		CHECK(c_.data_dir == NULL && c_.cuda_libs == NULL);        \
	} while (0)

/* Checks that argv fails with exactly @msg (no file). */
#define CHECK_ARGV_ERR(msg, ...)                                           \
	do {                                                               \
		struct gr_config c_;                                       \
		CHECK_EQ_INT(LOAD(&c_, NOFILE, __VA_ARGS__), -EINVAL);     \
		CHECK_EQ_STR(err, (msg));                                  \
		CHECK(c_.data_dir == NULL && c_.cuda_libs == NULL);        \
	} while (0)

TEST(defaults)
{
	struct gr_config c;

	CHECK_EQ_INT(LOAD(&c, NOFILE), 0);
	CHECK_EQ_STR(err, "");
	CHECK(c.config_path == NULL);
	CHECK_EQ_STR(c.data_dir, "/var/lib/gpurec");
	CHECK_EQ_INT(c.duration_ns, 0);
	CHECK_EQ_INT(c.max_disk, 0);
	CHECK_EQ_INT(c.keep_free, 0);
	CHECK_EQ_INT(c.max_disk_auto, 1);	/* auto is the default */
	CHECK_EQ_INT(c.keep_free_auto, 1);
	CHECK_EQ_INT(c.memory_max_auto, 1);	/* the cgroup's limit */
	CHECK_EQ_INT(c.segment_size, 256LL << 20);
	CHECK_EQ_INT(c.segment_age_ns, 3600 * NS);
	CHECK_EQ_INT(c.flush_interval_ns, 1000 * MS);
	CHECK_EQ_INT(c.ncuda_libs, 0);
	CHECK(c.cuda_libs == NULL);
	CHECK_EQ_INT(c.no_cuda + c.no_sched + c.no_io + c.verbose, 0);
	CHECK_EQ_INT(c.check_config + c.help + c.version, 0);
	CHECK_EQ_INT(c.sched_all, 0);
	CHECK_EQ_INT(c.offcpu_min_ns, 1000 * 1000);
	CHECK_EQ_INT(c.runq_min_ns, 0);
	CHECK_EQ_INT(c.file_io_min_ns, 1000 * 1000);
	gr_config__free(&c);
	CHECK(c.data_dir == NULL);
	gr_config__free(&c);	/* twice is fine */

	/* No default path at all. */
	CHECK_EQ_INT(LOAD(&c, NULL), 0);
	CHECK(c.config_path == NULL);
	gr_config__free(&c);
}

TEST(file_every_key)
{
	struct gr_config c;
	char path[64];

	CHECK_EQ_INT(LOAD_TEXT(&c,
			       "data = /srv/gpurec\n"
			       "duration = 90\n"
			       "max-disk = 2G\n"
			       "keep-free = 512M\n"
			       "max-age = 30d\n"
			       "min_age = 12h\n"
			       "segment-size = 64M\n"
			       "segment-age = 15m\n"
			       "flush-interval = 250\n"
			       "cuda-lib = /opt/a/libcudart.so.12\n"
			       "no-cuda = yes\n"
			       "no-sched = true\n"
			       "no-io = 1\n"
			       "sched-all = yes\n"
			       "offcpu-min-us = 250\n"
			       "runq_min_us = 7\n"
			       "file-io-min-us = 0\n"
			       "verbose = on\n",
			       path),
		     0);
	CHECK_EQ_STR(err, "");
	CHECK_EQ_STR(c.config_path, path);
	CHECK_EQ_STR(c.data_dir, "/srv/gpurec");
	CHECK_EQ_INT(c.duration_ns, 90 * NS);
	CHECK_EQ_INT(c.max_disk, 2LL << 30);
	CHECK_EQ_INT(c.keep_free, 512LL << 20);
	CHECK_EQ_INT(c.max_age_ns, 30 * 86400 * NS);
	CHECK_EQ_INT(c.min_age_ns, 12 * 3600 * NS);
	CHECK_EQ_INT(c.segment_size, 64LL << 20);
	CHECK_EQ_INT(c.segment_age_ns, 15 * 60 * NS);
	CHECK_EQ_INT(c.flush_interval_ns, 250 * MS);
	CHECK_EQ_INT(c.ncuda_libs, 1);
	CHECK_EQ_STR(c.cuda_libs[0], "/opt/a/libcudart.so.12");
	CHECK_EQ_INT(c.no_cuda, 1);
	CHECK_EQ_INT(c.no_sched, 1);
	CHECK_EQ_INT(c.no_io, 1);
	CHECK_EQ_INT(c.verbose, 1);
	CHECK_EQ_INT(c.sched_all, 1);
	CHECK_EQ_INT(c.offcpu_min_ns, 250 * 1000);
	CHECK_EQ_INT(c.runq_min_ns, 7 * 1000);
	CHECK_EQ_INT(c.file_io_min_ns, 0);
	CHECK_EQ_INT(c.check_config, 0);
	gr_config__free(&c);

	/* The other spellings of booleans, and "auto". */
	CHECK_EQ_INT(LOAD_TEXT(&c,
			       "no-cuda = no\nno-sched = false\nno-io = 0\n"
			       "verbose = off\nmax-disk = auto\n"
			       "keep-free = AUTO\nsched_all = YES\n",
			       path),
		     0);
	CHECK_EQ_INT(c.no_cuda + c.no_sched + c.no_io + c.verbose, 0);
	CHECK_EQ_INT(c.sched_all, 1);
	CHECK_EQ_INT(c.max_disk, 0);
	CHECK_EQ_INT(c.keep_free, 0);
	CHECK_EQ_INT(c.max_disk_auto + c.keep_free_auto, 2);
	gr_config__free(&c);
}

/* "auto" is a keyword, not 0: keep-free = 0 keeps nothing free, max-disk
 * = 0 is refused (issue 15: both silently meant auto). */
TEST(auto_and_zero)
{
	struct gr_config c;
	char path[64], *out;

	CHECK_EQ_INT(LOAD_TEXT(&c, "keep-free = 0\nmax-disk = 2G\n"
			       "memory-max = 256M\n", path), 0);
	CHECK_EQ_INT(c.keep_free, 0);
	CHECK_EQ_INT(c.keep_free_auto, 0);
	CHECK_EQ_INT(c.max_disk, 2LL << 30);
	CHECK_EQ_INT(c.max_disk_auto, 0);
	CHECK_EQ_INT(c.memory_max, 256LL << 20);
	CHECK_EQ_INT(c.memory_max_auto, 0);
	out = print_str(&c);
	CHECK(out && strstr(out, "\nkeep-free = 0\n") != NULL);
	CHECK(out && strstr(out, "\nmax-disk = 2G\n") != NULL);
	CHECK(out && strstr(out, "\nmemory-max = 256M\n") != NULL);
	free(out);
	gr_config__free(&c);
	/* A memory limit of nothing is an error, as a disk cap of nothing. */
	CHECK_EQ_INT(LOAD_TEXT(&c, "memory-max = 0\n", path), -EINVAL);
	CHECK(strstr(err, "memory-max") != NULL);
	gr_config__free(&c);
	CHECK_EQ_INT(LOAD_TEXT(&c, "keep-free = 0\nmax-disk = 2G\n", path), 0);
	/* resolved: only what is auto takes journald's defaults */
	gr_config__resolve_auto(&c, 100ull << 30);
	CHECK_EQ_INT(c.keep_free, 0);
	CHECK_EQ_INT(c.max_disk, 2LL << 30);
	gr_config__free(&c);

	CHECK_EQ_INT(LOAD(&c, NOFILE), 0);
	out = print_str(&c);
	CHECK(out && strstr(out, "\nmax-disk = auto\nkeep-free = auto\n"));
	free(out);
	gr_config__resolve_auto(&c, 10ull << 30);	/* 10%, 15% */
	CHECK_EQ_INT(c.max_disk, 1073741824LL);
	CHECK_EQ_INT(c.keep_free, 1610612736LL);
	CHECK_EQ_INT(c.max_disk_auto + c.keep_free_auto, 0);
	gr_config__free(&c);
	CHECK_EQ_INT(LOAD(&c, NOFILE), 0);
	gr_config__resolve_auto(&c, 1ull << 40);	/* capped at 4G */
	CHECK_EQ_INT(c.max_disk, 4LL << 30);
	CHECK_EQ_INT(c.keep_free, 4LL << 30);
	gr_config__free(&c);

	/* the command line: 0, then auto again over the file's size */
	CHECK_EQ_INT(LOAD_TEXT(&c, "keep-free = 1G\n", path, "--keep-free",
			       "0"), 0);
	CHECK_EQ_INT(c.keep_free + c.keep_free_auto, 0);
	gr_config__free(&c);
	CHECK_EQ_INT(LOAD_TEXT(&c, "keep-free = 1G\n", path, "--keep-free",
			       "auto"), 0);
	CHECK_EQ_INT(c.keep_free_auto, 1);
	gr_config__free(&c);

	CHECK_FILE_ERR("max-disk = 0\n",
		       "1: bad value '0' for max-disk: must be a size above 0, or auto");
	CHECK_FILE_ERR("max-disk = 0K\n",
		       "1: bad value '0K' for max-disk: must be a size above 0, or auto");
	CHECK_ARGV_ERR("bad value '0' for --max-disk: must be a size above 0, or auto",
		       "--max-disk", "0");
}

/* A NUL byte ends a C string where the line goes on: refused with the
 * file and line, not read as a shorter value (issue 15). */
TEST(file_nul_byte)
{
	static const char text[] = "verbose = yes\ndata = /srv\0/other\n";
	char path[64] = "/tmp/gr_test_config.XXXXXX";
	struct gr_config c;
	char want[128];
	int fd = mkstemp(path), rc;

	CHECK(fd >= 0);
	CHECK_EQ_INT(write(fd, text, sizeof(text) - 1),
		     (ssize_t)sizeof(text) - 1);
	close(fd);
	rc = load_(&c, path, (char *[]){ "gpurecd", NULL });
	unlink(path);
	CHECK_EQ_INT(rc, -EINVAL);
	snprintf(want, sizeof(want), "%s:2: a NUL byte in the line", path);
	CHECK_EQ_STR(err, want);
	CHECK(c.data_dir == NULL);
}

TEST(file_syntax)
{
	struct gr_config c;
	char path[64];

	CHECK_EQ_INT(LOAD_TEXT(&c,
			       "# gpurec.conf\n"
			       "\n"
			       "   \t\n"
			       "   # indented comment = not a key\n"
			       "segment_size=128M\n"
			       "\tsegment-age\t=\t2h  \n"
			       "data   =   /data/with spaces/gpurec   \r\n"
			       "flush_interval = 1.5s\n"
			       "max_disk= 10G\n"
			       "keep_free =1G\n"
			       "no_cuda = on\n"
			       "cuda_lib = /x#y.so\n"
			       "verbose = yes", /* no final newline */
			       path),
		     0);
	CHECK_EQ_INT(c.segment_size, 128LL << 20);
	CHECK_EQ_INT(c.segment_age_ns, 2 * 3600 * NS);
	CHECK_EQ_STR(c.data_dir, "/data/with spaces/gpurec");
	CHECK_EQ_INT(c.flush_interval_ns, 1500 * MS);
	CHECK_EQ_INT(c.max_disk, 10LL << 30);
	CHECK_EQ_INT(c.keep_free, 1LL << 30);
	CHECK_EQ_INT(c.no_cuda, 1);
	CHECK_EQ_INT(c.ncuda_libs, 1);
	CHECK_EQ_STR(c.cuda_libs[0], "/x#y.so");	/* '#' only at line start */
	CHECK_EQ_INT(c.verbose, 1);
	gr_config__free(&c);

	/* An empty file is the defaults, but names the file. */
	CHECK_EQ_INT(LOAD_TEXT(&c, "", path), 0);
	CHECK_EQ_STR(c.config_path, path);
	CHECK_EQ_INT(c.segment_size, 256LL << 20);
	gr_config__free(&c);
}

TEST(argv_overrides_file)
{
	struct gr_config c;
	char path[64];

	CHECK_EQ_INT(write_tmp("data = /from/file\n"
			       "segment-size = 64M\n"
			       "duration = 1h\n"
			       "no-io = yes\n"
			       "verbose = yes\n"
			       "max-disk = 1G\n",
			       path),
		     0);
	/* --config last: the file still comes first, argv wins. */
	CHECK_EQ_INT(LOAD(&c, NOFILE, "--segment-size", "32M", "--data=/from/argv",
			  "--no-io=no", "--no-sched", "--max-disk", "auto",
			  "--config", path),
		     0);
	unlink(path);
	CHECK_EQ_STR(c.config_path, path);
	CHECK_EQ_STR(c.data_dir, "/from/argv");
	CHECK_EQ_INT(c.segment_size, 32LL << 20);
	CHECK_EQ_INT(c.duration_ns, 3600 * NS);	/* file, not overridden */
	CHECK_EQ_INT(c.no_io, 0);
	CHECK_EQ_INT(c.no_sched, 1);
	CHECK_EQ_INT(c.verbose, 1);
	CHECK_EQ_INT(c.max_disk, 0);
	gr_config__free(&c);
}

TEST(argv_every_option)
{
	struct gr_config c;

	CHECK_EQ_INT(LOAD(&c, NOFILE, "--verbose", "--data", "/d", "--duration",
			  "15m", "--max-disk", "3G", "--keep-free", "1.5G",
			  "--segment-size", "1M", "--segment-age", "90",
			  "--flush-interval", "10", "--cuda-lib", "/l.so",
			  "--no-cuda", "--no-sched", "--no-io", "--check-config"),
		     0);
	CHECK_EQ_STR(c.data_dir, "/d");
	CHECK_EQ_INT(c.duration_ns, 15 * 60 * NS);
	CHECK_EQ_INT(c.max_disk, 3LL << 30);
	CHECK_EQ_INT(c.keep_free, 3LL << 29);
	CHECK_EQ_INT(c.segment_size, 1 << 20);
	CHECK_EQ_INT(c.segment_age_ns, 90 * NS);
	CHECK_EQ_INT(c.flush_interval_ns, 10 * MS);
	CHECK_EQ_INT(c.ncuda_libs, 1);
	CHECK_EQ_STR(c.cuda_libs[0], "/l.so");
	CHECK_EQ_INT(c.no_cuda + c.no_sched + c.no_io + c.verbose, 4);
	CHECK_EQ_INT(c.check_config, 1);
	CHECK_EQ_INT(c.help + c.version, 0);
	gr_config__free(&c);
}

TEST(durations)
{
	static const struct {
		const char *opt, *v;
		long long ns;
	} v[] = {
		{ "--duration", "0", 0 },
		{ "--duration", "90", 90 * NS },
		{ "--duration", "90s", 90 * NS },
		{ "--duration", "15m", 15 * 60 * NS },
		{ "--duration", "1h", 3600 * NS },
		{ "--duration", "1.5", 1500 * MS },
		{ "--segment-age", "1", NS },
		{ "--segment-age", "2d", 2 * 86400 * NS },
		{ "--flush-interval", "10", 10 * MS },
		{ "--flush-interval", "500", 500 * MS },
		{ "--flush-interval", "500ms", 500 * MS },
		{ "--flush-interval", "10.5", 10500000 },	/* still ms */
		{ "--flush-interval", "1s", NS },
		{ "--flush-interval", "60000", 60 * NS },
		{ "--flush-interval", "1m", 60 * NS },
		{ "--max-age", "30d", 30 * 86400 * NS },
		{ "--max-age", "12h", 12 * 3600 * NS },
		{ "--max-age", "0", 0 },
		{ "--min-age", "90", 90 * NS },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct gr_config c;
		long long got;

		CHECK_EQ_INT(LOAD(&c, NOFILE, (char *)v[i].opt, (char *)v[i].v), 0);
		got = v[i].opt[2] == 'd' ? c.duration_ns :
		      v[i].opt[2] == 's' ? c.segment_age_ns :
		      v[i].opt[3] == 'a' ? c.max_age_ns :
		      v[i].opt[3] == 'i' ? c.min_age_ns :
					   c.flush_interval_ns;
		gr_config__free(&c);
		if (got != v[i].ns) {
			fprintf(stderr, "%s %s -> %lld\n", v[i].opt, v[i].v, got);
			CHECK(0);
		}
	}
}

/* max-age below min-age names both: a segment between the two ages would
 * be due for deletion and spared at once.  Equal is allowed. */
TEST(max_age_below_min_age)
{
	struct gr_config c;
	char path[64];

	CHECK_ARGV_ERR("max-age (43200s) is shorter than min-age (86400s): "
		       "segments between the two could not be deleted",
		       "--max-age", "12h", "--min-age", "1d");
	CHECK_EQ_INT(LOAD_TEXT(&c, "max-age = 1d\n", path, "--min-age", "2d"),
		     -EINVAL);
	CHECK_EQ_STR(err, "max-age (86400s) is shorter than min-age (172800s): "
			  "segments between the two could not be deleted");
	CHECK_EQ_INT(LOAD(&c, NOFILE, "--max-age", "1d", "--min-age", "24h"),
		     0);
	CHECK_EQ_INT(c.max_age_ns, 86400 * NS);
	CHECK_EQ_INT(c.min_age_ns, 86400 * NS);
	gr_config__free(&c);
	CHECK_EQ_INT(LOAD(&c, NOFILE, "--min-age", "1h"), 0);
	CHECK_EQ_INT(c.max_age_ns, 0);	/* 0: keep by age, whatever min-age */
	gr_config__free(&c);
}

TEST(cuda_libs_order)
{
	struct gr_config c;
	char path[64];

	CHECK_EQ_INT(write_tmp("cuda-lib = /f/one.so\n"
			       "verbose = yes\n"
			       "cuda_lib = /f/two.so\n",
			       path),
		     0);
	CHECK_EQ_INT(LOAD(&c, NOFILE, "--cuda-lib", "/a/three.so", "--config",
			  path, "--cuda-lib=/a/four.so"),
		     0);
	unlink(path);
	CHECK_EQ_INT(c.ncuda_libs, 4);
	CHECK_EQ_STR(c.cuda_libs[0], "/f/one.so");
	CHECK_EQ_STR(c.cuda_libs[1], "/f/two.so");
	CHECK_EQ_STR(c.cuda_libs[2], "/a/three.so");
	CHECK_EQ_STR(c.cuda_libs[3], "/a/four.so");
	gr_config__free(&c);
}

TEST(file_unknown_key)
{
	CHECK_FILE_ERR("# gpurec.conf\n"
		       "\n"
		       "data = /srv/gpurec\n"
		       "segment-size = 64M\n"
		       "# disk\n"
		       "\n"
		       "max_disc = 1G\n"
		       "verbose = yes\n",
		       "7: unknown key 'max_disc'");
	/* argv-only options and dashed names are not keys. */
	CHECK_FILE_ERR("config = /x\n", "1: unknown key 'config'");
	CHECK_FILE_ERR("check-config = yes\n", "1: unknown key 'check-config'");
	CHECK_FILE_ERR("--verbose = yes\n", "1: unknown key '--verbose'");
	CHECK_FILE_ERR("Verbose = yes\n", "1: unknown key 'Verbose'");
	CHECK_FILE_ERR("max disk = 1G\n", "1: unknown key 'max disk'");
	CHECK_FILE_ERR("= 1G\n", "1: unknown key ''");
}

TEST(file_bad_values)
{
	CHECK_FILE_ERR("# sizes\n"
		       "data = /srv\n"
		       "segment-size = ten\n",
		       "3: bad value 'ten' for segment-size: expected a size like 256M");
	CHECK_FILE_ERR("segment_size = 0\n",
		       "1: bad value '0' for segment-size: must be above 0");
	CHECK_FILE_ERR("max-disk = lots\n",
		       "1: bad value 'lots' for max-disk: expected a size like 256M, or auto");
	CHECK_FILE_ERR("keep-free = 16E\n",
		       "1: bad value '16E' for keep-free: out of range");
	CHECK_FILE_ERR("duration = -1\n",
		       "1: bad value '-1' for duration: expected seconds or a duration like 15m");
	CHECK_FILE_ERR("segment-age = 0\n",
		       "1: bad value '0' for segment-age: must be above 0");
	CHECK_FILE_ERR("flush-interval = 5\n",
		       "1: bad value '5' for flush-interval: must be 10ms to 60s");
	CHECK_FILE_ERR("flush-interval = 61s\n",
		       "1: bad value '61s' for flush-interval: must be 10ms to 60s");
	CHECK_FILE_ERR("flush-interval = soon\n",
		       "1: bad value 'soon' for flush-interval: expected milliseconds or a duration like 500ms");
	CHECK_FILE_ERR("offcpu-min-us = -5\n",
		       "1: bad value '-5' for offcpu-min-us: expected microseconds, 0 to 60000000");
	CHECK_FILE_ERR("runq-min-us = 1ms\n",
		       "1: bad value '1ms' for runq-min-us: expected microseconds, 0 to 60000000");
	CHECK_FILE_ERR("file-io-min-us = 60000001\n",
		       "1: bad value '60000001' for file-io-min-us: expected microseconds, 0 to 60000000");
	CHECK_FILE_ERR("no-io = maybe\n",
		       "1: bad value 'maybe' for no-io: expected yes or no");
	CHECK_FILE_ERR("no-io =\n",
		       "1: bad value '' for no-io: expected yes or no");
	CHECK_FILE_ERR("data =   \n",
		       "1: bad value '' for data: expected an absolute path");
	CHECK_FILE_ERR("cuda-lib =\n",
		       "1: bad value '' for cuda-lib: expected an absolute path");
	CHECK_FILE_ERR("verbose = yes\n\nverbose\n",
		       "3: expected 'key = value', got 'verbose'");
	/* Allocations made before the bad line are released (ASan). */
	CHECK_FILE_ERR("cuda-lib = /a.so\ndata = /d\nbogus = 1\n",
		       "3: unknown key 'bogus'");
}

/* The file is stricter than the command line: what a reviewer reads in
 * it must be what the daemon does. */
TEST(file_strict)
{
	struct gr_config c;
	char path[64];

	/* A key once, however spelt; the line of the first is named. */
	CHECK_FILE_ERR("# disk\n"
		       "segment-size = 64M\n"
		       "verbose = yes\n"
		       "\n"
		       "segment_size = 128M\n",
		       "5: duplicate key 'segment-size' (first set at line 2)");
	CHECK_FILE_ERR("max-disk = 1G\nmax-disk = auto\n",
		       "2: duplicate key 'max-disk' (first set at line 1)");
	CHECK_FILE_ERR("no-io = no\nno-io = no\n",
		       "2: duplicate key 'no-io' (first set at line 1)");
	CHECK_FILE_ERR("data = /a\ncuda-lib = /l.so\ndata = /a\n",
		       "3: duplicate key 'data' (first set at line 1)");
	/* ... but every cuda-lib line adds a library, the same one too. */
	CHECK_EQ_INT(LOAD_TEXT(&c, "cuda-lib = /l.so\ncuda_lib = /l.so\n", path),
		     0);
	CHECK_EQ_INT(c.ncuda_libs, 2);
	gr_config__free(&c);

	/* '#' after a value is no comment: refused rather than kept. */
	CHECK_FILE_ERR("data = /srv/gpurec # big disk\n",
		       "1: bad value '/srv/gpurec # big disk' for data: a comment must be on a line of its own");
	CHECK_FILE_ERR("segment-size = 64M\t# small\n",
		       "1: bad value '64M\t# small' for segment-size: a comment must be on a line of its own");
	CHECK_FILE_ERR("verbose = # later\n",
		       "1: bad value '# later' for verbose: a comment must be on a line of its own");
	/* Quotes are not the shell's here. */
	CHECK_FILE_ERR("data = \"/srv/gpurec\"\n",
		       "1: bad value '\"/srv/gpurec\"' for data: write it without quotes");
	CHECK_FILE_ERR("max-disk = '10G'\n",
		       "1: bad value ''10G'' for max-disk: write it without quotes");
	/* Paths do not depend on the daemon's working directory. */
	CHECK_FILE_ERR("data = var/lib/gpurec\n",
		       "1: bad value 'var/lib/gpurec' for data: expected an absolute path");
	CHECK_FILE_ERR("cuda-lib = ./libcudart.so\n",
		       "1: bad value './libcudart.so' for cuda-lib: expected an absolute path");
	CHECK_FILE_ERR("data = ~/rec\n",
		       "1: bad value '~/rec' for data: expected an absolute path");

	/* '#' inside a value, quotes inside a path: kept as they are. */
	CHECK_EQ_INT(LOAD_TEXT(&c, "data = /srv/a#b \"c\"\n", path), 0);
	CHECK_EQ_STR(c.data_dir, "/srv/a#b \"c\"");
	gr_config__free(&c);

	/* The command line may repeat an option (the last wins) and name
	 * relative paths: the shell strips its quotes, its cwd is the
	 * caller's. */
	CHECK_EQ_INT(LOAD(&c, NOFILE, "--data", "rec", "--segment-size", "1M",
			  "--segment-size", "2M", "--cuda-lib", "lib/x.so"),
		     0);
	CHECK_EQ_STR(c.data_dir, "rec");
	CHECK_EQ_INT(c.segment_size, 2 << 20);
	CHECK_EQ_STR(c.cuda_libs[0], "lib/x.so");
	gr_config__free(&c);
}

/* --check-config's look at the data directory, without creating it. */
TEST(check_data_dir)
{
	char dir[] = "/tmp/gr_test_config.XXXXXX", sub[192], file[64];
	char want[512], msg[512];
	struct gr_config c = { 0 };
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(file, sizeof(file), "%s/f", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	close(fd);

	c.data_dir = dir;	/* there, a directory */
	CHECK_EQ_INT(gr_config__check_data_dir(&c, msg, sizeof(msg)), 0);
	snprintf(sub, sizeof(sub), "%s/rec", dir);	/* made at start */
	c.data_dir = sub;
	CHECK_EQ_INT(gr_config__check_data_dir(&c, msg, sizeof(msg)), 0);
	c.data_dir = "rec-gr-test-relative";	/* in the working directory */
	CHECK_EQ_INT(gr_config__check_data_dir(&c, msg, sizeof(msg)), 0);

	c.data_dir = file;
	CHECK_EQ_INT(gr_config__check_data_dir(&c, msg, sizeof(msg)), -ENOTDIR);
	snprintf(want, sizeof(want), "data directory %s is not a directory",
		 file);
	CHECK_EQ_STR(msg, want);

	snprintf(sub, sizeof(sub), "%s/rec", file);
	c.data_dir = sub;
	CHECK_EQ_INT(gr_config__check_data_dir(&c, msg, sizeof(msg)), -ENOTDIR);
	snprintf(want, sizeof(want),
		 "data directory %s cannot be created: %s is not a directory",
		 sub, file);
	CHECK_EQ_STR(msg, want);

	snprintf(sub, sizeof(sub), "%s/no/rec", dir);	/* only one level */
	c.data_dir = sub;
	CHECK_EQ_INT(gr_config__check_data_dir(&c, msg, sizeof(msg)), -ENOENT);
	snprintf(want, sizeof(want),
		 "data directory %s cannot be created: %s/no: No such file or "
		 "directory", sub, dir);
	CHECK_EQ_STR(msg, want);

	unlink(file);
	rmdir(dir);
}

TEST(missing_config_file)
{
	struct gr_config c;
	char dir[] = "/tmp/gr_test_config.XXXXXX", path[128], want[256];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/gpurec.conf", dir);

	/* A missing default is fine ... */
	CHECK_EQ_INT(LOAD(&c, path), 0);
	CHECK(c.config_path == NULL);
	gr_config__free(&c);

	/* ... one named with --config is not. */
	CHECK_EQ_INT(LOAD(&c, NOFILE, "--config", path), -EINVAL);
	snprintf(want, sizeof(want),
		 "cannot read config file %s: No such file or directory", path);
	CHECK_EQ_STR(err, want);
	CHECK(c.data_dir == NULL);

	/* A default that is there but unreadable is an error too. */
	CHECK_EQ_INT(LOAD(&c, dir), -EINVAL);
	rmdir(dir);
	snprintf(want, sizeof(want), "cannot read config file %s: Is a directory",
		 dir);
	CHECK_EQ_STR(err, want);

	CHECK_ARGV_ERR("cannot read config file : No such file or directory",
		       "--config=");
}

TEST(argv_bad_values)
{
	CHECK_ARGV_ERR("bad value 'ten' for --segment-size: expected a size like 256M",
		       "--segment-size", "ten");
	CHECK_ARGV_ERR("bad value '0' for --segment-size: must be above 0",
		       "--segment-size=0");
	CHECK_ARGV_ERR("bad value '1X' for --max-disk: expected a size like 256M, or auto",
		       "--max-disk", "1X");
	CHECK_ARGV_ERR("bad value '-5' for --duration: expected seconds or a duration like 15m",
		       "--duration", "-5");
	CHECK_ARGV_ERR("bad value '1y' for --segment-age: expected seconds or a duration like 15m",
		       "--segment-age", "1y");
	CHECK_ARGV_ERR("bad value '9' for --flush-interval: must be 10ms to 60s",
		       "--flush-interval", "9");
	CHECK_ARGV_ERR("bad value '60001' for --flush-interval: must be 10ms to 60s",
		       "--flush-interval", "60001");
	CHECK_ARGV_ERR("bad value '99999999999999999999' for --flush-interval: must be 10ms to 60s",
		       "--flush-interval", "99999999999999999999");
	CHECK_ARGV_ERR("bad value '' for --data: expected a path", "--data", "");
	CHECK_ARGV_ERR("bad value 'maybe' for --verbose: expected yes or no",
		       "--verbose=maybe");
	/* The first bad value is the one reported, in argv order. */
	CHECK_ARGV_ERR("bad value 'x' for --keep-free: expected a size like 256M, or auto",
		       "--verbose", "--keep-free", "x", "--segment-size", "y");
}

TEST(argv_syntax)
{
	CHECK_ARGV_ERR("unknown option '--max-disc'", "--max-disc", "1G");
	CHECK_ARGV_ERR("unknown option '--max-disc'", "--max-disc=1G");
	CHECK_ARGV_ERR("unknown option '--max_disk'", "--max_disk=1G");
	CHECK_ARGV_ERR("unknown option '-v'", "-v");
	CHECK_ARGV_ERR("ambiguous option '--no' (--no-cuda, --no-sched, --no-io, --no-gpu)",
		       "--no");
	CHECK_ARGV_ERR("ambiguous option '--max' (--max-disk, --max-age)",
		       "--max", "1G");
	CHECK_ARGV_ERR("ambiguous option '--m' (--max-disk, --max-age, --min-age, --memory-max)",
		       "--m", "1G");
	CHECK_ARGV_ERR("option --segment-size needs a value", "--segment-size");
	CHECK_ARGV_ERR("option --config needs a value", "--config");
	CHECK_ARGV_ERR("option --help takes no value", "--help=yes");
	CHECK_ARGV_ERR("unexpected argument 'x'", "--verbose", "x");
	CHECK_ARGV_ERR("unexpected argument 'x'", "x", "--verbose");
	CHECK_ARGV_ERR("unexpected argument '-'", "-");
	CHECK_ARGV_ERR("unexpected argument '--data'", "--", "--data");
	/* Syntax is checked before any file is read. */
	CHECK_ARGV_ERR("unknown option '--bogus'", "--config", NOFILE, "--bogus");
}

TEST(flags)
{
	struct gr_config c;
	char path[64];

	CHECK_EQ_INT(LOAD(&c, NOFILE, "--check-config"), 0);
	CHECK_EQ_INT(c.check_config, 1);
	CHECK_EQ_INT(c.help + c.version, 0);
	gr_config__free(&c);

	/* The trailing "--" ends the options; nothing follows. */
	CHECK_EQ_INT(LOAD(&c, NOFILE, "--version", "--"), 0);
	CHECK_EQ_INT(c.version, 1);
	gr_config__free(&c);

	/* A broken config file still gets its error under --check-config ... */
	CHECK_EQ_INT(LOAD_TEXT(&c, "bogus = 1\n", path, "--check-config"),
		     -EINVAL);
	CHECK(strstr(err, ":1: unknown key 'bogus'") != NULL);

	/* ... but does not stand in the way of --help or --version. */
	CHECK_EQ_INT(LOAD_TEXT(&c, "bogus = 1\n", path, "--help"), 0);
	CHECK_EQ_INT(c.help, 1);
	CHECK(c.config_path == NULL);
	gr_config__free(&c);
	CHECK_EQ_INT(LOAD(&c, NOFILE, "--config", NOFILE, "--version"), 0);
	CHECK_EQ_INT(c.version, 1);
	gr_config__free(&c);
}

TEST(print)
{
	struct gr_config c;
	char path[64], want[1024];
	char *out;

	CHECK_EQ_INT(LOAD(&c, NOFILE), 0);
	out = print_str(&c);
	gr_config__free(&c);
	CHECK(out != NULL);
	CHECK_EQ_STR(out, "# gpurecd: defaults, command line\n"
			  "data = /var/lib/gpurec\n"
			  "duration = 0\n"
			  "max-disk = auto\n"
			  "keep-free = auto\n"
			  "max-age = 0\n"
			  "min-age = 0\n"
			  "segment-size = 256M\n"
			  "segment-age = 1h\n"
			  "flush-interval = 1000ms\n"
			  "memory-max = auto\n"
			  "no-cuda = no\n"
			  "no-sched = no\n"
			  "no-io = no\n"
			  "no-gpu = no\n"
			  "sched-all = no\n"
			  "offcpu-min-us = 1000\n"
			  "runq-min-us = 0\n"
			  "file-io-min-us = 1000\n"
			  "gpu-sample-ms = 1000ms\n"
			  "verbose = no\n");
	free(out);

	CHECK_EQ_INT(LOAD_TEXT(&c,
			       "data = /srv/gpurec\n"
			       "cuda-lib = /f/one.so\n"
			       "max-disk = 1.5G\n"
			       "keep-free = 1000\n"
			       "segment-age = 90\n"
			       "duration = 1.5\n",
			       path, "--cuda-lib", "/a/two.so", "--flush-interval",
			       "10.5", "--segment-size", "3072K", "--no-io"),
		     0);
	out = print_str(&c);
	gr_config__free(&c);
	CHECK(out != NULL);
	snprintf(want, sizeof(want),
		 "# gpurecd: defaults, %s, command line\n"
		 "data = /srv/gpurec\n"
		 "duration = 1500ms\n"
		 "max-disk = 1536M\n"
		 "keep-free = 1000\n"
		 "max-age = 0\n"
		 "min-age = 0\n"
		 "segment-size = 3M\n"
		 "segment-age = 90s\n"
		 "flush-interval = 10500us\n"
		 "memory-max = auto\n"
		 "cuda-lib = /f/one.so\n"
		 "cuda-lib = /a/two.so\n"
		 "no-cuda = no\n"
		 "no-sched = no\n"
		 "no-io = yes\n"
		 "no-gpu = no\n"
		 "sched-all = no\n"
		 "offcpu-min-us = 1000\n"
		 "runq-min-us = 0\n"
		 "file-io-min-us = 1000\n"
		 "gpu-sample-ms = 1000ms\n"
		 "verbose = no\n",
		 path);
	CHECK_EQ_STR(out, want);
	free(out);
}

TEST(print_reads_back)
{
	struct gr_config a, b;
	char path[64], *out_a, *out_b;

	CHECK_EQ_INT(LOAD(&a, NOFILE, "--data", "/d d", "--duration", "2d",
			  "--max-disk", "7", "--keep-free", "5T",
			  "--segment-size", "1.25K", "--segment-age", "61",
			  "--flush-interval", "59.999s", "--cuda-lib", "/x",
			  "--cuda-lib", "/y", "--no-cuda", "--verbose"),
		     0);
	out_a = print_str(&a);
	CHECK(out_a != NULL);
	if (LOAD_TEXT(&b, out_a, path) != 0) {
		fprintf(stderr, "%s\n", err);
		free(out_a);
		gr_config__free(&a);
		CHECK(0);
	}
	free(b.config_path);	/* only the header may differ */
	b.config_path = NULL;
	out_b = print_str(&b);
	CHECK(out_b != NULL);
	if (strcmp(out_a, out_b) != 0 || a.duration_ns != b.duration_ns ||
	    a.flush_interval_ns != b.flush_interval_ns ||
	    a.segment_size != b.segment_size) {
		fprintf(stderr, "--- printed\n%s--- read back\n%s", out_a, out_b);
		gr_test_failed_ = 1;
	}
	free(out_a);
	free(out_b);
	gr_config__free(&a);
	gr_config__free(&b);
}

TEST(usage)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	gr_config__usage(f);
	fclose(f);
	CHECK(strncmp(buf, "Usage: gpurecd [OPTION]...\n", 27) == 0);
	CHECK(strstr(buf, "  --segment-size SIZE     ") != NULL);
	CHECK(strstr(buf, "  --config FILE           ") != NULL);
	CHECK(strstr(buf, "--check-config") != NULL);
	free(buf);
}

TEST_MAIN(TEST_ENTRY(defaults) TEST_ENTRY(auto_and_zero)
	  TEST_ENTRY(file_nul_byte) TEST_ENTRY(file_every_key)
	  TEST_ENTRY(file_syntax) TEST_ENTRY(argv_overrides_file)
	  TEST_ENTRY(argv_every_option) TEST_ENTRY(durations)
	  TEST_ENTRY(max_age_below_min_age) TEST_ENTRY(cuda_libs_order) TEST_ENTRY(file_unknown_key)
	  TEST_ENTRY(file_bad_values) TEST_ENTRY(file_strict)
	  TEST_ENTRY(check_data_dir) TEST_ENTRY(missing_config_file)
	  TEST_ENTRY(argv_bad_values) TEST_ENTRY(argv_syntax) TEST_ENTRY(flags)
	  TEST_ENTRY(print) TEST_ENTRY(print_reads_back) TEST_ENTRY(usage))
