"""Compiles the kernels the package generates from text and must find
without a compiler (a wheel on a GPU machine has none) into
build/kernels/by-text, which the wheel carries as tiledattn/kernels/by-text:
decode_attention's, where scaled_dot_product_attention sends a decode
(Sq <= 16), kvcache_attention's (contiguous and pages of 128 and 256), and
the backward's tile programs in both dtypes and every head dim they take
(tiledattn.backward_kernels, which autograd uses). tiledattn.compile looks
there when there is no compiler.

    python3 scripts/package_kernels.py [OUT_DIR]

The build runs it (python/CMakeLists.txt, target tiledattn-packaged-kernels,
a dependency of tiledattn-kernels)."""

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

import tiledattn  # noqa: E402
from tiledattn.backward_kernels import HEAD_DIMS, program_forms, source  # noqa: E402
from tiledattn.decode import PACKAGED_HEAD_DIMS, _kernel_text  # noqa: E402
from tiledattn.kvcache import PACKAGED_PAGE_SIZES  # noqa: E402
from tiledattn.kvcache import kernel_text as kvcache_kernel_text  # noqa: E402


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "kernels" / "by-text"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as cache:
        for dtype in (torch.bfloat16, torch.float16):
            for d in PACKAGED_HEAD_DIMS:
                for causal in (False, True):
                    text = _kernel_text(dtype, d, d, causal)
                    tiledattn.compile(text, cache=cache)
                    print(f"decode {dtype} d{d} causal={causal}")
                for page in PACKAGED_PAGE_SIZES:
                    tiledattn.compile(kvcache_kernel_text(dtype, d, d, page), cache=cache)
                    print(f"kvcache {dtype} d{d} page={page}")
        for name, dtype, head_dim, derive in program_forms(HEAD_DIMS):
            tiledattn.compile(source(name), cache=cache, derive=derive)
            print(f"backward program {name} {dtype} head dim {head_dim}")
        for bundle in (Path(cache) / "by-text").iterdir():
            if bundle.is_dir():
                shutil.copytree(bundle, out / bundle.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
