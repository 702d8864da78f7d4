// RUN: tiledattn-opt %s -allow-unregistered-dialect --tiledattn-lower-rings --tiledattn-lower-mma | FileCheck %s

// S = Q K^T from the consumer's 64 rows of a Q slot and a K slot, then
// O += P V with P in registers and an accumulator in, then the two waits:
// the first leaves the second mma in flight. Slots come from
// tiledattn-lower-rings as their shared-memory addresses.

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!slot = !tiledattn.smem<64x64xbf16>
!ring = !tiledattn.ring<2, 64x64xbf16>
!qring = !tiledattn.ring<1, 128x64xbf16>
!head128 = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!ring128 = !tiledattn.ring<2, 64x128xbf16>
!qring128 = !tiledattn.ring<1, 128x128xbf16>
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
!words = !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)>
module attributes {gpu.container_module} {
  gpu.module @m {
    // CHECK-LABEL: gpu.func @qk_then_pv
    gpu.func @qk_then_pv(%q: !head, %k: !head, %v: !head, %o: !head, %j: index, %c: index,
                         %p: !words, %acc: !acc) kernel {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %qr = tiledattn.ring releases(8) : !qring
      %kr = tiledattn.ring releases(8) : !ring
      %vr = tiledattn.ring releases(8) : !ring
      // CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
      // CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
      // The Q slot's address, then the K slot's.
      // CHECK: nvgpu.mbarrier.try_wait.parity
      // CHECK: %[[QADDR:.*]] = arith.addi %[[BASE]], %{{.*}} : index
      // CHECK: nvgpu.mbarrier.try_wait.parity
      // CHECK: %[[KADDR:.*]] = arith.addi %[[BASE]], %{{.*}} : index
      %qs, %qt = tiledattn.ring.get %qr[%c0] : !qring
      %ks, %kt = tiledattn.ring.get %kr[%j] : !ring
      %row = arith.muli %c, %c64 : index
      // K-major B: leading byte offset 16, stride 1024, the 128-byte swizzle
      // (1 << 62 | 64 << 32 | 1 << 16).
      // CHECK: %[[KA64:.*]] = arith.index_castui %[[KADDR]] : index to i64
      // CHECK: %[[KLOW:.*]] = arith.andi %[[KA64]], %{{.*}} : i64
      // CHECK: %[[KSTART:.*]] = arith.shrui %[[KLOW]]
      // CHECK: %[[KDESC:.*]] = arith.ori %[[KSTART]], %{{.*}}4611686293305360384{{.*}} : i64
      // A starts a_row rows (128 bytes each) into the Q slot.
      // CHECK: %[[ROWBYTES:.*]] = arith.muli %{{.*}}, %{{.*}}128{{.*}} : index
      // CHECK: %[[AADDR:.*]] = arith.addi %[[QADDR]], %[[ROWBYTES]] : index
      // CHECK: %[[QA64:.*]] = arith.index_castui %[[AADDR]] : index to i64
      // CHECK: %[[QDESC:.*]] = arith.ori %{{.*}}, %{{.*}}4611686293305360384{{.*}} : i64
      // Four k-steps of 16 columns, 32 bytes (2 in the descriptor) apart;
      // the first starts from zero.
      // CHECK: nvvm.wgmma.fence.aligned
      // CHECK-NEXT: %[[S0:.*]] = nvvm.wgmma.mma_async %[[QDESC]], %[[KDESC]], %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
      // CHECK: %[[K1:.*]] = arith.addi %[[KDESC]], %c2_i64
      // CHECK: %[[Q1:.*]] = arith.addi %[[QDESC]], %c2_i64
      // CHECK-NEXT: %[[S1:.*]] = nvvm.wgmma.mma_async %[[Q1]], %[[K1]], %[[S0]], <m = 64, n = 64, k = 16>, D[<f32>, <one>]
      // CHECK: nvvm.wgmma.mma_async {{.*}}, D[<f32>, <one>]
      // CHECK: %[[S3:.*]] = nvvm.wgmma.mma_async {{.*}}, D[<f32>, <one>]
      // CHECK-NOT: nvvm.wgmma.mma_async
      // CHECK: nvvm.wgmma.commit.group.sync.aligned
      %sf = tiledattn.mma_async %qs[%row], %ks transpose_b : !tiledattn.smem<128x64xbf16>, !slot -> !tiledattn.future<64x64xf32>
      // CHECK: nvgpu.mbarrier.try_wait.parity
      // CHECK: %[[VADDR:.*]] = arith.addi %[[BASE]], %{{.*}} : index
      %vs, %vt = tiledattn.ring.get %vr[%j] : !ring
      %pt = builtin.unrealized_conversion_cast %p : !words to !tiledattn.tile<64x64xbf16>
      %at = builtin.unrealized_conversion_cast %acc : !acc to !tiledattn.tile<64x64xf32>
      // MN-major B: leading byte offset one atom of 64 rows (8192 bytes), so
      // 1 << 62 | 64 << 32 | 512 << 16; k-steps 16 rows (2048 bytes) apart.
      // P from registers as inline PTX, scale-d 1 from the first step (an
      // accumulator came in), tnspB set.
      // CHECK: %[[VDESC:.*]] = arith.ori %{{.*}}, %{{.*}}4611686293338849280{{.*}} : i64
      // CHECK: nvvm.wgmma.fence.aligned
      // CHECK: llvm.inline_asm has_side_effects {{.*}}setp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
      // CHECK: arith.addi %[[VDESC]], %c128_i64
      // CHECK: llvm.inline_asm has_side_effects {{.*}}setp.ne.b32 p, 1, 0;
      // CHECK: arith.addi %[[VDESC]], %c256_i64
      // CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async
      // CHECK: arith.addi %[[VDESC]], %c384_i64
      // CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async
      // CHECK-NOT: wgmma.mma_async
      // CHECK: nvvm.wgmma.commit.group.sync.aligned
      %of = tiledattn.mma_async %pt, %vs acc(%at) : !tiledattn.tile<64x64xbf16>, !slot -> !tiledattn.future<64x64xf32>
      // Waiting for S leaves P.V in flight; S's registers pass through an
      // empty volatile asm after the wait.
      // CHECK: nvvm.wgmma.wait.group.sync.aligned 1
      // CHECK: %[[S:.*]] = llvm.inline_asm has_side_effects asm_dialect = att "", "=f,
      // CHECK: %[[STILE:.*]] = builtin.unrealized_conversion_cast %[[S]] : {{.*}} to !tiledattn.tile<64x64xf32>
      %s = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
      tiledattn.ring.release %kr, %kt : !ring
      // CHECK: nvvm.wgmma.wait.group.sync.aligned 0
      // CHECK: %[[O:.*]] = llvm.inline_asm has_side_effects asm_dialect = att "", "=f,
      // CHECK: %[[OTILE:.*]] = builtin.unrealized_conversion_cast %[[O]] : {{.*}} to !tiledattn.tile<64x64xf32>
      %ot = tiledattn.wait %of : !tiledattn.future<64x64xf32>
      tiledattn.ring.release %vr, %vt : !ring
      tiledattn.ring.release %qr, %qt : !qring
      // CHECK: "test.use"(%[[STILE]], %[[OTILE]])
      "test.use"(%s, %ot) : (!tiledattn.tile<64x64xf32>, !tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // read_rows: one ldmatrix.x4 per 16 of the slot's 64 columns, lanes
    // addressing their rows (from the row given) with the 128-byte swizzle;
    // the 16 words are the register A of an S with B K-major (tnspB 0).
    // CHECK-LABEL: gpu.func @read_rows
    // CHECK-COUNT-4: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
    // CHECK-NOT: nvvm.ldmatrix
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0;
    // CHECK: gpu.return
    gpu.func @read_rows(%q: !head, %k: !head, %v: !head, %o: !head, %j: index, %c: index) kernel {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %qr = tiledattn.ring releases(8) : !qring
      %kr = tiledattn.ring releases(8) : !ring
      %vr = tiledattn.ring releases(8) : !ring
      %qs, %qt = tiledattn.ring.get %qr[%c0] : !qring
      %row = arith.muli %c, %c64 : index
      %qa = tiledattn.read_rows %qs[%row] : !tiledattn.smem<128x64xbf16> -> !tiledattn.tile<64x64xbf16>
      %ks, %kt = tiledattn.ring.get %kr[%j] : !ring
      %sf = tiledattn.mma_async %qa, %ks transpose_b : !tiledattn.tile<64x64xbf16>, !slot -> !tiledattn.future<64x64xf32>
      %s = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
      tiledattn.ring.release %kr, %kt : !ring
      tiledattn.ring.release %qr, %qt : !qring
      "test.use"(%s) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // uniform_a: A's address (slot + a_row rows) goes through redux.sync
    // before its descriptor is built, at the issue.
    // CHECK-LABEL: gpu.func @uniform_a
    gpu.func @uniform_a(%q: !head, %k: !head, %v: !head, %o: !head, %j: index, %c: index) kernel {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %qr = tiledattn.ring releases(8) : !qring
      %kr = tiledattn.ring releases(8) : !ring
      %vr = tiledattn.ring releases(8) : !ring
      %qs, %qt = tiledattn.ring.get %qr[%c0] : !qring
      %ks, %kt = tiledattn.ring.get %kr[%j] : !ring
      %row = arith.muli %c, %c64 : index
      // CHECK: %[[ROWBYTES:.*]] = arith.muli %{{.*}}, %{{.*}}128{{.*}} : index
      // CHECK: %[[AADDR:.*]] = arith.addi %{{.*}}, %[[ROWBYTES]] : index
      // CHECK: %[[WORD:.*]] = arith.index_castui %[[AADDR]] : index to i32
      // CHECK: %[[SAME:.*]] = nvvm.redux.sync umin %[[WORD]]
      // CHECK: %[[UNIFORM:.*]] = arith.index_castui %[[SAME]] : i32 to index
      // CHECK: arith.index_castui %[[UNIFORM]] : index to i64
      // CHECK: nvvm.wgmma.fence.aligned
      // CHECK-COUNT-4: nvvm.wgmma.mma_async
      // CHECK-NOT: nvvm.redux.sync
      // CHECK: gpu.return
      %sf = tiledattn.mma_async %qs[%row] uniform_a, %ks transpose_b : !tiledattn.smem<128x64xbf16>, !slot -> !tiledattn.future<64x64xf32>
      %s = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
      tiledattn.ring.release %kr, %kt : !ring
      tiledattn.ring.release %qr, %qt : !qring
      "test.use"(%s) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // q_by_atom and k0_by_atom: Q's slot fills in 2 parts (one per atom of
    // a head dim of 128), the first K block in the same put, on Q's part
    // barriers. The consumer takes both `partial` (no wait at the get); the
    // mma waits for Q's part 0 and K's own barrier before its first k-step
    // and for Q's part 1 before its fifth (column 64), between the wgmmas.
    // CHECK-LABEL: gpu.func @after_parts
    gpu.func @after_parts(%q: !head128, %k: !head128, %v: !head128, %o: !head128, %c: index) kernel {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %qr = tiledattn.ring releases(8) parts(2) : !qring128
      %kr = tiledattn.ring releases(8) : !ring128
      // Q's part barriers 0-1, its empty one 2; K's full 3-4, empty 5-6.
      // CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 7>
      // The producer: Q's and K's slots empty, then each part's bytes
      // (16 KiB of Q and 8 KiB of K: 24576) and its copies, part by part;
      // then K's own barrier completes.
      // CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%{{.*}}]
      // CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%{{.*}}]
      // CHECK: %[[TX:.*]] = arith.constant 24576 : index
      // CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%[[P0:.*]]], %[[TX]] :
      // CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%[[P1:.*]]], %{{.*}} :
      // CHECK: nvgpu.tma.async.load %[[QMAP:.*]][%{{.*}}], %[[BAR]][%[[P0]]] to {{.*}} : <tensor = memref<1x1x128x64xbf16, 3>
      // CHECK: nvgpu.tma.async.load %[[KMAP:.*]][%{{.*}}], %[[BAR]][%[[P0]]] to {{.*}} : <tensor = memref<1x1x64x64xbf16, 3>
      // CHECK: nvgpu.tma.async.load %[[QMAP]][%{{.*}}], %[[BAR]][%[[P1]]]
      // CHECK: nvgpu.tma.async.load %[[KMAP]][%{{.*}}], %[[BAR]][%[[P1]]]
      // CHECK: nvgpu.mbarrier.arrive %[[BAR]]
      tiledattn.ring.put %qr[%c0] with %kr[%c0] : !qring128, !ring128 {
      ^bb0(%qslot: !tiledattn.smem<128x128xbf16>, %kslot: !tiledattn.smem<64x128xbf16>):
        tiledattn.tma_load %q[%c0, %c0, %c0] into %qslot : !head128, !tiledattn.smem<128x128xbf16>
        tiledattn.tma_load %k[%c0, %c0, %c0] into %kslot : !head128, !tiledattn.smem<64x128xbf16>
      }
      // No wait at the gets.
      // CHECK-NOT: nvgpu.mbarrier.try_wait.parity
      // CHECK: nvvm.wgmma.fence.aligned
      // CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]]
      // CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]]
      // CHECK-COUNT-4: nvvm.wgmma.mma_async
      // CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]]
      // CHECK-COUNT-4: nvvm.wgmma.mma_async
      // CHECK: nvvm.wgmma.commit.group.sync.aligned
      %qs, %qt = tiledattn.ring.get %qr[%c0] partial : !qring128
      %ks, %kt = tiledattn.ring.get %kr[%c0] partial : !ring128
      %row = arith.muli %c, %c64 : index
      %sf = tiledattn.mma_async %qs[%row], %ks transpose_b after_parts(%qt, %kt) : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x64xf32>
      %s = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
      tiledattn.ring.release %kr, %kt : !ring128
      tiledattn.ring.release %qr, %qt : !qring128
      "test.use"(%s) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // b_rows(64): S over the first 64 keys of a 128-row K slot (N = 64) and a
    // P.V over the first 64 rows of a 128-row V slot (4 k-steps); the slots'
    // layout stays that of 128 rows: K's second atom 128 * 128 bytes on
    // (1024 in the descriptor's 16-byte units), V's atoms along N 16 KiB apart.
    // CHECK-LABEL: gpu.func @first_rows_of_b
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
    // CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
    // CHECK: arith.addi %{{.*}}, %c1024_i64 : i64
    // CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
    // CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
    // CHECK-NOT: nvvm.wgmma.mma_async
    // CHECK: nvvm.wgmma.commit.group.sync.aligned
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK-COUNT-4: llvm.inline_asm {{.*}}wgmma.mma_async.sync.aligned.m64n128k16
    // CHECK-NOT: wgmma.mma_async
    // CHECK: nvvm.wgmma.commit.group.sync.aligned
    gpu.func @first_rows_of_b(%q: !head128, %k: !head128, %v: !head128, %o: !head128, %c: index, %p: !words) kernel {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %qr = tiledattn.ring releases(8) : !qring128
      %kr = tiledattn.ring releases(8) : !qring128
      %vr = tiledattn.ring releases(8) : !qring128
      %qs, %qt = tiledattn.ring.get %qr[%c0] : !qring128
      %ks, %kt = tiledattn.ring.get %kr[%c0] : !qring128
      %row = arith.muli %c, %c64 : index
      %sf = tiledattn.mma_async %qs[%row], %ks b_rows(64) transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
      %s = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
      tiledattn.ring.release %kr, %kt : !qring128
      tiledattn.ring.release %qr, %qt : !qring128
      "test.use"(%s) : (!tiledattn.tile<64x64xf32>) -> ()
      %pt = builtin.unrealized_conversion_cast %p : !words to !tiledattn.tile<64x64xbf16>
      %vs, %vt = tiledattn.ring.get %vr[%c0] : !qring128
      %of = tiledattn.mma_async %pt, %vs b_rows(64) : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
      %out = tiledattn.wait %of : !tiledattn.future<64x128xf32>
      tiledattn.ring.release %vr, %vt : !qring128
      "test.use"(%out) : (!tiledattn.tile<64x128xf32>) -> ()
      gpu.return
    }

    // transpose_a (dQ = dS K): A's descriptor as an MN-major B's (leading
    // byte offset one atom of A's 64 rows: 8192 bytes, 512 << 16), k-steps
    // 16 rows (2048 bytes, 128 in the descriptor) apart, and A's layout
    // col (imm-trans-a); B (the K slot's first 64 rows, MN-major) the same
    // for its 128 rows (1024 << 16).
    // CHECK-LABEL: gpu.func @transposed_a
    // CHECK: %[[BDESC:.*]] = arith.ori %{{.*}}, %{{.*}}4611686293372403712{{.*}} : i64
    // CHECK: %[[ADESC:.*]] = arith.ori %{{.*}}, %{{.*}}4611686293338849280{{.*}} : i64
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK-NEXT: %[[D0:.*]] = nvvm.wgmma.mma_async %[[ADESC]], %[[BDESC]], %{{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
    // CHECK: %[[B1:.*]] = arith.addi %[[BDESC]], %c128_i64
    // CHECK: %[[A1:.*]] = arith.addi %[[ADESC]], %c128_i64
    // CHECK-NEXT: nvvm.wgmma.mma_async %[[A1]], %[[B1]], %[[D0]], <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>]
    // CHECK: arith.addi %[[ADESC]], %c256_i64
    // CHECK: arith.addi %[[ADESC]], %c384_i64
    // CHECK-NEXT: nvvm.wgmma.mma_async
    // CHECK-NOT: nvvm.wgmma.mma_async
    // CHECK: nvvm.wgmma.commit.group.sync.aligned
    gpu.func @transposed_a(%q: !head128, %k: !head128, %v: !head128, %o: !head128) kernel {
      %c0 = arith.constant 0 : index
      %kr = tiledattn.ring releases(8) : !qring128
      %buf = tiledattn.alloc : !tiledattn.smem<64x64xbf16>
      %ks, %kt = tiledattn.ring.get %kr[%c0] : !qring128
      %f = tiledattn.mma_async %buf[%c0] transpose_a, %ks b_rows(64) : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
      %dq = tiledattn.wait %f : !tiledattn.future<64x128xf32>
      tiledattn.ring.release %kr, %kt : !qring128
      "test.use"(%dq) : (!tiledattn.tile<64x128xf32>) -> ()
      gpu.return
    }

    // acc_in_flight: the second mma's k-steps continue the first's chain
    // on the same registers (accumulating from its first k-step), with no
    // wait between; one wait, for the last, retires them.
    // CHECK-LABEL: gpu.func @chained_accumulator
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK-NEXT: nvvm.wgmma.mma_async {{.*}}D[<f32>, <zero>]
    // CHECK-COUNT-2: nvvm.wgmma.mma_async {{.*}}D[<f32>, <one>]
    // CHECK: %[[D3:.*]] = nvvm.wgmma.mma_async {{.*}}D[<f32>, <one>]
    // CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
    // CHECK-NOT: nvvm.wgmma.wait.group
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK-NEXT: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D3]], <m = 64, n = 64, k = 16>, D[<f32>, <one>]
    // CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}D[<f32>, <one>]
    // CHECK: nvvm.wgmma.commit.group.sync.aligned
    // CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
    // CHECK-NOT: nvvm.wgmma.wait.group
    gpu.func @chained_accumulator(%q: !head128, %k: !head128, %v: !head128, %o: !head128) kernel {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %kr = tiledattn.ring releases(8) : !qring128
      %ds = tiledattn.alloc : !tiledattn.smem<128x64xbf16>
      %ks, %kt = tiledattn.ring.get %kr[%c0] : !qring128
      %f0 = tiledattn.mma_async %ds[%c0], %ks[%c0] b_rows(64) b_col(0) : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
      %f = tiledattn.mma_async %ds[%c64], %ks[%c64] b_rows(64) b_col(0) acc_in_flight(%f0) : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
      %dq = tiledattn.wait %f : !tiledattn.future<64x64xf32>
      tiledattn.ring.release %kr, %kt : !qring128
      "test.use"(%dq) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // [b_row] b_rows(64): S over a consumer's 64 keys of a 128-row K slot,
    // from row 64 (8192 bytes on: 64 rows of 128 bytes in each atom); the
    // second atom still 128 rows (16 KiB, 1024 in the descriptor) on.
    // CHECK-LABEL: gpu.func @rows_of_b_from_an_offset
    // CHECK: %[[OFF:.*]] = arith.muli %{{.*}}, %c128 : index
    // CHECK: arith.addi %{{.*}}, %[[OFF]] : index
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
    // CHECK: arith.addi %{{.*}}, %c1024_i64 : i64
    // CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
    // CHECK-NOT: nvvm.wgmma.mma_async
    // CHECK: nvvm.wgmma.commit.group.sync.aligned
    gpu.func @rows_of_b_from_an_offset(%q: !head128, %k: !head128, %v: !head128, %o: !head128, %c: index) kernel {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %qr = tiledattn.ring releases(4) : !ring128
      %kr = tiledattn.ring releases(8) : !qring128
      %qs, %qt = tiledattn.ring.get %qr[%c0] : !ring128
      %ks, %kt = tiledattn.ring.get %kr[%c0] : !qring128
      %krow = arith.muli %c, %c64 : index
      %sf = tiledattn.mma_async %qs[%c0], %ks[%krow] b_rows(64) transpose_b : !tiledattn.smem<64x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
      %s = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
      tiledattn.ring.release %kr, %kt : !qring128
      tiledattn.ring.release %qr, %qt : !ring128
      "test.use"(%s) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // b_col(64): dQ's second 64-column half, B's descriptor from the K
    // slot's second atom (one atom of its 64 rows further: 8192 bytes),
    // four k-steps of n = 64 (16 rows, 2048 bytes, 128 in the descriptor).
    // CHECK-LABEL: gpu.func @second_column_half_of_b
    // CHECK: %[[ATOM1:.*]] = arith.addi %{{.*}}, %c8192 : index
    // CHECK: arith.index_castui %[[ATOM1]]
    // CHECK: %[[BDESC:.*]] = arith.ori
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK-NEXT: %[[D0:.*]] = nvvm.wgmma.mma_async %{{.*}}, %[[BDESC]], %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
    // CHECK: arith.addi %[[BDESC]], %c128_i64
    // CHECK: arith.addi %[[BDESC]], %c256_i64
    // CHECK: arith.addi %[[BDESC]], %c384_i64
    // CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>
    // CHECK-NOT: nvvm.wgmma.mma_async
    // CHECK: nvvm.wgmma.commit.group.sync.aligned
    gpu.func @second_column_half_of_b(%q: !head128, %k: !head128, %v: !head128, %o: !head128) kernel {
      %c0 = arith.constant 0 : index
      %kr = tiledattn.ring releases(4) : !ring128
      %buf = tiledattn.alloc : !tiledattn.smem<64x64xbf16>
      %ks, %kt = tiledattn.ring.get %kr[%c0] : !ring128
      %f = tiledattn.mma_async %buf[%c0] transpose_a, %ks b_col(64) : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x64xf32>
      %dq = tiledattn.wait %f : !tiledattn.future<64x64xf32>
      tiledattn.ring.release %kr, %kt : !ring128
      "test.use"(%dq) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }
  }
}
