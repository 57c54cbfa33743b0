"""The hardware metric estimator (Ernst et al., JPDC 2023, sec. III); its built-in plugin is `estimate.plugin`.

`backend` chooses how footprints are counted: ``"enum"`` (interval enumeration,
`footprint_enum`) or ``"isl"`` (set algebra with islpy, `footprint_isl`); both
give the same counts. ``"auto"`` is enumeration, which is faster at every size
measured so far. Plugins may offer further backends (`perf_footprint_backends`).
"""

from __future__ import annotations
