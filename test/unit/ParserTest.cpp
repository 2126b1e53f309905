//===- ParserTest.cpp - Tests of the .cairn lexer and parser --------------===//
//
// Good programs are checked node by node; bad ones by the location and text
// of their first error. The robustness tests feed garbage, deep nesting and
// huge lines and only check that parsing returns with bounded errors.
//
//===----------------------------------------------------------------------===//

#include "frontend/Parser.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Casting.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace cairn;
using namespace cairn::ast;
using llvm::cast;
using llvm::isa;

namespace {

struct Error {
  unsigned line = 0;
  unsigned col = 0;
  std::string message;
};

struct Parsed {
  std::unique_ptr<ModelFile> program;
  std::vector<Error> errors;
};

/// Parses `source` from a buffer of exactly its size, so that reading past
/// the end (the source is not NUL-terminated) is caught under ASan.
Parsed parse(llvm::StringRef source) {
  static mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  Parsed parsed;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    Error error;
    error.message = d.str();
    if (auto loc = mlir::dyn_cast<mlir::FileLineColLoc>(d.getLocation())) {
      error.line = loc.getLine();
      error.col = loc.getColumn();
    }
    parsed.errors.push_back(error);
    return mlir::success();
  });
  std::unique_ptr<char[]> buffer(new char[source.size()]);
  if (!source.empty())
    std::memcpy(buffer.get(), source.data(), source.size());
  DiagnosticReporter diag(&context, "test.cairn");
  parsed.program = parseModelFile(llvm::StringRef(buffer.get(), source.size()), diag);
  EXPECT_NE(parsed.program, nullptr);
  EXPECT_EQ(diag.errorCount(), parsed.errors.size());
  return parsed;
}

/// Parses a program that must have no errors.
std::unique_ptr<ModelFile> parseGood(llvm::StringRef source) {
  Parsed parsed = parse(source);
  for (const Error &e : parsed.errors)
    ADD_FAILURE() << e.line << ":" << e.col << ": " << e.message;
  return std::move(parsed.program);
}

/// The body of the only module of a good program.
Block parseBody(llvm::StringRef source) {
  std::unique_ptr<ModelFile> program = parseGood(source);
  if (program->modules.size() != 1) {
    ADD_FAILURE() << "expected one module";
    return {};
  }
  return std::move(program->modules[0]->body);
}

/// The value of `x = <expr>` inside `forward` of a model.
ExprPtr parseExpr(const std::string &expr) {
  Block body = parseBody("model M {\n forward(x) {\n  y = " + expr + "\n }\n}\n");
  if (body.size() != 1)
    return nullptr;
  auto &function = cast<FunctionStmt>(*body[0]);
  if (function.body.size() != 1)
    return nullptr;
  return std::move(cast<AssignStmt>(*function.body[0]).value);
}

std::string nameOf(const Expr &e) { return cast<NameExpr>(e).name; }
int64_t intOf(const Expr &e) {
  if (auto *unary = llvm::dyn_cast<UnaryExpr>(&e))
    return -intOf(*unary->operand);
  return cast<IntExpr>(e).value;
}

//===----------------------------------------------------------------------===//
// Good programs
//===----------------------------------------------------------------------===//

