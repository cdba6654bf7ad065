/* sandbox.c - owns gpurecd's self-sandbox: what it gives up once its
 * probes are attached, in every thread, for the rest of its life.
 *
 * Three layers, in this order:
 *
 * 1. no_new_privs: nothing gpurecd could exec ever gains privileges (and
 *    an unprivileged process may then install a seccomp filter).
 *
 * 2. Capabilities, cut to what recording and discovery still need (the
 *    service's set, HELPERS' contract with the unit; see kept_caps below),
 *    from the effective, permitted and bounding sets, and the inheritable
 *    and ambient sets emptied: gpurecd never execs.  The bounding set
 *    goes first because dropping from it takes CAP_SETPCAP, which the
 *    capset then gives up; without CAP_SETPCAP (the unit's non-root user)
 *    the bounding set is the service manager's to set, and is left.
 *    Linux keeps capabilities per thread, and capset(2) changes only the
 *    calling one: the ELF cache's loader thread (recorder/sym/elfcache.h,
 *    started before the sandbox; and any other) would keep root's full
 *    set.  So every other thread is signalled to cut its own, as glibc
 *    does for setuid and libcap's psx for capabilities, and answers
 *    before the next one is asked.  Threads started later inherit the cut set.
 *
 * 3. A seccomp filter, on every thread at once (SECCOMP_FILTER_FLAG_TSYNC),
 *    whose default is to allow: an allowlist would have to name every call
 *    libbpf, libuv, glibc, zstd and SQLite might make on some kernel or
 *    version, and a call missing from it would break recording in the
 *    field, silently.  So it refuses what gpurecd provably never does and
 *    an attacker inside it would want: sockets other than AF_UNIX (the
 *    only socket gpurecd opens is sd_notify's AF_UNIX datagram; this is
 *    what makes it silent on the network), io_uring (which opens sockets
 *    without socket(2); libuv falls back to plain calls), taking another
 *    process's file descriptors or memory (CAP_SYS_PTRACE is kept to read
 *    /proc, not to drive other processes), and the mount, namespace,
 *    module, kexec, keyring, swap and quota calls that the kept
 *    CAP_SYS_ADMIN would otherwise allow.  bpf(2) and perf_event_open(2)
 *    stay: discovery attaches uprobes to processes started later.  A
 *    foreign architecture's calls (the i386 entry's socketcall, whose
 *    numbers mean other calls) kill the process; x32 numbers are refused.
 *
 * No libseccomp or libcap: the filter is a dozen lines of classic BPF.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>

#include "recorder/sandbox.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif
/* Calls newer than some build hosts' headers: these numbers are the same
 * on every architecture but alpha. */
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#define __NR_io_uring_enter 426
#define __NR_io_uring_register 427
#endif
#ifndef __NR_open_tree
#define __NR_open_tree 428
#define __NR_move_mount 429
#define __NR_fsopen 430
#define __NR_fsconfig 431
#define __NR_fsmount 432
#define __NR_fspick 433
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef __NR_quotactl_fd
#define __NR_quotactl_fd 443
#endif

#if defined(__x86_64__) && !defined(__ILP32__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_AARCH64
#else
#error "sandbox.c: name this architecture's AUDIT_ARCH_*"
#endif

/* The sanitizer build's LeakSanitizer stops the process's threads with
 * ptrace(2) at exit to scan their stacks; refusing it there would turn
 * every leak check into a fatal error.  The shipped build refuses it. */
#if defined(__SANITIZE_ADDRESS__)
#define GR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define GR_SANITIZED 1
#endif
#endif

#define BIT(c) (1ull << (c))

/* ---- capabilities ------------------------------------------------------ */

/* What gpurecd keeps: HELPERS' Issue 7 contract with the service unit.
 * CAP_SYSLOG (kallsyms) and CAP_SYS_RESOURCE (memlock) were needed only
 * before this point and go. */
