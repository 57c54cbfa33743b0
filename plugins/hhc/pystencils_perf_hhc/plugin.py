"""Entry point of pystencils-perf-hhc: names the model, and refuses to rank launches with it.

The HHC model predicts the time of HHC-generated, time-tiled code from its tile
sizes; it has no term for a pystencils launch configuration (block size and
folding; the paper's n_thr enters no formula either, sec. 7). Asking
``rank(..., model="hhc")`` therefore gets a one-line error pointing to
`pystencils_perf_hhc.search_tiles` instead of a ranking that would be a constant.
"""

from __future__ import annotations

from pystencils_perf.errors import ConfigurationError
from pystencils_perf.hookspecs import hookimpl

MODEL_NAME = "hhc"


@hookimpl
def perf_models():
    return {
        MODEL_NAME: "Prajapati et al. (PPoPP'17) time model of HHC-tiled stencils: tile sizes, not launches (search_tiles)"
    }


@hookimpl
def perf_predict(model, launch, device, metrics, options):
    if options.model != MODEL_NAME:
        return None
    raise ConfigurationError(
        "the HHC model predicts tile sizes of hybrid hexagonal/classic tiled code, not launch configurations; "
        "use pystencils_perf_hhc.search_tiles(problem, device, c_iter_seconds)"
    )