TEST(ParserTest, Tour) {
  std::unique_ptr<ModelFile> program = parseGood(R"(
# examples/mlp.cairn: a two-layer perceptron for Fashion-MNIST.
model MLP {
  batch B = 64                          # default batch
  input image: f32[B, 1, 28, 28]
  input label: i64[B]

  fc1 = Linear(784, 256)                # state_dict keys fc1.weight, fc1.bias
  fc2 = Linear(256, 10)

  forward(image) {                      # inference: `forward` in the IR
    h = relu(fc1(flatten(image, 1)))
    return fc2(h)
  }
  loss(image, label) {                  # training: what autodiff differentiates
    return cross_entropy(self(image), label)
  }
  optimizer SGD(lr=0.1, momentum=0.9, weight_decay=5e-4)
}
)");
  ASSERT_EQ(program->modules.size(), 1u);
  ModuleDef &model = *program->modules[0];
  EXPECT_TRUE(model.isModel);
  EXPECT_EQ(model.name, "MLP");
  EXPECT_EQ(model.loc.line, 3u);
  EXPECT_EQ(model.nameLoc.col, 7u);
  ASSERT_EQ(model.body.size(), 8u);

  auto &batch = cast<BatchStmt>(*model.body[0]);
  EXPECT_EQ(batch.name, "B");
  EXPECT_EQ(intOf(*batch.value), 64);

  auto &image = cast<InputStmt>(*model.body[1]);
  EXPECT_EQ(image.name, "image");
  EXPECT_EQ(image.dtype, "f32");
  EXPECT_EQ(image.dtypeLoc.line, 5u);
  EXPECT_EQ(image.dtypeLoc.col, 16u);
  ASSERT_EQ(image.dims.size(), 4u);
  EXPECT_EQ(nameOf(*image.dims[0]), "B");
  EXPECT_EQ(intOf(*image.dims[3]), 28);
  EXPECT_EQ(cast<InputStmt>(*model.body[2]).dtype, "i64");

  auto &fc1 = cast<AssignStmt>(*model.body[3]);
  EXPECT_EQ(fc1.target, "fc1");
  EXPECT_EQ(fc1.index, nullptr);
  auto &linear = cast<CallExpr>(*fc1.value);
  EXPECT_EQ(nameOf(*linear.callee), "Linear");
  ASSERT_EQ(linear.args.size(), 2u);
  EXPECT_EQ(intOf(*linear.args[1].value), 256);

  auto &forward = cast<FunctionStmt>(*model.body[5]);
  EXPECT_EQ(forward.name, "forward");
  ASSERT_EQ(forward.params.size(), 1u);
  EXPECT_EQ(forward.params[0].name, "image");
  ASSERT_EQ(forward.body.size(), 2u);
  auto &ret = cast<ReturnStmt>(*forward.body[1]);
  ASSERT_EQ(ret.values.size(), 1u);
  EXPECT_TRUE(isa<CallExpr>(*ret.values[0]));

  auto &loss = cast<FunctionStmt>(*model.body[6]);
  EXPECT_EQ(loss.name, "loss");
  EXPECT_EQ(loss.params.size(), 2u);

  auto &optimizer = cast<OptimizerStmt>(*model.body[7]);
  auto &sgd = cast<CallExpr>(*optimizer.call);
  EXPECT_EQ(nameOf(*sgd.callee), "SGD");
  ASSERT_EQ(sgd.args.size(), 3u);
  EXPECT_EQ(sgd.args[0].name, "lr");
  EXPECT_DOUBLE_EQ(cast<FloatExpr>(*sgd.args[0].value).value, 0.1);
  EXPECT_EQ(sgd.args[2].name, "weight_decay");
  EXPECT_DOUBLE_EQ(cast<FloatExpr>(*sgd.args[2].value).value, 5e-4);
}

TEST(ParserTest, BasicBlock) {
  std::unique_ptr<ModelFile> program = parseGood(R"(
module BasicBlock(in_planes: int, planes: int, stride: int = 1) {
  conv1 = Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=false)
  bn1 = BatchNorm2d(planes)
  conv2 = Conv2d(planes, planes, 3, padding=1, bias=false)
  bn2 = BatchNorm2d(planes)
  if stride != 1 or in_planes != planes {
    downsample = Sequential(Conv2d(in_planes, planes, 1, stride=stride, bias=false),
                            BatchNorm2d(planes))
  }
  forward(x) {
    out = relu(bn1(conv1(x)))
    out = bn2(conv2(out))
    if stride != 1 or in_planes != planes {
      x = downsample(x)
    }
    return relu(out + x)
  }
}
)");
  ASSERT_EQ(program->modules.size(), 1u);
  ModuleDef &module = *program->modules[0];
  EXPECT_FALSE(module.isModel);
  ASSERT_EQ(module.params.size(), 3u);
  EXPECT_EQ(module.params[0].name, "in_planes");
  EXPECT_EQ(module.params[0].type, "int");
  EXPECT_EQ(module.params[0].defaultValue, nullptr);
  EXPECT_EQ(intOf(*module.params[2].defaultValue), 1);
  EXPECT_EQ(module.params[2].loc.col, 48u);
  ASSERT_EQ(module.body.size(), 6u);

  auto &conv1 = cast<CallExpr>(*cast<AssignStmt>(*module.body[0]).value);
  ASSERT_EQ(conv1.args.size(), 6u);
  EXPECT_EQ(conv1.args[2].name, "");
  EXPECT_EQ(conv1.args[5].name, "bias");
  EXPECT_FALSE(cast<BoolExpr>(*conv1.args[5].value).value);

  auto &ifStmt = cast<IfStmt>(*module.body[4]);
  auto &cond = cast<BinaryExpr>(*ifStmt.cond);
  EXPECT_EQ(cond.op, BinaryOp::Or);
  EXPECT_EQ(cast<BinaryExpr>(*cond.lhs).op, BinaryOp::Ne);
  ASSERT_EQ(ifStmt.thenBody.size(), 1u);
  EXPECT_TRUE(ifStmt.elseBody.empty());
  // The call spans two lines.
  auto &sequential =
      cast<CallExpr>(*cast<AssignStmt>(*ifStmt.thenBody[0]).value);
  EXPECT_EQ(sequential.args.size(), 2u);

  auto &forward = cast<FunctionStmt>(*module.body[5]);
  ASSERT_EQ(forward.body.size(), 4u);
  EXPECT_TRUE(isa<IfStmt>(*forward.body[2]));
  auto &ret = cast<ReturnStmt>(*forward.body[3]);
  auto &sum = cast<BinaryExpr>(*cast<CallExpr>(*ret.values[0]).args[0].value);
  EXPECT_EQ(sum.op, BinaryOp::Add);
}

