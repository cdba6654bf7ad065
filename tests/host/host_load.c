/* host_load.c - known host-side work done by a process that touched CUDA,
 * for tests/host/run.sh and the live demo (tests/demo/demo.sh).
 *
 * gpurecd traces a process's scheduling and file I/O once it has decoded a
 * CUDA call from it.  This program makes one without nvcc or a GPU: it
 * dlopens the toolkit's libcudart (the file gpurecd attaches at start) and
 * calls cudaMalloc, which fails fast without a driver but is recorded.  It
 * then waits HOST_LOAD_SETTLE_MS (default 500) for gpurecd to decode that
 * call, and does one kind of work whose every event the test knows in
 * advance.  Threads name themselves, so their comm is known too.
 *
 * Usage: host_load [-n] MODE ARGS...
 *   -n                 touch no CUDA and do not wait (an untracked process)
 *   sleep N MS         thread "hl-sleep" sleeps N x MS ms (clock_nanosleep)
 *   wake N MS          thread "hl-read" blocks reading a pipe N times;
 *                      thread "hl-write" writes a byte to it every MS ms
 *   vfork MS           vfork; the child sleeps MS ms and _exits, while the
 *                      parent waits in the kernel (TASK_KILLABLE: state D);
 *                      prints how long vfork took (ns)
 *   contend SECS CPU   two threads "hl-spin", pinned to CPU, spin SECS s
 *   dio FILE N         N direct (O_DIRECT) 1 MiB writes to FILE, 0.1 s
 *                      apart from N direct 1 MiB reads of it
 *   fileio FILE        the file syscalls listed at fileio__run
 *   exit CODE [ARG]... exit(CODE) as soon as the CUDA call returns
 *   pthexit CODE MS    main calls pthread_exit; a thread it left sleeps MS
 *                      ms, then exit(CODE): the process ends then, with
 *                      that status, though its leader went first
 *   mix SECS DIR       all of it at once for SECS s, files in DIR (demo)
 *
 * What the test must know (thread ids, fds, time windows as CLOCK_REALTIME
 * ns) is printed to stdout as "NAME VALUE..." lines once the work is done,
 * so that writing them falls outside the measured work.  Exit status: 0,
 * or 2 with a message on stderr naming what failed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CUDART "/usr/local/cuda/lib64/libcudart.so.13"
#define MIB (1 << 20)

/* die: prints "host_load: " and the message, and exits 2. */
__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt,
								 ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("host_load: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* sleep_ms: sleeps ms milliseconds in clock_nanosleep, resuming after
 * signals, so that each call is exactly one off-CPU interval. */
static void sleep_ms(double ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)((ms - (time_t)(ms / 1000) * 1000.0) *
						 1e6) };
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* name_self: sets the calling thread's comm (prctl, no file I/O). */
static void name_self(const char *name)
{
	int rc = pthread_setname_np(pthread_self(), name);
	if (rc)
		die("pthread_setname_np %s: %s", name, strerror(rc));
}

static void start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int rc = pthread_create(t, NULL, fn, arg);
	if (rc)
		die("pthread_create: %s", strerror(rc));
}

static void join_thread(pthread_t t)
{
	int rc = pthread_join(t, NULL);
	if (rc)
		die("pthread_join: %s", strerror(rc));
}

/* cuda__touch: makes one recorded CUDA call (cudaMalloc of 4 KiB) through
 * the libcudart at $HOST_LOAD_CUDART or the toolkit's.  Its result does not
 * matter: without a GPU it fails (35, no driver) after being made. */
static void cuda__touch(void)
{
	const char *path = getenv("HOST_LOAD_CUDART");
	if (!path || !*path)
		path = DEFAULT_CUDART;
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		die("dlopen %s: %s", path, dlerror());
	int (*cuda_malloc)(void **, size_t);
	*(void **)&cuda_malloc = dlsym(lib, "cudaMalloc");
	if (!cuda_malloc)
		die("dlsym cudaMalloc in %s: %s", path, dlerror());
	void *p = NULL;
	(void)cuda_malloc(&p, 4096);
}

/* settle: gives gpurecd time to decode the CUDA call and track us. */
static void settle(void)
{
	const char *s = getenv("HOST_LOAD_SETTLE_MS");
	sleep_ms(s && *s ? atof(s) : 500);
}

/* ---- sleep: one thread, N sleeps of MS ms --------------------------- */

