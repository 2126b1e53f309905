//===- ModelSummary.cpp - What `cairn check` reports about a model --------===//

#include "passes/ModelSummary.h"
#include "ir/CairnAttrs.h"
#include "ir/CairnDialect.h"
#include "ir/CairnInterfaces.h"
#include "ir/TrainingSettings.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace cairn;

namespace {
int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n = saturatingMul(n, d);
  return n;
}

std::string typeName(mlir::Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// "1,234,567": large counts are read by people.
std::string withCommas(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0 && *it != '-')
      out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return out;
}

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The layer named by an op's location (`loc("fc1"(file:line:col))`) and the
/// file position under it.
std::pair<std::string, std::string> describeLoc(mlir::Location loc) {
  std::string layer;
  if (auto named = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    layer = named.getName().str();
    loc = named.getChildLoc();
  }
  std::string where;
  if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc))
    where = llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                          file.getLine(), file.getColumn());
  return {layer, where};
}
} // namespace

std::optional<ModelSummary> cairn::summarizeModel(mlir::ModuleOp module) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (!forward || forward.isExternal()) {
    module.emitError("expected a module with a @forward function");
    return std::nullopt;
  }
  ModelSummary s;
  if (auto name = module->getAttrOfType<mlir::StringAttr>("cairn.model"))
    s.model = name.str();
  if (auto batch = module->getAttrOfType<mlir::IntegerAttr>("cairn.batch"))
    s.batch = batch.getInt();
  if (mlir::Attribute opt = module->getAttr("cairn.optimizer")) {
    llvm::raw_string_ostream os(s.optimizer);
    os << opt;
  }
  auto emitError = [&] { return module.emitError(); };
  if (mlir::Attribute attr =
          module->getAttr(CairnDialect::kLrScheduleAttrName)) {
    mlir::FailureOr<std::vector<runtime::LrScheduler>> schedule =
        readLrSchedule(attr, emitError);
    if (mlir::failed(schedule))
      return std::nullopt;
    for (const runtime::LrScheduler &scheduler : *schedule)
      s.lrSchedule.push_back(describeLrScheduler(scheduler));
  }
  if (mlir::Attribute attr =
          module->getAttr(CairnDialect::kClipGradNormAttrName)) {
    mlir::FailureOr<ClipGradNorm> clip = readClipGradNorm(attr, emitError);
    if (mlir::failed(clip))
      return std::nullopt;
    s.clipGradNorm = describeClipGradNorm(*clip);
  }
  s.hasLoss = static_cast<bool>(module.lookupSymbol<mlir::func::FuncOp>("loss"));

  llvm::DenseMap<mlir::Value, int64_t> paramElements;
  for (mlir::BlockArgument arg : forward.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = llvm::cast<mlir::RankedTensorType>(arg.getType());
    ModelSummary::Tensor t;
    if (auto name = forward.getArgAttrOfType<mlir::StringAttr>(i, "cairn.name"))
      t.name = name.str();
    t.shape.assign(type.getShape().begin(), type.getShape().end());
    t.dtype = typeName(type.getElementType());
    auto role = forward.getArgAttrOfType<RoleAttr>(i, "cairn.role");
    t.role = role ? stringifyRole(role.getValue()).str() : "input";
    int64_t n = numElements(type.getShape());
    if (t.role == "input") {
      s.inputs.push_back(t);
      continue;
    }
    if (t.role == "param") {
      s.parameters = saturatingAdd(s.parameters, n);
      paramElements[arg] = n;
    } else {
      s.buffers = saturatingAdd(s.buffers, n);
    }
    s.stateDict.push_back(t);
  }
  // Inputs that only `loss` reads (labels) are inputs of the model too.
  if (auto loss = module.lookupSymbol<mlir::func::FuncOp>("loss")) {
    for (mlir::BlockArgument arg : loss.getArguments()) {
      auto role = loss.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), "cairn.role");
      auto name = loss.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), "cairn.name");
      if (!role || role.getValue() != Role::input || !name)
        continue;
      if (llvm::any_of(s.inputs, [&](const auto &t) { return t.name == name.str(); }))
        continue;
      auto type = llvm::cast<mlir::RankedTensorType>(arg.getType());
      s.inputs.push_back({name.str(),
                          {type.getShape().begin(), type.getShape().end()},
                          typeName(type.getElementType()), "input"});
    }
  }

  forward.walk([&](mlir::Operation *op) {
    if (op->hasTrait<mlir::OpTrait::ConstantLike>() ||
        llvm::isa<mlir::func::ReturnOp>(op) || op->getNumResults() != 1)
      return;
    ModelSummary::Row row;
    std::tie(row.layer, row.loc) = describeLoc(op->getLoc());
    row.op = op->getName().stripDialect().str();
    auto type = llvm::cast<mlir::RankedTensorType>(op->getResult(0).getType());
    row.shape.assign(type.getShape().begin(), type.getShape().end());
    for (mlir::Value operand : op->getOperands()) {
      auto it = paramElements.find(operand);
      if (it != paramElements.end())
        row.params = saturatingAdd(row.params, it->second);
    }
    if (auto cost = llvm::dyn_cast<CostOpInterface>(op))
      row.flops = cost.getFlops();
    s.forwardFlops = saturatingAdd(s.forwardFlops, row.flops);
    s.rows.push_back(std::move(row));
  });
  return s;
}

