#!/usr/bin/env python3
"""A seeded mutation fuzzer for tiledattn-opt and tiledattn-compile.

Takes the shipped schedules (python/tiledattn/schedules) and the lit inputs
(test/**/*.mlir), mutates them (truncation, byte flips, token swaps, deleted,
duplicated or spliced lines, schedule fields set to random or extreme
integers, attributes and attribute entries removed, enum and boolean values
changed, numbers in types changed) and runs the tools on each with a
timeout. A case fails when a tool

  - dies by a signal (a crash), or exceeds the timeout (a hang),
  - prints an assertion failure, a stack dump, "PLEASE submit a bug report"
    or "LLVM ERROR" (a report_fatal_error instead of a diagnostic), or
  - exits non-zero without printing an "error:" diagnostic.

Each failing case is saved under --out (the input, the command, its output)
and printed; the last line is the count:
"fuzz_compiler: N cases in T s (seed S): N accepted, N rejected with a
diagnostic, N failures". Exit status 1 when a case failed.

    scripts/fuzz_compiler.py --build build --cases 200 --time 60
    scripts/fuzz_compiler.py --replay build/fuzz-compiler/001/input.mlir --tool opt \
        --flags=--tiledattn-to-ptx-pipeline
    scripts/fuzz_compiler.py --minimize build/fuzz-compiler/001

--minimize shrinks a saved failure (lines, then tokens) while it still fails
the same way, into minimized.mlir next to it: the start of a lit test under
test/Tools.
"""

import argparse
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Extreme and plausible values for integer fields.
EXTREME_INTS = [
    0,
    1,
    -1,
    2,
    3,
    7,
    15,
    16,
    17,
    31,
    33,
    63,
    64,
    65,
    127,
    128,
    129,
    192,
    255,
    256,
    257,
    511,
    512,
    1024,
    4096,
    65535,
    65536,
    2**31 - 1,
    2**31,
    2**32,
    2**32 + 64,
    2**63 - 1,
    2**63,
    2**64,
    -(2**31),
    -(2**63),
    10**30,
]
ENUM_WORDS = [
    "wgmma",
    "mma_sync",
    "tma",
    "cp_async",
    "none",
    "true",
    "false",
    "f16",
    "bf16",
    "f32",
    "i8",
    "unit",
    "foo",
    '""',
    "causal",
]
TOKEN_RE = re.compile(r"[A-Za-z_][\w.$]*|%[\w.$#]+|#[\w.]+|!\w+|\d+|\S")
FIELD_RE = re.compile(r"\b(\w+)(\s*=\s*)(-?\d+)\b")
ENTRY_RE = re.compile(r"\b\w+\s*=\s*(?:-?\d+|\w+|\"[^\"]*\")\s*,?\s*")
ENUM_RE = re.compile(r"\b(\w+)(\s*=\s*)([A-Za-z_]\w*)\b")
DIM_RE = re.compile(r"(?<=x)(\d+)(?=x)|(?<=<)(\d+)(?=x)")
ATTR_RE = re.compile(r"\b(?:tiledattn|gpu|nvvm)\.[\w.]+(?:\s*=\s*[^,}\n]+)?,?\s*")

# Signs of a tool failing in a way that is not a diagnostic.
FATAL_RE = re.compile(
    r"PLEASE submit a bug report|Stack dump:|Assertion .* failed|LLVM ERROR|"
    r"UNREACHABLE executed|terminate called|Segmentation fault|Aborted",
)
DIAGNOSTIC_RE = re.compile(r"(^|\s|:)error:", re.M)


# Mutations: each takes (text, rng, corpus) and returns the new text.


def truncate(text, rng, corpus):
    return text[: rng.randrange(len(text) + 1)]


def flip_bytes(text, rng, corpus):
    data = bytearray(text.encode("utf-8", "surrogateescape"))
    for _ in range(rng.randint(1, 8)):
        if not data:
            break
        i = rng.randrange(len(data))
        data[i] = rng.choice([rng.randrange(256), rng.randrange(32, 127), ord(" "), 0])
    return data.decode("utf-8", "surrogateescape")


def swap_tokens(text, rng, corpus):
    tokens = list(TOKEN_RE.finditer(text))
    if len(tokens) < 2:
        return text
    a, b = sorted(rng.sample(tokens, 2), key=lambda m: m.start())
    return text[: a.start()] + b.group() + text[a.end() : b.start()] + a.group() + text[b.end() :]


def replace_token(text, rng, corpus):
    tokens = list(TOKEN_RE.finditer(text))
    if not tokens:
        return text
    a = rng.choice(tokens)
    b = rng.choice(tokens)
    return text[: a.start()] + b.group() + text[a.end() :]


