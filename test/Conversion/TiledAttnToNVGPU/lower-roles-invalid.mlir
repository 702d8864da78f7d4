// RUN: tiledattn-opt %s --tiledattn-lower-roles -verify-diagnostics

// Roles are lowered in gpu.func kernels only.
func.func @not_a_kernel() {
  // expected-error @+1 {{expected to be in a gpu.func kernel: tiledattn-lower-roles lowers kernels after convert-tiledattn-to-nvgpu made them}}
  tiledattn.warp_specialize producer regs(24) {
  } consumers(2) regs(240) {
  ^bb0(%c: index):
  }
  return
}
