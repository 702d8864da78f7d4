"""The variants' schedules in python/tiledattn/schedules/variants: each is
the text its Python entry compiles (so the files cannot drift from what
runs), each compiles without spills, and a compiled one is called with its
captured tensors (tiledattn.compile(path)(q, k, v, captures=[...]))."""

import importlib.util
import json
from pathlib import Path

import pytest
import torch

import tiledattn
from tiledattn.errors import InvalidInputError, UnsupportedInputError

ROOT = Path(__file__).resolve().parents[2]
COMPILER = ROOT / "build" / "bin" / "tiledattn-compile"


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_variant_schedules", ROOT / "scripts" / "gen_variant_schedules.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.mark.parametrize("name", sorted(GEN.VARIANTS))
def test_each_file_is_the_text_its_python_entry_compiles(name):
    content, text = GEN.render(name)
    path = GEN.OUT / f"{name}.mlir"
    assert path.read_text() == content, (
        f"{path} is stale: python3 scripts/gen_variant_schedules.py rewrites it"
    )
    header, body = content.split("\n\n", 1)
    assert body == text and all(line.startswith("//") for line in header.splitlines())
    assert "Python: tiledattn." in header and "captures=[" in header


@pytest.mark.skipif(not COMPILER.is_file(), reason=f"{COMPILER} is not built")
@pytest.mark.parametrize("name", sorted(GEN.VARIANTS))
def test_each_file_compiles_and_refuses_the_wrong_captures(name, tmp_path):
    kernel = tiledattn.compile(GEN.OUT / f"{name}.mlir", cache=tmp_path)
    manifest = json.loads((kernel.path / "manifest.json").read_text())
    assert manifest["resources"]["spill_stores"] == 0
    wanted = [p for p in manifest["params"][6:] if p["name"].startswith("capture")]
    q = torch.empty(1, 4, 256, 128, dtype=torch.bfloat16)
    with pytest.raises(InvalidInputError, match=rf"'captures' must hold {len(wanted)} but got"):
        kernel(q, q, q, captures=[torch.empty(1)] * (len(wanted) + 1))
    if wanted:
        # The right count on CPU tensors: everything up to the launch.
        with pytest.raises(UnsupportedInputError, match="CUDA tensors"):
            kernel(q, q, q, captures=[torch.empty(1)] * len(wanted))
