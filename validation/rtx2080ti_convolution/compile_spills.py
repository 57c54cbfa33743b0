"""The spills of KTT's shared-memory convolution where its counters report a thread's full 255 registers.

    git -C <clone of HiPerCoRe/KTT> show \\
        931c41570df4ae279a2fb1d422be781728b39bed:Examples/KernelTunerConvolution/KernelTunerConvolution.cu \\
        > /tmp/KernelTunerConvolution.cu
    python3 validation/rtx2080ti_convolution/compile_spills.py --nvrtc /tmp/KernelTunerConvolution.cu \\
        validation/data/external/ktt_convolution15_spills_sm_75.csv

KTT's export (`rtx2080ti_convolution15_ktt_counters.csv`) names each launch's registers, as its binary had them,
but not what the binary spilled. Every PADDING 0 launch at 255 registers (the most a thread may hold, where a
compiler spills what does not fit) is compiled for sm_75 here, with the image and filter of the counters
(`compile_code_bytes.FIXED`), and ptxas' registers and spill bytes per thread are kept; the validations read them
through `convolution_summary.KttRegisters`. The compiler stands in for the one that built the measured binaries:
nvcc on PATH (else the NVRTC wheels), or with ``--nvrtc`` the NVRTC wheels, as KTT compiles at run time with NVRTC,
which the committed table used; the counters' local-memory sectors check both (`README.md` of `data/external`).
Each configuration's report is kept in pystencils' cache folder, a temporary one unless ``PYSTENCILS_CACHE_DIR`` names
one: set it, and a run again compiles nothing.
"""

from __future__ import annotations

import argparse
import csv
import sys
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers

from compile_code_bytes import FIXED, FUNCTION, KEY, sm_75_compiler, translation_unit  # noqa: E402
from convolution_summary import ktt_padding_0_rows  # noqa: E402
from pystencils_perf.adapters import cuda_compiler  # noqa: E402
from pystencils_perf.errors import PerfError  # noqa: E402
from pystencils_perf.outputs import replacing_file  # noqa: E402
from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402
from pystencils_perf.parallel import map_on_every_core  # noqa: E402

#: the registers a thread may hold at most on sm_75: a binary that has them all may have spilled
MAX_REGISTERS = 255


def full_register_configurations() -> list[tuple[int, ...]]:
    """The PADDING 0 launches of the counters (`ktt_padding_0_rows`) whose binary had `MAX_REGISTERS` registers, by
    `KEY`."""
    return sorted({tuple(int(r[k]) for k in KEY) for r in ktt_padding_0_rows() if int(r["registers"]) >= MAX_REGISTERS})


def main(argv=None) -> int:
    use_temporary_pystencils_cache()  # the compiler's reports: never into the home directory
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="KTT's KernelTunerConvolution.cu (see above)")
    parser.add_argument("out", type=Path, help="the CSV to write")
    parser.add_argument(
        "--nvrtc",
        action="store_true",
        help="compile with the NVRTC wheels (KTT compiles its kernels at run time with NVRTC) instead of nvcc",
    )
    args = parser.parse_args(argv)
    if not args.source.is_file():
        print(f"no such file: {args.source}", file=sys.stderr)
        return 2
    chosen = cuda_compiler.nvrtc_for("sm_75") if args.nvrtc else sm_75_compiler()
    if chosen is None:
        print(f"no installed {'NVRTC' if args.nvrtc else 'compiler'} builds sm_75", file=sys.stderr)
        return 2
    compiler, arch = chosen
    text = args.source.read_text()

    def resources(config):
        return cuda_compiler.compile_resources(translation_unit(text, config), FUNCTION, arch, compiler)

    configs = full_register_configurations()
    try:
        usages = map_on_every_core(resources, configs)
    except PerfError as e:
        print(e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "interrupted: nothing written; what was compiled is kept, and a run again goes on from it", file=sys.stderr
        )
        return 130
    with replacing_file(args.out) as fh:
        fh.write(
            f"# {args.source.name} (HiPerCoRe/KTT 931c4157, MIT) compiled for {arch} by {compiler.name} on "
            f"{date.today().isoformat()} (validation/rtx2080ti_convolution/compile_spills.py); "
            f"{', '.join(f'{k}={v}' for k, v in FIXED.items())}; the counters' PADDING 0 launches at "
            f"{MAX_REGISTERS} registers\n"
        )
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow((*KEY, "registers", "spill_store_bytes", "spill_load_bytes"))
        writer.writerows(
            (*c, u.registers_per_thread, u.spill_store_bytes, u.spill_load_bytes) for c, u in zip(configs, usages)
        )
    print(f"{len(configs)} configurations written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
