//===- Lexer.cpp - Tokens of a .cairn model file --------------------------===//

#include "frontend/Lexer.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <limits>

using namespace cairn;

llvm::StringRef cairn::spellingOf(TokenKind kind) {
  switch (kind) {
  case TokenKind::EndOfFile: return "end of file";
  case TokenKind::Newline: return "newline";
  case TokenKind::Identifier: return "identifier";
  case TokenKind::Int: return "integer";
  case TokenKind::Float: return "float";
  case TokenKind::String: return "string";
  case TokenKind::KwModule: return "'module'";
  case TokenKind::KwModel: return "'model'";
  case TokenKind::KwBatch: return "'batch'";
  case TokenKind::KwInput: return "'input'";
  case TokenKind::KwOptimizer: return "'optimizer'";
  case TokenKind::KwScheduler: return "'scheduler'";
  case TokenKind::KwClipGradNorm: return "'clip_grad_norm'";
  case TokenKind::KwForward: return "'forward'";
  case TokenKind::KwLoss: return "'loss'";
  case TokenKind::KwReturn: return "'return'";
  case TokenKind::KwIf: return "'if'";
  case TokenKind::KwElse: return "'else'";
  case TokenKind::KwFor: return "'for'";
  case TokenKind::KwIn: return "'in'";
  case TokenKind::KwRange: return "'range'";
  case TokenKind::KwCheckpoint: return "'checkpoint'";
  case TokenKind::KwOn: return "'on'";
  case TokenKind::KwDevice: return "'device'";
  case TokenKind::KwPrecision: return "'precision'";
  case TokenKind::KwAnd: return "'and'";
  case TokenKind::KwOr: return "'or'";
  case TokenKind::KwNot: return "'not'";
  case TokenKind::KwTrue: return "'true'";
  case TokenKind::KwFalse: return "'false'";
  case TokenKind::KwNone: return "'None'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::Comma: return "','";
  case TokenKind::Colon: return "':'";
  case TokenKind::Semicolon: return "';'";
  case TokenKind::Dot: return "'.'";
  case TokenKind::Assign: return "'='";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::SlashSlash: return "'//'";
  case TokenKind::Percent: return "'%'";
  case TokenKind::At: return "'@'";
  case TokenKind::StarStar: return "'**'";
  case TokenKind::EqEq: return "'=='";
  case TokenKind::NotEq: return "'!='";
  case TokenKind::Less: return "'<'";
  case TokenKind::LessEq: return "'<='";
  case TokenKind::Greater: return "'>'";
  case TokenKind::GreaterEq: return "'>='";
  }
  return "token";
}

/// Source text for a message: long tokens (a 10 MB identifier) are cut.
static std::string shortened(llvm::StringRef text) {
  constexpr size_t kMaxShown = 32;
  if (text.size() <= kMaxShown)
    return text.str();
  return text.take_front(kMaxShown).str() + "...";
}

std::string Token::describe() const {
  if (kind == TokenKind::EndOfFile || kind == TokenKind::Newline)
    return spellingOf(kind).str();
  return "'" + shortened(text) + "'";
}

/// A byte as it can be shown in a message: itself, or `\xNN`.
static std::string printableByte(unsigned char c) {
  if (llvm::isPrint(c))
    return std::string(1, static_cast<char>(c));
  return std::string("\\x") + llvm::hexdigit(c >> 4, /*LowerCase=*/true) +
         llvm::hexdigit(c & 15, /*LowerCase=*/true);
}

static bool isIdentifierStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isIdentifierChar(char c) { return llvm::isAlnum(c) || c == '_'; }

/// End of file is shown at the end of the last line (on its final newline,
/// if any), so that it lands on a line that exists.
static ast::Loc endOfFileLocOf(llvm::StringRef source) {
  if (source.ends_with("\n"))
    source = source.drop_back();
  size_t lines = std::count(source.begin(), source.end(), '\n');
  size_t lastLineStart = source.rfind('\n');
  lastLineStart = lastLineStart == llvm::StringRef::npos ? 0 : lastLineStart + 1;
  return {static_cast<unsigned>(lines) + 1,
          static_cast<unsigned>(source.size() - lastLineStart) + 1};
}

