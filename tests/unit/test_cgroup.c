/* test_cgroup.c - container ids and pod uids from cgroup paths, a live
 * process's cgroup path, and cgroup v2 ids resolved to paths.
 *
 * The path cases are written out by hand from what the kubelet (both
 * cgroup drivers), containerd, CRI-O, docker and podman create.  The id
 * cache is tested against a real cgroup made for the run in the cgroup2
 * mount, which needs root: without it, or without cgroup2, the test says
 * so and passes, except under CI=true, where it fails.
 */
#include "tests/unit/test.h"
#include "recorder/cgroup.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define UID "1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901"
#define UID_ "1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901"

struct pcase {
	const char *path, *id, *pod;
};

/* Runs each case; returns the number that failed, after naming them. */
static int run_cases(const struct pcase *v, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		char id[65] = "junk", pod[37] = "junk";
		int rc = gr_cgroup__parse(v[i].path, id, pod);

		if (rc != 0 || strcmp(id, v[i].id) != 0 ||
		    strcmp(pod, v[i].pod) != 0) {
			fprintf(stderr, "parse \"%s\" -> %d \"%s\" \"%s\", "
				"want \"%s\" \"%s\"\n", v[i].path, rc, id, pod,
				v[i].id, v[i].pod);
			bad++;
		}
	}
	return bad;
}

TEST(parse_kubernetes)
{
	static const struct pcase v[] = {
		/* systemd driver, each QoS class. */
		{ "/kubepods.slice/kubepods-burstable.slice/"
		  "kubepods-burstable-pod" UID_ ".slice/"
		  "cri-containerd-" HEX ".scope", HEX, UID },
		{ "/kubepods.slice/kubepods-pod" UID_ ".slice/"
		  "cri-containerd-" HEX ".scope", HEX, UID },
		{ "/kubepods.slice/kubepods-besteffort.slice/"
		  "kubepods-besteffort-pod" UID_ ".slice/crio-" HEX ".scope",
		  HEX, UID },
		{ "/kubepods.slice/kubepods-besteffort.slice/"
		  "kubepods-besteffort-pod" UID_ ".slice/"
		  "crio-conmon-" HEX ".scope", "", UID },
		{ "/kubepods.slice/kubepods-besteffort.slice/"
		  "kubepods-besteffort-pod" UID_ ".slice", "", UID },
		{ "/kubepods.slice/kubepods-burstable.slice/"
		  "kubepods-burstable-pod" UID_ ".slice/"
		  "docker-" HEX ".scope", HEX, UID },
		/* A kubelet whose cgroup root is a slice of its own. */
		{ "/kubelet.slice/kubelet-kubepods.slice/"
		  "kubelet-kubepods-burstable.slice/"
		  "kubelet-kubepods-burstable-pod" UID_ ".slice/"
		  "cri-containerd-" HEX ".scope", HEX, UID },
		/* A process in a sub-cgroup of its container. */
		{ "/kubepods.slice/kubepods-pod" UID_ ".slice/"
		  "cri-containerd-" HEX ".scope/init", HEX, UID },
		/* cgroupfs driver. */
		{ "/kubepods/burstable/pod" UID "/" HEX, HEX, UID },
		{ "/kubepods/besteffort/pod" UID "/" HEX, HEX, UID },
		{ "/kubepods/pod" UID "/" HEX, HEX, UID },
		{ "/kubepods/pod" UID, "", UID },
		/* Nested: the last match wins. */
		{ "/kubepods/pod" UID "/" HEX "/docker/" HEX2, HEX2, UID },
		{ "/system.slice/docker-" HEX ".scope/kubepods/pod"
		  "0a0b0c0d-0e0f-1011-1213-141516171819/" HEX2, HEX2,
		  "0a0b0c0d-0e0f-1011-1213-141516171819" },
	};

	CHECK_EQ_INT(run_cases(v, sizeof(v) / sizeof(v[0])), 0);
}