TEST(ParserTest, ForLoopOverLayers) {
  Block body = parseBody(R"(
module Encoder(depth: int, d_model: int, heads: int) {
  for i in range(depth) {
    layers[i] = EncoderLayer(d_model, heads, 4 * d_model)   # layers.0.*
  }
  forward(x) {
    for i in range(1, depth) { x = layers[i](x) }
    return x
  }
})");
  ASSERT_EQ(body.size(), 2u);
  auto &loop = cast<ForStmt>(*body[0]);
  EXPECT_EQ(loop.var, "i");
  EXPECT_EQ(loop.start, nullptr);
  EXPECT_EQ(nameOf(*loop.stop), "depth");
  ASSERT_EQ(loop.body.size(), 1u);
  auto &assign = cast<AssignStmt>(*loop.body[0]);
  EXPECT_EQ(assign.target, "layers");
  EXPECT_EQ(nameOf(*assign.index), "i");

  auto &forward = cast<FunctionStmt>(*body[1]);
  auto &inner = cast<ForStmt>(*forward.body[0]);
  EXPECT_EQ(intOf(*inner.start), 1);
  auto &call = cast<CallExpr>(*cast<AssignStmt>(*inner.body[0]).value);
  EXPECT_TRUE(isa<IndexExpr>(*call.callee));
}

TEST(ParserTest, Annotations) {
  Block body = parseBody(R"(model M {
  forward(h) {
    checkpoint { h = layer3(h) }
    on device 1 { h = layer4(h) }
    precision f32 { h = bn(h); h = relu(h) }
    return h
  }
})");
  auto &forward = cast<FunctionStmt>(*body[0]);
  ASSERT_EQ(forward.body.size(), 4u);
  auto &checkpoint = cast<AnnotatedStmt>(*forward.body[0]);
  EXPECT_EQ(checkpoint.annotation, Annotation::Checkpoint);
  EXPECT_EQ(checkpoint.body.size(), 1u);
  auto &device = cast<AnnotatedStmt>(*forward.body[1]);
  EXPECT_EQ(device.annotation, Annotation::Device);
  EXPECT_EQ(intOf(*device.device), 1);
  EXPECT_EQ(device.argLoc.line, 4u);
  EXPECT_EQ(device.argLoc.col, 15u);
  auto &precision = cast<AnnotatedStmt>(*forward.body[2]);
  EXPECT_EQ(precision.annotation, Annotation::Precision);
  EXPECT_EQ(precision.precision, "f32");
  EXPECT_EQ(precision.body.size(), 2u);
}

TEST(ParserTest, IfElseChain) {
  Block body = parseBody(R"(module A(k: int) {
  if k == 1 { a = 1 } else if k == 2 { a = 2 } else { a = 3 }
})");
  auto &first = cast<IfStmt>(*body[0]);
  ASSERT_EQ(first.elseBody.size(), 1u);
  auto &second = cast<IfStmt>(*first.elseBody[0]);
  EXPECT_EQ(second.getLoc().col, 28u);
  EXPECT_EQ(second.elseBody.size(), 1u);
  EXPECT_TRUE(isa<AssignStmt>(*second.elseBody[0]));
}

TEST(ParserTest, Slicing) {
  ExprPtr e = parseExpr("x[:, 0]");
  auto &index = cast<IndexExpr>(*e);
  ASSERT_EQ(index.items.size(), 2u);
  EXPECT_TRUE(index.items[0].isSlice);
  EXPECT_EQ(index.items[0].start, nullptr);
  EXPECT_EQ(index.items[0].stop, nullptr);
  EXPECT_EQ(index.items[0].step, nullptr);
  EXPECT_FALSE(index.items[1].isSlice);
  EXPECT_EQ(intOf(*index.items[1].index), 0);
  EXPECT_EQ(index.items[1].loc.col, 12u);

  e = parseExpr("x[1:-1:2]");
  auto &slice = cast<IndexExpr>(*e).items[0];
  EXPECT_TRUE(slice.isSlice);
  EXPECT_EQ(intOf(*slice.start), 1);
  EXPECT_EQ(intOf(*slice.stop), -1);
  EXPECT_EQ(intOf(*slice.step), 2);

  e = parseExpr("x[::2, 1:]");
  auto &items = cast<IndexExpr>(*e).items;
  EXPECT_EQ(items[0].start, nullptr);
  EXPECT_EQ(items[0].stop, nullptr);
  EXPECT_EQ(intOf(*items[0].step), 2);
  EXPECT_EQ(intOf(*items[1].start), 1);
  EXPECT_EQ(items[1].stop, nullptr);
}

TEST(ParserTest, TuplesAndLists) {
  ExprPtr e = parseExpr("(3,)");
  auto &one = cast<TupleExpr>(*e);
  EXPECT_FALSE(one.isList);
  EXPECT_EQ(one.elements.size(), 1u);

  e = parseExpr("()");
  EXPECT_EQ(cast<TupleExpr>(*e).elements.size(), 0u);

  e = parseExpr("(0.9, 0.999)");
  EXPECT_EQ(cast<TupleExpr>(*e).elements.size(), 2u);

  e = parseExpr("(3)");
  EXPECT_EQ(intOf(*e), 3);

  e = parseExpr("[1, 2, 3]");
  auto &list = cast<TupleExpr>(*e);
  EXPECT_TRUE(list.isList);
  EXPECT_EQ(list.elements.size(), 3u);

  e = parseExpr("[]");
  EXPECT_TRUE(cast<TupleExpr>(*e).isList);
}

