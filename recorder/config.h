/* config.h - gpurecd's configuration: defaults, then the config file
 * (/etc/gpurec/gpurec.conf or --config), then the command line, which wins.
 *
 * The file takes `key = value` lines; the keys are the long option names
 * without the dashes ('-' or '_' inside a key), `#` starts a comment line;
 * each key is set once (cuda-lib once per library) and paths are absolute.
 * max-disk and keep-free take a size or "auto", the default: journald's
 * MaxUse and KeepFree, 10% and 15% of the data directory's file system,
 * each capped at 4 GiB, resolved by gr_config__resolve_auto() once the
 * directory exists.  keep-free 0 keeps nothing free; max-disk 0 is refused
 * (a cap of nothing).
 */
#ifndef GR_RECORDER_CONFIG_H
#define GR_RECORDER_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GR_CONFIG_DEFAULT_PATH "/etc/gpurec/gpurec.conf"
#define GR_CONFIG_DEFAULT_DATA "/var/lib/gpurec"

struct gr_config {
	char *config_path;	/* file read, or NULL if none */
	char *data_dir;
	int64_t duration_ns;	/* 0: until signalled */
	uint64_t max_disk, keep_free, segment_size;
	uint64_t memory_max;	/* unless memory_max_auto: the cgroup's */
	int memory_max_auto;
	int max_disk_auto, keep_free_auto; /* "auto": the value is not set */
	int64_t segment_age_ns, flush_interval_ns;
	int64_t max_age_ns;	/* retention deletes older segments (0: keep) */
	int64_t min_age_ns;	/* retention spares younger segments (0) */
	char **cuda_libs;	/* the file's entries, then the command line's */
	int ncuda_libs;
	/* Each family's off switch (no_cuda, ...): families.def's keys. */
#define GR_FAMILY_KEY(name, key, field, help) int field;
#include "recorder/families.def"
	int verbose, check_config;
	int sched_all;		/* trace every process, not only CUDA ones */
	int64_t offcpu_min_ns, runq_min_ns, file_io_min_ns; /* thresholds */
	int64_t gpu_sample_ns;	/* the gpu family's period */
	int help, version;	/* set when --help / --version given */
};

/* Fills @c from the defaults, the config file (--config FILE, or
 * @default_path if it exists; neither is read when --help or --version is
 * given) and then argv, whose options may come in any order.  Returns 0,
 * or -EINVAL (-ENOMEM) with a one-line message without a newline in @err,
 * naming the file and line or the option; @c is then left empty. */
int gr_config__load(struct gr_config *c, int argc, char **argv,
		    const char *default_path, char *err, size_t errlen);

/* Frees what gr_config__load() allocated and zeroes @c; safe to repeat. */
void gr_config__free(struct gr_config *c);

/* Writes the effective configuration as `key = value` lines, the format
 * the file takes (so the output reads back as a config file), for
 * --check-config and logs. */
void gr_config__print(const struct gr_config *c, FILE *f);

/* Checks what can be known of the data directory without creating it:
 * gpurecd creates only its last component, so it must be a directory or
 * its parent must be one.  Whether the daemon's user may write there is
 * not checked (the check may run as another user).  Returns 0, or -errno
 * with a one-line message without a newline in @msg. */
int gr_config__check_data_dir(const struct gr_config *c, char *msg,
			      size_t len);

/* Sets max_disk and keep_free where they are "auto", from the size of
 * the data directory's file system (@fs_bytes), and clears the flags. */
void gr_config__resolve_auto(struct gr_config *c, uint64_t fs_bytes);

/* Writes the usage text for --help. */
void gr_config__usage(FILE *f);

#endif
