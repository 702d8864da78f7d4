// A score_mod on the sdpa op: an ALiBi-style bias, slope 2^(-(h + 1) / 2)
// per query head h times the key's distance behind the query,
//   O = softmax(scale * Q K^T + slope_h * (kv_idx - q_idx), causal) V
// tiledattn-tile-sdpa writes it into the warp-specialized program as a
// tiledattn.score_mod after S = Q K^T (see it with
//   tiledattn-opt alibi_fwd_f16_d64_causal.mlir --tiledattn-tile-sdpa).
// The manifest records the score_mod, so the package never picks this kernel
// for a plain attention call; python/test/test_gpu_tile_ir.py checks it
// against float64.
!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @alibi_fwd_f16_d64_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                                    %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 192, block_n = 128, num_stages = 2,
                                   warps = 16, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 3,
                                   consumer_regs = 160, pingpong = true,
                                   overlap_softmax = true>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %c1 = arith.constant 1 : index
    %minus_half = arith.constant -0.5 : f32
    %h1 = arith.addi %h, %c1 : index
    %h1_i32 = arith.index_cast %h1 : index to i32
    %h1_f32 = arith.sitofp %h1_i32 : i32 to f32
    %exponent = arith.mulf %h1_f32, %minus_half : f32
    %slope = math.exp2 %exponent : f32
    %q_i32 = arith.index_cast %q_idx : index to i32
    %kv_i32 = arith.index_cast %kv_idx : index to i32
    %distance = arith.subi %kv_i32, %q_i32 : i32
    %distance_f32 = arith.sitofp %distance : i32 to f32
    %bias = arith.mulf %slope, %distance_f32 : f32
    %biased = arith.addf %s, %bias : f32
    tiledattn.yield %biased : f32
  } : !head, !head, !head, !head, !lse
  return
}
