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
  return
}

// A ring of one slot of 64 rows of f16, as wide as head dim 256.
// CHECK-LABEL: func.func private @types
// CHECK-SAME: !tiledattn.ring<1, 64x256xf16>, !tiledattn.smem<64x256xf16>, !tiledattn.token
func.func private @types(!tiledattn.ring<1, 64x256xf16>, !tiledattn.smem<64x256xf16>, !tiledattn.token)
