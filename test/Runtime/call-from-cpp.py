# A C++ program calls the runtime's ops through libtorch's dispatcher: it
# validates a shipped bundle and, without a GPU, gets the op's own error for
# a CPU tensor (with a GPU it runs the kernel against at::sdpa instead).
# REQUIRES: runtime
# UNSUPPORTED: cuda
# RUN: %cpp_caller %kernels/sdpa_fwd_f16_d64 %runtime_lib | FileCheck %s
# CHECK: bundle: {"format_version":1,"name":"sdpa_fwd_f16_d64"
# CHECK-SAME: "target":"sm_90a"
# CHECK-NEXT: error: tiledattn.sdpa_fwd: expected 'q' to be a CUDA tensor but got a tensor on cpu
