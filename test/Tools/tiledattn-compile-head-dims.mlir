// REQUIRES: ptxas
// A head dim that is not a whole number of 64-column atoms (80) runs on
// tiles of 128 columns: TMA reads Q, K and V in 64-column boxes, zeros past
// the tensor's last column; the manifest keeps the real head dim (the
// runtime's tensor maps take it as the global width); O's stores stop at
// column 79 (here the stores from registers; TMA stores are clipped by the
// tensor map).
// RUN: rm -rf %t && tiledattn-compile --quiet %s -o %t
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file %t/manifest.json
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/kernel.ptx
// RUN: tiledattn-opt %s --tiledattn-tile-sdpa | FileCheck %s --check-prefix=PROGRAM

// MANIFEST: "head_dim": 80,
// MANIFEST: "head_dim_v": 80,
// MANIFEST: "tensor_maps": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "box": [
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 128
// MANIFEST-NEXT: ],
// MANIFEST-NEXT: "operand": "q",

// Each consumer thread stores its pairs of columns 2q + 8i (q its lane's
// quad): the last pair at column 72 + 2q, byte 144 + 4q; none at 80 or past.
// PTX: st.global.b16 [%rd{{[0-9]+}}+144]
// PTX-NOT: st.global.b16 [%rd{{[0-9]+}}+160]

// PROGRAM: tiledattn.ring releases(8) : !tiledattn.ring<1, 128x128xbf16>
// PROGRAM: tiledattn.tma_load %{{.*}} into %{{.*}} : memref<?x?x?x80xbf16, strided<[?, ?, ?, 1], offset: ?>>, !tiledattn.smem<128x128xbf16>
// PROGRAM: tiledattn.store {{.*}} : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x80xbf16

!head = memref<?x?x?x80xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @sdpa_fwd_bf16_d80(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12,
                                   mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 2, pingpong = true, overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}
