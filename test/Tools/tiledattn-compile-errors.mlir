// Bad inputs and options: a diagnostic on stderr and a non-zero exit, never
// a crash.

// RUN: not tiledattn-compile %S/Inputs/does-not-exist.mlir -o %t 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: tiledattn-compile: error: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory

// RUN: not tiledattn-compile %S/Inputs/malformed.mlir -o %t 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.mlir:1:19: error: expected non-function type

// RUN: head -c 420 %schedules/sdpa_fwd_bf16_d64.mlir > %t.truncated.mlir
// RUN: not tiledattn-compile %t.truncated.mlir -o %t 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: truncated.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// TRUNCATED-NOT: PLEASE submit a bug report

// RUN: not tiledattn-compile %S/Inputs/wrong-types.mlir -o %t 2>&1 | FileCheck %s --check-prefix=TYPES
// TYPES: wrong-types.mlir:4:3: error: 'tiledattn.sdpa' op expected q element type f16 or bf16, but got 'f32'

// RUN: not tiledattn-compile %S/Inputs/infeasible.mlir -o %t 2>&1 | FileCheck %s --check-prefix=INFEASIBLE
// INFEASIBLE: infeasible.mlir:4:3: error: 'tiledattn.sdpa' op schedule needs 262144 bytes of shared memory
// The location and caret, not MLIR's dump of the op in generic form after them.
// INFEASIBLE-NOT: see current operation

// RUN: not tiledattn-compile %S/Inputs/unsupported-schedule.mlir -o %t 2>&1 | FileCheck %s --check-prefix=NO-LOWERING
// NO-LOWERING: error: 'func.func' op mma = wgmma with producer = cp_async is lowered only with the experimental-wgmma option

// The manifest names the kernel's parameters after the sdpa op's operands,
// then the tensors its score_mod reads: a function passing the operands in
// another order, or taking something the runtime cannot pass, is refused.
// RUN: sed 's/memref<?xf32>/memref<16xf32>/g' %S/Inputs/captured-tensor.mlir > %t.static.mlir
// RUN: not tiledattn-compile %t.static.mlir -o %t 2>&1 | FileCheck %s --check-prefix=CAPTURE-STATIC
// CAPTURE-STATIC: error: 'func.func' op takes argument #6 ('memref<16xf32>') after scale, a tensor its score_mod reads: expected dynamic sizes of rank 1 or more (?x...; the runtime passes the tensor's sizes)
// RUN: sed 's/memref<?xf32>/memref<?xf32, strided<[2]>>/g' %S/Inputs/captured-tensor.mlir > %t.strided.mlir
// RUN: not tiledattn-compile %t.strided.mlir -o %t 2>&1 | FileCheck %s --check-prefix=CAPTURE-STRIDED
// CAPTURE-STRIDED: error: 'func.func' op takes argument #6 ('memref<?xf32, strided<[2]>>') after scale, a tensor its score_mod reads: expected the identity layout (a contiguous tensor) or strided<[?, ...], offset: ?> (any strides), but got strided<[2]>
// RUN: sed 's/%%slopes: memref<?xf32>)/%%slopes: memref<?xf32>, %%keep: memref<?xi1>)/' %S/Inputs/captured-tensor.mlir > %t.bool.mlir
// RUN: not tiledattn-compile %t.bool.mlir -o %t 2>&1 | FileCheck %s --check-prefix=CAPTURE-BOOL
// CAPTURE-BOOL: error: 'func.func' op takes argument #7 ('memref<?xi1>') after scale, a tensor its score_mod reads: expected an element type a torch tensor holds (f32, f16, bf16, f64, i8, i16, i32, i64), but got 'i1'
// RUN: sed 's/%%slopes: memref<?xf32>)/%%slopes: memref<?xf32>, %%bias: f32)/' %S/Inputs/captured-tensor.mlir > %t.scalar.mlir
// RUN: not tiledattn-compile %t.scalar.mlir -o %t 2>&1 | FileCheck %s --check-prefix=CAPTURE-SCALAR
// CAPTURE-SCALAR: error: 'func.func' op takes argument #7 ('f32') after scale, a tensor its score_mod reads: expected a memref
// RUN: not tiledattn-compile %S/Inputs/swapped-arguments.mlir -o %t 2>&1 | FileCheck %s --check-prefix=SWAPPED
// SWAPPED: swapped-arguments.mlir:5:1: error: 'func.func' op expected a kernel's function to take its tiledattn.sdpa's operands q, k, v, o, lse and scale, in that order (then the tensors its score_mod reads), but argument #0 ('memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>') is not the op's q
// RUN: not tiledattn-compile %S/Inputs/scale-not-argument.mlir -o %t 2>&1 | FileCheck %s --check-prefix=FIXED-SCALE
// FIXED-SCALE: scale-not-argument.mlir:5:1: error: 'func.func' op expected a kernel's function to take its tiledattn.sdpa's operands q, k, v, o, lse and scale, in that order (then the tensors its score_mod reads), but it has 5 arguments