void cairn::printSummaryText(const ModelSummary &s, llvm::raw_ostream &os) {
  os << "model " << s.model;
  if (s.batch)
    os << ", batch " << s.batch;
  os << "\n";
  os << "inputs:";
  for (const auto &in : s.inputs)
    os << " " << in.name << " " << in.dtype << shapeText(in.shape);
  os << "\n\n";

  size_t layerWidth = 5, opWidth = 2, shapeWidth = 12;
  for (const auto &r : s.rows) {
    layerWidth = std::max(layerWidth, r.layer.empty() ? 1 : r.layer.size());
    opWidth = std::max(opWidth, r.op.size());
    shapeWidth = std::max(shapeWidth, shapeText(r.shape).size());
  }
  auto line = [&](llvm::StringRef layer, llvm::StringRef op, llvm::StringRef shape,
                  llvm::StringRef params, llvm::StringRef flops, llvm::StringRef loc) {
    os << llvm::left_justify(layer, layerWidth) << "  "
       << llvm::left_justify(op, opWidth) << "  "
       << llvm::left_justify(shape, shapeWidth) << "  "
       << llvm::right_justify(params, 11) << "  " << llvm::right_justify(flops, 15)
       << "  " << loc << "\n";
  };
  line("layer", "op", "output shape", "params", "FLOPs", "line");
  for (const auto &r : s.rows)
    line(r.layer.empty() ? "-" : r.layer, r.op, shapeText(r.shape),
         r.params ? withCommas(r.params) : "", withCommas(r.flops), r.loc);

  int64_t paramTensors = 0, bufferTensors = 0;
  for (const auto &t : s.stateDict)
    (t.role == "param" ? paramTensors : bufferTensors)++;
  os << "\nparameters: " << withCommas(s.parameters) << " in " << paramTensors
     << " tensors";
  if (bufferTensors)
    os << "; buffers: " << withCommas(s.buffers) << " elements in "
       << bufferTensors << " tensors";
  os << "\nforward FLOPs: " << withCommas(s.forwardFlops);
  if (s.batch)
    os << " (batch " << s.batch << ")";
  os << "\n";
  os << "training: "
     << (s.hasLoss ? "loss and " + s.optimizer : std::string("none (inference only)"))
     << "\n";
  if (!s.lrSchedule.empty())
    os << "lr schedule: " << llvm::join(s.lrSchedule, ", then ") << "\n";
  if (!s.clipGradNorm.empty())
    os << "gradient clipping: " << s.clipGradNorm << "\n";
}

void cairn::printSummaryJson(const ModelSummary &s, llvm::raw_ostream &os) {
  auto tensorJson = [](const ModelSummary::Tensor &t) {
    return llvm::json::Object{{"name", t.name},
                              {"shape", llvm::json::Array(t.shape)},
                              {"dtype", t.dtype},
                              {"kind", t.role}};
  };
  llvm::json::Array inputs, state, rows;
  for (const auto &t : s.inputs)
    inputs.push_back(tensorJson(t));
  for (const auto &t : s.stateDict)
    state.push_back(tensorJson(t));
  for (const auto &r : s.rows)
    rows.push_back(llvm::json::Object{{"layer", r.layer},
                                      {"op", r.op},
                                      {"shape", llvm::json::Array(r.shape)},
                                      {"params", r.params},
                                      {"flops", r.flops},
                                      {"loc", r.loc}});
  llvm::json::Object root{
      {"model", s.model},
      {"batch", s.batch},
      {"inputs", std::move(inputs)},
      {"parameters", s.parameters},
      {"buffers", s.buffers},
      {"forward_flops", s.forwardFlops},
      {"optimizer", s.optimizer},
      {"lr_schedule", llvm::json::Array(s.lrSchedule)},
      {"clip_grad_norm", s.clipGradNorm.empty()
                             ? llvm::json::Value(nullptr)
                             : llvm::json::Value(s.clipGradNorm)},
      {"state_dict", std::move(state)},
      {"layers", std::move(rows)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}
