// RUN: tiledattn-opt %s -split-input-file --convert-tiledattn-to-nvgpu="experimental-wgmma=true" -verify-diagnostics

// expected-error @+1 {{'func.func' op mma = wgmma is lowered for one warpgroup (warps = 4, block_m = 64) with swizzle = 128 so far, but the schedule is #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = cp_async, swizzle = 128>}}
func.func @wgmma_two_warpgroups() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = cp_async, swizzle = 128>} {
  return
}

// -----

func.func @wgmma_wide_tile(%q: memref<?x?x?x128xf16>, %n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = wgmma, producer = cp_async, swizzle = 128>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<64x64xf32>
  // expected-error @+1 {{'tiledattn.load' op mma = wgmma is lowered for 64 x 64 tiles (block_m = block_n = head dim = 64) so far, but got '!tiledattn.tile<64x128xf16>'}}
  %qt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x128xf16> -> !tiledattn.tile<64x128xf16>
  %r = scf.for %j = %c0 to %n step %c64 iter_args(%a = %acc) -> (!tiledattn.tile<64x64xf32>) {
    %kt = tiledattn.load %q[%c0, %c0, %j] : memref<?x?x?x128xf16> -> !tiledattn.tile<64x128xf16>
    %s = tiledattn.mma %qt, %kt transposed, %a : !tiledattn.tile<64x128xf16>, !tiledattn.tile<64x128xf16>, !tiledattn.tile<64x64xf32>
    scf.yield %s : !tiledattn.tile<64x64xf32>
  }
  return
}
