"""What one block's warps ask of shared memory: wavefronts (bank conflicts included) and warp requests.

Shared memory serves a request of a group of lanes in wavefronts: per wavefront each of its banks delivers one
word, so a request takes as many as its busiest bank has distinct words (lanes that read one word share it, a
broadcast). Groups are `Vendor.shared_memory_banks` lanes: a warp of 32 on NVIDIA, half a wave64 on AMD. An
element wider than a bank spans several words, so a warp's 8-B loads of consecutive elements take two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..kernel import AccessKind, KernelModel
from ..vendors import vendor_of
from .addresses import block_threads, cached_by_identity, compile_kernel
from .l1 import bank_cycles_per_instruction, in_rows, issued_instructions, rows_of


@dataclass(frozen=True)
class SharedRequests:
    """Per lattice update: wavefronts and warp requests of the shared loads and stores; and the 4-byte words a
    warp's lane loads, as the description has them (each distinct value once)."""

    load_wavefronts_per_lup: float = 0.0
    store_wavefronts_per_lup: float = 0.0
    load_requests_per_lup: float = 0.0
    store_requests_per_lup: float = 0.0
    load_words_per_warp: float = 0.0

    def compiled(self, load_words_per_thread: float | None) -> SharedRequests:
        """These requests where the compiled code loads `load_words_per_thread` words per thread (a warp's lane),
        not the description's: a compiler reloads what it cannot keep in registers, each load with the bank
        conflicts of those described (`ResourceUsage.shared_load_words_per_thread`; None: as described)."""
        if not load_words_per_thread or not self.load_words_per_warp:
            return self
        scale = load_words_per_thread / self.load_words_per_warp
        return replace(
            self,
            load_wavefronts_per_lup=self.load_wavefronts_per_lup * scale,
            load_requests_per_lup=self.load_requests_per_lup * scale,
            load_words_per_warp=load_words_per_thread,
        )


@cached_by_identity(maxsize=64)
def _shared_view(model: KernelModel) -> KernelModel:
    """One view per model, so that its compiled instructions are cached with it (`compile_kernel`)."""
    return model.shared_view()


def shared_requests(model: KernelModel, block: tuple[int, int, int], bids, device) -> SharedRequests:
    """Shared-memory wavefronts and requests of the blocks `bids` (representative blocks), per update they make."""
    if not model.shared_accesses:
        return SharedRequests()
    view = _shared_view(model)
    vendor = vendor_of(device)
    sizes = (device.warp_size, vendor.shared_memory_banks, vendor.shared_memory_bank_bytes)
    return _requests(compile_kernel(view, block), view.fields, tuple(block), tuple(map(tuple, bids)), sizes)


@cached_by_identity(maxsize=128)
def _requests(compiled, field_list, block, bids, sizes: tuple[int, int, int]) -> SharedRequests:
    """`shared_requests` of compiled shared accesses; cached for them: a SPEC's variants that differ in
    ``read_only`` only share them."""
    warp, banks, bank_bytes = sizes
    fields = {f.name: f for f in field_list}
    threads = block_threads(block, bids)
    lups = max(threads.updates(compiled.points), 1)
    # a shift by whole banks rotates every lane's bank alike: the busiest bank's count is the same
    instrs, weight, byte_addr, mask = issued_instructions(compiled, fields, bank_bytes, threads)
    if not instrs:
        return SharedRequests()
    is_store = np.array([i.kind is AccessKind.STORE for i in instrs], dtype=bool)
    element_bytes = np.array([fields[i.field].element_bytes for i in instrs], dtype=np.int64)
    lane_words = np.maximum(element_bytes // 4, 1)  # a lane's 4-byte words per load, as a compiler counts them
    wavefronts = np.zeros(len(instrs), dtype=np.int64)
    for eb in np.unique(element_bytes).tolist():
        sel = element_bytes == eb
        words = byte_addr[sel] // bank_bytes
        # each lane's element spans this many words, side by side in its group's row
        rows = np.concatenate(
            [rows_of(words + k, mask[sel], banks) for k in range(max(1, math.ceil(eb / bank_bytes)))], axis=1
        )
        wavefronts[sel] = bank_cycles_per_instruction(rows, banks, int(sel.sum()))
    issuing = in_rows(mask, warp, False).any(axis=1).reshape(len(instrs), -1)  # (instructions, warps)
    requests = issuing.sum(axis=1)
    return SharedRequests(
        load_wavefronts_per_lup=float(np.dot(wavefronts[~is_store], weight[~is_store])) / lups,
        store_wavefronts_per_lup=float(np.dot(wavefronts[is_store], weight[is_store])) / lups,
        load_requests_per_lup=float(np.dot(requests[~is_store], weight[~is_store])) / lups,
        store_requests_per_lup=float(np.dot(requests[is_store], weight[is_store])) / lups,
        load_words_per_warp=float(np.dot(requests[~is_store] * lane_words[~is_store], weight[~is_store]))
        / issuing.shape[1],
    )
