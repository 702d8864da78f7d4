#!/usr/bin/env python3
"""A seeded fuzzer for the runtime's bundle loader, on CPU.

Writes corrupted bundles (manifests with random JSON mutations, wrong types,
missing, renamed, duplicated or extra fields, bad grid rules and tensor maps,
text-level damage; cubins truncated, with flipped or extreme header fields,
of another architecture, naming another kernel) and loads each through
torch.ops.tiledattn.bundle_info and tensor_map_info, the entries the tests
use. Every load must either succeed, with valid JSON back, or raise a
RuntimeError whose message starts with "tiledattn: " and names the bundle's
manifest.json or cubin. Two properties are checked beside that: a cubin whose
header tables end past the file, or that has no string-table entry equal to
the manifest's kernel name, is rejected.

The loads run in a worker process, so a crash (a signal) is caught and
reported with the case that caused it; failing cases are saved under --out.
The last line is the count: "fuzz_bundles: N cases in T s (seed S): N loaded,
N rejected with a clear error, N failures". Exit status 1 on a failure.

    scripts/fuzz_bundles.py --cases 2000 --time 60
"""

import argparse
import copy
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python" / "test"))

import bundles  # noqa: E402  (python/test/bundles.py: stand-in bundles)

# Values of every JSON type, plausible and extreme.
VALUES = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    16,
    64,
    128,
    256,
    1024,
    232448,
    232449,
    2**31,
    2**63 - 1,
    2**63,
    -(2**63),
    2**64,
    10**30,
    0.5,
    64.0,
    -0.0,
    1e308,
    "",
    "f16",
    "bf16",
    "sm_90a",
    "sm_80",
    "none",
    "causal_top_left",
    "q",
    "memref",
    "../x",
    "a" * 300,
    "\u0000",
    "\u00e9\u4e2d",
    [],
    [1, 2],
    [64, 128, 1],
    {},
    {"x": "1"},
]
GRID_TOKENS = [
    "batch",
    "heads_q",
    "heads_kv",
    "seqlen_q",
    "seqlen_k",
    "head_dim",
    "block_m",
    "block_n",
    "multiprocessors",
    "unknown",
    "ceil_div(",
    "min(",
    "max(",
    "(",
    ")",
    ",",
    "+",
    "*",
    "-",
    "/",
    "0",
    "1",
    "999999999",
    "1234567890",
    " ",
]


def random_value(rng, depth=0):
    if depth < 3 and rng.random() < 0.1:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 3 and rng.random() < 0.1:
        return {rng.choice(["a", "x", "name", "kind"]): random_value(rng, depth + 1)}
    return copy.deepcopy(rng.choice(VALUES))


def random_grid_rule(rng):
    return "".join(rng.choice(GRID_TOKENS) for _ in range(rng.randint(0, 12)))


def all_paths(value, prefix=()):
    """Every (path, value) in a JSON document, containers included."""
    yield prefix, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from all_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from all_paths(item, (*prefix, i))


def parent_of(doc, path):
    for key in path[:-1]:
        doc = doc[key]
    return doc


# Manifest mutations on the parsed document.


def set_random(doc, rng):
    path, _ = rng.choice(list(all_paths(doc))[1:])
    parent_of(doc, path)[path[-1]] = random_value(rng)


def delete_member(doc, rng):
    path, _ = rng.choice(list(all_paths(doc))[1:])
    parent = parent_of(doc, path)
    del parent[path[-1]]


def rename_member(doc, rng):
    objects = [(p, v) for p, v in all_paths(doc) if isinstance(v, dict) and v]
    path, obj = rng.choice(objects)
    key = rng.choice(list(obj))
    obj[key + rng.choice(["_", "s", "X"]) if rng.random() < 0.5 else key.upper()] = obj.pop(key)


def add_member(doc, rng):
    objects = [v for _, v in all_paths(doc) if isinstance(v, dict)]
    rng.choice(objects)[rng.choice(["extra", "rows", "format_version", "x"])] = random_value(rng)


def set_grid_rule(doc, rng):
    if isinstance(doc.get("grid"), dict):
        doc["grid"][rng.choice(["x", "y", "z"])] = random_grid_rule(rng)


def shuffle_list(doc, rng):
    lists = [v for _, v in all_paths(doc) if isinstance(v, list) and len(v) > 1]
    if lists:
        rng.shuffle(rng.choice(lists))