TEST(ParserTest, MethodCall) {
  ExprPtr e = parseExpr("x.reshape(B, -1)");
  auto &call = cast<CallExpr>(*e);
  auto &member = cast<MemberExpr>(*call.callee);
  EXPECT_EQ(member.member, "reshape");
  EXPECT_EQ(nameOf(*member.base), "x");
  ASSERT_EQ(call.args.size(), 2u);
  EXPECT_EQ(intOf(*call.args[1].value), -1);

  e = parseExpr("x.shape[0]");
  EXPECT_TRUE(isa<MemberExpr>(*cast<IndexExpr>(*e).base));
}

TEST(ParserTest, Precedence) {
  // a + (b * (c ** (-d)))
  ExprPtr e = parseExpr("a + b * c ** -d");
  auto &add = cast<BinaryExpr>(*e);
  EXPECT_EQ(add.op, BinaryOp::Add);
  auto &mul = cast<BinaryExpr>(*add.rhs);
  EXPECT_EQ(mul.op, BinaryOp::Mul);
  auto &pow = cast<BinaryExpr>(*mul.rhs);
  EXPECT_EQ(pow.op, BinaryOp::Pow);
  EXPECT_EQ(cast<UnaryExpr>(*pow.rhs).op, UnaryOp::Neg);

  // -(2 ** 2)
  e = parseExpr("-2 ** 2");
  EXPECT_EQ(cast<BinaryExpr>(*cast<UnaryExpr>(*e).operand).op, BinaryOp::Pow);

  // (a - b) - c, left associative
  e = parseExpr("a - b - c");
  EXPECT_EQ(nameOf(*cast<BinaryExpr>(*e).rhs), "c");

  // not (a == b)
  e = parseExpr("not a == b");
  EXPECT_EQ(cast<BinaryExpr>(*cast<UnaryExpr>(*e).operand).op, BinaryOp::Eq);

  // (a and b) or (not c)
  e = parseExpr("a && b || !c");
  auto &orExpr = cast<BinaryExpr>(*e);
  EXPECT_EQ(orExpr.op, BinaryOp::Or);
  EXPECT_EQ(cast<BinaryExpr>(*orExpr.lhs).op, BinaryOp::And);
  EXPECT_EQ(cast<UnaryExpr>(*orExpr.rhs).op, UnaryOp::Not);

  e = parseExpr("a @ b // c % d / e");
  EXPECT_EQ(cast<BinaryExpr>(*e).op, BinaryOp::Div);

  e = parseExpr("a <= b");
  EXPECT_EQ(cast<BinaryExpr>(*e).op, BinaryOp::Le);
}

