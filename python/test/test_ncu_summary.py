"""scripts/ncu_source_summary.py on a small made-up ncu source page."""

import importlib.util
import pathlib

import pytest

_SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "ncu_source_summary.py"
_spec = importlib.util.spec_from_file_location("ncu_source_summary", _SCRIPT)
summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summary)

_CSV = """==PROF== Connected to process 1
ran sdpa_fwd_bf16_d64_causal 4 times
"Kernel Name","sdpa_fwd_bf16_d64_causal",
"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_barrier","stall_wait","stall_barrier (Not Issued)"
"0x10","  UTMALDG.4D [UR8], [UR20] ","10","100","0","10","0"
"0x20","  WARPGROUP.DEPBAR.LE gsb0, 0x0 ","50","800","45","5","0"
"0x30","  MUFU.EX2 R1, R1 ","30","800","0","30","0"
"0x40","@!P0  BRA 0x10 ","10","600","10","0","0"
"""


def test_groups_by_execution_count_and_runs():
    rows = summary.read_rows(_CSV)
    assert [r["Address"] for r in rows] == ["0x10", "0x20", "0x30", "0x40"]
    text = "\n".join(summary.summarize(rows, top=2))
    assert "4 instructions, 100 samples" in text
    assert "barrier 55.0%" in text and "wait 45.0%" in text
    # 0x20 and 0x30 ran 800 times each: one group with 80% of the samples,
    # and one run in address order with the wgmma wait and the MUFU in it.
    assert "ran      800x      2 instructions   80.0% of samples" in text
    assert "0x20..0x30 ran      800x     2 instr  80.0%  WARPGROUP.DEPBAR.LE, MUFU.EX2" in text
    top = text.split("top 2 instructions:")[1].splitlines()
    assert top[1].startswith("  0x20  50.0%") and "barrier 90%" in top[1]
    assert top[2].startswith("  0x30  30.0%")


def test_rejects_text_without_the_source_page():
    with pytest.raises(SystemExit, match="ncu --page source --csv"):
        summary.read_rows("==PROF== nothing here\n")
