// A 15x15 convolution without shared memory, written for pystencils-perf to check on its PTX which
// loads nvcc merges (see the docstring of convolution.py). It re-implements, in our own code,
// the behaviour of Kernel Tuner's convolution benchmark as measured on the A100 (use_shmem 0,
// use_cmem 1): per-thread tiles strided by the block size, fully unrolled loops, guards only where
// the tile does not divide the image, and __ldg loads when read_only is 1. The macros are Kernel
// Tuner's tunable parameters, set with -D.
#define IMAGE 4096
#define FILTER 15
#define INPUT (IMAGE + FILTER - 1)

#if read_only
#define LOAD(address) __ldg(address)
#else
#define LOAD(address) (*(address))
#endif

#define GUARDED ((IMAGE % (block_size_y * tile_size_y) != 0) || (IMAGE % (block_size_x * tile_size_x) != 0))

__constant__ float weights[FILTER * FILTER];

extern "C" __global__ void convolution15(float *out, float *in) {
  const int x0 = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
  const int y0 = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;
  float acc[tile_size_y][tile_size_x];
#pragma unroll
  for (int ty = 0; ty < tile_size_y; ty++)
#pragma unroll
    for (int tx = 0; tx < tile_size_x; tx++) acc[ty][tx] = 0.0f;
#pragma unroll
  for (int fy = 0; fy < FILTER; fy++)
#pragma unroll
    for (int fx = 0; fx < FILTER; fx++)
#pragma unroll
      for (int ty = 0; ty < tile_size_y; ty++)
#pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) {
          const int y = y0 + ty * block_size_y, x = x0 + tx * block_size_x;
          float value = 0.0f;
#if GUARDED
          if (y < INPUT && x < INPUT)
#endif
            value = LOAD(in + (y + fy) * INPUT + x + fx);
          acc[ty][tx] += value * weights[fy * FILTER + fx];
        }
#pragma unroll
  for (int ty = 0; ty < tile_size_y; ty++)
#pragma unroll
    for (int tx = 0; tx < tile_size_x; tx++) {
      const int y = y0 + ty * block_size_y, x = x0 + tx * block_size_x;
#if GUARDED
      if (y < IMAGE && x < IMAGE)
#endif
        out[y * IMAGE + x] = acc[ty][tx];
    }
}
