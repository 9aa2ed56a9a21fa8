/*
 * prof_gpu.h: the GPU side of the profiler: a synthetic data-parallel
 * training step on k GPUs of this machine, with the CUDA runtime API and
 * NCCL only.
 *
 * One step = on each of the k GPUs a kernel doing a given number of FP32
 * FLOPs (fused multiply-adds; the caller passes 3 x forward FLOPs per
 * sample x local batch), then one NCCL all-reduce (sum, float) of the
 * gradient bytes over the k GPUs, one process and one communicator over
 * the k devices (ncclCommInitAll). The host times steps with a monotonic
 * clock after waiting for every GPU.
 *
 * Two implementations: prof_gpu.cu (built when the Makefile finds CUDA
 * and NCCL, HAVE_CUDA=1) and prof_gpu_none.c (every call answers
 * PROF_GPU_NOT_BUILT). Calls never print, never exit and never hang on a
 * machine without a GPU or driver: they answer PROF_GPU_NO_DEVICE.
 */
#ifndef EF_PROF_GPU_H
#define EF_PROF_GPU_H

#include <stddef.h>

#include "common/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum prof_gpu_status {
    PROF_GPU_OK = 0,
    PROF_GPU_NOT_BUILT,  /* this efplan was built without CUDA/NCCL */
    PROF_GPU_NO_DEVICE,  /* no driver, or no GPU visible */
    PROF_GPU_FAILED      /* a CUDA or NCCL call failed (message in e) */
} prof_gpu_status;

/* What the machine has. */
typedef struct prof_gpu_env {
    int runtime_version;  /* cudaRuntimeGetVersion, e.g. 13000 */
    int driver_version;   /* cudaDriverGetVersion; 0 = no driver */
    int nccl_version;     /* ncclGetVersion, major*10000+minor*100+patch */
    int ndevices;         /* GPUs visible */
    char name[256];       /* name of GPU 0 */
    size_t memory;        /* bytes of memory of GPU 0 */
} prof_gpu_env;

/*
 * prof_gpu_probe: fill 'env' (zeroed first). Returns PROF_GPU_OK when at
 * least one GPU is usable; PROF_GPU_NOT_BUILT; or PROF_GPU_NO_DEVICE with
 * the reason in e (kind EF_E_INFEASIBLE), e.g. "no CUDA driver". The
 * versions known so far are filled in every case.
 */
prof_gpu_status prof_gpu_probe(prof_gpu_env *env, ef_err *e);

typedef struct prof_gpu_ctx prof_gpu_ctx;

/*
 * prof_gpu_open: set up a step on GPUs 0..k-1: per GPU a stream, a
 * gradient buffer of 'grad_bytes' (rounded up to whole floats) and an
 * NCCL communicator (k > 1). On failure nothing is left allocated and
 * *ctx is NULL. Errors: PROF_GPU_NOT_BUILT, PROF_GPU_NO_DEVICE (fewer
 * than k GPUs), PROF_GPU_FAILED (out of GPU memory, NCCL init failed).
 */
prof_gpu_status prof_gpu_open(prof_gpu_ctx **ctx, int k, size_t grad_bytes,
                              ef_err *e);

/* What prof_gpu_time runs per step. */
typedef enum prof_gpu_what {
    PROF_GPU_STEP = 0,     /* compute then all-reduce */
    PROF_GPU_COMPUTE,      /* compute only */
    PROF_GPU_ALLREDUCE     /* all-reduce only */
} prof_gpu_what;

/*
 * prof_gpu_time: run 'nsteps' steps (flops_per_gpu FLOPs on each GPU per
 * step) and put the wall seconds they took, from the first launch until
 * every GPU is done, in *seconds.
 */
prof_gpu_status prof_gpu_time(prof_gpu_ctx *ctx, prof_gpu_what what,
                              double flops_per_gpu, int nsteps,
                              double *seconds, ef_err *e);

/* Release everything prof_gpu_open made; NULL is fine. */
void prof_gpu_close(prof_gpu_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
