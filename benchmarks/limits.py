"""A time limit for one benchmark call: islpy cannot be interrupted, so the call runs in a forked child."""

from __future__ import annotations

import multiprocessing


def call_with_limit(function, limit_s: float, *args):
    """`function(*args)` in a child process, or None if it takes longer than `limit_s` seconds."""
    with multiprocessing.get_context("fork").Pool(1) as pool:
        result = pool.apply_async(function, args)
        try:
            return result.get(timeout=limit_s)
        except multiprocessing.TimeoutError:
            pool.terminate()
            return None
