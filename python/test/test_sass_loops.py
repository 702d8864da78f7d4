"""scripts/sass_loops.py on a small made-up cuobjdump -sass listing."""

import importlib.util
import pathlib

import pytest

_SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "sass_loops.py"
_spec = importlib.util.spec_from_file_location("sass_loops", _SCRIPT)
sass_loops = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sass_loops)

# A block loop (0x20..0x60) inside a tile loop (0x10..0x70), the kernel's
# EXIT, then an out-of-line mbarrier retry that jumps back into the body.
_SASS = """
        code for sm_90a
        /*0000*/                   MOV R1, c[0x0][0x28] ;   /* 0x00000a0000017a02 */
        /*0010*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2 ;
        /*0020*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], RZ ;
        /*0030*/                   MUFU.EX2 R3, R3 ;
        /*0040*/                   BAR.SYNC.DEFER_BLOCKING R4, 0x100 ;
        /*0050*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0060*/               @P1 BRA 0x20 ;
        /*0070*/               @P2 BRA 0x10 ;
        /*0080*/                   EXIT ;
        /*0090*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2 ;
        /*00a0*/                   BRA 0x10 ;
"""


def test_finds_backward_branches_innermost_first():
    found = sass_loops.loops(_SASS)
    assert [(loop["start"], loop["end"], loop["count"]) for loop in found] == [
        (0x20, 0x60, 5),
        (0x10, 0x70, 7),
    ]
    inner, outer = found
    assert (inner["HGMMA"], inner["MUFU"], inner["bar"]) == (1, 1, 1)
    assert (outer["HGMMA"], outer["MUFU"], outer["bar"]) == (1, 1, 2)


def test_side_by_side_listing(tmp_path, capsys):
    old = tmp_path / "old.sass"
    new = tmp_path / "new.sass"
    old.write_text(_SASS)
    new.write_text(
        _SASS.replace("IADD3 R5, R5, 0x1, RZ", "IADD3 R5, R5, 0x1, RZ ;\n        /*0058*/ NOP")
    )
    sass_loops.main([str(old), str(new)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [str(old), str(new)]
    assert "5 instr" in lines[1] and lines[1].count("instr") == 2
    assert lines[1].rstrip().endswith("6 instr  HGMMA   1  MUFU   1  bar   1")


def test_rejects_a_missing_kernel(tmp_path):
    with pytest.raises(SystemExit, match="expected a bundle directory"):
        sass_loops.sass_text(tmp_path / "missing")


def test_wait_distance_counts_the_softmax_left_under_the_pv():
    body = [
        "WARPGROUP.DEPBAR.LE gsb0, 0x1",
        "FMNMX R1, R2, R3, !PT",
        "MUFU.EX2 R4, R4",
        "WARPGROUP.DEPBAR.LE gsb0, 0x0",
        "MUFU.EX2 R5, R5",
    ]
    assert sass_loops.wait_distance(body) == (3, 1)
    assert sass_loops.wait_distance(body[1:]) is None  # no S wait
    assert sass_loops.wait_distance(body[:3]) is None  # no P.V wait after it
    listing = _SASS.replace(
        "MUFU.EX2 R3, R3 ;",
        "WARPGROUP.DEPBAR.LE gsb0, 0x1 ;\n        /*0034*/ MUFU.EX2 R3, R3 ;\n"
        "        /*0038*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;",
    )
    inner = sass_loops.loops(listing)[0]
    assert inner["waits"] == (2, 1)
    assert sass_loops.describe(inner).endswith("waits 2/1")
