#pragma once
// Static types of the CEL type checker (internal to cel/): the primitive
// types, list/map/optional/type, the Kubernetes abstract types, `dyn` and
// `any` (the unknown type of DRA attribute values), and type parameters of
// generic overloads, with cel-go's assignability and unification rules.
//
// Thread-safety: the primitive types are immutable statics; a TypeStore and
// a Substitution belong to one compilation.

#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace copse::cel::internal {

enum class TypeKind : uint8_t {
  kDyn,
  kAny,  // google.protobuf.Any: behaves as dyn, prints "any"
  kError,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,      // p0: element
  kMap,       // p0: key, p1: value
  kType,      // p0: the type it denotes, or null for plain `type`
  kOptional,  // p0: value
  kQuantity,  // kubernetes.Quantity
  kSemver,    // kubernetes.Semver
  kDevice,    // kubernetes.DRADevice
  kParam,     // a type parameter; `param` is its id
};

struct TypeNode {
  TypeKind kind;
  const TypeNode* p0 = nullptr;
  const TypeNode* p1 = nullptr;
  int param = -1;
};
using Type = const TypeNode*;

Type DynType();
Type AnyType();
Type ErrorType();
Type NullType();
Type BoolType();
Type IntType();
Type UintType();
Type DoubleType();
Type StringType();
Type BytesType();
Type QuantityType();
Type SemverType();
Type DeviceType();
Type PlainTypeType();  // `type`

// Owns the composite types and parameters made while checking.
class TypeStore {
 public:
  Type List(Type elem);
  Type Map(Type key, Type value);
  Type Optional(Type value);
  Type TypeOf(Type t);
  Type Param(int id);

 private:
  std::deque<TypeNode> nodes_;
};

// cel-go's FormatCELType: "int", "list(string)", "map(string, any)",
// "kubernetes.Quantity", "optional_type(int)", "type(int)", "dyn".
std::string FormatType(Type t);

bool IsDynOrAny(Type t);
bool IsExact(Type a, Type b);

// Type-parameter bindings with an undo trail, so that a failed overload
// candidate leaves no bindings behind (cel-go copies its mapping instead).
class Substitution {
 public:
  Type Find(Type param) const;
  void Bind(Type param, Type t);
  size_t Mark() const { return trail_.size(); }
  void Rollback(size_t mark);

 private:
  std::vector<Type> bound_;  // by param id
  std::vector<std::pair<int, Type>> trail_;
};

// Whether a value of type t2 may be used where t1 is expected (in either
// direction for parameters), binding parameters as needed; on false the
// bindings are unchanged.
bool IsAssignable(Substitution& s, Type t1, Type t2);
bool IsAssignableList(Substitution& s, const std::vector<Type>& l1, const std::vector<Type>& l2);
// The more general of two compatible types.
Type MostGeneral(Type t1, Type t2);
// Replaces bound parameters; unbound ones become dyn when param_to_dyn.
Type Substitute(TypeStore& store, const Substitution& s, Type t, bool param_to_dyn);

}  // namespace copse::cel::internal