struct sleeper {
	int n;		 /* sleeps to make; 0 in mix mode: until deadline */
	double ms;	 /* length of each */
	int64_t deadline; /* CLOCK_MONOTONIC ns, mix mode */
	pid_t tid;	 /* the thread's id, for the test */
};

static void *sleeper__run(void *arg)
{
	struct sleeper *s = arg;
	name_self("hl-sleep");
	s->tid = gettid();
	for (int i = 0; s->n ? i < s->n : clock_ns(CLOCK_MONOTONIC) < s->deadline;
	     i++)
		sleep_ms(s->ms);
	return NULL;
}

/* ---- wake: a reader woken by a writer through a pipe ------------------ */

struct pipe_pair {
	int fd[2];	 /* the pipe */
	int n;		 /* bytes passed; 0 in mix mode: until deadline */
	double ms;	 /* the writer's pause before each byte */
	int64_t deadline; /* CLOCK_MONOTONIC ns, mix mode */
	pid_t reader, writer; /* thread ids */
};

static void *reader__run(void *arg)
{
	struct pipe_pair *p = arg;
	char c;
	name_self("hl-read");
	p->reader = gettid();
	for (;;) {
		ssize_t r = read(p->fd[0], &c, 1);
		if (r == 0)
			break; /* the writer closed its end */
		if (r != 1)
			die("read from pipe: %s", r < 0 ? strerror(errno) : "short");
		if (p->n && --p->n == 0)
			break;
	}
	return NULL;
}

static void *writer__run(void *arg)
{
	struct pipe_pair *p = arg;
	int n = p->n;
	name_self("hl-write");
	p->writer = gettid();
	for (int i = 0; n ? i < n : clock_ns(CLOCK_MONOTONIC) < p->deadline; i++) {
		sleep_ms(p->ms);
		if (write(p->fd[1], "x", 1) != 1)
			die("write to pipe: %s", strerror(errno));
	}
	close(p->fd[1]);
	return NULL;
}

static void *pipe_pair__run(void *arg)
{
	struct pipe_pair *p = arg;
	pthread_t r, w;
	if (pipe(p->fd))
		die("pipe: %s", strerror(errno));
	start_thread(&r, reader__run, p);
	start_thread(&w, writer__run, p);
	join_thread(w);
	join_thread(r);
	close(p->fd[0]);
	return NULL;
}

/* ---- vfork: the parent waits for the child in state D ----------------- */

/* vfork__run: returns the child's pid, and in *waited how long vfork took
 * in the parent (CLOCK_BOOTTIME ns, the recorder's clock).  The parent
 * sleeps in wait_for_vfork_done until the child exits, which wakes it.
 * The child makes the nanosleep system call itself: nothing of libc's
 * runs in it but the syscall wrapper. */
static pid_t vfork__run(double ms, int64_t *waited)
{
	int64_t t0 = clock_ns(CLOCK_BOOTTIME);
	pid_t child = vfork();
	if (child < 0)
		die("vfork: %s", strerror(errno));
	if (child == 0) {
		long ns = (long)(ms * 1e6);
		struct timespec ts = { .tv_sec = ns / 1000000000,
				       .tv_nsec = ns % 1000000000 };
		syscall(SYS_nanosleep, &ts, NULL);
		_exit(0);
	}
	*waited = clock_ns(CLOCK_BOOTTIME) - t0;
	int st;
	if (waitpid(child, &st, 0) != child)
		die("waitpid %d: %s", child, strerror(errno));
	return child;
}

/* ---- contend: two threads on one CPU ---------------------------------- */

struct spinner {
	int64_t deadline; /* CLOCK_MONOTONIC ns */
	double on_ms, off_ms; /* mix mode: spin on_ms, sleep off_ms; 0: spin */
	pid_t tid;
	int cpu; /* where it ended */
};

static void *spinner__run(void *arg)
{
	struct spinner *s = arg;
	name_self("hl-spin");
	s->tid = gettid();
	while (clock_ns(CLOCK_MONOTONIC) < s->deadline) {
		if (s->on_ms > 0) {
			int64_t until = clock_ns(CLOCK_MONOTONIC) + (int64_t)(s->on_ms * 1e6);
			while (clock_ns(CLOCK_MONOTONIC) < until)
				;
			sleep_ms(s->off_ms);
		}
	}
	s->cpu = sched_getcpu();
	return NULL;
}

