"""Measured choice: tune on the GPU among the model's candidates, record the result, replay without a GPU.

`tuner.tune` is the loop every entry point shares; `search` decides what to
measure next and when to stop; `record` keeps the measurements on disk;
`replay` measures from a Kernel Tuner cache instead of a GPU.
"""

from .record import RecordKey, RecordStore, TuningRecord, tuning_dir
from .search import ModelGuidedSearch, SearchSettings
from .tuner import Candidate, MeasurementSource, TuneResult, tune

__all__ = [
    "Candidate",
    "MeasurementSource",
    "ModelGuidedSearch",
    "RecordKey",
    "RecordStore",
    "SearchSettings",
    "TuneResult",
    "TuningRecord",
    "tune",
    "tuning_dir",
]