TEST(ParserTest, Literals) {
  EXPECT_EQ(intOf(*parseExpr("0x1F")), 31);
  EXPECT_EQ(intOf(*parseExpr("9223372036854775807")),
            INT64_C(9223372036854775807));
  EXPECT_DOUBLE_EQ(cast<FloatExpr>(*parseExpr(".5")).value, 0.5);
  EXPECT_DOUBLE_EQ(cast<FloatExpr>(*parseExpr("5.")).value, 5.0);
  EXPECT_DOUBLE_EQ(cast<FloatExpr>(*parseExpr("1e-3")).value, 1e-3);
  EXPECT_DOUBLE_EQ(cast<FloatExpr>(*parseExpr("2.5E+2")).value, 250.0);
  EXPECT_TRUE(cast<BoolExpr>(*parseExpr("True")).value);
  EXPECT_FALSE(cast<BoolExpr>(*parseExpr("False")).value);
  EXPECT_TRUE(isa<NoneExpr>(*parseExpr("None")));
  EXPECT_EQ(cast<StringExpr>(*parseExpr(R"("a\n\t\\\"\'")")).value,
            "a\n\t\\\"'");
  EXPECT_EQ(cast<StringExpr>(*parseExpr(R"('same')")).value, "same");
}

TEST(ParserTest, Locations) {
  Block body = parseBody("model M {\n  forward(x) {\n    y = (a + b) * f(c, k=d)\n  }\n}");
  auto &assign = cast<AssignStmt>(*cast<FunctionStmt>(*body[0]).body[0]);
  EXPECT_EQ(assign.getLoc().line, 3u);
  EXPECT_EQ(assign.getLoc().col, 5u);
  auto &mul = cast<BinaryExpr>(*assign.value);
  EXPECT_EQ(mul.getLoc().col, 9u); // the start of the lhs, its '('
  EXPECT_EQ(mul.lhs->getLoc().col, 10u);
  auto &call = cast<CallExpr>(*mul.rhs);
  EXPECT_EQ(call.getLoc().col, 19u); // the callee
  EXPECT_EQ(call.args[0].loc.col, 21u);
  EXPECT_EQ(call.args[1].loc.col, 24u);
  EXPECT_EQ(call.args[1].value->getLoc().col, 26u);
}

TEST(ParserTest, SeparatorsAndComments) {
  Block body = parseBody("model M { a = 1; b = 2 # c = 3\n\n ; c = (1,\n 2)\n}");
  ASSERT_EQ(body.size(), 3u);
  EXPECT_EQ(cast<AssignStmt>(*body[2]).getLoc().line, 3u);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

struct ErrorCase {
  const char *source;
  unsigned line, col;
  const char *message;
};

/// Model and function wrappers, so cases are one line of interest.
std::string inModel(const std::string &s) { return "model M {\n" + s + "\n}\n"; }
std::string inForward(const std::string &s) {
  return "model M {\nforward(x) {\n" + s + "\n}\n}\n";
}

void expectFirstError(const std::string &source, unsigned line, unsigned col,
                      const std::string &message) {
  SCOPED_TRACE(source);
  Parsed parsed = parse(source);
  ASSERT_FALSE(parsed.errors.empty());
  const Error &first = parsed.errors.front();
  EXPECT_EQ(first.line, line);
  EXPECT_EQ(first.col, col);
  EXPECT_EQ(first.message, message);
}

TEST(ParserTest, TopLevelErrors) {
  expectFirstError("x = 1\n", 1, 1, "expected 'module' or 'model' but found 'x'");
  expectFirstError("}\nmodel M {}", 1, 1,
                   "expected 'module' or 'model' but found '}'");
  expectFirstError("module (x) {}", 1, 8,
                   "expected module name after 'module' but found '('");
  expectFirstError("model M(x) {}", 1, 8,
                   "expected '{' to open 'model' body but found '('");
  expectFirstError("module A(x: tensor) {}", 1, 13,
                   "expected a parameter type ('int', 'float', 'bool' or "
                   "'str') but found 'tensor'");
  expectFirstError("module A(1) {}", 1, 10,
                   "expected parameter name but found '1'");
  expectFirstError("module A(a b) {}", 1, 12,
                   "expected ')' to close '(' at line 1 but found 'b'");
  expectFirstError("module A(a, a) {}", 1, 13, "duplicate parameter 'a'");
  expectFirstError("module A(a=1, b) {}", 1, 15,
                   "parameter 'b' without a default follows one with a default");
  expectFirstError("\nmodel M {\n  x = 1\n", 3, 8,
                   "expected '}' at end of file to close 'model' body opened "
                   "at 2:9");
  expectFirstError("model M {} model N {}", 1, 12,
                   "expected newline or ';' after statement but found 'model'");
}

TEST(ParserTest, PlacementErrors) {
  expectFirstError(inModel("model N {}"), 2, 1,
                   "'model' is only allowed at top level");
  expectFirstError("module A {\ninput x: f32[1]\n}", 2, 1,
                   "'input' is only allowed in a model body");
  expectFirstError(inForward("optimizer SGD(lr=1)"), 3, 1,
                   "'optimizer' is only allowed in a model body");
  expectFirstError(inModel("if true {\n batch B = 1\n}"), 3, 2,
                   "'batch' is not allowed inside 'if' or 'for' of a module "
                   "or model body");
  expectFirstError(inModel("for i in range(2) {\n forward(x) {}\n}"), 3, 2,
                   "'forward' is not allowed inside 'if' or 'for' of a module "
                   "or model body");
  expectFirstError(inForward("forward(y) {}"), 3, 1,
                   "'forward' is only allowed in a module or model body");
  expectFirstError("module A {\nloss(x) {}\n}", 2, 1,
                   "'loss' is only allowed in a model body");
  expectFirstError("module A {\nreturn 1\n}", 2, 1,
                   "'return' is only allowed in a function body");
  expectFirstError(inModel("checkpoint { x = 1 }"), 2, 1,
                   "'checkpoint' is only allowed in a function body");
  expectFirstError(inModel("on device 1 { x = 1 }"), 2, 1,
                   "'on device' is only allowed in a function body");
  // In a model body `precision DTYPE` is the model's own, without a block.
  expectFirstError(inModel("precision f16 { x = 1 }"), 2, 15,
                   "a model's 'precision' has no block; regions "
                   "'precision f32 { ... }' go inside forward or loss");
  expectFirstError("module A {\nprecision f16 { x = 1 }\n}\n", 2, 1,
                   "'precision' is only allowed in a function body");
  expectFirstError(inForward("if x { y = 1 }\nelse { y = 2 }"), 4, 1,
                   "'else' must follow the '}' of an 'if' on the same line");
}

// A misspelled keyword is named at the word itself, with the keyword it is
// closest to among those allowed there; other stray words keep the generic
// error at the word that ends the statement too early.
TEST(ParserTest, MisspelledKeywordsAreNamedWhereTheyAre) {
  expectFirstError(inModel("optimzer SGD(lr=0.1)"), 2, 1,
                   "unknown statement 'optimzer'; did you mean 'optimizer'?");
  expectFirstError(inModel("foward(x) {\nreturn x\n}"), 2, 1,
                   "unknown statement 'foward'; did you mean 'forward'?");
  expectFirstError(inModel("bacth B = 3"), 2, 1,
                   "unknown statement 'bacth'; did you mean 'batch'?");
  expectFirstError(inModel("inptu x: f32[3]"), 2, 1,
                   "unknown statement 'inptu'; did you mean 'input'?");
  expectFirstError(inForward("retrun fc(x)"), 3, 1,
                   "unknown statement 'retrun'; did you mean 'return'?");
  expectFirstError(inForward("chekpoint {\ny = x\n}"), 3, 1,
                   "unknown statement 'chekpoint'; did you mean 'checkpoint'?");
  expectFirstError("modle M {\n}\n", 1, 1,
                   "expected 'module' or 'model' but found 'modle'; did you "
                   "mean 'model'?");
  // Only keywords allowed where the word stands: 'retrun' in a model body
  // is not 'return', which a model body does not take.
  expectFirstError(inModel("retrun x"), 2, 8,
                   "expected newline or ';' after statement but found 'x'");
  // Too far from any keyword, or a call not followed by a body.
  expectFirstError(inForward("frobnicate x"), 3, 12,
                   "expected newline or ';' after statement but found 'x'");
  expectFirstError(inForward("foward(x) y"), 3, 11,
                   "expected newline or ';' after statement but found 'y'");
}

TEST(ParserTest, StatementErrors) {
  expectFirstError(inModel("x = 1 2"), 2, 7,
                   "expected newline or ';' after statement but found '2'");
  expectFirstError(inModel("forward x {}"), 2, 9,
                   "expected '(' after 'forward' but found 'x'");
  expectFirstError(inModel("forward(1) {}"), 2, 9,
                   "expected parameter name but found '1'");
  expectFirstError(inModel("forward(x, x) {}"), 2, 12,
                   "duplicate parameter 'x'");
  expectFirstError(inModel("forward(x y) {}"), 2, 11,
                   "expected ')' to close '(' at line 2 but found 'y'");
  expectFirstError(inModel("forward(x) y"), 2, 12,
                   "expected '{' to open 'forward' body but found 'y'");
  expectFirstError(inModel("batch = 3"), 2, 7,
                   "expected batch dimension name after 'batch' but found '='");
  expectFirstError(inModel("batch B 3"), 2, 9,
                   "expected '=' after batch dimension name but found '3'");
  expectFirstError(inModel("input 3"), 2, 7,
                   "expected input name after 'input' but found '3'");
  expectFirstError(inModel("input x f32[1]"), 2, 9,
                   "expected ':' after input name but found 'f32'");
  expectFirstError(inModel("input x: [3]"), 2, 10,
                   "expected a dtype after ':' but found '['");
  expectFirstError(inModel("input x: f32(3)"), 2, 13,
                   "expected '[' to start the shape of input 'x' but found '('");
  expectFirstError(inModel("input x: f32[3 4]"), 2, 16,
                   "expected ']' to close '[' at line 2 but found '4'");
  expectFirstError(inModel("optimizer (lr=1)"), 2, 11,
                   "expected optimizer name after 'optimizer' but found '('");
  expectFirstError(inModel("optimizer SGD lr"), 2, 15,
                   "expected '(' after optimizer name but found 'lr'");
  expectFirstError(inForward("return"), 3, 7,
                   "expected expression but found newline");
  expectFirstError(inForward("if x y {}"), 3, 6,
                   "expected '{' to open 'if' body but found 'y'");
  expectFirstError(inForward("if x {} else y"), 3, 14,
                   "expected '{' or 'if' after 'else' but found 'y'");
  expectFirstError(inForward("for 1 in range(3) {}"), 3, 5,
                   "expected loop variable name after 'for' but found '1'");
  expectFirstError(inForward("for i range(3) {}"), 3, 7,
                   "expected 'in' after loop variable but found 'range'");
  expectFirstError(inForward("for i in [1, 2] {}"), 3, 10,
                   "expected 'range' after 'in' but found '['");
  expectFirstError(inForward("for i in range 3 {}"), 3, 16,
                   "expected '(' after 'range' but found '3'");
  expectFirstError(inForward("for i in range(1, 2, 3) {}"), 3, 20,
                   "expected ')' to close '(' at line 3 but found ','");
  expectFirstError(inForward("on x {}"), 3, 4,
                   "expected 'device' after 'on' but found 'x'");
  expectFirstError(inForward("precision 16 {}"), 3, 11,
                   "expected a dtype after 'precision' but found '16'");
  expectFirstError(inForward("checkpoint h = 1"), 3, 12,
                   "expected '{' to open 'checkpoint' body but found 'h'");
  expectFirstError(inForward("f(x) = 1"), 3, 1,
                   "expected a name or 'name[index]' before '='");
  expectFirstError(inForward("x[1:2] = 1"), 3, 1,
                   "expected a name or 'name[index]' before '='");
}

TEST(ParserTest, ExpressionErrors) {
  expectFirstError(inForward("y = "), 3, 5, "expected expression but found newline");
  expectFirstError(inForward("y = )"), 3, 5, "expected expression but found ')'");
  expectFirstError(inForward("y = input"), 3, 5,
                   "expected expression but found 'input'");
  expectFirstError(inForward("y = f(1=2)"), 3, 7,
                   "expected a parameter name before '=' in a keyword argument");
  expectFirstError(inForward("y = f(a=1, a=2)"), 3, 12,
                   "duplicate keyword argument 'a'");
  expectFirstError(inForward("y = f(a=1, 2)"), 3, 12,
                   "positional argument after keyword arguments");
  expectFirstError(inForward("y = f(a b)"), 3, 9,
                   "expected ')' to close '(' at line 3 but found 'b'");
  expectFirstError(inForward("y = f(a\n"), 5, 1,
                   "expected ')' to close '(' at line 3 but found '}'");
  expectFirstError(inForward("y = a < b < c"), 3, 11,
                   "comparisons cannot be chained: found '<' after a comparison");
  expectFirstError(inForward("y = x.(1)"), 3, 7,
                   "expected a member name after '.' but found '('");
  expectFirstError(inForward("y = x[1 2]"), 3, 9,
                   "expected ']' to close '[' at line 3 but found '2'");
  expectFirstError(inForward("y = x[]"), 3, 7, "expected expression but found ']'");
  expectFirstError(inForward("y = (1 2)"), 3, 8,
                   "expected ')' to close '(' at line 3 but found '2'");
  expectFirstError(inForward("y = [1 2]"), 3, 8,
                   "expected ']' to close '[' at line 3 but found '2'");
  expectFirstError(inForward("y = [1, 2,]"), 3, 11,
                   "expected expression but found ']'");
}

TEST(ParserTest, LexerErrors) {
  expectFirstError(inForward("y = $x"), 3, 5, "invalid character '$'");
  expectFirstError(inForward(std::string("y = \0x", 6)), 3, 5,
                   "invalid character '\\x00'");
  expectFirstError(inForward("y = \xc3\xa9"), 3, 5, "invalid character '\\xc3'");
  expectFirstError(inForward("y = a & b"), 3, 7, "invalid character '&'");
  expectFirstError(inForward("y = 99999999999999999999"), 3, 5,
                   "integer literal '99999999999999999999' is out of range "
                   "for i64");
  expectFirstError(inForward("y = 0x8000000000000000"), 3, 5,
                   "integer literal '0x8000000000000000' is out of range for "
                   "i64");
  expectFirstError(inForward("y = 1e999"), 3, 5,
                   "float literal '1e999' is out of range for f64");
  expectFirstError(inForward("y = 3x"), 3, 5, "invalid number literal '3x'");
  expectFirstError(inForward("y = 0x"), 3, 5, "invalid number literal '0x'");
  expectFirstError(inForward("y = \"abc"), 3, 5, "unterminated string literal");
  expectFirstError(inForward("y = 'a\\qb'"), 3, 7,
                   "invalid escape sequence '\\q' in string literal");
  expectFirstError(inForward("y = 'a\x01'"), 3, 7,
                   "invalid character '\\x01' in string literal");
}

TEST(ParserTest, LexerErrorsDoNotCascade) {
  // A run of garbage is one error; the statement still parses.
  Parsed parsed = parse(inForward("y = \xff\xfe\x01$ 1 + 2"));
  ASSERT_EQ(parsed.errors.size(), 1u);
  // An out-of-range literal is reported once and parsing goes on normally.
  parsed = parse(inForward("y = 99999999999999999999 + 1"));
  EXPECT_EQ(parsed.errors.size(), 1u);
  // What the parser finds later on the line of a lexer error is dropped.
  parsed = parse(inForward("y = 3x 4"));
  EXPECT_EQ(parsed.errors.size(), 1u);
  // An unterminated string ends its line's statement, even inside ( ).
  parsed = parse(inForward("y = f(x, \"tanh)\nreturn y"));
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].message, "unterminated string literal");
  ASSERT_EQ(parsed.program->modules.size(), 1u);
  auto &forward = cast<FunctionStmt>(*parsed.program->modules[0]->body[0]);
  ASSERT_EQ(forward.body.size(), 1u);
  EXPECT_TRUE(isa<ReturnStmt>(*forward.body[0]));
}

