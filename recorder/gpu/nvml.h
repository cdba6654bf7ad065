/* nvml.h - the part of NVML's ABI gpurecd uses, declared here so that
 * nothing NVIDIA ships is needed to build: gpurecd dlopens
 * libnvidia-ml.so.1 at run time (recorder/gpu/gpu.c) and the tests'
 * mock (tests/gpu-mock/libnvidia-ml.c) implements these same prototypes.
 *
 * From NVML's documented API (the NVML API Reference Guide and nvml.h of
 * the r535-r580 drivers): the values of the enums and the layouts of the
 * structs below are the ABI every driver since r470 keeps.  Versioned
 * entry points: gpurecd looks up the newest first and falls back
 *   nvmlInit_v2 -> nvmlInit
 *   nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2 -> unversioned
 *   nvmlDeviceGetPciInfo_v3 -> _v2 (same struct)
 *   nvmlDeviceGetComputeRunningProcesses_v3 -> _v2 (nvmlProcessInfo_t)
 *     -> unversioned (nvmlProcessInfo_v1_t, without the instance ids)
 *   nvmlDeviceGetCurrentClocksEventReasons (r535) ->
 *     nvmlDeviceGetCurrentClocksThrottleReasons (same bits)
 *   nvmlEventSetWait_v2 -> nvmlEventSetWait
 *   nvmlDeviceGetMemoryInfo_v2 -> unversioned (used includes reserved)
 */
#ifndef GR_RECORDER_GPU_NVML_H
#define GR_RECORDER_GPU_NVML_H

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

typedef enum nvmlEnableState_enum {
	NVML_FEATURE_DISABLED = 0,
	NVML_FEATURE_ENABLED = 1,
} nvmlEnableState_t;

typedef enum nvmlClockType_enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

typedef enum nvmlTemperatureSensors_enum {
	NVML_TEMPERATURE_GPU = 0,
} nvmlTemperatureSensors_t;

typedef enum nvmlPcieUtilCounter_enum {
	NVML_PCIE_UTIL_TX_BYTES = 0,
	NVML_PCIE_UTIL_RX_BYTES = 1,
} nvmlPcieUtilCounter_t;

typedef enum nvmlMemoryErrorType_enum {
	NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
	NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
	NVML_VOLATILE_ECC = 0,	/* since the driver loaded */
	NVML_AGGREGATE_ECC = 1,	/* lifetime */
} nvmlEccCounterType_t;

typedef enum nvmlNvLinkErrorCounter_enum {
	NVML_NVLINK_ERROR_DL_REPLAY = 0,
	NVML_NVLINK_ERROR_DL_RECOVERY = 1,
	NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
	NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
} nvmlNvLinkErrorCounter_t;

#define NVML_NVLINK_MAX_LINKS 18
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
/* usedGpuMemory when NVML cannot tell (no permission, some containers). */
#define NVML_VALUE_NOT_AVAILABLE (~0ull)

/* Clocks event ("throttle") reasons: a bit mask. */
#define nvmlClocksEventReasonGpuIdle 0x1ull
#define nvmlClocksEventReasonApplicationsClocksSetting 0x2ull
#define nvmlClocksEventReasonSwPowerCap 0x4ull
#define nvmlClocksThrottleReasonHwSlowdown 0x8ull
#define nvmlClocksEventReasonSyncBoost 0x10ull
#define nvmlClocksEventReasonSwThermalSlowdown 0x20ull
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x40ull
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown 0x80ull
#define nvmlClocksEventReasonDisplayClockSetting 0x100ull

/* Event types (nvmlDeviceRegisterEvents). */
#define nvmlEventTypeSingleBitEccError 0x1ull
#define nvmlEventTypeDoubleBitEccError 0x2ull
#define nvmlEventTypePState 0x4ull
#define nvmlEventTypeXidCriticalError 0x8ull
#define nvmlEventTypeClock 0x10ull

typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlUtilization_st {
	unsigned int gpu;	/* % */
	unsigned int memory;	/* % */
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
	unsigned long long total, free, used;	/* bytes; used includes the
						 * driver's reserved memory */
} nvmlMemory_t;

/* nvmlDeviceGetMemoryInfo_v2 (r510+): used without the driver's reserved
 * memory, as nvidia-smi shows it; version is nvmlMemory_v2. */
typedef struct nvmlMemory_v2_st {
	unsigned int version;
	unsigned long long total, reserved, free, used;	/* bytes */
} nvmlMemory_v2_t;
#define nvmlMemory_v2 ((unsigned int)(sizeof(nvmlMemory_v2_t) | 2u << 24))

