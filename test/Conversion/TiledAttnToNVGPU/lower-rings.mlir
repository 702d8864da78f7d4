// RUN: tiledattn-opt %s -split-input-file -allow-unregistered-dialect --tiledattn-lower-rings --canonicalize --cse | FileCheck %s

// tiledattn-lower-rings on a producer/consumer kernel: thread 0 puts K and V
// blocks into two rings of 2 slots, the other threads get and release them.
// Checked: the shared memory and barrier plan, the tensor maps, and the
// synchronization each op becomes, in order.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
module attributes {gpu.container_module} {
  gpu.module @rings {
    gpu.func @k(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) kernel
        attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c128 = arith.constant 128 : index
      %kr = tiledattn.ring releases(8) : !ring
      %vr = tiledattn.ring releases(8) : !ring
      %tid = gpu.thread_id x
      %b = gpu.block_id z
      %h = gpu.block_id y
      %sk = memref.dim %k, %c1 : !head
      %n = arith.divui %sk, %c128 : index
      %is0 = arith.cmpi eq, %tid, %c0 : index
      scf.if %is0 {
        scf.for %j = %c0 to %n step %c1 {
          %row = arith.muli %j, %c128 : index
          tiledattn.ring.put %kr[%j] : !ring {
          ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
            tiledattn.tma_load %k[%b, %h, %row] into %slot : !head, !tiledattn.smem<128x128xbf16>
          }
          tiledattn.ring.put %vr[%j] : !ring {
          ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
            tiledattn.tma_load %v[%b, %h, %row] into %slot : !head, !tiledattn.smem<128x128xbf16>
          }
        }
      } else {
        scf.for %j = %c0 to %n step %c1 {
          %ks, %kt = tiledattn.ring.get %kr[%j] : !ring
          tiledattn.ring.release %kr, %kt : !ring
          %vs, %vt = tiledattn.ring.get %vr[%j] : !ring
          tiledattn.ring.release %vr, %vt : !ring
        }
      }
      gpu.return
    }
  }
}

// Two rings of 2 slots of 128 x 128 bf16 (32 KiB), 1 KiB apart for the pad.
// The tensor maps of K and V (boxes of 128 rows) come after the arguments.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: %[[KPTR:[^:]*]]: !llvm.ptr, %[[VPTR:[^:]*]]: !llvm.ptr) kernel
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 132096 : i64
// CHECK-SAME: tiledattn.tensor_maps = [{box_cols = 64 : i64, box_rows = 128 : i64, operand = "k", swizzle = 128 : i64}, {box_cols = 64 : i64, box_rows = 128 : i64, operand = "v", swizzle = 128 : i64}]
// CHECK: %[[KMAP:.*]] = builtin.unrealized_conversion_cast %[[KPTR]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x1x128x64xbf16, 3>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: %[[VMAP:.*]] = builtin.unrealized_conversion_cast %[[VPTR]]
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: %[[MOD:.*]] = arith.remui %[[ADDR]], %c1024
// CHECK: %[[GAP:.*]] = arith.subi %c1024, %[[MOD]]
// CHECK: %[[PAD:.*]] = arith.remui %[[GAP]], %c1024
// Per ring its full barriers (the producer's arrive) then its empty ones
// (8 releases): K 0-1 full, 2-3 empty; V 4-5 full, 6-7 empty.
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 8>
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: nvgpu.mbarrier.init %[[BAR]][%c0], %c1 :
// CHECK-NEXT: nvgpu.mbarrier.init %[[BAR]][%c1], %c1 :
// CHECK-NEXT: nvgpu.mbarrier.init %[[BAR]][%c2], %c8 :
// CHECK-NEXT: nvgpu.mbarrier.init %[[BAR]][%c3], %c8 :
// CHECK-NEXT: nvgpu.mbarrier.init %[[BAR]][%c4], %c1 :
// CHECK-NEXT: nvgpu.mbarrier.init %[[BAR]][%c5], %c1 :
// CHECK-NEXT: nvgpu.mbarrier.init %[[BAR]][%c6], %c8 :
// CHECK-NEXT: nvgpu.mbarrier.init %[[BAR]][%c7], %c8 :
// CHECK-NEXT: nvgpu.tma.prefetch.descriptor %[[KMAP]]
// CHECK-NEXT: nvgpu.tma.prefetch.descriptor %[[VMAP]]
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier

// The producer, at position j: slot j mod 2, phase (j / 2) mod 2. It waits
// for the slot's previous phase on its empty barrier (parity flipped: a
// fresh barrier passes), announces 32 KiB on its full barrier, then copies
// the block's two 64-column atoms, 16 KiB apart.
// CHECK: scf.for %[[J:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK-NEXT: %[[ROW:.*]] = arith.muli %[[J]], %c128
// CHECK-NEXT: %[[ROUND:.*]] = arith.divui %[[J]], %c2
// CHECK-NEXT: %[[ROUND32:.*]] = arith.index_castui %[[ROUND]] : index to i32
// CHECK-NEXT: %[[PARITY:.*]] = arith.trunci %[[ROUND32]] : i32 to i1
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[J]], %c2
// CHECK-NEXT: %[[FLIPPED:.*]] = arith.xori %[[PARITY]], %true
// CHECK-NEXT: %[[KEMPTY:.*]] = arith.addi %[[SLOT]], %c2
// CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[BAR]][%[[KEMPTY]]], %[[FLIPPED]], %c10000000
// CHECK-NEXT: %[[KOFF:.*]] = arith.muli %[[SLOT]], %c32768
// CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%[[SLOT]]], %c32768 :
// CHECK-NEXT: %[[A0:.*]] = arith.addi %[[PAD]], %[[KOFF]]
// CHECK-NEXT: %[[VIEW0:.*]] = memref.view %[[SMEM]][%[[A0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: nvgpu.tma.async.load %[[KMAP]][%c0, %[[ROW]], %{{.*}}, %{{.*}}], %[[BAR]][%[[SLOT]]] to %[[VIEW0]]
// CHECK-NEXT: %[[KOFF1:.*]] = arith.addi %[[KOFF]], %c16384
// CHECK-NEXT: %[[A1:.*]] = arith.addi %[[PAD]], %[[KOFF1]]
// CHECK-NEXT: %[[VIEW1:.*]] = memref.view %[[SMEM]][%[[A1]]][]
// CHECK-NEXT: nvgpu.tma.async.load %[[KMAP]][%c64, %[[ROW]], %{{.*}}, %{{.*}}], %[[BAR]][%[[SLOT]]] to %[[VIEW1]]
// V's ring: empty barriers 6-7, full 4-5, slots from 64 KiB.
// CHECK-NEXT: %[[VEMPTY:.*]] = arith.addi %[[SLOT]], %c6
// CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[BAR]][%[[VEMPTY]]], %[[FLIPPED]], %c10000000
// CHECK-NEXT: %[[VOFF:.*]] = arith.addi %[[KOFF]], %c65536
// CHECK-NEXT: %[[VFULL:.*]] = arith.addi %[[SLOT]], %c4
// CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%[[VFULL]]], %c32768 :
// CHECK: nvgpu.tma.async.load %[[VMAP]][%c0, %[[ROW]], %{{.*}}, %{{.*}}], %[[BAR]][%[[VFULL]]]
// CHECK: nvgpu.tma.async.load %[[VMAP]][%c64, %[[ROW]], %{{.*}}, %{{.*}}], %[[BAR]][%[[VFULL]]]
// CHECK-NEXT: }
// CHECK-NEXT: } else {