/* pin_self: binds the calling thread (and the threads it creates after) to
 * cpu. */
static void pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity to CPU %d: %s", cpu, strerror(errno));
}

/* ---- dio: direct writes, then direct reads ---------------------------- */

static void *aligned_mib(void)
{
	void *buf;
	int rc = posix_memalign(&buf, 4096, MIB);
	if (rc)
		die("posix_memalign 1 MiB: %s", strerror(rc));
	memset(buf, 0xa5, MIB);
	return buf;
}

static int open_direct(const char *file, int flags)
{
	int fd = open(file, flags | O_DIRECT, 0600);
	if (fd < 0)
		die("open %s with O_DIRECT: %s", file, strerror(errno));
	return fd;
}

static void dio__run(const char *file, int n)
{
	char *buf = aligned_mib();
	int64_t t[4];
	int fd = open_direct(file, O_WRONLY | O_CREAT | O_TRUNC);
	t[0] = clock_ns(CLOCK_REALTIME);
	for (int i = 0; i < n; i++) {
		ssize_t w = write(fd, buf, MIB);
		if (w != MIB)
			die("direct write %d to %s: %s", i, file,
			    w < 0 ? strerror(errno) : "short");
	}
	t[1] = clock_ns(CLOCK_REALTIME);
	if (close(fd))
		die("close %s: %s", file, strerror(errno));
	sleep_ms(100);
	fd = open_direct(file, O_RDONLY);
	t[2] = clock_ns(CLOCK_REALTIME);
	for (int i = 0; i < n; i++) {
		ssize_t r = read(fd, buf, MIB);
		if (r != MIB)
			die("direct read %d of %s: %s", i, file,
			    r < 0 ? strerror(errno) : "short");
	}
	t[3] = clock_ns(CLOCK_REALTIME);
	close(fd);
	free(buf);
	printf("window %lld %lld %lld %lld\n", (long long)t[0], (long long)t[1],
	       (long long)t[2], (long long)t[3]);
}

/* ---- fileio: a fixed sequence of recorded file syscalls --------------- */

static void check_io(const char *what, ssize_t got, ssize_t want)
{
	if (got != want)
		die("%s returned %zd (%s), not %zd", what, got,
		    got < 0 ? strerror(errno) : "", want);
}

/* fileio__run: on FILE, between two 20 ms pauses (the printed window):
 *   fd1 = openat(AT_FDCWD, FILE, O_WRONLY|O_CREAT|O_TRUNC)
 *   write(fd1, 12345 B) pwrite64(fd1, 100 B at 50000) writev(fd1, 300+400 B)
 *   fsync(fd1) fdatasync(fd1) close(fd1)
 *   chdir(dirname FILE); fd2 = open(basename FILE, O_RDONLY) (the open
 *     syscall where the architecture has one, else openat)
 *   read(fd2, 65536) = 50100  read(fd2, 65536) = 0
 *   pread64(fd2, 1000 at 50000) = 100  lseek(0)  readv(fd2, 10+20) = 30
 *   close(fd2)
 *   openat(AT_FDCWD, FILE ".missing", O_RDONLY) = -ENOENT
 * and, when report is set, prints the fds and the window. */
