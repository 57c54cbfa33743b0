// A 15x15 convolution that stages each block's input tile in shared memory, written for pystencils-perf so that a
// SPEC with `source` compiles each launch's own code (convolution_shmem_source.py). Our own code: it does what
// validation/a100_convolution/convolution_shmem.py describes of Kernel Tuner's shared-memory convolution (a
// block copies its tile and halo into shared memory row by row, column by column, each thread computes a
// tile_size_x x tile_size_y register tile of outputs block_size apart, the taps read shared memory), with Kernel
// Tuner's parameter names as macros, set with -D.
#define IMAGE 4096
#define FILTER 15
#define HALO (FILTER - 1)
#define INPUT (IMAGE + HALO)

#if read_only
#define LOAD(address) __ldg(address)
#else
#define LOAD(address) (*(address))
#endif

#define ROWS (block_size_y * tile_size_y + HALO)
#define COLUMNS (block_size_x * tile_size_x + HALO)
// padding widens a row whose block is no multiple of 32 wide, so that the taps' columns spread over the banks
#if use_padding && (block_size_x % 32) != 0
#define PITCH (COLUMNS + ((32 - (HALO + block_size_x * (tile_size_x - 1))) & 31))
#else
#define PITCH COLUMNS
#endif

__constant__ float weights[FILTER * FILTER];

extern "C" __global__ void convolution15_shared(float *out, const float *in) {
  __shared__ float tile[ROWS][PITCH];
  const int x0 = blockIdx.x * block_size_x * tile_size_x, y0 = blockIdx.y * block_size_y * tile_size_y;
  for (int row = threadIdx.y; row < ROWS; row += block_size_y)
    for (int column = threadIdx.x; column < COLUMNS; column += block_size_x)
      if (y0 + row < INPUT && x0 + column < INPUT) tile[row][column] = LOAD(in + (y0 + row) * INPUT + x0 + column);
  __syncthreads();

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
        for (int tx = 0; tx < tile_size_x; tx++)
          acc[ty][tx] += tile[threadIdx.y + ty * block_size_y + fy][threadIdx.x + tx * block_size_x + fx] *
                         weights[fy * FILTER + fx];
#pragma unroll
  for (int ty = 0; ty < tile_size_y; ty++)
#pragma unroll
    for (int tx = 0; tx < tile_size_x; tx++) {
      const int y = y0 + threadIdx.y + ty * block_size_y, x = x0 + threadIdx.x + tx * block_size_x;
      if (y < IMAGE && x < IMAGE) out[y * IMAGE + x] = acc[ty][tx];
    }
}
