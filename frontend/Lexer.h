//===- Lexer.h - Tokens of a .cairn model file ------------------*- C++ -*-===//
//
// Splits a model file into tokens with 1-based line and column. Newlines end
// statements, except inside ( ) and [ ] where long calls may span lines.
//
// The lexer is also the single gate for syntax errors (its own and the
// parser's), to keep one mistake from being reported several times: it drops
// a second error at a position that already has one, and a parser error
// later on the line of a lexer error. After DiagnosticReporter::kMaxErrors
// errors it reports "too many errors, stopping" and from then on returns only
// end of file, so that every parser loop ends.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_FRONTEND_LEXER_H
#define CAIRN_FRONTEND_LEXER_H

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace cairn {

enum class TokenKind {
  EndOfFile,
  Newline,
  Identifier,
  Int,
  Float,
  String,

  // Keywords.
  KwModule, KwModel, KwBatch, KwInput, KwOptimizer, KwScheduler, KwClipGradNorm,
  KwForward, KwLoss,
  KwReturn, KwIf, KwElse, KwFor, KwIn, KwRange, KwCheckpoint, KwOn, KwDevice,
  KwPrecision, KwAnd, KwOr, KwNot, KwTrue, KwFalse, KwNone,

  // Punctuation.
  LParen, RParen, LBracket, RBracket, LBrace, RBrace,
  Comma, Colon, Semicolon, Dot, Assign,

  // Operators.
  Plus, Minus, Star, Slash, SlashSlash, Percent, At, StarStar,
  EqEq, NotEq, Less, LessEq, Greater, GreaterEq,
};

/// How a token kind is written, for messages like "expected ')'".
llvm::StringRef spellingOf(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::EndOfFile;
  llvm::StringRef text; // as written in the source
  ast::Loc loc;
  int64_t intValue = 0;      // Int
  double floatValue = 0;     // Float
  std::string stringValue;   // String, escapes resolved

  bool is(TokenKind k) const { return kind == k; }
  /// The token for a message: 'text' (shortened when long), "newline" or
  /// "end of file".
  std::string describe() const;
};

class Lexer {
public:
  Lexer(llvm::StringRef source, DiagnosticReporter &diag);

  /// Returns the next token; end of file forever once the input is used up
  /// or errors have stopped.
  Token next();

  /// Reports a syntax error found by the parser at `loc`, unless the file
  /// comment says it is dropped.
  void error(ast::Loc loc, const llvm::Twine &message);

  /// Ends the token stream now, e.g. when nesting is too deep to go on.
  void stop() { stopped = true; }
  bool isStopped() const { return stopped; }

private:
  ast::Loc locOf(const char *p) const;
  /// Reports an error of the lexer itself.
  void lexError(ast::Loc loc, const llvm::Twine &message);
  bool report(ast::Loc loc, const llvm::Twine &message);
  void skipWhitespaceAndComments();
  Token make(TokenKind kind, const char *start);
  Token lexIdentifierOrKeyword(const char *start);
  Token lexNumber(const char *start);
  Token lexString(const char *start);
  void lexInvalidCharacters(const char *start);

  const char *bufferEnd;
  const char *cur;
  // Line bookkeeping for columns: the line number of `cur` and where that
  // line starts.
  unsigned line = 1;
  const char *lineStart;
  // Open ( and [ that suppress newlines.
  unsigned bracketDepth = 0;
  ast::Loc endOfFileLoc;

  DiagnosticReporter &diag;
  std::set<std::pair<unsigned, unsigned>> errorPositions;
  std::optional<ast::Loc> lastLexErrorLoc;
  bool stopped = false;
};

} // namespace cairn

#endif // CAIRN_FRONTEND_LEXER_H
