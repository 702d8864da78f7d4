// RUN: tiledattn-opt %s -split-input-file -verify-diagnostics --tiledattn-lower-mma

// Every diagnostic of tiledattn-lower-mma, one per split.

!slot = !tiledattn.smem<64x64xbf16>
func.func @not_in_a_kernel(%q: !slot, %k: !slot, %r: index) {
  // expected-error @+1 {{expected to be in a gpu.func kernel: tiledattn-lower-mma lowers kernels}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x64xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  return
}

// -----

!slot = !tiledattn.smem<64x64xbf16>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @roles_first(%q: !slot, %k: !slot, %r: index) kernel {
      // expected-error @+1 {{expected tiledattn-lower-roles to have run before tiledattn-lower-mma (futures pass through turns)}}
      tiledattn.warp_specialize producer regs(24) {
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x64xf32>
        %s = tiledattn.wait %f : !tiledattn.future<64x64xf32>
      }
      gpu.return
    }
  }
}

// -----

!slot = !tiledattn.smem<64x64xbf16>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @rings_first(%q: !slot, %k: !slot, %r: index) kernel {
      // expected-error @+1 {{expected the B operand to be a shared-memory address (run tiledattn-lower-rings before tiledattn-lower-mma)}}
      %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x64xf32>
      %s = tiledattn.wait %f : !tiledattn.future<64x64xf32>
      gpu.return
    }
  }
}

// -----

!slot = !tiledattn.smem<64x64xbf16>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @register_a_not_lowered(%p: !tiledattn.tile<64x64xbf16>, %a: index) kernel {
      %v = builtin.unrealized_conversion_cast %a : index to !slot
      // expected-error @+1 {{expected A to be a lowered register tile (a cast of a struct of 16 'i32' per thread)}}
      %f = tiledattn.mma_async %p, %v : !tiledattn.tile<64x64xbf16>, !slot -> !tiledattn.future<64x64xf32>
      %s = tiledattn.wait %f : !tiledattn.future<64x64xf32>
      gpu.return
    }
  }
}

// -----

!slot = !tiledattn.smem<64x64xbf16>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @acc_not_lowered(%acc: !tiledattn.tile<64x64xf32>, %a: index, %r: index) kernel {
      %s1 = builtin.unrealized_conversion_cast %a : index to !slot
      // expected-error @+1 {{expected acc to be a lowered register tile (a cast of a struct of 32 'f32' per thread)}}
      %f = tiledattn.mma_async %s1[%r], %s1 transpose_b acc(%acc) : !slot, !slot -> !tiledattn.future<64x64xf32>
      %s = tiledattn.wait %f : !tiledattn.future<64x64xf32>
      gpu.return
    }
  }
}

// -----

!slot = !tiledattn.smem<64x64xbf16>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @mma_in_a_region_between(%a: index, %r: index, %c: i1) kernel {
      %s1 = builtin.unrealized_conversion_cast %a : index to !slot
      %f = tiledattn.mma_async %s1[%r], %s1 transpose_b : !slot, !slot -> !tiledattn.future<64x64xf32>
      // expected-note @+1 {{here}}
      scf.if %c {
        %g = tiledattn.mma_async %s1[%r], %s1 transpose_b : !slot, !slot -> !tiledattn.future<64x64xf32>
        %t = tiledattn.wait %g : !tiledattn.future<64x64xf32>
      }
      // expected-error @+1 {{cannot count the mmas in flight: scf.if between the mma and this wait issues mmas in a region}}
      %s = tiledattn.wait %f : !tiledattn.future<64x64xf32>
      gpu.return
    }
  }
}
