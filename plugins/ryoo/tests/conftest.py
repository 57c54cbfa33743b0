# pystencils writes a kernel cache; keep it out of the home directory
from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-ryoo-")
