"""Held out: the default model on KTT's own output of its shared-memory convolution on another GPU, blind.

    python3 validation/shared_memory/ktt_output_blind.py OUTPUT.json.gz DEVICE ARCH

OUTPUT is KTT's JSON output of `KernelTunerConvolution` (benchmark_hub's `currently_unused/cachefiles/KTT data/
KTConvolutionOutput_*.json.gz`, AutoTuningAssociation/benchmark_hub at 8eeb99e, MIT; not in this repository), read
as `pystencils_perf.measure.kernel_tuner.read_kernel_tuner` reads it. Its PADDING 0 launches are ranked with the
SPEC `../rtx2080ti_convolution/convolution_shmem.py` on DEVICE as `validate_shared_memory.scores` ranks KTT's RTX
2080 Ti export: without the launches' resources (occupancy from threads and shared memory), and with the registers
and spills KTT recorded (`convolution_summary.KttRegisters.from_output`, ARCH naming their code). Nothing is fitted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers

import validate_shared_memory as shared  # noqa: E402  (sets the temporary pystencils cache)
from convolution_summary import KttRegisters  # noqa: E402
from pystencils_perf.errors import PerfError  # noqa: E402
from pystencils_perf.measure.kernel_tuner import read_kernel_tuner  # noqa: E402
from pystencils_perf.plugins import get_plugin_manager  # noqa: E402


def measured_times(path: Path) -> dict[tuple[int, ...], float]:
    """Time (ms) by `shared.KTT_KEY` of the output's PADDING 0 launches that ran."""
    runs = read_kernel_tuner(path).runs
    return {tuple(int(r.params[k]) for k in shared.KTT_KEY): r.time_ms for r in runs if r.params["PADDING"] == 0}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, help="KTT's JSON output of the convolution")
    parser.add_argument("device", help="the GPU it ran on, as `pystencils-perf devices` names it")
    parser.add_argument("arch", help="the architecture its code was compiled for (sm_86 for GA102)")
    args = parser.parse_args(argv)
    try:
        measured = measured_times(args.output)
        plugin = KttRegisters.from_output(args.output, args.device, args.arch)
    except PerfError as e:
        print(f"ktt_output_blind.py: {e}", file=sys.stderr)
        return 2
    print(
        "| resources | launches (rejected) | Spearman | pick's share of the best | the best pick with `read_only` alike "
        "| best's predicted rank | MAPE % | noise |",
        "|---|---|---|---|---|---|---|---|",
        sep="\n",
    )
    noise = "one run per launch: not known"
    print(shared.scores("none", shared.KTT_SPEC, shared.KTT_KEY, measured, args.device, {}, noise, []))
    get_plugin_manager().register(plugin, name="ktt-output-registers")
    print(
        shared.scores(
            "KTT's registers and spills", shared.KTT_SPEC, shared.KTT_KEY, measured, args.device, {}, noise, []
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
