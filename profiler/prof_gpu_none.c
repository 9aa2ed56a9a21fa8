/* prof_gpu_none.c: the GPU side of a build without CUDA (HAVE_CUDA=0):
 * every call answers PROF_GPU_NOT_BUILT (see prof_gpu.h). */
#include "profiler/prof_gpu.h"

#include <string.h>

static prof_gpu_status not_built(ef_err *e)
{
    ef_fail(e, EF_E_INFEASIBLE,
            "efplan was built without CUDA: the GPU profiler needs the CUDA "
            "toolkit (nvcc) and NCCL at build time (rebuild with make "
            "HAVE_CUDA=1; see README, \"profile\")");
    return PROF_GPU_NOT_BUILT;
}

prof_gpu_status prof_gpu_probe(prof_gpu_env *env, ef_err *e)
{
    memset(env, 0, sizeof *env);
    return not_built(e);
}

prof_gpu_status prof_gpu_open(prof_gpu_ctx **ctx, int k, size_t grad_bytes,
                              ef_err *e)
{
    (void)k;
    (void)grad_bytes;
    *ctx = NULL;
    return not_built(e);
}

prof_gpu_status prof_gpu_time(prof_gpu_ctx *ctx, prof_gpu_what what,
                              double flops_per_gpu, int nsteps,
                              double *seconds, ef_err *e)
{
    (void)ctx;
    (void)what;
    (void)flops_per_gpu;
    (void)nsteps;
    *seconds = 0;
    return not_built(e);
}

void prof_gpu_close(prof_gpu_ctx *ctx)
{
    (void)ctx;
}
