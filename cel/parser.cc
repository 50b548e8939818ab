#include "cel/parser.h"

#include <charconv>
#include <cstring>
#include <string>
#include <utility>

namespace copse::cel::internal {
namespace {

enum class Tok : uint8_t {
  kEof,
  kIdent,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kNot,
};

struct Token {
  Tok kind = Tok::kEof;
  int32_t offset = 0;
  int32_t length = 0;
  // kInt/kUint: magnitude (and whether it overflowed uint64); kDouble: value
  // text; kString/kBytes: the unescaped value.
  uint64_t magnitude = 0;
  bool overflow = false;
  std::string text;
};

// Thrown to stop at the first syntax error.
struct SyntaxError {
  Issue issue;
};

[[noreturn]] void Fail(int32_t offset, std::string message) {
  throw SyntaxError{Issue{offset, std::move(message)}};
}

const std::string kRecursionLimit =
    "expression recursion limit exceeded: " + std::to_string(kMaxRecursionDepth);

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> Run() {
    std::vector<Token> tokens;
    for (;;) {
      SkipSpaceAndComments();
      Token t;
      t.offset = static_cast<int32_t>(pos_);
      if (pos_ >= src_.size()) {
        tokens.push_back(std::move(t));
        return tokens;
      }
      Scan(t);
      t.length = static_cast<int32_t>(pos_) - t.offset;
      tokens.push_back(std::move(t));
    }
  }

 private:
  char At(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }

  void SkipSpaceAndComments() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '/' && At(pos_ + 1) == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  [[noreturn]] void Unrecognized(size_t at) {
    size_t n = Utf8Length(src_, at);
    if (n == 0) n = 1;
    Fail(static_cast<int32_t>(at),
         "Syntax error: token recognition error at: '" + std::string(src_.substr(at, n)) + "'");
  }

  void Scan(Token& t) {
    char c = src_[pos_];
    if (IsDigit(c) || (c == '.' && IsDigit(At(pos_ + 1)))) return ScanNumber(t);
    if (IsIdentStart(c)) {
      size_t start = pos_;
      while (pos_ < src_.size() && (IsIdentStart(src_[pos_]) || IsDigit(src_[pos_]))) ++pos_;
      std::string_view word = src_.substr(start, pos_ - start);
      char q = At(pos_);
      if (q == '"' || q == '\'') {
        bool bytes = false, raw = false;
        if (word == "r" || word == "R") {
          raw = true;
        } else if (word == "b" || word == "B") {
          bytes = true;
        } else if (word.size() == 2 && (word[0] == 'b' || word[0] == 'B') &&
                   (word[1] == 'r' || word[1] == 'R')) {
          bytes = raw = true;
        }
        if (bytes || raw) return ScanString(t, bytes, raw);
      }
      if (word == "true") {
        t.kind = Tok::kTrue;
      } else if (word == "false") {
        t.kind = Tok::kFalse;
      } else if (word == "null") {
        t.kind = Tok::kNull;
      } else if (word == "in") {
        t.kind = Tok::kIn;
      } else {
        t.kind = Tok::kIdent;
        t.text = std::string(word);
      }
      return;
    }
    if (c == '"' || c == '\'') return ScanString(t, false, false);
    auto two = [&](char next) { return At(pos_ + 1) == next; };
    ++pos_;
    switch (c) {
      case '(':
        t.kind = Tok::kLParen;
        return;
      case ')':
        t.kind = Tok::kRParen;
        return;
      case '[':
        t.kind = Tok::kLBracket;
        return;
      case ']':
        t.kind = Tok::kRBracket;
        return;
      case '{':
        t.kind = Tok::kLBrace;
        return;
      case '}':
        t.kind = Tok::kRBrace;
        return;
      case '.':
        t.kind = Tok::kDot;
        return;
      case ',':
        t.kind = Tok::kComma;
        return;
      case ':':
        t.kind = Tok::kColon;
        return;
      case '?':
        t.kind = Tok::kQuestion;
        return;
      case '+':
        t.kind = Tok::kPlus;
        return;
      case '-':
        t.kind = Tok::kMinus;
        return;
      case '*':
        t.kind = Tok::kStar;
        return;
      case '/':
        t.kind = Tok::kSlash;
        return;
      case '%':
        t.kind = Tok::kPercent;
        return;
      default:
        break;
    }
    --pos_;
    if (c == '=' && two('=')) {
      pos_ += 2;
      t.kind = Tok::kEq;
    } else if (c == '!' && two('=')) {
      pos_ += 2;
      t.kind = Tok::kNe;
    } else if (c == '!') {
      pos_ += 1;
      t.kind = Tok::kNot;
    } else if (c == '<') {
      pos_ += two('=') ? 2 : 1;
      t.kind = pos_ - static_cast<size_t>(t.offset) == 2 ? Tok::kLe : Tok::kLt;
    } else if (c == '>') {
      pos_ += two('=') ? 2 : 1;
      t.kind = pos_ - static_cast<size_t>(t.offset) == 2 ? Tok::kGe : Tok::kGt;
    } else if (c == '&' && two('&')) {
      pos_ += 2;
      t.kind = Tok::kAnd;
    } else if (c == '|' && two('|')) {
      pos_ += 2;
      t.kind = Tok::kOr;
    } else {
      Unrecognized(pos_);
    }
  }