TEST(ParserTest, RecoversAndReportsSeveralErrors) {
  Parsed parsed = parse(R"(model M {
  a = (1 2)
  b = 2
  forward(x) {
    y = f(
    z = 3
  }
  c = 3 3
  loss(x, y) { return x }
}
module B(x: int) { d = ) }
module C { e = 1 }
)");
  ASSERT_EQ(parsed.errors.size(), 4u);
  EXPECT_EQ(parsed.errors[0].line, 2u);
  // The unclosed '(' swallows the next line up to the '}'.
  EXPECT_EQ(parsed.errors[1].line, 7u);
  EXPECT_EQ(parsed.errors[2].line, 8u);
  EXPECT_EQ(parsed.errors[3].line, 11u);
  ASSERT_EQ(parsed.program->modules.size(), 3u);
  Block &model = parsed.program->modules[0]->body;
  ASSERT_EQ(model.size(), 4u); // b, forward, c, loss
  EXPECT_TRUE(isa<FunctionStmt>(*model[3]));
  EXPECT_EQ(parsed.program->modules[2]->body.size(), 1u);
}

TEST(ParserTest, StopsAfterTooManyErrors) {
  std::string body;
  for (int i = 0; i < 50; ++i)
    body += "x = )\n";
  Parsed parsed = parse(inModel(body));
  ASSERT_EQ(parsed.errors.size(), DiagnosticReporter::kMaxErrors + 1);
  EXPECT_EQ(parsed.errors.back().message, "too many errors, stopping");
  EXPECT_EQ(parsed.errors.back().line, DiagnosticReporter::kMaxErrors + 2);
}

