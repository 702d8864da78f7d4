#!/usr/bin/env python3
"""Minimal launcher: runs every kernel bundle through the CUDA driver API
(ctypes, no runtime library needed) and checks it against a float64
reference. The seed of lib/Runtime; used to verify bundles on a GPU.

Usage: python3 scripts/check_bundles.py [KERNEL_DIR] [--time]

--time: after the checks, time every bundle that passed on the paper shapes
(B x S = 16k, H x D = 2048) beside torch SDPA (cuDNN) in the same process;
a quick look only, the harness (python -m tiledattn.bench) is the measure.
"""

import ctypes
import functools
import json
import math
import pathlib
import sys

import torch

cuda = ctypes.CDLL("libcuda.so.1")


def check(rc, what):
    if rc != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(rc, ctypes.byref(name))
        raise RuntimeError(f"{what} failed: {name.value.decode()}")


def load(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    image = (bundle / manifest["cubin"]).read_bytes()
    module, func = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
    check(
        cuda.cuModuleGetFunction(ctypes.byref(func), module, manifest["kernel"].encode()),
        "cuModuleGetFunction",
    )
    if manifest["dynamic_smem_bytes"] > 0:  # the 48 KiB default counts static too
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
        check(
            cuda.cuFuncSetAttribute(
                func,
                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                manifest["dynamic_smem_bytes"],
            ),
            "cuFuncSetAttribute",
        )
    return manifest, func


def memref_args(t, keep):
    vals = [ctypes.c_void_p(t.data_ptr()), ctypes.c_void_p(t.data_ptr()), ctypes.c_int64(0)]
    vals += [ctypes.c_int64(s) for s in t.shape] + [ctypes.c_int64(s) for s in t.stride()]
    keep.extend(vals)
    return vals


TENSOR_MAP_DTYPE = {"f16": 6, "bf16": 9}  # CU_TENSOR_MAP_DATA_TYPE_*
TENSOR_MAP_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}  # CU_TENSOR_MAP_SWIZZLE_*


class TensorMap(ctypes.Structure):  # CUtensorMap: 128 opaque, 64-aligned bytes
    _fields_ = [("opaque", ctypes.c_uint64 * 16)]


def tensor_map(t, entry, dtype):
    """A 4-D tiled tensor map over t[B, H, S, D], dims innermost first, with
    the manifest entry's box and swizzle; out-of-bounds boxes read zeros."""
    # cuTensorMapEncodeTiled wants a 64-byte-aligned destination.
    raw = (ctypes.c_uint8 * (ctypes.sizeof(TensorMap) + 64))()
    tmap = TensorMap.from_buffer(raw, -ctypes.addressof(raw) % 64)
    tmap.raw = raw  # keeps the buffer alive with the view
    es = t.element_size()
    dims = (ctypes.c_uint64 * 4)(*reversed(t.shape))
    strides = (ctypes.c_uint64 * 3)(*(s * es for s in reversed(t.stride()[:3])))
    box = (ctypes.c_uint32 * 4)(entry["box"][0], entry["box"][1], 1, 1)
    ones = (ctypes.c_uint32 * 4)(1, 1, 1, 1)
    check(
        cuda.cuTensorMapEncodeTiled(
            ctypes.byref(tmap),
            TENSOR_MAP_DTYPE[dtype],
            4,
            ctypes.c_void_p(t.data_ptr()),
            dims,
            strides,
            box,
            ones,
            0,  # no interleave
            TENSOR_MAP_SWIZZLE[entry["swizzle"]],
            3,  # L2 promotion 256 B
            0,  # out-of-bounds elements read as zero
        ),
        f"cuTensorMapEncodeTiled({entry['operand']})",
    )
    return tmap


