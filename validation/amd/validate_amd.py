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

from default_model import DataSet, cached, convolution_fields, repredicted, score, table, targets  # noqa: E402
from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.launch import DEFAULT_MODEL  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner  # noqa: E402
from pystencils_perf.rank import Ranking  # noqa: E402
from pystencils_perf.validate import metric_errors, ranking_quality, validate_tuned, write_report  # noqa: E402

#: issue 27's targets on AMD measurements
AMD_TARGETS = targets(0.85, 0.90, 30.0)
SPEC = HERE.parent / "a100_convolution" / "convolution.py"
DATA_SETS = (
    DataSet("MI250X convolution", "MI250X-GCD", "mi250x_convolution15_kernel_tuner_cache_noshmem.json.gz", timed=True),
    DataSet("W6600 convolution", "Radeon-PRO-W6600", "w6600_convolution15_kernel_tuner_cache_noshmem.json.gz",
            timed=True),
    DataSet("W7800 convolution", "Radeon-PRO-W7800", "w7800_convolution15_kernel_tuner_cache_noshmem.json.gz",
            timed=True),
)


def validation_for(data: DataSet, cache: Path | None):
    """The validation of one cache, its predictions made by today's default model."""
    device = get_device(data.device)
    spec = load_tunable_spec(SPEC)
    validation = cached(data.name, cache, lambda: validate_tuned(read_kernel_tuner(data.source_path()), spec, device))
    pairs = repredicted(validation.pairs, device, convolution_fields())
    ranking = Ranking(device, validation.ranking.kernel, sorted((p.candidate for p in pairs),
                                                                key=lambda c: -c.prediction.glups),
                      validation.ranking.rejected)
    return replace(validation, ranking=ranking, pairs=pairs, errors=metric_errors(pairs),
                   quality=ranking_quality(pairs))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="keep each GPU's validation here (see the module docstring)")
    args = parser.parse_args(argv)
    rows = []
    for data in DATA_SETS:
        validation = validation_for(data, args.cache)
        folder = HERE / data.device
        write_report(validation, folder, command=f"python3 validation/amd/validate_amd.py  # {data.name}")
        rows.append(score(data, validation.pairs))
        print(f"{data.name}: {folder.relative_to(HERE.parent.parent)}", file=sys.stderr)
    text = table(rows, AMD_TARGETS)
    print(text)
    (HERE / "report.md").write_text(
        f"# The default model ({DEFAULT_MODEL}) on AMD GPUs: the 15x15 convolution\n\n"
        "Reproduce: `python3 validation/amd/validate_amd.py`. Held out: nothing is fitted on these caches.\n\n"
        f"{text}\n\nPer GPU, with plots: " + ", ".join(f"[{d.device}]({d.device}/report.md)" for d in DATA_SETS) + ".\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
