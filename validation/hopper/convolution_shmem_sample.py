"""Choose, before timing, the shared-memory convolution configurations a lent GPU times, and predict them blind.

    python3 validation/hopper/convolution_shmem_sample.py DEVICE OUT_DIR [--size 320] [--seed 2026]
    python3 validation/hopper/convolution_shmem_sample.py DEVICE OUT_DIR --rest-of SAMPLE.csv [--compiled-registers]
    python3 validation/hopper/convolution_shmem_sample.py DEVICE OUT_DIR --global-half [--compiled-registers]

The space is the shared-memory half of Kernel Tuner's A100 cache (`use_shmem = 1`: 2442 configurations,
blocks 16-256 x 1-16, tiles 1x1 to 4x4, read_only and use_padding). The sample covers every block shape and
every tile (each at least once, chosen at random among its configurations), then is filled at random to
`--size`. ``--rest-of`` takes instead every configuration of the space that an earlier sample (its CSV) does
not hold: a second lease times the rest of the space, blind to a model that the first sample's timings shaped.
Writes ``OUT_DIR/convolution_shmem_sample.csv`` (the configurations, the list the GPU script compiles and times) and ``OUT_DIR/convolution_shmem_blind_predictions.csv``: the default model's time per
launch for DEVICE through `validation/a100_convolution/convolution_shmem.py`, as `pystencils-perf tune
--replay` ranks them (occupancy from threads and shared memory per block; no compiled registers), or why
the model rejects the launch. With ``--compiled-registers`` each launch's registers and spills are those its code
compiles to, where ``validation/data/external`` has the table of DEVICE's architecture
(`convolution_summary.CompiledRegisters`, as `replay_caches.py --compiled-registers` and
`validation/default_model.py` score): the model then rejects the launches whose registers the SM cannot hold.
Committed before the GPU run, they make its first scores blind. ``--global-half`` takes the cache's other half
instead, every configuration without shared memory (`use_shmem = 0`, use_padding 0: 1920), predicted through
`validation/a100_convolution/convolution.py`, into ``convolution_global_sample.csv`` and
``convolution_global_blind_predictions.csv``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pystencils_perf.measure.kernel_tuner import load_tunable_spec
from pystencils_perf.outputs import replacing_file
from pystencils_perf.plugins import get_plugin_manager
from pystencils_perf.tempcache import use_temporary_pystencils_cache
from pystencils_perf.tune.replay import spec_candidates

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "validation"))  # convolution_summary: the compiled register tables
sys.path.insert(0, str(ROOT / "validation/data/external"))  # the compile script: each half's parameters
from compile_convolution_registers import FIXED, KEY, SHMEM_FIXED, SHMEM_KEY, configurations  # noqa: E402
from convolution_summary import CompiledRegisters  # noqa: E402

CACHE = ROOT / "validation/data/external/a100_convolution15_kernel_tuner_cache.json.gz"


@dataclass(frozen=True)
class Half:
    """One half of the cache's space: its description, the parameters that tell its configurations apart (`key`),
    those it fixes, and the stem of the files written."""

    spec: Path
    key: tuple[str, ...]
    fixed: dict
    stem: str


SHARED = Half(ROOT / "validation/a100_convolution/convolution_shmem.py", SHMEM_KEY, SHMEM_FIXED, "convolution_shmem")
GLOBAL = Half(ROOT / "validation/a100_convolution/convolution.py", KEY, FIXED, "convolution_global")


def space(half: Half = SHARED) -> list[tuple[int, ...]]:
    """The cache's configurations of `half`, by its key, in a fixed order."""
    return configurations([CACHE], half.fixed, half.key)


def sample(configs: list[tuple[int, ...]], size: int, seed: int) -> list[tuple[int, ...]]:
    """Every block shape and every tile at least once, the rest at random, `size` in all (sorted)."""
    rng = np.random.default_rng(seed)
    order = [configs[i] for i in rng.permutation(len(configs))]
    chosen: list[tuple[int, ...]] = []
    for part in (lambda c: c[:2], lambda c: c[2:4]):  # block shapes, then tiles
        covered = {part(c) for c in chosen}
        for config in order:
            if part(config) not in covered:
                chosen.append(config)
                covered.add(part(config))
    rest = [c for c in order if c not in set(chosen)]
    chosen += rest[: max(0, size - len(chosen))]
    return sorted(chosen)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device", help="the device key of the GPU to be timed, e.g. H200")
    parser.add_argument("out", type=Path, help="folder for the sample and the predictions")
    parser.add_argument("--size", type=int, default=320)
    parser.add_argument("--seed", type=int, default=2026)
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--rest-of", type=Path, metavar="CSV", help="every configuration this earlier sample lacks")
    choice.add_argument("--global-half", action="store_true", help="every configuration without shared memory")
    parser.add_argument(
        "--compiled-registers", action="store_true", help="each launch's registers and spills as its code compiles"
    )
    args = parser.parse_args(argv)
    use_temporary_pystencils_cache()
    if args.compiled_registers:
        get_plugin_manager().register(CompiledRegisters(), name="validation-compiled-registers")
    half = GLOBAL if args.global_half else SHARED
    if args.global_half:
        chosen = space(GLOBAL)
    elif args.rest_of is None:
        chosen = sample(space(), args.size, args.seed)
    else:
        with open(args.rest_of, newline="") as fh:
            earlier = {tuple(int(row[k]) for k in SHARED.key) for row in csv.DictReader(fh)}
        chosen = [c for c in space() if c not in earlier]
    args.out.mkdir(parents=True, exist_ok=True)
    with replacing_file(args.out / f"{half.stem}_sample.csv") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(half.key)
        writer.writerows(chosen)
    spec = load_tunable_spec(half.spec)
    params = [{**dict(zip(half.key, c)), **half.fixed} for c in chosen]
    predicted = spec_candidates(params, spec, args.device, source=CACHE.name)
    by_key = {tuple(c.params[k] for k in half.key): c.predicted_seconds for c in predicted.candidates}
    reasons = {tuple(p[k] for k in half.key): why for p, why in predicted.rejected}
    with replacing_file(args.out / f"{half.stem}_blind_predictions.csv") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow((*half.key, "predicted_ms", "rejected_because"))
        for config in chosen:
            seconds = by_key.get(config)
            writer.writerow((*config, "" if seconds is None else f"{1000 * seconds:.6g}", reasons.get(config, "")))
    tiles = len({c[2:4] for c in chosen})
    blocks = len({c[:2] for c in chosen})
    print(
        f"{len(chosen)} configurations ({blocks} block shapes, {tiles} tiles), {len(by_key)} predicted for "
        f"{args.device}, {len(reasons)} rejected by the model; written to {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
