//===- tiledattn-opt.cpp - tiledattn optimizer driver -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tiledattn/InitAllTiledAttn.h"

int main(int argc, char **argv) {
  mlir::tiledattn::registerAllTiledAttnPasses();
  mlir::DialectRegistry registry;
  mlir::tiledattn::registerAllTiledAttnDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tiledattn optimizer driver\n", registry));
}