static const struct {
	int cap;
	const char *name;
} caps[] = {
	/* bpf(2) itself (kernel.unprivileged_bpf_disabled): reading and
	 * updating maps, and linking each uprobe discovery attaches. */
	{ CAP_BPF, "cap_bpf" },
	/* perf_event_open(2) for each uprobe attached by discovery. */
	{ CAP_PERFMON, "cap_perfmon" },
	/* Creating uprobes (again since Linux 6.16), and
	 * /proc/PID/map_files, through which discovery opens libraries. */
	{ CAP_SYS_ADMIN, "cap_sys_admin" },
	/* /proc/PID/{maps,exe,root,cwd} and process_vm_readv(2) (kernel
	 * names behind CUDA handles) of other users' processes. */
	{ CAP_SYS_PTRACE, "cap_sys_ptrace" },
	/* Libraries and directories the service user cannot read. */
	{ CAP_DAC_READ_SEARCH, "cap_dac_read_search" },
	/* Sealed segments get FS_IMMUTABLE_FL; retention clears it. */
	{ CAP_LINUX_IMMUTABLE, "cap_linux_immutable" },
	/* Only when the data directory is not our euid's: root by hand,
	 * recording into the packaged gpurec-owned directory, loses root's
	 * permission bypass with the rest, and needs these to create
	 * segments there, and to seal and delete (FS_IOC_SETFLAGS) those
	 * the service made; and to give the files it makes there to the
	 * directory's owner (store/writer.c), so that the service can go on
	 * with them afterwards. */
	{ CAP_DAC_OVERRIDE, "cap_dac_override" },
	{ CAP_FOWNER, "cap_fowner" },
	{ CAP_CHOWN, "cap_chown" },
};
#define NKEPT_ALWAYS 6

static int last_cap(void)
{
	int c = 0;
	/* PR_CAPBSET_READ fails with EINVAL past the kernel's last cap. */
	while (c < 63 && prctl(PR_CAPBSET_READ, c + 1, 0, 0, 0) >= 0)
		c++;
	return c;
}

static int capget_self(uint64_t *eff, uint64_t *prm)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct cd[2];
	if (syscall(SYS_capget, &hdr, cd) < 0)
		return -errno;
	*eff = cd[0].effective | (uint64_t)cd[1].effective << 32;
	*prm = cd[0].permitted | (uint64_t)cd[1].permitted << 32;
	return 0;
}

/* Cuts the calling thread's capabilities to keep and sets no_new_privs.
 * Plain syscalls only (async-signal-safe): it runs in a signal handler.
 * Returns 0 or -errno. */