def delete_lines(text, rng, corpus):
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = rng.randrange(len(lines))
    del lines[i : i + rng.choice([1, 1, 1, 2, 3])]
    return "".join(lines)


def duplicate_line(text, rng, corpus):
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return "".join(lines)


def splice_lines(text, rng, corpus):
    other = rng.choice(corpus).splitlines(keepends=True)
    lines = text.splitlines(keepends=True)
    if not other:
        return text
    i = rng.randrange(len(other))
    lines.insert(rng.randrange(len(lines) + 1), "".join(other[i : i + rng.randint(1, 4)]))
    return "".join(lines)


def change_field(text, rng, corpus):
    fields = list(FIELD_RE.finditer(text))
    if not fields:
        return text
    m = rng.choice(fields)
    value = rng.choice(EXTREME_INTS) if rng.random() < 0.7 else rng.randint(-300, 300)
    return text[: m.start(3)] + str(value) + text[m.end(3) :]


def remove_entry(text, rng, corpus):
    entries = list(ENTRY_RE.finditer(text))
    if not entries:
        return text
    m = rng.choice(entries)
    return text[: m.start()] + text[m.end() :]


def change_enum(text, rng, corpus):
    enums = list(ENUM_RE.finditer(text))
    if not enums:
        return text
    m = rng.choice(enums)
    return text[: m.start(3)] + rng.choice(ENUM_WORDS) + text[m.end(3) :]


def change_dim(text, rng, corpus):
    dims = list(DIM_RE.finditer(text))
    if not dims:
        return text
    m = rng.choice(dims)
    value = rng.choice([0, 1, 8, 16, 32, 48, 80, 96, 128, 192, 256, 512, 2**31])
    return text[: m.start()] + str(value) + text[m.end() :]


def remove_attribute(text, rng, corpus):
    attrs = list(ATTR_RE.finditer(text))
    if not attrs:
        return text
    m = rng.choice(attrs)
    return text[: m.start()] + text[m.end() :]


SCHEDULE_RE = re.compile(r"#tiledattn\.schedule<([^>]*)>", re.S)
SCHEDULE_FIELD_RE = re.compile(r"(\w+)\s*=\s*([\w\"]+)")


def schedule_fields(corpus) -> "list[tuple[str, str]]":
    """Every (field, value) the corpus's schedules use."""
    pairs = set()
    for text in corpus:
        for schedule in SCHEDULE_RE.finditer(text):
            pairs.update(SCHEDULE_FIELD_RE.findall(schedule.group(1)))
    return sorted(pairs)


_FIELD_CACHE = {}