TEST(ParserTest, OneErrorPerPosition) {
  // Every enclosing body is unclosed at the same end of file.
  Parsed parsed = parse("model M {\n forward(x) {\n if x {\n for i in range(3) {");
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].message,
            "expected '}' at end of file to close 'for' body opened at 4:20");
}

//===----------------------------------------------------------------------===//
// Robustness
//===----------------------------------------------------------------------===//

TEST(ParserTest, DeepNesting) {
  const std::string tooDeep =
      "nesting too deep (more than 200 levels)";
  for (const char *open : {"(", "[", "{", "-", "not ", "f(", "x**"}) {
    SCOPED_TRACE(open);
    std::string deep;
    for (int i = 0; i < 100000; ++i)
      deep += open;
    Parsed parsed = parse(inForward("y = " + deep));
    ASSERT_FALSE(parsed.errors.empty());
    bool reported = false;
    for (const Error &e : parsed.errors)
      reported |= e.message == tooDeep;
    EXPECT_TRUE(reported || std::string(open) == "{");
    EXPECT_LE(parsed.errors.size(), DiagnosticReporter::kMaxErrors + 1);
  }
  // Blocks nest through statements, not expressions.
  std::string blocks;
  for (int i = 0; i < 100000; ++i)
    blocks += "if x {\n";
  Parsed parsed = parse(inForward(blocks));
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].message, tooDeep);

  std::string chain = "if x {}";
  for (int i = 0; i < 100000; ++i)
    chain += " else if x {}";
  parsed = parse(inForward(chain));
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].message, tooDeep);

  // Nesting just under the limit is fine.
  parseGood(inForward("y = " + std::string(150, '(') + "x" +
                      std::string(150, ')')));
}