TEST(parse_runtimes)
{
	static const struct pcase v[] = {
		{ "/system.slice/docker-" HEX ".scope", HEX, "" },
		{ "/system.slice/containerd-" HEX ".scope", HEX, "" },
		{ "/machine.slice/libpod-" HEX ".scope", HEX, "" },
		{ "/machine.slice/libpod-" HEX ".scope/container", HEX, "" },
		{ "/machine.slice/libpod-conmon-" HEX ".scope", "", "" },
		{ "/system.slice/crio-" HEX ".scope", HEX, "" },
		{ "/system.slice/crio-conmon-" HEX ".scope", "", "" },
		{ "/docker/" HEX, HEX, "" },
		{ "/docker/" HEX "/", HEX, "" },
		{ "//docker//" HEX, HEX, "" },
		{ "/user.slice/user-1000.slice/user@1000.service/user.slice/"
		  "libpod-" HEX ".scope", HEX, "" },
	};

	CHECK_EQ_INT(run_cases(v, sizeof(v) / sizeof(v[0])), 0);
}

TEST(parse_plain_hosts)
{
	static const struct pcase v[] = {
		{ "/user.slice/user-0.slice/session-3.scope", "", "" },
		{ "/system.slice/gpurecd.service", "", "" },
		{ "/system.slice/docker.service", "", "" },
		{ "/system.slice/containerd.service", "", "" },
		{ "/kubepods.slice", "", "" },
		{ "/kubepods.slice/kubepods-burstable.slice", "", "" },
		{ "/kubepods/burstable", "", "" },
		{ "/init.scope", "", "" },
		{ "/", "", "" },
		{ "", "", "" },
	};
	char id[65] = "junk", pod[37] = "junk";

	CHECK_EQ_INT(run_cases(v, sizeof(v) / sizeof(v[0])), 0);
	CHECK_EQ_INT(gr_cgroup__parse(NULL, id, pod), 0);
	CHECK_EQ_STR(id, "");
	CHECK_EQ_STR(pod, "");
}

TEST(parse_malformed)
{
	/* HEX less its last digit, and HEX with one digit upper-cased. */
#define SHORT "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
#define UPPER "0123456789abcdef0123456789abcdef0123456789Abcdef0123456789abcdef"
	static const struct pcase v[] = {
		/* Ids: short, long, upper case, not hex, trailing garbage. */
		{ "/docker/" SHORT, "", "" },
		{ "/docker/" HEX "0", "", "" },
		{ "/docker/" UPPER, "", "" },
		{ "/docker/" SHORT "g", "", "" },
		{ "/docker/" HEX ".scope", "", "" },
		{ "/system.slice/docker-" SHORT ".scope", "", "" },
		{ "/system.slice/docker-" UPPER ".scope", "", "" },
		{ "/system.slice/docker-" HEX "0.scope", "", "" },
		{ "/system.slice/docker-" HEX ".scopex", "", "" },
		{ "/system.slice/docker-" HEX ".service", "", "" },
		{ "/system.slice/docker-" HEX, "", "" },
		{ "/system.slice/dockerd-" HEX ".scope", "", "" },
		{ "/system.slice/x-docker-" HEX ".scope", "", "" },
		{ "/system.slice/cri-containerd" HEX ".scope", "", "" },
		{ "/system.slice/crio-conmon-" SHORT ".scope", "", "" },
		/* Pod uids: short, long, upper case, wrong separators, garbage
		 * after, an unknown QoS class, the wrong driver's spelling. */
		{ "/kubepods.slice/kubepods-pod1b2c3d4e_5f60_7182_93a4_"
		  "b5c6d7e8f90.slice", "", "" },
		{ "/kubepods.slice/kubepods-pod" UID_ "0.slice", "", "" },
		{ "/kubepods.slice/kubepods-pod1B2C3D4E_5f60_7182_93a4_"
		  "b5c6d7e8f901.slice", "", "" },
		{ "/kubepods.slice/kubepods-pod1b2c3d4e5_f60_7182_93a4_"
		  "b5c6d7e8f901.slice", "", "" },
		{ "/kubepods.slice/kubepods-pod" UID_ ".slicex", "", "" },
		{ "/kubepods.slice/kubepods-pod" UID_ "x.slice", "", "" },
		{ "/kubepods.slice/kubepods-pod" UID_, "", "" },
		{ "/kubepods.slice/kubepods-guaranteed-pod" UID_ ".slice",
		  "", "" },
		{ "/kubepods.slice/xkubepods-pod" UID_ ".slice", "", "" },
		{ "/kubepods.slice/kubepods-pod" UID ".slice", "", "" },
		{ "/kubepods/pod" UID_ "/" HEX, HEX, "" },
		{ "/kubepods/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f90/" HEX,
		  HEX, "" },
		{ "/kubepods/pod" UID "x/" HEX, HEX, "" },
		{ "/kubepods/xpod" UID "/" HEX, HEX, "" },
		{ "/kubepods/pod" UID "/" SHORT, "", UID },
	};

	CHECK_EQ_INT(run_cases(v, sizeof(v) / sizeof(v[0])), 0);
#undef SHORT
#undef UPPER
}

