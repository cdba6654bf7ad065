/* seal.h - `gpurec seal-setup`: installs the forward-secure sealing key in a
 * data directory and prints the verification key (store/fss.h).
 */
#ifndef GR_QUERY_SEAL_H
#define GR_QUERY_SEAL_H

#include <stdint.h>
#include <stdio.h>

struct gr_seal_setup {
	const char *dir;	/* the data directory */
	int64_t interval_s;	/* epoch length, seconds (>= 1) */
	int force;		/* replace an existing fss.key */
	int64_t now_ns;		/* CLOCK_REALTIME: epoch 0 starts here */
	FILE *out;		/* the verification key, one line */
	FILE *msg;		/* what to do with it, one paragraph */
};

/* Creates DIR/fss.key and prints the verification key.  Returns 0; 1 (a
 * user error: no such directory, a key exists, no permission) or 2
 * (libcrypto or I/O failed) with one line "gpurec: seal-setup: ..." on
 * msg. */
int gr_seal_setup__run(const struct gr_seal_setup *s);

#endif
