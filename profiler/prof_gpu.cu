/* prof_gpu.cu: the synthetic data-parallel step on GPUs, CUDA runtime API
 * and NCCL only (see prof_gpu.h). Built only when HAVE_CUDA=1. */
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern "C" {
#include "common/err.h"
}
#include "profiler/prof_gpu.h"

#define CHAINS 8                       /* independent FMA chains per thread */
#define FLOPS_PER_ITER (2.0 * CHAINS)  /* one FMA = 2 FLOPs */
#define THREADS 256

struct prof_gpu_ctx {
    int k;
    size_t count;        /* floats in each gradient buffer */
    int blocks;          /* per kernel launch */
    cudaStream_t stream[64];
    float *grad[64];
    float *sink[64];
    ncclComm_t comm[64];
    int ncomm;
};

/* 'iters' rounds of CHAINS dependent FMAs per thread. The result is
 * written only under a condition the values never meet, so the loop
 * cannot be removed but the kernel writes nothing. */
__global__ void prof_burn(float *sink, long long iters, float seed)
{
    float x[CHAINS];
    const float b = 0.9999999f, c = 1e-7f;
    for (int j = 0; j < CHAINS; j++)
        x[j] = seed + 1e-3f * (float)(threadIdx.x + j);
    for (long long i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < CHAINS; j++)
            x[j] = fmaf(x[j], b, c);
    }
    float s = 0.0f;
    for (int j = 0; j < CHAINS; j++)
        s += x[j];
    if (s == -1.0f)
        sink[0] = s;
}

static prof_gpu_status cuda_failed(ef_err *e, const char *what,
                                   cudaError_t rc)
{
    ef_fail(e, EF_E_INTERNAL, "CUDA: %s failed: %s (%s)", what,
            cudaGetErrorString(rc), cudaGetErrorName(rc));
    return PROF_GPU_FAILED;
}

extern "C" prof_gpu_status prof_gpu_probe(prof_gpu_env *env, ef_err *e)
{
    memset(env, 0, sizeof *env);
    cudaRuntimeGetVersion(&env->runtime_version);
    ncclGetVersion(&env->nccl_version);
    cudaDriverGetVersion(&env->driver_version);
    if (env->driver_version == 0) {
        ef_fail(e, EF_E_INFEASIBLE, "no CUDA driver on this machine (CUDA "
                "runtime %d, NCCL %d.%d.%d): no GPU to profile",
                env->runtime_version, env->nccl_version / 10000,
                env->nccl_version / 100 % 100, env->nccl_version % 100);
        return PROF_GPU_NO_DEVICE;
    }
    int n = 0; /* cudaGetDeviceCount leaves it untouched on error */
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n <= 0) {
        ef_fail(e, EF_E_INFEASIBLE, "no usable GPU (cudaGetDeviceCount: %s; "
                "driver %d, runtime %d)",
                rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices",
                env->driver_version, env->runtime_version);
        return PROF_GPU_NO_DEVICE;
    }
    env->ndevices = n;
    cudaDeviceProp p;
    rc = cudaGetDeviceProperties(&p, 0);
    if (rc != cudaSuccess)
        return cuda_failed(e, "cudaGetDeviceProperties", rc);
    snprintf(env->name, sizeof env->name, "%s", p.name);
    env->memory = p.totalGlobalMem;
    return PROF_GPU_OK;
}

extern "C" void prof_gpu_close(prof_gpu_ctx *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->ncomm; i++)
        ncclCommDestroy(c->comm[i]);
    for (int i = 0; i < c->k; i++) {
        cudaSetDevice(i);
        if (c->stream[i])
            cudaStreamDestroy(c->stream[i]);
        cudaFree(c->grad[i]);
        cudaFree(c->sink[i]);
    }
    free(c);
}

/* Stream, zeroed gradient buffer and sink of GPU i; the kernel's grid
 * from GPU 0's multiprocessors. */
