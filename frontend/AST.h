//===- AST.h - Syntax tree of a .cairn model file ---------------*- C++ -*-===//
//
// The parser builds this tree; the elaborator (Elaborator.cpp) evaluates the
// compile-time parts (module constructors, if/for, constants) and emits IR.
// Nodes own their children. Every node keeps the line and column where it
// starts, so later stages can point diagnostics at the model file.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_FRONTEND_AST_H
#define CAIRN_FRONTEND_AST_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cairn::ast {

/// A position in the model file (1-based line and column).
struct Loc {
  unsigned line = 0;
  unsigned col = 0;
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind {
    Int,       // 42
    Float,     // 1e-3
    Bool,      // true
    String,    // "tanh"
    None,      // None
    Name,      // x
    Tuple,     // (1, 2)   and   [1, 2]  (isList)
    Unary,     // -x, not x
    Binary,    // a + b, a @ b, a == b, a and b
    Call,      // f(a, b=1)
    Index,     // x[:, 0], layers[i]
    Member,    // x.shape, x.reshape
  };
  Expr(Kind kind, Loc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  Loc getLoc() const { return loc; }

private:
  Kind kind;
  Loc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntExpr : Expr {
  IntExpr(Loc loc, int64_t value) : Expr(Kind::Int, loc), value(value) {}
  int64_t value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Int; }
};

struct FloatExpr : Expr {
  FloatExpr(Loc loc, double value) : Expr(Kind::Float, loc), value(value) {}
  double value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Float; }
};

struct BoolExpr : Expr {
  BoolExpr(Loc loc, bool value) : Expr(Kind::Bool, loc), value(value) {}
  bool value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Bool; }
};

struct StringExpr : Expr {
  StringExpr(Loc loc, std::string value)
      : Expr(Kind::String, loc), value(std::move(value)) {}
  std::string value; // Escapes already resolved.
  static bool classof(const Expr *e) { return e->getKind() == Kind::String; }
};

struct NoneExpr : Expr {
  explicit NoneExpr(Loc loc) : Expr(Kind::None, loc) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::None; }
};

struct NameExpr : Expr {
  NameExpr(Loc loc, std::string name)
      : Expr(Kind::Name, loc), name(std::move(name)) {}
  std::string name;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }
};

/// `(a, b)` (a tuple; `(a,)` has one element) or `[a, b]` (a list).
struct TupleExpr : Expr {
  TupleExpr(Loc loc, std::vector<ExprPtr> elements, bool isList)
      : Expr(Kind::Tuple, loc), elements(std::move(elements)), isList(isList) {}
  std::vector<ExprPtr> elements;
  bool isList;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Tuple; }
};

enum class UnaryOp { Neg, Plus, Not };

struct UnaryExpr : Expr {
  UnaryExpr(Loc loc, UnaryOp op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  UnaryOp op;
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }
};

enum class BinaryOp {
  Add, Sub, Mul, Div, FloorDiv, Mod, Pow, MatMul, // + - * / // % ** @
  Eq, Ne, Lt, Le, Gt, Ge,                         // == != < <= > >=
  And, Or                                         // and or
};

struct BinaryExpr : Expr {
  BinaryExpr(Loc loc, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }
};

/// One argument of a call: positional (`name` empty) or keyword (`name=value`).
struct Argument {
  Loc loc;
  std::string name;
  ExprPtr value;
};

struct CallExpr : Expr {
  CallExpr(Loc loc, ExprPtr callee, std::vector<Argument> args)
      : Expr(Kind::Call, loc), callee(std::move(callee)),
        args(std::move(args)) {}
  ExprPtr callee;
  std::vector<Argument> args;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }
};

/// One item between the brackets of an index: `e` or `start:stop:step`, any
/// of the three parts optional.
struct IndexItem {
  Loc loc;
  bool isSlice = false;
  ExprPtr index;             // when !isSlice
  ExprPtr start, stop, step; // when isSlice; null when omitted
};

struct IndexExpr : Expr {
  IndexExpr(Loc loc, ExprPtr base, std::vector<IndexItem> items)
      : Expr(Kind::Index, loc), base(std::move(base)), items(std::move(items)) {}
  ExprPtr base;
  std::vector<IndexItem> items;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Index; }
};

/// `base.member`, e.g. `x.shape` or the callee of `x.reshape(...)`.
struct MemberExpr : Expr {
  MemberExpr(Loc loc, ExprPtr base, std::string member)
      : Expr(Kind::Member, loc), base(std::move(base)),
        member(std::move(member)) {}
  ExprPtr base;
  std::string member;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Member; }
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

class Stmt {
public:
  enum class Kind {
    Assign,     // name = expr   |   name[index] = expr
    ExprStmt,   // a bare expression (reported as unused by the elaborator)
    Return,     // return a, b
    If,         // if c { } else { }
    For,        // for i in range(a, b) { }
    Annotated,  // checkpoint { }, on device k { }, precision f16 { }
    Input,      // input x: f32[B, 784]
    Batch,      // batch B = 64
    Function,   // forward(x) { },  loss(x, y) { }
    Optimizer,  // optimizer SGD(lr=0.1), scheduler StepLR(...), clip_grad_norm(...)
  };
  Stmt(Kind kind, Loc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  Loc getLoc() const { return loc; }

private:
  Kind kind;
  Loc loc;
};

struct AssignStmt : Stmt {
  AssignStmt(Loc loc, std::string target, ExprPtr index, ExprPtr value)
      : Stmt(Kind::Assign, loc), target(std::move(target)),
        index(std::move(index)), value(std::move(value)) {}
  std::string target;
  ExprPtr index; // `layers[i] = ...`; null for a plain name
  /// `q, k, v = ...`: the names after `target`, each with its location; the
  /// value must then be a tuple of as many values.
  std::vector<std::pair<std::string, Loc>> moreTargets;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }
};

