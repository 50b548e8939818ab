// The evaluator: a walk over the checked tree. Costs follow cel-go's
// CostTracker (constants 0, identifiers and field selections 1, list and map
// literals 10 and 30, calls by their cost rule, and the steps of the macros'
// comprehensions) so that the runtime limit means what it means in
// Kubernetes; cost.cc estimates the same charges ahead of time.

#include <vector>

#include "cel/functions.h"
#include "cel/program.h"

namespace copse::cel::internal {
namespace {

constexpr uint64_t kListCreateCost = 10;
constexpr uint64_t kMapCreateCost = 30;

Value EvalSelect(EvalContext& ctx, const Node& n) {
  Value operand = Eval(ctx, *n.children[0]);
  if (operand.IsError()) return operand;
  ctx.AddCost(1);
  bool optional_result = n.optional;
  if (operand.kind == ValueKind::kOptional) {
    if (operand.optional == nullptr) return operand;
    operand = *operand.optional;
    optional_result = true;
  }
  if (!IsMapLike(operand)) return NoSuchOverload();
  Value key = Value::String(n.name);
  Value out;
  if (MapFind(ctx, operand, key, &out)) return optional_result ? ctx.NewOptional(out) : out;
  return optional_result ? Value::Optional(nullptr) : NoSuchKey(ctx, key);
}

Value EvalPresence(EvalContext& ctx, const Node& n) {
  Value operand = Eval(ctx, *n.children[0]);
  if (operand.IsError()) return operand;
  if (operand.kind == ValueKind::kOptional) {
    if (operand.optional == nullptr) return Value::Bool(false);
    operand = *operand.optional;
  }
  if (!IsMapLike(operand)) return Value::StaticError("invalid type for field selection.");
  Value ignored;
  return Value::Bool(MapFind(ctx, operand, Value::String(n.name), &ignored));
}

Value EvalCall(EvalContext& ctx, const Node& n) {
  size_t nargs = n.children.size();
  Value inline_args[4];
  std::vector<Value> heap_args;
  Value* args = inline_args;
  if (nargs > 4) {
    heap_args.resize(nargs);
    args = heap_args.data();
  }
  // optional.or() and orValue() evaluate their argument only when needed.
  bool lazy_or = n.member && nargs == 2 && (n.name == "or" || n.name == "orValue") &&
                 !n.overloads.empty() && n.overloads[0]->args[0]->kind == TypeKind::kOptional;
  for (size_t i = 0; i < nargs; ++i) {
    if (lazy_or && i == 1 && args[0].kind == ValueKind::kOptional && args[0].optional != nullptr) {
      args[1] = Value::Null();
      break;
    }
    args[i] = Eval(ctx, *n.children[i]);
    if (args[i].IsError()) return args[i];
  }
  for (const Overload* o : n.overloads) {
    bool fits = true;
    for (size_t i = 0; i < nargs && fits; ++i) {
      fits = (lazy_or && i == 1) || ValueMatchesType(args[i], o->args[i]);
    }
    if (!fits) continue;
    Value result = o->impl(ctx, n, args);
    ctx.AddCost(CallCost(ctx, *o, args, nargs, result));
    return result;
  }
  return NoSuchOverload();
}

Value EvalList(EvalContext& ctx, const Node& n) {
  ctx.AddCost(kListCreateCost);
  std::vector<Value> items;
  items.reserve(n.children.size());
  for (size_t i = 0; i < n.children.size(); ++i) {
    Value v = Eval(ctx, *n.children[i]);
    if (v.IsError()) return v;
    if (n.optional_flags[i] != 0 && v.kind == ValueKind::kOptional) {
      if (v.optional == nullptr) continue;
      v = *v.optional;
    }
    items.push_back(v);
  }
  return ctx.NewList(items);
}

Value EvalMap(EvalContext& ctx, const Node& n) {
  ctx.AddCost(kMapCreateCost);
  std::vector<MapEntry> entries;
  entries.reserve(n.children.size() / 2);
  for (size_t i = 0; i + 1 < n.children.size(); i += 2) {
    Value k = Eval(ctx, *n.children[i]);
    if (k.IsError()) return k;
    Value v = Eval(ctx, *n.children[i + 1]);
    if (v.IsError()) return v;
    if (n.optional_flags[i / 2] != 0 && v.kind == ValueKind::kOptional) {
      if (v.optional == nullptr) continue;
      v = *v.optional;
    }
    entries.push_back(MapEntry{k, v});
  }
  return ctx.NewMap(std::move(entries));
}

// `&&` and `||` over all terms: a deciding value (false for &&, true for ||)
// wins over errors in any position; otherwise the first error.
Value EvalLogic(EvalContext& ctx, const Node& n, bool is_and) {
  Value error;
  bool have_error = false;
  for (const auto& term : n.children) {
    Value v = Eval(ctx, *term);
    if (v.kind == ValueKind::kBool) {
      if (v.b != is_and) return v;
      continue;
    }
    if (!have_error) {
      error = v.IsError() ? v : NoSuchOverload();
      have_error = true;
    }
  }
  return have_error ? error : Value::Bool(is_and);
}

Value EvalComprehension(EvalContext& ctx, const Node& n) {
  Value range = Eval(ctx, *n.children[0]);
  if (range.IsError()) return range;
  std::vector<Value> keys;
  const Value* items = nullptr;
  size_t count = 0;
  if (range.kind == ValueKind::kList) {
    items = range.list->items;
    count = range.list->size;
  } else if (IsMapLike(range)) {
    keys = MapKeys(ctx, range);
    items = keys.data();
    count = keys.size();
  } else {
    return NoSuchOverload();
  }
  Value& var = ctx.slots[n.slot];
  const Node& first = *n.children[1];
  switch (n.macro) {
    case MacroKind::kAll:
    case MacroKind::kExists: {
      bool decisive = n.macro == MacroKind::kExists;  // the value that stops the loop
      Value error;
      bool have_error = false;
      for (size_t i = 0; i < count; ++i) {
        ctx.AddCost(3);
        var = items[i];
        Value p = Eval(ctx, first);
        if (p.kind == ValueKind::kBool) {
          if (p.b == decisive) {
            ctx.AddCost(1);
            return p;
          }
        } else if (!have_error) {
          error = p.IsError() ? p : NoSuchOverload();
          have_error = true;
        }
      }
      ctx.AddCost(1);
      return have_error ? error : Value::Bool(!decisive);
    }
    case MacroKind::kExistsOne: {
      int64_t matches = 0;
      for (size_t i = 0; i < count; ++i) {
        var = items[i];
        Value p = Eval(ctx, first);
        if (p.IsError()) return p;
        if (p.kind != ValueKind::kBool) return NoSuchOverload();
        ctx.AddCost(p.b ? 2 : 1);
        if (p.b) ++matches;
      }
      ctx.AddCost(2);
      return Value::Bool(matches == 1);
    }
    case MacroKind::kMap:
    case MacroKind::kMapFilter:
    case MacroKind::kFilter: {
      ctx.AddCost(kListCreateCost);
      std::vector<Value> out;
      for (size_t i = 0; i < count; ++i) {
        var = items[i];
        if (n.macro != MacroKind::kMap) {
          Value p = Eval(ctx, first);
          if (p.IsError()) return p;
          if (p.kind != ValueKind::kBool) return NoSuchOverload();
          if (!p.b) {
            ctx.AddCost(1);
            continue;
          }
        }
        if (n.macro == MacroKind::kFilter) {
          ctx.AddCost(13);
          out.push_back(items[i]);
          continue;
        }
        ctx.AddCost(12);
        Value t = Eval(ctx, *n.children.back());
        if (t.IsError()) return t;
        out.push_back(t);
      }
      ctx.AddCost(1);
      return ctx.NewList(out);
    }
  }
  return NoSuchOverload();
}

}  // namespace

Value Eval(EvalContext& ctx, const Node& n) {
  if (n.is_constant) return n.constant;
  switch (n.kind) {
    case NodeKind::kLiteral:
      return n.constant;
    case NodeKind::kIdent:
      ctx.AddCost(1);
      switch (n.resolution) {
        case Resolution::kDevice:
          return Value::Of(ValueKind::kDevice);
        case Resolution::kLocal:
          return ctx.slots[n.slot];
        default:
          return Value::Type(n.name);
      }
    case NodeKind::kSelect:
      return EvalSelect(ctx, n);
    case NodeKind::kPresence:
      return EvalPresence(ctx, n);
    case NodeKind::kCall:
      return EvalCall(ctx, n);
    case NodeKind::kList:
      return EvalList(ctx, n);
    case NodeKind::kMap:
      return EvalMap(ctx, n);
    case NodeKind::kAnd:
      return EvalLogic(ctx, n, true);
    case NodeKind::kOr:
      return EvalLogic(ctx, n, false);
    case NodeKind::kConditional: {
      Value c = Eval(ctx, *n.children[0]);
      if (c.IsError()) return c;
      if (c.kind != ValueKind::kBool) return NoSuchOverload();
      return Eval(ctx, *n.children[c.b ? 1 : 2]);
    }
    case NodeKind::kComprehension:
      return EvalComprehension(ctx, n);
    case NodeKind::kBind:
      // Evaluated at once rather than on first use as in cel-go: with no side
      // effects the outcome is the same, since an erroneous value that is
      // never used is never looked at.
      ctx.slots[n.slot] = Eval(ctx, *n.children[0]);
      return Eval(ctx, *n.children[1]);
  }
  return NoSuchOverload();
}

}  // namespace copse::cel::internal