static int restrict_thread(uint64_t keep, int last)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct cd[2] = { { 0 } };
	uint64_t eff, prm;
	int err = capget_self(&eff, &prm);
	if (err)
		return err;
	if (eff & BIT(CAP_SETPCAP))
		for (int c = 0; c <= last; c++)
			if (!(keep & BIT(c)) &&
			    prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
				return -errno;
	/* EINVAL: a kernel before 4.3, which has no ambient set. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return -errno;
	prm &= keep;
	cd[0].effective = cd[0].permitted = (uint32_t)prm;
	cd[1].effective = cd[1].permitted = (uint32_t)(prm >> 32);
	if (syscall(SYS_capset, &hdr, cd) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* The other threads cut their own, one at a time: the main thread sets
 * what to keep, signals one thread and waits for its answer. */
static struct {
	uint64_t keep;
	int last;
	volatile long answered;	/* tid of the last thread that answered */
	volatile int err;	/* its restrict_thread() result */
} bc;

static void on_restrict_signal(int sig)
{
	(void)sig;
	int saved = errno;
	bc.err = restrict_thread(bc.keep, bc.last);
	__atomic_store_n(&bc.answered, syscall(SYS_gettid), __ATOMIC_RELEASE);
	errno = saved;
}

#define ANSWER_WAIT_MS 2000

/* 0 once thread tid ran the handler (bc.err then says how it went), 1 if
 * it is gone, -errno else.  A thread just joined can still be listed in
 * /proc/self/task, and a signal sent to one that is exiting is accepted
 * and never handled: while waiting for the answer, a thread that
 * vanishes (tgkill's ESRCH) counts as gone, not as one that refused. */
static int signal_thread(pid_t pid, long tid, int sig)
{
	bc.err = 0;
	__atomic_store_n(&bc.answered, 0, __ATOMIC_RELEASE);
	if (syscall(SYS_tgkill, pid, tid, sig) < 0)
		return errno == ESRCH ? 1 : -errno;
	for (int ms = 0; ms < ANSWER_WAIT_MS; ms++) {
		if (__atomic_load_n(&bc.answered, __ATOMIC_ACQUIRE) == tid)
			return bc.err;
		if (syscall(SYS_tgkill, pid, tid, 0) < 0 && errno == ESRCH)
			return 1;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	/* It blocks the signal: fail rather than leave it privileged. */
	return -ETIMEDOUT;
}

/* Restricts every thread but the caller; *n counts those that were there
 * to restrict (not those exiting as it walked).  Repeats the
 * walk of /proc/self/task until it finds no thread it has not done, in
 * case one was started meanwhile.  Returns 0 or -errno (*bad_tid set). */
static int restrict_others(uint64_t keep, int last, int *n, long *bad_tid)
{
	long self = syscall(SYS_gettid), done[256];
	pid_t pid = getpid();
	int ndone = 0, alive = 0, sig = SIGRTMIN + 5, err = 0, fresh;
	int listed_self = 0;
	struct sigaction sa = { .sa_handler = on_restrict_signal,
				.sa_flags = SA_RESTART }, old;
	sigfillset(&sa.sa_mask);
	bc.keep = keep;
	bc.last = last;
	if (sigaction(sig, &sa, &old) < 0)
		return -errno;
	do {
		DIR *dir = opendir("/proc/self/task");
		struct dirent *de;
		if (!dir) {
			err = -errno;
			break;
		}
		fresh = 0;
		while (!err && (de = readdir(dir))) {
			long tid = strtol(de->d_name, NULL, 10);
			listed_self |= tid == self;
			int seen = tid <= 0 || tid == self;
			for (int i = 0; !seen && i < ndone; i++)
				seen = done[i] == tid;
			if (seen)
				continue;
			if (ndone == (int)(sizeof(done) / sizeof(done[0]))) {
				err = -E2BIG;
				break;
			}
			fresh = 1;
			done[ndone++] = tid;
			int r = signal_thread(pid, tid, sig);
			if (r < 0) {
				err = r;
				*bad_tid = tid;
			} else if (r == 0) {
				alive++;
			}
		}
		closedir(dir);
	} while (!err && fresh);
	sigaction(sig, &old, NULL);
	/* A /proc of another PID namespace (unshare --pid without a /proc
	 * of its own) lists tids that tgkill does not know: each would pass
	 * for a thread gone, left with its capabilities.  It does not list
	 * this thread's tid either: fail closed. */
	if (!err && !listed_self) {
		err = -ESRCH;
		*bad_tid = self;
	}
	*n = alive;
	return err;
}

/* "cap_a,cap_b" for the caps of mask, or "none". */
static void cap_names(uint64_t mask, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if (mask & BIT(caps[i].cap))
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0,
					      "%s%s", o ? "," : "",
					      caps[i].name);
	if (!o)
		snprintf(buf, len, "none");
}

/* ---- seccomp ------------------------------------------------------------ */

/* Refused with EPERM.  Each is one the daemon, libbpf, libuv, SQLite,
 * zstd and glibc never make on gpurecd's paths. */
static const int refused[] = {
	/* io_uring opens sockets (IORING_OP_SOCKET) past socket(2). */
	__NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
	/* Another process's sockets or memory: CAP_SYS_PTRACE is kept to
	 * read /proc and names behind handles (process_vm_readv), not to
	 * make another process do what this one may not. */
	__NR_pidfd_getfd, __NR_process_vm_writev,
#ifndef GR_SANITIZED
	__NR_ptrace,
#endif
	/* Kernel code and boot. */
	__NR_kexec_load, __NR_kexec_file_load, __NR_init_module,
	__NR_finit_module, __NR_delete_module, __NR_reboot,
	/* Mounts and namespaces: what kept CAP_SYS_ADMIN would allow. */
	__NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot,
	__NR_move_mount, __NR_open_tree, __NR_fsopen, __NR_fsconfig,
	__NR_fsmount, __NR_fspick, __NR_mount_setattr, __NR_unshare,
	__NR_setns,
	/* More of CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH: swap, quotas,
	 * watching the file system, the kernel log, the host's name, and
	 * opening any file by handle (the "shocker" container escape). */
	__NR_swapon, __NR_swapoff, __NR_quotactl, __NR_quotactl_fd,
	__NR_fanotify_init, __NR_syslog, __NR_sethostname,
	__NR_setdomainname, __NR_open_by_handle_at,
	/* Kernel keyrings, and userfaultfd (a staple of kernel exploits). */
	__NR_add_key, __NR_keyctl, __NR_request_key, __NR_userfaultfd,
#ifdef __NR_iopl
	__NR_iopl, __NR_ioperm,
#endif
};
#define NREFUSED (int)(sizeof(refused) / sizeof(refused[0]))

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG0_LO offsetof(struct seccomp_data, args[0])
#else
#define ARG0_LO (offsetof(struct seccomp_data, args[0]) + 4)
#endif

#ifdef __x86_64__
#define NX32 1
#else
#define NX32 0
#endif

/* The program: check the arch, load nr, [x32 check], socket and
 * socketpair to FAMILY, each refused call to REFUSE, else allow; FAMILY:
 * load the family, AF_UNIX to the last allow, else on into REFUSE. */
#define FAMILY (4 + NX32 + 2 + NREFUSED + 1)
#define REFUSE (FAMILY + 2)
#define NINSNS (FAMILY + 4)
/* Conditional jumps are relative and 8 bits wide. */
_Static_assert(REFUSE - 5 <= 255, "seccomp filter too long for jumps");

static void stmt(struct sock_filter *f, int *n, uint16_t code, uint32_t k)
{
	f[(*n)++] = (struct sock_filter)BPF_STMT(code, k);
}

/* if (A op k) goto target; else fall through. */
static void jump(struct sock_filter *f, int *n, uint16_t op, uint32_t k,
		 int target)
{
	f[*n] = (struct sock_filter)BPF_JUMP(BPF_JMP | op | BPF_K, k,
					     (uint8_t)(target - *n - 1), 0);
	(*n)++;
}

static int install_filter(void)
{
	struct sock_filter f[NINSNS];
	int n = 0;

	stmt(f, &n, BPF_LD | BPF_W | BPF_ABS,
	     offsetof(struct seccomp_data, arch));
	jump(f, &n, BPF_JEQ, AUDIT_ARCH_SELF, n + 2);
	stmt(f, &n, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	stmt(f, &n, BPF_LD | BPF_W | BPF_ABS,
	     offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
	jump(f, &n, BPF_JGE, __X32_SYSCALL_BIT, REFUSE);
#endif
	jump(f, &n, BPF_JEQ, __NR_socket, FAMILY);
	jump(f, &n, BPF_JEQ, __NR_socketpair, FAMILY);
	for (int i = 0; i < NREFUSED; i++)
		jump(f, &n, BPF_JEQ, (uint32_t)refused[i], REFUSE);
	stmt(f, &n, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	/* FAMILY: the family is an int; the kernel ignores the upper half
	 * of the register, so the filter does too. */
	stmt(f, &n, BPF_LD | BPF_W | BPF_ABS, ARG0_LO);
	jump(f, &n, BPF_JEQ, AF_UNIX, REFUSE + 1);
	/* REFUSE */
	stmt(f, &n, BPF_RET | BPF_K,
	     SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	stmt(f, &n, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			 SECCOMP_FILTER_FLAG_TSYNC, &prog);
	if (r > 0)
		return -EAGAIN; /* thread r is under another filter chain */
	return r < 0 ? -errno : 0;
}

/* ---- the whole -------------------------------------------------------- */

int gr_sandbox__apply(const struct gr_sandbox_opts *o)
{
	uint64_t want = 0, eff, prm;
	char names[256];
	struct stat st = { 0 };
	int err, nthreads = 0;
	long bad_tid = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		err = -errno;
		o->log("sandbox: no_new_privs: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < NKEPT_ALWAYS; i++)
		want |= BIT(caps[i].cap);
	if (o->data_dir && stat(o->data_dir, &st) == 0 &&
	    st.st_uid != geteuid())
		want |= BIT(CAP_DAC_OVERRIDE) | BIT(CAP_FOWNER) |
			BIT(CAP_CHOWN);
	if ((err = capget_self(&eff, &prm))) {
		o->log("sandbox: capget: %s", strerror(-err));
		return err;
	}
	int last = last_cap(), bounding = !!(eff & BIT(CAP_SETPCAP));
	if ((err = restrict_others(want, last, &nthreads, &bad_tid))) {
		if (bad_tid == syscall(SYS_gettid))
			o->log("sandbox: /proc/self/task does not list this "
			       "thread (%ld): /proc is another PID namespace's, "
			       "so the other threads cannot be told apart",
			       bad_tid);
		else
			o->log("sandbox: cutting the capabilities of thread "
			       "%ld: %s", bad_tid, strerror(-err));
		return err;
	}
	if ((err = restrict_thread(want, last))) {
		o->log("sandbox: cutting capabilities: %s", strerror(-err));
		return err;
	}
	if (capget_self(&eff, &prm) == 0) {
		cap_names(prm, names, sizeof(names));
		o->log("sandbox: no_new_privs; capabilities kept: %s (%d "
		       "thread%s; %s)", names, nthreads + 1,
		       nthreads ? "s" : "",
		       bounding ? "bounding set too" :
		       "bounding set left to the service manager: no "
		       "cap_setpcap");
		if (prm & (BIT(CAP_DAC_OVERRIDE) | BIT(CAP_FOWNER)))
			o->log("sandbox: %s belongs to uid %u, not %u: "
			       "cap_dac_override, cap_fowner and cap_chown kept "
			       "to write there and give it the files", o->data_dir, (unsigned)st.st_uid,
			       (unsigned)geteuid());
	}
	if ((err = install_filter())) {
		o->log("sandbox: seccomp filter: %s", strerror(-err));
		return err;
	}
	o->log("sandbox: seccomp: socket() and socketpair() but AF_UNIX, "
	       "io_uring and %d more calls refused%s", NREFUSED - 3,
#ifdef GR_SANITIZED
	       " (ptrace allowed: sanitizer build)"
#else
	       ""
#endif
	);
	return 0;
}

/* ---- the test hook ------------------------------------------------------ */

void gr_sandbox__selftest(void (*log)(const char *fmt, ...))
{
	/* io_uring_params is 120 bytes; entries first. */
	uint32_t ring[32] = { 0 };
	int sv[2];
	/* Arguments the kernel would reject harmlessly, with another errno
	 * than EPERM, when the filter lets the call through (as root). */
	const struct {
		const char *name;
		long nr, a[6];
	} t[] = {
		{ "socket(AF_INET)", __NR_socket, { AF_INET, SOCK_STREAM } },
		{ "socket(AF_INET6)", __NR_socket, { AF_INET6, SOCK_STREAM } },
		{ "socket(AF_PACKET)", __NR_socket, { AF_PACKET, SOCK_RAW } },
		{ "socket(AF_NETLINK, NETLINK_ROUTE)", __NR_socket,
		  { AF_NETLINK, SOCK_RAW, NETLINK_ROUTE } },
		{ "socketpair(AF_INET)", __NR_socketpair,
		  { AF_INET, SOCK_STREAM, 0, (long)sv } },
		{ "io_uring_setup", __NR_io_uring_setup, { 1, (long)ring } },
		{ "ptrace(PTRACE_ATTACH, 0)", __NR_ptrace, { 16 /* ATTACH */ } },
		{ "pidfd_getfd(-1)", __NR_pidfd_getfd, { -1 } },
		{ "process_vm_writev", __NR_process_vm_writev,
		  { getpid(), 0, 0, 0, 0, -1 } },
		{ "setns(-1)", __NR_setns, { -1 } },
		{ "unshare(-1)", __NR_unshare, { -1 } },
		{ "mount(NULL)", __NR_mount, { 0 } },
		{ "swapon(NULL)", __NR_swapon, { 0 } },
		{ "keyctl(-1)", __NR_keyctl, { -1 } },
		{ "userfaultfd(-1)", __NR_userfaultfd, { -1 } },
		{ "socket(AF_UNIX)", __NR_socket, { AF_UNIX, SOCK_DGRAM } },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const long *a = t[i].a;
		long r = syscall(t[i].nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		int e = errno;
		if (r >= 0) {
			if (t[i].nr != __NR_socketpair && t[i].nr != __NR_ptrace)
				close((int)r);
			log("sandbox selftest: %s allowed", t[i].name);
		} else if (e == EPERM) {
			log("sandbox selftest: %s refused: %s", t[i].name,
			    strerror(e));
		} else {
			log("sandbox selftest: %s passed the filter: %s",
			    t[i].name, strerror(e));
		}
	}
}
