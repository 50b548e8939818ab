#include "cel/checker.h"

#include <string>
#include <utility>

#include "cel/functions.h"

namespace copse::cel::internal {
namespace {

class Checker {
 public:
  Checker(TypeStore& store, const CheckOptions& options) : store_(store), options_(options) {}

  CheckResult Run(Node& root) {
    Visit(root);
    Finalize(root);
    result_.num_slots = max_slots_;
    return std::move(result_);
  }

 private:
  struct Local {
    std::string name;
    Type type;
    int slot;
  };

  void Error(const Node& n, std::string message) {
    result_.issues.push_back(Issue{n.offset, std::move(message)});
  }
  void Mismatch(const Node& n, Type expected, Type actual) {
    Error(n, "expected type '" + FormatType(Sub(expected)) + "' but found '" +
                 FormatType(Sub(actual)) + "'");
  }
  Type Sub(Type t, bool param_to_dyn = true) { return Substitute(store_, subs_, t, param_to_dyn); }
  Type Fresh() { return store_.Param(next_param_++); }

  // A declaration's type with its parameters A and B replaced.
  Type Instantiate(Type t, Type a, Type b) {
    switch (t->kind) {
      case TypeKind::kParam:
        return t->param == kParamA ? a : b;
      case TypeKind::kList:
        return store_.List(Instantiate(t->p0, a, b));
      case TypeKind::kOptional:
        return store_.Optional(Instantiate(t->p0, a, b));
      case TypeKind::kType:
        return t->p0 == nullptr ? t : store_.TypeOf(Instantiate(t->p0, a, b));
      case TypeKind::kMap:
        return store_.Map(Instantiate(t->p0, a, b), Instantiate(t->p1, a, b));
      default:
        return t;
    }
  }

  static bool IsDynOrErrorType(Type t) { return IsDynOrAny(t) || t->kind == TypeKind::kError; }

  void Visit(Node& n) {
    switch (n.kind) {
      case NodeKind::kLiteral:
        n.type = LiteralType(n.literal);
        return;
      case NodeKind::kIdent:
        return VisitIdent(n);
      case NodeKind::kSelect:
        n.type = SelectField(n, *n.children[0], n.name, n.optional);
        return;
      case NodeKind::kPresence:
        SelectField(n, *n.children[0], n.name, false);
        n.type = BoolType();
        return;
      case NodeKind::kCall:
        return VisitCall(n);
      case NodeKind::kList:
        return VisitList(n);
      case NodeKind::kMap:
        return VisitMap(n);
      case NodeKind::kAnd:
      case NodeKind::kOr:
        for (auto& term : n.children) {
          Visit(*term);
          if (!IsAssignable(subs_, BoolType(), term->type)) Mismatch(*term, BoolType(), term->type);
        }
        n.type = BoolType();
        return;
      case NodeKind::kConditional:
        for (auto& c : n.children) Visit(*c);
        n.type = Resolve(n, "_?_:_",
                         {n.children[0].get(), n.children[1].get(), n.children[2].get()}, false);
        return;
      case NodeKind::kComprehension:
        return VisitComprehension(n);
      case NodeKind::kBind: {
        Visit(*n.children[0]);
        n.slot = Push(n.name, n.children[0]->type);
        Visit(*n.children[1]);
        locals_.pop_back();
        n.type = n.children[1]->type;
        return;
      }
    }
  }

  static Type LiteralType(const Literal& l) {
    switch (l.kind) {
      case Literal::Kind::kNull:
        return NullType();
      case Literal::Kind::kBool:
        return BoolType();
      case Literal::Kind::kInt:
        return IntType();
      case Literal::Kind::kUint:
        return UintType();
      case Literal::Kind::kDouble:
        return DoubleType();
      case Literal::Kind::kString:
        return StringType();
      case Literal::Kind::kBytes:
        return BytesType();
    }
    return DynType();
  }

  int Push(const std::string& name, Type type) {
    int slot = static_cast<int>(locals_.size());
    locals_.push_back(Local{name, type, slot});
    max_slots_ = std::max(max_slots_, slot + 1);
    return slot;
  }

  void VisitIdent(Node& n) {
    bool root_only = !n.name.empty() && n.name[0] == '.';
    std::string name = root_only ? n.name.substr(1) : n.name;
    if (!root_only) {
      for (auto it = locals_.rbegin(); it != locals_.rend(); ++it) {
        if (it->name == name) {
          n.resolution = Resolution::kLocal;
          n.slot = it->slot;
          n.type = it->type;
          return;
        }
      }
    }
    if (name == "device") {
      n.resolution = Resolution::kDevice;
      n.type = DeviceType();
      return;
    }
    if (Type t = TypeNamed(name)) {
      n.resolution = Resolution::kTypeName;
      n.name = name;
      n.type = store_.TypeOf(t);
      return;
    }
    Error(n, "undeclared reference to '" + name + "' (in container '')");
    n.type = ErrorType();
  }

