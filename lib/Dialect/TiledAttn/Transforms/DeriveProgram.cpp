//===- DeriveProgram.cpp - A tile program's derived forms -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-derive-program: a hand-written tile program for another element
// type (bf16 -> f16), a smaller operand head dim or torch's causal mask, as
// an edit of its types, its mask ops and its functions' names, so that a
// variant is derived, not copied.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_DERIVEPROGRAMPASS
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;

namespace {
/// An operand memref: [B, H, S, D] with only D static.
std::optional<int64_t> operandHeadDim(MemRefType type) {
  ArrayRef<int64_t> shape = type.getShape();
  if (shape.size() != 4 || ShapedType::isStatic(shape[0]) ||
      ShapedType::isStatic(shape[1]) || ShapedType::isStatic(shape[2]) ||
      ShapedType::isDynamic(shape[3]))
    return std::nullopt;
  return shape[3];
}

/// The head dim every operand memref of `module`'s functions has, or
/// failure (with a diagnostic) when they have none or disagree.
FailureOr<int64_t> programHeadDim(ModuleOp module) {
  std::optional<int64_t> found;
  WalkResult walk = module.walk([&](func::FuncOp func) {
    for (Type type : func.getArgumentTypes()) {
      auto memref = dyn_cast<MemRefType>(type);
      std::optional<int64_t> d = memref ? operandHeadDim(memref) : std::nullopt;
      if (!d)
        continue;
      if (found && *found != *d) {
        func.emitError("tiledattn-derive-program: expected the operands' "
                       "[B, H, S, D] memrefs to have one head dim, but got ")
            << *found << " and " << *d;
        return WalkResult::interrupt();
      }
      found = d;
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!found) {
    module.emitError("tiledattn-derive-program: head-dim needs operands of "
                     "type memref<?x?x?xDx...>, but the program has none");
    return failure();
  }
  return *found;
}

/// `name` with its first `from` replaced by `to`.
std::string replaceFirst(StringRef name, StringRef from, StringRef to) {
  size_t at = name.find(from);
  if (at == StringRef::npos)
    return name.str();
  return (name.take_front(at) + to + name.drop_front(at + from.size())).str();
}

/// Makes `module` torch's causal attention (top-left): each mask also sets
/// the scores of keys after their query to -inf, each first_query_block
/// starts at the diagonal and each key_block_end ends there. Fails (with a
/// diagnostic) unless the program has a mask and a loop bound, none of them
/// causal yet.
LogicalResult deriveCausal(ModuleOp module) {
  SmallVector<Operation *> ops;
  bool hasMask = false, hasBound = false;
  module.walk([&](Operation *op) {
    if (!isa<MaskOp, FirstQueryBlockOp, KeyBlockEndOp>(op))
      return;
    ops.push_back(op);
    (isa<MaskOp>(op) ? hasMask : hasBound) = true;
  });
  if (!hasMask || !hasBound) {
    module.emitError("tiledattn-derive-program: mask=causal needs a program "
                     "that says where its mask goes, a tiledattn.mask on "
                     "its scores and a tiledattn.first_query_block or "
                     "tiledattn.key_block_end for its loops, but it has no ")
        << (hasMask ? "loop bound" : "tiledattn.mask");
    return failure();
  }
  for (Operation *op : ops) {
    bool changed =
        TypeSwitch<Operation *, bool>(op)
            .Case<MaskOp, FirstQueryBlockOp, KeyBlockEndOp>([](auto causal) {
              bool was = causal.getCausal();
              causal.setCausal(true);
              return !was;
            });
    if (!changed) {
      op->emitError("tiledattn-derive-program: mask=causal derives from a "
                    "program without a mask, but this op is already causal");
      return failure();
    }
  }
  // The bundle's manifest says so (mask causal_top_left).
  module.walk([](func::FuncOp func) {
    func->setAttr(kCausalAttrName, UnitAttr::get(func.getContext()));
  });
  return success();
}

class DeriveProgramPass
    : public tiledattn::impl::DeriveProgramPassBase<DeriveProgramPass> {
public:
  using DeriveProgramPassBase::DeriveProgramPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    if (!elementType.empty() && elementType != "f16") {
      module.emitError("tiledattn-derive-program: expected element-type f16 "
                       "(a bf16 program's float16 form) or none, but got '")
          << elementType << "'";
      return signalPassFailure();
    }
    AttrTypeReplacer replacer;
    // (name fragment, replacement) for each function's symbol.
    SmallVector<std::pair<std::string, std::string>> renames;
    if (elementType == "f16") {
      bool any = false;
      auto note = [&](Type t) { t.walk([&](BFloat16Type) { any = true; }); };
      module.walk([&](Operation *op) {
        llvm::for_each(op->getResultTypes(), note);
        for (Region &region : op->getRegions())
          for (Block &block : region)
            llvm::for_each(block.getArgumentTypes(), note);
      });
      if (!any) {
        module.emitError("tiledattn-derive-program: element-type=f16 derives "
                         "a bf16 program's float16 form, but the program has "
                         "no bf16");
        return signalPassFailure();
      }
      replacer.addReplacement(
          [ctx](BFloat16Type) -> Type { return Float16Type::get(ctx); });
      renames.push_back({"bf16", "f16"});
    }
    if (!mask.empty() && mask != "causal") {
      module.emitError("tiledattn-derive-program: expected mask causal (a "
                       "program's causal form) or none, but got '")
          << mask << "'";
      return signalPassFailure();
    }
    if (mask == "causal" && failed(deriveCausal(module)))
      return signalPassFailure();
    if (headDim != 0) {
      FailureOr<int64_t> own = programHeadDim(module);
      if (failed(own))
        return signalPassFailure();
      if (headDim < 0 || headDim % 16 || headDim > *own) {
        module.emitError("tiledattn-derive-program: expected head-dim to be a "
                         "positive multiple of 16 up to the program's ")
            << *own << ", but got " << static_cast<int64_t>(headDim);
        return signalPassFailure();
      }
      int64_t from = *own, to = static_cast<int64_t>(headDim);
      replacer.addReplacement([from, to](MemRefType type) -> Type {
        std::optional<int64_t> d = operandHeadDim(type);
        if (!d || *d != from)
          return type;
        SmallVector<int64_t> shape(type.getShape());
        shape[3] = to;
        return MemRefType::get(shape, type.getElementType(), type.getLayout(),
                               type.getMemorySpace());
      });
      renames.push_back(
          {"_d" + std::to_string(from), "_d" + std::to_string(to)});
    }
    // Every type in the module, nested ones included (a ring's slots, the
    // memrefs of a function type), and the functions' names.
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
    module.walk([&](func::FuncOp func) {
      std::string name = func.getSymName().str();
      for (auto &[from, to] : renames)
        name = replaceFirst(name, from, to);
      if (mask == "causal")
        name += "_causal";
      func.setSymName(name);
    });
  }
};
} // namespace