/* The cgroup path /proc/self/cgroup gives, chosen here independently of
 * cgroup.c: v2 unless it is "/", then name=systemd, then any v1. */
static int self_cgroup(char *out, size_t len)
{
	char line[PATH_MAX + 64], v2[PATH_MAX] = "", sysd[PATH_MAX] = "";
	char v1[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*a = '\0';
		*b = '\0';
		if (strcmp(line, "0") == 0 && a[1] == '\0')
			snprintf(v2, sizeof(v2), "%s", b + 1);
		else if (strcmp(b + 1, "/") == 0)
			continue;
		else if (strstr(a + 1, "name=systemd") && !sysd[0])
			snprintf(sysd, sizeof(sysd), "%s", b + 1);
		else if (!v1[0])
			snprintf(v1, sizeof(v1), "%s", b + 1);
	}
	fclose(f);
	snprintf(out, len, "%s", v2[0] && strcmp(v2, "/") != 0 ? v2 :
		 sysd[0] ? sysd : v1[0] ? v1 : "/");
	return 0;
}

TEST(of_pid)
{
	char got[PATH_MAX], want[PATH_MAX], tiny[2];

	CHECK_EQ_INT(gr_cgroup__of_pid(getpid(), got, sizeof(got)), 0);
	CHECK(got[0] == '/');
	CHECK_EQ_INT(self_cgroup(want, sizeof(want)), 0);
	CHECK_EQ_STR(got, want);
	printf("     (this process: %s)\n", got);
	if (strlen(got) >= sizeof(tiny))
		CHECK_EQ_INT(gr_cgroup__of_pid(getpid(), tiny, sizeof(tiny)),
			     -ENAMETOOLONG);
	CHECK_EQ_INT(gr_cgroup__of_pid(-1, got, sizeof(got)), -ENOENT);
	CHECK_EQ_INT(gr_cgroup__of_pid(INT_MAX, got, sizeof(got)), -ENOENT);
}

/* Finds the cgroup2 mount point from /proc/self/mounts, independently of
 * cgroup.c.  Returns 0 or -1 for none. */
static int cgroup2_mount(char *out, size_t len)
{
	char dev[256], dir[256], type[64];
	FILE *f = fopen("/proc/self/mounts", "r");
	int found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%255s %255s %63s %*[^\n]", dev, dir, type) == 3) {
		if (strcmp(type, "cgroup2") == 0) {
			snprintf(out, len, "%s", dir);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static double secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Like CHECK, but for a helper that returns int: returns the line. */
#define EXPECT(cond)                                                       \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: EXPECT failed: %s\n",      \
				__FILE__, __LINE__, #cond);                \
			return __LINE__;                                   \
		}                                                          \
	} while (0)

/* Checks the cache against top (the mount's mnt/gr-test-PID) and pod (a
 * cgroup below it, removed after the first lookup).  Returns 0 or the line
 * that failed; the caller removes what is left. */
