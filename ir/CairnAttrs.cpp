//===- CairnAttrs.cpp - Attributes of cairn -------------------------------===//

#include "ir/CairnAttrs.h"
#include "ir/CairnDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;
using namespace cairn;

#include "ir/CairnEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// Storage of the attributes with double parameters
//===----------------------------------------------------------------------===//

// LLVM has no hash_value(double): these storages hash and compare doubles by
// their bits (so a NaN equals itself and -0.0 differs from 0.0, consistently).

namespace cairn::detail {
namespace {
uint64_t bits(double value) { return llvm::bit_cast<uint64_t>(value); }
} // namespace

struct InitAttrStorage : public AttributeStorage {
  using KeyTy = std::tuple<InitKind, double, int64_t>;
  InitAttrStorage(InitKind kind, double scale, int64_t zeroRow)
      : kind(kind), scale(scale), zeroRow(zeroRow) {}
  KeyTy getAsKey() const { return KeyTy(kind, scale, zeroRow); }
  bool operator==(const KeyTy &key) const {
    return kind == std::get<0>(key) && bits(scale) == bits(std::get<1>(key)) &&
           zeroRow == std::get<2>(key);
  }
  static llvm::hash_code hashKey(const KeyTy &key) {
    return llvm::hash_combine(std::get<0>(key), bits(std::get<1>(key)),
                              std::get<2>(key));
  }
  static InitAttrStorage *construct(AttributeStorageAllocator &allocator,
                                    KeyTy &&key) {
    return new (allocator.allocate<InitAttrStorage>())
        InitAttrStorage(std::get<0>(key), std::get<1>(key), std::get<2>(key));
  }
  InitKind kind;
  double scale;
  int64_t zeroRow;
};

struct SGDAttrStorage : public AttributeStorage {
  using KeyTy = std::tuple<double, double, double, double, bool>;
  SGDAttrStorage(double lr, double momentum, double dampening,
                 double weight_decay, bool nesterov)
      : lr(lr), momentum(momentum), dampening(dampening),
        weight_decay(weight_decay), nesterov(nesterov) {}
  KeyTy getAsKey() const {
    return KeyTy(lr, momentum, dampening, weight_decay, nesterov);
  }
  bool operator==(const KeyTy &key) const {
    return bits(lr) == bits(std::get<0>(key)) &&
           bits(momentum) == bits(std::get<1>(key)) &&
           bits(dampening) == bits(std::get<2>(key)) &&
           bits(weight_decay) == bits(std::get<3>(key)) &&
           nesterov == std::get<4>(key);
  }
  static llvm::hash_code hashKey(const KeyTy &key) {
    return llvm::hash_combine(bits(std::get<0>(key)), bits(std::get<1>(key)),
                              bits(std::get<2>(key)), bits(std::get<3>(key)),
                              std::get<4>(key));
  }
  static SGDAttrStorage *construct(AttributeStorageAllocator &allocator,
                                   KeyTy &&key) {
    return new (allocator.allocate<SGDAttrStorage>())
        SGDAttrStorage(std::get<0>(key), std::get<1>(key), std::get<2>(key),
                       std::get<3>(key), std::get<4>(key));
  }
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
};

struct AdamAttrStorage : public AttributeStorage {
  using KeyTy = std::tuple<double, double, double, double, double, bool>;
  AdamAttrStorage(double lr, double beta1, double beta2, double eps,
                  double weight_decay, bool decoupled_weight_decay)
      : lr(lr), beta1(beta1), beta2(beta2), eps(eps),
        weight_decay(weight_decay),
        decoupled_weight_decay(decoupled_weight_decay) {}
  KeyTy getAsKey() const {
    return KeyTy(lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay);
  }
  bool operator==(const KeyTy &key) const {
    return bits(lr) == bits(std::get<0>(key)) &&
           bits(beta1) == bits(std::get<1>(key)) &&
           bits(beta2) == bits(std::get<2>(key)) &&
           bits(eps) == bits(std::get<3>(key)) &&
           bits(weight_decay) == bits(std::get<4>(key)) &&
           decoupled_weight_decay == std::get<5>(key);
  }
  static llvm::hash_code hashKey(const KeyTy &key) {
    return llvm::hash_combine(bits(std::get<0>(key)), bits(std::get<1>(key)),
                              bits(std::get<2>(key)), bits(std::get<3>(key)),
                              bits(std::get<4>(key)), std::get<5>(key));
  }
  static AdamAttrStorage *construct(AttributeStorageAllocator &allocator,
                                    KeyTy &&key) {
    return new (allocator.allocate<AdamAttrStorage>())
        AdamAttrStorage(std::get<0>(key), std::get<1>(key), std::get<2>(key),
                        std::get<3>(key), std::get<4>(key), std::get<5>(key));
  }
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled_weight_decay;
};
} // namespace cairn::detail

