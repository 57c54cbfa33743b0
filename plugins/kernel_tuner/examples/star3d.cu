// The 3D star stencil of radius R (R = 4: the 25-point stencil) on double arrays with R ghost
// layers on every side, x fastest in memory: dst = 0.25 * (sum of the 6R + 1 src points).
// Each thread updates tile_size_z consecutive points in z (thread folding); the z-neighbours
// those points share are loaded once, as the pystencils-perf model of folding assumes.
// kernel_tuner defines block_size_x/y/z and tile_size_z; NX, NY, NZ (interior points) and R
// come from -D compiler options.
#define SX ((long)NX + 2 * R)
#define SXY (SX * ((long)NY + 2 * R))

extern "C" __global__ void star3d(double *__restrict__ dst, const double *__restrict__ src)
{
    const int x = blockIdx.x * block_size_x + threadIdx.x;
    const int y = blockIdx.y * block_size_y + threadIdx.y;
    const int z0 = (blockIdx.z * block_size_z + threadIdx.z) * tile_size_z;
    if (x >= NX || y >= NY || z0 >= NZ)
        return;
    const long c0 = (z0 + R) * SXY + (y + R) * SX + (x + R);
    double column[tile_size_z + 2 * R];
#pragma unroll
    for (int m = 0; m < tile_size_z + 2 * R; ++m)
        column[m] = z0 + m - R < NZ + R ? src[c0 + (m - R) * SXY] : 0.0;
#pragma unroll
    for (int k = 0; k < tile_size_z; ++k) {
        if (z0 + k < NZ) {
            const long c = c0 + k * SXY;
            double sum = column[k + R];
#pragma unroll
            for (int r = 1; r <= R; ++r)
                sum += src[c - r] + src[c + r] + src[c - r * SX] + src[c + r * SX] + column[k + R - r] + column[k + R + r];
            dst[c] = 0.25 * sum;
        }
    }
}