  void ScanNumber(Token& t) {
    size_t start = pos_;
    if (src_[pos_] == '0' && At(pos_ + 1) == 'x' && IsHex(At(pos_ + 2))) {
      pos_ += 2;
      uint64_t v = 0;
      while (pos_ < src_.size() && IsHex(src_[pos_])) {
        if (v > (UINT64_MAX >> 4)) t.overflow = true;
        v = (v << 4) | static_cast<uint64_t>(HexValue(src_[pos_]));
        ++pos_;
      }
      t.magnitude = v;
      t.kind = Tok::kInt;
      if (At(pos_) == 'u' || At(pos_) == 'U') {
        ++pos_;
        t.kind = Tok::kUint;
      }
      return;
    }
    while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    bool is_double = false;
    if (At(pos_) == '.' && IsDigit(At(pos_ + 1))) {
      is_double = true;
      ++pos_;
      while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    }
    if (At(pos_) == 'e' || At(pos_) == 'E') {
      size_t e = pos_ + 1;
      if (At(e) == '+' || At(e) == '-') ++e;
      if (IsDigit(At(e))) {
        is_double = true;
        pos_ = e;
        while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
      }
    }
    if (is_double) {
      t.kind = Tok::kDouble;
      t.text = std::string(src_.substr(start, pos_ - start));
      return;
    }
    uint64_t v = 0;
    for (size_t i = start; i < pos_; ++i) {
      auto d = static_cast<uint64_t>(src_[i] - '0');
      if (v > (UINT64_MAX - d) / 10) t.overflow = true;
      v = v * 10 + d;
    }
    t.magnitude = v;
    t.kind = Tok::kInt;
    if (At(pos_) == 'u' || At(pos_) == 'U') {
      ++pos_;
      t.kind = Tok::kUint;
    }
  }

  void ScanString(Token& t, bool bytes, bool raw) {
    t.kind = bytes ? Tok::kBytes : Tok::kString;
    char q = src_[pos_];
    bool triple = At(pos_ + 1) == q && At(pos_ + 2) == q;
    pos_ += triple ? 3 : 1;
    std::string out;
    for (;;) {
      if (pos_ >= src_.size()) Unrecognized(static_cast<size_t>(t.offset));
      char c = src_[pos_];
      if (triple) {
        if (c == q && At(pos_ + 1) == q && At(pos_ + 2) == q) {
          pos_ += 3;
          break;
        }
      } else {
        if (c == q) {
          ++pos_;
          break;
        }
        if (c == '\n' || c == '\r') Unrecognized(static_cast<size_t>(t.offset));
      }
      if (c == '\\' && !raw) {
        Escape(out, bytes);
        continue;
      }
      size_t n = Utf8Length(src_, pos_);
      if (n == 0) Unrecognized(pos_);
      out.append(src_.substr(pos_, n));
      pos_ += n;
    }
    t.text = std::move(out);
  }

