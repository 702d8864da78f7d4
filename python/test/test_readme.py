"""The README's examples, run as written (a doc test).

The "Write a schedule, compile it, look at each stage" block runs line by
line in a temporary directory that sees the checkout's python/ and the
build's bin/ under the names the README uses; every tool, flag, pass, ninja
target, CMake option and path the README names must exist, and the Python
example's API names must be tiledattn's. Needs the build (build/ or
$TILEDATTN_BUILD_DIR) for the tools, no GPU.
"""

import ast
import inspect
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import torch

import tiledattn

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BUILD = Path(os.environ.get("TILEDATTN_BUILD_DIR", ROOT / "build"))
TIMEOUT_S = 600


def code_blocks(lang: str) -> "list[tuple[str, str]]":
    """(heading, body) of each fenced block in `lang`, in README order."""
    blocks, heading = [], ""
    for match in re.finditer(r"^(#+ [^\n]*)$|^```(\w*)\n(.*?)^```$", README, re.M | re.S):
        if match.group(1):
            heading = match.group(1).lstrip("# ").strip()
        elif match.group(2) == lang:
            blocks.append((heading, match.group(3)))
    return blocks


def block_under(heading: str, lang: str) -> str:
    found = [body for h, body in code_blocks(lang) if h == heading]
    assert found, f"README.md has no ```{lang} block under '## {heading}'"
    return found[0]


SHELL_SECTIONS = ["Write a schedule, compile it, look at each stage", "Edit a tile program"]


def schedule_block(section: str = SHELL_SECTIONS[0]) -> str:
    return block_under(section, "sh")


def python_block() -> str:
    return block_under("From Python", "python")


def tools_named() -> "set[str]":
    return set(re.findall(r"build/bin/([\w-]+)", README))


@pytest.fixture(scope="module")
def build():
    if not (BUILD / "build.ninja").is_file():
        pytest.skip(
            f"no build at {BUILD} (./scripts/setup.sh or cmake + ninja); the README's "
            "commands run against it"
        )
    missing = sorted(t for t in tools_named() if not (BUILD / "bin" / t).is_file())
    if missing:
        pytest.fail(
            f"the README names build/bin/{', build/bin/'.join(missing)} but the build at "
            f"{BUILD} has no such file; `ninja -C {BUILD}` must build every tool the "
            "README names"
        )
    return BUILD


def ninja(build_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["ninja", "-C", str(build_dir), *args], capture_output=True, text=True, check=True
    ).stdout


def test_first_command_builds_every_named_tool(build):
    # `./scripts/setup.sh` runs a plain `ninja`: each tool must be in `all`.
    in_all = set(re.findall(r"^\s+bin/([\w-]+)$", ninja(build, "-t", "query", "all"), re.M))
    names = tools_named()
    assert names, "the README names no build/bin tool"
    assert names <= in_all, f"not built by a plain ninja: {sorted(names - in_all)}"


def test_readme_scripts_exist():
    for script in set(re.findall(r"\./(scripts/[\w.-]+)", README)):
        path = ROOT / script
        assert path.is_file() and os.access(path, os.X_OK), f"{script} is not an executable"


def test_readme_paths_exist():
    # Every repository path the README mentions (build outputs excepted).
    pattern = r"(?<![\w/])((?:docs|scripts|lib|include|tools|python|test)/[\w./-]*\w)"
    paths = set(re.findall(pattern, README))
    assert len(paths) > 5
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"the README names paths that do not exist: {missing}"


def test_readme_cmake_options_exist():
    cmake = "\n".join(
        p.read_text() for p in ROOT.glob("**/CMakeLists.txt") if "build" not in p.parts
    )
    for name in set(re.findall(r"`(TILEDATTN_[A-Z_]+)`", README)):
        assert re.search(rf"(option\(|set\(){name}\b", cmake), f"no CMake option {name}"


def test_readme_passes_and_targets_exist(build):
    """Backticked kebab-case names: each is a tool, a ninja target or a pass."""
    help_text = subprocess.run(
        [str(build / "bin" / "tiledattn-opt"), "--help"], capture_output=True, text=True
    ).stdout
    passes = set(re.findall(r"^\s+--([\w-]+)", help_text, re.M))
    targets = {line.split(":")[0] for line in ninja(build, "-t", "targets", "all").splitlines()}
    names = set(re.findall(r"`([a-z][a-z0-9]*(?:-[a-z0-9]+)+)`", README))
    names |= set(re.findall(r"tiledattn-opt \S+ --([\w-]+)", README))
    names |= set(re.findall(r"ninja -C \S+ ([\w-]+)", README))
    assert {"tiledattn-to-ptx-pipeline", "check-tiledattn"} <= names
    unknown = sorted(n for n in names if n not in passes | targets | tools_named())
    assert not unknown, (
        f"the README names {unknown}, which are neither tiledattn-opt passes nor ninja targets"
    )


