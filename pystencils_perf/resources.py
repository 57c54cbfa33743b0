"""What a kernel's compiled code needs per thread and block: registers, spills, shared memory.

Occupancy (resident blocks per SM) follows from these, and folding changes them;
only a compiler knows them. Adapters supply them per fold (`perf_resources`,
e.g. the pystencils adapter through nvcc or NVRTC); `rank`, `create_kernel`, `measure` and
`validate` all ask the same hook, and a ranking says when nothing answered and
occupancy rests on the thread count alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ResourceUsage:
    """What ptxas allocated for one kernel function on one architecture, and which compiler asked it."""

    arch: str
    registers_per_thread: int
    spill_store_bytes: int
    spill_load_bytes: int
    shared_memory_bytes: int
    #: e.g. "nvcc 13.0" or "NVRTC 11.8 + ptxas": register counts differ between CUDA releases
    compiler: str = ""

    def __str__(self) -> str:
        spills = f", spills {self.spill_store_bytes} B stored / {self.spill_load_bytes} B loaded" if self.spilled else ""
        built = f"{self.arch}, {self.compiler}" if self.compiler else self.arch
        return f"{self.registers_per_thread} registers ({built}){spills}"

    @property
    def spilled(self) -> bool:
        return bool(self.spill_store_bytes or self.spill_load_bytes)


#: one fold's resources, by fold (fx, fy, fz)
ResourcesByFold = dict


def with_resources(model, resources: ResourcesByFold):
    """`model` with the registers and shared memory each fold's compiled code needs (unfolded: its own)."""
    if not resources:
        return model
    unfolded = resources.get((1, 1, 1))
    return replace(
        model,
        registers_per_thread=unfolded.registers_per_thread if unfolded else model.registers_per_thread,
        shared_memory_bytes=max([model.shared_memory_bytes, *(r.shared_memory_bytes for r in resources.values())]),
        registers_by_fold=tuple(sorted((fold, r.registers_per_thread) for fold, r in resources.items())),
    )


def resources_note(resources: ResourcesByFold, folds, device=None) -> str:
    """One line for reports: what the registers come from, or that occupancy is assumed; and where the code
    was built for another architecture than `device`'s, that it was a stand-in."""
    if not resources:
        return ("occupancy assumed from threads per block: no plugin measured registers (neither nvcc on PATH "
                "nor the NVRTC wheels pystencils-perf installs, `pip install nvidia-cuda-nvrtc-cu11==11.8.89 "
                "nvidia-cuda-nvcc-cu11==11.8.89`, or a kernel they cannot compile)")
    measured = ", ".join(f"{'x'.join(map(str, f))}: {resources[f]}" for f in sorted(resources))
    missing = [f for f in folds if f not in resources]
    tail = f"; folds {', '.join('x'.join(map(str, f)) for f in missing)} assume the unfolded count" if missing else ""
    wanted = f"sm_{device.compute_capability.replace('.', '')}" if device and device.compute_capability else None
    if wanted and any(r.arch != wanted for r in resources.values()):
        tail += (f"; built for the nearest architecture the compiler knows, not {wanted} (registers differ: "
                 "the NVRTC 11.8 wheels pystencils-perf installs build it: `pip install nvidia-cuda-nvrtc-cu11==11.8.89 "
                 "nvidia-cuda-nvcc-cu11==11.8.89`)")
    return f"registers per fold {measured}{tail}"
