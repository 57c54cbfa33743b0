"""AN5D's search space (A17), register pruning (A14) and top-5 search (paper sec. 6.3)."""

import pytest

from pystencils_perf_an5d import (
    An5dParameterError,
    benchmark,
    get_an5d_device,
    paper_problem,
    registers_per_thread,
    search,
    search_space,
)
from pystencils_perf_an5d.table5 import table5_entries


@pytest.mark.parametrize(
    "dims, space, size", [(2, "paper", 144), (3, "paper", 64), (2, "artifact", 192), (3, "artifact", 64)]
)
def test_search_space_sizes(dims, space, size):
    configs = search_space(dims, space)
    assert len(configs) == len(set(configs)) == size


def test_unknown_space():
    with pytest.raises(An5dParameterError, match="search space 'huge'"):
        search_space(2, "huge")


def test_register_formula():
    """Sec. 6.3: b_T = 10, rad = 1 needs 60 registers (float) and 100 (double)."""
    assert registers_per_thread(10, 1, "float") == 60
    assert registers_per_thread(10, 1, "double") == 100


def test_every_table5_configuration_is_in_its_top5():
    """The paper measured the model's top 5 and printed the best: each Table 5 entry must be among them."""
    for entry in table5_entries():
        top = search(entry.problem, entry.gpu)
        assert entry.config in [p.config for p in top], f"{entry.stencil}/{entry.gpu}/{entry.precision}"


def test_search_returns_five_valid_configurations_best_first():
    problem, device = paper_problem(benchmark("box3d4r"), "double"), get_an5d_device("V100")
    top = search(problem, device)
    assert len(top) == 5
    assert [p.gflops for p in top] == sorted((p.gflops for p in top), reverse=True)
    for p in top:
        registers = registers_per_thread(p.config.b_t, 4, "double")
        assert registers <= 255 and registers * p.config.threads_per_block <= 65536
        assert min(p.config.b_s) > 2 * 4 * p.config.b_t


def test_paper_space_keeps_to_its_stream_blocks():
    top = search(paper_problem(benchmark("star2d2r"), "double"), "V100", space="paper", top=20)
    assert {p.config.h_sn for p in top} <= {256, 512, 1024}
