"""What each GPU vendor means to pystencils-perf, in one table (`VENDORS`): a new vendor is one entry here, plus
its compilers (`adapters.compilers`, the generator layer)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GridLimits:
    """How large a launch grid one GPU runtime accepts along x, y and z."""

    #: the runtime the limits are of, as messages name it
    runtime: str
    #: the most blocks along x, y and z
    max_blocks: tuple[int, int, int]
    #: the most threads (blocks x block size) along x, y and z; None where only blocks are limited
    max_threads: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class Vendor:
    """One GPU vendor: how messages name it, the language its kernels are written in, the grids its runtime
    launches, the GPU generations device files may name, and where registers would come from."""

    #: how messages name it
    name: str
    #: the language and runtime of its kernels, as pystencils names the target (``Target.CUDA``, ``Target.HIP``)
    runtime: str
    grid: GridLimits
    #: the GPU generations the model's tables may know: another name in a device file is a typo or a new GPU,
    #: which needs data of its own (docs/devices.md); the newest are listed though the library has no file of them
    architectures: tuple[str, ...]
    #: what the note says where no compiler measured registers
    compiler_hint: str
    #: what a device file's ``compute_capability`` names for this vendor: the architecture its code is compiled for
    compute_capability: str
    #: shared memory (AMD: the LDS) in banks of `shared_memory_bank_bytes`: per cycle each bank delivers one word
    #: to the lanes of one request, as many lanes as there are banks (`estimate.shared`)
    shared_memory_banks: int = 32
    shared_memory_bank_bytes: int = 4
    #: whether shared memory's wavefronts pass the L1 cache's data stage (NVIDIA's unified L1/shared memory), so
    #: that they and the L1's own wavefronts take turns; else shared memory is a unit of its own beside the L1
    shared_memory_in_l1_data_path: bool = False
    #: the most shared memory a block's statically sized arrays may take (`KernelModel.shared_memory_is_static`)
    static_shared_memory_limit_bytes: int = 48 * 1024


#: the GPU vendors, by `Device.vendor`
VENDORS = {
    "nvidia": Vendor(
        name="NVIDIA",
        runtime="CUDA",
        # every compute capability from 3.0 on (CUDA C++ Programming Guide, "Features and Technical
        # Specifications": maximum x-dimension of a grid 2^31 - 1, y and z 65535)
        grid=GridLimits("CUDA", (2**31 - 1, 65535, 65535)),
        architectures=("maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell"),
        compiler_hint=(
            "neither nvcc on PATH nor the NVRTC wheels pystencils-perf installs, `pip install "
            "nvidia-cuda-nvrtc-cu11==11.8.89 nvidia-cuda-nvcc-cu11==11.8.89`"
        ),
        compute_capability='its major.minor such as "8.0"',
        # 32 banks of 4 B from compute capability 5.x on, one word per bank and cycle; L1 and shared memory are one
        # unit whose data stage serves both (CUDA C++ Programming Guide, "Compute Capabilities": "Shared Memory")
        shared_memory_banks=32,
        shared_memory_bank_bytes=4,
        shared_memory_in_l1_data_path=True,
        # "Kernels relying on shared memory allocations over 48 KB per block ... must use dynamic shared memory"
        # (CUDA C++ Programming Guide, "Compute Capabilities", compute capability 7.x and later)
        static_shared_memory_limit_bytes=48 * 1024,
    ),
    "amd": Vendor(
        name="AMD",
        runtime="HIP",
        # hipGetDeviceProperties reports maxGridSize (2^31 - 1, 65536, 65536) blocks (ROCm/clr,
        # hipamd/src/hip_device.cpp, ihipGetDeviceProperties); and the HSA kernel dispatch packet that HIP launches
        # through counts the grid in threads, in 32-bit fields grid_size_x/y/z (HSA Platform System Architecture
        # Specification 1.2, sec. 2.8 "Kernel Dispatch Packet"; rocminfo's "Grid Max Size per Dimension" 2^32 - 1)
        grid=GridLimits("HIP", (2**31 - 1, 65536, 65536), (2**32 - 1,) * 3),
        architectures=("gcn5", "cdna1", "cdna2", "cdna3", "cdna4", "rdna2", "rdna3", "rdna4"),
        compiler_hint="no hipcc (ROCm's HIP compiler) on PATH or in $ROCM_PATH/bin that builds the device's architecture",
        compute_capability='its gfx target such as "gfx90a"',
        # the LDS: 32 banks of 4 B, 128 B per cycle and CU, a unit beside the vector L1 (ROCm Omniperf
        # documentation, "Local data share (LDS)")
        shared_memory_banks=32,
        shared_memory_bank_bytes=4,
        shared_memory_in_l1_data_path=False,
        # a workgroup allocates at most 64 KiB of LDS, static or dynamic (hipDeviceProp_t::sharedMemPerBlock of
        # CDNA and RDNA GPUs)
        static_shared_memory_limit_bytes=64 * 1024,
    ),
}


def vendor_of(device) -> Vendor:
    """`device`'s vendor; NVIDIA's for a device of a vendor the table lacks (device files name a known one)."""
    return VENDORS.get(device.vendor, VENDORS["nvidia"])