// The consumers wait on the full barrier for the position's own phase and
// release with one arrive per warp (lane 0) on the empty one.
// CHECK-NEXT: scf.for %[[CJ:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK-NEXT: %[[CROUND:.*]] = arith.divui %[[CJ]], %c2
// CHECK-NEXT: %[[CROUND32:.*]] = arith.index_castui %[[CROUND]] : index to i32
// CHECK-NEXT: %[[CPARITY:.*]] = arith.trunci %[[CROUND32]] : i32 to i1
// CHECK-NEXT: %[[CSLOT:.*]] = arith.remui %[[CJ]], %c2
// CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[BAR]][%[[CSLOT]]], %[[CPARITY]], %c10000000
// CHECK-NEXT: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// CHECK-NEXT: %[[LANE0:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK-NEXT: scf.if %[[LANE0]] {
// CHECK-NEXT: %[[CKEMPTY:.*]] = arith.addi %[[CSLOT]], %c2
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[BAR]][%[[CKEMPTY]]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[CVFULL:.*]] = arith.addi %[[CSLOT]], %c4
// CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[BAR]][%[[CVFULL]]], %[[CPARITY]], %c10000000
// CHECK-NEXT: scf.if %[[LANE0]] {
// CHECK-NEXT: %[[CVEMPTY:.*]] = arith.addi %[[CSLOT]], %c6
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[BAR]][%[[CVEMPTY]]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: tiledattn.

// -----

// A consumer stages O by TMA in its rows of a Q slot, then in a
// tiledattn.alloc tile after the ring. Each tma_store (left for
// tiledattn-lower-mma, which writes the rows) is followed by the fence for
// the async proxy, its warpgroup's barrier and the copies of its first
// thread, one 64 x 64 box per atom, committed as a group; each wait by that
// thread's wait for the group's reads and the barrier.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<1, 128x128xbf16>
!acc = !tiledattn.tile<64x128xf32>
!rows = !tiledattn.tile<64xf32>
module attributes {gpu.container_module} {
  gpu.module @stores {
    gpu.func @k(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32,
                %acc: !acc, %m: !rows, %l: !rows, %b: index, %h: index, %row: index, %srow: index) kernel
        attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %qr = tiledattn.ring releases(8) : !ring
      %stage = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
      %qs, %qt = tiledattn.ring.get %qr[%c0] : !ring
      tiledattn.tma_store %acc, %m, %l into %o[%b, %h, %row] via %qs[%srow] lse(%lse)
          : !acc, !head, !tiledattn.smem<128x128xbf16>, !rows, !rows, !lse
      tiledattn.tma_store_wait
      tiledattn.ring.release %qr, %qt : !ring
      tiledattn.tma_store %acc, %m, %l into %o[%b, %h, %row] via %stage[%srow]
          : !acc, !head, !tiledattn.smem<128x128xbf16>, !rows, !rows
      tiledattn.tma_store_wait
      gpu.return
    }
  }
}

// One Q slot (32 KiB), then the alloc tile (32 KiB), after the 1 KiB pad;
// O's tensor map has boxes of 64 rows.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: %[[OPTR:[^:]*]]: !llvm.ptr) kernel
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 66560 : i64
// CHECK-SAME: tiledattn.tensor_maps = [{box_cols = 64 : i64, box_rows = 64 : i64, operand = "o", swizzle = 128 : i64}]
// CHECK: %[[OMAP:.*]] = builtin.unrealized_conversion_cast %[[OPTR]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x1x64x64xbf16, 3>
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: %[[MOD:.*]] = arith.remui %[[ADDR]], %c1024
// CHECK: %[[GAP:.*]] = arith.subi %c1024, %[[MOD]]
// CHECK: %[[PAD:.*]] = arith.remui %[[GAP]], %c1024
// CHECK: %[[STAGEOFF:.*]] = arith.addi %[[PAD]], %c32768
// CHECK: %[[STAGEADDR:.*]] = arith.addi %[[ADDR]], %[[STAGEOFF]]
// CHECK: %[[STAGE:.*]] = builtin.unrealized_conversion_cast %[[STAGEADDR]] : index to !tiledattn.smem<128x128xbf16>
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[QADDR:.*]] = arith.addi %[[ADDR]], %[[PAD]]
// CHECK: %[[QSLOT:.*]] = builtin.unrealized_conversion_cast %[[QADDR]] : index to !tiledattn.smem<128x128xbf16>
// CHECK: tiledattn.tma_store %{{.*}} via %[[QSLOT]][%[[SROW:[a-z0-9_]+]]] lse(
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// Warpgroup w syncs its 128 threads on named barrier 4 + w.
// CHECK-NEXT: %[[WG:.*]] = arith.divui %[[TID]], %c128
// CHECK-NEXT: %[[ID:.*]] = arith.addi %[[WG]], %c4
// CHECK-NEXT: %[[ID32:.*]] = arith.index_castui %[[ID]] : index to i32
// CHECK-NEXT: nvvm.barrier id = %[[ID32]] number_of_threads = %c128_i32
// CHECK-NEXT: %[[ROWOFF:.*]] = arith.muli %[[SROW]], %c128
// CHECK-NEXT: %[[FIRST:.*]] = arith.addi %[[PAD]], %[[ROWOFF]]
// CHECK-NEXT: %[[LOCAL:.*]] = arith.remui %[[TID]], %c128
// CHECK-NEXT: %[[ISSUER:.*]] = arith.cmpi eq, %[[LOCAL]], %c0
// CHECK-NEXT: scf.if %[[ISSUER]] {
// CHECK-NEXT: %[[V0:.*]] = memref.view %[[SMEM]][%[[FIRST]]][]
// CHECK-NEXT: nvgpu.tma.async.store %[[V0]] to %[[OMAP]][%c0, %[[ROW:[a-z0-9_]+]], %[[H:[a-z0-9_]+]], %[[B:[a-z0-9_]+]]]
// CHECK-NEXT: %[[SECOND:.*]] = arith.addi %[[FIRST]], %c16384
// CHECK-NEXT: %[[V1:.*]] = memref.view %[[SMEM]][%[[SECOND]]][]
// CHECK-NEXT: nvgpu.tma.async.store %[[V1]] to %[[OMAP]][%c64, %[[ROW]], %[[H]], %[[B]]]
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[ISSUER]] {
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.barrier id = %[[ID32]] number_of_threads = %c128_i32
// The slot goes back only after the wait.
// CHECK: nvgpu.mbarrier.arrive
// CHECK: tiledattn.tma_store %{{.*}} via %[[STAGE]][%[[SROW]]] :
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier id = %[[ID32]] number_of_threads = %c128_i32
// CHECK-NEXT: %[[SFIRST:.*]] = arith.addi %[[STAGEOFF]], %[[ROWOFF]]
// CHECK-NEXT: scf.if %[[ISSUER]] {
// CHECK-NEXT: memref.view %[[SMEM]][%[[SFIRST]]][]
// CHECK-NEXT: nvgpu.tma.async.store
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.barrier id = %[[ID32]] number_of_threads = %c128_i32
// CHECK-NEXT: gpu.return

// -----

// A uniform get: the position through redux.sync before the slot and phase.
// CHECK-LABEL: gpu.func @uniform
// CHECK: %[[P32:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK-NEXT: %[[SAME:.*]] = nvvm.redux.sync umin %[[P32]], %c-1_i32 : i32 -> i32
// CHECK-NEXT: %[[P:.*]] = arith.index_castui %[[SAME]] : i32 to index
// CHECK: arith.remui %[[P]], %c2
// CHECK: nvgpu.mbarrier.try_wait.parity
module attributes {gpu.container_module} {
  gpu.module @uniform_get {
    gpu.func @uniform(%p: index) kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      %r = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
      %s, %t = tiledattn.ring.get %r[%p] uniform : !tiledattn.ring<2, 64x64xbf16>
      tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
      gpu.return
    }
  }
}

