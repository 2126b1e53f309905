//===- Parser.cpp - Parser of .cairn model files --------------------------===//
//
// Each parseX function follows one rule of the grammar in docs/language.md,
// quoted above it. A function that fails has reported an error and returns
// null (or false); the enclosing statement loop then skips to the end of the
// statement and goes on, so one run reports several errors.
//
//===----------------------------------------------------------------------===//

#include "frontend/Parser.h"
#include "frontend/Lexer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Casting.h"

#include <optional>
#include <string>

using namespace cairn;
using namespace cairn::ast;

namespace {

/// Blocks and expressions together may nest this deep; deeper input is
/// rejected before it can overflow the stack (here or in later passes that
/// walk the tree recursively).
constexpr unsigned kMaxNesting = 200;

/// The kind of body a statement is written in; it decides which statements
/// are allowed.
enum class BodyKind { Model, Module, Function };

struct Scope {
  BodyKind body;
  /// Inside an `if` or `for` of a module or model body, where only members
  /// that are not model-only and not functions are allowed.
  bool nested = false;
};

std::string lineColOf(Loc loc) {
  return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

/// True if `a` is `b` with two neighbouring letters swapped.
bool isOneSwapApart(llvm::StringRef a, llvm::StringRef b) {
  if (a.size() != b.size())
    return false;
  size_t i = 0;
  while (i < a.size() && a[i] == b[i])
    ++i;
  return i + 1 < a.size() && a[i] == b[i + 1] && a[i + 1] == b[i] &&
         a.drop_front(i + 2) == b.drop_front(i + 2);
}

/// The keyword among `keywords` that `word` is most likely a misspelling of:
/// at most two edits away (a swap of neighbouring letters counts one), one
/// for a keyword of three letters or fewer; the first of equals; or empty.
llvm::StringRef closestKeyword(llvm::StringRef word,
                               llvm::ArrayRef<llvm::StringRef> keywords) {
  llvm::StringRef best;
  unsigned bestDistance = 3;
  for (llvm::StringRef keyword : keywords) {
    unsigned limit = keyword.size() <= 3 ? 1 : 2;
    unsigned d = isOneSwapApart(word, keyword)
                     ? 1
                     : word.edit_distance(keyword, true, limit + 1);
    if (d > 0 && d <= limit && d < bestDistance) {
      bestDistance = d;
      best = keyword;
    }
  }
  return best;
}

/// The keywords that can begin a statement in `scope`'s body.
llvm::SmallVector<llvm::StringRef> statementKeywords(const Scope &scope) {
  llvm::SmallVector<llvm::StringRef> keywords = {"if", "for"};
  if (scope.body == BodyKind::Function) {
    keywords.append({"return", "checkpoint", "on", "precision"});
  } else if (!scope.nested) {
    keywords.push_back("forward");
    if (scope.body == BodyKind::Model)
      keywords.append({"batch", "input", "optimizer", "scheduler", "clip_grad_norm", "loss"});
  }
  return keywords;
}

class Parser {
public:
  Parser(llvm::StringRef source, DiagnosticReporter &diag)
      : lexer(source, diag), tok(lexer.next()) {}

  std::unique_ptr<ModelFile> parseFile();

private:
  /// Counts nesting levels entered by one parse function and gives them back
  /// when it returns.
  class Nesting {
  public:
    explicit Nesting(Parser &parser) : parser(parser) {}
    ~Nesting() { parser.depth -= levels; }
    /// Enters one more level; false (after reporting) when too deep.
    bool enter() {
      if (!parser.enterLevel())
        return false;
      ++levels;
      return true;
    }

  private:
    Parser &parser;
    unsigned levels = 0;
  };

  // Token handling.
  void consume() { tok = lexer.next(); }
  bool consumeIf(TokenKind kind) {
    if (!tok.is(kind))
      return false;
    consume();
    return true;
  }
  void error(Loc loc, const llvm::Twine &message) { lexer.error(loc, message); }
  /// Reports "expected <what> but found <current token>".
  /// "expected <what> but found <token><hint>".
  void errorExpected(const llvm::Twine &what, const llvm::Twine &hint = "") {
    error(tok.loc, "expected " + what + " but found " + tok.describe() + hint);
  }
  /// Reports a missing `)` or `]` for the bracket opened at `open`.
  void errorUnclosed(TokenKind open, Loc openLoc) {
    llvm::StringRef close = open == TokenKind::LParen ? "')'" : "']'";
    errorExpected(close + " to close " + spellingOf(open) + " at line " +
                  llvm::Twine(openLoc.line));
  }
  /// Parses an identifier into `name`, or reports "expected <what>".
  bool parseIdentifier(std::string &name, const llvm::Twine &what) {
    if (!tok.is(TokenKind::Identifier)) {
      errorExpected(what);
      return false;
    }
    name = tok.text.str();
    consume();
    return true;
  }
  bool enterLevel();

  // Recovery.
  bool atStatementEnd() const;
  bool expectStatementEnd();
  void skipToStatementEnd();

  // Top level and statements.
  std::unique_ptr<ModuleDef> parseModule();
  bool parseParams(std::vector<Param> &params);
  bool parseParam(std::vector<Param> &params, bool &sawDefault);
  bool parseBlock(Scope scope, llvm::StringRef owner, Block &body);
  void parseStatements(Scope scope, Block &body);
  StmtPtr parseStatement(Scope scope);
  StmtPtr parseFunction();
  StmtPtr parseBatch();
  StmtPtr parseInput();
  StmtPtr parseOptimizer();
  StmtPtr parseReturn();
  StmtPtr parseIf(Scope scope);
  StmtPtr parseFor(Scope scope);
  StmtPtr parseCheckpoint();
  StmtPtr parseOnDevice();
  /// `modelLevel`: the model's own statement, without a block.
  StmtPtr parsePrecision(bool modelLevel);
  StmtPtr parseAssignOrExpr(Scope scope);
  bool reportMisspelledKeyword(const Scope &scope, const Expr &expr);

  // Expressions.
  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parseComparison();
  ExprPtr parseSum();
  ExprPtr parseTerm();
  ExprPtr parseLeftAssociative(ExprPtr (Parser::*operand)(),
                               std::initializer_list<TokenKind> ops);
  ExprPtr parseUnary();
  ExprPtr parsePower();
  ExprPtr parsePostfix();
  bool parseArgs(Loc openLoc, std::vector<Argument> &args);
  bool parseIndexItem(IndexItem &item);
  ExprPtr parsePrimary();
  ExprPtr parseParenthesized();
  ExprPtr parseList();

  Lexer lexer;
  Token tok;
  unsigned depth = 0;
};

} // namespace

bool Parser::enterLevel() {
  if (depth >= kMaxNesting) {
    error(tok.loc, "nesting too deep (more than " + llvm::Twine(kMaxNesting) +
                       " levels)");
    // Unwind at once: with the token stream ended, every loop exits and
    // nothing recurses further.
    lexer.stop();
    consume();
    return false;
  }
  ++depth;
  return true;
}

//===----------------------------------------------------------------------===//
// Recovery
//===----------------------------------------------------------------------===//

/// A statement ends at a newline or `;`, or before the `}` that closes its
/// block, or at the end of the file.
bool Parser::atStatementEnd() const {
  return tok.is(TokenKind::Newline) || tok.is(TokenKind::Semicolon) ||
         tok.is(TokenKind::RBrace) || tok.is(TokenKind::EndOfFile);
}

/// Consumes the end of a statement (a newline or `;`), or reports it missing.
bool Parser::expectStatementEnd() {
  if (consumeIf(TokenKind::Newline) || consumeIf(TokenKind::Semicolon) ||
      atStatementEnd())
    return true;
  errorExpected("newline or ';' after statement");
  return false;
}

/// Skips the rest of a statement that had an error: up to and including the
/// next newline or `;` outside braces, or up to the `}` that closes the
/// enclosing block.
void Parser::skipToStatementEnd() {
  unsigned braces = 0;
  while (!tok.is(TokenKind::EndOfFile)) {
    if (tok.is(TokenKind::LBrace)) {
      ++braces;
    } else if (tok.is(TokenKind::RBrace)) {
      if (braces == 0)
        return;
      --braces;
    } else if (braces == 0 && (tok.is(TokenKind::Newline) ||
                               tok.is(TokenKind::Semicolon))) {
      consume();
      return;
    }
    consume();
  }
}

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

/// file ::= { module | model }
std::unique_ptr<ModelFile> Parser::parseFile() {
  auto program = std::make_unique<ModelFile>();
  while (!tok.is(TokenKind::EndOfFile)) {
    if (consumeIf(TokenKind::Newline) || consumeIf(TokenKind::Semicolon))
      continue;
    if (tok.is(TokenKind::KwModule) || tok.is(TokenKind::KwModel)) {
      std::unique_ptr<ModuleDef> module = parseModule();
      bool ok = module && expectStatementEnd();
      if (module)
        program->modules.push_back(std::move(module));
      if (ok)
        continue;
    } else {
      llvm::StringRef keyword;
      if (tok.is(TokenKind::Identifier))
        keyword = closestKeyword(tok.text, {"model", "module"});
      std::string hint;
      if (!keyword.empty())
        hint = ("; did you mean '" + keyword + "'?").str();
      errorExpected("'module' or 'model'", hint);
    }
    skipToStatementEnd();
    // A stray `}` ends a statement skip but closes nothing here.
    consumeIf(TokenKind::RBrace);
  }
  return program;
}

/// module ::= 'module' IDENT [ '(' [ params ] ')' ] '{' { member } '}'
/// model  ::= 'model' IDENT '{' { member | model-only } '}'
std::unique_ptr<ModuleDef> Parser::parseModule() {
  auto module = std::make_unique<ModuleDef>();
  module->loc = tok.loc;
  module->isModel = tok.is(TokenKind::KwModel);
  llvm::StringRef keyword = module->isModel ? "model" : "module";
  consume();
  module->nameLoc = tok.loc;
  if (!parseIdentifier(module->name, llvm::Twine(keyword) + " name after '" +
                                         keyword + "'"))
    return nullptr;
  if (!module->isModel && tok.is(TokenKind::LParen) &&
      !parseParams(module->params))
    return nullptr;
  Scope scope{module->isModel ? BodyKind::Model : BodyKind::Module};
  std::string owner = ("'" + keyword + "'").str();
  if (!tok.is(TokenKind::LBrace)) {
    errorExpected("'{' to open " + owner + " body");
    return nullptr;
  }
  // A body cut off at the end of the file still yields what it holds.
  parseBlock(scope, owner, module->body);
  return module;
}

/// params ::= param { ',' param } [ ',' ]
bool Parser::parseParams(std::vector<Param> &params) {
  Loc openLoc = tok.loc;
  consume(); // '('
  bool sawDefault = false;
  while (!tok.is(TokenKind::RParen)) {
    if (!parseParam(params, sawDefault))
      return false;
    if (consumeIf(TokenKind::Comma))
      continue;
    if (!tok.is(TokenKind::RParen)) {
      errorUnclosed(TokenKind::LParen, openLoc);
      return false;
    }
  }
  consume(); // ')'
  return true;
}

/// param ::= IDENT [ ':' ( 'int' | 'float' | 'bool' | 'str' ) ] [ '=' expr ]
bool Parser::parseParam(std::vector<Param> &params, bool &sawDefault) {
  Param param;
  param.loc = tok.loc;
  if (!parseIdentifier(param.name, "parameter name"))
    return false;
  for (const Param &other : params)
    if (other.name == param.name)
      error(param.loc, "duplicate parameter '" + param.name + "'");
  if (consumeIf(TokenKind::Colon)) {
    llvm::StringRef type = tok.text;
    if (!tok.is(TokenKind::Identifier) ||
        (type != "int" && type != "float" && type != "bool" && type != "str")) {
      errorExpected("a parameter type ('int', 'float', 'bool' or 'str')");
      return false;
    }
    param.type = type.str();
    consume();
  }
  if (consumeIf(TokenKind::Assign)) {
    param.defaultValue = parseExpr();
    if (!param.defaultValue)
      return false;
    sawDefault = true;
  } else if (sawDefault) {
    error(param.loc, "parameter '" + param.name +
                         "' without a default follows one with a default");
  }
  params.push_back(std::move(param));
  return true;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

/// block ::= '{' { stmt } '}'
/// (and a module or model body, whose statements are members).
bool Parser::parseBlock(Scope scope, llvm::StringRef owner, Block &body) {
  if (!tok.is(TokenKind::LBrace)) {
    errorExpected("'{' to open " + owner + " body");
    return false;
  }
  Loc openLoc = tok.loc;
  consume();
  Nesting nesting(*this);
  if (!nesting.enter())
    return false;
  parseStatements(scope, body);
  if (!tok.is(TokenKind::RBrace)) {
    error(tok.loc, "expected '}' at end of file to close " + owner +
                       " body opened at " + lineColOf(openLoc));
    return false;
  }
  consume();
  return true;
}

/// The statements of a block, up to its `}` or the end of the file.
void Parser::parseStatements(Scope scope, Block &body) {
  while (!tok.is(TokenKind::RBrace) && !tok.is(TokenKind::EndOfFile)) {
    if (consumeIf(TokenKind::Newline) || consumeIf(TokenKind::Semicolon))
      continue;
    StmtPtr stmt = parseStatement(scope);
    bool ok = stmt && expectStatementEnd();
    if (stmt)
      body.push_back(std::move(stmt));
    if (!ok)
      skipToStatementEnd();
  }
}

/// member     ::= assign | if-member | for-member | function
/// model-only ::= 'batch' ... | 'input' ... | 'optimizer' ... | 'scheduler' ...
///              | 'clip_grad_norm' ... | 'precision' DTYPE
/// stmt       ::= assign | expr | 'return' expr { ',' expr } | if | for
///              | 'checkpoint' block | 'on' 'device' expr block
///              | 'precision' DTYPE block
StmtPtr Parser::parseStatement(Scope scope) {
  bool inMember = scope.body != BodyKind::Function;
  auto misplaced = [&](const llvm::Twine &what, llvm::StringRef where) {
    if (inMember && scope.nested)
      error(tok.loc, "'" + what + "' is not allowed inside 'if' or 'for' of a " +
                         "module or model body");
    else
      error(tok.loc, "'" + what + "' is only allowed in " + where);
    return nullptr;
  };
  bool directlyInModel = scope.body == BodyKind::Model && !scope.nested;
  switch (tok.kind) {
  case TokenKind::KwModule:
  case TokenKind::KwModel:
    error(tok.loc, "'" + tok.text + "' is only allowed at top level");
    return nullptr;
  case TokenKind::KwBatch:
  case TokenKind::KwInput:
  case TokenKind::KwOptimizer:
  case TokenKind::KwScheduler:
  case TokenKind::KwClipGradNorm:
    if (!directlyInModel)
      return misplaced(tok.text, "a model body");
    if (tok.is(TokenKind::KwBatch))
      return parseBatch();
    return tok.is(TokenKind::KwInput) ? parseInput() : parseOptimizer();
  case TokenKind::KwForward:
    if (!inMember || scope.nested)
      return misplaced(tok.text, "a module or model body");
    return parseFunction();
  case TokenKind::KwLoss:
    if (!directlyInModel)
      return misplaced(tok.text, "a model body");
    return parseFunction();
  case TokenKind::KwReturn:
  case TokenKind::KwCheckpoint:
  case TokenKind::KwOn:
  case TokenKind::KwPrecision:
    if (directlyInModel && tok.is(TokenKind::KwPrecision))
      return parsePrecision(/*modelLevel=*/true);
    if (inMember) {
      error(tok.loc, "'" + (tok.is(TokenKind::KwOn) ? "on device" : tok.text) +
                         "' is only allowed in a function body");
      return nullptr;
    }
    if (tok.is(TokenKind::KwReturn))
      return parseReturn();
    if (tok.is(TokenKind::KwCheckpoint))
      return parseCheckpoint();
    return tok.is(TokenKind::KwOn) ? parseOnDevice() : parsePrecision(/*modelLevel=*/false);
  case TokenKind::KwIf:
    return parseIf(scope);
  case TokenKind::KwFor:
    return parseFor(scope);
  case TokenKind::KwElse:
    error(tok.loc, "'else' must follow the '}' of an 'if' on the same line");
    return nullptr;
  default:
    return parseAssignOrExpr(scope);
  }
}

/// function ::= ( 'forward' | 'loss' ) '(' [ IDENT { ',' IDENT } ] ')' block
StmtPtr Parser::parseFunction() {
  Loc loc = tok.loc;
  std::string name = tok.text.str();
  consume();
  if (!tok.is(TokenKind::LParen)) {
    errorExpected("'(' after '" + name + "'");
    return nullptr;
  }
  Loc openLoc = tok.loc;
  consume();
  std::vector<Param> params;
  if (!tok.is(TokenKind::RParen)) {
    while (true) {
      Param param;
      param.loc = tok.loc;
      if (!parseIdentifier(param.name, "parameter name"))
        return nullptr;
      for (const Param &other : params)
        if (other.name == param.name)
          error(param.loc, "duplicate parameter '" + param.name + "'");
      params.push_back(std::move(param));
      if (!consumeIf(TokenKind::Comma))
        break;
    }
  }
  if (!consumeIf(TokenKind::RParen)) {
    errorUnclosed(TokenKind::LParen, openLoc);
    return nullptr;
  }
  Block body;
  if (!parseBlock({BodyKind::Function}, "'" + name + "'", body))
    return nullptr;
  return std::make_unique<FunctionStmt>(loc, name, std::move(params),
                                        std::move(body));
}

/// model-only ::= 'batch' IDENT '=' expr
StmtPtr Parser::parseBatch() {
  Loc loc = tok.loc;
  consume();
  std::string name;
  if (!parseIdentifier(name, "batch dimension name after 'batch'"))
    return nullptr;
  if (!consumeIf(TokenKind::Assign)) {
    errorExpected("'=' after batch dimension name");
    return nullptr;
  }
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<BatchStmt>(loc, name, std::move(value));
}

/// model-only ::= 'input' IDENT ':' DTYPE '[' expr { ',' expr } ']'
StmtPtr Parser::parseInput() {
  Loc loc = tok.loc;
  consume();
  std::string name;
  if (!parseIdentifier(name, "input name after 'input'"))
    return nullptr;
  if (!consumeIf(TokenKind::Colon)) {
    errorExpected("':' after input name");
    return nullptr;
  }
  // The dtype is kept as written; the elaborator checks it.
  Loc dtypeLoc = tok.loc;
  std::string dtype;
  if (!parseIdentifier(dtype, "a dtype after ':'"))
    return nullptr;
  if (!tok.is(TokenKind::LBracket)) {
    errorExpected("'[' to start the shape of input '" + name + "'");
    return nullptr;
  }
  Loc openLoc = tok.loc;
  consume();
  std::vector<ExprPtr> dims;
  while (true) {
    ExprPtr dim = parseExpr();
    if (!dim)
      return nullptr;
    dims.push_back(std::move(dim));
    if (consumeIf(TokenKind::RBracket))
      break;
    if (!consumeIf(TokenKind::Comma)) {
      errorUnclosed(TokenKind::LBracket, openLoc);
      return nullptr;
    }
  }
  return std::make_unique<InputStmt>(loc, name, dtype, dtypeLoc,
                                     std::move(dims));
}

/// model-only ::= 'optimizer' IDENT '(' [ args ] ')'
///              | 'scheduler' IDENT '(' [ args ] ')'
///              | 'clip_grad_norm' '(' [ args ] ')'
StmtPtr Parser::parseOptimizer() {
  Loc loc = tok.loc;
  TrainingSetting setting = tok.is(TokenKind::KwOptimizer)   ? TrainingSetting::Optimizer
                            : tok.is(TokenKind::KwScheduler) ? TrainingSetting::Scheduler
                                                             : TrainingSetting::ClipGradNorm;
  std::string keyword = tok.text.str();
  consume();
  Loc nameLoc = setting == TrainingSetting::ClipGradNorm ? loc : tok.loc;
  std::string name = keyword;
  if (setting != TrainingSetting::ClipGradNorm &&
      !parseIdentifier(name, keyword + " name after '" + keyword + "'"))
    return nullptr;
  if (!tok.is(TokenKind::LParen)) {
    errorExpected(setting == TrainingSetting::ClipGradNorm ? "'(' after 'clip_grad_norm'"
                                                           : "'(' after " + keyword + " name");
    return nullptr;
  }
  Loc openLoc = tok.loc;
  consume();
  std::vector<Argument> args;
  if (!parseArgs(openLoc, args))
    return nullptr;
  auto callee = std::make_unique<NameExpr>(nameLoc, name);
  auto call =
      std::make_unique<CallExpr>(nameLoc, std::move(callee), std::move(args));
  return std::make_unique<OptimizerStmt>(loc, setting, std::move(call));
}

/// stmt ::= 'return' expr { ',' expr }
StmtPtr Parser::parseReturn() {
  Loc loc = tok.loc;
  consume();
  std::vector<ExprPtr> values;
  do {
    ExprPtr value = parseExpr();
    if (!value)
      return nullptr;
    values.push_back(std::move(value));
  } while (consumeIf(TokenKind::Comma));
  return std::make_unique<ReturnStmt>(loc, std::move(values));
}

/// if ::= 'if' expr block [ 'else' ( if | block ) ]
StmtPtr Parser::parseIf(Scope scope) {
  Loc loc = tok.loc;
  consume();
  scope.nested = true;
  ExprPtr cond = parseExpr();
  if (!cond)
    return nullptr;
  Block thenBody, elseBody;
  if (!parseBlock(scope, "'if'", thenBody))
    return nullptr;
  if (consumeIf(TokenKind::KwElse)) {
    if (tok.is(TokenKind::KwIf)) {
      // `else if` nests an IfStmt, so a long chain is deep nesting too.
      Nesting nesting(*this);
      if (!nesting.enter())
        return nullptr;
      StmtPtr elseIf = parseIf(scope);
      if (!elseIf)
        return nullptr;
      elseBody.push_back(std::move(elseIf));
    } else if (!tok.is(TokenKind::LBrace)) {
      errorExpected("'{' or 'if' after 'else'");
      return nullptr;
    } else if (!parseBlock(scope, "'else'", elseBody)) {
      return nullptr;
    }
  }
  return std::make_unique<IfStmt>(loc, std::move(cond), std::move(thenBody),
                                  std::move(elseBody));
}

/// for ::= 'for' IDENT 'in' 'range' '(' expr [ ',' expr ] ')' block
StmtPtr Parser::parseFor(Scope scope) {
  Loc loc = tok.loc;
  consume();
  scope.nested = true;
  std::string var;
  if (!parseIdentifier(var, "loop variable name after 'for'"))
    return nullptr;
  if (!consumeIf(TokenKind::KwIn)) {
    errorExpected("'in' after loop variable");
    return nullptr;
  }
  if (!consumeIf(TokenKind::KwRange)) {
    errorExpected("'range' after 'in'");
    return nullptr;
  }
  if (!tok.is(TokenKind::LParen)) {
    errorExpected("'(' after 'range'");
    return nullptr;
  }
  Loc openLoc = tok.loc;
  consume();
  ExprPtr start, stop = parseExpr();
  if (!stop)
    return nullptr;
  if (consumeIf(TokenKind::Comma)) {
    start = std::move(stop);
    stop = parseExpr();
    if (!stop)
      return nullptr;
  }
  if (!consumeIf(TokenKind::RParen)) {
    errorUnclosed(TokenKind::LParen, openLoc);
    return nullptr;
  }
  Block body;
  if (!parseBlock(scope, "'for'", body))
    return nullptr;
  return std::make_unique<ForStmt>(loc, var, std::move(start), std::move(stop),
                                   std::move(body));
}

/// stmt ::= 'checkpoint' block
StmtPtr Parser::parseCheckpoint() {
  Loc loc = tok.loc;
  consume();
  Block body;
  if (!parseBlock({BodyKind::Function}, "'checkpoint'", body))
    return nullptr;
  return std::make_unique<AnnotatedStmt>(loc, Annotation::Checkpoint, nullptr,
                                         "", loc, std::move(body));
}

/// stmt ::= 'on' 'device' expr block
StmtPtr Parser::parseOnDevice() {
  Loc loc = tok.loc;
  consume();
  if (!consumeIf(TokenKind::KwDevice)) {
    errorExpected("'device' after 'on'");
    return nullptr;
  }
  Loc argLoc = tok.loc;
  ExprPtr device = parseExpr();
  if (!device)
    return nullptr;
  Block body;
  if (!parseBlock({BodyKind::Function}, "'on device'", body))
    return nullptr;
  return std::make_unique<AnnotatedStmt>(loc, Annotation::Device,
                                         std::move(device), "", argLoc,
                                         std::move(body));
}

/// stmt       ::= 'precision' DTYPE block
/// model-only ::= 'precision' DTYPE   (the model's: no block)
StmtPtr Parser::parsePrecision(bool modelLevel) {
  Loc loc = tok.loc;
  consume();
  // The dtype is kept as written; the elaborator checks it.
  Loc argLoc = tok.loc;
  std::string dtype;
  if (!parseIdentifier(dtype, "a dtype after 'precision'"))
    return nullptr;
  Block body;
  if (modelLevel && tok.is(TokenKind::LBrace)) {
    error(tok.loc, "a model's 'precision' has no block; regions 'precision f32 { ... }' "
                   "go inside forward or loss");
    return nullptr;
  }
  if (!modelLevel && !parseBlock({BodyKind::Function}, "'precision'", body))
    return nullptr;
  auto stmt = std::make_unique<AnnotatedStmt>(loc, Annotation::Precision, nullptr, dtype,
                                              argLoc, std::move(body));
  stmt->modelLevel = modelLevel;
  return stmt;
}

/// assign ::= IDENT [ '[' expr ']' ] '=' expr
///          | IDENT ',' IDENT { ',' IDENT } '=' expr
/// stmt   ::= expr
/// Parsed as an expression first; a following `=` makes it an assignment.
StmtPtr Parser::parseAssignOrExpr(Scope scope) {
  Loc loc = tok.loc;
  ExprPtr expr = parseExpr();
  if (!expr)
    return nullptr;
  const bool unpack =
      llvm::isa<NameExpr>(expr.get()) && tok.is(TokenKind::Comma);
  if (!tok.is(TokenKind::Assign) && !unpack) {
    if (reportMisspelledKeyword(scope, *expr))
      return nullptr;
    return std::make_unique<ExprStmt>(loc, std::move(expr));
  }

  std::string target;
  ExprPtr index;
  std::vector<std::pair<std::string, Loc>> moreTargets;
  if (auto *name = llvm::dyn_cast<NameExpr>(expr.get()); name && unpack) {
    // `q, k, v = qkv.unbind(0)`: names only.
    target = name->name;
    while (consumeIf(TokenKind::Comma)) {
      Loc nameLoc = tok.loc;
      std::string more;
      if (!parseIdentifier(more, "a name to assign to after ','"))
        return nullptr;
      moreTargets.emplace_back(std::move(more), nameLoc);
    }
    if (!tok.is(TokenKind::Assign)) {
      errorExpected("'=' after the names to assign to");
      return nullptr;
    }
  } else if (auto *name = llvm::dyn_cast<NameExpr>(expr.get())) {
    target = name->name;
  } else if (auto *indexed = llvm::dyn_cast<IndexExpr>(expr.get());
             indexed && llvm::isa<NameExpr>(indexed->base.get()) &&
             indexed->items.size() == 1 && !indexed->items[0].isSlice) {
    target = llvm::cast<NameExpr>(indexed->base.get())->name;
    index = std::move(indexed->items[0].index);
  } else {
    error(loc, "expected a name or 'name[index]' before '='");
    return nullptr;
  }
  consume(); // '='
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  auto assign = std::make_unique<AssignStmt>(loc, target, std::move(index),
                                             std::move(value));
  assign->moreTargets = std::move(moreTargets);
  return assign;
}

/// A statement that begins with a misspelled keyword parses as a name (or a
/// call, for `foward(x) {`) followed by what the keyword takes; the parse
/// would then fail at that next word, past the typo. Where the statement
/// does not end there and its first word is close to a keyword allowed
/// here, this reports the typo at the word itself and returns true.
bool Parser::reportMisspelledKeyword(const Scope &scope, const Expr &expr) {
  if (atStatementEnd())
    return false;
  const Expr *word = &expr;
  if (auto *call = llvm::dyn_cast<CallExpr>(word)) {
    // `foward(x) {`: a function header.
    if (!tok.is(TokenKind::LBrace))
      return false;
    word = call->callee.get();
  }
  auto *name = llvm::dyn_cast<NameExpr>(word);
  if (!name)
    return false;
  llvm::StringRef keyword =
      closestKeyword(name->name, statementKeywords(scope));
  if (keyword.empty())
    return false;
  error(name->getLoc(), "unknown statement '" + name->name +
                            "'; did you mean '" + keyword + "'?");
  return true;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// expr ::= or-expr
ExprPtr Parser::parseExpr() {
  Nesting nesting(*this);
  if (!nesting.enter())
    return nullptr;
  return parseOr();
}

namespace {
/// The binary operator a token spells, if any, within one precedence level.
std::optional<BinaryOp> binaryOpOf(TokenKind kind) {
  switch (kind) {
  case TokenKind::KwOr: return BinaryOp::Or;
  case TokenKind::KwAnd: return BinaryOp::And;
  case TokenKind::EqEq: return BinaryOp::Eq;
  case TokenKind::NotEq: return BinaryOp::Ne;
  case TokenKind::Less: return BinaryOp::Lt;
  case TokenKind::LessEq: return BinaryOp::Le;
  case TokenKind::Greater: return BinaryOp::Gt;
  case TokenKind::GreaterEq: return BinaryOp::Ge;
  case TokenKind::Plus: return BinaryOp::Add;
  case TokenKind::Minus: return BinaryOp::Sub;
  case TokenKind::Star: return BinaryOp::Mul;
  case TokenKind::Slash: return BinaryOp::Div;
  case TokenKind::SlashSlash: return BinaryOp::FloorDiv;
  case TokenKind::Percent: return BinaryOp::Mod;
  case TokenKind::At: return BinaryOp::MatMul;
  case TokenKind::StarStar: return BinaryOp::Pow;
  default: return std::nullopt;
  }
}

bool isComparison(BinaryOp op) {
  return op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::Lt ||
         op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge;
}
} // namespace

/// Parses `operand { op operand }` for the operators `ops` of one precedence
/// level, left-associatively.
ExprPtr Parser::parseLeftAssociative(ExprPtr (Parser::*operand)(),
                                     std::initializer_list<TokenKind> ops) {
  Loc loc = tok.loc;
  ExprPtr lhs = (this->*operand)();
  // Each operator nests the tree one level deeper.
  Nesting nesting(*this);
  while (lhs && llvm::is_contained(ops, tok.kind)) {
    if (!nesting.enter())
      return nullptr;
    BinaryOp op = *binaryOpOf(tok.kind);
    consume();
    ExprPtr rhs = (this->*operand)();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

/// or-expr ::= and-expr { 'or' and-expr }
ExprPtr Parser::parseOr() {
  return parseLeftAssociative(&Parser::parseAnd, {TokenKind::KwOr});
}

/// and-expr ::= not-expr { 'and' not-expr }
ExprPtr Parser::parseAnd() {
  return parseLeftAssociative(&Parser::parseNot, {TokenKind::KwAnd});
}

/// not-expr ::= 'not' not-expr | comparison
ExprPtr Parser::parseNot() {
  if (!tok.is(TokenKind::KwNot))
    return parseComparison();
  Loc loc = tok.loc;
  Nesting nesting(*this);
  if (!nesting.enter())
    return nullptr;
  consume();
  ExprPtr operand = parseNot();
  if (!operand)
    return nullptr;
  return std::make_unique<UnaryExpr>(loc, UnaryOp::Not, std::move(operand));
}

/// comparison ::= sum [ ( '==' | '!=' | '<' | '<=' | '>' | '>=' ) sum ]
ExprPtr Parser::parseComparison() {
  Loc loc = tok.loc;
  ExprPtr lhs = parseSum();
  if (!lhs)
    return nullptr;
  std::optional<BinaryOp> op = binaryOpOf(tok.kind);
  if (!op || !isComparison(*op))
    return lhs;
  consume();
  ExprPtr rhs = parseSum();
  if (!rhs)
    return nullptr;
  std::optional<BinaryOp> next = binaryOpOf(tok.kind);
  if (next && isComparison(*next)) {
    error(tok.loc, "comparisons cannot be chained: found " + tok.describe() +
                       " after a comparison");
    return nullptr;
  }
  return std::make_unique<BinaryExpr>(loc, *op, std::move(lhs), std::move(rhs));
}

/// sum ::= term { ( '+' | '-' ) term }
ExprPtr Parser::parseSum() {
  return parseLeftAssociative(&Parser::parseTerm, {TokenKind::Plus, TokenKind::Minus});
}

/// term ::= unary { ( '*' | '/' | '//' | '%' | '@' ) unary }
ExprPtr Parser::parseTerm() {
  return parseLeftAssociative(&Parser::parseUnary,
                              {TokenKind::Star, TokenKind::Slash, TokenKind::SlashSlash,
                               TokenKind::Percent, TokenKind::At});
}

/// unary ::= ( '-' | '+' ) unary | power
ExprPtr Parser::parseUnary() {
  if (!tok.is(TokenKind::Minus) && !tok.is(TokenKind::Plus))
    return parsePower();
  Loc loc = tok.loc;
  UnaryOp op = tok.is(TokenKind::Minus) ? UnaryOp::Neg : UnaryOp::Plus;
  Nesting nesting(*this);
  if (!nesting.enter())
    return nullptr;
  consume();
  ExprPtr operand = parseUnary();
  if (!operand)
    return nullptr;
  return std::make_unique<UnaryExpr>(loc, op, std::move(operand));
}

/// power ::= postfix [ '**' unary ]
ExprPtr Parser::parsePower() {
  Loc loc = tok.loc;
  ExprPtr base = parsePostfix();
  if (!base || !tok.is(TokenKind::StarStar))
    return base;
  Nesting nesting(*this);
  if (!nesting.enter())
    return nullptr;
  consume();
  ExprPtr exponent = parseUnary();
  if (!exponent)
    return nullptr;
  return std::make_unique<BinaryExpr>(loc, BinaryOp::Pow, std::move(base),
                                      std::move(exponent));
}

/// postfix ::= primary { '(' [ args ] ')' | '[' index { ',' index } ']'
///                     | '.' IDENT }
ExprPtr Parser::parsePostfix() {
  Loc loc = tok.loc;
  ExprPtr expr = parsePrimary();
  Nesting nesting(*this);
  while (expr && (tok.is(TokenKind::LParen) || tok.is(TokenKind::LBracket) ||
                  tok.is(TokenKind::Dot))) {
    if (!nesting.enter())
      return nullptr;
    Loc openLoc = tok.loc;
    if (consumeIf(TokenKind::LParen)) {
      std::vector<Argument> args;
      if (!parseArgs(openLoc, args))
        return nullptr;
      expr = std::make_unique<CallExpr>(loc, std::move(expr), std::move(args));
    } else if (consumeIf(TokenKind::LBracket)) {
      std::vector<IndexItem> items;
      while (true) {
        IndexItem item;
        if (!parseIndexItem(item))
          return nullptr;
        items.push_back(std::move(item));
        if (consumeIf(TokenKind::RBracket))
          break;
        if (!consumeIf(TokenKind::Comma)) {
          errorUnclosed(TokenKind::LBracket, openLoc);
          return nullptr;
        }
      }
      expr = std::make_unique<IndexExpr>(loc, std::move(expr), std::move(items));
    } else {
      consume(); // '.'
      std::string member;
      if (!parseIdentifier(member, "a member name after '.'"))
        return nullptr;
      expr = std::make_unique<MemberExpr>(loc, std::move(expr), member);
    }
  }
  return expr;
}

/// args ::= arg { ',' arg } [ ',' ]   # positional arguments before keyword ones
/// arg  ::= expr | IDENT '=' expr
/// Called after the '('; consumes the ')'.
bool Parser::parseArgs(Loc openLoc, std::vector<Argument> &args) {
  llvm::StringSet<> keywords;
  while (!tok.is(TokenKind::RParen)) {
    Argument arg;
    arg.loc = tok.loc;
    arg.value = parseExpr();
    if (!arg.value)
      return false;
    if (consumeIf(TokenKind::Assign)) {
      auto *name = llvm::dyn_cast<NameExpr>(arg.value.get());
      if (!name) {
        error(arg.loc, "expected a parameter name before '=' in a keyword "
                       "argument");
        return false;
      }
      arg.name = name->name;
      if (!keywords.insert(arg.name).second)
        error(arg.loc, "duplicate keyword argument '" + arg.name + "'");
      arg.value = parseExpr();
      if (!arg.value)
        return false;
    } else if (!keywords.empty()) {
      error(arg.loc, "positional argument after keyword arguments");
    }
    args.push_back(std::move(arg));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (!tok.is(TokenKind::RParen)) {
      errorUnclosed(TokenKind::LParen, openLoc);
      return false;
    }
  }
  consume(); // ')'
  return true;
}

/// index ::= expr | [ expr ] ':' [ expr ] [ ':' [ expr ] ]
bool Parser::parseIndexItem(IndexItem &item) {
  item.loc = tok.loc;
  ExprPtr first;
  if (!tok.is(TokenKind::Colon)) {
    first = parseExpr();
    if (!first)
      return false;
  }
  if (!consumeIf(TokenKind::Colon)) {
    item.index = std::move(first);
    return true;
  }
  item.isSlice = true;
  item.start = std::move(first);
  auto endsPart = [&] {
    return tok.is(TokenKind::Colon) || tok.is(TokenKind::Comma) ||
           tok.is(TokenKind::RBracket);
  };
  if (!endsPart() && !(item.stop = parseExpr()))
    return false;
  if (consumeIf(TokenKind::Colon) && !endsPart() && !(item.step = parseExpr()))
    return false;
  return true;
}

/// primary ::= INT | FLOAT | STRING | 'true' | 'false' | 'None' | IDENT
///           | '(' expr ')' | '(' [ expr ',' { expr ',' } [ expr ] ] ')'
///           | '[' [ expr { ',' expr } ] ']'
ExprPtr Parser::parsePrimary() {
  Loc loc = tok.loc;
  ExprPtr expr;
  switch (tok.kind) {
  case TokenKind::Int:
    expr = std::make_unique<IntExpr>(loc, tok.intValue);
    break;
  case TokenKind::Float:
    expr = std::make_unique<FloatExpr>(loc, tok.floatValue);
    break;
  case TokenKind::String:
    expr = std::make_unique<StringExpr>(loc, std::move(tok.stringValue));
    break;
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
    expr = std::make_unique<BoolExpr>(loc, tok.is(TokenKind::KwTrue));
    break;
  case TokenKind::KwNone:
    expr = std::make_unique<NoneExpr>(loc);
    break;
  case TokenKind::Identifier:
    expr = std::make_unique<NameExpr>(loc, tok.text.str());
    break;
  case TokenKind::LParen:
    return parseParenthesized();
  case TokenKind::LBracket:
    return parseList();
  default:
    errorExpected("expression");
    return nullptr;
  }
  consume();
  return expr;
}

/// primary ::= '(' expr ')' | '(' [ expr ',' { expr ',' } [ expr ] ] ')'
ExprPtr Parser::parseParenthesized() {
  Loc openLoc = tok.loc;
  consume();
  std::vector<ExprPtr> elements;
  bool isTuple = false;
  while (!tok.is(TokenKind::RParen)) {
    ExprPtr element = parseExpr();
    if (!element)
      return nullptr;
    elements.push_back(std::move(element));
    if (consumeIf(TokenKind::Comma)) {
      isTuple = true;
      continue;
    }
    if (!tok.is(TokenKind::RParen)) {
      errorUnclosed(TokenKind::LParen, openLoc);
      return nullptr;
    }
  }
  consume(); // ')'
  if (elements.size() == 1 && !isTuple)
    return std::move(elements.front());
  return std::make_unique<TupleExpr>(openLoc, std::move(elements),
                                     /*isList=*/false);
}

/// primary ::= '[' [ expr { ',' expr } ] ']'
ExprPtr Parser::parseList() {
  Loc openLoc = tok.loc;
  consume();
  std::vector<ExprPtr> elements;
  if (!consumeIf(TokenKind::RBracket)) {
    while (true) {
      ExprPtr element = parseExpr();
      if (!element)
        return nullptr;
      elements.push_back(std::move(element));
      if (consumeIf(TokenKind::RBracket))
        break;
      if (!consumeIf(TokenKind::Comma)) {
        errorUnclosed(TokenKind::LBracket, openLoc);
        return nullptr;
      }
    }
  }
  return std::make_unique<TupleExpr>(openLoc, std::move(elements),
                                     /*isList=*/true);
}

std::unique_ptr<ModelFile> cairn::parseModelFile(llvm::StringRef source,
                                             DiagnosticReporter &diag) {
  return Parser(source, diag).parseFile();
}
