"""The instructions a thread of NVIDIA code issues, read from its SASS (the machine code ptxas wrote).

The issue term of the throughput model needs the warp instructions per update. Counted from the
kernel's accesses and flops it misses what the compiler adds: address arithmetic, predicates,
conversions, moves. These differ a lot between variants of one kernel: the convolution of the
benchmark_hub caches (use_shmem 0, 15 x 15) issues 480 instructions per output with plain loads
(ptxas folds each load's offset into its address) but 1448 through the read-only path (``__ldg``:
a 64-bit address computed per load), and 1840 where each of those loads sits under an ``if`` of
its own (nvcc 13, sm_86, tile 1x1). Measured, the last two differ by as much (1.2-1.4x).

The latency term needs how many loads a warp keeps in flight, which the compiler's schedule decides.
The SASS says it too: since Volta each instruction carries control bits (Jia et al., "Dissecting
the NVIDIA Volta GPU Architecture via Microbenchmarking", arXiv:1804.06826, section 2.1: from bit 105
up, 4 bits stall cycles, a yield bit, a 3-bit write-barrier index, a 3-bit read-barrier index, a
6-bit wait mask, reuse flags). A load names the scoreboard its result will signal; the first
instruction that waits on that scoreboard stalls until the value is there. Loads outstanding when
the code waits are what the warp keeps in flight; a thread's loads over that number are the
latencies it waits (`SassCounts.load_rounds`). On sm_86 the convolution's code keeps 26 plain loads
in flight at tile 1x1, guarded or not, 22 guarded ``__ldg`` loads, and 4 unguarded ones (nvcc 13).

nvdisasm (NVIDIA's ``nvidia-cuda-nvdisasm`` wheel, a default dependency, or one on PATH) lists
the cubin's instructions; straight-line code issues each once per warp. Code with a loop (a
branch back) issues its body as often as the loop runs, which the listing does not say:
`SassCounts.looped` tells, and the counts are then left unknown where the caller cannot scale them.
nvdisasm 13 reads Turing (sm_75) and later; for Volta (sm_70) nothing is read.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: the oldest architecture nvdisasm 13 disassembles
OLDEST_ARCH = 75

#: ``/*0120*/  @!P0 LDG.E R27, [R2.64] ;  /* 0x...7981 */``: address, the instruction (a predicate may
#: precede it), and with ``-hex`` the low 64 bits; the next line holds the high 64 bits, the control bits
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
_HIGH_WORD = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/\s*$")
#: loads from memory (global, generic, local: spilled registers): their latency is the memory's
_MEMORY_LOADS = ("LDG", "LD", "LDL")
#: the scoreboards an instruction can set and wait on
_SCOREBOARDS = 6
_NO_SCOREBOARD = 7
_BRANCH_TARGET = re.compile(r"`?\(?(\.L_x_\d+)\)?")
_LABEL = re.compile(r"^(\.L_x_\d+):")


@dataclass(frozen=True)
class SassCounts:
    """Static counts of one kernel function's SASS: code in a loop counts once, whatever its trip count."""

    #: instructions a warp issues, without the padding after the kernel's end (``NOP``, the ``BRA`` to itself)
    instructions: int
    #: fused multiply-adds (``FFMA``, ``DFMA``, ``HFMA2``), by which a caller that knows its kernel's count per
    #: thread can scale counts from one trip of a loop to the whole thread
    fma_instructions: int
    #: the code branches back (a loop the compiler kept)
    looped: bool
    #: memory loads (``LDG``, ``LD``, ``LDL``)
    loads: int = 0
    #: the latencies a thread waits for its loads: its loads over the loads outstanding, on average, when its code
    #: waits on a load's scoreboard; None where the listing has no control bits (nvdisasm without ``-hex``)
    load_rounds: float | None = None


def find_nvdisasm() -> str | None:
    """nvdisasm from the ``nvidia-cuda-nvdisasm`` wheel, else on PATH."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except ModuleNotFoundError:
        spec = None
    for root in (spec.submodule_search_locations or ()) if spec else ():
        for candidate in sorted(Path(root).glob("cu*/bin/nvdisasm")):
            return str(candidate)
    return shutil.which("nvdisasm")


@functools.cache
def _nvdisasm() -> str | None:
    return find_nvdisasm()


def readable(arch: str) -> bool:
    """Whether nvdisasm is installed and reads code of `arch` (``sm_XY``)."""
    return _nvdisasm() is not None and int(arch[3:].rstrip("a")) >= OLDEST_ARCH


def sass_counts(cubin: bytes, function: str) -> SassCounts | None:
    """The `SassCounts` of `function` in `cubin`, or None where nvdisasm is missing or cannot read it."""
    nvdisasm = _nvdisasm()
    if nvdisasm is None:
        return None
    with tempfile.TemporaryDirectory(prefix="pystencils-perf-sass-") as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        result = subprocess.run([nvdisasm, "-hex", "-c", str(path)], capture_output=True, text=True)
    if result.returncode != 0:
        return None
    return parse_sass(result.stdout, function)


def parse_sass(listing: str, function: str) -> SassCounts | None:
    """The `SassCounts` of `function` in nvdisasm's listing of a cubin, None where the listing has no such kernel."""
    header = re.search(rf"^//-+ \.text\.{re.escape(function)}\s+-+$", listing, re.MULTILINE)
    if header is None:
        return None
    body = listing[header.end():].split("//----", 1)[0]
    instructions = fma = loads = 0
    looped = False
    labels: set[str] = set()
    outstanding = [0] * _SCOREBOARDS  # loads whose result each scoreboard still awaits
    in_flight_at_waits: list[int] = []
    lines = body.splitlines()
    has_control_bits = False
    for k, line in enumerate(lines):
        if label := _LABEL.match(line.strip()):
            labels.add(label.group(1))
            continue
        match = _INSTRUCTION.match(line)
        if not match:
            continue
        opcode, operands = match.group(2), match.group(3)
        if opcode == "NOP":
            continue
        if opcode == "BRA" and (target := _BRANCH_TARGET.search(operands)) and target.group(1) in labels:
            if _is_branch_to_itself(body, line, target.group(1)):
                continue  # the end-of-kernel trap, never reached
            looped = True
        instructions += 1
        fma += opcode.split(".")[0] in ("FFMA", "DFMA", "HFMA2")
        high = _HIGH_WORD.match(lines[k + 1]) if k + 1 < len(lines) else None
        if high is None:
            continue
        has_control_bits = True
        control = int(high.group(1), 16)
        waits_on, sets = (control >> 52) & 0x3F, (control >> 46) & 0x7
        awaited = [b for b in range(_SCOREBOARDS) if waits_on >> b & 1]
        if any(outstanding[b] for b in awaited):
            in_flight_at_waits.append(sum(outstanding))
        for b in awaited:
            outstanding[b] = 0
        if opcode.split(".")[0] in _MEMORY_LOADS:
            loads += 1
            if sets != _NO_SCOREBOARD:
                outstanding[sets] += 1
    rounds = None
    if has_control_bits:
        rounds = loads / (sum(in_flight_at_waits) / len(in_flight_at_waits)) if in_flight_at_waits else float(loads > 0)
    return SassCounts(instructions, fma, looped, loads, rounds)


def _is_branch_to_itself(body: str, line: str, label: str) -> bool:
    """Whether `line` is the ``BRA`` right after `label`: the self-loop ptxas ends every kernel with."""
    before = body.split(line, 1)[0].rstrip().splitlines()
    return bool(before) and before[-1].strip() == f"{label}:"