static void fileio__run(const char *file, int report)
{
	static char buf[65536];
	char dir[4096], missing[4200];
	const char *base = strrchr(file, '/');
	if (!base || base == file || (size_t)(base - file) >= sizeof(dir))
		die("fileio wants an absolute path in a directory: %s", file);
	memcpy(dir, file, (size_t)(base - file));
	dir[base - file] = 0;
	base++;
	snprintf(missing, sizeof(missing), "%s.missing", file);
	memset(buf, 'g', sizeof(buf));
	struct iovec wv[2] = { { buf, 300 }, { buf, 400 } };
	struct iovec rv[2] = { { buf, 10 }, { buf + 10, 20 } };

	int64_t t0 = clock_ns(CLOCK_REALTIME);
	sleep_ms(20);
	int fd1 = openat(AT_FDCWD, file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd1 < 0)
		die("openat %s: %s", file, strerror(errno));
	check_io("write", write(fd1, buf, 12345), 12345);
	check_io("pwrite64", pwrite(fd1, buf, 100, 50000), 100);
	check_io("writev", writev(fd1, wv, 2), 700);
	check_io("fsync", fsync(fd1), 0);
	check_io("fdatasync", fdatasync(fd1), 0);
	close(fd1);
	if (chdir(dir))
		die("chdir %s: %s", dir, strerror(errno));
#ifdef SYS_open
	int fd2 = (int)syscall(SYS_open, base, O_RDONLY);
#else
	int fd2 = openat(AT_FDCWD, base, O_RDONLY);
#endif
	if (fd2 < 0)
		die("open %s: %s", base, strerror(errno));
	check_io("read", read(fd2, buf, sizeof(buf)), 50100);
	check_io("read at EOF", read(fd2, buf, sizeof(buf)), 0);
	check_io("pread64", pread(fd2, buf, 1000, 50000), 100);
	check_io("lseek", lseek(fd2, 0, SEEK_SET), 0);
	check_io("readv", readv(fd2, rv, 2), 30);
	close(fd2);
	int fd3 = openat(AT_FDCWD, missing, O_RDONLY);
	if (fd3 >= 0 || errno != ENOENT)
		die("openat %s: want ENOENT, got %d", missing, fd3);
	sleep_ms(20);
	int64_t t1 = clock_ns(CLOCK_REALTIME);
	if (report)
		printf("fds %d %d\nwindow %lld %lld\n", fd1, fd2, (long long)t0,
		       (long long)t1);
}

/* ---- mix: everything at once, for the demo ---------------------------- */

struct io_worker {
	char path[4096];
	int64_t deadline;
	int direct;		/* O_DIRECT 1 MiB blocks, else buffered */
};

/* io_worker__run: rewrites a 64 MiB file in 1 MiB (direct) or 256 KiB
 * (buffered, fdatasync every 4 MiB, then dropped from the page cache and
 * read back) pieces until the deadline. */
