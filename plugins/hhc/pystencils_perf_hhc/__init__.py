"""Prajapati et al.'s (PPoPP'17) analytic time model of hybrid hexagonal/classic (HHC) tiled stencils."""

from .devices import HhcDevice, get_hhc_device, hhc_devices
from .errors import StencilError, TileError
from .experiment import ExperimentSet, problems
from .model import HhcPrediction, Problem, TileSizes, compute_floor_seconds, predict
from .search import MIN_PITCH, SearchSpace, search_tiles, within_band
from .stencil import HhcStencil, paper_stencil, paper_stencils, stencil_from_assignments

__all__ = [
    "MIN_PITCH",
    "ExperimentSet",
    "HhcDevice",
    "HhcPrediction",
    "HhcStencil",
    "Problem",
    "SearchSpace",
    "StencilError",
    "TileError",
    "TileSizes",
    "compute_floor_seconds",
    "get_hhc_device",
    "hhc_devices",
    "paper_stencil",
    "paper_stencils",
    "predict",
    "problems",
    "search_tiles",
    "stencil_from_assignments",
    "within_band",
]
