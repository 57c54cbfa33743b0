"""CPU time and peak memory of a benchmark's process and its children, as the benchmarks report them."""

from __future__ import annotations

import resource


def own_peak_bytes() -> int:
    """This process's peak resident memory since it started its program: ``VmHWM`` where Linux has it. Linux's
    ``ru_maxrss`` also keeps the peak of the process that started it (it carries over ``execve``), so a
    subprocess of a large process would report that process's memory as its own."""
    try:
        with open("/proc/self/status") as status:
            return 1024 * next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return 1024 * resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: KiB


def cpu_and_peak() -> tuple[float, int]:
    """CPU seconds of this process and its waited-for children, and the larger peak RSS of the two (bytes)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime
    return cpu_s, max(own_peak_bytes(), 1024 * children.ru_maxrss)  # Linux: KiB
