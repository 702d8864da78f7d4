# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TILEDATTN"
# lit's internal shell: the external one is deprecated from lit 23 (pip's
# lit) and refused by its ShTest, and the tests need nothing beyond it.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tiledattn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%PYTHON", config.python_executable))
config.substitutions.append(("%ptxas", config.ptxas))
# The CUDA toolkit ptxas belongs to; gpu-module-to-binary links libdevice
# from the toolkit named by CUDA_HOME, which lit does not pass through.
config.substitutions.append(("%cuda_home", os.path.dirname(os.path.dirname(config.ptxas))))
config.substitutions.append(("%kernels", config.tiledattn_kernel_dir))
config.substitutions.append(
    ("%schedules", os.path.join(config.tiledattn_src_root, "python", "tiledattn", "schedules"))
)

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.tiledattn_tools_dir, config.llvm_tools_dir]
tools = ["tiledattn-opt", "tiledattn-compile", "tiledattn-manifest-writer"]
# scripts/mutation_check.py runs the suite with --param mutant=NAME: what
# tiledattn-opt prints then passes through that mutant (scripts/mutants.py),
# and the suite must fail.
mutant = lit_config.params.get("mutant")
if mutant:
    tools[0] = ToolSubst(
        "tiledattn-opt",
        command=config.python_executable,
        extra_args=[
            os.path.join(config.tiledattn_src_root, "scripts", "mutate_output.py"),
            mutant,
            os.path.join(config.tiledattn_tools_dir, "tiledattn-opt"),
        ],
    )
llvm_config.add_tool_substitutions(tools, tool_dirs)

# GPU tests need a CUDA device; they are gated by `REQUIRES: cuda`.
if shutil.which("nvidia-smi"):
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0:
            config.available_features.add("cuda")
    except (OSError, subprocess.TimeoutExpired):
        pass
# The runtime and its C++ caller exist when the build had torch and cuda.h.
cpp_caller = os.path.join(config.tiledattn_tools_dir, "tiledattn-cpp-caller")
if os.path.exists(config.runtime_lib) and os.path.exists(cpp_caller):
    config.available_features.add("runtime")
    config.substitutions.append(("%cpp_caller", cpp_caller))
    config.substitutions.append(("%runtime_lib", config.runtime_lib))
if os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
