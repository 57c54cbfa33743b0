"""Extract the measured figures of te42kyfo/gpu-benches into `gpu_benches.json`.

gpu-benches (https://github.com/te42kyfo/gpu-benches, GPL-3.0, Dominik Ernst) publishes
the raw output of its micro-benchmarks per GPU as text tables. Only the numbers are
taken here (facts, with a citation of repository, file and commit); none of its code.
Run with the path of a git directory of the repository (``fetch`` brings one)::

    python3 validation/devices/extract_gpu_benches.py /work/.mirror/te42kyfo+gpu-benches/repo

Which files describe which GPU, as the repository names them (its README and the SM
counts implied by the thread counts of gpu-stream, threads at block size 32 / 32):
v100 = Tesla V100-PCIe (80 SMs), a100_40 / a100_80 = A100 40 GB / 80 GB (108 SMs),
h100_pcie = H100-PCIe (114 SMs), h200 = GH200 (132 SMs), l40 = L40 (142 SMs),
a40 = A40 (84 SMs), mi210 = MI210 (104 CUs), mi100 = MI100 (120 CUs), rx6900xt and
RX6900XT (gpu-stream's spelling) = Radeon RX 6900 XT (80 CUs; its README names it).
The RX 6900 XT's gpu-cache file is left out: past its 128 kB L1 the README calls the
values "bonkers", and its L0 capacity is read off gpu-latency instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPOSITORY = "te42kyfo/gpu-benches"
OUT = Path(__file__).with_name("gpu_benches.json")
BENCHMARKS = {
    "gpu-stream": ("v100", "a100_40", "a100_80", "a40", "h100_pcie", "h200", "l40", "mi210", "mi100", "RX6900XT"),
    "gpu-l2-cache": ("a100_80", "h100_pcie", "h200", "l40", "mi210", "mi100", "rx6900xt"),
    "gpu-cache": ("v100", "a100_80", "a40", "h100_pcie", "l40", "mi210", "mi100"),
}


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True).stdout


def _numeric_rows(text: str):
    for line in text.splitlines():
        words = line.split()
        if words and words[0].isdigit():
            yield words


def stream_table(text: str) -> dict:
    """gpu-stream: block size -> GB/s per kernel (the header names the kernels after '|')."""
    header = text.splitlines()[0].split("|")[1].split()
    table = {"block_size": [], **{k: [] for k in header}}
    for words in _numeric_rows(text):
        values = words[words.index("GB/s:") + 1 :]
        table["block_size"].append(int(words[0]))
        for kernel, value in zip(header, values):
            table[kernel].append(float(value))
    return table


def l2_cache_table(text: str) -> dict:
    """gpu-l2-cache: total data volume (kB) -> effective bandwidth (GB/s); columns: per-block kB, total kB, time, spread, bw."""
    rows = list(_numeric_rows(text))
    return {"total_kb": [int(w[2]) for w in rows], "gbs": [float(w[6]) for w in rows]}


def cache_table(text: str) -> dict:
    """gpu-cache: data volume per SM/CU (kB, one shared buffer read by one block per SM) -> effective bandwidth (GB/s)."""
    rows = list(_numeric_rows(text))
    return {"per_sm_kb": [int(w[0]) for w in rows], "gbs": [float(w[4]) for w in rows]}


PARSERS = {"gpu-stream": stream_table, "gpu-l2-cache": l2_cache_table, "gpu-cache": cache_table}


def extract(git_dir: str) -> dict:
    commit = _git(git_dir, "rev-parse", "HEAD").strip()
    data = {"repository": REPOSITORY, "commit": commit, "licence": "GPL-3.0 (figures only, cited)", "benchmarks": {}}
    for bench, gpus in BENCHMARKS.items():
        data["benchmarks"][bench] = {
            gpu: {"file": f"{bench}/{gpu}.txt", **PARSERS[bench](_git(git_dir, "show", f"{commit}:{bench}/{gpu}.txt"))}
            for gpu in gpus
        }
    return data


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: extract_gpu_benches.py GIT_DIR_OF_te42kyfo/gpu-benches")
    OUT.write_text(json.dumps(extract(sys.argv[1]), indent=1) + "\n")
    print(f"wrote {OUT}")
