"""The mutants of scripts/mutation_check.py: wrong kernels the suites must catch.

Each mutant is a small, plausible bug, applied where it would come from:
- to the text tiledattn-opt prints (MLIR, and PTX inside gpu.binary), for
  the lit suite: `mutate_text(name, text)`;
- to a bundle's PTX, re-assembled with ptxas, for the GPU suite:
  `mutate_ptx(name, ptx, manifest)`;
- to the Python package, for the pytest suites: PACKAGE_MUTANTS.
Each returns the mutated text and how many places it changed; zero means
the mutant does not apply there (the check reports it rather than counting
an unchanged program as killed).
"""

import re

NEG_INF_MLIR, ZERO_MLIR = "0xFF800000", "0.000000e+00"
NEG_INF_PTX, ZERO_PTX, ONE_PTX = "0fFF800000", "0f00000000", "0f3F800000"

# What each mutant stands for (the list, and where it is applied).
DESCRIPTIONS = {
    "scale-dropped": "the softmax scale is ignored (taken as 1)",
    "neg-inf-zero": "masked scores and the initial row maximum are 0 instead of -inf",
    "causal-flipped": "comparisons take their operands the other way round (MLIR) / "
    "the key mask compares inclusively, off by one (PTX)",
    "last-key-ignored": "the kernel sees one key fewer than K has",
    "kv-block-skipped": "the kernel skips the last K/V block",
    "rows-not-written": "the first 64-column atom of every O store is not written",
    "lse-offset": "the log-sum-exp is off by a constant (log2 term + 1)",
    "causal-bundle": "the package runs the non-causal kernel for is_causal=True",
}
TEXT_MUTANTS = ["scale-dropped", "neg-inf-zero", "causal-flipped", "lse-offset"]
PTX_MUTANTS = [
    "scale-dropped",
    "neg-inf-zero",
    "causal-flipped",
    "last-key-ignored",
    "kv-block-skipped",
    "rows-not-written",
    "lse-offset",
]
# file (under python/tiledattn), exact text, replacement
PACKAGE_MUTANTS = {
    "causal-bundle": ("attention.py", "causal = bool(is_causal)", "causal = False"),
}


# --- tool output (MLIR text, possibly holding PTX) ---------------------------


def _drop_scale_mlir(text):
    """Every function's f32 argument (the scale) is replaced in its body by a
    constant 1.0, defined on the function's first line."""
    count, out, renamed = 0, [], None
    header = re.compile(r"^(\s*)(?:func\.func|gpu\.func)\s+@\S+\((.*)\)")
    for line in text.splitlines(keepends=True):
        m = header.match(line)
        if m and line.rstrip().endswith("{"):
            args = re.findall(r"(%[\w$.-]+):\s*f32\b", m.group(2))
            renamed = args[0] if args else None
            if renamed:  # On the header's line: every later line keeps its place.
                line = line.rstrip("\n") + " %mutant_scale = arith.constant 1.000000e+00 : f32\n"
            out.append(line)
            continue
        if renamed:
            line, n = re.subn(re.escape(renamed) + r"(?![\w$.-])", "%mutant_scale", line)
            count += n
        out.append(line)
    return "".join(out), count


def _flip_cmpi(text):
    ordered = "sgt|sge|slt|sle|ugt|uge|ult|ule"
    return re.subn(
        rf"arith\.cmpi ({ordered}), (%[\w$.-]+), (%[\w$.-]+)", r"arith.cmpi \1, \3, \2", text
    )


def _lse_offset_mlir(text):
    counter = iter(range(1 << 30))

    def add_one(m):
        i = next(counter)
        indent, result, call = m.group(1), m.group(2), m.group(3)
        return (
            f"{indent}%mutant_lg2_{i} = {call}\n"
            f"{indent}%mutant_one_{i} = arith.constant 1.000000e+00 : f32\n"
            f"{indent}{result} = arith.addf %mutant_lg2_{i}, %mutant_one_{i} : f32"
        )

    lg2 = r'^(\s*)(%[\w$.-]+) = (llvm\.call_intrinsic "llvm\.nvvm\.lg2\.approx\.f.*)$'
    return re.subn(lg2, add_one, text, flags=re.M)


def _mutate_mlir(name, text):
    if name == "scale-dropped":
        return _drop_scale_mlir(text)
    if name == "neg-inf-zero":
        return re.subn(NEG_INF_MLIR, ZERO_MLIR, text)
    if name == "causal-flipped":
        return _flip_cmpi(text)
    if name == "lse-offset":
        return _lse_offset_mlir(text)
    raise KeyError(f"no text mutant {name!r} (expected one of {TEXT_MUTANTS})")


_ASSEMBLY = re.compile(r'(assembly = ")((?:[^"\\]|\\.)*)(")')


def _decode(escaped):
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), escaped)