// -----

// tiledattn.ring.skip: `readers` arrivals by the calling thread on the
// slot's empty barrier (slot j mod 2 of a ring of 2: barriers 0-1 full,
// 2-3 empty).
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
// CHECK-LABEL: gpu.func @skip
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create
// CHECK: %[[SLOT:.*]] = arith.remui %{{.*}}, %c2
// CHECK: %[[EMPTY:.*]] = arith.addi %[[SLOT]], %c2
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[BAR]][%[[EMPTY]]]
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[BAR]][%[[EMPTY]]]
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[BAR]][%[[EMPTY]]]
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[BAR]][%[[EMPTY]]]
// CHECK-NOT: nvgpu.mbarrier.arrive
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @rings {
    gpu.func @skip(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %j: index) kernel {
      %kr = tiledattn.ring releases(8) : !ring
      tiledattn.ring.skip %kr[%j] readers(4) : !ring
      gpu.return
    }
  }
}

// -----

// Tags: a word per slot after the ring (2 x 32 KiB + the 1 KiB pad: tags at
// 65536 past the pad), written before the put's arrive; a tag-only put
// arrives without bytes; ring.tag reads the word after the get's wait.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
// CHECK-LABEL: gpu.func @tags
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 66568 : i64
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create
// The tagged put: the empty wait, the tag, then the bytes.
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: %[[WORD:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1xi32, #gpu.address_space<workgroup>>
// CHECK-NEXT: memref.store %[[RANK:.*]], %[[WORD]][%c0] : memref<1xi32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK: nvgpu.tma.async.load
// The end mark: the tag and a plain arrive.
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: memref.store %[[END:.*]], %{{.*}}[%c0]
// CHECK-NOT: expect_tx
// CHECK: nvgpu.mbarrier.arrive %[[BAR]]
// The consumer: the full wait, then the word (the first put's slot).
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK-NEXT: %[[TAG:.*]] = memref.load %[[WORD]][%c0]
// CHECK: memref.store %[[TAG]], %{{.*}}[%c0] : memref<1xi32>
module attributes {gpu.container_module} {
  gpu.module @rings {
    gpu.func @tags(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %j: index, %rank: i32, %end: i32, %out: memref<1xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = tiledattn.ring releases(8) : !ring
      tiledattn.ring.put %r[%j] tag(%rank) : !ring {
      ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
        tiledattn.tma_load %q[%j, %j, %j] into %slot : !head, !tiledattn.smem<128x128xbf16>
      }
      %next = arith.addi %j, %c1 : index
      tiledattn.ring.put %r[%next] tag(%end) : !ring {
      ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
      }
      %s, %t = tiledattn.ring.get %r[%j] : !ring
      %tag = tiledattn.ring.tag %r, %t : !ring
      memref.store %tag, %out[%c0] : memref<1xi32>
      tiledattn.ring.release %r, %t : !ring
      gpu.return
    }
  }
}

// -----

// A load in two pieces of 64 rows (kv_span 64: two pages of a block): one
// tensor map with boxes of 64 rows, one copy per 64-column atom and piece,
// piece 1 64 x 128 bytes past piece 0 in each atom, all on the slot's one
// full barrier, which expects the whole slot's 32 KiB.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
// CHECK-LABEL: gpu.func @pieces
// CHECK-SAME: %[[J:[^:]*]]: index, %[[R0:[^:]*]]: index, %[[R1:[^:]*]]: index, %[[KPTR:[^:]*]]: !llvm.ptr) kernel
// CHECK-SAME: tiledattn.tensor_maps = [{box_cols = 64 : i64, box_rows = 64 : i64, operand = "k", swizzle = 128 : i64}]
// CHECK: %[[KMAP:.*]] = builtin.unrealized_conversion_cast %[[KPTR]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x1x64x64xbf16, 3>
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR:.*]][%[[FULL:.*]]], %c32768
// CHECK: %[[AT0:.*]] = arith.addi %[[PAD:.*]], %[[SLOT:.*]] : index
// CHECK: %[[V0:.*]] = memref.view %{{.*}}[%[[AT0]]][] {{.*}} to memref<1x1x64x64xbf16
// CHECK: nvgpu.tma.async.load %[[KMAP]][%c0, %[[R0]], %[[J]], %[[J]]], %[[BAR]][%[[FULL]]] to %[[V0]]
// CHECK: %[[S1:.*]] = arith.addi %[[SLOT]], %c8192
// CHECK: %[[AT1:.*]] = arith.addi %[[PAD]], %[[S1]]
// CHECK: %[[V1:.*]] = memref.view %{{.*}}[%[[AT1]]]
// CHECK: nvgpu.tma.async.load %[[KMAP]][%c0, %[[R1]], %[[J]], %[[J]]], %[[BAR]][%[[FULL]]] to %[[V1]]
// CHECK: %[[S2:.*]] = arith.addi %[[SLOT]], %c16384
// CHECK: %[[AT2:.*]] = arith.addi %[[PAD]], %[[S2]]
// CHECK: %[[V2:.*]] = memref.view %{{.*}}[%[[AT2]]]
// CHECK: nvgpu.tma.async.load %[[KMAP]][%c64, %[[R0]], %[[J]], %[[J]]], %[[BAR]][%[[FULL]]] to %[[V2]]
// CHECK: %[[S3:.*]] = arith.addi %[[SLOT]], %c24576
// CHECK: %[[AT3:.*]] = arith.addi %[[PAD]], %[[S3]]
// CHECK: %[[V3:.*]] = memref.view %{{.*}}[%[[AT3]]]
// CHECK: nvgpu.tma.async.load %[[KMAP]][%c64, %[[R1]], %[[J]], %[[J]]], %[[BAR]][%[[FULL]]] to %[[V3]]
// CHECK-NOT: nvgpu.tma.async.load
module attributes {gpu.container_module} {
  gpu.module @rings {
    gpu.func @pieces(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %j: index, %r0: index, %r1: index) kernel {
      %r = tiledattn.ring releases(8) : !ring
      tiledattn.ring.put %r[%j] : !ring {
      ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
        tiledattn.tma_load %k[%j, %j, %r0, %r1] into %slot : !head, !tiledattn.smem<128x128xbf16>
      }
      %s, %t = tiledattn.ring.get %r[%j] : !ring
      tiledattn.ring.release %r, %t : !ring
      gpu.return
    }
  }
}