static void *io_worker__run(void *arg)
{
	struct io_worker *w = arg;
	char *buf = aligned_mib();
	size_t piece = w->direct ? MIB : MIB / 4;
	name_self(w->direct ? "hl-dio" : "hl-bufio");
	int fd = w->direct ? open_direct(w->path, O_RDWR | O_CREAT | O_TRUNC)
			   : open(w->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("open %s: %s", w->path, strerror(errno));
	off_t off = 0;
	for (int i = 0; clock_ns(CLOCK_MONOTONIC) < w->deadline; i++) {
		check_io("pwrite", pwrite(fd, buf, piece, off), (ssize_t)piece);
		if (w->direct && i % 2)
			check_io("pread", pread(fd, buf, piece, off), (ssize_t)piece);
		off += (off_t)piece;
		if (!w->direct && off % (4 * MIB) == 0) {
			check_io("fdatasync", fdatasync(fd), 0);
			posix_fadvise(fd, off - 4 * MIB, 4 * MIB, POSIX_FADV_DONTNEED);
			check_io("pread", pread(fd, buf, piece, off - 4 * MIB),
				 (ssize_t)piece);
		}
		if (off >= 64 * MIB)
			off = 0;
		sleep_ms(5);
	}
	close(fd);
	unlink(w->path);
	free(buf);
	return NULL;
}

/* mutex holders: two threads take turns holding a lock for 3 ms, so each
 * waits for the other in futex_wait. */
struct locker {
	pthread_mutex_t *mu;
	int64_t deadline;
};

static void *locker__run(void *arg)
{
	struct locker *l = arg;
	name_self("hl-lock");
	while (clock_ns(CLOCK_MONOTONIC) < l->deadline) {
		pthread_mutex_lock(l->mu);
		int64_t until = clock_ns(CLOCK_MONOTONIC) + 3000000;
		while (clock_ns(CLOCK_MONOTONIC) < until)
			;
		pthread_mutex_unlock(l->mu);
		sleep_ms(1);
	}
	return NULL;
}

static void mix__run(double secs, const char *dir)
{
	int64_t end = clock_ns(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct sleeper sl = { .ms = 50, .deadline = end };
	struct pipe_pair pp = { .ms = 10, .deadline = end };
	struct spinner sp[2] = { { end, 20, 10, 0, 0 }, { end, 20, 10, 0, 0 } };
	struct locker lk = { &mu, end };
	struct io_worker io[2];
	pthread_t t[8], pipe_t;
	int nt = 0;

	for (int i = 0; i < 2; i++) {
		io[i].deadline = end;
		io[i].direct = i == 0;
		snprintf(io[i].path, sizeof(io[i].path), "%s/host_load-%s.%d", dir,
			 i ? "buffered" : "direct", getpid());
	}
	start_thread(&t[nt++], sleeper__run, &sl);
	start_thread(&t[nt++], locker__run, &lk);
	start_thread(&t[nt++], locker__run, &lk);
	start_thread(&t[nt++], io_worker__run, &io[0]);
	start_thread(&t[nt++], io_worker__run, &io[1]);
	/* The spinners share the last CPU (inherited affinity). */
	cpu_set_t old;
	sched_getaffinity(0, sizeof(old), &old);
	pin_self((int)sysconf(_SC_NPROCESSORS_ONLN) - 1);
	start_thread(&t[nt++], spinner__run, &sp[0]);
	start_thread(&t[nt++], spinner__run, &sp[1]);
	sched_setaffinity(0, sizeof(old), &old);
	start_thread(&pipe_t, pipe_pair__run, &pp);
	while (nt > 0)
		join_thread(t[--nt]);
	join_thread(pipe_t);
	char path[4200];
	snprintf(path, sizeof(path), "%s/host_load-fileio.%d", dir, getpid());
	fileio__run(path, 0);
	unlink(path);
	printf("mix done: sleeper %d, spinners %d %d\n", sl.tid, sp[0].tid,
	       sp[1].tid);
}

/* pthexit's survivor: outlives the leader, then ends the process. */
static void *late_exit(void *arg)
{
	const int *a = arg;
	usleep((useconds_t)a[1] * 1000);
	exit(a[0]);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: host_load [-n] sleep N MS | wake N MS | vfork MS |\n"
		"       contend SECS CPU | dio FILE N | fileio FILE |\n"
		"       exit CODE [ARG]... | pthexit CODE MS | mix SECS DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int cuda = 1;
	if (argc > 1 && !strcmp(argv[1], "-n")) {
		cuda = 0;
		argc--, argv++;
	}
	if (argc < 3)
		usage();
	const char *mode = argv[1];
	if (cuda)
		cuda__touch();
	if (!strcmp(mode, "exit"))
		exit(atoi(argv[2]));
	if (!strcmp(mode, "pthexit") && argc == 4) {
		static int args[2];
		args[0] = atoi(argv[2]);
		args[1] = atoi(argv[3]);
		pthread_t t;
		if (pthread_create(&t, NULL, late_exit, args))
			die("pthread_create");
		pthread_exit(NULL);
	}
	if (cuda)
		settle();

	if (!strcmp(mode, "sleep") && argc == 4) {
		struct sleeper s = { .n = atoi(argv[2]), .ms = atof(argv[3]) };
		pthread_t t;
		start_thread(&t, sleeper__run, &s);
		join_thread(t);
		printf("sleeper %d\n", s.tid);
	} else if (!strcmp(mode, "wake") && argc == 4) {
		struct pipe_pair p = { .n = atoi(argv[2]), .ms = atof(argv[3]) };
		pipe_pair__run(&p);
		printf("reader %d\nwriter %d\n", p.reader, p.writer);
	} else if (!strcmp(mode, "vfork") && argc == 3) {
		int64_t waited;
		pid_t child = vfork__run(atof(argv[2]), &waited);
		printf("child %d\nwaited %lld\n", child, (long long)waited);
	} else if (!strcmp(mode, "contend") && argc == 4) {
		int64_t end = clock_ns(CLOCK_MONOTONIC) + (int64_t)(atof(argv[2]) * 1e9);
		struct spinner s[2] = { { .deadline = end }, { .deadline = end } };
		pthread_t t[2];
		pin_self(atoi(argv[3]));
		for (int i = 0; i < 2; i++)
			start_thread(&t[i], spinner__run, &s[i]);
		for (int i = 0; i < 2; i++)
			join_thread(t[i]);
		for (int i = 0; i < 2; i++)
			printf("spinner %d %d\n", s[i].tid, s[i].cpu);
	} else if (!strcmp(mode, "dio") && argc == 4) {
		dio__run(argv[2], atoi(argv[3]));
	} else if (!strcmp(mode, "fileio") && argc == 3) {
		fileio__run(argv[2], 1);
	} else if (!strcmp(mode, "mix") && argc == 4) {
		mix__run(atof(argv[2]), argv[3]);
	} else {
		usage();
	}
	return fflush(stdout) ? 2 : 0;
}