  Type TypeNamed(const std::string& name) {
    if (name == "bool") return BoolType();
    if (name == "int") return IntType();
    if (name == "uint") return UintType();
    if (name == "double") return DoubleType();
    if (name == "string") return StringType();
    if (name == "bytes") return BytesType();
    if (name == "null_type") return NullType();
    if (name == "type") return PlainTypeType();
    if (name == "list") return store_.List(DynType());
    if (name == "map") return store_.Map(DynType(), DynType());
    return nullptr;
  }

  Type DeviceField(const std::string& field) {
    if (field == "driver") return StringType();
    if (field == "attributes") return store_.Map(StringType(), store_.Map(StringType(), AnyType()));
    if (field == "capacity") {
      return store_.Map(StringType(), store_.Map(StringType(), QuantityType()));
    }
    if (field == "allowMultipleAllocations" && options_.declare_allow_multiple_allocations) {
      return BoolType();
    }
    return nullptr;
  }

  Type SelectField(const Node& n, Node& operand, const std::string& field, bool optional) {
    Visit(operand);
    Type target = Sub(operand.type, false);
    bool was_optional = target->kind == TypeKind::kOptional;
    if (was_optional) target = target->p0;
    Type result = ErrorType();
    switch (target->kind) {
      case TypeKind::kMap:
        result = target->p1;
        break;
      case TypeKind::kDevice:
        if (Type t = DeviceField(field)) {
          result = t;
        } else {
          Error(n, "undefined field '" + field + "'");
        }
        break;
      case TypeKind::kParam:
        IsAssignable(subs_, DynType(), target);
        result = DynType();
        break;
      default:
        if (!IsDynOrErrorType(target)) {
          Error(n, "type '" + FormatType(Sub(target)) + "' does not support field selection");
        }
        result = DynType();
        break;
    }
    if (was_optional || optional) return store_.Optional(result);
    return result;
  }

  // The function `prefix.name` when the receiver is a plain name such as
  // `optional` or `sets` that is not a variable.
  static bool QualifiedName(const Node& n, std::string* out) {
    if (n.kind == NodeKind::kIdent) {
      if (n.name.empty() || n.name[0] == '.') return false;
      *out = n.name;
      return true;
    }
    if (n.kind == NodeKind::kSelect && !n.optional) {
      std::string prefix;
      if (!QualifiedName(*n.children[0], &prefix)) return false;
      *out = prefix + "." + n.name;
      return true;
    }
    return false;
  }

  bool IsLocal(const std::string& name) const {
    for (const Local& l : locals_) {
      if (l.name == name) return true;
    }
    return false;
  }

  void VisitCall(Node& n) {
    if (n.member) {
      std::string prefix;
      if (QualifiedName(*n.children[0], &prefix) && !IsLocal(prefix.substr(0, prefix.find('.'))) &&
          LookupFunction(prefix + "." + n.name) != nullptr) {
        n.name = prefix + "." + n.name;
        n.member = false;
        n.children.erase(n.children.begin());
      }
    }
    std::vector<const Node*> args;
    for (auto& c : n.children) {
      Visit(*c);
      args.push_back(c.get());
    }
    n.type = Resolve(n, n.name, args, n.member);
  }

  // Overload resolution as cel-go's checker does it: every overload whose
  // call style and arguments fit is a candidate (several when arguments are
  // dynamic); the result type is theirs if they agree, else dyn.
  Type Resolve(Node& n, const std::string& name, const std::vector<const Node*>& args,
               bool member) {
    const std::vector<const Overload*>* overloads = LookupFunction(name);
    if (overloads == nullptr) {
      Error(n, "undeclared reference to '" + name + "' (in container '')");
      return ErrorType();
    }
    std::vector<Type> arg_types;
    for (const Node* a : args) arg_types.push_back(a->type);
    Type result = nullptr;
    n.overloads.clear();
    for (const Overload* o : *overloads) {
      if (o->member != member || o->args.size() != args.size()) continue;
      Type a = Fresh();
      Type b = Fresh();
      std::vector<Type> declared;
      for (Type t : o->args) declared.push_back(Instantiate(t, a, b));
      if (!IsAssignableList(subs_, arg_types, declared)) continue;
      n.overloads.push_back(o);
      Type r = Sub(Instantiate(o->result, a, b), false);
      if (result == nullptr) {
        result = r;
      } else if (!IsDynOrAny(result) && !IsExact(r, result)) {
        result = DynType();
      }
    }
    if (result != nullptr) return result;
    std::string signature;
    size_t first = 0;
    if (member && !args.empty()) {
      signature = FormatType(Sub(arg_types[0])) + ".";
      first = 1;
    }
    signature += "(";
    for (size_t i = first; i < arg_types.size(); ++i) {
      if (i > first) signature += ", ";
      signature += FormatType(Sub(arg_types[i]));
    }
    signature += ")";
    Error(n, "found no matching overload for '" + name + "' applied to '" + signature + "'");
    return ErrorType();
  }

