"""The sectored LRU caches: hits, sector fills, eviction order, fetch groups, write-back counting."""

import pytest
from pystencils_perf_tracesim.cache import SectoredLRU, fetch_expansion

from pystencils_perf.errors import PerfError


def test_sector_misses_fill_only_missing_sectors():
    cache = SectoredLRU(4 * 128, 128, 32)
    assert cache.load_range([7], [0b0011], 0, 1) == ([7], [0b0011], 2)
    assert cache.load_range([7], [0b0110], 0, 1) == ([7], [0b0100], 1)  # sector 1 hit, sector 2 missed
    assert cache.load_range([7], [0b0111], 0, 1) == ([], [], 0)


def test_least_recently_used_line_is_evicted():
    cache = SectoredLRU(2 * 128, 128, 32)
    cache.load_range([1, 2], [1, 1], 0, 2)
    cache.load_range([1], [1], 0, 1)  # line 1 is now the most recent
    cache.load_range([3], [1], 0, 1)  # evicts line 2
    assert cache.load_range([1], [1], 0, 1) == ([], [], 0)
    assert cache.load_range([2], [1], 0, 1) == ([2], [1], 1)


def test_fetch_groups_of_64_bytes():
    assert fetch_expansion(4, 2)[0b0001] == 0b0011
    assert fetch_expansion(4, 2)[0b0101] == 0b1111
    cache = SectoredLRU(4 * 128, 128, 32, fetch_bytes=64)
    assert cache.load_range([0], [0b0001], 0, 1) == ([0], [0b0011], 2)
    assert cache.load_range([0], [0b0010], 0, 1) == ([], [], 0)
    with pytest.raises(PerfError, match="does not divide"):
        fetch_expansion(4, 3)


def test_each_dirtied_sector_counts_once_until_evicted():
    cache = SectoredLRU(1 * 128, 128, 32)
    assert cache.store_range([5], [0b0011], 0, 1) == 2
    assert cache.store_range([5], [0b0111], 0, 1) == 1
    cache.store_range([6], [0b0001], 0, 1)  # evicts line 5 (written back)
    assert cache.store_range([5], [0b0001], 0, 1) == 1


def test_capacity_below_one_line_is_refused():
    with pytest.raises(PerfError, match="smaller than one"):
        SectoredLRU(64, 128, 32)
