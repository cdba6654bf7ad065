/* cuda_errors.h - names of CUDA error codes (cuda_errors.c, generated). */
#ifndef GR_QUERY_CUDA_ERRORS_H
#define GR_QUERY_CUDA_ERRORS_H

/* The name of a cudaError_t (driver 0) or CUresult (driver 1) code, or
 * NULL if unknown. */
const char *gr_cuda_error_name(int driver, long long code);

#endif
