import os
import tempfile

# pystencils reads its cache folder when first imported: keep it out of the home directory.
os.environ.setdefault("PYSTENCILS_CACHE_DIR", tempfile.mkdtemp(prefix="pystencils-perf-an5d-test-"))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs longer than a few seconds")
