// Kernels whose SASS tests pystencils_perf.adapters.sass: two dependent batches of eight loads, a rolled loop, and
// a block's tile in shared memory read four times per thread.
extern "C" __global__ void two_batches(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; k++) a += in[i + k * 1024];
  int j = (int)a;
  float b = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; k++) b = fmaf(b, 0.5f, in[j + k * 1024]);
  out[i] = b;
}
extern "C" __global__ void rolled(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = 0.0f;
#pragma unroll 1
  for (int k = 0; k < n; k++) a = fmaf(a, 0.5f, in[i + k * 1024]);
  out[i] = a;
}
extern "C" __global__ void shared_tile(const float *in, float *out) {
  __shared__ float tile[128];
  tile[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
  __syncthreads();
  float a = 0.0f;
#pragma unroll
  for (int k = 0; k < 4; k++) a = fmaf(a, 0.5f, tile[(threadIdx.x + 32 * k) % 128]);
  out[blockIdx.x * 128 + threadIdx.x] = a;
}