static int ids_check(const char *mnt, const char *top, const char *pod,
		     const char *late)
{
	char want_top[32], want_pod[128], got[PATH_MAX];
	struct gr_cgroups *c;
	struct stat st;
	uint64_t root_id, top_id, pod_id;
	double t0;
	int rc;

	EXPECT(stat(mnt, &st) == 0);
	root_id = (uint64_t)st.st_ino;
	EXPECT(stat(top, &st) == 0);
	top_id = (uint64_t)st.st_ino;
	EXPECT(stat(pod, &st) == 0);
	pod_id = (uint64_t)st.st_ino;
	snprintf(want_top, sizeof(want_top), "/gr-test-%d", (int)getpid());
	snprintf(want_pod, sizeof(want_pod), "%s/kubepods-pod%s.slice",
		 want_top, UID_);

	c = gr_cgroups__new();
	EXPECT(c != NULL);
	rc = gr_cgroups__path(c, pod_id, got, sizeof(got));
	t0 = secs();
	if (rc != 0 || strcmp(got, want_pod) != 0) {
		fprintf(stderr, "id %" PRIu64 " -> %d \"%s\", want \"%s\"\n",
			pod_id, rc, rc ? "" : got, want_pod);
		gr_cgroups__free(c);
		return __LINE__;
	}
	/* A removed cgroup stays in the cache: its processes are gone too. */
	rc = rmdir(pod) == 0 &&
	     gr_cgroups__path(c, pod_id, got, sizeof(got)) == 0 &&
	     strcmp(got, want_pod) == 0;
	rc = rc && gr_cgroups__path(c, top_id, got, sizeof(got)) == 0 &&
	     strcmp(got, want_top) == 0;
	rc = rc && gr_cgroups__path(c, root_id, got, sizeof(got)) == 0 &&
	     strcmp(got, "/") == 0;
	rc = rc && gr_cgroups__path(c, pod_id, got, 10) == -ENAMETOOLONG;
	rc = rc && gr_cgroups__path(c, UINT64_MAX - 7, got, sizeof(got)) ==
		   -ENOENT;
	/* A cgroup made after the last walk has a higher id: found at once,
	 * not a second later (a pod's short-lived process must be named).
	 * An id that missed does not walk again within the second; checked
	 * only while well inside that second, so as not to flake. */
	if (rc && mkdir(late, 0755) == 0) {
		uint32_t walks;

		rc = stat(late, &st) == 0 &&
		     gr_cgroups__path(c, (uint64_t)st.st_ino, got,
				      sizeof(got)) == 0 &&
		     strstr(got, "/late") != NULL;
		t0 = secs();
		walks = gr_cgroups__walks(c);
		if (rc && gr_cgroups__path(c, UINT64_MAX - 7, got,
					   sizeof(got)) == -ENOENT &&
		    secs() - t0 < 0.5)
			rc = gr_cgroups__walks(c) == walks;
		rmdir(late);
	}
	gr_cgroups__free(c);
	EXPECT(rc);
	return 0;
}

TEST(ids)
{
	char mnt[256], top[512], pod[1024], late[1024];
	const char *ci = getenv("CI");
	int line;

	gr_cgroups__free(NULL);
	if (geteuid() != 0 || cgroup2_mount(mnt, sizeof(mnt)) != 0) {
		printf("     note: ids needs root and a cgroup2 mount "
		       "(uid %d)%s\n", (int)geteuid(),
		       ci && strcmp(ci, "true") == 0 ? ": failing under CI" :
		       ", skipped");
		CHECK(!ci || strcmp(ci, "true") != 0);
		return;
	}
	snprintf(top, sizeof(top), "%s/gr-test-%d", mnt, (int)getpid());
	snprintf(pod, sizeof(pod), "%s/kubepods-pod%s.slice", top, UID_);
	snprintf(late, sizeof(late), "%s/late", top);
	if (mkdir(top, 0755) != 0 || mkdir(pod, 0755) != 0) {
		fprintf(stderr, "mkdir under %s: %s\n", mnt, strerror(errno));
		rmdir(top);
		CHECK(0);
	}
	line = ids_check(mnt, top, pod, late);
	rmdir(pod);
	rmdir(top);
	CHECK_EQ_INT(line, 0);
}

TEST(unknown_id)
{
	struct gr_cgroups *c = gr_cgroups__new();
	char got[PATH_MAX];

	if (!c) {
		CHECK_EQ_INT(errno, ENOENT);
		printf("     note: no cgroup2 mount\n");
		return;
	}
	CHECK_EQ_INT(gr_cgroups__path(c, UINT64_MAX - 7, got, sizeof(got)),
		     -ENOENT);
	CHECK_EQ_INT(gr_cgroups__path(c, 0, got, sizeof(got)), -ENOENT);
	CHECK_EQ_INT(gr_cgroups__path(NULL, 1, got, sizeof(got)), -ENOENT);
	gr_cgroups__free(c);
}

TEST_MAIN(
	TEST_ENTRY(parse_kubernetes)
	TEST_ENTRY(parse_runtimes)
	TEST_ENTRY(parse_plain_hosts)
	TEST_ENTRY(parse_malformed)
	TEST_ENTRY(of_pid)
	TEST_ENTRY(ids)
	TEST_ENTRY(unknown_id)
)
