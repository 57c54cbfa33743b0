# pystencils reads its cache folder when first imported: keep it out of the home directory.
from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-an5d-test-")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs longer than a few seconds")
