"""The machine-code size of KTT's shared-memory convolution per configuration: what its SMs fetch as instructions.

    git -C <clone of HiPerCoRe/KTT> show \
        931c41570df4ae279a2fb1d422be781728b39bed:Examples/KernelTunerConvolution/KernelTunerConvolution.cu \
        > /tmp/KernelTunerConvolution.cu
    python3 validation/rtx2080ti_convolution/compile_code_bytes.py /tmp/KernelTunerConvolution.cu \
        validation/data/external/ktt_convolution15_code_bytes_sm_75.csv \
        --counters validation/data/external/rtx2080ti_convolution15_ktt_counters.csv

Every tile (1..8 x 1..8) and READ_ONLY is compiled for sm_75 (the RTX 2080 Ti) at 32x4 blocks, and every
block and tile of the counters with READ_ONLY 0, with PADDING 0 and the image and filter of the KTT counters
(`convolution_shmem.py`). The filter loops are unrolled in full, so the code grows with the tile: 9 kB
for a 1x1 tile, 85 kB for 4x4. The block size changes it too (4x4 tiles: 77 kB at 128x1, 117 kB at
16x16). `code_fetch_study.py` sets these sizes beside the measured excess volumes.

Only the sizes are kept, not the source or the binaries. The compiler (nvcc on PATH, else the NVRTC
wheels) stands in for the one that built the measured binaries.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import struct
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import date
from pathlib import Path

from convolution_shmem import HALO, IMAGE
from pystencils_perf.adapters import cuda_compiler
from pystencils_perf.errors import PerfError
from pystencils_perf.outputs import replacing_file
from pystencils_perf.tempcache import use_temporary_pystencils_cache

#: the kernel's mangled name (declared without extern "C")
FUNCTION = "_Z11ConvolutionPfS_S_"
#: the image and filter of the KTT counters, as `convolution_shmem.py` describes them (HFS: half the filter)
FIXED = {"IMAGE_WIDTH": IMAGE, "IMAGE_HEIGHT": IMAGE, "HFS": HALO // 2, "use_padding": 0}
KEY = ("BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_SIZE_X", "TILE_SIZE_Y", "READ_ONLY")
#: every tile at this block size; the tiles of `BLOCK_SAMPLE_TILES` at the blocks of `SAMPLE_BLOCKS` as well
MAIN_BLOCK = (32, 4)
#: shared memory a block may hold without opting in (sm_75)
MAX_SHARED_BYTES = 48 * 1024
SAMPLE_BLOCKS = ((2, 32), (8, 8), (16, 16), (64, 2), (128, 1))
BLOCK_SAMPLE_TILES = ((1, 1), (2, 2), (2, 4), (3, 3), (2, 5), (4, 4), (3, 6), (8, 3))


def text_bytes(cubin: bytes, function: str) -> int:
    """Size of the function's code section (``.text.<function>``) in an ELF64 cubin."""
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    # each header: name, type, flags, address, offset, size, link, info, alignment, entry size
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    for header in headers:
        name_at = names_at + header[0]
        if cubin[name_at : cubin.index(b"\0", name_at)].decode() == f".text.{function}":
            return header[5]
    raise ValueError(f"no .text.{function} section in the cubin")


def shared_copy_bytes(bx: int, by: int, tx: int, ty: int) -> int:
    """The block's shared copy of its input (PADDING 0), which is all the input the block reads: over the 48 kB a
    block may hold, it does not compile."""
    return (by * ty + HALO) * (bx * tx + HALO) * 4


def configurations(counters: Path | None) -> list[tuple[int, ...]]:
    """Every tile at 32x4 blocks with both READ_ONLY, a few tiles at other blocks; with `counters` (the KTT
    counters' CSV) every block and tile of its PADDING 0 rows as well, READ_ONLY 0 (1 adds at most 1.5 %
    at 32x4 blocks)."""
    tiles = list(itertools.product(range(1, 9), repeat=2))
    main = [(*MAIN_BLOCK, tx, ty, ro) for ro in (0, 1) for tx, ty in tiles]
    sample = [(*block, tx, ty, 0) for block in SAMPLE_BLOCKS for tx, ty in BLOCK_SAMPLE_TILES]
    every = []
    if counters:
        with counters.open() as fh:
            every = sorted(
                {(*(int(row[k]) for k in KEY[:4]), 0) for row in csv.DictReader(fh) if row["PADDING"] == "0"}
            )
    chosen = dict.fromkeys(main + sample + every)  # in order, without repeats
    return [c for c in chosen if shared_copy_bytes(*c[:4]) <= MAX_SHARED_BYTES]


