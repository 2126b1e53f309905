//===- ElaboratorImpl.h - The elaborator's internals ------------*- C++ -*-===//
//
// Shared by Elaborator.cpp (statements, expressions, modules, functions),
// Layers.cpp (builtin layers) and TensorFunctions.cpp (builtin functions).
// Not part of the frontend's interface.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_FRONTEND_ELABORATORIMPL_H
#define CAIRN_FRONTEND_ELABORATORIMPL_H

#include "frontend/Diagnostics.h"
#include "frontend/Elaborator.h"
#include "frontend/Value.h"
#include "ir/CairnOps.h"
#include "ir/TrainingSettings.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace cairn {

/// A compile-time result: the value, or nullopt after an error was reported.
using Result = std::optional<EValue>;

/// One evaluated call argument.
struct CallArg {
  ast::Loc loc;
  std::string name; // empty: positional
  EValue value;
};

/// A formal parameter of a builtin: required, or with a default.
struct ParamDecl {
  const char *name;
  bool required;
  EValue defaultValue;
};
inline ParamDecl req(const char *name) { return {name, true, EValue()}; }
inline ParamDecl opt(const char *name, EValue def) { return {name, false, std::move(def)}; }

/// A chain of name bindings: function locals, then a module's scope.
struct Scope {
  std::map<std::string, EValue> *vars;
  const Scope *parent;
  Layer *owner; // the module whose body or function this is; null at top
};

/// What the regions around an operation say about it.
struct Annotations {
  std::optional<int64_t> checkpoint;
  std::optional<int64_t> device;
  std::optional<Precision> precision;
};

/// State while emitting one IR function (`forward` or `loss`).
struct FunctionState {
  mlir::OpBuilder *builder;
  bool training;
  std::vector<mlir::Value> slotValues; // by state_dict index
  Annotations annotations;
  int64_t nextDropoutStream = 0;
  unsigned callDepth = 0;
  uint64_t opCount = 0; // ops created so far, counted by the builder listener
  /// In loss: the results of `self(...)` called with the loss's own inputs
  /// as forward's parameters, i.e. what the eval-mode forward step outputs.
  llvm::SmallVector<mlir::Value, 1> modelOutputs;
};

/// Calls `fn` with the name of every builtin function (TensorFunctions.cpp).
void forEachBuiltinFunction(llvm::function_ref<void(llvm::StringRef)> fn);

/// The model input `value` is (an argument of the function being emitted
/// with role input), by name; "" for any other value.
std::string inputNameOf(mlir::Value value);

/// A number as people write it in messages ("0.5", "1e+19"), where the
/// diagnostic stream would print "5.000000e-01".
std::string formatNumber(double value);

class Elaborator {
public:
  Elaborator(DiagnosticReporter &diag, const ElaborateOptions &options);

  mlir::OwningOpRef<mlir::ModuleOp> run(const ast::ModelFile &program);

  //===--- Expressions and statements (Elaborator.cpp) --------------------===//

  Result evaluate(const ast::Expr &expr, const Scope &scope);
  /// Runs statements; `returned` receives the values of a `return`.
  bool execute(const ast::Block &block, Scope &scope,
               std::optional<std::vector<EValue>> &returned);
  Result call(const EValue &callee, std::vector<CallArg> &args, ast::Loc loc);
  Result callFunction(Layer &owner, const ast::FunctionStmt &fn,
                      std::vector<CallArg> &args, ast::Loc loc);

  //===--- Layers (Layers.cpp) --------------------------------------------===//

  bool isLayerConstructor(llvm::StringRef name) const;
  Result constructLayer(const std::string &type, std::vector<CallArg> &args,
                        ast::Loc loc);
  Result callLayer(Layer &layer, std::vector<CallArg> &args, ast::Loc loc);

  //===--- Builtin functions (TensorFunctions.cpp) ------------------------===//

  bool isBuiltinFunction(llvm::StringRef name) const;
  bool isTensorMethod(llvm::StringRef name) const;
  /// `caller` names a layer that runs as this function (`Softmax(dim=1)`),
  /// for messages; empty for a direct call.
  Result callBuiltin(const std::string &name, std::vector<CallArg> &args,
                     ast::Loc loc, const std::string &layerName,
                     llvm::StringRef caller = {});
  /// `layerName` names the ops it emits (the running module's path).
  Result applyBinary(ast::BinaryOp op, const EValue &lhs, const EValue &rhs,
                     ast::Loc loc, llvm::StringRef layerName);
  Result indexTensor(const EValue &base, const std::vector<ast::IndexItem> &items,
                     ast::Loc loc, const Scope &scope);

  //===--- Helpers shared by the three files ------------------------------===//

  /// `scheduler` and `clip_grad_norm` statements (Statements.cpp).
  bool bindSettingArgs(const ast::OptimizerStmt &s, Scope &scope,
                       llvm::ArrayRef<ParamDecl> params, llvm::StringRef callee,
                       std::map<std::string, EValue> &bound);
  bool executeScheduler(const ast::OptimizerStmt &s, Scope &scope);
  /// Sets the module's cairn.eval_loss when `loss` is cross_entropy or
  /// mse_loss of one of `outputs` (self(...) of the loss's inputs) against
  /// an input (runtime/LossForm.h).
  void recordEvalLoss(mlir::Value loss, llvm::ArrayRef<mlir::Value> outputs);
  bool executeClipGradNorm(const ast::OptimizerStmt &s, Scope &scope);
  bool executeModelPrecision(const ast::AnnotatedStmt &s);

