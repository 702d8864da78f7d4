// RUN: tiledattn-opt %s | tiledattn-opt | FileCheck %s
// RUN: tiledattn-opt %s -mlir-print-op-generic | tiledattn-opt | FileCheck %s

// The ring ops and their types print and parse back, in the custom and the
// generic form.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>

// CHECK-LABEL: func.func @producer_and_consumer
// CHECK-SAME: (%[[K:.*]]: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %[[B:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[P:.*]]: index)
func.func @producer_and_consumer(%k: !head, %b: index, %h: index, %row: index, %p: index) {
  // CHECK: %[[R:.*]] = tiledattn.ring releases(8) : !tiledattn.ring<2, 128x128xbf16>
  %r = tiledattn.ring releases(8) : !ring
  // CHECK: tiledattn.ring releases(8) cluster(2) : !tiledattn.ring<2, 128x128xbf16>
  %shared = tiledattn.ring releases(8) cluster(2) : !ring
  // CHECK: tiledattn.ring.put %[[R]][%[[P]]] : !tiledattn.ring<2, 128x128xbf16> {
  // CHECK-NEXT: ^bb0(%[[SLOT:.*]]: !tiledattn.smem<128x128xbf16>):
  // CHECK-NEXT: tiledattn.tma_load %[[K]][%[[B]], %[[H]], %[[ROW]]] into %[[SLOT]] : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, !tiledattn.smem<128x128xbf16>
  // CHECK-NEXT: }
  tiledattn.ring.put %r[%p] : !ring {
  ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
    tiledattn.tma_load %k[%b, %h, %row] into %slot : !head, !tiledattn.smem<128x128xbf16>
  }
  // CHECK: %{{.*}}, %[[TOKEN:.*]] = tiledattn.ring.get %[[R]][%[[P]]] : !tiledattn.ring<2, 128x128xbf16>
  %s, %t = tiledattn.ring.get %r[%p] : !ring
  // CHECK: tiledattn.ring.release %[[R]], %[[TOKEN]] : !tiledattn.ring<2, 128x128xbf16>
  tiledattn.ring.release %r, %t : !ring
  // CHECK: %{{.*}}, %[[UTOKEN:.*]] = tiledattn.ring.get %[[R]][%[[P]]] uniform : !tiledattn.ring<2, 128x128xbf16>
  %us, %ut = tiledattn.ring.get %r[%p] uniform : !ring
  tiledattn.ring.release %r, %ut : !ring
  return
}

// A ring of one slot of 64 rows of f16, as wide as head dim 256.
// CHECK-LABEL: func.func private @types
// CHECK-SAME: !tiledattn.ring<1, 64x256xf16>, !tiledattn.smem<64x256xf16>, !tiledattn.token
func.func private @types(!tiledattn.ring<1, 64x256xf16>, !tiledattn.smem<64x256xf16>, !tiledattn.token)