#define GET_ATTRDEF_CLASSES
#include "ir/CairnAttrs.cpp.inc"

// Accessors of the hand-written storages.
InitKind InitAttr::getKind() const { return getImpl()->kind; }
double InitAttr::getScale() const { return getImpl()->scale; }
int64_t InitAttr::getZeroRow() const { return getImpl()->zeroRow; }
double SGDAttr::getLr() const { return getImpl()->lr; }
double SGDAttr::getMomentum() const { return getImpl()->momentum; }
double SGDAttr::getDampening() const { return getImpl()->dampening; }
double SGDAttr::getWeightDecay() const { return getImpl()->weight_decay; }
bool SGDAttr::getNesterov() const { return getImpl()->nesterov; }
double AdamAttr::getLr() const { return getImpl()->lr; }
double AdamAttr::getBeta1() const { return getImpl()->beta1; }
double AdamAttr::getBeta2() const { return getImpl()->beta2; }
double AdamAttr::getEps() const { return getImpl()->eps; }
double AdamAttr::getWeightDecay() const { return getImpl()->weight_decay; }
bool AdamAttr::getDecoupledWeightDecay() const {
  return getImpl()->decoupled_weight_decay;
}

void CairnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/CairnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

FailureOr<double> cairn::detail::parseDoubleParameter(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return value;
}

void cairn::detail::printDoubleParameter(AsmPrinter &printer, double value) {
  if (!std::isfinite(value)) {
    printer << value; // MLIR's hexadecimal form
    return;
  }
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  // MLIR float literals need a '.': "1e-08" -> "1.0e-08", "2" -> "2.0".
  std::string text = buffer;
  if (text.find('.') == std::string::npos) {
    size_t exponent = text.find('e');
    text.insert(exponent == std::string::npos ? text.size() : exponent, ".0");
  }
  printer << text;
}

FailureOr<bool> cairn::detail::parseBoolParameter(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(),
                          "expected 'true' or 'false'");
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

/// A double as printf's %g writes it: "0.1", "-1", "1e-08", "nan".
static std::string str(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

/// Each check is written so that NaN fails it.
LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind, double scale, int64_t zeroRow) {
  if (!(scale >= 0) || std::isinf(scale))
    return emitError() << "expected a finite scale >= 0 but got "
                       << str(scale);
  if (zeroRow < -1)
    return emitError() << "expected zero_row >= 0 (or -1: none) but got "
                       << zeroRow;
  return success();
}

LogicalResult SGDAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              double lr, double momentum, double dampening,
                              double weightDecay, bool nesterov) {
  if (!(lr > 0))
    return emitError() << "expected lr > 0 but got " << str(lr);
  if (!(momentum >= 0))
    return emitError() << "expected momentum >= 0 but got " << str(momentum);
  if (!(dampening >= 0))
    return emitError() << "expected dampening >= 0 but got "
                       << str(dampening);
  if (!(weightDecay >= 0))
    return emitError() << "expected weight_decay >= 0 but got "
                       << str(weightDecay);
  if (nesterov && !(momentum > 0 && dampening == 0))
    return emitError() << "expected momentum > 0 and dampening = 0 with "
                          "nesterov but got momentum "
                       << str(momentum) << " and dampening " << str(dampening);
  return success();
}

LogicalResult AdamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               double lr, double beta1, double beta2,
                               double eps, double weightDecay, bool) {
  if (!(lr > 0))
    return emitError() << "expected lr > 0 but got " << str(lr);
  if (!(beta1 >= 0 && beta1 < 1))
    return emitError() << "expected beta1 in [0, 1) but got " << str(beta1);
  if (!(beta2 >= 0 && beta2 < 1))
    return emitError() << "expected beta2 in [0, 1) but got " << str(beta2);
  if (!(eps > 0))
    return emitError() << "expected eps > 0 but got " << str(eps);
  if (!(weightDecay >= 0))
    return emitError() << "expected weight_decay >= 0 but got "
                       << str(weightDecay);
  return success();
}
