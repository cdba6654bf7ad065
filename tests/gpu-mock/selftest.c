/* selftest.c - the mock NVML (tests/gpu-mock/libnvidia-ml.c), dlopened
 * as gpurecd does, against a script: every value exactly, the
 * NOT_SUPPORTED cases, events once each and across threads, a lost
 * device, `fail`, reference counting, the call log and the syntax
 * errors.  Root-free; runs with `make unit`.
 *
 * The library: $GR_MOCK_NVML_LIB, else libnvidia-ml.so.1 beside this
 * program.
 */
#include "tests/unit/test.h"
#include "recorder/gpu/nvml.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

/* The entry points, typed by nvml.h's X-macro. */
#define PTR(ret, name, args) ret(*name) args;
static struct {
	GR_NVML_FNS(PTR)
} N;
#undef PTR

static void *lib_handle;
static char tmpdir[] = "/tmp/gr-nvml-selftest.XXXXXX";
static char script_path[PATH_MAX], log_path[PATH_MAX];
static int missing_symbols;

static void cleanup(void)
{
	if (*script_path) {
		unlink(script_path);
		unlink(log_path);
		rmdir(tmpdir);
	}
}

/* dlopen and dlsym once; 0 when the library or a symbol is missing. */
static int lib(void)
{
	if (lib_handle)
		return !missing_symbols;
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 0;
	}
	snprintf(script_path, sizeof(script_path), "%s/script", tmpdir);
	snprintf(log_path, sizeof(log_path), "%s/log", tmpdir);
	atexit(cleanup);
	/* Read at the library's first call. */
	setenv("GR_MOCK_NVML_LOG", log_path, 1);

	char path[PATH_MAX], exe[PATH_MAX];
	const char *env = getenv("GR_MOCK_NVML_LIB");
	if (env) {
		snprintf(path, sizeof(path), "%s", env);
	} else {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return 0;
		exe[n] = 0;
		snprintf(path, sizeof(path), "%s/libnvidia-ml.so.1",
			 dirname(exe));
	}
	lib_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib_handle) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 0;
	}