def grow_list(doc, rng):
    lists = [v for _, v in all_paths(doc) if isinstance(v, list) and v]
    if lists:
        chosen = rng.choice(lists)
        chosen.extend(copy.deepcopy(chosen[: rng.randint(1, 9)]))


def change_int(doc, rng):
    ints = [(p, v) for p, v in all_paths(doc) if isinstance(v, int) and not isinstance(v, bool)]
    if ints:
        path, value = rng.choice(ints)
        parent_of(doc, path)[path[-1]] = rng.choice(
            [0, -1, 1, value + 1, value - 1, value * 2, 2**31, 2**63 - 1, 2**64, -(2**63)]
        )


DOC_MUTATIONS = [
    (set_random, 4),
    (delete_member, 3),
    (rename_member, 1),
    (add_member, 1),
    (set_grid_rule, 2),
    (shuffle_list, 1),
    (grow_list, 1),
    (change_int, 3),
]


# Manifest mutations on the text.


def text_truncate(text, rng):
    return text[: rng.randrange(len(text) + 1)]


def text_flip(text, rng):
    data = bytearray(text.encode("utf-8", "surrogateescape"))
    for _ in range(rng.randint(1, 6)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return data.decode("utf-8", "surrogateescape")


def text_duplicate_key(text, rng):
    keys = list(re.finditer(r'"(\w+)": [^,{}\[\]]+,', text))
    if not keys:
        return text
    m = rng.choice(keys)
    return text[: m.end()] + " " + m.group(0) + text[m.end() :]


def text_insert(text, rng):
    i = rng.randrange(len(text) + 1)
    junk = rng.choice(
        ["[" * 200, "{" * 80, "]", "}", ",", ":", "//", "/*", "\\u", "\ufeff", "\x00", "1e999", "-"]
    )
    return text[:i] + junk + text[i:]


def text_deep(text, rng):
    depth = rng.choice([63, 64, 65, 5000])
    return '{"format_version": ' + "[" * depth + "1" + "]" * depth + "}"


TEXT_MUTATIONS = [
    (text_truncate, 2),
    (text_flip, 2),
    (text_duplicate_key, 1),
    (text_insert, 2),
    (text_deep, 1),
]


# Cubin mutations.

ELF_FIELDS = {
    # offset: size of the ELF64 header fields the runtime reads
    4: 1,  # EI_CLASS
    5: 1,  # EI_DATA
    18: 2,  # e_machine
    32: 8,  # e_phoff
    40: 8,  # e_shoff
    48: 4,  # e_flags (the SM architecture)
    54: 2,  # e_phentsize
    56: 2,  # e_phnum
    58: 2,  # e_shentsize
    60: 2,  # e_shnum
}


def cubin_mutation(image: bytes, kernel: str, rng) -> "tuple[bytes, str]":
    data = bytearray(image)
    kind = rng.choice(
        ["truncate", "flip", "field", "field", "arch", "other_kernel", "empty", "garbage"]
    )
    if kind == "truncate":
        data = data[: rng.randrange(len(data) + 1)]
    elif kind == "flip":
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(min(len(data), 128))] = rng.randrange(256)
    elif kind == "field":
        offset = rng.choice(list(ELF_FIELDS))
        size = ELF_FIELDS[offset]
        value = rng.choice([0, 1, 2, 62, 190, 2 ** (8 * size) - 1, 2 ** (8 * size - 1), len(data)])
        value = rng.randrange(2 ** (8 * size)) if rng.random() < 0.3 else value
        if len(data) >= offset + size:
            data[offset : offset + size] = (value % 2 ** (8 * size)).to_bytes(size, "little")
    elif kind == "arch":  # another SM in e_flags (sm_80, sm_100, ...)
        if len(data) >= 52:
            flags = struct.unpack_from("<I", data, 48)[0]
            sm = rng.choice([50, 75, 80, 86, 89, 100, 120])
            struct.pack_into("<I", data, 48, (flags & ~0xFF00) | (sm << 8))
    elif kind == "other_kernel":
        name = rng.choice([kernel[1:], kernel[:-1], kernel + "_x", "x" + kernel, "main"])
        data = bytearray(bundles.fake_cubin(name))
    elif kind == "empty":
        data = bytearray()
    else:
        data = bytearray(rng.randrange(256) for _ in range(rng.randint(1, 300)))
    return bytes(data), kind


