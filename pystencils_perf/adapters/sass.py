"""How NVIDIA code waits for its loads, read in its SASS: the counterpart of `hip_compiler.assembly_counts`.

A warp exposes a memory latency each time it stops for loads it has outstanding, and the compiler's
schedule decides how often that is: a dozen loads or more per wait in code it unrolled, one per wait where
it could not batch them. On AMD the assembly says so in ``s_waitcnt``; on NVIDIA (Volta and later) it is
in each instruction's control bits, which ptxas sets: a variable-latency instruction (a load) names one of
six scoreboards that its result releases, and an instruction that needs such a result waits on a mask of
scoreboards (`sass_counts` reads them).

nvdisasm comes with a CUDA toolkit or as NVIDIA's ``nvidia-cuda-nvdisasm`` pip wheel.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from ..errors import PerfError
from ..resources import AssemblyCounts
from .cuda_compiler import wheel_dir

#: the second word's bits that hold the scoreboard an instruction writes, and its wait mask
_WRITE_SCOREBOARD_SHIFT, _WAIT_MASK_SHIFT = 46, 52
_NO_SCOREBOARD = 7
#: a label (``.L_x_0:``), or an instruction with the second word of its encoding on the next line
_LABEL_OR_INSTRUCTION = re.compile(
    r"^(?P<label>\.[\w$]+):"
    r"|/\*[0-9a-f]{4,}\*/\s+(?P<text>.*?)\s*;\s*/\* 0x[0-9a-f]{16} \*/"
    r"\s*\n\s*/\* (?P<control>0x[0-9a-f]{16}) \*/",
    re.MULTILINE,
)
#: an opcode after an optional predicate (``@P0``, ``@!PT``)
_OPCODE = re.compile(r"^(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)")
#: loads from memory beyond the SM: global (``LDG``), generic (``LD``) and local (``LDL``: spilled registers)
_LOADS = ("LDG", "LD", "LDL")
#: bytes per lane of a local or shared access by its width suffix (none: 32 bits)
_WIDTH_BYTES = {".64": 8, ".128": 16, ".U8": 1, ".S8": 1, ".U16": 2, ".S16": 2}


def _lane_bytes(suffixes: str) -> int:
    """Bytes a lane's local or shared access moves, by the opcode's suffixes (``.64``, ``.U8``; none: 4)."""
    widths = {"." + part for part in suffixes.split(".") if part}
    return next((size for suffix, size in _WIDTH_BYTES.items() if suffix in widths), 4)


def find_nvdisasm() -> str | None:
    """nvdisasm on PATH, in the CUDA toolkit (``$CUDA_HOME/bin``, default ``/usr/local/cuda/bin``), or from
    the ``nvidia-cuda-nvdisasm`` wheel."""
    if path := shutil.which("nvdisasm"):
        return path
    candidates = [Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "nvdisasm"]
    candidates += [d / "bin" / "nvdisasm" for d in map(wheel_dir, ("cu13", "cuda_nvdisasm")) if d is not None]
    return next((str(c) for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


def disassemble(cubin: Path, nvdisasm: str) -> str:
    """The code sections of `cubin` with each instruction's encoding (``nvdisasm -c -hex``)."""
    result = subprocess.run([nvdisasm, "-c", "-hex", str(cubin)], capture_output=True, text=True)
    if result.returncode != 0:
        raise PerfError(f"nvdisasm could not read {cubin.name}: {result.stderr.strip()[-300:]}")
    return result.stdout


def _function_code(disassembly: str, function: str) -> str:
    """The code of `function`: from its section's label to the next section."""
    parts = re.split(rf"^\.text\.{re.escape(function)}:\s*$", disassembly, maxsplit=1, flags=re.MULTILINE)
    if len(parts) != 2:
        raise PerfError(f"the disassembly has no kernel {function!r}")
    return re.split(r"^\s*\.section\b|^//-+ ", parts[1], maxsplit=1, flags=re.MULTILINE)[0]