#define SYM(ret, name, args)                                                  \
	if (!(*(void **)&N.name = dlsym(lib_handle, #name))) {                \
		fprintf(stderr, "missing: %s\n", #name);                     \
		missing_symbols = 1;                                          \
	}
	GR_NVML_FNS(SYM)
#undef SYM
	return !missing_symbols;
}

/* Writes @text as the script and names it in $GR_MOCK_NVML. */
static int script(const char *text)
{
	FILE *f = fopen(script_path, "w");
	if (!f)
		return 0;
	fputs(text, f);
	fclose(f);
	setenv("GR_MOCK_NVML", script_path, 1);
	return 1;
}

static const char SCRIPT[] =
	"# two H100s; gpu 1 is lost at step 3\n"
	"driver 550.54.15\n"
	"\n"
	"gpu 0 uuid=GPU-0c8b7a1e-2f3d-4e5f-8a9b-0c1d2e3f4a5b "
	"pci=00000000:3B:00.0 name=\"NVIDIA H100 80GB HBM3\" "
	"mem_total=85899345920 power_limit=700000 nvlinks=2\n"
	"gpu 1 uuid=GPU-1 pci=00000001:86:1f.7 name=\"NVIDIA H100\" "
	"mem_total=1000 nvlinks=0   # no power limit\n"
	"step 0 gpu 0 util=10 memutil=5 sm=1980 memclk=2619 power=100000 "
	"temp=40 used=1073741824 throttle=0 tx=1000 rx=2000 replay=0 sbe=0 "
	"dbe=0 nvcrc_flit=0 persist=1 remap_corr=0 remap_unc=0 pending=0 "
	"proc=1234:1048576:50:20 proc=5678:na:7:3\n"
	"step 1 gpu 0 util=50 power=300000 sm=1755 temp=55\n"
	"step 2 gpu 0 util=99 memutil=60 power=690000 sm=1410 "
	"throttle=0x4 temp=70 nvcrc_flit=3 replay=2\n"
	"step 3 gpu 0 util=80 power=500000 throttle=0 dbe=1 used=2147483648 "
	"remap_unc=1 pending=1 procs=none\n"
	"step 1 gpu 0 temp=56   # a later line for the same step wins\n"
	"step 0 gpu 1 util=1 power=60000\n"
	"step 2 gpu 1 util=2\n"
	"event 1 gpu 0 xid xid=79   # gpu 0 is not registered for xids\n"
	"event 2 gpu 0 clock\n"
	"event 3 gpu 0 dbe\n"
	"event 3 gpu 0 sbe\n"
	"event 0 gpu 1 xid xid=48\n"
	"lost 3 gpu 1\n"
	"fail nvmlDeviceGetCurrentClocksEventReasons 13\n"
	"fail nvmlDeviceGetComputeRunningProcesses_v3 13\n";

static nvmlDevice_t h0, h1;

/* Loads SCRIPT afresh (a test that failed midway may have left NVML
 * initialized). */
static int start(void)
{
	if (!lib())
		return 0;
	while (N.nvmlShutdown() == NVML_SUCCESS)
		;
	return script(SCRIPT) && N.nvmlInit_v2() == NVML_SUCCESS &&
	       N.nvmlDeviceGetHandleByIndex_v2(0, &h0) == NVML_SUCCESS &&
	       N.nvmlDeviceGetHandleByIndex_v2(1, &h1) == NVML_SUCCESS;
}

TEST(symbols)
{
	CHECK(lib());
	/* No more than nvml.h's: each exported name is one of them. */
	CHECK(dlsym(lib_handle, "nvmlDeviceGetFanSpeed") == NULL);
}

TEST(no_script)
{
	unsigned int n;
	CHECK(lib());
	unsetenv("GR_MOCK_NVML");
	CHECK_EQ_INT(N.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	CHECK_EQ_INT(N.nvmlInit(), NVML_ERROR_DRIVER_NOT_LOADED);
	setenv("GR_MOCK_NVML", "/nonexistent/script", 1);
	CHECK_EQ_INT(N.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	CHECK_EQ_INT(N.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

TEST(refcount)
{
	unsigned int n = 0;
	CHECK(start());
	CHECK_EQ_INT(N.nvmlInit(), NVML_SUCCESS);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_SUCCESS);
	CHECK_EQ_INT(N.nvmlDeviceGetCount(&n), NVML_SUCCESS);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_SUCCESS);
	CHECK_EQ_INT(N.nvmlDeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
	CHECK_EQ_INT(N.nvmlDeviceGetUtilizationRates(h0, &(nvmlUtilization_t){0}),
		     NVML_ERROR_UNINITIALIZED);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

TEST(error_strings)
{
	CHECK(lib());
	CHECK_EQ_STR(N.nvmlErrorString(NVML_SUCCESS), "Success");
	CHECK_EQ_STR(N.nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
	CHECK_EQ_STR(N.nvmlErrorString(NVML_ERROR_NOT_SUPPORTED),
		     "Not Supported");
	CHECK_EQ_STR(N.nvmlErrorString(NVML_ERROR_FUNCTION_NOT_FOUND),
		     "Function Not Found");
	CHECK_EQ_STR(N.nvmlErrorString(NVML_ERROR_TIMEOUT), "Timeout");
	CHECK_EQ_STR(N.nvmlErrorString((nvmlReturn_t)12345), "Unknown Error");
}

TEST(static_info)
{
	char buf[128];
	unsigned int u;
	nvmlPciInfo_t pci;
	nvmlMemory_t m;
	nvmlEnableState_t st;
	unsigned long long ull;
	nvmlDevice_t h;

	CHECK(start());
	CHECK_EQ_INT(N.nvmlSystemGetDriverVersion(buf, sizeof(buf)),
		     NVML_SUCCESS);
	CHECK_EQ_STR(buf, "550.54.15");
	CHECK_EQ_INT(N.nvmlSystemGetDriverVersion(buf, 9),
		     NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK_EQ_INT(N.nvmlDeviceGetCount_v2(&u), NVML_SUCCESS);
	CHECK_EQ_INT(u, 2);
	CHECK_EQ_INT(N.nvmlDeviceGetHandleByIndex(2, &h),
		     NVML_ERROR_INVALID_ARGUMENT);
	CHECK_EQ_INT(N.nvmlDeviceGetHandleByIndex(1, &h), NVML_SUCCESS);
	CHECK(h == h1 && h0 != h1);

	CHECK_EQ_INT(N.nvmlDeviceGetName(h0, buf, sizeof(buf)), NVML_SUCCESS);
	CHECK_EQ_STR(buf, "NVIDIA H100 80GB HBM3");
	CHECK_EQ_INT(N.nvmlDeviceGetName(h0, buf, 21),
		     NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK_EQ_INT(N.nvmlDeviceGetName(h1, buf, sizeof(buf)), NVML_SUCCESS);
	CHECK_EQ_STR(buf, "NVIDIA H100");
	CHECK_EQ_INT(N.nvmlDeviceGetUUID(h0, buf, sizeof(buf)), NVML_SUCCESS);
	CHECK_EQ_STR(buf, "GPU-0c8b7a1e-2f3d-4e5f-8a9b-0c1d2e3f4a5b");

	CHECK_EQ_INT(N.nvmlDeviceGetPciInfo_v3(h0, &pci), NVML_SUCCESS);
	CHECK_EQ_STR(pci.busId, "00000000:3B:00.0");
	CHECK_EQ_STR(pci.busIdLegacy, "0000:3B:00.0");
	CHECK_EQ_INT(pci.domain, 0);
	CHECK_EQ_INT(pci.bus, 0x3b);
	CHECK_EQ_INT(pci.device, 0);
	CHECK_EQ_INT(N.nvmlDeviceGetPciInfo_v2(h1, &pci), NVML_SUCCESS);
	CHECK_EQ_STR(pci.busId, "00000001:86:1f.7");
	CHECK_EQ_STR(pci.busIdLegacy, "0001:86:1F.7");
	CHECK_EQ_INT(pci.domain, 1);
	CHECK_EQ_INT(pci.bus, 0x86);
	CHECK_EQ_INT(pci.device, 0x1f);

	CHECK_EQ_INT(N.nvmlDeviceGetEnforcedPowerLimit(h0, &u), NVML_SUCCESS);
	CHECK_EQ_INT(u, 700000);
	CHECK_EQ_INT(N.nvmlDeviceGetEnforcedPowerLimit(h1, &u),
		     NVML_ERROR_NOT_SUPPORTED);
	/* gpu 1: total given, used never: all free. */
	CHECK_EQ_INT(N.nvmlDeviceGetMemoryInfo(h1, &m), NVML_SUCCESS);
	CHECK(m.total == 1000 && m.used == 0 && m.free == 1000);

	CHECK_EQ_INT(N.nvmlDeviceGetPersistenceMode(h0, &st), NVML_SUCCESS);
	CHECK_EQ_INT(st, NVML_FEATURE_ENABLED);
	CHECK_EQ_INT(N.nvmlDeviceGetPersistenceMode(h1, &st),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceGetRetiredPagesPendingStatus(h0, &st),
		     NVML_ERROR_NOT_SUPPORTED);

	/* NVLink: gpu 0 has links 0 and 1; gpu 1 none. */
	for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		st = NVML_FEATURE_DISABLED;
		CHECK_EQ_INT(N.nvmlDeviceGetNvLinkState(h0, l, &st),
			     l < 2 ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED);
		CHECK(l >= 2 || st == NVML_FEATURE_ENABLED);
		CHECK_EQ_INT(N.nvmlDeviceGetNvLinkState(h1, l, &st),
			     NVML_ERROR_NOT_SUPPORTED);
		CHECK_EQ_INT(N.nvmlDeviceGetNvLinkErrorCounter(
				     h1, l, NVML_NVLINK_ERROR_DL_CRC_FLIT, &ull),
			     NVML_ERROR_NOT_SUPPORTED);
	}
	CHECK_EQ_INT(N.nvmlDeviceGetNvLinkState(h0, NVML_NVLINK_MAX_LINKS, &st),
		     NVML_ERROR_INVALID_ARGUMENT);
	/* Keys gpu 0 never got. */
	CHECK_EQ_INT(N.nvmlDeviceGetNvLinkErrorCounter(
			     h0, 0, NVML_NVLINK_ERROR_DL_REPLAY, &ull),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceGetTotalEccErrors(h1,
			     NVML_MEMORY_ERROR_TYPE_CORRECTED,
			     NVML_VOLATILE_ECC, &ull),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceGetTemperature(h1, NVML_TEMPERATURE_GPU, &u),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceGetCurrentClocksThrottleReasons(h1, &ull),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceGetRemappedRows(h1, &u, &u, &u, &u),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceGetComputeRunningProcesses_v2(h1, &u, NULL),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceGetProcessUtilization(h1, NULL, &u, 0),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceGetClockInfo(h1, NVML_CLOCK_SM, &u),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceGetPcieThroughput(h1, NVML_PCIE_UTIL_TX_BYTES,
						   &u),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_SUCCESS);
}

static unsigned long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ull +
	       (unsigned long long)ts.tv_nsec / 1000;
}

/* gpu 0 over its four steps, every getter after each sample. */
TEST(sequence)
{
	static const struct {
		unsigned int util, memutil, sm, power, temp, replay;
		unsigned long long used, throttle, dbe, flit, remap_unc,
			pending;
		unsigned int nprocs;
	} want[] = {
		{ 10, 5, 1980, 100000, 40, 0, 1ull << 30, 0, 0, 0, 0, 0, 2 },
		{ 50, 5, 1755, 300000, 56, 0, 1ull << 30, 0, 0, 0, 0, 0, 2 },
		{ 99, 60, 1410, 690000, 70, 2, 1ull << 30, 4, 0, 3, 0, 0, 2 },
		{ 80, 60, 1410, 500000, 70, 2, 2ull << 30, 0, 1, 3, 1, 1, 0 },
	};
	CHECK(start());
	for (unsigned int k = 0; k < 4; k++) {
		nvmlUtilization_t ut;
		unsigned int u, c, unc, pend, failed, n;
		unsigned long long ull;
		nvmlMemory_t m;
		CHECK_EQ_INT(N.nvmlDeviceGetUtilizationRates(h0, &ut),
			     NVML_SUCCESS);
		CHECK_EQ_INT(ut.gpu, want[k].util);
		CHECK_EQ_INT(ut.memory, want[k].memutil);
		CHECK_EQ_INT(N.nvmlDeviceGetClockInfo(h0, NVML_CLOCK_SM, &u),
			     NVML_SUCCESS);
		CHECK_EQ_INT(u, want[k].sm);
		CHECK_EQ_INT(N.nvmlDeviceGetClockInfo(h0, NVML_CLOCK_MEM, &u),
			     NVML_SUCCESS);
		CHECK_EQ_INT(u, 2619);
		CHECK_EQ_INT(N.nvmlDeviceGetPowerUsage(h0, &u), NVML_SUCCESS);
		CHECK_EQ_INT(u, want[k].power);
		CHECK_EQ_INT(N.nvmlDeviceGetTemperature(h0, NVML_TEMPERATURE_GPU,
							&u),
			     NVML_SUCCESS);
		CHECK_EQ_INT(u, want[k].temp);
		CHECK_EQ_INT(N.nvmlDeviceGetMemoryInfo(h0, &m), NVML_SUCCESS);
		CHECK(m.total == 85899345920ull && m.used == want[k].used &&
		      m.free == m.total - want[k].used);
		/* `fail`: the r535 name fails, the old one answers. */
		CHECK_EQ_INT(N.nvmlDeviceGetCurrentClocksEventReasons(h0, &ull),
			     NVML_ERROR_FUNCTION_NOT_FOUND);
		CHECK_EQ_INT(N.nvmlDeviceGetCurrentClocksThrottleReasons(h0,
									  &ull),
			     NVML_SUCCESS);
		CHECK(ull == want[k].throttle);
		CHECK_EQ_INT(N.nvmlDeviceGetPcieThroughput(
				     h0, NVML_PCIE_UTIL_TX_BYTES, &u),
			     NVML_SUCCESS);
		CHECK_EQ_INT(u, 1000);
		CHECK_EQ_INT(N.nvmlDeviceGetPcieThroughput(
				     h0, NVML_PCIE_UTIL_RX_BYTES, &u),
			     NVML_SUCCESS);
		CHECK_EQ_INT(u, 2000);
		CHECK_EQ_INT(N.nvmlDeviceGetPcieReplayCounter(h0, &u),
			     NVML_SUCCESS);
		CHECK_EQ_INT(u, want[k].replay);
		CHECK_EQ_INT(N.nvmlDeviceGetTotalEccErrors(h0,
				     NVML_MEMORY_ERROR_TYPE_CORRECTED,
				     NVML_VOLATILE_ECC, &ull),
			     NVML_SUCCESS);
		CHECK(ull == 0);
		CHECK_EQ_INT(N.nvmlDeviceGetTotalEccErrors(h0,
				     NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
				     NVML_VOLATILE_ECC, &ull),
			     NVML_SUCCESS);
		CHECK(ull == want[k].dbe);
		CHECK_EQ_INT(N.nvmlDeviceGetRemappedRows(h0, &c, &unc, &pend,
							 &failed),
			     NVML_SUCCESS);
		CHECK(c == 0 && unc == want[k].remap_unc &&
		      pend == want[k].pending && failed == 0);
		for (unsigned int l = 0; l < 2; l++) {
			CHECK_EQ_INT(N.nvmlDeviceGetNvLinkErrorCounter(
					     h0, l, NVML_NVLINK_ERROR_DL_CRC_FLIT,
					     &ull),
				     NVML_SUCCESS);
			CHECK(ull == want[k].flit);
		}
		CHECK_EQ_INT(N.nvmlDeviceGetNvLinkErrorCounter(
				     h0, 2, NVML_NVLINK_ERROR_DL_CRC_FLIT, &ull),
			     NVML_ERROR_NOT_SUPPORTED);

		/* Processes: v3 fails (`fail`), v2 and v1 answer. */
		nvmlProcessInfo_t p[4];
		nvmlProcessInfo_v1_t p1[4];
		nvmlProcessUtilizationSample_t s[4];
		n = 4;
		CHECK_EQ_INT(N.nvmlDeviceGetComputeRunningProcesses_v3(h0, &n, p),
			     NVML_ERROR_FUNCTION_NOT_FOUND);
		n = 0;
		CHECK_EQ_INT(N.nvmlDeviceGetComputeRunningProcesses_v2(h0, &n,
								       NULL),
			     want[k].nprocs ? NVML_ERROR_INSUFFICIENT_SIZE
					    : NVML_SUCCESS);
		CHECK_EQ_INT(n, want[k].nprocs);
		n = 4;
		CHECK_EQ_INT(N.nvmlDeviceGetComputeRunningProcesses_v2(h0, &n, p),
			     NVML_SUCCESS);
		CHECK_EQ_INT(n, want[k].nprocs);
		n = 4;
		CHECK_EQ_INT(N.nvmlDeviceGetComputeRunningProcesses(h0, &n, p1),
			     NVML_SUCCESS);
		CHECK_EQ_INT(n, want[k].nprocs);
		n = 0;
		unsigned long long before = now_us();
		nvmlReturn_t r = N.nvmlDeviceGetProcessUtilization(h0, NULL, &n,
								   0);
		if (!want[k].nprocs) {
			CHECK_EQ_INT(r, NVML_ERROR_NOT_FOUND);
			continue;
		}
		CHECK(p[0].pid == 1234 && p[0].usedGpuMemory == 1048576 &&
		      p[0].gpuInstanceId == 0xffffffffu &&
		      p[0].computeInstanceId == 0xffffffffu);
		CHECK(p[1].pid == 5678 &&
		      p[1].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE);
		CHECK(p1[0].pid == 1234 && p1[0].usedGpuMemory == 1048576);
		CHECK(p1[1].pid == 5678 &&
		      p1[1].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE);
		n = 1;
		CHECK_EQ_INT(N.nvmlDeviceGetComputeRunningProcesses_v2(h0, &n, p),
			     NVML_ERROR_INSUFFICIENT_SIZE);
		CHECK_EQ_INT(n, 2);

		CHECK_EQ_INT(r, NVML_ERROR_INSUFFICIENT_SIZE);
		CHECK_EQ_INT(n, 2);
		n = 1;
		CHECK_EQ_INT(N.nvmlDeviceGetProcessUtilization(h0, s, &n, 0),
			     NVML_ERROR_INSUFFICIENT_SIZE);
		CHECK_EQ_INT(n, 2);
		n = 4;
		CHECK_EQ_INT(N.nvmlDeviceGetProcessUtilization(h0, s, &n,
							       before - 1),
			     NVML_SUCCESS);
		unsigned long long after = now_us();
		CHECK_EQ_INT(n, 2);
		CHECK(s[0].pid == 1234 && s[0].smUtil == 50 &&
		      s[0].memUtil == 20 && s[0].encUtil == 0 &&
		      s[0].decUtil == 0);
		CHECK(s[1].pid == 5678 && s[1].smUtil == 7 && s[1].memUtil == 3);
		CHECK(s[0].timeStamp >= before && s[0].timeStamp <= after &&
		      s[1].timeStamp == s[0].timeStamp);
		/* Nothing newer than the future. */
		n = 4;
		CHECK_EQ_INT(N.nvmlDeviceGetProcessUtilization(h0, s, &n,
							       after + 60000000),
			     NVML_ERROR_NOT_FOUND);
	}
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_SUCCESS);
}

/* gpu 1: its own step counter; lost from step 3 on. */
TEST(lost)
{
	nvmlUtilization_t ut;
	unsigned int u;
	char buf[64];
	nvmlDevice_t h;
	CHECK(start());
	for (unsigned int k = 0; k < 3; k++) {
		CHECK_EQ_INT(N.nvmlDeviceGetUtilizationRates(h1, &ut),
			     NVML_SUCCESS);
		CHECK_EQ_INT(ut.gpu, k < 2 ? 1 : 2);
		CHECK_EQ_INT(ut.memory, 0);
		CHECK_EQ_INT(N.nvmlDeviceGetPowerUsage(h1, &u), NVML_SUCCESS);
		CHECK_EQ_INT(u, 60000);
	}
	/* gpu 0 untouched by gpu 1's steps: still step 0. */
	CHECK_EQ_INT(N.nvmlDeviceGetPowerUsage(h0, &u), NVML_SUCCESS);
	CHECK_EQ_INT(u, 100000);
	CHECK_EQ_INT(N.nvmlDeviceGetUtilizationRates(h1, &ut),
		     NVML_ERROR_GPU_IS_LOST);
	CHECK_EQ_INT(N.nvmlDeviceGetPowerUsage(h1, &u), NVML_ERROR_GPU_IS_LOST);
	CHECK_EQ_INT(N.nvmlDeviceGetName(h1, buf, sizeof(buf)),
		     NVML_ERROR_GPU_IS_LOST);
	CHECK_EQ_INT(N.nvmlDeviceGetTemperature(h1, NVML_TEMPERATURE_GPU, &u),
		     NVML_ERROR_GPU_IS_LOST);
	CHECK_EQ_INT(N.nvmlDeviceGetHandleByIndex_v2(1, &h), NVML_SUCCESS);
	CHECK(h == h1);
	CHECK_EQ_INT(N.nvmlDeviceGetUtilizationRates(h1, &ut),
		     NVML_ERROR_GPU_IS_LOST);
	/* gpu 0 still answers. */
	CHECK_EQ_INT(N.nvmlDeviceGetUtilizationRates(h0, &ut), NVML_SUCCESS);
	CHECK_EQ_INT(ut.gpu, 10);
	CHECK_EQ_INT(N.nvmlDeviceGetUtilizationRates((nvmlDevice_t)&u, &ut),
		     NVML_ERROR_INVALID_ARGUMENT);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_SUCCESS);
}

static unsigned long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000ull +
	       (unsigned long long)ts.tv_nsec / 1000000;
}

struct waiter {
	nvmlEventSet_t set;
	nvmlEventData_t e;
	nvmlReturn_t r;
	int done;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	w->r = N.nvmlEventSetWait_v2(w->set, &w->e, 5000);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int sample(nvmlDevice_t h)
{
	nvmlUtilization_t ut;
	return N.nvmlDeviceGetUtilizationRates(h, &ut) == NVML_SUCCESS;
}

TEST(events)
{
	nvmlEventSet_t set;
	nvmlEventData_t e;
	unsigned long long types;
	CHECK(start());
	CHECK_EQ_INT(N.nvmlDeviceGetSupportedEventTypes(h0, &types),
		     NVML_SUCCESS);
	CHECK(types == (nvmlEventTypeSingleBitEccError |
			nvmlEventTypeDoubleBitEccError |
			nvmlEventTypeXidCriticalError | nvmlEventTypeClock |
			nvmlEventTypePState));
	CHECK_EQ_INT(N.nvmlEventSetCreate(&set), NVML_SUCCESS);
	CHECK_EQ_INT(N.nvmlDeviceRegisterEvents(h0, 0x20, set),
		     NVML_ERROR_NOT_SUPPORTED);
	CHECK_EQ_INT(N.nvmlDeviceRegisterEvents(
			     h0,
			     nvmlEventTypeSingleBitEccError |
				     nvmlEventTypeDoubleBitEccError |
				     nvmlEventTypeClock,
			     set),
		     NVML_SUCCESS);
	CHECK_EQ_INT(N.nvmlDeviceRegisterEvents(
			     h1, nvmlEventTypeXidCriticalError, set),
		     NVML_SUCCESS);

	/* gpu 1's xid at step 0 is due at its first sample. */
	CHECK_EQ_INT(N.nvmlEventSetWait_v2(set, &e, 0), NVML_ERROR_TIMEOUT);
	CHECK(sample(h1));
	CHECK_EQ_INT(N.nvmlEventSetWait(set, &e, 0), NVML_SUCCESS);
	CHECK(e.device == h1 && e.eventType == nvmlEventTypeXidCriticalError &&
	      e.eventData == 48);

	/* gpu 0's xid (step 1) is not registered: never delivered. */
	CHECK(sample(h0) && sample(h0));
	unsigned long long t0 = mono_ms();
	CHECK_EQ_INT(N.nvmlEventSetWait_v2(set, &e, 50), NVML_ERROR_TIMEOUT);
	unsigned long long spent = mono_ms() - t0;
	CHECK(spent >= 50 && spent < 1000);

	CHECK(sample(h0)); /* step 2: the clock event */
	CHECK_EQ_INT(N.nvmlEventSetWait_v2(set, &e, 0), NVML_SUCCESS);
	CHECK(e.device == h0 && e.eventType == nvmlEventTypeClock &&
	      e.eventData == 0);
	CHECK_EQ_INT(N.nvmlEventSetWait_v2(set, &e, 0), NVML_ERROR_TIMEOUT);

	/* Step 3 from this thread while another waits. */
	struct waiter w = { .set = set };
	pthread_t th;
	CHECK(pthread_create(&th, NULL, wait_thread, &w) == 0);
	nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
	int early = __atomic_load_n(&w.done, __ATOMIC_SEQ_CST);
	t0 = mono_ms();
	int ok = sample(h0);
	pthread_join(th, NULL);
	spent = mono_ms() - t0;
	CHECK(!early && ok);
	CHECK_EQ_INT(w.r, NVML_SUCCESS);
	CHECK(spent < 1000);
	CHECK(w.e.device == h0 &&
	      w.e.eventType == nvmlEventTypeDoubleBitEccError);
	/* Then the sbe (script order), then nothing. */
	CHECK_EQ_INT(N.nvmlEventSetWait_v2(set, &e, 0), NVML_SUCCESS);
	CHECK(e.device == h0 && e.eventType == nvmlEventTypeSingleBitEccError);
	CHECK_EQ_INT(N.nvmlEventSetWait_v2(set, &e, 20), NVML_ERROR_TIMEOUT);

	CHECK_EQ_INT(N.nvmlEventSetFree(set), NVML_SUCCESS);
	CHECK_EQ_INT(N.nvmlEventSetWait_v2(set, &e, 0),
		     NVML_ERROR_INVALID_ARGUMENT);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_SUCCESS);
}

static int count_lines(const char *path, const char *line)
{
	FILE *f = fopen(path, "r");
	char buf[256];
	int n = 0;
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		n += !strcmp(buf, line);
	fclose(f);
	return n;
}

TEST(call_log)
{
	unsigned int u;
	CHECK(start());
	int before = count_lines(log_path, "nvmlDeviceGetPowerUsage 1\n");
	CHECK(before >= 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(N.nvmlDeviceGetPowerUsage(h1, &u), NVML_SUCCESS);
	CHECK_EQ_INT(count_lines(log_path, "nvmlDeviceGetPowerUsage 1\n"),
		     before + 3);
	CHECK(count_lines(log_path, "nvmlInit_v2\n") > 0);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_SUCCESS);
}

/* Init on @text: NVML_ERROR_UNKNOWN and one stderr line, returned in
 * @msg; 0 when the init did otherwise. */
static int bad_script(const char *text, char *msg, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	if (!script(text))
		return 0;
	fflush(stderr);
	int saved = dup(2), fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (saved < 0 || fd < 0)
		return 0;
	dup2(fd, 2);
	nvmlReturn_t r = N.nvmlInit();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ssize_t n = pread(fd, msg, len - 1, 0);
	close(fd);
	unlink(path);
	if (r == NVML_SUCCESS)
		N.nvmlShutdown();
	msg[n > 0 ? n : 0] = 0;
	return r == NVML_ERROR_UNKNOWN && n > 0 &&
	       strchr(msg, '\n') == msg + n - 1;
}

TEST(syntax_errors)
{
	static const struct {
		const char *text;
		unsigned int line;
	} bad[] = {
		{ "driver 1\nbogus\n", 2 },
		{ "gpu 0\nstep 0 gpu 0 util=x\n", 2 },
		{ "gpu 0\nstep 0 gpu 0 nosuch=1\n", 2 },
		{ "gpu 0\n\n# c\nstep 0 gpu 1 util=1\n", 4 },
		{ "gpu 1\n", 1 },
		{ "gpu 0\ngpu 0\n", 2 },
		{ "gpu 8\n", 1 },
		{ "gpu 0 pci=3B:00\n", 1 },
		{ "gpu 0 name=\"unterminated\n", 1 },
		{ "gpu 0 nvlinks=19\n", 1 },
		{ "gpu 0\nstep 0 gpu 0 pending=2\n", 2 },
		{ "gpu 0\nstep 0 gpu 0 proc=1:2:3\n", 2 },
		{ "gpu 0\nstep 0 gpu 0 proc=1:2:3:4 procs=none\n", 2 },
		{ "gpu 0\nevent 0 gpu 0 xid\n", 2 },
		{ "gpu 0\nevent 0 gpu 0 dbe xid=3\n", 2 },
		{ "gpu 0\nevent 0 gpu 0 fire\n", 2 },
		{ "gpu 0\nlost x gpu 0\n", 2 },
		{ "fail nvmlNoSuchCall 13\n", 1 },
		{ "fail nvmlErrorString 13\n", 1 },
		{ "fail nvmlShutdown x\n", 1 },
	};
	char msg[512], want[PATH_MAX + 64];
	CHECK(lib());
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!bad_script(bad[i].text, msg, sizeof(msg))) {
			fprintf(stderr, "  script %zu: \"%s\"\n", i, msg);
			CHECK(0);
		}
		snprintf(want, sizeof(want), "libnvidia-ml mock: %s:%u: ",
			 script_path, bad[i].line);
		if (strncmp(msg, want, strlen(want))) {
			fprintf(stderr, "  script %zu: \"%s\"\n", i, msg);
			CHECK(0);
		}
	}
	/* Not initialized after a bad script; a good one then loads. */
	unsigned int n;
	CHECK_EQ_INT(N.nvmlDeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
	CHECK(script("gpu 0 # a comment\n  \n\tgpu 1\n"));
	CHECK_EQ_INT(N.nvmlInit(), NVML_SUCCESS);
	CHECK_EQ_INT(N.nvmlDeviceGetCount(&n), NVML_SUCCESS);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_SUCCESS);
}

/* `fail` on an init: the init fails, nothing is loaded. */
TEST(fail_init)
{
	unsigned int n;
	CHECK(lib());
	CHECK(script("gpu 0\nfail nvmlInit_v2 9\n"));
	CHECK_EQ_INT(N.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	CHECK_EQ_INT(N.nvmlDeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
	CHECK_EQ_INT(N.nvmlInit(), NVML_SUCCESS);
	CHECK_EQ_INT(N.nvmlShutdown(), NVML_SUCCESS);
}

TEST_MAIN(TEST_ENTRY(symbols) TEST_ENTRY(no_script) TEST_ENTRY(refcount)
		  TEST_ENTRY(error_strings) TEST_ENTRY(static_info)
		  TEST_ENTRY(sequence) TEST_ENTRY(lost) TEST_ENTRY(events)
		  TEST_ENTRY(call_log) TEST_ENTRY(syntax_errors)
		  TEST_ENTRY(fail_init))
