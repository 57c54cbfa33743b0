"""The instructions a thread issues, read from the SASS of its compiled code, and what the issue term makes of them."""

import pytest

import pystencils_perf as pp
from pystencils_perf.adapters import cuda_compiler, sass

#: nvdisasm's listing of a cubin (shortened): a kernel of two loads, an FMA and a store, the trap ptxas ends
#: every kernel with, and the padding after it
LISTING = """\
//--------------------- .text.axpy --------------------------
	.section	.text.axpy,"ax",@progbits
axpy:
.text.axpy:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   ISETP.GT.AND P0, PT, R0, 0xff, PT ;
        /*0030*/               @P0 EXIT ;
        /*0040*/                   LDG.E R2, [R4.64] ;
        /*0050*/              @!P1 LDG.E.CONSTANT R3, [R6.64] ;
        /*0060*/                   FFMA R2, R2, c[0x0][0x170], R3 ;
        /*0070*/                   STG.E [R4.64], R2 ;
        /*0080*/                   EXIT ;
.L_x_0:
        /*0090*/                   BRA `(.L_x_0);
        /*00a0*/                   NOP;
        /*00b0*/                   NOP;
.L_x_1:
//--------------------- .text.other --------------------------
        /*0000*/                   EXIT ;
"""


def test_the_listing_gives_the_kernels_instructions_without_its_padding():
    counts = sass.parse_sass(LISTING, "axpy")
    assert counts == sass.SassCounts(instructions=9, fma_instructions=1, looped=False)
    assert sass.parse_sass(LISTING, "missing") is None


def test_a_branch_back_is_a_loop_whose_trips_the_listing_does_not_give():
    looped = LISTING.replace("        /*0080*/                   EXIT ;\n",
                             "        /*0080*/                   BRA `(.L_x_2);\n").replace(
        "        /*0040*/", ".L_x_2:\n        /*0040*/")
    counts = sass.parse_sass(looped, "axpy")
    assert counts.looped and counts.instructions == 9


def _control(waits_on: int = 0, sets: int = 7) -> str:
    """The high 64 bits of an instruction as nvdisasm -hex prints them: the wait mask and the write scoreboard
    (7: none), the read scoreboard none."""
    return f"/* 0x{(waits_on << 52) | (7 << 49) | (sets << 46):016x} */"


def test_the_loads_in_flight_are_those_outstanding_where_the_code_waits():
    """Four loads on scoreboards 2 and 3, then an FMA that waits for both: four in flight, one latency for the four;
    then two loads on scoreboard 4 and an FMA that waits for it while nothing else is outstanding: two in flight.
    Six loads over three in flight on average wait two latencies."""
    code = [("LDG.E R2, [R4.64]", _control(sets=2)), ("LDG.E R3, [R4.64+0x4]", _control(sets=2)),
            ("LDG.E R6, [R4.64+0x8]", _control(sets=3)), ("LDG.E R7, [R4.64+0xc]", _control(sets=3)),
            ("FFMA R2, R2, R3, R6", _control(waits_on=0b001100)), ("FFMA R2, R7, R2, R2", _control()),
            ("LDG.E R8, [R4.64+0x10]", _control(sets=4)), ("LDG.E R9, [R4.64+0x14]", _control(sets=4)),
            ("FFMA R2, R8, R9, R2", _control(waits_on=0b010000)), ("EXIT", _control())]
    listing = "//--------------------- .text.k --------------------------\n" + "".join(
        f"        /*{16 * i:04x}*/                   {text} ;  /* 0x0000000000000000 */\n"
        f"                                                   {high}\n" for i, (text, high) in enumerate(code))
    counts = sass.parse_sass(listing, "k")
    assert (counts.instructions, counts.loads, counts.fma_instructions) == (10, 6, 3)
    assert counts.load_rounds == pytest.approx(6 / ((4 + 2) / 2))
    assert sass.parse_sass(LISTING, "axpy").load_rounds is None  # no control bits without -hex


def test_volta_is_not_read():
    """nvdisasm 13 dropped sm_70: there is nothing to read for a V100."""
    assert not sass.readable("sm_70")


def _compiler_for(arch):
    chosen = cuda_compiler.compiler_for(arch)
    if chosen is None or not sass.readable(chosen[1]):
        pytest.skip("no CUDA compiler, or no nvdisasm")
    return chosen


def test_the_compiled_instructions_count_the_address_arithmetic():
    """A load through the read-only path computes a 64-bit address of its own: the SASS of a kernel that reads a
    window of 9 values issues more than the 9 loads, 9 FMAs and one store the kernel's accesses count."""
    compiler, arch = _compiler_for("8.0")
    taps = " + ".join(f"{k + 1}.0f * __ldg(&a[i + {k} * n])" for k in range(9))
    source = (f'extern "C" __global__ void window(const float *a, float *b, int n) {{\n'
              f'  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) b[i] = {taps};\n}}\n')
    usage = cuda_compiler.compile_resources(source, "window", arch, compiler)
    assert usage.instructions_per_thread is not None and usage.instructions_per_thread > 9 + 9 + 1


def test_the_issue_term_takes_the_compiled_instructions_where_they_were_read():
    """The ranking's candidate carries the instructions of its code (more than its accesses and FMAs count), and
    its issue term is their time at the SM's issue rate; the counted ones stand where no code was read."""
    from pystencils_perf.catalog import star_3d_assignments
    from pystencils_perf.models import throughput

    _compiler_for("8.0")
    candidate = pp.rank(star_3d_assignments(1, (64, 32, 16)), "A100", blocks=[(64, 4, 1)], folds=[(1, 1, 1)]).best
    extras = candidate.metrics.extras
    assert extras["compiled_warp_instructions_per_lup"] > extras["warp_instructions_per_lup"]
    device = pp.get_device("A100")
    rate = throughput.constants_for(device).warp_instructions_per_cycle_per_sm * device.sm_count * device.clock_ghz * 1e9
    assert candidate.prediction.seconds_per_lup["issue"] == pytest.approx(extras["compiled_warp_instructions_per_lup"] / rate)
    counted = {k: v for k, v in extras.items() if k != "compiled_warp_instructions_per_lup"}
    assert throughput.warp_instructions_per_lup(counted) == extras["warp_instructions_per_lup"]