def headers_end(image: bytes) -> int:
    """Where the ELF64 program and section header tables end, as the runtime
    must compute it (Python integers do not wrap)."""

    def read(offset, size):
        return int.from_bytes(image[offset : offset + size], "little")

    return max(
        read(32, 8) + read(54, 2) * read(56, 2),
        read(40, 8) + read(58, 2) * read(60, 2),
    )


def seed_bundles() -> "list[tuple[dict, bytes]]":
    """(manifest, cubin) pairs to mutate: the stand-in bundles, and the
    compiled ones when a build has them (real cubins)."""
    seeds = [
        (bundles.manifest("f16", 64, False), None),
        (bundles.manifest("bf16", 128, True), None),
        (bundles.tma_manifest("bf16", 256, True), None),
        (
            bundles.manifest(
                params=bundles.manifest()["params"]
                + [{"name": "tile_counter", "kind": "zeroed_i32"}]
            ),
            None,
        ),
        # A score_mod reading tensors: captures (one strided), then a
        # split_tail workspace.
        (
            bundles.manifest(
                params=bundles.manifest()["params"]
                + [
                    {"name": "capture0", "kind": "memref", "rank": 2, "dtype": "i32"},
                    {
                        "name": "capture1",
                        "kind": "memref",
                        "rank": 4,
                        "dtype": "i8",
                        "layout": "strided",
                    },
                    {"name": "workspace", "kind": "zeroed_bytes_per_block", "bytes_per_block": 64},
                ]
            ),
            None,
        ),
    ]
    build = Path(os.environ.get("TILEDATTN_BUILD_DIR", ROOT / "build"))
    for manifest in sorted((build / "kernels").glob("*/manifest.json"))[:6]:
        seeds.append(
            (json.loads(manifest.read_text()), (manifest.parent / "kernel.cubin").read_bytes())
        )
    return [(m, c if c is not None else bundles.fake_cubin(m["kernel"])) for m, c in seeds]