Lexer::Lexer(llvm::StringRef source, DiagnosticReporter &diag)
    : bufferEnd(source.end()), cur(source.begin()),
      lineStart(source.begin()), endOfFileLoc(endOfFileLocOf(source)),
      diag(diag) {}

ast::Loc Lexer::locOf(const char *p) const {
  return {line, static_cast<unsigned>(p - lineStart) + 1};
}

void Lexer::error(ast::Loc loc, const llvm::Twine &message) {
  if (lastLexErrorLoc && loc.line == lastLexErrorLoc->line &&
      loc.col > lastLexErrorLoc->col)
    return;
  report(loc, message);
}

void Lexer::lexError(ast::Loc loc, const llvm::Twine &message) {
  if (report(loc, message))
    lastLexErrorLoc = loc;
}

bool Lexer::report(ast::Loc loc, const llvm::Twine &message) {
  if (stopped || !errorPositions.insert({loc.line, loc.col}).second)
    return false;
  if (diag.tooManyErrors()) {
    diag.error(loc) << "too many errors, stopping";
    stopped = true;
    return false;
  }
  diag.error(loc) << message.str();
  return true;
}

void Lexer::skipWhitespaceAndComments() {
  while (cur != bufferEnd) {
    char c = *cur;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++cur;
    } else if (c == '#') {
      const char *newline = std::find(cur, bufferEnd, '\n');
      cur = newline;
    } else if (c == '\n' && bracketDepth > 0) {
      ++cur;
      ++line;
      lineStart = cur;
    } else {
      return;
    }
  }
}

Token Lexer::make(TokenKind kind, const char *start) {
  Token token;
  token.kind = kind;
  token.text = llvm::StringRef(start, cur - start);
  token.loc = locOf(start);
  return token;
}

Token Lexer::next() {
  while (!stopped) {
    skipWhitespaceAndComments();
    if (cur == bufferEnd)
      break;
    const char *start = cur;
    char c = *cur++;
    auto followedBy = [&](char expected) {
      if (cur != bufferEnd && *cur == expected) {
        ++cur;
        return true;
      }
      return false;
    };
    if (isIdentifierStart(c))
      return lexIdentifierOrKeyword(start);
    if (llvm::isDigit(c) ||
        (c == '.' && cur != bufferEnd && llvm::isDigit(*cur)))
      return lexNumber(start);
    switch (c) {
    case '\n': {
      Token token = make(TokenKind::Newline, start);
      ++line;
      lineStart = cur;
      return token;
    }
    case '"':
    case '\'':
      return lexString(start);
    case '(':
    case '[':
      ++bracketDepth;
      return make(c == '(' ? TokenKind::LParen : TokenKind::LBracket, start);
    case ')':
    case ']':
      bracketDepth -= bracketDepth > 0;
      return make(c == ')' ? TokenKind::RParen : TokenKind::RBracket, start);
    case '{':
    case '}':
      // Braces never appear inside ( ) or [ ] in a valid file, so a brace
      // means a bracket was left open: forget it, so that newlines end
      // statements again and the parser can recover.
      bracketDepth = 0;
      return make(c == '{' ? TokenKind::LBrace : TokenKind::RBrace, start);
    case ',': return make(TokenKind::Comma, start);
    case ':': return make(TokenKind::Colon, start);
    case ';': return make(TokenKind::Semicolon, start);
    case '.': return make(TokenKind::Dot, start);
    case '+': return make(TokenKind::Plus, start);
    case '-': return make(TokenKind::Minus, start);
    case '%': return make(TokenKind::Percent, start);
    case '@': return make(TokenKind::At, start);
    case '*':
      return make(followedBy('*') ? TokenKind::StarStar : TokenKind::Star,
                  start);
    case '/':
      return make(followedBy('/') ? TokenKind::SlashSlash : TokenKind::Slash,
                  start);
    case '=':
      return make(followedBy('=') ? TokenKind::EqEq : TokenKind::Assign, start);
    case '<':
      return make(followedBy('=') ? TokenKind::LessEq : TokenKind::Less, start);
    case '>':
      return make(followedBy('=') ? TokenKind::GreaterEq : TokenKind::Greater,
                  start);
    case '!':
      return make(followedBy('=') ? TokenKind::NotEq : TokenKind::KwNot, start);
    case '&':
      if (followedBy('&'))
        return make(TokenKind::KwAnd, start);
      break;
    case '|':
      if (followedBy('|'))
        return make(TokenKind::KwOr, start);
      break;
    default:
      break;
    }
    cur = start;
    lexInvalidCharacters(start);
  }
  Token eof;
  eof.loc = endOfFileLoc;
  return eof;
}