// -----

// A ring shared by a cluster's pair of blocks (cluster(2), kv_multicast):
// its empty barriers count both blocks' releases, the barriers' init is
// published to the cluster and every block waits for the other's before
// the roles run and before it exits; each block copies its half of the
// slot's rows (rank x 64: a box of 64 rows) into both blocks' slots
// (multicast mask 0b11), the full barrier expecting the whole slot; a
// release arrives on this block's empty barrier and the other's (mapa).
// CHECK-LABEL: gpu.func @cluster
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK-SAME: tiledattn.tensor_maps = [{box_cols = 64 : i64, box_rows = 64 : i64, operand = "k", swizzle = 128 : i64}]
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create
// CHECK: %[[RANK32:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: %[[RANK:.*]] = arith.index_castui %[[RANK32]] : i32 to index
// CHECK: nvgpu.mbarrier.init %[[BAR]][%c2], %c16
// CHECK-NEXT: nvgpu.mbarrier.init %[[BAR]][%c3], %c16
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.cluster.arrive.relaxed {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%[[FULL:.*]]], %c32768
// CHECK: %[[SHARE:.*]] = arith.muli %[[RANK]], %c64
// CHECK: %[[SHAREBYTES:.*]] = arith.muli %[[RANK]], %c8192
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[SHARE]]
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0, %[[ROW]], %{{.*}}, %{{.*}}], %[[BAR]][%[[FULL]]] to %{{.*}} multicast_mask = %c3_i16
// CHECK: nvgpu.tma.async.load %{{.*}}[%c64, %[[ROW]], %{{.*}}, %{{.*}}], %[[BAR]][%[[FULL]]] to %{{.*}} multicast_mask = %c3_i16
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: nvgpu.mbarrier.arrive %[[BAR]][%[[EMPTY:.*]]] :
// CHECK-NEXT: %[[LOCAL:.*]] = nvgpu.mbarrier.get %[[BAR]][%[[EMPTY]]]
// CHECK-NEXT: %[[PTR:.*]] = llvm.inttoptr %[[LOCAL]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: %[[PEER:.*]] = arith.xori %[[RANK32]], %c1_i32 : i32
// CHECK-NEXT: %[[REMOTE:.*]] = nvvm.mapa %[[PTR]], %[[PEER]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[REMOTE]] : !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive.relaxed {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
module attributes {gpu.container_module} {
  gpu.module @rings {
    gpu.func @cluster(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %j: index, %row: index) kernel {
      %r = tiledattn.ring releases(8) cluster(2) : !ring
      tiledattn.ring.put %r[%j] : !ring {
      ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
        tiledattn.tma_load %k[%j, %j, %row] into %slot : !head, !tiledattn.smem<128x128xbf16>
      }
      %s, %t = tiledattn.ring.get %r[%j] : !ring
      tiledattn.ring.release %r, %t : !ring
      gpu.return
    }
  }
}

