/* test_gpu.c - the gpu family's pure helpers: throttle reasons as text,
 * PCI bus ids in the kernel log's form. */
#include "tests/unit/test.h"
#include "recorder/gpu/gpu.h"
#include "recorder/gpu/nvml.h"

TEST(throttle_text)
{
	char s[160];

	gr_gpu__throttle_text(0, s, sizeof(s));
	CHECK_EQ_STR(s, "");
	gr_gpu__throttle_text(nvmlClocksEventReasonGpuIdle, s, sizeof(s));
	CHECK_EQ_STR(s, "idle");
	gr_gpu__throttle_text(nvmlClocksThrottleReasonHwThermalSlowdown |
				      nvmlClocksEventReasonSwPowerCap,
			      s, sizeof(s));
	CHECK_EQ_STR(s, "sw_power_cap,hw_thermal");
	gr_gpu__throttle_text(0x1ff, s, sizeof(s));
	CHECK_EQ_STR(s, "sw_power_cap,hw_slowdown,sw_thermal,hw_thermal,"
			"hw_power_brake,sync_boost,app_clocks,display,idle");
	/* Bits NVML may add later are not named. */
	gr_gpu__throttle_text(0x10000ull | nvmlClocksThrottleReasonHwPowerBrakeSlowdown,
			      s, sizeof(s));
	CHECK_EQ_STR(s, "hw_power_brake");
	/* A short buffer: whole names only. */
	gr_gpu__throttle_text(nvmlClocksEventReasonSwPowerCap |
				      nvmlClocksThrottleReasonHwSlowdown,
			      s, 16);
	CHECK_EQ_STR(s, "sw_power_cap");
}

TEST(pci_short)
{
	char s[32];

	gr_gpu__pci_short("00000000:3B:00.0", s, sizeof(s));
	CHECK_EQ_STR(s, "0000:3b:00");
	gr_gpu__pci_short("0001:C1:1f.0", s, sizeof(s));
	CHECK_EQ_STR(s, "0001:c1:1f");
	gr_gpu__pci_short("garbage", s, sizeof(s));
	CHECK_EQ_STR(s, "garbage");
}

TEST_MAIN(TEST_ENTRY(throttle_text) TEST_ENTRY(pci_short))