def sass_counts(disassembly: str, function: str) -> AssemblyCounts:
    """The `AssemblyCounts` of `function` in ``nvdisasm -hex`` output.

    In program order, a load that writes a scoreboard leaves it pending. An instruction whose wait mask holds
    a pending scoreboard waits for its loads; it is a wait, one memory latency exposed, where it waits for a
    load issued since the warp last waited: loads issued before that were in flight through the last wait
    (a compiler that spreads a batch of loads over four scoreboards consumes them with four waits in a row,
    one latency). A branch to a label above it (not its own) is a loop; loads and no FMA between that label and
    the branch set `AssemblyCounts.loop_loads_without_fma`. Instructions are all but ``NOP``
    and that branch to itself after ``EXIT`` (the padding after the kernel's end). Spill bytes are the
    widths of the ``STL`` and ``LDL`` accesses (bytes per lane); FMAs are ``FFMA`` and ``DFMA``; shared loads the
    4-byte words of the ``LDS`` (``LDS.64``: two).

    nvdisasm's ``-hex`` prints each 128-bit instruction as two 64-bit words; the control bits are bits 105-125
    of the instruction, bits 41-61 of the second word: stall cycles (4 bits), yield (1), the scoreboard it
    writes (3, 7 for none), the one it reads (3), the wait mask (6) and operand reuse (4) (Jia, Maggioni,
    Staiger, Scarpazza, "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking",
    arXiv:1804.06826, section 2.1; checked on sm_80 and sm_86 code of nvcc 13.0, where each FFMA that reads a
    loaded register waits on the scoreboard its LDG wrote).
    """
    waits = loads = fmas = instructions = shared_load_words = 0
    spilled = {"STL": 0, "LDL": 0}
    pending: set[int] = set()
    issued_since_wait: set[int] = set()
    labels_seen: dict[str, tuple[int, int]] = {}  # label: the loads and FMAs before it
    labels_here: set[str] = set()
    looped = loads_without_fma = False
    for match in _LABEL_OR_INSTRUCTION.finditer(_function_code(disassembly, function)):
        if label := match.group("label"):
            labels_here.add(label)
            labels_seen[label] = (loads, fmas)
            continue
        text, control = match.group("text"), int(match.group("control"), 16)
        opcode = _OPCODE.match(text)
        if opcode is None:
            continue
        name, suffixes = opcode.groups()
        instructions += name != "NOP"
        waited = {board for board in pending if control >> (_WAIT_MASK_SHIFT + board) & 1}
        if waited & issued_since_wait:
            waits, issued_since_wait = waits + 1, set()
        pending -= waited
        if name in _LOADS:
            loads += 1
            board = control >> _WRITE_SCOREBOARD_SHIFT & 7
            if board != _NO_SCOREBOARD:
                pending.add(board)
                issued_since_wait.add(board)
        if name in spilled:
            spilled[name] += _lane_bytes(suffixes)
        fmas += name in ("FFMA", "DFMA")
        if name == "LDS":
            shared_load_words += max(_lane_bytes(suffixes) // 4, 1)
        if name == "BRA" and (target := re.search(r"\(([.\w$]+)\)", text)):
            # ptxas ends a kernel with a branch to itself after its EXIT, never reached: neither a loop nor issued
            if target.group(1) in labels_here:
                instructions -= 1
            if target.group(1) in labels_seen and target.group(1) not in labels_here:
                looped = True
                loads_before, fmas_before = labels_seen[target.group(1)]
                loads_without_fma |= loads > loads_before and fmas == fmas_before
        labels_here = set()
    return AssemblyCounts(
        waits, loads, spilled["STL"], spilled["LDL"], fmas, looped, instructions, loads_without_fma, shared_load_words
    )


def cubin_counts(cubin: Path, function: str, nvdisasm: str) -> AssemblyCounts:
    """The `AssemblyCounts` of `function` in a cubin."""
    return sass_counts(disassemble(cubin, nvdisasm), function)
