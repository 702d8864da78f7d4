// RUN: tiledattn-opt %s -split-input-file -verify-diagnostics --tiledattn-lower-mma

// What tiledattn-lower-mma refuses of the tile ops on accumulators, one case per split.

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @not_a_warpgroup_tile(%s: !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>, %i: index) kernel {
      %st = builtin.unrealized_conversion_cast %s : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> to !tiledattn.tile<32x64xf32>
      // expected-error @+1 {{expected scores to be a warpgroup's tile of 64 rows, but got '!tiledattn.tile<32x64xf32>'}}
      %sm = tiledattn.mask %st, %i, %i, %i : !tiledattn.tile<32x64xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @wrong_struct(%s: !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>, %i: index) kernel {
      %st = builtin.unrealized_conversion_cast %s : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> to !tiledattn.tile<64x64xf32>
      // expected-error @+1 {{expected scores to be a lowered accumulator tile (a cast of a struct of 32 f32 per thread)}}
      %sm = tiledattn.mask %st, %i, %i, %i : !tiledattn.tile<64x64xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @factor_not_lowered(%o: !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>, %alpha: !tiledattn.tile<64xf32>) kernel {
      %ot = builtin.unrealized_conversion_cast %o : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> to !tiledattn.tile<64x64xf32>
      // expected-error @+1 {{expected factor to be a lowered accumulator tile (a cast of a struct of 2 f32 per thread)}}
      %o1 = tiledattn.rescale %ot, %alpha : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
      gpu.return
    }
  }
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
!rows = !llvm.struct<(f32, f32)>
!o = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @stage_not_lowered(%o: !acc, %r: !rows, %dest: !o, %i: index, %s: !tiledattn.smem<64x64xbf16>) kernel {
      %ot = builtin.unrealized_conversion_cast %o : !acc to !tiledattn.tile<64x64xf32>
      %rt = builtin.unrealized_conversion_cast %r : !rows to !tiledattn.tile<64xf32>
      // expected-error @+1 {{expected the stage to be a shared-memory address (run tiledattn-lower-rings before tiledattn-lower-mma)}}
      tiledattn.tma_store %ot, %rt, %rt into %dest[%i, %i, %i] via %s[%i]
          : !tiledattn.tile<64x64xf32>, !o, !tiledattn.smem<64x64xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @slot_not_lowered(%s: !tiledattn.smem<128x64xbf16>, %i: index) kernel {
      // expected-error @+1 {{expected the slot to be a shared-memory address (run tiledattn-lower-rings before tiledattn-lower-mma)}}
      %a = tiledattn.read_rows %s[%i] : !tiledattn.smem<128x64xbf16> -> !tiledattn.tile<64x64xbf16>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @merge_pieces_without_workspace(%o: !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>, %m: !llvm.struct<(f32, f32)>, %i: index) kernel {
      %ot = builtin.unrealized_conversion_cast %o : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !llvm.struct<(f32, f32)> to !tiledattn.tile<64xf32>
      // expected-error @+1 {{expected its kernel to take the launch's workspace (an argument marked tiledattn.workspace; convert-tiledattn-to-nvgpu adds it for split_tail)}}
      %o2, %m2, %l2 = tiledattn.merge_pieces %ot, %mt, %mt first(%i) holders(%i) : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
      gpu.return
    }
  }
}