def commands(block: str) -> "list[tuple[str, str]]":
    """(command, comment) per line of a shell block."""
    out = []
    for line in block.splitlines():
        if not line.strip():
            continue
        command, _, comment = line.partition("  #")
        out.append((command.strip(), comment.strip()))
    return out


def workdir(tmp_path: Path, build: Path) -> Path:
    """A directory where the README's relative paths resolve: python/ is the
    checkout's, build/ the build's."""
    (tmp_path / "python").symlink_to(ROOT / "python")
    (tmp_path / "build").symlink_to(build)
    return tmp_path


def run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S
    )


@pytest.mark.parametrize("section", SHELL_SECTIONS)
def test_schedule_example_runs_as_written(tmp_path, build, section):
    cwd = workdir(tmp_path, build)
    lines = commands(schedule_block(section))
    assert any("tiledattn-opt" in c for c, _ in lines)
    for command, comment in lines:
        words = shlex.split(command)
        edited = cwd / words[-1] if words[:2] == ["sed", "-i"] else None
        before = edited.read_text() if edited else None
        result = run(command, cwd)
        assert result.returncode == 0, (
            f"README command `{command}` failed ({result.returncode}):\n{result.stderr[-3000:]}"
        )
        if edited:
            assert edited.read_text() != before, f"`{command}` changed nothing: a stale edit"
        # Ops the comment names (gpu.func, nvvm.wgmma.mma_async, ...) are in
        # the output.
        for op in re.findall(r"\b[a-z]+\.[a-z_.]*[a-z]", comment):
            assert op in result.stdout, f"`{command}` prints no {op}, as its comment says"
        if words[0].endswith("tiledattn-compile"):
            bundle = cwd / words[words.index("-o") + 1]
            for name in ("kernel.cubin", "kernel.ptx", "manifest.json"):
                assert (bundle / name).is_file(), f"`{command}` wrote no {name}"
            # "prints the kernel's registers, spills and shared memory"
            for word in ("registers=", "spill_stores=", "smem="):
                assert word in result.stdout + result.stderr


def test_diagnostic_example_is_real(tmp_path, build):
    """The README's example of an infeasible schedule's diagnostic is what
    tiledattn-compile says for the edit it names."""
    prose = " ".join(README.split())
    match = re.search(r"with `(\w+) = (\d+)` in this schedule: `(schedule field \1: [^`]*)`", prose)
    assert match, "the README no longer shows a diagnostic example in this form"
    field, value, message = match.groups()
    schedule = re.search(r"^cp (\S+\.mlir) my\.mlir$", schedule_block(), re.M).group(1)
    text = (ROOT / schedule).read_text()
    edited = re.sub(rf"\b{field} = \d+", f"{field} = {value}", text, count=1)
    assert edited != text
    (tmp_path / "bad.mlir").write_text(edited)
    result = run(f"{build}/bin/tiledattn-compile bad.mlir -o bad_bundle", tmp_path)
    assert result.returncode != 0
    assert message in " ".join(result.stderr.split())


def test_python_example_names_exist():
    """Every tiledattn/torch attribute the Python example uses exists, and
    every keyword it passes is a parameter of the function it calls."""
    tree = ast.parse(python_block())
    modules = {"tiledattn": tiledattn, "torch": torch}
    seen = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = modules.get(node.value.id)
            if module is not None:
                assert hasattr(module, node.attr), f"{node.value.id}.{node.attr} does not exist"
                seen.add(f"{node.value.id}.{node.attr}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "tiledattn":
                function = getattr(tiledattn, node.func.attr)
                parameters = inspect.signature(function).parameters
                for keyword in node.keywords:
                    assert keyword.arg in parameters, (
                        f"tiledattn.{node.func.attr} has no parameter {keyword.arg}"
                    )
    assert {"tiledattn.scaled_dot_product_attention", "tiledattn.compile"} <= seen
    # "same signature, your schedule"
    sdpa = inspect.signature(tiledattn.scaled_dot_product_attention).parameters
    kernel = inspect.signature(tiledattn.CompiledKernel.__call__).parameters
    # plus, keyword-only, the tensors a kernel's regions read (captures=).
    assert list(kernel)[1:] == [*sdpa, "captures"]
    assert kernel["captures"].kind is inspect.Parameter.KEYWORD_ONLY


def test_editable_install_path_exists():
    if "pip install -e python" in README:
        assert (ROOT / "python" / "pyproject.toml").is_file()
