#pragma once
// The syntax tree of a CEL expression (internal to cel/): made by the parser
// (macros already expanded), annotated by the checker (types, resolved
// variables and overloads) and by program building (constants, compiled
// regular expressions), then evaluated as is.
//
// Thread-safety: built and annotated by one compilation; read-only once the
// Program holding it exists.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cel/types.h"
#include "cel/value.h"

namespace re2 {
class RE2;
}

namespace copse::cel::internal {

struct Overload;  // cel/functions.h

enum class NodeKind : uint8_t {
  kLiteral,        // literal
  kIdent,          // name
  kSelect,         // children[0].name; `optional` for `.?name`
  kPresence,       // has(children[0].name)
  kCall,           // function `name`; when `member`, children[0] is the receiver
  kList,           // children; optional_flags marks `?elem`
  kMap,            // children: key0, value0, key1, ...; optional_flags per entry
  kAnd,            // children: two or more terms
  kOr,             // children: two or more terms
  kConditional,    // children: condition, then, else
  kComprehension,  // macro over children[0] with variable `name`; see MacroKind
  kBind,           // cel.bind(name, children[0], children[1])
};

// Comprehension macros; children after the range:
enum class MacroKind : uint8_t {
  kAll,        // predicate
  kExists,     // predicate
  kExistsOne,  // predicate
  kMap,        // transform
  kMapFilter,  // filter, transform
  kFilter,     // predicate
};

struct Literal {
  enum class Kind : uint8_t {
    kNull,
    kBool,
    kInt,
    kUint,
    kDouble,
    kString,
    kBytes
  } kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string text;  // string and bytes
};

// How the checker resolved an identifier.
enum class Resolution : uint8_t {
  kNone,
  kDevice,    // the `device` variable
  kLocal,     // a comprehension or cel.bind variable: `slot`
  kTypeName,  // a type used as a value (`int`, `string`...): `name`
};

class Node {
 public:
  Node(NodeKind kind, int32_t offset) : kind(kind), offset(offset) {}

  NodeKind kind;
  int32_t offset;  // byte offset of the token that locates this node in errors
  std::string name;
  std::vector<std::unique_ptr<Node>> children;
  bool member = false;
  bool optional = false;
  std::vector<uint8_t> optional_flags;
  MacroKind macro = MacroKind::kAll;
  Literal literal;
  int height = 1;

  // Set by the checker.
  Type type = nullptr;
  Resolution resolution = Resolution::kNone;
  int slot = -1;
  std::vector<const Overload*> overloads;

  // Set when the program is built.
  bool is_constant = false;
  Value constant;
  std::shared_ptr<const re2::RE2> regex;  // a constant pattern argument, compiled once
};

// One compile error: where and what.
struct Issue {
  int32_t offset;
  std::string message;
};

}  // namespace copse::cel::internal