/// Reports one error for a run of characters that start no token (binary
/// garbage would otherwise use up the error limit at once) and skips them.
void Lexer::lexInvalidCharacters(const char *start) {
  auto isInvalid = [&](const char *p) {
    char c = *p;
    if (isIdentifierChar(c) ||
        llvm::StringRef(" \t\r\f\v\n#\"'()[]{},:;.=+-*/%@<>!").contains(c))
      return false;
    if (c == '&' || c == '|')
      return !(p + 1 != bufferEnd && p[1] == c);
    return true;
  };
  lexError(locOf(start), "invalid character '" +
                          printableByte(static_cast<unsigned char>(*start)) +
                          "'");
  cur = start + 1;
  while (cur != bufferEnd && isInvalid(cur))
    ++cur;
}

Token Lexer::lexIdentifierOrKeyword(const char *start) {
  while (cur != bufferEnd && isIdentifierChar(*cur))
    ++cur;
  llvm::StringRef text(start, cur - start);
  TokenKind kind = llvm::StringSwitch<TokenKind>(text)
                       .Case("module", TokenKind::KwModule)
                       .Case("model", TokenKind::KwModel)
                       .Case("batch", TokenKind::KwBatch)
                       .Case("input", TokenKind::KwInput)
                       .Case("optimizer", TokenKind::KwOptimizer)
                       .Case("scheduler", TokenKind::KwScheduler)
                       .Case("clip_grad_norm", TokenKind::KwClipGradNorm)
                       .Case("forward", TokenKind::KwForward)
                       .Case("loss", TokenKind::KwLoss)
                       .Case("return", TokenKind::KwReturn)
                       .Case("if", TokenKind::KwIf)
                       .Case("else", TokenKind::KwElse)
                       .Case("for", TokenKind::KwFor)
                       .Case("in", TokenKind::KwIn)
                       .Case("range", TokenKind::KwRange)
                       .Case("checkpoint", TokenKind::KwCheckpoint)
                       .Case("on", TokenKind::KwOn)
                       .Case("device", TokenKind::KwDevice)
                       .Case("precision", TokenKind::KwPrecision)
                       .Case("and", TokenKind::KwAnd)
                       .Case("or", TokenKind::KwOr)
                       .Case("not", TokenKind::KwNot)
                       .Cases({"true", "True"}, TokenKind::KwTrue)
                       .Cases({"false", "False"}, TokenKind::KwFalse)
                       .Case("None", TokenKind::KwNone)
                       .Default(TokenKind::Identifier);
  return make(kind, start);
}