struct ExprStmt : Stmt {
  ExprStmt(Loc loc, ExprPtr expr)
      : Stmt(Kind::ExprStmt, loc), expr(std::move(expr)) {}
  ExprPtr expr;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::ExprStmt; }
};

struct ReturnStmt : Stmt {
  ReturnStmt(Loc loc, std::vector<ExprPtr> values)
      : Stmt(Kind::Return, loc), values(std::move(values)) {}
  std::vector<ExprPtr> values;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Return; }
};

struct IfStmt : Stmt {
  IfStmt(Loc loc, ExprPtr cond, Block thenBody, Block elseBody)
      : Stmt(Kind::If, loc), cond(std::move(cond)),
        thenBody(std::move(thenBody)), elseBody(std::move(elseBody)) {}
  ExprPtr cond;
  Block thenBody;
  Block elseBody; // `else if` is an else body holding one IfStmt
  static bool classof(const Stmt *s) { return s->getKind() == Kind::If; }
};

/// `for i in range(stop)` or `for i in range(start, stop)`.
struct ForStmt : Stmt {
  ForStmt(Loc loc, std::string var, ExprPtr start, ExprPtr stop, Block body)
      : Stmt(Kind::For, loc), var(std::move(var)), start(std::move(start)),
        stop(std::move(stop)), body(std::move(body)) {}
  std::string var;
  ExprPtr start; // null: 0
  ExprPtr stop;
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::For; }
};

enum class Annotation { Checkpoint, Device, Precision };

struct AnnotatedStmt : Stmt {
  AnnotatedStmt(Loc loc, Annotation annotation, ExprPtr device,
                std::string precision, Loc argLoc, Block body)
      : Stmt(Kind::Annotated, loc), annotation(annotation),
        device(std::move(device)), precision(std::move(precision)),
        argLoc(argLoc), body(std::move(body)) {}
  Annotation annotation;
  ExprPtr device;        // `on device <expr>`
  std::string precision; // `precision <dtype>`: "f16", "bf16", "f32"
  Loc argLoc;            // where the device expression or dtype is written
  Block body;
  /// A model's own `precision bf16` (no block): the precision it builds with.
  bool modelLevel = false;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Annotated; }
};

/// `input image: f32[B, 1, 28, 28]`
struct InputStmt : Stmt {
  InputStmt(Loc loc, std::string name, std::string dtype, Loc dtypeLoc,
            std::vector<ExprPtr> dims)
      : Stmt(Kind::Input, loc), name(std::move(name)), dtype(std::move(dtype)),
        dtypeLoc(dtypeLoc), dims(std::move(dims)) {}
  std::string name;
  std::string dtype; // as written; the elaborator checks it
  Loc dtypeLoc;
  std::vector<ExprPtr> dims;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Input; }
};

/// `batch B = 64`: the symbolic batch dimension and its default.
struct BatchStmt : Stmt {
  BatchStmt(Loc loc, std::string name, ExprPtr value)
      : Stmt(Kind::Batch, loc), name(std::move(name)), value(std::move(value)) {}
  std::string name;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Batch; }
};

struct Param {
  Loc loc;
  std::string name;
  std::string type; // "int", "float", "bool", "str" or empty (any)
  ExprPtr defaultValue; // null: required
};

/// `forward(x) { ... }` and, in a model, `loss(x, y) { ... }`.
struct FunctionStmt : Stmt {
  FunctionStmt(Loc loc, std::string name, std::vector<Param> params, Block body)
      : Stmt(Kind::Function, loc), name(std::move(name)),
        params(std::move(params)), body(std::move(body)) {}
  std::string name; // "forward" or "loss"
  std::vector<Param> params; // names only; no types or defaults
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Function; }
};

/// What a model-level training statement sets.
enum class TrainingSetting { Optimizer, Scheduler, ClipGradNorm };

struct OptimizerStmt : Stmt {
  OptimizerStmt(Loc loc, TrainingSetting setting, ExprPtr call)
      : Stmt(Kind::Optimizer, loc), setting(setting), call(std::move(call)) {}
  TrainingSetting setting;
  /// A CallExpr: SGD(...), StepLR(...), or clip_grad_norm(...) itself.
  ExprPtr call;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Optimizer; }
};

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

/// `module Name(params) { body }` (a reusable block) or `model Name { body }`
/// (the thing that is built; at most one per file).
struct ModuleDef {
  Loc loc;
  Loc nameLoc;
  std::string name;
  bool isModel = false;
  std::vector<Param> params;
  Block body;
};

/// A parsed model file: its module definitions (one of them the model).
struct ModelFile {
  std::vector<std::unique_ptr<ModuleDef>> modules;
};

} // namespace cairn::ast

#endif // CAIRN_FRONTEND_AST_H
