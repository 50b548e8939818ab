#include "cel/types.h"

namespace copse::cel::internal {
namespace {

const TypeNode kDyn{TypeKind::kDyn};
const TypeNode kAny{TypeKind::kAny};
const TypeNode kError{TypeKind::kError};
const TypeNode kNull{TypeKind::kNull};
const TypeNode kBool{TypeKind::kBool};
const TypeNode kInt{TypeKind::kInt};
const TypeNode kUint{TypeKind::kUint};
const TypeNode kDouble{TypeKind::kDouble};
const TypeNode kString{TypeKind::kString};
const TypeNode kBytes{TypeKind::kBytes};
const TypeNode kQuantity{TypeKind::kQuantity};
const TypeNode kSemver{TypeKind::kSemver};
const TypeNode kDevice{TypeKind::kDevice};
const TypeNode kPlainType{TypeKind::kType};

bool IsParam(Type t) { return t->kind == TypeKind::kParam; }
bool IsDynOrError(Type t) { return IsDynOrAny(t) || t->kind == TypeKind::kError; }

// cel-go's isLegacyNullable plus null itself: abstract and object types,
// optionals and any accept null.
bool AcceptsNull(Type t) {
  switch (t->kind) {
    case TypeKind::kNull:
    case TypeKind::kAny:
    case TypeKind::kQuantity:
    case TypeKind::kSemver:
    case TypeKind::kDevice:
    case TypeKind::kOptional:
      return true;
    default:
      return false;
  }
}

bool IsEqualOrLessSpecific(Type t1, Type t2) {
  if (IsDynOrAny(t1) || IsParam(t1)) return true;
  if (IsDynOrAny(t2) || IsParam(t2)) return false;
  if (t1->kind != t2->kind) return false;
  switch (t1->kind) {
    case TypeKind::kOptional:
    case TypeKind::kList:
      return IsEqualOrLessSpecific(t1->p0, t2->p0);
    case TypeKind::kMap:
      return IsEqualOrLessSpecific(t1->p0, t2->p0) && IsEqualOrLessSpecific(t1->p1, t2->p1);
    case TypeKind::kType:
      return true;
    default:
      return IsExact(t1, t2);
  }
}

// Whether `t` occurs in `within` (through bindings): binding t to within
// would make a cycle.
bool ReferencedIn(const Substitution& s, Type t, Type within) {
  if (IsExact(t, within)) return true;
  switch (within->kind) {
    case TypeKind::kParam: {
      Type sub = s.Find(within);
      return sub != nullptr && ReferencedIn(s, t, sub);
    }
    case TypeKind::kList:
    case TypeKind::kOptional:
      return ReferencedIn(s, t, within->p0);
    case TypeKind::kType:
      return within->p0 != nullptr && ReferencedIn(s, t, within->p0);
    case TypeKind::kMap:
      return ReferencedIn(s, t, within->p0) || ReferencedIn(s, t, within->p1);
    default:
      return false;
  }
}

bool Assignable(Substitution& s, Type t1, Type t2);

// Whether t1 is a valid substitution for parameter t2; `has_sub` tells
// whether t2 was already bound.
bool ValidSubstitution(Substitution& s, Type t1, Type t2, bool* has_sub) {
  *has_sub = false;
  if (IsExact(t1, t2)) {
    *has_sub = true;
    return true;
  }
  if (Type sub = s.Find(t2)) {
    *has_sub = true;
    if (IsExact(t1, sub)) return true;
    if (Assignable(s, t1, sub)) {
      Type general = MostGeneral(t1, sub);
      if (!ReferencedIn(s, t2, general)) s.Bind(t2, general);
      return true;
    }
    return false;
  }
  if (!ReferencedIn(s, t2, t1)) {
    s.Bind(t2, t1);
    return true;
  }
  return false;
}

bool Assignable(Substitution& s, Type t1, Type t2) {
  if (IsParam(t2)) {
    bool has_sub = false;
    if (ValidSubstitution(s, t1, t2, &has_sub)) return true;
    if (has_sub) return false;
  }
  if (IsParam(t1)) {
    bool has_sub = false;
    return ValidSubstitution(s, t2, t1, &has_sub);
  }
  if (IsDynOrError(t1) || IsDynOrError(t2)) return true;
  if (t1->kind == TypeKind::kNull) return AcceptsNull(t2);
  if (t2->kind == TypeKind::kNull) return AcceptsNull(t1);
  switch (t1->kind) {
    case TypeKind::kType:
      return t2->kind == TypeKind::kType;
    case TypeKind::kList:
    case TypeKind::kOptional:
      return t1->kind == t2->kind && Assignable(s, t1->p0, t2->p0);
    case TypeKind::kMap:
      return t2->kind == TypeKind::kMap && Assignable(s, t1->p0, t2->p0) &&
             Assignable(s, t1->p1, t2->p1);
    default:
      return t1->kind == t2->kind;
  }
}

}  // namespace

Type DynType() { return &kDyn; }
Type AnyType() { return &kAny; }
Type ErrorType() { return &kError; }
Type NullType() { return &kNull; }
Type BoolType() { return &kBool; }
Type IntType() { return &kInt; }
Type UintType() { return &kUint; }
Type DoubleType() { return &kDouble; }
Type StringType() { return &kString; }
Type BytesType() { return &kBytes; }
Type QuantityType() { return &kQuantity; }
Type SemverType() { return &kSemver; }
Type DeviceType() { return &kDevice; }
Type PlainTypeType() { return &kPlainType; }

Type TypeStore::List(Type elem) {
  return &nodes_.emplace_back(TypeNode{TypeKind::kList, elem, nullptr, -1});
}
Type TypeStore::Map(Type key, Type value) {
  return &nodes_.emplace_back(TypeNode{TypeKind::kMap, key, value, -1});
}
Type TypeStore::Optional(Type value) {
  return &nodes_.emplace_back(TypeNode{TypeKind::kOptional, value, nullptr, -1});
}
Type TypeStore::TypeOf(Type t) {
  return &nodes_.emplace_back(TypeNode{TypeKind::kType, t, nullptr, -1});
}
Type TypeStore::Param(int id) {
  return &nodes_.emplace_back(TypeNode{TypeKind::kParam, nullptr, nullptr, id});
}

std::string FormatType(Type t) {
  switch (t->kind) {
    case TypeKind::kDyn:
      return "dyn";
    case TypeKind::kAny:
      return "any";
    case TypeKind::kError:
      return "!error!";
    case TypeKind::kNull:
      return "null_type";
    case TypeKind::kBool:
      return "bool";
    case TypeKind::kInt:
      return "int";
    case TypeKind::kUint:
      return "uint";
    case TypeKind::kDouble:
      return "double";
    case TypeKind::kString:
      return "string";
    case TypeKind::kBytes:
      return "bytes";
    case TypeKind::kList:
      return "list(" + FormatType(t->p0) + ")";
    case TypeKind::kMap:
      return "map(" + FormatType(t->p0) + ", " + FormatType(t->p1) + ")";
    case TypeKind::kType:
      return t->p0 == nullptr ? "type" : "type(" + FormatType(t->p0) + ")";
    case TypeKind::kOptional:
      return "optional_type(" + FormatType(t->p0) + ")";
    case TypeKind::kQuantity:
      return "kubernetes.Quantity";
    case TypeKind::kSemver:
      return "kubernetes.Semver";
    case TypeKind::kDevice:
      return "kubernetes.DRADevice";
    case TypeKind::kParam:
      return "_var" + std::to_string(t->param);
  }
  return "dyn";
}

bool IsDynOrAny(Type t) { return t->kind == TypeKind::kDyn || t->kind == TypeKind::kAny; }

bool IsExact(Type a, Type b) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case TypeKind::kParam:
      return a->param == b->param;
    case TypeKind::kList:
    case TypeKind::kOptional:
      return IsExact(a->p0, b->p0);
    case TypeKind::kType:
      if (a->p0 == nullptr || b->p0 == nullptr) return a->p0 == b->p0;
      return IsExact(a->p0, b->p0);
    case TypeKind::kMap:
      return IsExact(a->p0, b->p0) && IsExact(a->p1, b->p1);
    default:
      return true;
  }
}