def make_case(rng, seeds, directory: Path) -> dict:
    """Writes one corrupted bundle into `directory`; returns what was done."""
    manifest, cubin = copy.deepcopy(rng.choice(seeds))
    done = []
    target = rng.choice(["manifest", "manifest", "manifest", "cubin", "both"])
    text = None
    if target in ("manifest", "both"):
        if rng.random() < 0.7:
            for _ in range(rng.randint(1, 3)):
                mutation = rng.choices(*zip(*DOC_MUTATIONS))[0]
                try:
                    mutation(manifest, rng)
                    done.append(mutation.__name__)
                except (IndexError, KeyError, TypeError, ValueError):
                    pass
            text = json.dumps(manifest, indent=1, ensure_ascii=rng.random() < 0.5)
        else:
            text = json.dumps(manifest, indent=1)
            mutation = rng.choices(*zip(*TEXT_MUTATIONS))[0]
            text = mutation(text, rng)
            done.append(mutation.__name__)
    if target in ("cubin", "both"):
        kernel = manifest.get("kernel") if isinstance(manifest, dict) else None
        cubin, kind = cubin_mutation(cubin, kernel if isinstance(kernel, str) else "k", rng)
        done.append(f"cubin_{kind}")
    if text is None:
        text = json.dumps(manifest, indent=1)
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    (directory / "manifest.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    cubin_name = manifest.get("cubin") if isinstance(manifest, dict) else None
    if (
        not isinstance(cubin_name, str)
        or cubin_name in ("", ".", "..")
        or set("/\0") & set(cubin_name)
    ):
        cubin_name = "kernel.cubin"
    try:
        (directory / cubin_name).write_bytes(cubin)
    except OSError:  # a name too long for the file system
        (directory / "kernel.cubin").write_bytes(cubin)
    (directory / "kernel.ptx").write_text(".version 8.7\n.target sm_90a\n")
    return {"mutations": done}


# The worker: loads bundles in this process and reports one line per case.


def check_load(directory: Path) -> "tuple[str, str]":
    """('loaded' | 'rejected' | 'failure: ...', detail) for one bundle."""
    import torch

    path = str(directory)
    try:
        info = json.loads(torch.ops.tiledattn.bundle_info(path))
    except RuntimeError as error:
        message = str(error).split("\n")[0]
        if not message.startswith("tiledattn: ") or path not in message:
            return "failure: unclear error", message
        return "rejected", message
    except Exception as error:  # noqa: BLE001 (anything else is a failure)
        return f"failure: {type(error).__name__}", str(error).split("\n")[0]
    # Properties of an accepted bundle.
    manifest = json.loads((directory / "manifest.json").read_text())
    cubin = (directory / info["cubin"]).read_bytes()
    if headers_end(cubin) > len(cubin):
        return "failure: accepted a truncated cubin", f"headers end at {headers_end(cubin)}"
    if b"\0" + info["kernel"].encode() + b"\0" not in cubin:
        return "failure: accepted a cubin without the kernel", info["kernel"]
    if info["kernel"] != manifest["kernel"] or info["cubin"] != manifest["cubin"]:
        return "failure: bundle_info differs from the manifest", json.dumps(info)[:200]
    # The tensor maps' arguments for inputs of the bundle's shape.
    if info["dtype"] in ("f16", "bf16") and max(info["head_dim"], info["head_dim_v"]) <= 512:
        dtype = torch.float16 if info["dtype"] == "f16" else torch.bfloat16
        q = torch.zeros(1, 2, 8, info["head_dim"], dtype=dtype)
        v = torch.zeros(1, 2, 8, info["head_dim_v"], dtype=dtype)
        try:
            json.loads(torch.ops.tiledattn.tensor_map_info(q, q, v, path))
        except RuntimeError as error:
            message = str(error).split("\n")[0]
            if not message.startswith(("tiledattn: ", "tiledattn.sdpa_fwd: ")):
                return "failure: unclear tensor_map_info error", message
    return "loaded", ""


def worker(args) -> int:
    import torch

    torch.ops.load_library(args.library)
    root = Path(args.dir)
    for line in sys.stdin:
        index = int(line)
        directory = root / f"case{index}"
        verdict, detail = check_load(directory)
        print(json.dumps({"index": index, "verdict": verdict, "detail": detail}), flush=True)
    return 0


def library_path() -> str:
    env = os.environ.get("TILEDATTN_RUNTIME_LIB")
    if env:
        return env
    build = Path(os.environ.get("TILEDATTN_BUILD_DIR", ROOT / "build"))
    return str(build / "runtime" / "libtiledattn_runtime.so")


class Worker:
    def __init__(self, library, directory):
        self.argv = [sys.executable, __file__, "--worker", "--library", library, "--dir", directory]
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def load(self, index) -> "tuple[str, str]":
        self.proc.stdin.write(f"{index}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if line:
            result = json.loads(line)
            return result["verdict"], result["detail"]
        code = self.proc.wait()
        stderr = self.proc.stderr.read()
        self.start()
        return f"failure: worker died (exit {code})", stderr[-2000:]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def fuzz(args) -> int:
    library = library_path()
    if not Path(library).is_file():
        print(f"fuzz_bundles: error: no runtime library {library}", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    seeds = seed_bundles()
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    counts = {"loaded": 0, "rejected": 0}
    failures = 0
    start = time.monotonic()
    cases = 0
    with tempfile.TemporaryDirectory(prefix="fuzz-bundles-") as tmp:
        worker_ = Worker(library, tmp)
        while cases < args.cases and time.monotonic() - start < args.time:
            directory = Path(tmp) / f"case{cases}"
            case = make_case(rng, seeds, directory)
            verdict, detail = worker_.load(cases)
            cases += 1
            if verdict in counts:
                counts[verdict] += 1
                shutil.rmtree(directory, ignore_errors=True)
                continue
            failures += 1
            saved = out / f"{failures:03d}"
            shutil.copytree(directory, saved)
            (saved / "case.json").write_text(
                json.dumps({**case, "verdict": verdict, "detail": detail, "seed": args.seed}) + "\n"
            )
            shutil.rmtree(directory, ignore_errors=True)
            print(f"FAIL {verdict} ({', '.join(case['mutations'])}) -> {saved}\n  {detail[:300]}")
        worker_.close()
    elapsed = time.monotonic() - start
    print(
        f"fuzz_bundles: {cases} cases in {elapsed:.0f} s (seed {args.seed}): "
        f"{counts['loaded']} loaded, {counts['rejected']} rejected with a clear error, "
        f"{failures} failures"
    )
    return 1 if failures else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--time", type=float, default=60)
    parser.add_argument("--out", default=None, help="failures (default BUILD/fuzz-bundles)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--library", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.out is None:
        build = Path(os.environ.get("TILEDATTN_BUILD_DIR", ROOT / "build"))
        args.out = str(build / "fuzz-bundles")
    return fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
