/* sandbox.h - gpurecd's self-sandbox, applied once the probes are
 * attached: no_new_privs, capabilities cut to what discovery still needs
 * (in every thread), and a seccomp filter that refuses network sockets,
 * io_uring and the syscalls an attacker would want and gpurecd never
 * makes.  recorder/sandbox.c says what is refused and why. */
#ifndef GR_RECORDER_SANDBOX_H
#define GR_RECORDER_SANDBOX_H

struct gr_sandbox_opts {
	void (*log)(const char *fmt, ...);
	/* The data directory: when it is not owned by our effective uid
	 * (root recording into the packaged gpurec-owned directory), the
	 * capabilities to write there are kept too. */
	const char *data_dir;
};

/* Applies the sandbox to every thread of the process and logs what was
 * kept.  Returns 0, or -errno after logging what failed (the process is
 * then partly sandboxed: the caller should exit). */
int gr_sandbox__apply(const struct gr_sandbox_opts *o);

/* The test hook (GPURECD_SANDBOX_SELFTEST=1): tries the refused calls
 * that only the filter can refuse (socket families, io_uring, ptrace...)
 * and AF_UNIX, logging one line each with the outcome. */
void gr_sandbox__selftest(void (*log)(const char *fmt, ...));

#endif