// -----

// tiledattn.columns: a view of a slot's columns from an atom on is the
// slot's address plus col / 64 atoms of its rows (64 x 128 bytes each).
// CHECK-LABEL: gpu.func @columns
// CHECK-SAME: (%[[COL:.*]]: index) kernel
// CHECK: %[[GAP:.*]] = arith.subi %c1024
// CHECK: %[[PAD:.*]] = arith.remui %[[GAP]], %c1024
// CHECK: %[[ATOMS:.*]] = arith.divui %[[COL]], %c64
// CHECK: %[[BYTES:.*]] = arith.muli %[[ATOMS]], %c8192
// CHECK: %[[OFF:.*]] = arith.addi %[[PAD]], %[[BYTES]]
// CHECK: %[[ADDR:.*]] = arith.addi %{{.*}}, %[[OFF]]
// CHECK: %[[VIEW:.*]] = builtin.unrealized_conversion_cast %[[ADDR]] : index to !tiledattn.smem<64x128xbf16>
// CHECK: "test.use"(%[[VIEW]])
// CHECK-NOT: tiledattn.columns
module attributes {gpu.container_module} {
  gpu.module @views {
    gpu.func @columns(%col: index) kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %r = tiledattn.ring releases(8) : !tiledattn.ring<1, 64x256xbf16>
      %s, %t = tiledattn.ring.get %r[%c0] : !tiledattn.ring<1, 64x256xbf16>
      %v = tiledattn.columns %s[%col] : !tiledattn.smem<64x256xbf16> to !tiledattn.smem<64x128xbf16>
      "test.use"(%v) : (!tiledattn.smem<64x128xbf16>) -> ()
      tiledattn.ring.release %r, %t : !tiledattn.ring<1, 64x256xbf16>
      gpu.return
    }
  }
}
