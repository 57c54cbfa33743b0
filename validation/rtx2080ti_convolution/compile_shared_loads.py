"""The shared-memory words each of KTT's convolution launches loads per thread, read in its compiled code.

    git -C <clone of HiPerCoRe/KTT> show \\
        931c41570df4ae279a2fb1d422be781728b39bed:Examples/KernelTunerConvolution/KernelTunerConvolution.cu \\
        > /tmp/KernelTunerConvolution.cu
    python3 validation/rtx2080ti_convolution/compile_shared_loads.py /tmp/KernelTunerConvolution.cu \\
        validation/data/external/ktt_convolution15_shared_loads_sm_75.csv

The description (`convolution_shmem.py`) loads each distinct shared value a thread needs once; the compiled code of
large tiles reloads what it cannot keep in registers (`shared_wavefronts.md`). Every PADDING 0 launch of the counters
(`rtx2080ti_convolution15_ktt_counters.csv`, both READ_ONLY) is compiled for sm_75 with the NVRTC 11.8 wheels (KTT
compiles at run time with NVRTC) and the counters' image and filter (`compile_code_bytes.FIXED`), its SASS is read
with nvdisasm (`pystencils_perf.adapters.sass`), and the 4-byte words its ``LDS`` load per thread are kept, with its
registers: the static count times the thread's trips where the compiler kept the filter loop rolled
(`compile_convolution_registers.trips_per_thread`). The validations read them through
`convolution_summary.KttRegisters`. The configurations a table already holds are kept: Ctrl-C writes what was
compiled, and a run again goes on from there.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # validation/: the shared helpers
sys.path.insert(0, str(HERE.parent / "data" / "external"))

from compile_code_bytes import FUNCTION, KEY, compile_missing, translation_unit, write_table  # noqa: E402
from compile_convolution_registers import trips_per_thread  # noqa: E402
from convolution_summary import ktt_padding_0_rows  # noqa: E402
from pystencils_perf.adapters import cuda_compiler, sass  # noqa: E402
from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

COLUMNS = ("registers", "shared_load_words_per_thread")


def padding_0_configurations() -> list[tuple[int, ...]]:
    """Every PADDING 0 launch of the counters (`ktt_padding_0_rows`), by `KEY`."""
    return sorted({tuple(int(r[k]) for k in KEY) for r in ktt_padding_0_rows()})


def read_table(path: Path) -> dict[tuple[int, ...], tuple[int, float]]:
    """A table this script wrote: configuration -> (registers, shared loads per thread)."""
    with path.open(newline="") as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {
            tuple(int(r[k]) for k in KEY): (int(r["registers"]), float(r["shared_load_words_per_thread"])) for r in rows
        }


def main(argv=None) -> int:
    use_temporary_pystencils_cache()  # the compiler's reports: never into the home directory
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="KTT's KernelTunerConvolution.cu (see above)")
    parser.add_argument("out", type=Path, help="the CSV to write; the configurations it already holds are kept")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if not args.source.is_file():
        print(f"no such file: {args.source}", file=sys.stderr)
        return 2
    chosen = cuda_compiler.nvrtc_for("sm_75")
    nvdisasm = sass.find_nvdisasm()
    if chosen is None or nvdisasm is None:
        print("needs the NVRTC 11.8 wheels for sm_75 and nvdisasm (pip install nvidia-cuda-nvdisasm)", file=sys.stderr)
        return 2
    compiler, arch = chosen
    text = args.source.read_text()

    def compiled(config) -> tuple[int, float]:
        with tempfile.TemporaryDirectory(prefix="ktt-cubin-") as folder:
            cubin = Path(folder) / "kernel.cubin"
            report = compiler.ptxas_report(translation_unit(text, config), FUNCTION, arch, (), cubin=cubin)
            counts = sass.cubin_counts(cubin, FUNCTION, nvdisasm)
        usage = cuda_compiler.parse_resource_usage(report, FUNCTION, arch, compiler.name)
        return usage.registers_per_thread, counts.shared_load_words * trips_per_thread(counts, config[2] * config[3])

    configs = padding_0_configurations()
    table = read_table(args.out) if args.out.exists() else {}
    status = compile_missing(compiled, configs, table, args.jobs)
    done = [c for c in configs if c in table]
    rows = [(*config, table[config][0], f"{table[config][1]:g}") for config in done]
    compiled = (args.source.name, arch, compiler.name, Path(__file__).name)
    write_table(args.out, compiled, "; the counters' PADDING 0 launches", COLUMNS, rows)
    print(f"{len(done)} of {len(configs)} configurations written to {args.out}")
    return status


if __name__ == "__main__":
    sys.exit(main())
