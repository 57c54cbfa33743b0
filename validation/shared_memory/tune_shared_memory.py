"""The tuner replayed on the shared-memory convolution data (issue 56, items 4-6), as `benchmarks/bench_tune.py`
replays the caches without shared memory.

    python3 validation/shared_memory/tune_shared_memory.py [--repeats 10]

Caches: the A100's whole Kernel Tuner cache, with and without shared memory (`use_shmem` one more parameter:
`a100_convolution/convolution_any.py`), the H200's whole cache of the same space (`hopper/data/h200`, three leases'
caches, merged into a temporary file by `hopper/merge_caches.py`: a sample of 320 shared-memory configurations, the
other 2122, then the 1920 without shared memory), and KTT's RTX 2080 Ti export (PADDING 0; not a
Kernel Tuner cache, so our search alone replays it). Each launch's registers come from the compiled tables where
they exist (`convolution_summary.CompiledRegisters`), as a user's source compiled per launch gives them. Prints
bench_tune's table per Kernel Tuner cache (our search, with and without its stop rule, and Kernel Tuner's
strategies, each over `--repeats` seeds: the random_sample row estimates what random sampling reaches), the stop
rule's replays with the model's and with deliberately wrong predictions, and the same replays after 5 / 10 / 20 /
50 measurements beside random sampling.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # validation/: the shared helpers
sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))  # bench_tune: the replay machinery
sys.path.insert(0, str(HERE.parent / "hopper"))  # merge_caches: the H200's cache from its parts

import bench_tune  # noqa: E402  (sets pystencils' cache to a temporary folder)
from convolution_summary import ktt_padding_0_rows, use_compiled_registers  # noqa: E402
from merge_caches import write_merged  # noqa: E402
from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec  # noqa: E402
from pystencils_perf.tune.replay import spec_candidates  # noqa: E402

A100_CACHE = HERE.parent / "data/external/a100_convolution15_kernel_tuner_cache.json.gz"
#: the H200's whole space in the parts its leases timed: without shared memory, the shared-memory sample, its rest
H200_PARTS = tuple(
    HERE.parent / "hopper/data/h200" / name
    for name in (
        "global/convolution15_global_kernel_tuner_cache.json.gz",
        "convolution15_shmem_kernel_tuner_cache.json.gz",
        "shmem_rest/convolution15_shmem_rest_kernel_tuner_cache.json.gz",
    )
)
#: the description of both halves of the space (`use_shmem` one more parameter)
SPEC = HERE.parent / "a100_convolution/convolution_any.py"

#: KTT's RTX 2080 Ti export: its description and the parameters that name a row
KTT_SPEC = HERE.parent / "rtx2080ti_convolution/convolution_shmem.py"
KTT_KEY = ("BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_SIZE_X", "TILE_SIZE_Y", "READ_ONLY", "PADDING")


class KttReplay:
    """KTT's RTX 2080 Ti rows (PADDING 0, one run each) as `bench_tune.stop_rule_replays` reads a `bench_tune.Replay`:
    not a Kernel Tuner cache, so only our search replays it."""

    def __init__(self):
        rows = ktt_padding_0_rows()
        self.device = get_device("RTX-2080-Ti")
        self.names = list(KTT_KEY)
        params = [{k: int(r[k]) for k in KTT_KEY} for r in rows]
        self.times = {bench_tune._key(p, self.names): float(r["duration_us"]) / 1e3 for p, r in zip(params, rows)}
        self.predictions = spec_candidates(params, load_tunable_spec(KTT_SPEC), self.device, source="KTT")
        described = [bench_tune._key(c.params, self.names) for c in self.predictions.candidates]
        self.optimum_ms = min(self.times[k] for k in described)

    fraction_after = bench_tune.Replay.fraction_after


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10, help="runs of each random Kernel Tuner strategy")
    args = parser.parse_args(argv)
    use_compiled_registers()
    with tempfile.TemporaryDirectory(prefix="pystencils-perf-h200-") as folder:
        h200 = Path(folder) / "convolution15_whole_kernel_tuner_cache.json.gz"
        write_merged(h200, list(H200_PARTS))
        return replay_all([A100_CACHE, h200], args.repeats)


def replay_all(caches: list[Path], repeats: int) -> int:
    """The tables of the module's docstring for `caches` (each replayed with `SPEC`) and KTT's export."""
    start = time.perf_counter()
    replays = [bench_tune.Replay(path, load_tunable_spec(SPEC), None) for path in caches]
    ktt = KttReplay()
    print(f"ranked in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    for r in replays:
        print(
            f"{r.device.name}: {r.path.name}, {len(r.keys)} configurations, {len(r.predictions.candidates)} "
            f"predicted, {len(r.predictions.rejected)} rejected by the model; optimum {r.optimum_ms:.4f} ms"
        )
    for replay in replays:
        print(f"\n{replay.device.name}:\n")
        runs = bench_tune.evaluate([replay], repeats)
        print(bench_tune.table(bench_tune.summarise([replay], runs)))
    print(f"\ntiming noise (run-to-run spread per configuration): {bench_tune.noise_note(replays)}\n")
    print(
        f"\n{ktt.device.name}: KTT's export, PADDING 0, {len(ktt.times)} configurations, "
        f"{len(ktt.predictions.candidates)} predicted, {len(ktt.predictions.rejected)} rejected by the model; optimum "
        f"{ktt.optimum_ms:.4f} ms (one run per configuration; only our search replays it, below)\n"
    )
    stop_rows = bench_tune.stop_rule_replays([*replays, ktt])
    print(bench_tune.stop_rule_table(stop_rows))
    print(f"\n{bench_tune.trap_table(stop_rows)}")
    below = bench_tune.below_random_sampling(stop_rows)
    print("\nwith the model's predictions below random sampling: " + ("; ".join(below) if below else "nowhere"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
