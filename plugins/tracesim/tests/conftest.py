# pystencils writes a cache; keep it out of the home directory (before anything imports pystencils)
from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("tracesim-pystencils-")
