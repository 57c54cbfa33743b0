"""Sectored LRU caches (seeds/SEED_MODELS.md 2(f) item 3).

A cache holds lines of `line_bytes`, each with one valid and one dirty bit per
sector; requests are ``(line, sector bit mask)`` pairs. Associativity is a
documented choice: *fully associative*. Neither paper nor device files give set
counts or hash functions for the L1 or L2 of the GPUs here, and a fully
associative LRU cache is exactly the reuse-distance rule of 2(f) item 3 (a hit
iff fewer distinct lines than the capacity were touched since the last use).
"""

from __future__ import annotations

from collections import OrderedDict

from pystencils_perf.errors import ConfigurationError


def fetch_expansion(sectors_per_line: int, sectors_per_fetch: int) -> list[int]:
    """For every sector mask, the mask of the whole fetch groups it touches (a miss fetches whole groups)."""
    if sectors_per_fetch < 1 or sectors_per_line % sectors_per_fetch:
        raise ConfigurationError(
            f"a fetch of {sectors_per_fetch} sectors does not divide a line of {sectors_per_line} sectors"
        )
    group = (1 << sectors_per_fetch) - 1
    table = []
    for mask in range(1 << sectors_per_line):
        expanded = 0
        for first in range(0, sectors_per_line, sectors_per_fetch):
            if mask & (group << first):
                expanded |= group << first
        table.append(expanded)
    return table


class SectoredLRU:
    """A fully associative LRU cache of sectored lines: loads fill missing sectors, stores mark sectors dirty."""

    def __init__(self, capacity_bytes: int, line_bytes: int, sector_bytes: int, fetch_bytes: int | None = None):
        if capacity_bytes < line_bytes:
            raise ConfigurationError(f"cache capacity {capacity_bytes} B is smaller than one {line_bytes}-B line")
        self.capacity_lines = capacity_bytes // line_bytes
        self._expand = fetch_expansion(line_bytes // sector_bytes, (fetch_bytes or sector_bytes) // sector_bytes)
        self._lines: OrderedDict[int, list[int]] = OrderedDict()  # line -> [valid mask, dirty mask]

    def load_range(self, lines: list[int], masks: list[int], start: int, stop: int) -> tuple[list[int], list[int], int]:
        """Read the sectors ``masks[k]`` of ``lines[k]`` for k in [start, stop); the lines and sector masks fetched
        from the next level (the misses), and how many sectors that is. One call per warp instruction keeps the
        interpreter's overhead low."""
        entries, expand, capacity = self._lines, self._expand, self.capacity_lines
        get, touch = entries.get, entries.move_to_end
        missed_lines, missed_masks, missed_sectors = [], [], 0
        for k in range(start, stop):
            line, mask = lines[k], masks[k]
            entry = get(line)
            if entry is None:
                fetched = expand[mask]
                entries[line] = [fetched, 0]
                if len(entries) > capacity:
                    entries.popitem(last=False)
            else:
                touch(line)
                missing = mask & ~entry[0]
                if not missing:
                    continue
                fetched = expand[missing] & ~entry[0]
                entry[0] |= fetched
            missed_lines.append(line)
            missed_masks.append(fetched)
            missed_sectors += fetched.bit_count()
        return missed_lines, missed_masks, missed_sectors

    def store_range(self, lines: list[int], masks: list[int], start: int, stop: int) -> int:
        """Write the sectors ``masks[k]`` of ``lines[k]`` for k in [start, stop) (write-back, allocate without
        fetching: sectors carry byte masks); returns how many sectors became dirty.

        Each sector that becomes dirty is written to the next level exactly once
        later (on eviction or at the end), so counting them here counts the
        write-back traffic without waiting for evictions.
        """
        entries, capacity = self._lines, self.capacity_lines
        get, touch = entries.get, entries.move_to_end
        dirtied = 0
        for k in range(start, stop):
            line, mask = lines[k], masks[k]
            entry = get(line)
            if entry is None:
                entries[line] = [mask, mask]
                if len(entries) > capacity:
                    entries.popitem(last=False)
                dirtied += mask.bit_count()
                continue
            touch(line)
            dirtied += (mask & ~entry[1]).bit_count()
            entry[0] |= mask
            entry[1] |= mask
        return dirtied