def schedule_crossover(text, rng, corpus):
    """Sets a schedule field to a value another schedule gives it, or adds
    a field another schedule has: plausible schedules that no one wrote,
    which reach the passes instead of the parser."""
    schedules = list(SCHEDULE_RE.finditer(text))
    if not schedules:
        return text
    key = id(corpus)
    if key not in _FIELD_CACHE:
        _FIELD_CACHE[key] = schedule_fields(corpus)
    field, value = rng.choice(_FIELD_CACHE[key])
    if value.lstrip("-").isdigit() and rng.random() < 0.5:
        number = int(value)
        value = str(rng.choice([number * 2, number // 2, number + 16, number - 16, number + 8]))
    schedule = rng.choice(schedules)
    body = schedule.group(1)
    existing = re.search(rf"\b{field}\s*=\s*[\w\"]+", body)
    if existing:
        body = body[: existing.start()] + f"{field} = {value}" + body[existing.end() :]
    else:
        body = body.rstrip() + f", {field} = {value}"
    return text[: schedule.start(1)] + body + text[schedule.end(1) :]


MUTATIONS = [
    (schedule_crossover, 8),
    (truncate, 1),
    (flip_bytes, 2),
    (swap_tokens, 2),
    (replace_token, 2),
    (delete_lines, 2),
    (duplicate_line, 1),
    (splice_lines, 1),
    (change_field, 5),
    (remove_entry, 3),
    (change_enum, 3),
    (change_dim, 2),
    (remove_attribute, 2),
]


def mutate(text, rng, corpus):
    names = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        mutation = rng.choices([m for m, _ in MUTATIONS], [w for _, w in MUTATIONS])[0]
        text = mutation(text, rng, corpus)
        names.append(mutation.__name__)
    return text, names


# Inputs and the commands that run them.

PIPELINES = [
    "--tiledattn-tile-sdpa",
    "--tiledattn-to-nvgpu-pipeline",
    "--tiledattn-to-ptx-pipeline",
]
DROPPED_FLAGS = {"-verify-diagnostics", "--verify-diagnostics"}


def opt_flags_of(text: str) -> "list[list[str]]":
    """The tiledattn-opt flags of each RUN line of a lit test, without
    -verify-diagnostics (a mutant's diagnostics are not the expected ones)."""
    out = []
    for line in text.splitlines():
        run = re.search(r"RUN:\s*(.*)", line)
        if not run or "tiledattn-opt" not in run.group(1):
            continue
        command = run.group(1).split("|")[0].split(">")[0]
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        words = words[words.index("tiledattn-opt") + 1 :] if "tiledattn-opt" in words else []
        flags = [w for w in words if w.startswith("-") and "%" not in w]
        flags = [w for w in flags if w not in DROPPED_FLAGS]
        if flags:
            out.append(flags)
    return out


def corpus_files() -> "list[Path]":
    schedules = sorted((ROOT / "python" / "tiledattn" / "schedules").rglob("*.mlir"))
    tests = sorted((ROOT / "test").rglob("*.mlir"))
    return schedules + tests


def commands_for(path: Path, text: str, build: Path, rng) -> "list[str]":
    """One command line for a mutant of `path`: its own RUN flags (lit
    inputs), a pipeline, or tiledattn-compile."""
    opt = str(build / "bin" / "tiledattn-opt")
    compile_ = str(build / "bin" / "tiledattn-compile")
    choices = [[opt, "INPUT", flag] for flag in PIPELINES]
    choices += [[opt, "INPUT", *flags] for flags in opt_flags_of(text)]
    compile_flags = [[], [], ["--sanitizer-build"], ["--experimental-wgmma"], ["--quiet"]]
    # Derived forms (tiledattn-derive-program before the pipeline), as
    # tiledattn.backward_kernels compiles them.
    compile_flags += [
        ["--derive=tiledattn-derive-program{mask=causal}"],
        ["--derive=tiledattn-derive-program{mask=causal element-type=f16 head-dim=96}"],
    ]
    choices += [[compile_, "INPUT", "-o", "OUTDIR", *f] for f in compile_flags]
    return rng.choice(choices)


def run_case(command, text, timeout, workdir: Path):
    """Runs `command` on `text`; returns (verdict, returncode, output)."""
    source = workdir / "input.mlir"
    source.write_bytes(text.encode("utf-8", "surrogateescape"))
    outdir = workdir / "bundle"
    argv = [str(source) if a == "INPUT" else str(outdir) if a == "OUTDIR" else a for a in command]
    try:
        result = subprocess.run(argv, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        output = (e.stderr or b"").decode("utf-8", "replace")
        return "hang", None, output
    finally:
        shutil.rmtree(outdir, ignore_errors=True)
    stderr = result.stderr.decode("utf-8", "replace")
    if result.returncode < 0:
        return f"crash (signal {-result.returncode})", result.returncode, stderr
    fatal = FATAL_RE.search(stderr)
    if fatal:
        return f"fatal ({fatal.group(0)})", result.returncode, stderr
    if result.returncode != 0 and not DIAGNOSTIC_RE.search(stderr):
        return "no diagnostic", result.returncode, stderr
    return ("accepted" if result.returncode == 0 else "rejected"), result.returncode, stderr


def verdict_kind(verdict: str) -> str:
    return verdict.split(" (")[0] if not verdict.startswith("fatal") else verdict


def save_failure(out: Path, index, case) -> Path:
    directory = out / f"{index:03d}"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "input.mlir").write_bytes(case["text"].encode("utf-8", "surrogateescape"))
    (directory / "output.txt").write_text(case["output"])
    record = {k: v for k, v in case.items() if k not in ("text", "output")}
    (directory / "case.json").write_text(json.dumps(record, indent=1) + "\n")
    return directory


def fuzz(args) -> int:
    build = Path(args.build).resolve()
    for tool in ("tiledattn-opt", "tiledattn-compile"):
        if not (build / "bin" / tool).is_file():
            print(
                f"fuzz_compiler: error: no {build / 'bin' / tool}; build it first", file=sys.stderr
            )
            return 2
    rng = random.Random(args.seed)
    files = corpus_files()
    texts = {p: p.read_text() for p in files}
    corpus = list(texts.values())
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    counts = {"accepted": 0, "rejected": 0}
    failures = []
    start = time.monotonic()
    cases = 0
    with tempfile.TemporaryDirectory(prefix="fuzz-compiler-") as tmp:
        while cases < args.cases and time.monotonic() - start < args.time:
            path = rng.choice(files)
            text, mutations = mutate(texts[path], rng, corpus)
            command = commands_for(path, texts[path], build, rng)
            verdict, code, output = run_case(command, text, args.timeout, Path(tmp))
            cases += 1
            if verdict in counts:
                counts[verdict] += 1
                continue
            case = {
                "verdict": verdict,
                "returncode": code,
                "source": str(path.relative_to(ROOT)),
                "mutations": mutations,
                "command": [Path(a).name if a.startswith(str(build)) else a for a in command],
                "seed": args.seed,
                "case": cases,
                "text": text,
                "output": output,
            }
            directory = save_failure(out, len(failures) + 1, case)
            failures.append(case)
            first = next((line for line in output.splitlines() if line.strip()), "")
            print(
                f"FAIL {verdict}: {' '.join(case['command'])} on a mutant of {case['source']} "
                f"({', '.join(mutations)}) -> {directory}\n  {first[:200]}"
            )
    elapsed = time.monotonic() - start
    kinds = {}
    for case in failures:
        kinds[verdict_kind(case["verdict"])] = kinds.get(verdict_kind(case["verdict"]), 0) + 1
    detail = f" ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})" if kinds else ""
    print(
        f"fuzz_compiler: {cases} cases in {elapsed:.0f} s (seed {args.seed}): "
        f"{counts['accepted']} accepted, {counts['rejected']} rejected with a diagnostic, "
        f"{len(failures)} failures{detail}"
    )
    return 1 if failures else 0


def tool_command(build: Path, tool: str, flags: "list[str]") -> "list[str]":
    if tool == "opt":
        return [str(build / "bin" / "tiledattn-opt"), "INPUT", *flags]
    return [str(build / "bin" / "tiledattn-compile"), "INPUT", "-o", "OUTDIR", *flags]


def replay(args) -> int:
    build = Path(args.build).resolve()
    command = tool_command(build, args.tool, args.flags.split() if args.flags else [])
    with tempfile.TemporaryDirectory(prefix="fuzz-compiler-") as tmp:
        verdict, code, output = run_case(
            command, Path(args.replay).read_text(errors="surrogateescape"), args.timeout, Path(tmp)
        )
    print(output, end="")
    print(f"fuzz_compiler: {verdict} (exit {code})")
    return 0 if verdict in ("accepted", "rejected") else 1


def minimize(args) -> int:
    """Line-, then token-level delta debugging of a saved failure, keeping
    its verdict kind."""
    directory = Path(args.minimize)
    case = json.loads((directory / "case.json").read_text())
    build = Path(args.build).resolve()
    command = [
        str(build / "bin" / a) if a.startswith("tiledattn-") and i == 0 else a
        for i, a in enumerate(case["command"])
    ]
    text = (directory / "input.mlir").read_bytes().decode("utf-8", "surrogateescape")
    want = verdict_kind(case["verdict"])
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-compiler-"))

    def fails(candidate: str) -> bool:
        verdict, _, _ = run_case(command, candidate, args.timeout, tmp)
        return verdict_kind(verdict) == want

    if not fails(text):
        print(f"fuzz_compiler: {directory} no longer fails ({want})")
        return 1

    def ddmin(parts, join):
        chunk = max(1, len(parts) // 2)
        while chunk >= 1:
            i, changed = 0, False
            while i < len(parts):
                candidate = parts[:i] + parts[i + chunk :]
                if candidate and fails(join(candidate)):
                    parts, changed = candidate, True
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        return parts

    lines = ddmin(text.splitlines(keepends=True), "".join)
    text = "".join(lines)
    pieces = re.split(r"(\s+)", text)
    text = "".join(ddmin(pieces, "".join))
    shutil.rmtree(tmp, ignore_errors=True)
    (directory / "minimized.mlir").write_text(text)
    print(text, end="" if text.endswith("\n") else "\n")
    print(f"fuzz_compiler: minimized to {len(text)} bytes -> {directory / 'minimized.mlir'}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.environ.get("TILEDATTN_BUILD_DIR", ROOT / "build"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=200, help="stop after this many cases")
    parser.add_argument("--time", type=float, default=60, help="or after this many seconds")
    parser.add_argument("--timeout", type=float, default=30, help="seconds per tool run")
    parser.add_argument("--out", default=None, help="failures (default BUILD/fuzz-compiler)")
    parser.add_argument("--replay", help="run one input file and print the verdict")
    parser.add_argument("--tool", choices=["opt", "compile"], default="opt")
    parser.add_argument("--flags", default="--tiledattn-to-ptx-pipeline")
    parser.add_argument("--minimize", help="a saved failure's directory")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = str(Path(args.build) / "fuzz-compiler")
    if args.replay:
        return replay(args)
    if args.minimize:
        return minimize(args)
    return fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
