//===- TiledAttnDialect.h - TiledAttn dialect -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNDIALECT_H
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dialect.h"

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOpsDialect.h.inc"

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNDIALECT_H
