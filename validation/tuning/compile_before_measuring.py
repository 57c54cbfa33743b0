"""What compiling a launch before measuring it changes in a replayed search, where the SPEC's launches compile per
launch and the ordered compile left most of them with a bound (`spec_candidates(compile_until_certain=10)`).

    python3 validation/tuning/compile_before_measuring.py SPEC CACHE DEVICE

For budgets of 10, 20 and 50 measurements (the model's order, no early stop): how many measurements failed (a
launch whose code cannot run, measured as the cache recorded it), how many launches were rejected once compiled
instead (`tune.replay.CompileBeforeMeasuring`), the best found as a share of the cache's optimum, and the seconds
the replay took, compiles included (a larger budget finds a smaller one's compiles in the compile cache). E.g. `validation/shared_memory/convolution_shmem_source.py` on the H200 sample
(`validation/hopper/data/h200/convolution15_shmem_kernel_tuner_cache.json.gz`, `H200`): docs/performance.md.
"""

from __future__ import annotations

import sys
import time

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-compile-before-measuring-")

from pystencils_perf.errors import PerfError  # noqa: E402
from pystencils_perf.launch import COMPILED_HEAD  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner  # noqa: E402
from pystencils_perf.tune.replay import CompileBeforeMeasuring, ReplaySource, replay_candidates  # noqa: E402
from pystencils_perf.tune.tuner import tune  # noqa: E402

BUDGETS = (10, 20, 50)


def main(argv=None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 3:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    spec_path, cache, device = args
    try:
        spec, data = load_tunable_spec(spec_path), read_kernel_tuner(cache)
        start = time.perf_counter()
        space = replay_candidates(data, spec, device, compile_until_certain=COMPILED_HEAD)
        print(
            f"{len(space.candidates)} candidates, {space.not_compiled} not compiled, ranked in "
            f"{time.perf_counter() - start:.1f} s"
        )
        optimum = min(run.time_ms for run in data.runs)
        print(
            "| compiled before measuring | budget | failed measurements | rejected once compiled | best / optimum | s |"
        )
        print("|---|---|---|---|---|---|")
        for admit in (None, CompileBeforeMeasuring(spec, device)):
            for budget in BUDGETS:
                start = time.perf_counter()
                result = tune(
                    list(space.candidates),
                    ReplaySource(data, device),
                    budget=budget,
                    kernel="compile-before-measuring",
                    early_stop=False,
                    admit=admit,
                )
                failed = sum(m["time_ms"] is None for m in result.record.measured)
                print(
                    f"| {'yes' if admit else 'no'} | {budget} | {failed} | {len(result.rejected)} | "
                    f"{100 * optimum / result.best_ms:.1f} % | {time.perf_counter() - start:.1f} |"
                )
    except PerfError as error:
        print(f"compile_before_measuring.py: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