/// INT: decimal or `0x` hex. FLOAT: `1.5`, `1e-3`, `.5`, `5.`.
Token Lexer::lexNumber(const char *start) {
  auto skipDigits = [&](auto isDigit) {
    while (cur != bufferEnd && isDigit(*cur))
      ++cur;
  };
  auto isDecimal = [](char c) { return llvm::isDigit(c); };
  bool isHex = *start == '0' && cur != bufferEnd && (*cur == 'x' || *cur == 'X');
  bool isFloat = false;
  if (isHex) {
    ++cur;
    skipDigits([](char c) { return llvm::isHexDigit(c); });
  } else {
    cur = start;
    skipDigits(isDecimal);
    if (cur != bufferEnd && *cur == '.') {
      isFloat = true;
      ++cur;
      skipDigits(isDecimal);
    }
    auto at = [&](const char *p) { return p < bufferEnd ? *p : '\0'; };
    if ((at(cur) == 'e' || at(cur) == 'E') &&
        (llvm::isDigit(at(cur + 1)) ||
         ((at(cur + 1) == '+' || at(cur + 1) == '-') &&
          llvm::isDigit(at(cur + 2))))) {
      isFloat = true;
      cur += 2;
      skipDigits(isDecimal);
    }
  }

  // `3x` or `0x` alone: one error for the whole word, not one per piece.
  bool malformed = isHex && cur - start == 2;
  while (cur != bufferEnd && isIdentifierChar(*cur)) {
    ++cur;
    malformed = true;
  }
  Token token = make(isFloat ? TokenKind::Float : TokenKind::Int, start);
  if (malformed) {
    lexError(token.loc, "invalid number literal '" + shortened(token.text) + "'");
    return token;
  }

  if (isFloat) {
    llvm::APFloat value(llvm::APFloat::IEEEdouble());
    auto status =
        value.convertFromString(token.text, llvm::APFloat::rmNearestTiesToEven);
    if (!status || (*status & llvm::APFloat::opOverflow)) {
      if (!status)
        llvm::consumeError(status.takeError());
      lexError(token.loc, "float literal '" + shortened(token.text) +
                           "' is out of range for f64");
      return token;
    }
    token.floatValue = value.convertToDouble();
    return token;
  }

  uint64_t value = 0;
  llvm::StringRef digits = isHex ? token.text.drop_front(2) : token.text;
  if (digits.getAsInteger(isHex ? 16 : 10, value) ||
      value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    lexError(token.loc, "integer literal '" + shortened(token.text) +
                         "' is out of range for i64");
    return token;
  }
  token.intValue = static_cast<int64_t>(value);
  return token;
}

/// "..." or '...' on one line, with escapes \n \t \\ \" \'.
Token Lexer::lexString(const char *start) {
  char quote = *start;
  std::string value;
  auto isInvalid = [](char c) {
    return !llvm::isPrint(c) && c != '\t' && c != '\n';
  };
  while (true) {
    if (cur == bufferEnd || *cur == '\n') {
      lexError(locOf(start), "unterminated string literal");
      // A string cannot span lines, so this line is broken: let its newline
      // end the statement even inside ( ).
      bracketDepth = 0;
      break;
    }
    char c = *cur;
    if (c == quote) {
      ++cur;
      break;
    }
    if (c == '\\') {
      ++cur;
      if (cur == bufferEnd || *cur == '\n')
        continue; // reported as unterminated
      char escaped = *cur;
      switch (escaped) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case '\\':
      case '"':
      case '\'':
        value += escaped;
        break;
      default:
        lexError(locOf(cur - 1),
              "invalid escape sequence '\\" +
                  printableByte(static_cast<unsigned char>(escaped)) +
                  "' in string literal");
      }
      ++cur;
      continue;
    }
    if (isInvalid(c)) {
      // One error for a run, as outside strings.
      lexError(locOf(cur), "invalid character '" +
                            printableByte(static_cast<unsigned char>(c)) +
                            "' in string literal");
      while (cur != bufferEnd && isInvalid(*cur))
        ++cur;
      continue;
    }
    value += c;
    ++cur;
  }
  Token token = make(TokenKind::String, start);
  token.stringValue = std::move(value);
  return token;
}