// A tile program's tiledattn.for_each_tile bounds are its launch's grid:
// each must be a rule the runtime computes from the tensors' sizes, and
// every loop must walk the same tiles.
// RUN: sed 's/%%kb = arith.ceildivui %%sk, %%c128/%%kb = arith.divui %%sk, %%c128/' %schedules/backward/main_bf16_d128_rows.mlir > %t.grid-div.mlir
// RUN: not tiledattn-compile %t.grid-div.mlir -o %t 2>&1 | FileCheck %s --check-prefix=GRID-DIV
// GRID-DIV: error: 'tiledattn.for_each_tile' op expected bound #0 (query blocks) to be built from memref.dim of q, k, v or o, constants, arith.ceildivui, arith.muli, arith.addi and arith.minui (the bounds are the launch's grid, which the runtime computes from the tensors' sizes), but it uses 'arith.divui'
// RUN: sed 's/%%b = memref.dim %%q, %%c0 : !head/%%b = memref.dim %%lse, %%c0 : !rows/' %schedules/backward/main_bf16_d128_rows.mlir > %t.grid-lse.mlir
// RUN: not tiledattn-compile %t.grid-lse.mlir -o %t 2>&1 | FileCheck %s --check-prefix=GRID-LSE
// GRID-LSE: error: 'tiledattn.for_each_tile' op expected bound #2 (batches) to be built from {{.*}} but it uses a memref.dim of another tensor, or of a dimension not constant
// RUN: sed '0,/for_each_tile %%kb, %%hkv/s//for_each_tile %%kb, %%hq/' %schedules/backward/main_bf16_d128_rows.mlir > %t.grid-two.mlir
// RUN: not tiledattn-compile %t.grid-two.mlir -o %t 2>&1 | FileCheck %s --check-prefix=GRID-TWO
// GRID-TWO: error: 'tiledattn.for_each_tile' op walks other tiles than the program's first tiledattn.for_each_tile, but one launch gives out one grid's tiles: expected bounds (ceil_div(seqlen_k, block_m), heads_q, batch) but got (ceil_div(seqlen_k, block_m), heads_kv, batch)

// RUN: not tiledattn-compile %S/Inputs/no-sdpa.mlir -o %t 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: expected exactly one tiledattn.sdpa, or one tile program (a func.func marked tiledattn.kernel), in a kernel bundle's input, but found 0 sdpa ops and 0 tile programs

// RUN: not tiledattn-compile %S/Inputs/two-sdpa.mlir -o %t 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: error: expected exactly one tiledattn.sdpa, or one tile program (a func.func marked tiledattn.kernel), in a kernel bundle's input, but found 2 sdpa ops and 0 tile programs

// RUN: not tiledattn-compile %S/Inputs/nested-sdpa.mlir -o %t 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: nested-sdpa.mlir:5:5: error: 'tiledattn.sdpa' op expected to be directly in the body of a func.func (the function becomes the kernel), but its parent is scf.if

// RUN: not tiledattn-compile %schedules/sdpa_fwd_bf16_d64.mlir -o %t --no-such-option 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tiledattn-compile: Unknown command line argument '--no-such-option'

// RUN: not tiledattn-compile %schedules/sdpa_fwd_bf16_d64.mlir 2>&1 | FileCheck %s --check-prefix=NO-O
// NO-O: for the -o option: must be specified at least once!

// RUN: not tiledattn-compile %schedules/sdpa_fwd_bf16_d64.mlir -o %t --chip=sm_80 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: tiledattn-compile: error: --chip: expected sm_90a or sm_90 (the kernels use Hopper features), but got 'sm_80'

// RUN: not tiledattn-compile %schedules/sdpa_fwd_bf16_d64.mlir -o %t --ptxas=%S/Inputs/no-ptxas 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTXAS: tiledattn-compile: error: --ptxas: '{{.*}}no-ptxas' is not an executable ptxas (install the CUDA toolkit or pass --ptxas=PATH)

// A tile program (a func.func marked tiledattn.kernel) instead of an sdpa:
// its launch comes from its schedule, its parameters from sdpa's operands.
// RUN: not tiledattn-compile %S/Inputs/tile-program-without-schedule.mlir -o %t 2>&1 | FileCheck %s --check-prefix=PROGRAM-SCHEDULE
// PROGRAM-SCHEDULE: tile-program-without-schedule.mlir:2:1: error: 'func.func' op is a tile program (tiledattn.kernel) without tiledattn.schedule, which sets its launch (block_m, warps)

// RUN: not tiledattn-compile %S/Inputs/tile-program-wrong-arguments.mlir -o %t 2>&1 | FileCheck %s --check-prefix=PROGRAM-ARGUMENTS
// PROGRAM-ARGUMENTS: tile-program-wrong-arguments.mlir:3:1: error: 'func.func' op a tile program takes tiledattn.sdpa's operands (q, k, v, o, lse, scale): expected argument #4 to be a 3-D memref of f32, but got 'memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>'

// RUN: not tiledattn-compile %S/Inputs/tile-program-o-not-v.mlir -o %t 2>&1 | FileCheck %s --check-prefix=PROGRAM-O
// PROGRAM-O: tile-program-o-not-v.mlir:5:1: error: 'func.func' op a tile program takes tiledattn.sdpa's operands (q, k, v, o, lse, scale): expected argument #3 to be of v's type, but got 'memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>'

// RUN: not tiledattn-compile %S/Inputs/tile-program-v-element-type.mlir -o %t 2>&1 | FileCheck %s --check-prefix=PROGRAM-V
// PROGRAM-V: tile-program-v-element-type.mlir:5:1: error: 'func.func' op a tile program takes tiledattn.sdpa's operands (q, k, v, o, lse, scale): expected argument #2 to be a 4-D memref of q's element type with a static head dim, but got 'memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>'