static cudaError_t setup_gpu(prof_gpu_ctx *c, int i)
{
    size_t bytes = c->count * sizeof(float);
    cudaDeviceProp p;
    cudaError_t rc = cudaSetDevice(i);
    if (rc == cudaSuccess)
        rc = cudaGetDeviceProperties(&p, i);
    if (rc == cudaSuccess && i == 0)
        c->blocks = p.multiProcessorCount * 8;
    if (rc == cudaSuccess)
        rc = cudaStreamCreateWithFlags(&c->stream[i], cudaStreamNonBlocking);
    if (rc == cudaSuccess)
        rc = cudaMalloc((void **)&c->grad[i], bytes);
    if (rc == cudaSuccess)
        rc = cudaMemset(c->grad[i], 0, bytes);
    if (rc == cudaSuccess)
        rc = cudaMalloc((void **)&c->sink[i], sizeof(float));
    if (rc == cudaSuccess)
        rc = cudaDeviceSynchronize();
    return rc;
}

extern "C" prof_gpu_status prof_gpu_open(prof_gpu_ctx **ctx, int k,
                                         size_t grad_bytes, ef_err *e)
{
    *ctx = NULL;
    prof_gpu_env env;
    prof_gpu_status st = prof_gpu_probe(&env, e);
    if (st != PROF_GPU_OK)
        return st;
    if (k < 1 || k > 64 || k > env.ndevices) {
        ef_fail(e, EF_E_INFEASIBLE, "%d GPUs asked for, %d visible", k,
                env.ndevices);
        return PROF_GPU_NO_DEVICE;
    }
    prof_gpu_ctx *c = (prof_gpu_ctx *)calloc(1, sizeof *c);
    if (!c) {
        ef_fail(e, EF_E_INTERNAL, "out of memory");
        return PROF_GPU_FAILED;
    }
    c->k = k;
    c->count = (grad_bytes + sizeof(float) - 1) / sizeof(float);
    for (int i = 0; i < k; i++) {
        cudaError_t rc = setup_gpu(c, i);
        if (rc != cudaSuccess) {
            prof_gpu_close(c);
            return cuda_failed(e, "setting up a GPU (stream, gradient "
                               "buffer)", rc);
        }
    }
    if (k > 1) {
        int devs[64];
        for (int i = 0; i < k; i++)
            devs[i] = i;
        ncclResult_t nr = ncclCommInitAll(c->comm, k, devs);
        if (nr != ncclSuccess) {
            prof_gpu_close(c);
            ef_fail(e, EF_E_INTERNAL, "NCCL: ncclCommInitAll over %d GPUs "
                    "failed: %s", k, ncclGetErrorString(nr));
            return PROF_GPU_FAILED;
        }
        c->ncomm = k;
    }
    *ctx = c;
    return PROF_GPU_OK;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

extern "C" prof_gpu_status prof_gpu_time(prof_gpu_ctx *c, prof_gpu_what what,
                                         double flops_per_gpu, int nsteps,
                                         double *seconds, ef_err *e)
{
    *seconds = 0;
    double per_thread = flops_per_gpu / FLOPS_PER_ITER /
                        ((double)c->blocks * THREADS);
    long long iters = (long long)(per_thread + 0.5);
    if (iters < 1)
        iters = 1;
    cudaError_t rc;
    double t0 = now_s();
    for (int s = 0; s < nsteps; s++) {
        if (what != PROF_GPU_ALLREDUCE)
            for (int i = 0; i < c->k; i++) {
                cudaSetDevice(i);
                prof_burn<<<c->blocks, THREADS, 0, c->stream[i]>>>(
                    c->sink[i], iters, (float)s);
                rc = cudaGetLastError();
                if (rc != cudaSuccess)
                    return cuda_failed(e, "launching the compute kernel", rc);
            }
        if (what != PROF_GPU_COMPUTE && c->k > 1) {
            ncclResult_t nr = ncclGroupStart();
            for (int i = 0; i < c->k && nr == ncclSuccess; i++)
                nr = ncclAllReduce(c->grad[i], c->grad[i], c->count,
                                   ncclFloat, ncclSum, c->comm[i],
                                   c->stream[i]);
            ncclResult_t ne = ncclGroupEnd();
            if (nr == ncclSuccess)
                nr = ne;
            if (nr != ncclSuccess) {
                ef_fail(e, EF_E_INTERNAL, "NCCL: ncclAllReduce failed: %s",
                        ncclGetErrorString(nr));
                return PROF_GPU_FAILED;
            }
        }
    }
    for (int i = 0; i < c->k; i++) {
        cudaSetDevice(i);
        rc = cudaStreamSynchronize(c->stream[i]);
        if (rc != cudaSuccess)
            return cuda_failed(e, "cudaStreamSynchronize", rc);
    }
    *seconds = now_s() - t0;
    return PROF_GPU_OK;
}
