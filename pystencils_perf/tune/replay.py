"""Tuning without a GPU: a Kernel Tuner cache file is the measurement source.

The candidates are the cache's configurations that the SPEC describes (its
`fixed_parameters`), each predicted by the model with the kernel variant that
`kernel_for` gives for its non-block parameters; configurations the model
rejects (the device cannot run them) are never measured, as on a GPU. A
configuration that failed when it was recorded (Kernel Tuner's failure
markers) costs a measurement and returns no time, as it would on the GPU.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..devices import Device, get_device
from ..errors import MeasurementError
from ..launch import DEFAULT_MODEL
from ..measure.kernel_tuner import TunableSpec, TunerData, split_parameters
from ..rank import rank
from .record import kernel_hash, software_versions
from .tuner import Candidate, params_key


@dataclass(frozen=True)
class SpecCandidates:
    """The configurations a SPEC describes as candidates, and those the model rejected with its reason."""

    candidates: list[Candidate]
    rejected: list[tuple[dict, str]]


def spec_candidates(configurations: list[dict], spec: TunableSpec, device: Device | str, *, model: str | None = None,
                    backend: str = "auto", progress=None, source: str = "the search space") -> SpecCandidates:
    """Every configuration (tunable parameters by name) that `spec` describes, with the model's time per launch.

    Each variant (the parameters that are neither the block nor fixed) is ranked once, with the kernel that
    `spec.kernel_for` gives for it, by `model` (default `launch.DEFAULT_MODEL`). `progress` wraps the iteration over the
    variants, e.g. a progress bar; `source` names where the configurations come from, in errors.
    """
    dev = get_device(device)
    model = model or DEFAULT_MODEL
    groups: dict[tuple, list[tuple[dict, object]]] = {}
    for params in configurations:
        split = split_parameters(source, params, spec)
        if split is not None:
            others, launch = split
            groups.setdefault(tuple(sorted(others.items())), []).append((params, launch))
    if not groups:
        raise MeasurementError(f"{source}: no configuration matches the SPEC's fixed parameters {spec.fixed_parameters}")
    candidates, rejected = [], []
    variants = sorted(groups.items())
    for others, members in progress(variants) if progress else variants:
        ranking = rank(spec.kernel(dict(others)), dev, blocks=sorted({launch.block for _, launch in members}),
                       folds=[(1, 1, 1)], model=model, backend=backend)
        by_launch = {c.launch: c for c in ranking.candidates}
        reasons = dict(ranking.rejected)
        for params, launch in members:
            if launch in by_launch:
                seconds = spec.lattice_updates / by_launch[launch].prediction.lups_per_second
                candidates.append(Candidate(params, seconds, launch))
            else:
                rejected.append((params, reasons.get(launch, "not a candidate of the model")))
    return SpecCandidates(candidates, rejected)


def replay_candidates(data: TunerData, spec: TunableSpec, device: Device | str, **options) -> SpecCandidates:
    """The configurations of a cache, those that ran and those that failed (options as for `spec_candidates`)."""
    return spec_candidates([run.params for run in data.runs] + list(data.failed), spec, device, source=data.path,
                           **options)


def spec_kernel_key(spec: TunableSpec, candidates: list[Candidate]) -> str:
    """The record's kernel hash of a SPEC's space: the SPEC file's text and the candidates' parameters."""
    return kernel_hash(Path(spec.path).read_bytes(), [c.params for c in candidates])


def _file_hash(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class ReplaySource:
    """Times from a Kernel Tuner cache, looked up by the candidate's parameters."""

    def __init__(self, data: TunerData):
        self.data = data
        self.times = {params_key(run.params): run.time_ms for run in data.runs}
        self.times.update({params_key(params): None for params in data.failed})

    def fingerprint(self) -> dict[str, str]:
        """The cache's GPU name and the cache file's hash: its measurements are those of one GPU and set-up."""
        return {"name": self.data.device_name or "unnamed", "replay": f"{Path(self.data.path).name} "
                f"sha256:{_file_hash(self.data.path)[:16]}", **software_versions()}

    def time_ms(self, candidate: Candidate) -> float | None:
        key = params_key(candidate.params)
        if key not in self.times:
            raise MeasurementError(f"{self.data.path} has no measurement of {candidate.label}")
        return self.times[key]
