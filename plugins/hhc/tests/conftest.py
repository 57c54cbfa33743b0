import os
import tempfile

# pystencils writes a kernel cache; keep it out of the home directory
os.environ.setdefault("PYSTENCILS_CACHE_DIR", tempfile.mkdtemp(prefix="pystencils-perf-hhc-"))
