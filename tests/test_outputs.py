"""Outputs are written whole or not at all: a temporary file or folder beside the destination, renamed when complete."""

import os
import stat

import pytest

from pystencils_perf.outputs import replacing_file, replacing_folder, write_text


def test_an_interrupted_file_keeps_the_previous_version(tmp_path):
    out = tmp_path / "ranking.json"
    out.write_text("previous")
    with pytest.raises(KeyboardInterrupt):
        with replacing_file(out) as fh:
            fh.write("half of the new")
            raise KeyboardInterrupt
    assert out.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["ranking.json"]
    write_text(out, "new")
    assert out.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["ranking.json"]


def test_a_new_folder_appears_complete(tmp_path):
    out = tmp_path / "deeper" / "report"
    with replacing_folder(out, last="report.md") as temporary:
        (temporary / "report.md").write_text("done")
        (temporary / "plot.png").write_text("png")
        assert not out.exists()  # nothing at the destination until the block ends
    assert sorted(p.name for p in out.iterdir()) == ["plot.png", "report.md"]
    assert [p.name for p in out.parent.iterdir()] == ["report"]


def test_an_existing_folder_keeps_its_other_files(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "README.md").write_text("mine")
    (out / "report.md").write_text("old")
    with replacing_folder(out, last="report.md") as temporary:
        (temporary / "report.md").write_text("new")
    assert {p.name: p.read_text() for p in out.iterdir()} == {"README.md": "mine", "report.md": "new"}
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


def test_written_files_and_folders_get_the_modes_the_umask_allows(tmp_path):
    """They were 0600 and 0700 (mkstemp's, mkdtemp's) whatever the umask."""
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "table.csv", "a,b\n")
        with replacing_folder(tmp_path / "report") as folder:
            (folder / "report.md").write_text("done\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "table.csv").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "report").stat().st_mode) == 0o755
