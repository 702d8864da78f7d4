//===- Passes.td - TiledAttn conversion passes -------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_CONVERSION_PASSES_TD
#define TILEDATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// TiledAttnToNVGPU
//===----------------------------------------------------------------------===//

def ConvertTiledAttnToNVGPUPass
    : Pass<"convert-tiledattn-to-nvgpu", "::mlir::ModuleOp"> {
  let summary = "Lower tile programs to a gpu.module of register-fragment code";
  let description = [{
    Turns every `func.func` marked `tiledattn.kernel` into a `gpu.func` kernel
    of the same name inside its own `gpu.module`. Each tile value becomes the
    per-thread register fragments of the mma instruction the schedule names:
    with `mma = mma_sync`, warp `w` owns query rows `16w .. 16w + 15` of the
    block; `lhs` tiles are m16n8k16 A fragments, `rhs` tiles B fragments (read
    row-wise from K for a transposed rhs, column-wise from V otherwise),
    accumulators C fragments, row tiles two values per thread. Row maxima
    and sums are reduced across the four threads of a row group with
    `gpu.shuffle xor`; exponentials are `llvm.nvvm.ex2.approx.f32` (no libdevice needed).

    With `experimental-wgmma`, `mma = wgmma` schedules (one warpgroup, 64 x 64
    tiles, `producer = cp_async`) lower to `nvvm.wgmma.mma_async` on
    shared-memory descriptors instead; this path has not been run on a GPU.

    A `producer = tma` program (warp roles, rings, asynchronous mmas, as
    `tiledattn-tile-sdpa` writes it or by hand) keeps its tile ops: its body
    moves into the `gpu.func`, whose block size is 128 threads per
    warpgroup of its one `tiledattn.warp_specialize` (it must agree with the
    schedule's `warps`), for `tiledattn-lower-roles`, `tiledattn-lower-rings`
    and `tiledattn-lower-mma`. Its `tiledattn.for_each_tile` loops become
    the launch the schedule describes: the block's one tile, with
    `persistent` an `scf.for` over every grid-th tile, with `dynamic_tiles`
    `scf.while` loops on a tile counter the kernel takes after its
    arguments (the manifest's `tile_counter`). Its schedule may not set the
    refinements a tile program does not express yet (`split_tail`, ...),
    which would launch it differently.

    #### Input invariant
    Tile programs as `tiledattn-tile-sdpa` makes them: tile values are
    defined by tile ops or `scf.for` iteration arguments, and consumed by
    tile ops, `scf.for` and `scf.yield`. Anything else that touches a tile
    is reported as an error.

    #### Output IR
    `gpu.module` / `gpu.func` with `nvvm.mma.sync` (m16n8k16, f16 or bf16
    operands, f32 accumulation), `vector`, `memref`, `arith`, `llvm.call_intrinsic` (ex2/lg2 approximations), `scf`
    and `gpu.shuffle`. No tiledattn op or type remains.
  }];
  let options = [
    Option<"experimentalWgmma", "experimental-wgmma", "bool", "false",
           "Lower mma = wgmma (with producer = cp_async, 64 x 64 tiles). It "
           "lowers to PTX that ptxas accepts but has not been checked on a "
           "GPU yet">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LowerRolesPass : Pass<"tiledattn-lower-roles", "::mlir::ModuleOp"> {
  let summary = "Lower warp roles and turns to the warpgroup split and named barriers";
  let description = [{
    Lowers the role ops of every `gpu.func` kernel:
    `tiledattn.warp_specialize` becomes an `scf.if` on the thread's
    warpgroup (thread id / 128): warpgroup 0 sets its register budget down
    to `producer_regs` (setmaxnreg) and runs the producer region; the others
    set theirs up to `consumer_regs` and run the consumer region with their
    index (warpgroup - 1). `tiledattn.turn` becomes a sync on the consumer's
    named barrier (1 + c, 256 threads) before the body and an arrive on the
    next consumer's after it; when the consumers take turns, the last one
    arrives on consumer 0's barrier first, so that consumer 0 starts.
    `tiledattn.uniform` becomes a redux.sync (umin) of its index, or a
    vote.sync (any) of its condition (NVVMHelpers.h).
    `tiledattn.first_query_block` and `tiledattn.key_block_end` become
    their `arith` (a constant 0 and the key blocks without a mask).

    `register-budgets=false` leaves out the `setmaxnreg`s, for builds run
    under compute-sanitizer (docs/Testing.md).
    `entry-registers=true` also declares the registers a thread starts with
    (`nvvm.maxnreg`: 168 for 384 threads), which the budgets share. ptxas
    needs that count to honour setmaxnreg and drops it where it cannot tell
    the count otherwise ("C7508 ... 'setmaxnreg' ignored; unable to determine
    register count at entry"): tiledattn-compile builds a kernel again with
    this option where ptxas says so. Not by default: where ptxas can tell,
    the count changes its schedule (the shipped forward kernels: 10 of 30
    SASS changed, up to 4% slower on an H100).

    #### Input invariant
    Role ops only in `gpu.func` kernels.

    #### Output IR
    `scf.if`, `gpu.thread_id`, `arith`, `nvvm.setmaxregister`,
    `nvvm.barrier`, `nvvm.barrier.arrive`, `nvvm.redux.sync`,
    `nvvm.vote.sync`; no role op, no `tiledattn.uniform`,
    `tiledattn.first_query_block` or `tiledattn.key_block_end`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect"
  ];
  let options = [
    Option<"registerBudgets", "register-budgets", "bool", "true",
           "Give the roles their register budgets with setmaxnreg (off for "
           "builds run under compute-sanitizer)">,
    Option<"entryRegisters", "entry-registers", "bool", "false",
           "Declare the registers a thread starts with (.maxnreg), which the "
           "budgets share">
  ];
}

def LowerRingsPass : Pass<"tiledattn-lower-rings", "::mlir::ModuleOp"> {
  let summary = "Lower rings of shared-memory slots to mbarriers and TMA";
  let description = [{
    Lowers the ring ops of every `gpu.func` kernel: each `tiledattn.ring`
    becomes slots in dynamic shared memory (1 KiB aligned, for the 128-byte
    swizzle) and a full and an empty mbarrier per slot, made and initialized
    once at the kernel's start (full: the producer's one arrive plus the
    copied bytes; empty: `releases` arrivals); `tiledattn.ring.put` waits on
    the slot's empty barrier for the phase before the position's, announces
    the slot's bytes on its full barrier and issues the body's
    `tiledattn.tma_load` as one TMA copy per 64-column atom;
    `tiledattn.ring.get` waits on the full barrier for the position's phase
    and hands its readers the slot's shared-memory address (an index,
    through `builtin.unrealized_conversion_cast` to the slot type, which
    `tiledattn-lower-mma` takes);
    `tiledattn.ring.release` makes lane 0 of each warp arrive on the empty
    one. A TMA source gets a tensor map: an `!llvm.ptr` parameter appended
    to the kernel and an entry in `tiledattn.tensor_maps`, which
    `tiledattn-mark-tensor-map-params` later makes grid constants. The kernel's
    `tiledattn.dynamic_smem_bytes` says the shared memory the rings take.

    #### Input invariant
    Ring ops only in `gpu.func` kernels whose `tiledattn.tma_load` sources
    are the kernel's first four arguments (q, k, v, o); roles already
    lowered (`tiledattn-lower-roles`).

    #### Output IR
    `nvgpu.mbarrier.*`, `nvgpu.tma.async.load`, `memref.view` of
    `gpu.dynamic_shared_memory`, `scf.if`, `arith`; no ring op, ring or
    token type; slots read by other ops as casts of their address.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def LowerMmaPass : Pass<"tiledattn-lower-mma", "::mlir::ModuleOp"> {
  let summary = "Lower asynchronous warpgroup mmas and the tile ops on their accumulators";
  let description = [{
    Lowers the mma ops of every `gpu.func` kernel:
    `tiledattn.mma_async` becomes `wgmma.fence`, one wgmma.m64nNk16 per 16
    of K (descriptors with the 128-byte swizzle, stepped along K; A from
    registers as inline PTX, since `nvvm.wgmma.mma_async` takes A from
    shared memory only) and `wgmma.commit_group`; `tiledattn.wait` becomes
    `wgmma.wait_group N`, N the mmas of its block issued after the one it
    waits for, and the retire of the accumulator (an empty volatile asm the
    registers pass through, so that nothing reads them before the wait).
    In program order with them, the tile ops on the accumulators they
    retire: `tiledattn.mask` on a 64 x N score tile (rows `row ..`, keys
    `col ..`) sets the thread's scores outside the sequence or, with
    `causal`, right of their row to -inf; `tiledattn.online_softmax` gives
    P packed into the words of the next mma's A, the new row statistics
    and the rescale factors; `tiledattn.rescale` multiplies each of a 64 x N
    accumulator's rows by its factor; `tiledattn.store` writes O / l and
    the lse straight from the registers (rows past the sequence not
    written); `tiledattn.constant` makes a warpgroup tile's registers.
    Warpgroup tiles that `scf` loops carry become their registers' structs
    (upstream's structural type conversion). A row-sum tile holds the
    thread's part of its rows' sums (a quarter of the keys); the store adds
    the quad's (WgmmaHelpers.h, AccumulatorMath).

    Register tiles cross the pass boundary as
    `builtin.unrealized_conversion_cast` of their registers: an f32
    accumulator (an mma's `acc`, a wait's result) as the struct of its N / 2
    floats per thread, in wgmma's layout; a 64-row vector as the struct of
    the thread's two rows (g and g + 8 of its warp); an f16/bf16 A as the
    struct of its K / 4 packed words.

    #### Input invariant
    Mma ops only in `gpu.func` kernels; roles and rings already lowered
    (`tiledattn-lower-roles`, `tiledattn-lower-rings`), so shared-memory
    operands are slot addresses and every wait is in the block of the mma it
    waits for, with no mma in a region between them.

    #### Output IR
    `nvvm.wgmma.*`, `llvm.inline_asm`, `llvm.extractvalue` /
    `llvm.insertvalue`, `arith`, `gpu.shuffle`, `vector` (the packing); no
    mma op or future type, no mask, online softmax or rescale on
    accumulator tiles; register tiles as casts of their structs.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// Kernel parameters and shared memory
//===----------------------------------------------------------------------===//

def MarkTensorMapParamsPass
    : Pass<"tiledattn-mark-tensor-map-params", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Make the trailing tensor-map parameters 128-byte grid "
                "constants";
  let description = [{
    Runs on lowered kernels (`llvm.func` in a `gpu.module`). For a kernel
    with `tiledattn.tensor_maps` (N entries), marks its last N parameters
    `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and
    `nvvm.grid_constant`: the runtime passes each CUtensorMap by value and
    the kernel uses its parameter-space address, as CUDA's
    `__grid_constant__ const CUtensorMap` does. The attributes are added
    this late because `gpu.func` does not carry them through lowering.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def ApproximateMathPass
    : Pass<"tiledattn-approximate-math", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower math ops marked fastmath<afn> to the GPU's approximate "
                "instructions";
  let description = [{
    `fastmath<afn>` on a math op says an approximation is good enough. The
    upstream lowering (convert-gpu-to-nvvm) honours it where libdevice has a
    fast function (`__nv_fast_expf`, ...), but `math.tanh` always becomes
    `__nv_tanhf`: an exponential, a reciprocal and selects per element. This
    pass, run before it, turns an f32 `math.tanh` with `afn` into
    `llvm.intr.tanh` with `afn`, which the NVPTX backend emits as one
    `tanh.approx.f32` (maximum relative error about 2^-11; FlashAttention's
    softcap uses the same instruction). Without `afn` nothing changes.

    ```mlir
    %t = math.tanh %x fastmath<afn> : f32
    // becomes
    %t = llvm.intr.tanh(%x) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ExternDynamicSharedMemoryPass
    : Pass<"tiledattn-extern-dynamic-shared-memory",
           "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declare the dynamic shared memory extern, after the static "
                "shared variables";
  let description = [{
    Runs on lowered kernels (`llvm.mlir.global` in a `gpu.module`, after
    convert-gpu-to-nvvm). Upstream lowers `gpu.dynamic_shared_memory` to an
    internal zero-length array in shared memory (`__dynamic_shmem__0`). The
    NVPTX backend of LLVM 22 demotes such a global into its one kernel and
    prints it as a one-byte `.shared .b8 __dynamic_shmem__0;`, so ptxas
    places it among the static shared variables: the kernel's tiles then
    start where the mbarriers are (`__mbarrier`, 8 bytes after it). Under
    load, TMA data and barrier state overwrote each other: NaN rows and
    "unspecified launch failure" in the backward's preprocess at head dim 64
    (issue 23). This pass gives every zero-length shared array external
    linkage, which NVPTX prints as CUDA's `extern __shared__`:

    ```mlir
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    // becomes
    llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    // PTX: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
    ```

    ptxas then places the dynamic shared memory after every static
    variable, where the launch's dynamic bytes are.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TILEDATTN_CONVERSION_PASSES_TD
