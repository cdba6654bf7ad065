/* family.c - the table of recorder/families.def, and the families'
 * `drops` rows. */
#include "recorder/family.h"

#include <string.h>

#include "recorder/row.h"
#include "store/store.h"

#define GR_FAMILY_DROPS(name, ...)                                             \
	static const char *const drops_##name[] = { __VA_ARGS__ };
#include "recorder/families.def"

#define GR_FAMILY_IS_HOST_host 1
#define GR_FAMILY_IS_HOST_cuda 0
#define GR_FAMILY_IS_HOST_gpu 0
#define GR_FAMILY_PROCS_host 1
#define GR_FAMILY_PROCS_cuda 1
#define GR_FAMILY_PROCS_gpu 0

const struct gr_family_info gr_families[GR_NFAMILIES] = {
#define GR_FAMILY(name_, unit, status_)                                        \
	[GR_FAM_##name_].name = #name_, [GR_FAM_##name_].status = status_,     \
	[GR_FAM_##name_].host = GR_FAMILY_IS_HOST_##unit,                     \
	[GR_FAM_##name_].procs = GR_FAMILY_PROCS_##unit,
#define GR_FAMILY_DROPS(name_, ...)                                            \
	[GR_FAM_##name_].drops = drops_##name_,                                \
	[GR_FAM_##name_].ndrops =                                              \
		GR_FAMILY_NDROPS_##name_,
#include "recorder/families.def"
};

void gr_family__drop_row(struct gr_writer *w, const char *source, uint64_t n,
			 int64_t ts)
{
	struct gr_row r;
	gr_row__init(&r, GR_T_drops);
	r.nm = 1ull << GR_drops_pid | 1ull << GR_drops_tid |
	       1ull << GR_drops_comm;
	r.v[GR_drops_ts] = ts;
	r.v[GR_drops_source] = gr_writer__intern(w, source, strlen(source));
	r.v[GR_drops_count] = (int64_t)n;
	gr_writer__append(w, GR_T_drops, r.v, r.nm);
}

void gr_family__drops(struct gr_writer *w, enum gr_family f,
		      const uint64_t *now, uint64_t *seen, int64_t ts)
{
	for (int i = 0; i < gr_families[f].ndrops; i++) {
		uint64_t n = now[i];
		if (n == seen[i])
			continue;
		gr_family__drop_row(w, gr_families[f].drops[i], n - seen[i], ts);
		seen[i] = n;
	}
}
