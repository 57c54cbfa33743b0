"""validation/rtx2080ti_convolution/compile_code_bytes.py: a kernel's code size read from its cubin, and the table."""

import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation" / "rtx2080ti_convolution"))

import compile_code_bytes  # noqa: E402


def _elf64(sections: dict[str, int]) -> bytes:
    """An ELF64 file with a section header table: a null section, the section names, then `sections` (name ->
    size), whose contents are left out (only their headers are read)."""
    names = b"\0.shstrtab\0" + b"".join(name.encode() + b"\0" for name in sections)
    header_bytes, section_header_bytes = 64, 64
    shoff = header_bytes + len(names)
    headers = [
        struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        struct.pack("<IIQQQQIIQQ", 1, 3, 0, 0, header_bytes, len(names), 0, 0, 1, 0),
    ]
    offset = len(b"\0.shstrtab\0")
    for name, size in sections.items():
        headers.append(struct.pack("<IIQQQQIIQQ", offset, 1, 6, 0, 0, size, 0, 0, 128, 0))
        offset += len(name) + 1
    elf = bytearray(header_bytes)
    elf[:4] = b"\x7fELF"
    struct.pack_into("<Q", elf, 0x28, shoff)
    struct.pack_into("<HHH", elf, 0x3A, section_header_bytes, len(headers), 1)
    return bytes(elf) + names + b"".join(headers)


def test_the_code_size_is_that_of_the_kernels_own_text_section():
    cubin = _elf64({".text._Z5otherv": 512, ".text._Z11ConvolutionPfS_S_": 85248, ".nv.constant0": 376})
    assert compile_code_bytes.text_bytes(cubin, "_Z11ConvolutionPfS_S_") == 85248
    assert compile_code_bytes.text_bytes(cubin, "_Z5otherv") == 512
    with pytest.raises(ValueError, match="_Z4nonev"):
        compile_code_bytes.text_bytes(cubin, "_Z4nonev")


def test_configurations_leave_out_blocks_whose_shared_copy_cannot_compile():
    configurations = compile_code_bytes.configurations(None)
    assert (32, 4, 4, 4, 0) in configurations and (32, 4, 4, 4, 1) in configurations
    # (4 * 8 + 14) x (32 * 8 + 14) floats: 49 680 B, over the 48 kB a block may hold
    assert (32, 4, 8, 8, 0) not in configurations
    assert all(
        compile_code_bytes.shared_copy_bytes(*c[:4]) <= compile_code_bytes.MAX_SHARED_BYTES for c in configurations
    )
    assert len(set(configurations)) == len(configurations)


def test_a_table_written_before_is_read_back_as_configuration_and_code_bytes(tmp_path):
    table = tmp_path / "code.csv"
    table.write_text(
        "# compiled by nvcc\nBLOCK_SIZE_X,BLOCK_SIZE_Y,TILE_SIZE_X,TILE_SIZE_Y,READ_ONLY,code_bytes\n"
        "32,4,1,1,0,8704\n16,16,4,4,0,117000\n"
    )
    assert compile_code_bytes.read_table(table) == {(32, 4, 1, 1, 0): 8704, (16, 16, 4, 4, 0): 117000}
