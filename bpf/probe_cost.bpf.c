// SPDX-License-Identifier: GPL-2.0
/* probe_cost.bpf.c - an empty uprobe: the unit `make bench` divides the
 * cost of gpurecd's launch probes by. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int empty(void *ctx)
{
	return 0;
}
