/* probe_cost.h - nothing shared: the empty probe of bench/probe_cost.c. */
