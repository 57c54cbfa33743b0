"""What a kernel's compiled code needs per thread and block: registers, spills, shared memory.

Occupancy (resident blocks per SM) follows from these, and folding changes them;
only a compiler knows them. Adapters supply them per fold (`perf_resources`,
e.g. the pystencils adapter through nvcc or NVRTC), or per launch where the code takes its
block size as a compile-time constant (`perf_launch_resources`, e.g. a CUDA description whose
source reads Kernel Tuner's ``block_size_x`` macros); `rank`, `create_kernel`, `measure` and
`validate` all ask the same hooks, and a ranking says when nothing answered and
occupancy rests on the thread count alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .vendors import VENDORS, vendor_of


#: `ResourceUsage.arch` of what measured data recorded of the code that ran (its registers as run on the GPU), not
#: a compile here
RECORDED_ARCH = "as run"


@dataclass(frozen=True)
class ResourceUsage:
    """What the compiler allocated for one kernel function on one architecture, and which compiler asked it.

    NVIDIA's ptxas reports registers and spills in bytes; AMD's compiler
    reports vector registers (VGPRs, what occupancy counts per thread), scalar
    registers per wavefront (SGPRs), the number of spill stores and the scratch a lane
    keeps; the spill bytes are then counted in its assembly (`hip_compiler.compile_code`).
    """

    arch: str
    #: registers per thread (on AMD GPUs the VGPRs, AGPRs included where they share the VGPR file)
    registers_per_thread: int
    spill_store_bytes: int
    spill_load_bytes: int
    #: shared memory (AMD: LDS) per block
    shared_memory_bytes: int
    #: e.g. "nvcc 13.0" or "NVRTC 11.8 + ptxas": register counts differ between CUDA releases
    compiler: str = ""
    #: scalar registers per wavefront (SGPRs, AMD only; None where the compiler has none)
    scalar_registers: int | None = None
    #: registers spilled to scratch memory (AMD's count; NVIDIA's spills are in the byte counts)
    spilled_registers: int = 0
    #: bytes of local memory a thread keeps its spilled values in (AMD: ScratchSize per lane), which decides the
    #: cache level they live in; None where the compiler does not say: each spilled byte is then stored once,
    #: and the spill stores are what it keeps
    spill_kept_bytes: int | None = None
    #: how often a thread's warp stops to wait for its outstanding loads (AMD: the compiled code's
    #: ``s_waitcnt vmcnt`` reached with loads outstanding; NVIDIA: waits on the scoreboards of loads in its SASS,
    #: `sass.sass_counts`, so far in a study only): each wait exposes a memory latency; None where the code was not
    #: read or has a loop whose trip count it does not give
    load_waits_per_thread: float | None = None
    #: instructions a thread's warp issues, as compiled (NVIDIA: counted in its SASS, `sass.sass_counts`, so far in
    #: a study only: `compile_convolution_registers.py --sass`); None where the code was not read
    instructions_per_thread: float | None = None
    #: 4-byte words a thread loads from shared memory, as compiled (`AssemblyCounts.shared_load_words` over the
    #: thread's trips): where a compiler reloads values it could not keep in registers, more than the
    #: description's distinct loads; None where the code was not read
    shared_load_words_per_thread: float | None = None

    def __str__(self) -> str:
        spills = ""
        if self.spilled_registers:  # AMD: the count the compiler reports
            spills = f", spills {self.spilled_registers} registers"
        elif self.spill_store_bytes or self.spill_load_bytes:
            spills = f", spills {self.spill_store_bytes} B stored / {self.spill_load_bytes} B loaded"
        built = f"{self.arch}, {self.compiler}" if self.compiler else self.arch
        registers = (
            f"{self.registers_per_thread} registers"
            if self.scalar_registers is None
            else f"{self.registers_per_thread} VGPRs, {self.scalar_registers} SGPRs"
        )
        return f"{registers} ({built}){spills}"

    @property
    def spill_footprint_bytes(self) -> int:
        """The bytes a thread keeps spilled: what the compiler reserves for them, else its spill stores."""
        return self.spill_store_bytes if self.spill_kept_bytes is None else self.spill_kept_bytes

    @property
    def spilled(self) -> bool:
        return bool(self.spill_store_bytes or self.spill_load_bytes or self.spilled_registers)


#: one fold's resources, by fold (fx, fy, fz)
ResourcesByFold = dict


def with_resources(model, resources: ResourcesByFold):
    """`model` with the registers, shared memory, spills and load waits each fold's compiled code needs (unfolded:
    its own)."""
    if not resources:
        return model
    unfolded = resources.get((1, 1, 1))
    return replace(
        model,
        registers_per_thread=unfolded.registers_per_thread if unfolded else model.registers_per_thread,
        shared_memory_bytes=max([model.shared_memory_bytes, *(r.shared_memory_bytes for r in resources.values())]),
        registers_by_fold=tuple(sorted((fold, r.registers_per_thread) for fold, r in resources.items())),
        load_waits_by_fold=tuple(
            sorted(
                (fold, r.load_waits_per_thread) for fold, r in resources.items() if r.load_waits_per_thread is not None
            )
        ),
        spills_by_fold=tuple(
            sorted(
                (fold, (r.spill_store_bytes, r.spill_load_bytes, r.spill_footprint_bytes))
                for fold, r in resources.items()
                if r.spilled
            )
        ),
    )


def with_launch_resources(model, resources: dict):
    """`model` with the registers and shared memory each launch's own compiled code needs (`resources`:
    `LaunchConfig` -> `ResourceUsage`; `KernelModel.shared_memory_for` takes each launch's own)."""
    if not resources:
        return model
    return replace(
        model,
        resources_by_launch=tuple(
            sorted((((launch.block, launch.fold), r) for launch, r in resources.items()), key=lambda item: item[0])
        ),
    )