def grid_of(manifest, q, k):
    """The manifest's grid rules evaluated as the runtime does
    (docs/Runtime.md: integers, +, *, ceil_div, min and the shape names)."""
    B, Hq, Sq, D = q.shape
    names = {
        "batch": B,
        "heads_q": Hq,
        "heads_kv": k.shape[1],
        "seqlen_q": Sq,
        "seqlen_k": k.shape[2],
        "head_dim": manifest["head_dim"],
        "head_dim_v": manifest["head_dim_v"],
        "block_m": manifest["block_m"],
        "block_n": manifest["block_n"],
        "multiprocessors": multiprocessors(),
        "ceil_div": lambda a, b: -(-a // b),
        "min": min,
    }
    return tuple(eval(manifest["grid"][axis], {"__builtins__": {}}, names) for axis in "xyz")


@functools.cache
def multiprocessors():
    return torch.cuda.get_device_properties(0).multi_processor_count


def launch(manifest, func, q, k, v, scale, sync=True):
    B, Hq, Sq, D = q.shape
    # O takes V's head dim, which may be its own (head_dim_v).
    o = torch.full((B, Hq, Sq, v.shape[-1]), float("nan"), device=q.device, dtype=q.dtype)
    lse = torch.full((B, Hq, Sq), float("nan"), device=q.device, dtype=torch.float32)
    keep = []
    vals = []
    for t in (q, k, v, o, lse):
        vals += memref_args(t, keep)
    vals.append(ctypes.c_float(scale))
    grid = grid_of(manifest, q, k)
    if any(p["name"] == "tile_counter" for p in manifest["params"]):
        counter = torch.zeros(1, device=q.device, dtype=torch.int32)
        keep.append(counter)
        vals.append(ctypes.c_void_p(counter.data_ptr()))
    for p in manifest["params"]:
        if p["name"] == "workspace":  # split_tail: zero at the first launch
            workspace = torch.zeros(
                p["bytes_per_block"] * grid[0], device=q.device, dtype=torch.uint8
            )
            keep.append(workspace)
            vals.append(ctypes.c_void_p(workspace.data_ptr()))
    operands = {"q": q, "k": k, "v": v, "o": o}
    for entry in manifest.get("tensor_maps", []):  # by value, after scale
        vals.append(tensor_map(operands[entry["operand"]], entry, manifest["dtype"]))
    params = (ctypes.c_void_p * len(vals))(
        *[ctypes.cast(ctypes.pointer(x), ctypes.c_void_p) for x in vals]
    )
    stream = torch.cuda.current_stream().cuda_stream
    check(
        cuda.cuLaunchKernel(
            func,
            *grid,
            manifest["threads"],
            1,
            1,
            manifest["dynamic_smem_bytes"],
            ctypes.c_void_p(stream),
            params,
            None,
        ),
        "cuLaunchKernel",
    )
    if sync:
        torch.cuda.synchronize()
    return o, lse


def reference(q, k, v, causal, scale, dtype):
    g = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(g, dim=1)
    v = v.repeat_interleave(g, dim=1)
    s = (q.to(dtype) @ k.to(dtype).transpose(-1, -2)) * scale
    if causal:
        Sq, Sk = s.shape[-2:]
        keep = torch.ones(Sq, Sk, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(s.float() if dtype != torch.float64 else s, dim=-1)
    p = torch.softmax(s, dim=-1)
    return (p @ v.to(dtype)), lse


def time_bundles(bundles):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    # The harness's timing, from the package's pure-Python part (the checks
    # above need no more than the driver).
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
    from tiledattn.bench.measure import median_ms

    print("\nbundle                         S      tiledattn  cudnn  (TFLOP/s)")
    for bundle, manifest, func in bundles:
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[manifest["dtype"]]
        D, causal = manifest["head_dim"], manifest["causal"]
        Dv = manifest.get("head_dim_v", D)
        for S in (512, 1024, 8192, 16384):
            B, H = 16384 // S, 2048 // D
            q, k = (torch.randn(B, H, S, D, device="cuda", dtype=dtype) for _ in range(2))
            v = torch.randn(B, H, S, Dv, device="cuda", dtype=dtype)
            scale = 1.0 / math.sqrt(D)
            flops = 2 * B * H * S * S * (D + Dv) * (0.5 if causal else 1.0)
            ours = median_ms(functools.partial(launch, manifest, func, q, k, v, scale, sync=False))
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                sdpa = torch.nn.functional.scaled_dot_product_attention
                ref = median_ms(functools.partial(sdpa, q, k, v, is_causal=bool(causal)))
            print(f"{bundle.name:30s} {S:6d} {flops / ours / 1e9:9.0f} {flops / ref / 1e9:6.0f}")


def main():
    args = [a for a in sys.argv[1:] if a != "--time"]
    kdir = pathlib.Path(args[0] if args else "build/kernels")
    passed = []
    torch.manual_seed(0)
    torch.zeros(1, device="cuda")  # makes torch's primary context current
    failures = passes = 0
    for bundle in sorted(p for p in kdir.iterdir() if (p / "manifest.json").exists()):
        manifest, func = load(bundle)
        bundle_ok = True
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[manifest["dtype"]]
        D, causal = manifest["head_dim"], manifest["causal"]
        Dv = manifest.get("head_dim_v", D)
        for B, Hq, Hkv, Sq, Sk in [
            (2, 4, 4, 1, 1),
            (1, 2, 2, 17, 17),
            (2, 8, 2, 113, 203),
            (1, 4, 1, 1000, 1000),
            (1, 2, 2, 4097, 4097),
            (2, 4, 4, 239, 64),
            # Many waves of blocks (768 at block_m 64): faults that need
            # several resident blocks per multiprocessor show only here.
            (4, 16, 4, 1536, 1536),
        ]:
            q = torch.randn(B, Hq, Sq, D, device="cuda", dtype=dtype)
            k = torch.randn(B, Hkv, Sk, D, device="cuda", dtype=dtype)
            v = torch.randn(B, Hkv, Sk, Dv, device="cuda", dtype=dtype)
            scale = 1.0 / math.sqrt(D)
            try:
                o, lse = launch(manifest, func, q, k, v, scale)
            except RuntimeError as error:  # report and go on to the next case
                failures += 1
                bundle_ok = False
                print(f"FAIL {bundle.name:28s} B={B} Hq={Hq} Sq={Sq} Sk={Sk}: {error}")
                continue
            ref, ref_lse = reference(q, k, v, causal, scale, torch.float64)
            low, _ = reference(q, k, v, causal, scale, dtype)
            err = (o.double() - ref).abs().max().item()
            low_err = (low.double() - ref).abs().max().item()
            lse_err = (lse.double() - ref_lse).abs().max().item()
            ok = err <= 2 * low_err + 1e-5 and lse_err < 1e-2 and not torch.isnan(o).any()
            passes += ok
            bundle_ok &= bool(ok)
            failures += not ok
            print(
                f"{'ok  ' if ok else 'FAIL'} {bundle.name:28s} B={B} Hq={Hq} Hkv={Hkv} Sq={Sq} Sk={Sk} "
                f"err={err:.2e} eager_err={low_err:.2e} lse_err={lse_err:.2e}"
            )
        if bundle_ok:
            passed.append((bundle, manifest, func))
    if "--time" in sys.argv:
        time_bundles(passed)
    print(f"{passes} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
