import os
import tempfile

# pystencils writes a cache; keep it out of the home directory (before anything imports pystencils)
os.environ.setdefault("PYSTENCILS_CACHE_DIR", tempfile.mkdtemp(prefix="tracesim-pystencils-"))