def launch_resources_note(resources: dict) -> str:
    """One line for reports on registers compiled per launch: their range, the compiler, and how many spill."""
    registers = [r.registers_per_thread for r in resources.values()]
    built = sorted({f"{r.arch}, {r.compiler}" if r.compiler else r.arch for r in resources.values()})
    spilling = sum(r.spilled for r in resources.values())
    return (
        f"registers per launch (its block size compiled in) {min(registers)}-{max(registers)} "
        f"({'; '.join(built)}) for {len(resources)} launches" + (f", {spilling} of them spill" if spilling else "")
    )


def resources_note(resources: ResourcesByFold, folds, device=None, unavailable: str | None = None) -> str:
    """One line for reports: what the registers come from, or that occupancy is assumed and why (`unavailable`:
    what the kernel's plugin says, `perf_resources_unavailable`); and where the code was built for another
    architecture than `device`'s, that it was a stand-in."""
    if not resources:
        hint = (VENDORS["nvidia"] if device is None else vendor_of(device)).compiler_hint
        why = unavailable or f"{hint}, or a kernel they cannot compile"
        return f"occupancy assumed from threads per block: no plugin measured registers ({why})"
    measured = ", ".join(f"{'x'.join(map(str, f))}: {resources[f]}" for f in sorted(resources))
    missing = [f for f in folds if f not in resources]
    tail = f"; folds {', '.join('x'.join(map(str, f)) for f in missing)} assume the unfolded count" if missing else ""
    nvidia = device is not None and device.vendor == "nvidia" and device.compute_capability
    wanted = f"sm_{device.compute_capability.replace('.', '')}" if nvidia else None
    if wanted and any(r.arch != wanted for r in resources.values()):
        tail += (
            f"; built for the nearest architecture the compiler knows, not {wanted} (registers differ: "
            "the NVRTC 11.8 wheels pystencils-perf installs build it: `pip install nvidia-cuda-nvrtc-cu11==11.8.89 "
            "nvidia-cuda-nvcc-cu11==11.8.89`)"
        )
    return f"registers per fold {measured}{tail}"


@dataclass(frozen=True)
class AssemblyCounts:
    """How the compiled code of one kernel waits for its memory loads, and what its spills move, as read in its
    assembly (AMD: `hip_compiler.assembly_counts`; NVIDIA: `sass.sass_counts`). Static counts: code in a loop
    counts once, whatever its trip count."""

    #: a warp stops for loads it has outstanding (AMD: ``s_waitcnt vmcnt(N)`` reached with more than N of
    #: them; NVIDIA: an instruction waits on the scoreboard of a load issued since the warp last waited): each
    #: exposes a memory latency
    waits: int
    #: loads from global memory (AMD: vector-memory loads, global, buffer, flat and scratch; NVIDIA: ``LDG``,
    #: ``LD`` and ``LDL``), spilled registers' included
    loads: int
    #: bytes per lane the spill stores write and the reloads read
    spill_store_bytes: int
    spill_load_bytes: int
    #: fused multiply-add instructions, by which a caller that knows its kernel's count per thread can scale
    #: counts from one trip of a loop to the whole thread
    fma_instructions: int
    #: the code branches back (a loop the compiler kept)
    looped: bool
    #: instructions (NVIDIA: all of the kernel's but the padding after its end; None where not counted)
    instructions: int | None = None
    #: a loop that loads and holds no FMA (a shared-memory copy's, whose trips a thread's index decides): its
    #: waits repeat as often as it runs, which no count of FMAs tells
    loop_loads_without_fma: bool = False
    #: 4-byte words a lane loads from shared memory (AMD: LDS reads, ``ds_read*`` and ``ds_load*``; NVIDIA:
    #: ``LDS``): a ``ds_read2_b64`` or an ``LDS.128`` loads 4, an ``LDS.U8`` 1
    shared_load_words: int = 0