// O staged in a tile of its own and stored by TMA, then the wait that lets
// the tile be written again.
!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!acc = !tiledattn.tile<64x128xf32>
!rows = !tiledattn.tile<64xf32>
// CHECK-LABEL: func.func @tma_store
// CHECK-SAME: (%[[O:.*]]: memref<{{.*}}>, %[[LSE:.*]]: memref<{{.*}}>, %[[ACC:.*]]: !tiledattn.tile<64x128xf32>, %[[M:.*]]: !tiledattn.tile<64xf32>, %[[L:.*]]: !tiledattn.tile<64xf32>, %[[I:.*]]: index)
func.func @tma_store(%o: !o, %lse: !lse, %acc: !acc, %m: !rows, %l: !rows, %i: index) {
  // CHECK: %[[STAGE:.*]] = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  %stage = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  // CHECK: tiledattn.tma_store %[[ACC]], %[[M]], %[[L]] into %[[O]][%[[I]], %[[I]], %[[I]]] via %[[STAGE]][%[[I]]] lse(%[[LSE]]) : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, !tiledattn.smem<128x128xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  tiledattn.tma_store %acc, %m, %l into %o[%i, %i, %i] via %stage[%i] lse(%lse)
      : !acc, !o, !tiledattn.smem<128x128xbf16>, !rows, !rows, !lse
  // CHECK-NEXT: tiledattn.tma_store_wait
  tiledattn.tma_store_wait
  // CHECK: tiledattn.tma_store %[[ACC]], %[[M]], %[[L]] into %[[O]][%[[I]], %[[I]], %[[I]]] via %[[STAGE]][%[[I]]] : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, !tiledattn.smem<128x128xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>{{$}}
  tiledattn.tma_store %acc, %m, %l into %o[%i, %i, %i] via %stage[%i]
      : !acc, !o, !tiledattn.smem<128x128xbf16>, !rows, !rows
  // A packed O (normalized already), stored as it is.
  // CHECK: %[[PACKED:.*]] = tiledattn.truncate %[[ACC]]
  // CHECK-NEXT: tiledattn.tma_store %[[PACKED]] into %[[O]][%[[I]], %[[I]], %[[I]]] via %[[STAGE]][%[[I]]] : !tiledattn.tile<64x128xbf16>, memref<{{.*}}>, !tiledattn.smem<128x128xbf16>{{$}}
  %packed = tiledattn.truncate %acc : !acc to !tiledattn.tile<64x128xbf16>
  tiledattn.tma_store %packed into %o[%i, %i, %i] via %stage[%i]
      : !tiledattn.tile<64x128xbf16>, !o, !tiledattn.smem<128x128xbf16>
  return
}

// The rows' 1 / l and lse ahead of O, then O stored as it is.
// CHECK-LABEL: func.func @finish_rows
// CHECK: %[[INV:.*]] = tiledattn.finish_rows %[[M:.*]], %[[L:.*]] into %[[LSE:.*]][%[[I:.*]], %[[I]], %[[I]]] : !tiledattn.tile<64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: %[[O:.*]] = tiledattn.rescale %{{.*}}, %[[INV]]
// CHECK: tiledattn.tma_store %[[O]] into %{{.*}}[%[[I]], %[[I]], %[[I]]] via %{{.*}}[%[[I]]] : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, !tiledattn.smem<128x128xbf16>{{$}}
func.func @finish_rows(%o: !o, %lse: !lse, %acc: !acc, %m: !rows, %l: !rows, %i: index) {
  %stage = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  %inv = tiledattn.finish_rows %m, %l into %lse[%i, %i, %i] : !rows, !lse
  %normalized = tiledattn.rescale %acc, %inv : !acc, !rows
  tiledattn.tma_store %normalized into %o[%i, %i, %i] via %stage[%i]
      : !acc, !o, !tiledattn.smem<128x128xbf16>
  return
}

