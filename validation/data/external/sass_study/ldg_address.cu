// What an __ldg of an int-computed index costs in instructions (validation/data/external/README.md, study of
// 2026-11-27). The same 15x15 weighted sum of one float array three ways: a plain load, a const __restrict__ load
// (the read-only path, LDG.E.CONSTANT) and __ldg, each of the index (y * W + x) computed as an int, as the
// convolution of the Kernel Tuner caches computes it. Written for this study; count each kernel's instructions:
//
//   nvcc -cubin -arch=sm_90 -O3 -o ldg_address.cubin ldg_address.cu
//   nvdisasm -c ldg_address.cubin | awk '/\.text\.k_ldg:/{p=1;next} /\.text\./{p=0} p' | grep -cE '/\*[0-9a-f]{4,}\*/'
//
// nvcc 13.0, sm_90: plain 704 instructions, const __restrict__ 704 (all 450 loads LDG.E.CONSTANT), __ldg 1152,
// for 450 loads each (225 of the array, 225 of the weights).
#define W 4110

// one kernel per way of loading in[y * W + x]: its name, its parameter list and the load
#define WEIGHTED_SUM(NAME, PARAMETERS, LOAD)                                                       \
    extern "C" __global__ void NAME PARAMETERS {                                                   \
        int x0 = blockIdx.x * blockDim.x + threadIdx.x, y0 = blockIdx.y;                           \
        float sum = 0.f;                                                                           \
        _Pragma("unroll") for (int i = 0; i < 15; i++)                                             \
        _Pragma("unroll") for (int j = 0; j < 15; j++) {                                           \
            int x = x0 + j, y = y0 + i;                                                            \
            sum += (LOAD) * weights[i * 15 + j];                                                   \
        }                                                                                          \
        out[y0 * 4096 + x0] = sum;                                                                 \
    }

WEIGHTED_SUM(k_plain, (float *out, float *in, float *weights), in[y * W + x])
WEIGHTED_SUM(k_restrict, (float *__restrict__ out, const float *__restrict__ in, const float *__restrict__ weights),
             in[y * W + x])
WEIGHTED_SUM(k_ldg, (float *out, float *in, float *weights), __ldg(in + (y * W + x)))
