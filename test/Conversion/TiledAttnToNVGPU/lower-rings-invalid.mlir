// RUN: tiledattn-opt %s -split-input-file --tiledattn-lower-rings -verify-diagnostics -allow-unregistered-dialect

// What tiledattn-lower-rings refuses, one case per split.

func.func @not_a_kernel() {
  // expected-error @+1 {{expected to be in a gpu.func kernel: tiledattn-lower-rings lowers kernels after convert-tiledattn-to-nvgpu made them}}
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  return
}

// -----

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @not_an_argument(%q: !head, %i: index) kernel {
      %view = memref.subview %q[0, 0, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : !head to memref<1x1x64x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
      %cast = memref.cast %view : memref<1x1x64x64xbf16, strided<[?, ?, ?, 1], offset: ?>> to !head
      %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
      tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
      ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
        // expected-error @+1 {{expected the source to be one of the kernel's first four arguments (q, k, v, o), which the runtime builds tensor maps for}}
        tiledattn.tma_load %cast[%i, %i, %i] into %slot : !head, !tiledattn.smem<64x64xbf16>
      }
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{already has tiledattn.dynamic_smem_bytes: tiledattn-lower-rings lays out the shared memory of kernels whose only shared memory is their rings and tiledattn.alloc tiles}}
    gpu.func @planned(%i: index) kernel attributes {tiledattn.dynamic_smem_bytes = 1024 : i64} {
      %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @roles_first(%i: index) kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      %r = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
      // expected-error @+1 {{expected tiledattn-lower-roles to have run before tiledattn-lower-rings (ring tokens pass through the roles' regions)}}
      tiledattn.warp_specialize producer regs(24) {
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        %s, %t = tiledattn.ring.get %r[%i] : !tiledattn.ring<2, 64x64xbf16>
        tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
      }
      gpu.return
    }
  }
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!acc = !tiledattn.tile<64x128xf32>
!rows = !tiledattn.tile<64xf32>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @stage_from_elsewhere(%q: !head, %k: !head, %v: !head, %o: !head, %acc: !acc, %r: !rows, %i: index, %s: !tiledattn.smem<128x128xbf16>) kernel {
      %a = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
      // expected-error @+1 {{expected the stage to be a ring slot taken by tiledattn.ring.get or a tiledattn.alloc tile}}
      tiledattn.tma_store %acc, %r, %r into %o[%i, %i, %i] via %s[%i] : !acc, !head, !tiledattn.smem<128x128xbf16>, !rows, !rows
      gpu.return
    }
  }
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!acc = !tiledattn.tile<64x128xf32>
!rows = !tiledattn.tile<64xf32>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @dest_not_an_argument(%q: !head, %acc: !acc, %r: !rows, %i: index) kernel {
      %a = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
      %view = memref.subview %q[0, 0, 0, 0] [1, 1, 64, 128] [1, 1, 1, 1] : !head to memref<1x1x64x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
      %cast = memref.cast %view : memref<1x1x64x128xbf16, strided<[?, ?, ?, 1], offset: ?>> to !head
      // expected-error @+1 {{expected the dest to be one of the kernel's first four arguments (q, k, v, o), which the runtime builds tensor maps for}}
      tiledattn.tma_store %acc, %r, %r into %cast[%i, %i, %i] via %a[%i] : !acc, !head, !tiledattn.smem<128x128xbf16>, !rows, !rows
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @columns_of_elsewhere(%i: index, %s: !tiledattn.smem<64x256xbf16>) kernel {
      %a = tiledattn.alloc : !tiledattn.smem<64x64xbf16>
      // expected-error @+1 {{expected the tile to be a ring slot taken by tiledattn.ring.get or a tiledattn.alloc tile}}
      %v = tiledattn.columns %s[%i] : !tiledattn.smem<64x256xbf16> to !tiledattn.smem<64x128xbf16>
      "test.use"(%v) : (!tiledattn.smem<64x128xbf16>) -> ()
      gpu.return
    }
  }
}