def _encode(ptx):
    plain = lambda c: c.isprintable() and c not in '"\\'  # noqa: E731
    return "".join(c if plain(c) else f"\\{ord(c):02X}" for c in ptx)


def mutate_text(name, text):
    """`name` applied to what tiledattn-opt printed: the MLIR, and the PTX
    held by gpu.binary ops (decoded, mutated, encoded again)."""
    count = 0

    def inside(m):
        nonlocal count
        ptx, n = mutate_ptx(name, _decode(m.group(2)))
        count += n
        return m.group(1) + _encode(ptx) + m.group(3)

    pieces = _ASSEMBLY.split(text)
    # split() with 3 groups: [outside, open, body, close, outside, ...]
    result = []
    for i in range(0, len(pieces), 4):
        mlir, n = _mutate_mlir(name, pieces[i])
        count += n
        result.append(mlir)
        if i + 3 < len(pieces):
            body = _ASSEMBLY.match(pieces[i + 1] + pieces[i + 2] + pieces[i + 3])
            result.append(inside(body))
    return "".join(result), count


# --- bundle PTX --------------------------------------------------------------


def param_index(manifest, name, field=None):
    """Index of kernel parameter `name` in the PTX parameter list: a memref
    expands to allocated and aligned pointers, offset, sizes and strides;
    `field` picks a memref's size ("size2") or pointer."""
    index = 0
    for p in manifest["params"]:
        if p["name"] == name:
            if field is None:
                return index
            if field.startswith("size"):
                return index + 3 + int(field[4:])
            raise KeyError(field)
        index += 3 + 2 * p["rank"] if p["kind"] == "memref" else 1
    raise KeyError(f"no parameter {name!r} in the manifest")


def _shift_param(ptx, kernel, index, delta):
    """The 64-bit parameter `index` loaded, then lowered by `delta` but kept
    at 1 or more (a kernel told of no keys at all would wait forever for
    its first block)."""
    return re.subn(
        rf"(ld\.param\.(?:b64|u64|s64)\s+(%\w+),\s*\[{kernel}_param_{index}\];)",
        rf"\1 sub.s64 \2, \2, {delta}; max.s64 \2, \2, 1;",
        ptx,
    )


def _drop_first_store_atoms(ptx):
    """Deletes the first TMA store of every run of them (atom 0 of each
    store site)."""
    lines = ptx.splitlines(keepends=True)
    store = re.compile(r"^\s*cp\.async\.bulk\.tensor\.\w+\.global\.shared")
    out, count, previous = [], 0, -10
    for i, line in enumerate(lines):
        if store.match(line):
            starts_run = i - previous > 3
            previous = i
            if starts_run:
                count += 1
                continue
        out.append(line)
    return "".join(out), count


def _lse_offset_ptx(ptx):
    """log2 of the row sum, which only the log-sum-exp takes, plus 1."""
    return re.subn(r"(lg2\.approx\.f32\s+(%\w+),\s*%\w+;)", rf"\1 add.f32 \2, \2, {ONE_PTX};", ptx)


def _drop_scale_ptx(ptx):
    """The kernel's f32 parameter (the scale) loaded as 1.0."""
    count = 0
    for param in re.findall(r"\.param \.f32 (\w+_param_\d+)", ptx):
        ptx, n = re.subn(
            rf"ld\.param\.(?:f32|b32)\s+(%\w+),\s*\[{param}\];", rf"mov.b32 \1, {ONE_PTX};", ptx
        )
        count += n
    return ptx, count


def mutate_ptx(name, ptx, manifest=None):
    """`name` applied to PTX: (new PTX, changes). The mutants that change a
    memref parameter need the bundle's manifest to find it."""
    if name == "scale-dropped":
        return _drop_scale_ptx(ptx)
    if name == "neg-inf-zero":
        return re.subn(NEG_INF_PTX, ZERO_PTX, ptx)
    if name == "causal-flipped":
        # The key mask: score c of a thread is masked when c >= threshold,
        # compiled to `setp.lt.s32 %p, threshold, c + 1`; inclusive is one
        # key off at the diagonal and at the sequence's end.
        return re.subn(r"setp\.lt\.s32(\s+%p\w*,\s*%r\w+,\s*-?\d+;)", r"setp.le.s32\1", ptx)
    if name in ("last-key-ignored", "kv-block-skipped"):
        if manifest is None:
            return ptx, 0
        index = param_index(manifest, "k", "size2")
        delta = 1 if name == "last-key-ignored" else manifest["block_n"]
        return _shift_param(ptx, manifest["kernel"], index, delta)
    if name == "rows-not-written":
        return _drop_first_store_atoms(ptx)
    if name == "lse-offset":
        return _lse_offset_ptx(ptx)
    raise KeyError(f"no PTX mutant {name!r} (expected one of {PTX_MUTANTS})")
