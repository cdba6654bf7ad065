/* sandbox_exiting.c - the sandbox applied while a thread is still exiting.
 *
 * gr_sandbox__apply() signals every thread listed in /proc/self/task to
 * cut its capabilities and waits for each to answer.  A thread that was
 * just joined can still be listed for a while: pthread_join returns when
 * the kernel clears the thread's tid, which do_exit does before it closes
 * the thread's files and unlists it.  Such a thread never answers a
 * signal.  The sandbox must neither count it nor wait for it: gpurecd
 * joins its background detach threads just before sandboxing, and a CI
 * run once logged "3 threads" for its 2; with the wait, the same race
 * stops gpurecd ("cannot sandbox").
 *
 * The exiting thread is made to last: it owns a file table of its own
 * (unshare(CLONE_FILES)), so its exit closes a TCP socket whose peer
 * never reads, with SO_LINGER set: the close waits in the thread's exit.
 * Whether the thread is still listed when the walk reaches it is up to
 * the scheduler; tests/host/sandbox.sh runs this 20 times.
 *
 * Prints the apply's result and the thread count it logged, e.g.
 * "0 (1 thread;"; exits 0 when that is the answer.
 *
 * With --live, a second thread stays alive (blocked) beside the exiting
 * one: "0 (2 threads;".  Under `unshare --pid --fork` without a /proc of
 * its own, /proc lists the outer namespace's tids, which tgkill here does
 * not know: the sandbox must fail rather than take the live thread for
 * one gone and leave it its capabilities. */
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "recorder/sandbox.h"

static char counted[64] = "(no thread line)";
static int listener;
static int live_fd[2];

static void *live(void *arg)
{
	char c;
	(void)arg;
	while (read(live_fd[0], &c, 1) < 0)
		;
	return NULL;
}

static void log_line(const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	const char *p = strstr(b, "capabilities kept:");
	if (p && (p = strchr(p, '(')))
		snprintf(counted, sizeof(counted), "%.*s",
			 (int)strcspn(p, ";") + 1, p);
	else if (strstr(b, "sandbox: seccomp:") != b)
		fprintf(stderr, "%s\n", b); /* what failed */
}

static void *lingering_exit(void *arg)
{
	static char buf[1 << 16];
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	(void)arg;
	if (unshare(CLONE_FILES) < 0)
		return NULL;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || getsockname(listener, (struct sockaddr *)&sa, &len) < 0 ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return NULL;
	fcntl(s, F_SETFL, O_NONBLOCK);
	while (write(s, buf, sizeof(buf)) > 0)
		;
	struct linger l = { .l_onoff = 1, .l_linger = 2 };
	setsockopt(s, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	fcntl(s, F_SETFL, 0);
	return NULL; /* the thread's exit closes s */
}

int main(int argc, char **argv)
{
	int with_live = argc > 1 && !strcmp(argv[1], "--live");
	pthread_t lt;
	if (with_live && (pipe(live_fd) < 0 ||
			  pthread_create(&lt, NULL, live, NULL))) {
		fprintf(stderr, "sandbox_exiting: live thread failed\n");
		return 2;
	}
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	listener = socket(AF_INET, SOCK_STREAM, 0);
	if (listener < 0 || bind(listener, (struct sockaddr *)&sa,
				 sizeof(sa)) < 0 || listen(listener, 1) < 0) {
		perror("sandbox_exiting: loopback listener");
		return 2;
	}
	pthread_t th;
	if (pthread_create(&th, NULL, lingering_exit, NULL) ||
	    pthread_join(th, NULL)) {
		fprintf(stderr, "sandbox_exiting: thread failed\n");
		return 2;
	}
	struct gr_sandbox_opts o = { .log = log_line, .data_dir = "/" };
	int r = gr_sandbox__apply(&o);
	printf("%d %s\n", r, counted);
	return r == 0 && !strcmp(counted, with_live ? "(2 threads;" :
				 "(1 thread;") ? 0 : 1;
}
