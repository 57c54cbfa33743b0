"""Our search and Kernel Tuner's strategies replayed on any Kernel Tuner caches that a SPEC describes, as
`benchmarks/bench_tune.py` replays the repository's: for caches that are not in the repository (held out).

    python3 validation/tuning/replay_caches.py --spec SPEC [--repeats 5] [--device DEV] CACHE [CACHE ...]

For each cache: how long the model took to rank its configurations (every core), its configurations, those the
model rejects and, of those, the ones that ran when the cache was recorded (a launch the model must not reject);
then bench_tune's table (our search with and without its stop rule, without the model, and Kernel Tuner's
strategies over `--repeats` seeds) with the exact expectation of random sampling, and the timings' run-to-run
noise. The device is the one each cache names (``device_name``), or ``--device`` (for caches that name none).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_tune: the replay machinery

import bench_tune  # noqa: E402  (sets pystencils' cache to a temporary folder)
from pystencils_perf.errors import PerfError  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec  # noqa: E402
from pystencils_perf.tune.replay import expected_of_random_sampling  # noqa: E402


def random_sampling_row(replay: bench_tune.Replay) -> str:
    """The exact expectation of random sampling over the configurations the SPEC describes, per budget."""
    times = [replay.times.get(key) for key in replay.keys]
    return " / ".join(f"{100 * expected_of_random_sampling(times, n):.1f}" for n in bench_tune.BUDGETS) + " %"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("caches", nargs="+", type=Path, help="Kernel Tuner cache files (.json, .json.gz)")
    parser.add_argument("--spec", type=Path, required=True, help="the SPEC that describes the caches' kernel")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each random Kernel Tuner strategy")
    parser.add_argument(
        "--device", help="the caches' GPU (library name or alias, or a .toml), for caches that name none"
    )
    args = parser.parse_args(argv)
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
                f"{random_sampling_row(replay)}",
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
