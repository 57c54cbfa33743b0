# pystencils reads its cache folder when first imported: keep it out of the home directory.
from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-loopy-test-")
