"""SPEC: one field shifted by one cell in x on 256^3 cells (double), the fewest streams of the streaming probes.

stream1, stream7, stream19 and stream27 read and write 2, 14, 38 and 54 streams with the same accesses per
field: whether narrow blocks lose more with more streams in flight (validation/hopper/).
"""

import pystencils as ps

src, dst = ps.fields("src, dst: double[258, 258, 258]", layout="fzyx")
assignments = [ps.Assignment(dst[0, 0, 0], src[-1, 0, 0])]