  void Escape(std::string& out, bool bytes) {
    size_t at = pos_;
    char e = At(pos_ + 1);
    pos_ += 2;
    auto bad = [&]() {
      Fail(static_cast<int32_t>(at),
           "Syntax error: invalid escape sequence '\\" + std::string(1, e) + "'");
    };
    switch (e) {
      case 'a':
        out += '\a';
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'v':
        out += '\v';
        return;
      case '\\':
      case '?':
      case '"':
      case '\'':
      case '`':
        out += e;
        return;
      default:
        break;
    }
    uint32_t cp = 0;
    int digits = 0;
    int base = 16;
    if (e == 'x' || e == 'X') {
      digits = 2;
    } else if (e == 'u') {
      digits = 4;
    } else if (e == 'U') {
      digits = 8;
    } else if (e >= '0' && e <= '3') {
      base = 8;
      digits = 2;
      cp = static_cast<uint32_t>(e - '0');
    } else {
      bad();
    }
    if (bytes && (e == 'u' || e == 'U')) bad();
    for (int k = 0; k < digits; ++k) {
      char d = At(pos_);
      if (base == 16 ? !IsHex(d) : !(d >= '0' && d <= '7')) bad();
      cp = cp * static_cast<uint32_t>(base) + static_cast<uint32_t>(HexValue(d));
      ++pos_;
    }
    if (bytes) {
      out += static_cast<char>(cp);
      return;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) bad();
    AppendUtf8(out, cp);
  }

  std::string_view src_;
  size_t pos_ = 0;
};

bool IsReserved(std::string_view w) {
  static constexpr std::string_view kReserved[] = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  for (auto r : kReserved) {
    if (r == w) return true;
  }
  return false;
}

using NodePtr = std::unique_ptr<Node>;

class Parser {
 public:
  Parser(std::string_view src, std::vector<Token> tokens) : src_(src), tokens_(std::move(tokens)) {}