def sm_75_compiler():
    """The compiler that builds sm_75 (nvcc on PATH, else the NVRTC wheels) and the architecture, or None."""
    chosen = cuda_compiler.compiler_for("7.5")
    return chosen if chosen is not None and chosen[1] == "sm_75" else None


def translation_unit(text: str, config: tuple[int, ...]) -> str:
    """KTT's kernel source `text` with the counters' image and filter (`FIXED`) and `config` (by `KEY`) defined."""
    macros = {**FIXED, **dict(zip(KEY, config))}
    return "".join(f"#define {k} {v}\n" for k, v in macros.items()) + text


def read_table(path: Path) -> dict[tuple[int, ...], int]:
    """A table this script wrote: configuration -> code bytes (the rows a new run keeps instead of compiling)."""
    rows = list(csv.reader(line for line in path.read_text().splitlines() if not line.startswith("#")))
    return {tuple(int(v) for v in r[:5]): int(r[5]) for r in rows[1:]}


def compile_missing(function, configs: list, done: dict, jobs: int) -> int:
    """``done[c] = function(c)`` for each configuration `done` lacks, `jobs` at a time; the exit status: 2 where a
    compile failed, 130 on Ctrl-C, which keeps what was compiled so far (a table written from `done` then holds
    it, and a run again goes on from there)."""
    status = 0
    pool = ThreadPoolExecutor(jobs)
    try:
        futures = {pool.submit(function, c): c for c in configs if c not in done}
        for future in as_completed(futures):
            done[futures[future]] = future.result()
    except PerfError as e:
        print(e, file=sys.stderr)
        status = 2
    except KeyboardInterrupt:
        print("interrupted: the table keeps the configurations compiled so far; run again to go on", file=sys.stderr)
        status = 130
    finally:
        pool.shutdown(wait=status == 0, cancel_futures=True)
    return status


def write_table(
    out: Path, compiled: tuple[str, str, str, str], note: str, columns: tuple[str, ...], rows: list
) -> None:
    """A table of KTT's launches by `KEY` and `columns`, whole or not at all: its first line says what was
    `compiled` (the source's file name, the architecture, the compiler, the script of this folder that did it),
    when, with the counters' image and filter, and `note`."""
    source, arch, compiler, script = compiled
    with replacing_file(out) as fh:
        fh.write(
            f"# {source} (HiPerCoRe/KTT 931c4157, MIT) compiled for {arch} by {compiler} on "
            f"{date.today().isoformat()} (validation/rtx2080ti_convolution/{script}); "
            f"{', '.join(f'{k}={v}' for k, v in FIXED.items())}{note}\n"
        )
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow((*KEY, *columns))
        writer.writerows(rows)


def main(argv=None) -> int:
    use_temporary_pystencils_cache()  # the compiler's reports: never into the home directory
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="KTT's KernelTunerConvolution.cu (see above)")
    parser.add_argument("out", type=Path, help="the CSV to write; the configurations it already holds are kept")
    parser.add_argument(
        "--counters",
        type=Path,
        help="also every block and tile of this KTT counters CSV (rtx2080ti_convolution15_ktt_counters.csv)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    for path in (args.source, args.counters):
        if path is not None and not path.is_file():
            print(f"no such file: {path}", file=sys.stderr)
            return 2
    chosen = sm_75_compiler()
    if chosen is None:
        print("no installed compiler builds sm_75", file=sys.stderr)
        return 2
    compiler, arch = chosen
    text = args.source.read_text()

    def code_bytes(config) -> int:
        source = translation_unit(text, config)
        with tempfile.TemporaryDirectory(prefix="ktt-cubin-") as folder:
            cubin = Path(folder) / "kernel.cubin"
            compiler.ptxas_report(source, FUNCTION, arch, (), cubin=cubin)
            return text_bytes(cubin.read_bytes(), FUNCTION)

    configs = configurations(args.counters)
    sizes = read_table(args.out) if args.out.exists() else {}
    status = compile_missing(code_bytes, configs, sizes, args.jobs)
    done = [c for c in configs if c in sizes]
    rows = [(*config, sizes[config]) for config in done]
    write_table(args.out, (args.source.name, arch, compiler.name, Path(__file__).name), "", ("code_bytes",), rows)
    print(f"{len(done)} of {len(configs)} configurations written to {args.out}")
    return status


if __name__ == "__main__":
    sys.exit(main())
