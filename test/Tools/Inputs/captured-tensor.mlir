// A score_mod reading a tensor the function takes beyond the sdpa operands
// (ALiBi slopes, one per head): the manifest lists it after scale as
// capture0, and the runtime passes it (tiledattn-compile-captures.mlir;
// tiledattn-compile-errors.mlir edits it into what cannot be passed).
!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @captured(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32,
                    %slopes: memref<?xf32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %slope = memref.load %slopes[%h] : memref<?xf32>
    %biased = arith.addf %s, %slope : f32
    tiledattn.yield %biased : f32
  } : !head, !head, !head, !head, !lse
  return
}
