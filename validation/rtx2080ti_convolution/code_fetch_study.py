"""Study: the RTX 2080 Ti reads the kernel's machine code through L2 and DRAM too, which the volumes leave out.

    nice -n 10 python3 validation/rtx2080ti_convolution/code_fetch_study.py [--cache DIR] [--out FILE]

Nsight Compute's ``dram__sectors_read`` and ``lts__t_sectors_op_read`` count every read, instruction fetches
among them. KTT's convolution unrolls its 15x15 filter loop for every output of a thread's tile, so its code
grows from 9 kB (tile 1x1) to 198 kB (8x3 at 32x8 blocks) (`compile_code_bytes.py`, sm_75). This sets the
code sizes beside what the counters measure beyond the estimator's volumes, and scores the DRAM load ranking
with the code read once per launch added. `--cache DIR` shares `default_model.py`'s pickles of the
estimator's metrics. Writes `code_fetch.md` beside this file; nothing here is fitted and nothing changes the
product.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

import default_model as dm  # noqa: E402
from compile_code_bytes import read_table, shared_copy_bytes  # noqa: E402
from convolution_shmem import INPUT, lattice_updates  # noqa: E402
from convolution_summary import variant_params  # noqa: E402
from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.estimate import composition  # noqa: E402
from pystencils_perf.outputs import replacing_file  # noqa: E402

HERE = Path(__file__).resolve().parent
CODE_BYTES = HERE.parent / "data" / "external" / "ktt_convolution15_code_bytes_sm_75.csv"
DATA_SET = next(d for d in dm.DATA_SETS if d.name == "RTX 2080 Ti KTT")
LUPS = lattice_updates
INPUT_BYTES = INPUT * INPUT * 4
MAIN_BLOCK = (32, 4)
#: code sizes (kB) at whose bounds the rows are grouped
CODE_BINS_KB = (0, 40, 48.7, 51, 60, 80, 110, 200)


def key(pair) -> tuple[int, ...]:
    params = variant_params(pair)
    return (*pair.launch.block[:2], int(params["TILE_SIZE_X"]), int(params["TILE_SIZE_Y"]), int(params["READ_ONLY"]))


def code_of(sizes, k) -> int:
    """The launch's own code size where it was compiled, else that of the same launch with READ_ONLY 0, else that
    of its tile and READ_ONLY at 32x4 blocks."""
    return sizes.get(k) or sizes.get((*k[:4], 0)) or sizes[(*MAIN_BLOCK, *k[2:])]


def neighbour_hits(pair, device) -> float:
    """DRAM load if the overlap with the previous wave hits wherever a block's neighbour one grid row later still
    finds its input in L2 (a row of blocks' footprints within L2): the rule tried on 2026-11-27 (docs/validation)."""
    metrics = pair.candidate.metrics
    bx, by, tx, ty = key(pair)[:4]
    row_bytes = metrics.grid[0] * shared_copy_bytes(bx, by, tx, ty)
    # the overlap's misses alone: the formula with no new, no redundant volume
    missed = float(
        composition.dram_load(
            0.0, metrics.wave_overlap_bytes_per_lup, metrics.previous_wave_ratio, 0.0, 0.0, device.unified_l2
        ).evaluate(device.curves)
    )
    return metrics.dram_load_bytes_per_lup - (missed if row_bytes < device.l2_capacity_bytes else 0.0)


def at_main_block(pairs, sizes) -> str:
    lines = [
        "| tile | code kB | DRAM read beyond the input once, kB | L2 read measured - predicted, MB |",
        "|---|---|---|---|",
    ]
    chosen = sorted((code_of(sizes, key(p)), key(p), p) for p in pairs if key(p)[:2] == MAIN_BLOCK and key(p)[4] == 0)
    for code, k, p in chosen:
        dram_excess = p.measured.values["dram_load"] * LUPS - INPUT_BYTES
        l2_excess = (p.measured.values["l2_load"] - p.candidate.metrics.l2_load_bytes_per_lup) * LUPS
        lines.append(f"| {k[2]}x{k[3]} | {code / 1e3:.1f} | {dram_excess / 1e3:.1f} | {l2_excess / 1e6:.1f} |")
    return "\n".join(lines)


def by_code_size(pairs, sizes) -> str:
    code = np.array([code_of(sizes, key(p)) for p in pairs]) / 1e3
    dram = np.array([p.measured.values["dram_load"] * LUPS - INPUT_BYTES for p in pairs]) / 1e3
    l2 = (
        np.array([(p.measured.values["l2_load"] - p.candidate.metrics.l2_load_bytes_per_lup) * LUPS for p in pairs])
        / 1e6
    )
    lines = [
        "| code kB | rows | DRAM read beyond the input once, kB (median; 10th-90th percentile) | "
        "L2 read measured - predicted, MB (median; 10th-90th) |",
        "|---|---|---|---|",
    ]
    for low, high in zip(CODE_BINS_KB, CODE_BINS_KB[1:]):
        rows = (code >= low) & (code < high)
        if rows.any():
            d, l2_mb = (np.percentile(v[rows], (50, 10, 90)) for v in (dram, l2))
            lines.append(
                f"| {low:g}-{high:g} | {rows.sum()} | {d[0]:.1f} ({d[1]:.1f}-{d[2]:.1f}) | "
                f"{l2_mb[0]:.1f} ({l2_mb[1]:.1f}-{l2_mb[2]:.1f}) |"
            )
    return "\n".join(lines)


def block_variation(sizes) -> str:
    lines = [
        "| tile | code kB at 32x4 | over the other blocks compiled: min - median - max, kB (blocks) |",
        "|---|---|---|",
    ]
    for tx, ty in sorted({k[2:4] for k in sizes}):
        others = [sizes[k] / 1e3 for k in sizes if k[2:] == (tx, ty, 0) and k[:2] != MAIN_BLOCK]
        main = sizes.get((*MAIN_BLOCK, tx, ty, 0))
        if others:
            lines.append(
                f"| {tx}x{ty} | {f'{main / 1e3:.1f}' if main else '-'} | {min(others):.1f} - "
                f"{np.median(others):.1f} - {max(others):.1f} ({len(others)}) |"
            )
    return "\n".join(lines)


def rankings(pairs, sizes, device) -> str:
    measured = np.array([p.measured.values["dram_load"] for p in pairs])
    committed = np.array([p.candidate.metrics.dram_load_bytes_per_lup for p in pairs])
    code_per_lup = np.array([code_of(sizes, key(p)) for p in pairs]) / LUPS
    neighbour = np.array([neighbour_hits(p, device) for p in pairs])
    lines = ["| DRAM load predicted as | Spearman | MAPE % |", "|---|---|---|"]
    for name, predicted in (
        ("the estimator (committed)", committed),
        ("the estimator + the code read once per launch", committed + code_per_lup),
        ("the neighbour rule", neighbour),
        ("the neighbour rule + the code read once per launch", neighbour + code_per_lup),
    ):
        mape = 100 * np.mean(np.abs(predicted - measured) / measured)
        lines.append(f"| {name} | {dm.spearman(predicted, measured):.3f} | {mape:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="default_model.py's cache of the estimator's metrics")
    parser.add_argument("--out", type=Path, default=HERE / "code_fetch.md", help="the Markdown file to write")
    args = parser.parse_args(argv)
    sizes = read_table(CODE_BYTES)
    pairs = [p for p in dm.cached(DATA_SET.name, args.cache, DATA_SET.rank) if "dram_load" in p.measured.values]
    device = get_device(DATA_SET.device)
    text = (
        f"## Study: the kernel's code in the RTX 2080 Ti's L2 and DRAM reads\n\n"
        f"Reproduce: `python3 validation/rtx2080ti_convolution/code_fetch_study.py`; code sizes: "
        f"`{CODE_BYTES.name}` (`compile_code_bytes.py`, sm_75). Read beyond: what Nsight Compute counted "
        f"beyond the input read once (DRAM) and beyond the estimator's L2 load (L2), per launch of "
        f"{LUPS} updates. The model leaves both out; see the validation page's section on this GPU.\n\n"
        f"### Ranking the DRAM load\n\n{rankings(pairs, sizes, device)}\n\n"
        f"### All {len(pairs)} rows by code size\n\n{by_code_size(pairs, sizes)}\n\n"
        f"### At {MAIN_BLOCK[0]}x{MAIN_BLOCK[1]} blocks, READ_ONLY 0\n\n{at_main_block(pairs, sizes)}\n\n"
        f"### Code size by block size (READ_ONLY 0)\n\n{block_variation(sizes)}\n"
    )
    with replacing_file(args.out) as fh:
        fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