// A ring whose slots fill in parts: its first part put alone, the rest with
// another ring's slot; a partial get whose token the mma names.
!q256 = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!qring = !tiledattn.ring<1, 128x256xbf16>
!kring = !tiledattn.ring<2, 64x256xbf16>
// CHECK-LABEL: func.func @parts
func.func @parts(%q: !q256, %i: index) {
  // CHECK: %[[QR:.*]] = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
  %qr = tiledattn.ring releases(8) parts(4) : !qring
  %kr = tiledattn.ring releases(8) : !kring
  // CHECK: tiledattn.ring.put %[[QR]][%{{.*}}] parts(0 to 1) : !tiledattn.ring<1, 128x256xbf16> {
  tiledattn.ring.put %qr[%i] parts(0 to 1) : !qring {
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !q256, !tiledattn.smem<128x256xbf16>
  }
  // CHECK: tiledattn.ring.put %[[QR]][%{{.*}}] parts(1 to 4) with %[[KR:.*]][%{{.*}}] : !tiledattn.ring<1, 128x256xbf16>, !tiledattn.ring<2, 64x256xbf16> {
  // CHECK-NEXT: ^bb0(%{{.*}}: !tiledattn.smem<128x256xbf16>, %{{.*}}: !tiledattn.smem<64x256xbf16>):
  tiledattn.ring.put %qr[%i] parts(1 to 4) with %kr[%i] : !qring, !kring {
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>, %kslot: !tiledattn.smem<64x256xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !q256, !tiledattn.smem<128x256xbf16>
    tiledattn.tma_load %q[%i, %i, %i] into %kslot : !q256, !tiledattn.smem<64x256xbf16>
  }
  // CHECK: %{{.*}}, %[[QT:.*]] = tiledattn.ring.get %[[QR]][%{{.*}}] partial : !tiledattn.ring<1, 128x256xbf16>
  %qs, %qt = tiledattn.ring.get %qr[%i] partial : !qring
  %ks, %kt = tiledattn.ring.get %kr[%i] uniform partial : !kring
  // CHECK: tiledattn.mma_async %{{.*}}[%{{.*}}], %{{.*}} transpose_b after_parts(%[[QT]], %{{.*}}) :
  %f = tiledattn.mma_async %qs[%i], %ks transpose_b after_parts(%qt, %kt) : !tiledattn.smem<128x256xbf16>, !tiledattn.smem<64x256xbf16> -> !tiledattn.future<64x64xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  tiledattn.ring.release %kr, %kt : !kring
  tiledattn.ring.release %qr, %qt : !qring
  return
}

// The releases of consumer warps that skip a use of a slot, made by the
// producer.
// CHECK-LABEL: func.func @skip
// CHECK: tiledattn.ring.skip %{{.*}}[%{{.*}}] readers(4) : !tiledattn.ring<2, 64x256xbf16>
func.func @skip(%i: index) {
  %kr = tiledattn.ring releases(8) : !kring
  tiledattn.ring.skip %kr[%i] readers(4) : !kring
  return
}

// A tagged put (the tile's rank with Q), a tagged put that copies nothing
// (an end mark), and the tag read from a held slot.
!q128 = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!tagring = !tiledattn.ring<2, 128x128xbf16>
// CHECK-LABEL: func.func @tags
func.func @tags(%q: !q128, %i: index, %rank: i32) -> i32 {
  %r = tiledattn.ring releases(8) : !tagring
  // CHECK: tiledattn.ring.put %{{.*}}[%{{.*}}] tag(%{{.*}}) : !tiledattn.ring<2, 128x128xbf16> {
  tiledattn.ring.put %r[%i] tag(%rank) : !tagring {
  ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !q128, !tiledattn.smem<128x128xbf16>
  }
  // CHECK: tiledattn.ring.put %{{.*}}[%{{.*}}] tag(%{{.*}}) : !tiledattn.ring<2, 128x128xbf16> {
  // CHECK-NEXT: ^bb0(%{{.*}}: !tiledattn.smem<128x128xbf16>):
  // CHECK-NEXT: }
  tiledattn.ring.put %r[%i] tag(%rank) : !tagring {
  ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
  }
  %s, %t = tiledattn.ring.get %r[%i] : !tagring
  // CHECK: %{{.*}} = tiledattn.ring.tag %{{.*}}, %{{.*}} : !tiledattn.ring<2, 128x128xbf16>
  %tag = tiledattn.ring.tag %r, %t : !tagring
  tiledattn.ring.release %r, %t : !tagring
  return %tag : i32
}

// A slot released on each path of an scf.if (a dynamic tile loop, lowered:
// the tile's body or the end mark gives it back).
// CHECK-LABEL: func.func @released_on_each_path
// CHECK: scf.if
// CHECK-NEXT: tiledattn.ring.release
// CHECK: } else {
// CHECK-NEXT: tiledattn.ring.release
func.func @released_on_each_path(%i: index, %c: i1) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  %s, %t = tiledattn.ring.get %r[%i] : !tiledattn.ring<2, 64x64xbf16>
  scf.if %c {
    tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
  } else {
    tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
  }
  return
}