  Type Join(const Node& at, Type previous, Type current) {
    if (previous == nullptr) return current;
    if (IsAssignable(subs_, previous, current)) return MostGeneral(previous, current);
    Mismatch(at, previous, current);
    return ErrorType();
  }

  // The element type of `?x` in a literal: x must be an optional.
  Type UnwrapOptionalElement(const Node& e, bool optional) {
    Type t = e.type;
    if (!optional) return t;
    Type s = Sub(t, false);
    if (s->kind == TypeKind::kOptional) return s->p0;
    if (!IsDynOrAny(s)) Mismatch(e, store_.Optional(s), s);
    return t;
  }

  void VisitList(Node& n) {
    Type elem = nullptr;
    for (size_t i = 0; i < n.children.size(); ++i) {
      Node& e = *n.children[i];
      Visit(e);
      elem = Join(e, elem, UnwrapOptionalElement(e, n.optional_flags[i] != 0));
    }
    n.type = store_.List(elem == nullptr ? Fresh() : elem);
  }

  void VisitMap(Node& n) {
    Type key = nullptr;
    Type value = nullptr;
    for (size_t i = 0; i + 1 < n.children.size(); i += 2) {
      Node& k = *n.children[i];
      Node& v = *n.children[i + 1];
      Visit(k);
      key = Join(k, key, k.type);
      Visit(v);
      value = Join(v, value, UnwrapOptionalElement(v, n.optional_flags[i / 2] != 0));
    }
    n.type = store_.Map(key == nullptr ? Fresh() : key, value == nullptr ? Fresh() : value);
  }

  void VisitComprehension(Node& n) {
    Node& range = *n.children[0];
    Visit(range);
    Type range_type = Sub(range.type, false);
    Type var = ErrorType();
    switch (range_type->kind) {
      case TypeKind::kList:
      case TypeKind::kMap:
        var = range_type->p0;
        break;
      case TypeKind::kDyn:
      case TypeKind::kAny:
      case TypeKind::kError:
      case TypeKind::kParam:
        IsAssignable(subs_, DynType(), range_type);
        var = DynType();
        break;
      default:
        Error(range, "expression of type '" + FormatType(Sub(range_type)) +
                         "' cannot be range of a comprehension (must be list, map, or dynamic)");
        break;
    }
    n.slot = Push(n.name, var);
    for (size_t i = 1; i < n.children.size(); ++i) Visit(*n.children[i]);
    locals_.pop_back();
    auto require_bool = [&](const Node& p) {
      if (!IsAssignable(subs_, BoolType(), p.type)) Mismatch(p, BoolType(), p.type);
    };
    switch (n.macro) {
      case MacroKind::kAll:
      case MacroKind::kExists:
      case MacroKind::kExistsOne:
        require_bool(*n.children[1]);
        n.type = BoolType();
        break;
      case MacroKind::kMap:
        n.type = store_.List(n.children[1]->type);
        break;
      case MacroKind::kMapFilter:
        require_bool(*n.children[1]);
        n.type = store_.List(n.children[2]->type);
        break;
      case MacroKind::kFilter:
        require_bool(*n.children[1]);
        n.type = store_.List(var);
        break;
    }
  }

  void Finalize(Node& n) {
    if (n.type != nullptr) n.type = Sub(n.type);
    for (auto& c : n.children) Finalize(*c);
  }

  TypeStore& store_;
  const CheckOptions& options_;
  Substitution subs_;
  int next_param_ = 2;  // 0 and 1 are the declarations' A and B
  std::vector<Local> locals_;
  int max_slots_ = 0;
  CheckResult result_;
};

}  // namespace

CheckResult Check(Node& root, TypeStore& store, const CheckOptions& options) {
  return Checker(store, options).Run(root);
}

}  // namespace copse::cel::internal