  /// Binds `args` to `params` (Python rules), or reports against `what`.
  bool bindArgs(std::vector<CallArg> &args, llvm::ArrayRef<ParamDecl> params,
                std::map<std::string, EValue> &out, const std::string &what,
                ast::Loc loc);
  std::optional<int64_t> toInt(const EValue &v, ast::Loc loc, const std::string &what);
  std::optional<double> toFloat(const EValue &v, ast::Loc loc, const std::string &what);
  /// The values of `q, k, v = value`: a tuple of as many values as names,
  /// or an error at the statement.
  bool unpack(const ast::AssignStmt &assign, const EValue &value,
              std::vector<EValue> &values);
  std::optional<bool> toBool(const EValue &v, ast::Loc loc, const std::string &what);
  std::optional<std::string> toString(const EValue &v, ast::Loc loc, const std::string &what);
  /// An int, or a tuple of `n` ints (kernel_size=3 or (3, 3)).
  std::optional<llvm::SmallVector<int64_t, 4>> toInts(const EValue &v, size_t n,
                                                      ast::Loc loc,
                                                      const std::string &what);
  /// A tuple or list of ints of any length, or a single int.
  std::optional<llvm::SmallVector<int64_t, 4>> toIntList(const EValue &v, ast::Loc loc,
                                                         const std::string &what);
  std::optional<mlir::Value> toTensor(const EValue &v, ast::Loc loc,
                                      const std::string &what);

  /// The location of an op: the model-file position, named by its layer.
  mlir::Location opLoc(ast::Loc loc, llvm::StringRef layerName) const;
  /// A `Parameter` layer reads as its tensor inside a function.
  Result readParameter(const EValue &value, ast::Loc loc);
  /// Calls `fn` with every builtin layer and function name (for suggestions).
  void forEachBuiltinName(llvm::function_ref<void(llvm::StringRef)> fn) const;
  /// Reports an error at `loc`.
  mlir::InFlightDiagnostic error(ast::Loc loc) { return diag.error(loc); }
  /// Counts one unit of elaboration work; false (after reporting) when the
  /// model is too large to elaborate.
  bool step(ast::Loc loc);

  /// Emission state; null outside `forward` and `loss`.
  FunctionState *fn = nullptr;
  mlir::MLIRContext *context;
  DiagnosticReporter &diag;
  const ElaborateOptions &options;

  /// Float element type of tensors created from numbers and parameters.
  mlir::Type f32Type() const;
  llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) const;
  mlir::Type elementTypeOf(mlir::Value v) const;
  /// A rank-0 constant of `elementType` holding `value`.
  mlir::Value scalarConstant(double value, mlir::Type elementType, mlir::Location loc);

  /// The layer path of the module whose code is running ("" at the model).
  std::string currentLayerPath;

private:
  Result instantiateModule(const ast::ModuleDef &def, std::vector<CallArg> &args,
                           ast::Loc loc);
  bool executeMember(const ast::Stmt &stmt, Scope &scope, Layer &owner,
                     bool topLevel);
  bool registerLayer(Layer &owner, const std::string &name, const EValue &index,
                     LayerPtr layer, ast::Loc loc);
  Result lookup(const std::string &name, ast::Loc loc, const Scope &scope);
  Result evaluateCall(const ast::CallExpr &expr, const Scope &scope);
  Result evaluateMember(const ast::MemberExpr &expr, const Scope &scope);
  Result evaluateIndex(const ast::IndexExpr &expr, const Scope &scope);
  Result evaluateUnary(const ast::UnaryExpr &expr, const Scope &scope);
  /// The value of `if`'s condition, which must be known at compile time.
  std::optional<bool> evaluateCondition(const ast::IfStmt &s, const Scope &scope);
  /// The [start, stop) of `for i in range(...)`.
  std::optional<std::pair<int64_t, int64_t>> evaluateRange(const ast::ForStmt &s,
                                                           const Scope &scope);
  Result compileTimeBinary(ast::BinaryOp op, const EValue &lhs, const EValue &rhs,
                           ast::Loc loc);
  bool executeStmt(const ast::Stmt &stmt, Scope &scope,
                   std::optional<std::vector<EValue>> &returned);

  mlir::func::FuncOp emitFunction(const ast::FunctionStmt &fn, bool training,
                                  llvm::StringRef name);
  void assignSlotIndices(Layer &layer);

  const ast::ModuleDef *model = nullptr;
  std::map<std::string, const ast::ModuleDef *> moduleDefs;
  std::vector<std::string> instantiationStack;
  LayerPtr root;
  std::map<std::string, EValue> globals;
  std::vector<const TensorSlot *> slots; // state_dict order
  std::vector<std::string> slotNames;
  struct Input {
    std::string name;
    ast::Loc loc;
    mlir::RankedTensorType type;
  };
  std::vector<Input> inputs;
  std::optional<int64_t> batch;
  mlir::Attribute optimizer;
  ast::Loc optimizerLoc;
  std::vector<runtime::LrScheduler> schedule; // `scheduler` statements, in order
  ast::Loc scheduleLoc;                       // of the first
  std::optional<ClipGradNorm> clipGradNorm;
  ast::Loc clipGradNormLoc;
  std::optional<Precision> modelPrecision; // `precision bf16` in the model
  mlir::ModuleOp module;
  int64_t nextCheckpointId = 0;
  ast::Loc lastReturnLoc; // of the `return` that ended the latest function
  uint64_t steps = 0;
};

} // namespace cairn

#endif // CAIRN_FRONTEND_ELABORATORIMPL_H
