"""tiledattn.compile with a stand-in tiledattn-compile. CPU only."""

import os
import stat
import subprocess
import sys
import textwrap

import bundles
import pytest
import torch

import tiledattn
from tiledattn.errors import CompileError, UnsupportedInputError

SCHEDULE = "tiledattn.sdpa {schedule = #tiledattn.schedule<block_m = 64>}\n"


@pytest.fixture
def fake_compiler(tmp_path, monkeypatch):
    """A tiledattn-compile that writes a stand-in bf16/d128 bundle, or fails
    with a diagnostic when the input says `bad`. Counts its runs."""
    template = bundles.make_bundle(tmp_path / "template", "bf16", 128, False)
    tool = tmp_path / "tiledattn-compile"
    tool.write_text(
        textwrap.dedent(
            f"""\
            #!/bin/sh
            echo run >> {tmp_path}/runs
            [ "$2" = "-o" ] || {{ echo "usage: tiledattn-compile IN -o OUT" >&2; exit 2; }}
            if grep -q bad "$1"; then
              echo "$1:1:5: error: 'tiledattn.sdpa' op schedule block_m = 3 is not a multiple of 16" >&2
              exit 1
            fi
            cp -r {template} "$3"
            """
        )
    )
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("TILEDATTN_COMPILE", str(tool))
    monkeypatch.setenv("TILEDATTN_CACHE_DIR", str(tmp_path / "cache"))
    runs = tmp_path / "runs"
    return lambda: len(runs.read_text().splitlines()) if runs.exists() else 0


def test_compile_bundle_dir(tmp_path):
    bundle = bundles.make_bundle(tmp_path, "f16", 64, True)
    kernel = tiledattn.compile(bundle)
    assert kernel.name == "sdpa_fwd_f16_d64_causal" and kernel.path == bundle.resolve()
    assert kernel.manifest["block_m"] == 64
    q = torch.empty(1, 2, 8, 64, dtype=torch.float16)  # CPU: stops at the device
    with pytest.raises(UnsupportedInputError, match=r"CUDA tensors"):
        kernel(q, q, q)
    with pytest.raises(
        UnsupportedInputError,
        match=r"bundle 'sdpa_fwd_f16_d64_causal' runs .* but got \('f16', 64, 64, False\)",
    ):
        kernel(q, q, q, is_causal=False)
    with pytest.raises(
        UnsupportedInputError,
        match=r"runs .*\('f16', 64, 64, True\) but got \('bf16', 64, 64, True\)",
    ):
        kernel(*(t.bfloat16() for t in (q, q, q)))


def test_compile_mlir_text_is_cached(fake_compiler):
    kernel = tiledattn.compile(SCHEDULE)
    assert kernel.name == "sdpa_fwd_bf16_d128" and fake_compiler() == 1
    again = tiledattn.compile(SCHEDULE)
    assert again.path == kernel.path and fake_compiler() == 1
    tiledattn.compile(SCHEDULE + "// changed\n")
    assert fake_compiler() == 2


def test_compile_mlir_file(fake_compiler, tmp_path):
    path = tmp_path / "schedule.mlir"
    path.write_text(SCHEDULE)
    assert tiledattn.compile(path).name == "sdpa_fwd_bf16_d128"
    assert tiledattn.compile(str(path)).name == "sdpa_fwd_bf16_d128"


def test_compile_diagnostics(fake_compiler, tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text("bad schedule {\n")
    with pytest.raises(
        CompileError,
        match=rf"tiledattn-compile failed on {path} \(exit 1\):\n{path}:1:5: error: .*block_m = 3",
    ):
        tiledattn.compile(path)


def test_compile_missing_path():
    with pytest.raises(CompileError, match=r"'/no/such/schedule.mlir' does not exist"):
        tiledattn.compile("/no/such/schedule.mlir")


def test_compile_without_tool(monkeypatch, tmp_path):
    monkeypatch.setenv("TILEDATTN_COMPILE", str(tmp_path / "missing"))
    with pytest.raises(CompileError, match=r"missing does not exist"):
        tiledattn.compile(SCHEDULE)


def test_missing_runtime_library_message(tmp_path):
    # A fresh process: this one may have loaded the library already.
    env = dict(os.environ, TILEDATTN_RUNTIME_LIB=str(tmp_path / "nope.so"))
    code = (
        "import tiledattn, torch\n"
        "q = torch.empty(1, 1, 4, 64, dtype=torch.float16, device='meta')\n"
        "try:\n"
        "    tiledattn.load_runtime()\n"
        "except tiledattn.RuntimeLibraryError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=os.path.dirname(os.path.dirname(tiledattn.__file__)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"the runtime library {tmp_path}/nope.so does not exist; build it with" in out
    assert "TILEDATTN_RUNTIME_LIB" in out


def test_a_rebuilt_compiler_replaces_the_by_text_copy(fake_compiler, tmp_path, monkeypatch):
    # The by-text copy (what a machine without the compiler finds) is keyed by
    # the text alone: another compiler's output for the same text replaces
    # it, so a fixed compiler's bundle is what the GPU machine runs.
    from tiledattn.compiler import _by_text

    kernel = tiledattn.compile(SCHEDULE)
    portable = _by_text(SCHEDULE, tmp_path / "cache")
    assert (portable / "kernel.ptx").read_bytes() == (kernel.path / "kernel.ptx").read_bytes()
    (portable / "kernel.ptx").write_text("// an older compiler's PTX\n")
    (tmp_path / "cache" / kernel.path.name).rename(tmp_path / "old-key")  # a new compiler's key
    again = tiledattn.compile(SCHEDULE)
    assert fake_compiler() == 2
    assert (portable / "kernel.ptx").read_bytes() == (again.path / "kernel.ptx").read_bytes()
    assert not any(p.name.startswith(".copy-") for p in portable.parent.iterdir())
