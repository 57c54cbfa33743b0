"""The typed hardware metrics of one launch candidate.

The estimator fills the core fields; plugins add their own numbers under
`Metrics.extras` (through `perf_estimate_extras`). Everything downstream
(prediction, ranking tables, datasets, calibration) reads attributes, so a
misspelt metric is an AttributeError at the line that misspells it, not a
silently missing column.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

#: the four volumes every report shows, in bytes per lattice update
VOLUME_FIELDS = (
    "dram_load_bytes_per_lup",
    "dram_store_bytes_per_lup",
    "l2_load_bytes_per_lup",
    "l2_store_bytes_per_lup",
)


@dataclass(frozen=True)
class Metrics:
    """Per lattice update (Lup) unless the name says otherwise; the compute of a kernel that computes outside its
    domain (`KernelModel.computes_outside_domain`: its FP work and shared loads) in the grid's edge blocks too."""

    #: L1 cycles from bank conflicts of all load instructions
    l1_cycles_per_lup: float
    #: L1 <- L2 and L1 -> L2 traffic
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    #: L2 <- DRAM and L2 -> DRAM traffic
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    flops_per_lup: float
    #: resident blocks per SM and what limits them (threads, blocks, registers, shared memory)
    blocks_per_sm: int
    occupancy_limited_by: str
    #: blocks that run at once (SMs x resident blocks), and the launch grid in blocks
    wave_blocks: int
    grid: tuple[int, int, int]
    #: registers per thread of the candidate's fold as compiled (0: not measured)
    registers_per_thread: int = 0
    #: local-memory traffic of spilled registers (included in the L1, L2 and DRAM volumes above, down to
    #: `spill_level`, the level that holds the spilled values of the resident threads; see `estimate.spills`)
    spill_load_bytes_per_lup: float = 0.0
    spill_store_bytes_per_lup: float = 0.0
    spill_level: str = ""
    #: shared-memory wavefronts of the loads and stores (bank conflicts included), and their warp requests
    shared_load_wavefronts_per_lup: float = 0.0
    shared_store_wavefronts_per_lup: float = 0.0
    shared_load_requests_per_lup: float = 0.0
    shared_store_requests_per_lup: float = 0.0
    # -- the inputs of the capacity-miss curves (what calibration refits them on) --------------------
    l1_requested_bytes_per_lup: float = 0.0
    l1_compulsory_bytes_per_lup: float = 0.0
    l1_oversubscription: float = 0.0
    dram_compulsory_load_bytes_per_lup: float = 0.0
    wave_overlap_bytes_per_lup: float = 0.0
    l2_coverage: float = 0.0
    previous_wave_ratio: float = 0.0
    dram_redundant_load_bytes_per_lup: float = 0.0
    dram_compulsory_store_bytes_per_lup: float = 0.0
    dram_redundant_store_bytes_per_lup: float = 0.0
    l2_oversubscription: float = 0.0
    #: numbers contributed by plugins, by name (with units in the name)
    extras: dict = field(default_factory=dict)

    def value(self, name: str) -> float:
        """A core metric or a plugin extra by name (for tables and datasets that name their columns)."""
        if name in _CORE_NAMES:
            return getattr(self, name)
        try:
            return self.extras[name]
        except KeyError:
            known = ", ".join(sorted(_CORE_NAMES - {"extras"} | set(self.extras)))
            raise KeyError(f"no metric {name!r}; known: {known}") from None

    def as_dict(self) -> dict:
        """Core fields and extras in one flat mapping (for JSON)."""
        flat = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items() if k != "extras"}
        flat.update(self.extras)
        return flat


_CORE_NAMES = frozenset(f.name for f in fields(Metrics))
