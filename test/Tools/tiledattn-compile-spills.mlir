// A schedule that needs more than 255 registers still compiles, but the tool
// warns on stderr and the manifest records the spills.
// REQUIRES: ptxas
// RUN: tiledattn-compile %S/Inputs/spilling.mlir -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json
// CHECK-DAG: spilling: registers=255 spill_stores={{[1-9][0-9]*}}
// CHECK-DAG: tiledattn-compile: warning: spilling spills {{[1-9][0-9]*}} bytes to local memory and reloads {{[1-9][0-9]*}} (registers 255); a smaller block_n or block_m usually removes the spills
// MANIFEST: "spill_stores": {{[1-9][0-9]*}}