typedef struct nvmlProcessInfo_v1_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_st {	/* _v2 and _v3 calls */
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct nvmlProcessUtilizationSample_st {
	unsigned int pid;
	unsigned long long timeStamp;	/* CPU time, µs */
	unsigned int smUtil, memUtil, encUtil, decUtil;	/* % */
} nvmlProcessUtilizationSample_t;

typedef struct nvmlEventData_st {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;	/* the Xid, for XidCriticalError */
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;

/* The entry points, as one X-macro: NVML(ret, name, args).  gpu.c
 * resolves each by name (dlsym); the mock defines each. */
#define GR_NVML_FNS(NVML)                                                      \
	NVML(nvmlReturn_t, nvmlInit_v2, (void))                                \
	NVML(nvmlReturn_t, nvmlInit, (void))                                   \
	NVML(nvmlReturn_t, nvmlShutdown, (void))                               \
	NVML(const char *, nvmlErrorString, (nvmlReturn_t r))                  \
	NVML(nvmlReturn_t, nvmlSystemGetDriverVersion,                         \
	     (char *version, unsigned int length))                             \
	NVML(nvmlReturn_t, nvmlDeviceGetCount_v2, (unsigned int *n))           \
	NVML(nvmlReturn_t, nvmlDeviceGetCount, (unsigned int *n))              \
	NVML(nvmlReturn_t, nvmlDeviceGetHandleByIndex_v2,                      \
	     (unsigned int i, nvmlDevice_t *d))                                \
	NVML(nvmlReturn_t, nvmlDeviceGetHandleByIndex,                         \
	     (unsigned int i, nvmlDevice_t *d))                                \
	NVML(nvmlReturn_t, nvmlDeviceGetName,                                  \
	     (nvmlDevice_t d, char *name, unsigned int length))                \
	NVML(nvmlReturn_t, nvmlDeviceGetUUID,                                  \
	     (nvmlDevice_t d, char *uuid, unsigned int length))                \
	NVML(nvmlReturn_t, nvmlDeviceGetPciInfo_v3,                            \
	     (nvmlDevice_t d, nvmlPciInfo_t *pci))                             \
	NVML(nvmlReturn_t, nvmlDeviceGetPciInfo_v2,                            \
	     (nvmlDevice_t d, nvmlPciInfo_t *pci))                             \
	NVML(nvmlReturn_t, nvmlDeviceGetUtilizationRates,                      \
	     (nvmlDevice_t d, nvmlUtilization_t *u))                           \
	NVML(nvmlReturn_t, nvmlDeviceGetClockInfo,                             \
	     (nvmlDevice_t d, nvmlClockType_t type, unsigned int *mhz))        \
	NVML(nvmlReturn_t, nvmlDeviceGetPowerUsage,                            \
	     (nvmlDevice_t d, unsigned int *mw))                               \
	NVML(nvmlReturn_t, nvmlDeviceGetEnforcedPowerLimit,                    \
	     (nvmlDevice_t d, unsigned int *mw))                               \
	NVML(nvmlReturn_t, nvmlDeviceGetTemperature,                           \
	     (nvmlDevice_t d, nvmlTemperatureSensors_t s, unsigned int *c))    \
	NVML(nvmlReturn_t, nvmlDeviceGetMemoryInfo,                            \
	     (nvmlDevice_t d, nvmlMemory_t *m))                                \
	NVML(nvmlReturn_t, nvmlDeviceGetMemoryInfo_v2,                         \
	     (nvmlDevice_t d, nvmlMemory_v2_t *m))                             \
	NVML(nvmlReturn_t, nvmlDeviceGetCurrentClocksEventReasons,             \
	     (nvmlDevice_t d, unsigned long long *mask))                       \
	NVML(nvmlReturn_t, nvmlDeviceGetCurrentClocksThrottleReasons,          \
	     (nvmlDevice_t d, unsigned long long *mask))                       \
	NVML(nvmlReturn_t, nvmlDeviceGetPcieThroughput,                        \
	     (nvmlDevice_t d, nvmlPcieUtilCounter_t c, unsigned int *kbps))    \
	NVML(nvmlReturn_t, nvmlDeviceGetPcieReplayCounter,                     \
	     (nvmlDevice_t d, unsigned int *n))                                \
	NVML(nvmlReturn_t, nvmlDeviceGetTotalEccErrors,                        \
	     (nvmlDevice_t d, nvmlMemoryErrorType_t t, nvmlEccCounterType_t c, \
	      unsigned long long *n))                                          \
	NVML(nvmlReturn_t, nvmlDeviceGetRemappedRows,                          \
	     (nvmlDevice_t d, unsigned int *corr, unsigned int *unc,           \
	      unsigned int *pending, unsigned int *failed))                    \
	NVML(nvmlReturn_t, nvmlDeviceGetRetiredPagesPendingStatus,             \
	     (nvmlDevice_t d, nvmlEnableState_t *pending))                     \
	NVML(nvmlReturn_t, nvmlDeviceGetNvLinkState,                           \
	     (nvmlDevice_t d, unsigned int link, nvmlEnableState_t *active))   \
	NVML(nvmlReturn_t, nvmlDeviceGetNvLinkErrorCounter,                    \
	     (nvmlDevice_t d, unsigned int link, nvmlNvLinkErrorCounter_t c,   \
	      unsigned long long *n))                                          \
	NVML(nvmlReturn_t, nvmlDeviceGetPersistenceMode,                       \
	     (nvmlDevice_t d, nvmlEnableState_t *mode))                        \
	NVML(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v3,            \
	     (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p))          \
	NVML(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v2,            \
	     (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p))          \
	NVML(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses,               \
	     (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p))       \
	NVML(nvmlReturn_t, nvmlDeviceGetProcessUtilization,                    \
	     (nvmlDevice_t d, nvmlProcessUtilizationSample_t *s,               \
	      unsigned int *n, unsigned long long last_seen_us))               \
	NVML(nvmlReturn_t, nvmlDeviceGetSupportedEventTypes,                   \
	     (nvmlDevice_t d, unsigned long long *types))                      \
	NVML(nvmlReturn_t, nvmlEventSetCreate, (nvmlEventSet_t *set))          \
	NVML(nvmlReturn_t, nvmlDeviceRegisterEvents,                           \
	     (nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set))   \
	NVML(nvmlReturn_t, nvmlEventSetWait_v2,                                \
	     (nvmlEventSet_t set, nvmlEventData_t *e, unsigned int ms))        \
	NVML(nvmlReturn_t, nvmlEventSetWait,                                   \
	     (nvmlEventSet_t set, nvmlEventData_t *e, unsigned int ms))        \
	NVML(nvmlReturn_t, nvmlEventSetFree, (nvmlEventSet_t set))

#endif
