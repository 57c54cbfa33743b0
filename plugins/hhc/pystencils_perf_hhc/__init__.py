"""Prajapati et al.'s (PPoPP'17) analytic time model of hybrid hexagonal/classic (HHC) tiled stencils."""

from pystencils_perf.lazy import lazy_names

#: public name -> the module that defines it
_PUBLIC = {
    "HhcParameters": ".devices",
    "c_iter_of": ".devices",
    "get_hhc_device": ".devices",
    "hhc_parameters": ".devices",
    "parameters_of": ".devices",
    "StencilError": ".errors",
    "TileError": ".errors",
    "ExperimentSet": ".experiment",
    "problems": ".experiment",
    "HhcPrediction": ".model",
    "Problem": ".model",
    "TileSizes": ".model",
    "compute_floor_seconds": ".model",
    "predict": ".model",
    "MIN_PITCH": ".search",
    "SearchSpace": ".search",
    "search_tiles": ".search",
    "within_band": ".search",
    "HhcStencil": ".stencil",
    "paper_stencil": ".stencil",
    "paper_stencils": ".stencil",
    "stencil_from_assignments": ".stencil",
}


__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)

__all__ = [
    "MIN_PITCH",
    "ExperimentSet",
    "HhcParameters",
    "HhcPrediction",
    "HhcStencil",
    "Problem",
    "SearchSpace",
    "StencilError",
    "TileError",
    "TileSizes",
    "c_iter_of",
    "compute_floor_seconds",
    "get_hhc_device",
    "hhc_parameters",
    "paper_stencil",
    "paper_stencils",
    "parameters_of",
    "predict",
    "problems",
    "search_tiles",
    "stencil_from_assignments",
    "within_band",
]
