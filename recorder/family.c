/* family.c - the table of recorder/families.def. */
#include "recorder/family.h"

#define GR_FAMILY_DROPS(name, ...)                                             \
	static const char *const drops_##name[] = { __VA_ARGS__ };
#include "recorder/families.def"

#define GR_FAMILY_IS_HOST_host 1
#define GR_FAMILY_IS_HOST_cuda 0

const struct gr_family_info gr_families[GR_NFAMILIES] = {
#define GR_FAMILY(name_, unit, status_)                                        \
	[GR_FAM_##name_].name = #name_, [GR_FAM_##name_].status = status_,     \
	[GR_FAM_##name_].host = GR_FAMILY_IS_HOST_##unit,
#define GR_FAMILY_DROPS(name_, ...)                                            \
	[GR_FAM_##name_].drops = drops_##name_,                                \
	[GR_FAM_##name_].ndrops =                                              \
		(int)(sizeof(drops_##name_) / sizeof(drops_##name_[0])),
#include "recorder/families.def"
};
