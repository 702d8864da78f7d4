#!/usr/bin/env python3
"""Mutation check: the test suites must catch wrong kernels.

    scripts/mutation_check.py cpu [--build DIR]
    scripts/mutation_check.py make-kernels OUT [--kernels DIR] [--bundles A,B]
    scripts/mutation_check.py gpu MUTANTS [--kernels DIR]

Each mutant (scripts/mutants.py) is a small, plausible bug; the check
applies it and asserts that a suite fails, and prints one line per mutant
and `N killed, N survived`. Exit status 1 on any survivor or on a mutant
that does not apply (a check that changes nothing proves nothing).

cpu (CI, from scripts/test.sh): the text mutants on what tiledattn-opt
prints, through the lit suite (`lit --param mutant=NAME` on the suites that
run tiledattn-opt); the lowering FileChecks the mutant targets must be among
the tests that fail. Then the package mutants through the CPU pytest suite,
on a copy of python/.

make-kernels (build machine, ptxas): the PTX mutants of a few shipped
bundles, re-assembled, into OUT/<mutant>/<bundle>; the GPU round carries
them (the default build writes build/kernel-mutants).

gpu (GPU round, scripts/device-round.sh): for each kernel mutant, the GPU
tests run on the shipped bundles with the mutated ones in their place; then
the package mutants through the GPU tests.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import mutants  # noqa: E402

# Lit suites that run tiledattn-opt (the others cannot see a text mutant).
LIT_SUITES = ["Conversion", "Dialect", "Pipeline"]
# The lowering FileChecks that let these mutants through once (issue 28).
REQUIRED_KILLERS = {name: ["tiledattn-to-nvgpu.mlir"] for name in mutants.TEXT_MUTANTS}
# Shipped bundles the kernel mutants are applied to: both dtypes, every head
# dim, causal and not, persistent and one-tile.
DEFAULT_BUNDLES = ["sdpa_fwd_bf16_d128_causal", "sdpa_fwd_f16_d64", "sdpa_fwd_bf16_d256"]
# The GPU tests that see a mutated bundle first; the whole file if they pass.
GPU_FIRST = "every_bundle_is_right"


class Tally:
    def __init__(self, part):
        self.part, self.killed, self.survived = part, 0, []

    def record(self, name, killed, how):
        verdict = "killed  " if killed else "SURVIVED"
        print(f"{self.part} {verdict} {name:18s} {how}", flush=True)
        if killed:
            self.killed += 1
        else:
            self.survived.append(name)

    def finish(self):
        print(f"{self.part}: {self.killed} killed, {len(self.survived)} survived", flush=True)
        if self.survived:
            print(f"{self.part}: survivors: {', '.join(self.survived)}")
        return 1 if self.survived else 0


def lit_failures(build, mutant=None):
    """Runs the lit suites; returns (exit status, names of failed tests)."""
    lit = shutil.which("lit") or "/usr/lib/llvm-22/bin/lit"
    cmd = [lit, "-q", "--no-progress-bar"]
    if mutant:
        cmd += ["--param", f"mutant={mutant}"]
    cmd += [str(build / "test" / suite) for suite in LIT_SUITES]
    run = subprocess.run(cmd, capture_output=True, text=True)
    failed = [
        line.split("::")[1].split("(")[0].strip()
        for line in run.stdout.splitlines()
        if line.startswith("FAIL:") or line.startswith("UNRESOLVED:")
    ]
    return run.returncode, failed


def copy_package(mutant, workdir):
    """The checkout mirrored in workdir (links to every top-level entry but
    python/, which is copied) with the package mutant applied to the copy;
    returns the copy's python/ directory, or None when the mutant does not
    apply."""
    file, old, new = mutants.PACKAGE_MUTANTS[mutant]
    for entry in ROOT.iterdir():
        if entry.name not in ("python", ".git"):
            (workdir / entry.name).symlink_to(entry)
    copy = workdir / "python"
    shutil.copytree(ROOT / "python", copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / "tiledattn" / file
    text = path.read_text()
    if text.count(old) != 1:
        return None
    path.write_text(text.replace(old, new))
    return copy


def pytest(tests, env, extra=()):
    """pytest's exit status (1: tests ran and some failed) and the first
    failed test."""
    cmd = [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-rf", "-p", "no:cacheprovider"]
    run = subprocess.run([*cmd, *extra], env=env, capture_output=True, text=True)
    failed = [line.split()[1] for line in run.stdout.splitlines() if line.startswith("FAILED ")]
    return run.returncode, (failed[0].split("::", 1)[-1] if failed else "none")


def build_env(build, kernel_dir=None):
    env = dict(os.environ)
    env["TILEDATTN_KERNEL_DIR"] = str(kernel_dir or build / "kernels")
    env.setdefault("TILEDATTN_RUNTIME_LIB", str(build / "runtime" / "libtiledattn_runtime.so"))
    return env


def package_mutants(tally, test_dir_of, env, extra=()):
    for name in mutants.PACKAGE_MUTANTS:
        with tempfile.TemporaryDirectory() as tmp:
            copy = copy_package(name, pathlib.Path(tmp))
            if copy is None:
                tally.record(name, False, "does not apply: update scripts/mutants.py")
                continue
            status, first = pytest(test_dir_of(copy), env, extra)
            tally.record(name, status == 1, f"pytest exit {status}, first failure {first}")


def run_cpu(args):
    build = pathlib.Path(args.build).resolve()
    tally = Tally("cpu")
    status, failed = lit_failures(build)
    if status != 0:
        print(f"cpu: the lit suites fail without a mutant ({', '.join(failed)}): nothing to check")
        return 1
    for name in mutants.TEXT_MUTANTS:
        status, failed = lit_failures(build, name)
        missing = [
            t for t in REQUIRED_KILLERS.get(name, []) if not any(f.endswith(t) for f in failed)
        ]
        how = f"by {len(failed)} lit tests ({', '.join(sorted(failed))})"
        if missing:
            how += f"; not by {', '.join(missing)}"
        tally.record(name, bool(failed) and not missing, how)
    package_mutants(tally, lambda copy: [str(copy / "test")], build_env(build))
    return tally.finish()


def make_kernels(args):
    kernels, out = pathlib.Path(args.kernels), pathlib.Path(args.out)
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    bundles = args.bundles.split(",") if args.bundles else DEFAULT_BUNDLES
    shutil.rmtree(out, ignore_errors=True)
    failures = 0
    for name in mutants.PTX_MUTANTS:
        for bundle in bundles:
            source = kernels / bundle
            manifest = json.loads((source / "manifest.json").read_text())
            ptx, changes = mutants.mutate_ptx(name, (source / "kernel.ptx").read_text(), manifest)
            if not changes:
                print(f"error: mutant {name} does not apply to {bundle}")
                failures += 1
                continue
            target = out / name / bundle
            target.mkdir(parents=True)
            (target / "kernel.ptx").write_text(ptx)
            manifest["mutant"] = name
            (target / "manifest.json").write_text(json.dumps(manifest, indent=2))
            run = subprocess.run(
                [
                    ptxas,
                    f"-arch={manifest['target']}",
                    str(target / "kernel.ptx"),
                    "-o",
                    str(target / manifest["cubin"]),
                ],
                capture_output=True,
                text=True,
            )
            if run.returncode:
                print(f"error: ptxas rejects mutant {name} of {bundle}:\n{run.stderr}")
                failures += 1
    print(f"wrote {len(mutants.PTX_MUTANTS)} mutants of {len(bundles)} bundles to {out}")
    return 1 if failures else 0


def run_gpu(args):
    mutant_root, kernels = pathlib.Path(args.mutants), pathlib.Path(args.kernels).resolve()
    tally = Tally("gpu")
    gpu_tests = str(ROOT / "python" / "test" / "test_gpu.py")
    for name in mutants.PTX_MUTANTS:
        mutated = sorted((mutant_root / name).glob("*/manifest.json"))
        if not mutated:
            tally.record(name, False, f"no mutated bundles in {mutant_root / name}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            kernel_dir = pathlib.Path(tmp)
            for bundle in kernels.iterdir():
                if (bundle / "manifest.json").is_file():
                    (kernel_dir / bundle.name).symlink_to(bundle)
            for manifest in mutated:
                (kernel_dir / manifest.parent.name).unlink(missing_ok=True)
                (kernel_dir / manifest.parent.name).symlink_to(manifest.parent.resolve())
            env = build_env(ROOT / "build", kernel_dir)
            status, first = pytest([gpu_tests], env, ["-k", GPU_FIRST])
            how = f"test_gpu.py -k {GPU_FIRST}: exit {status}, first failure {first}"
            if status != 1:
                status, first = pytest([gpu_tests], env)
                how += f"; the whole file: exit {status}, first failure {first}"
            bundles = ", ".join(m.parent.name for m in mutated)
            tally.record(name, status == 1, f"{how}; mutated: {bundles}")
    package_mutants(
        tally,
        lambda copy: [str(copy / "test" / "test_gpu.py")],
        build_env(ROOT / "build", kernels),
        ["-k", "matches_reference"],
    )
    return tally.finish()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="part", required=True)
    cpu = sub.add_parser("cpu", help="lit and package mutants, no GPU (CI)")
    cpu.add_argument("--build", default=str(ROOT / "build"))
    make = sub.add_parser("make-kernels", help="PTX mutants of shipped bundles (needs ptxas)")
    make.add_argument("out")
    make.add_argument("--kernels", default=str(ROOT / "build" / "kernels"))
    make.add_argument("--bundles", help=f"comma-separated (default {','.join(DEFAULT_BUNDLES)})")
    gpu = sub.add_parser("gpu", help="kernel and package mutants through the GPU tests")
    gpu.add_argument("mutants", help="the make-kernels output")
    gpu.add_argument(
        "--kernels", default=os.environ.get("TILEDATTN_KERNEL_DIR", str(ROOT / "build" / "kernels"))
    )
    args = parser.parse_args(argv)
    return {"cpu": run_cpu, "make-kernels": make_kernels, "gpu": run_gpu}[args.part](args)


if __name__ == "__main__":
    sys.exit(main())