  NodePtr ParseStart() {
    NodePtr e = ParseExpr();
    if (Peek().kind != Tok::kEof) Mismatch("<EOF>");
    return e;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  bool Is(Tok k) const { return Peek().kind == k; }
  Token Take() {
    Token t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool Accept(Tok k) {
    if (!Is(k)) return false;
    Take();
    return true;
  }
  std::string TokenText(const Token& t) const {
    if (t.kind == Tok::kEof) return "<EOF>";
    return std::string(src_.substr(static_cast<size_t>(t.offset), static_cast<size_t>(t.length)));
  }
  [[noreturn]] void Mismatch(std::string_view expecting) {
    const Token& t = Peek();
    Fail(t.offset, "Syntax error: mismatched input '" + TokenText(t) + "' expecting " +
                       std::string(expecting));
  }
  void Expect(Tok k, std::string_view text) {
    if (Accept(k)) return;
    if (Is(Tok::kEof)) {
      Fail(Peek().offset, "Syntax error: missing '" + std::string(text) + "' at '<EOF>'");
    }
    Mismatch("'" + std::string(text) + "'");
  }

  NodePtr Make(NodeKind kind, int32_t offset) { return std::make_unique<Node>(kind, offset); }

  // Sets the node's height and enforces the nesting limit on the tree.
  NodePtr Finish(NodePtr n) {
    int h = 0;
    for (const auto& c : n->children) h = std::max(h, c->height);
    n->height = h + 1;
    if (n->height > kMaxRecursionDepth) Fail(n->offset, kRecursionLimit);
    return n;
  }

  NodePtr Call(std::string name, int32_t offset, std::vector<NodePtr> args, bool member = false) {
    NodePtr n = Make(NodeKind::kCall, offset);
    n->name = std::move(name);
    n->member = member;
    n->children = std::move(args);
    return Finish(std::move(n));
  }
  NodePtr Binary(std::string name, int32_t offset, NodePtr a, NodePtr b) {
    std::vector<NodePtr> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return Call(std::move(name), offset, std::move(args));
  }

  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p(p) {
      if (++p->depth_ > kMaxRecursionDepth) Fail(p->Peek().offset, kRecursionLimit);
    }
    ~DepthGuard() { --p->depth_; }
    Parser* p;
  };

  NodePtr ParseExpr() {
    DepthGuard guard(this);
    NodePtr cond = ParseOr();
    if (!Is(Tok::kQuestion)) return cond;
    Token q = Take();
    NodePtr then = ParseOr();
    Expect(Tok::kColon, ":");
    NodePtr otherwise = ParseExpr();
    NodePtr n = Make(NodeKind::kConditional, q.offset);
    n->children.push_back(std::move(cond));
    n->children.push_back(std::move(then));
    n->children.push_back(std::move(otherwise));
    return Finish(std::move(n));
  }

  NodePtr ParseOr() {
    NodePtr first = ParseAnd();
    if (!Is(Tok::kOr)) return first;
    NodePtr n = Make(NodeKind::kOr, Peek().offset);
    n->children.push_back(std::move(first));
    while (Accept(Tok::kOr)) n->children.push_back(ParseAnd());
    return Finish(std::move(n));
  }

  NodePtr ParseAnd() {
    NodePtr first = ParseRelation();
    if (!Is(Tok::kAnd)) return first;
    NodePtr n = Make(NodeKind::kAnd, Peek().offset);
    n->children.push_back(std::move(first));
    while (Accept(Tok::kAnd)) n->children.push_back(ParseRelation());
    return Finish(std::move(n));
  }

  NodePtr ParseRelation() {
    NodePtr left = ParseAddition();
    for (;;) {
      const char* op = nullptr;
      switch (Peek().kind) {
        case Tok::kEq:
          op = "_==_";
          break;
        case Tok::kNe:
          op = "_!=_";
          break;
        case Tok::kLt:
          op = "_<_";
          break;
        case Tok::kLe:
          op = "_<=_";
          break;
        case Tok::kGt:
          op = "_>_";
          break;
        case Tok::kGe:
          op = "_>=_";
          break;
        case Tok::kIn:
          op = "@in";
          break;
        default:
          return left;
      }
      Token t = Take();
      left = Binary(op, t.offset, std::move(left), ParseAddition());
    }
  }

  NodePtr ParseAddition() {
    NodePtr left = ParseMultiplication();
    while (Is(Tok::kPlus) || Is(Tok::kMinus)) {
      Token t = Take();
      left = Binary(t.kind == Tok::kPlus ? "_+_" : "_-_", t.offset, std::move(left),
                    ParseMultiplication());
    }
    return left;
  }

  NodePtr ParseMultiplication() {
    NodePtr left = ParseUnary();
    while (Is(Tok::kStar) || Is(Tok::kSlash) || Is(Tok::kPercent)) {
      Token t = Take();
      const char* op = t.kind == Tok::kStar ? "_*_" : (t.kind == Tok::kSlash ? "_/_" : "_%_");
      left = Binary(op, t.offset, std::move(left), ParseUnary());
    }
    return left;
  }

  NodePtr ParseUnary() {
    if (Is(Tok::kNot) || Is(Tok::kMinus)) {
      Tok op = Peek().kind;
      int32_t offset = Peek().offset;
      size_t n = 0;
      while (Is(op)) {
        Take();
        ++n;
      }
      // As in cel-go, an even run of the same operator cancels out, and an
      // odd run of '-' before a number is a negative literal.
      bool negative_literal =
          op == Tok::kMinus && n % 2 == 1 && (Is(Tok::kInt) || Is(Tok::kDouble));
      NodePtr operand = ParseMember(negative_literal, offset);
      if (n % 2 == 0 || negative_literal) return operand;
      std::vector<NodePtr> args;
      args.push_back(std::move(operand));
      return Call(op == Tok::kNot ? "!_" : "-_", offset, std::move(args));
    }
    return ParseMember(false, 0);
  }

  NodePtr ParseMember(bool negative_literal, int32_t sign_offset) {
    NodePtr node = ParsePrimary(negative_literal, sign_offset);
    for (;;) {
      if (Is(Tok::kDot)) {
        Token dot = Take();
        bool opt = Accept(Tok::kQuestion);
        if (!Is(Tok::kIdent)) Mismatch("IDENTIFIER");
        Token id = Take();
        if (!opt && Is(Tok::kLParen)) {
          Token open = Take();
          node = MemberCall(id.text, open.offset, std::move(node), ParseArgs());
        } else {
          NodePtr sel = Make(NodeKind::kSelect, dot.offset);
          sel->name = id.text;
          sel->optional = opt;
          sel->children.push_back(std::move(node));
          node = Finish(std::move(sel));
        }
      } else if (Is(Tok::kLBracket)) {
        Token open = Take();
        bool opt = Accept(Tok::kQuestion);
        NodePtr index = ParseExpr();
        Expect(Tok::kRBracket, "]");
        node = Binary(opt ? "_[?_]" : "_[_]", open.offset, std::move(node), std::move(index));
      } else {
        return node;
      }
    }
  }

  std::vector<NodePtr> ParseArgs() {
    std::vector<NodePtr> args;
    if (Accept(Tok::kRParen)) return args;
    for (;;) {
      args.push_back(ParseExpr());
      if (Accept(Tok::kComma)) continue;
      Expect(Tok::kRParen, ")");
      return args;
    }
  }

  NodePtr ParsePrimary(bool negative_literal, int32_t sign_offset) {
    const Token& t = Peek();
    switch (t.kind) {
      case Tok::kDot:
      case Tok::kIdent: {
        bool leading_dot = Accept(Tok::kDot);
        if (!Is(Tok::kIdent)) Mismatch("IDENTIFIER");
        Token id = Take();
        if (IsReserved(id.text)) Fail(id.offset, "reserved identifier: " + id.text);
        std::string name = (leading_dot ? "." : "") + id.text;
        if (Is(Tok::kLParen)) {
          Token open = Take();
          return GlobalCall(std::move(name), open.offset, ParseArgs());
        }
        NodePtr n = Make(NodeKind::kIdent, id.offset);
        n->name = std::move(name);
        return Finish(std::move(n));
      }
      case Tok::kLParen: {
        Take();
        NodePtr e = ParseExpr();
        Expect(Tok::kRParen, ")");
        return e;
      }
      case Tok::kLBracket:
        return ParseList();
      case Tok::kLBrace:
        return ParseMap();
      case Tok::kInt:
      case Tok::kUint:
      case Tok::kDouble:
      case Tok::kString:
      case Tok::kBytes:
      case Tok::kTrue:
      case Tok::kFalse:
      case Tok::kNull:
        return ParseLiteral(negative_literal, sign_offset);
      default:
        Mismatch(
            "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, "
            "NUM_UINT, STRING, BYTES, IDENTIFIER}");
    }
  }

  NodePtr ParseLiteral(bool negative, int32_t sign_offset) {
    Token t = Take();
    NodePtr n = Make(NodeKind::kLiteral, negative ? sign_offset : t.offset);
    Literal& lit = n->literal;
    switch (t.kind) {
      case Tok::kInt:
        lit.kind = Literal::Kind::kInt;
        if (t.overflow || t.magnitude > (negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX})) {
          Fail(n->offset, "invalid int literal");
        }
        lit.i =
            negative ? static_cast<int64_t>(0 - t.magnitude) : static_cast<int64_t>(t.magnitude);
        break;
      case Tok::kUint:
        lit.kind = Literal::Kind::kUint;
        if (t.overflow) Fail(n->offset, "invalid uint literal");
        lit.u = t.magnitude;
        break;
      case Tok::kDouble: {
        lit.kind = Literal::Kind::kDouble;
        double d = 0;
        auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), d);
        if (ec != std::errc() || ptr != t.text.data() + t.text.size()) {
          Fail(n->offset, "invalid double literal");
        }
        lit.d = negative ? -d : d;
        break;
      }
      case Tok::kString:
        lit.kind = Literal::Kind::kString;
        lit.text = std::move(t.text);
        break;
      case Tok::kBytes:
        lit.kind = Literal::Kind::kBytes;
        lit.text = std::move(t.text);
        break;
      case Tok::kTrue:
      case Tok::kFalse:
        lit.kind = Literal::Kind::kBool;
        lit.b = t.kind == Tok::kTrue;
        break;
      default:
        lit.kind = Literal::Kind::kNull;
        break;
    }
    return Finish(std::move(n));
  }

  NodePtr ParseList() {
    Token open = Take();
    NodePtr n = Make(NodeKind::kList, open.offset);
    while (!Is(Tok::kRBracket)) {
      if (Is(Tok::kEof)) break;
      n->optional_flags.push_back(Accept(Tok::kQuestion) ? 1 : 0);
      n->children.push_back(ParseExpr());
      if (!Accept(Tok::kComma)) break;
    }
    Expect(Tok::kRBracket, "]");
    return Finish(std::move(n));
  }

  NodePtr ParseMap() {
    Token open = Take();
    NodePtr n = Make(NodeKind::kMap, open.offset);
    while (!Is(Tok::kRBrace)) {
      if (Is(Tok::kEof)) break;
      n->optional_flags.push_back(Accept(Tok::kQuestion) ? 1 : 0);
      n->children.push_back(ParseExpr());
      Expect(Tok::kColon, ":");
      n->children.push_back(ParseExpr());
      if (!Accept(Tok::kComma)) break;
    }
    Expect(Tok::kRBrace, "}");
    return Finish(std::move(n));
  }

  static bool IsSimpleName(const Node& n) {
    return n.kind == NodeKind::kIdent && !n.name.empty() && n.name[0] != '.';
  }

  NodePtr GlobalCall(std::string name, int32_t offset, std::vector<NodePtr> args) {
    if (name == "has" && args.size() == 1) {
      NodePtr& arg = args[0];
      if (arg->kind != NodeKind::kSelect || arg->optional) {
        Fail(arg->offset, "invalid argument to has() macro");
      }
      NodePtr n = Make(NodeKind::kPresence, offset);
      n->name = arg->name;
      n->children.push_back(std::move(arg->children[0]));
      return Finish(std::move(n));
    }
    return Call(std::move(name), offset, std::move(args));
  }

  NodePtr MemberCall(const std::string& name, int32_t offset, NodePtr target,
                     std::vector<NodePtr> args) {
    if (name == "bind" && args.size() == 3 && target->kind == NodeKind::kIdent &&
        target->name == "cel") {
      if (!IsSimpleName(*args[0])) {
        Fail(args[0]->offset, "cel.bind() variable names must be simple identifiers");
      }
      NodePtr n = Make(NodeKind::kBind, offset);
      n->name = args[0]->name;
      n->children.push_back(std::move(args[1]));
      n->children.push_back(std::move(args[2]));
      return Finish(std::move(n));
    }
    bool quantifier =
        (name == "all" || name == "exists" || name == "exists_one") && args.size() == 2;
    bool transform = (name == "map" && (args.size() == 2 || args.size() == 3)) ||
                     (name == "filter" && args.size() == 2);
    if (quantifier || transform) {
      if (!IsSimpleName(*args[0])) {
        Fail(args[0]->offset,
             quantifier ? "argument must be a simple name" : "argument is not an identifier");
      }
      NodePtr n = Make(NodeKind::kComprehension, offset);
      n->name = args[0]->name;
      if (name == "all") {
        n->macro = MacroKind::kAll;
      } else if (name == "exists") {
        n->macro = MacroKind::kExists;
      } else if (name == "exists_one") {
        n->macro = MacroKind::kExistsOne;
      } else if (name == "filter") {
        n->macro = MacroKind::kFilter;
      } else {
        n->macro = args.size() == 3 ? MacroKind::kMapFilter : MacroKind::kMap;
      }
      n->children.push_back(std::move(target));
      for (size_t i = 1; i < args.size(); ++i) n->children.push_back(std::move(args[i]));
      return Finish(std::move(n));
    }
    std::vector<NodePtr> all;
    all.push_back(std::move(target));
    for (auto& a : args) all.push_back(std::move(a));
    return Call(name, offset, std::move(all), /*member=*/true);
  }

  std::string_view src_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

ParseResult Parse(std::string_view source) {
  ParseResult result;
  try {
    for (size_t i = 0; i < source.size();) {
      size_t n = Utf8Length(source, i);
      if (n == 0) Fail(static_cast<int32_t>(i), "Syntax error: invalid UTF-8 in expression");
      i += n;
    }
    Parser parser(source, Lexer(source).Run());
    result.root = parser.ParseStart();
  } catch (SyntaxError& e) {
    result.root.reset();
    result.issues.push_back(std::move(e.issue));
  }
  return result;
}

}  // namespace copse::cel::internal
