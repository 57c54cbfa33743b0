"""AN5D's Table 5 recomputed: the model's GFLOP/s and bottleneck for each of the paper's 84 configurations.

    python3 plugins/an5d/examples/table5.py [--csv] [--no-quirks]

--no-quirks predicts with paper_exact=False (radius in the stream overlap, x/ceil(x)
wave efficiency, Table 4's rounded peaks) instead of the authors' spreadsheets.
"""

import argparse

from pystencils_perf_an5d import predict
from pystencils_perf_an5d.table5 import table5_entries

COLUMNS = ("stencil", "gpu", "precision", "bT", "bS", "hSN", "model_gflops", "bottleneck")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", action="store_true", help="one CSV row per Table 5 entry")
    parser.add_argument("--no-quirks", action="store_true", help="paper_exact=False")
    args = parser.parse_args()
    if args.csv:
        print(",".join(COLUMNS))
    else:
        print(
            f"{'stencil':<11} {'gpu':<5} {'precision':<9} {'bT':>3} {'bS':>6} {'hSN':>5} {'model':>9} {'paper':>7} {'bottleneck':<10}"
        )
    for entry in table5_entries():
        prediction = predict(entry.problem, entry.gpu, entry.config, paper_exact=not args.no_quirks)
        b_s = "x".join(map(str, entry.config.b_s))
        if args.csv:
            row = (
                entry.stencil,
                entry.gpu,
                entry.precision,
                entry.config.b_t,
                b_s,
                entry.config.h_sn,
                f"{prediction.gflops:.2f}",
                prediction.bottleneck,
            )
            print(",".join(map(str, row)))
        else:
            print(
                f"{entry.stencil:<11} {entry.gpu:<5} {entry.precision:<9} {entry.config.b_t:>3} {b_s:>6} {entry.config.h_sn:>5} "
                f"{prediction.gflops:>9.2f} {entry.model_gflops:>7.0f} {prediction.bottleneck:<10}"
            )


if __name__ == "__main__":
    main()