TEST(ParserTest, HugeLines) {
  const size_t tenMegabytes = 10 << 20;
  std::string list = "[1";
  while (list.size() < tenMegabytes)
    list += ", 1234567";
  list += "]";
  ExprPtr e = parseExpr(list);
  ASSERT_NE(e, nullptr);
  EXPECT_GT(cast<TupleExpr>(*e).elements.size(), 1000000u);

  std::string name(tenMegabytes, 'a');
  EXPECT_TRUE(isa<NameExpr>(*parseExpr(name)));

  // A long operator chain is a deep tree and is refused, not overflowed.
  std::string sum = "1";
  while (sum.size() < tenMegabytes)
    sum += " + 1";
  Parsed parsed = parse(inForward("y = " + sum));
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].message, "nesting too deep (more than 200 levels)");

  // An error at the end of a huge line quotes a shortened token.
  parsed = parse(inForward("y = " + name + " " + name));
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].col, 4u + name.size() + 2);
  EXPECT_LT(parsed.errors[0].message.size(), 120u);
}

TEST(ParserTest, Garbage) {
  std::mt19937 rng(20240521);
  auto check = [](const std::string &source) {
    Parsed parsed = parse(source);
    EXPECT_LE(parsed.errors.size(), DiagnosticReporter::kMaxErrors + 1)
        << source;
  };
  // Random bytes.
  for (int i = 0; i < 2000; ++i) {
    std::string source(rng() % 300, '\0');
    for (char &c : source)
      c = static_cast<char>(rng());
    check(source);
  }
  // Random soups of tokens, which get much further into the parser.
  const std::vector<std::string> tokens = {
      "model", "module", "M", "x", "forward", "loss", "batch", "input",
      "optimizer", "return", "if", "else", "for", "in", "range", "checkpoint",
      "on", "device", "precision", "f32", "and", "or", "not", "true", "None",
      "(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "=", "==", "+", "-",
      "*", "**", "/", "//", "@", "<", ">=", "!", "&&", "1", "2.5", "'s'",
      "\"t", "0x", "1e999", "\n", "\n", "\n", " ", "#c", "\\", "\x80", "\0"};
  for (int i = 0; i < 3000; ++i) {
    std::string source;
    // Most soups start like a file, to get past the top level.
    if (rng() % 4 != 0)
      source = rng() % 2 ? "model M {\n forward(x) {\n" : "module A(a: int) {\n";
    size_t length = rng() % 200;
    for (size_t j = 0; j < length; ++j) {
      const std::string &token = tokens[rng() % tokens.size()];
      source += token.empty() ? std::string(1, '\0') : token;
      if (rng() % 2)
        source += ' ';
    }
    check(source);
  }
}

} // namespace
