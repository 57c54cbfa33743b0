"""Held out: the default model on KTT's own output of its shared-memory convolution on another GPU, blind.

    python3 validation/shared_memory/ktt_output_blind.py OUTPUT.json.gz DEVICE

OUTPUT is KTT's JSON output of `KernelTunerConvolution` (benchmark_hub's `currently_unused/cachefiles/KTT data/
KTConvolutionOutput_*.json.gz`, AutoTuningAssociation/benchmark_hub at 8eeb99e, MIT; not in this repository), read
as `pystencils_perf.measure.kernel_tuner.read_kernel_tuner` reads it. Its PADDING 0 launches are ranked with the
SPEC `../rtx2080ti_convolution/convolution_shmem.py` on DEVICE as `validate_shared_memory.scores` ranks KTT's RTX
2080 Ti export: without the launches' resources (occupancy from threads and shared memory), and with the registers
and spills KTT recorded (`TunedRun.resources`, as `pystencils-perf validate` and `tune --replay` take them). Nothing
is fitted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers

import validate_shared_memory as shared  # noqa: E402  (sets the temporary pystencils cache)
from pystencils_perf.errors import PerfError  # noqa: E402
from pystencils_perf.measure.kernel_tuner import read_kernel_tuner  # noqa: E402
from pystencils_perf.tune.tuner import params_key  # noqa: E402


def padding_0_runs(path: Path) -> dict[tuple[int, ...], object]:
    """The output's PADDING 0 runs by `shared.KTT_KEY`."""
    runs = read_kernel_tuner(path).runs
    return {tuple(int(r.params[k]) for k in shared.KTT_KEY): r for r in runs if r.params["PADDING"] == 0}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, help="KTT's JSON output of the convolution")
    parser.add_argument("device", help="the GPU it ran on, as `pystencils-perf devices` names it")
    args = parser.parse_args(argv)
    try:
        runs = padding_0_runs(args.output)
    except PerfError as e:
        print(f"ktt_output_blind.py: {e}", file=sys.stderr)
        return 2
    measured = {key: run.time_ms for key, run in runs.items()}
    # keyed by the parameters `scores` ranks: the SPEC's own names, without those KTT adds (the image, the filter)
    recorded = {params_key(dict(zip(shared.KTT_KEY, key))): run.resources for key, run in runs.items()}
    print(
        "| resources | launches (rejected) | Spearman | pick's share of the best | the best pick with `read_only` alike "
        "| best's predicted rank | MAPE % | noise |",
        "|---|---|---|---|---|---|---|---|",
        sep="\n",
    )
    noise = "one run per launch: not known"
    for label, resources in (("none", None), ("KTT's registers and spills", recorded)):
        print(shared.scores(label, shared.KTT_SPEC, shared.KTT_KEY, measured, args.device, {}, noise, [], resources))
    return 0


if __name__ == "__main__":
    sys.exit(main())