Type Substitution::Find(Type param) const {
  if (param->kind != TypeKind::kParam || param->param < 0) return nullptr;
  auto id = static_cast<size_t>(param->param);
  return id < bound_.size() ? bound_[id] : nullptr;
}

void Substitution::Bind(Type param, Type t) {
  auto id = static_cast<size_t>(param->param);
  if (id >= bound_.size()) bound_.resize(id + 1, nullptr);
  trail_.emplace_back(param->param, bound_[id]);
  bound_[id] = t;
}

void Substitution::Rollback(size_t mark) {
  while (trail_.size() > mark) {
    auto [id, old] = trail_.back();
    bound_[static_cast<size_t>(id)] = old;
    trail_.pop_back();
  }
}

bool IsAssignable(Substitution& s, Type t1, Type t2) {
  size_t mark = s.Mark();
  if (Assignable(s, t1, t2)) return true;
  s.Rollback(mark);
  return false;
}

bool IsAssignableList(Substitution& s, const std::vector<Type>& l1, const std::vector<Type>& l2) {
  if (l1.size() != l2.size()) return false;
  size_t mark = s.Mark();
  for (size_t i = 0; i < l1.size(); ++i) {
    if (!Assignable(s, l1[i], l2[i])) {
      s.Rollback(mark);
      return false;
    }
  }
  return true;
}

Type MostGeneral(Type t1, Type t2) { return IsEqualOrLessSpecific(t1, t2) ? t1 : t2; }

Type Substitute(TypeStore& store, const Substitution& s, Type t, bool param_to_dyn) {
  if (Type sub = s.Find(t)) return Substitute(store, s, sub, param_to_dyn);
  switch (t->kind) {
    case TypeKind::kParam:
      return param_to_dyn ? DynType() : t;
    case TypeKind::kList:
      return store.List(Substitute(store, s, t->p0, param_to_dyn));
    case TypeKind::kOptional:
      return store.Optional(Substitute(store, s, t->p0, param_to_dyn));
    case TypeKind::kMap:
      return store.Map(Substitute(store, s, t->p0, param_to_dyn),
                       Substitute(store, s, t->p1, param_to_dyn));
    case TypeKind::kType:
      return t->p0 == nullptr ? t : store.TypeOf(Substitute(store, s, t->p0, param_to_dyn));
    default:
      return t;
  }
}

}  // namespace copse::cel::internal
