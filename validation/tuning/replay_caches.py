"""Our search and Kernel Tuner's strategies replayed on any Kernel Tuner caches that a SPEC describes, as
`benchmarks/bench_tune.py` replays the repository's: for caches that are not in the repository (held out).

    python3 validation/tuning/replay_caches.py --spec SPEC [--repeats 5] [--device DEV] [--compiled-registers] CACHE ...

For each cache: how long the model took to rank its configurations (every core), its configurations, those the
model rejects and those of them that ran (a launch it must not reject), its Spearman, pick and best's rank over the
launches that ran; then bench_tune's table (our search with and without its stop rule, without the model, and
Kernel Tuner's strategies over `--repeats` seeds) with the exact expectation of random sampling, and the timings'
run-to-run noise. The device is the one each cache names (``device_name``), or ``--device``.
``--compiled-registers``: each launch's registers and spills as its code compiles, where ``../data/external`` has a
table of the kernel for the device's architecture (`convolution_summary.CompiledRegisters`), as a user's is compiled.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_tune: the replay machinery
sys.path.insert(0, str(ROOT / "validation"))  # convolution_summary: the compiled register tables

import bench_tune  # noqa: E402  (sets pystencils' cache to a temporary folder)
from convolution_summary import CompiledRegisters  # noqa: E402
from pystencils_perf.errors import PerfError  # noqa: E402
from pystencils_perf.plugins import get_plugin_manager  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec  # noqa: E402
from pystencils_perf.tune.replay import expected_of_random_sampling  # noqa: E402
from pystencils_perf.validate import time_scores  # noqa: E402


def random_sampling_row(replay: bench_tune.Replay) -> str:
    """The exact expectation of random sampling over the configurations the SPEC describes, per budget."""
    times = [replay.times.get(key) for key in replay.keys]
    return " / ".join(f"{100 * expected_of_random_sampling(times, n):.1f}" for n in bench_tune.BUDGETS) + " %"


def model_scores(replay: bench_tune.Replay) -> str:
    """The model's ranking of the launches that ran and that it predicts: Spearman against the measured times, its
    pick's share of their best (predicted ties at their worst) and the best's predicted rank."""
    predicted = {bench_tune._key(c.params, replay.names): c.predicted_seconds for c in replay.predictions.candidates}
    ran = [key for key in predicted if replay.times.get(key) is not None]
    p = np.array([predicted[key] for key in ran])
    m = np.array([replay.times[key] for key in ran])
    s = time_scores(p, m)
    return (
        f"the model over {len(ran)} launches that ran: Spearman {s.spearman:.3f}, its pick "
        f"{100 * s.pick_share_of_best:.1f} % of the best, the best at predicted rank {s.best_predicted_rank}"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("caches", nargs="+", type=Path, help="Kernel Tuner cache files (.json, .json.gz)")
    parser.add_argument("--spec", type=Path, required=True, help="the SPEC that describes the caches' kernel")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each random Kernel Tuner strategy")
    parser.add_argument(
        "--device", help="the caches' GPU (library name or alias, or a .toml), for caches that name none"
    )
    parser.add_argument(
        "--compiled-registers",
        action="store_true",
        help="each launch's registers and spills from the compiled tables of validation/data/external, where one "
        "exists for the device's architecture",
    )
    args = parser.parse_args(argv)
    if args.compiled_registers:
        get_plugin_manager().register(CompiledRegisters(), name="validation-compiled-registers")
    try:
        spec = load_tunable_spec(args.spec)
        replays = []
        for path in args.caches:
            start = time.perf_counter()
            replay = bench_tune.Replay(path, spec, None, args.device)
            seconds = time.perf_counter() - start
            rejected = replay.predictions.rejected
            ran = sum(replay.times.get(bench_tune._key(p, replay.names)) is not None for p, _ in rejected)
            print(
                f"{replay.device.name}: {path.name}, {len(replay.keys)} configurations described, ranked in "
                f"{seconds:.1f} s; {len(rejected)} rejected by the model, {ran} of which ran; optimum "
                f"{replay.optimum_ms:.4f} ms; random sampling after {' / '.join(map(str, bench_tune.BUDGETS))}: "
                f"{random_sampling_row(replay)}; {model_scores(replay)}",
                flush=True,
            )
            replays.append(replay)
    except (PerfError, OSError) as error:
        print(f"replay_caches.py: error: {error}", file=sys.stderr)
        return 2
    for replay in replays:
        print(f"\n{replay.device.name} ({replay.path.name}):\n")
        runs = bench_tune.evaluate([replay], args.repeats)
        print(bench_tune.table(bench_tune.summarise([replay], runs)), flush=True)
    print(f"\ntiming noise (run-to-run spread per configuration): {bench_tune.noise_note(replays)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
