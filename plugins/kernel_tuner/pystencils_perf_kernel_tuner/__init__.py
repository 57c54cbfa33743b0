"""pystencils-perf plugin: prune kernel_tuner search spaces with a ranking, so only what the model keeps is timed."""

from .pruning import Pruned, TunableKernel, TuneSpace, prune

__all__ = ["Pruned", "TunableKernel", "TuneSpace", "prune"]
