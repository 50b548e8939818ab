// The worst-case cost estimate (cel-go's checker.Cost with Kubernetes'
// library estimates and DRA's size bounds): the charges eval.cc makes, with
// every size at its largest. Sizes of values that come from the device are
// bounded by the resource.k8s.io API (compile.go's declarations); anything
// unbounded is UINT64_MAX, and arithmetic saturates.

#include <deque>

#include "cel/functions.h"
#include "cel/program.h"

namespace copse::cel::internal {
namespace {

constexpr uint64_t kUnknown = UINT64_MAX;

// resource.k8s.io limits that bound the device's values.
constexpr uint64_t kMaxEntries = 32;         // ResourceSliceMaxAttributesAndCapacitiesPerDevice
constexpr uint64_t kMaxAttributeValue = 64;  // DeviceAttributeMaxValueLength
constexpr uint64_t kMaxDomain = 63;          // DeviceMaxDomainLength
constexpr uint64_t kMaxIdentifier = 32;      // DeviceMaxIDLength
constexpr uint64_t kMaxDriverName = 63;      // DriverNameMaxLength

uint64_t Add(uint64_t a, uint64_t b) { return a + b < a ? kUnknown : a + b; }
uint64_t Mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kUnknown : r;
}
uint64_t CeilTenth(uint64_t s) { return s == kUnknown ? kUnknown : s / 10 + (s % 10 != 0 ? 1 : 0); }
uint64_t CeilQuarter(uint64_t s) { return s == kUnknown ? kUnknown : s / 4 + (s % 4 != 0 ? 1 : 0); }

// The largest size of a value and, for lists and maps, of their keys and
// elements.
struct Shape {
  uint64_t size = kUnknown;
  const Shape* key = nullptr;
  const Shape* elem = nullptr;
};

const Shape kScalar{1, nullptr, nullptr};
const Shape kUnbounded{kUnknown, nullptr, nullptr};
const Shape kAttributeValue{kMaxAttributeValue, nullptr, nullptr};
const Shape kIdentifier{kMaxIdentifier, nullptr, nullptr};
const Shape kDomain{kMaxDomain, nullptr, nullptr};
const Shape kDriverName{kMaxDriverName, nullptr, nullptr};
const Shape kAttributeDomain{kMaxEntries, &kIdentifier, &kAttributeValue};
const Shape kCapacityDomain{kMaxEntries, &kIdentifier, &kScalar};
const Shape kAttributes{kMaxEntries, &kDomain, &kAttributeDomain};
const Shape kCapacity{kMaxEntries, &kDomain, &kCapacityDomain};

struct Estimate {
  uint64_t cost = 0;
  const Shape* shape = &kUnbounded;
};

bool IsScalar(Type t) {
  switch (t->kind) {
    case TypeKind::kBool:
    case TypeKind::kInt:
    case TypeKind::kUint:
    case TypeKind::kDouble:
    case TypeKind::kNull:
    case TypeKind::kType:
    case TypeKind::kQuantity:
    case TypeKind::kSemver:
    case TypeKind::kDevice:
      return true;
    default:
      return false;
  }
}

class Estimator {
 public:
  explicit Estimator(int num_slots) : locals_(static_cast<size_t>(num_slots), &kUnbounded) {}

  Estimate Visit(const Node& n) {
    switch (n.kind) {
      case NodeKind::kLiteral:
        return {0, LiteralShape(n.literal)};
      case NodeKind::kIdent:
        if (n.resolution == Resolution::kLocal) return {1, locals_[n.slot]};
        return {1, &kScalar};
      case NodeKind::kSelect:
      case NodeKind::kPresence: {
        Estimate operand = Visit(*n.children[0]);
        if (n.kind == NodeKind::kPresence) return {operand.cost, &kScalar};
        return {Add(operand.cost, 1), FieldShape(*n.children[0], operand.shape, n.name, n.type)};
      }
      case NodeKind::kCall:
        return VisitCall(n);
      case NodeKind::kList: {
        Estimate e{10, nullptr};
        const Shape* elem = nullptr;
        for (const auto& c : n.children) {
          Estimate ce = Visit(*c);
          e.cost = Add(e.cost, ce.cost);
          elem = Union(elem, ce.shape);
        }
        e.shape = Make(n.children.size(), nullptr, elem);
        return e;
      }
      case NodeKind::kMap: {
        Estimate e{30, nullptr};
        const Shape* key = nullptr;
        const Shape* elem = nullptr;
        for (size_t i = 0; i < n.children.size(); ++i) {
          Estimate ce = Visit(*n.children[i]);
          e.cost = Add(e.cost, ce.cost);
          if (i % 2 == 0) {
            key = Union(key, ce.shape);
          } else {
            elem = Union(elem, ce.shape);
          }
        }
        e.shape = Make(n.children.size() / 2, key, elem);
        return e;
      }
      case NodeKind::kAnd:
      case NodeKind::kOr: {
        uint64_t cost = 0;
        for (const auto& c : n.children) cost = Add(cost, Visit(*c).cost);
        return {cost, &kScalar};
      }
      case NodeKind::kConditional: {
        Estimate c = Visit(*n.children[0]);
        Estimate a = Visit(*n.children[1]);
        Estimate b = Visit(*n.children[2]);
        return {Add(c.cost, std::max(a.cost, b.cost)), Union(a.shape, b.shape)};
      }
      case NodeKind::kComprehension:
        return VisitComprehension(n);
      case NodeKind::kBind: {
        Estimate init = Visit(*n.children[0]);
        locals_[n.slot] = init.shape;
        Estimate body = Visit(*n.children[1]);
        return {Add(init.cost, body.cost), body.shape};
      }
    }
    return {};
  }

 private:
  const Shape* Make(uint64_t size, const Shape* key, const Shape* elem) {
    return &shapes_.emplace_back(Shape{size, key, elem});
  }

  const Shape* Union(const Shape* a, const Shape* b) {
    if (a == nullptr) return b;
    if (b == nullptr || a == b) return a;
    const Shape* key = a->key == nullptr || b->key == nullptr ? nullptr : Union(a->key, b->key);
    const Shape* elem =
        a->elem == nullptr || b->elem == nullptr ? nullptr : Union(a->elem, b->elem);
    return Make(std::max(a->size, b->size), key, elem);
  }

  const Shape* LiteralShape(const Literal& l) {
    switch (l.kind) {
      case Literal::Kind::kString:
        return Make(CodePoints(l.text), nullptr, nullptr);
      case Literal::Kind::kBytes:
        return Make(l.text.size(), nullptr, nullptr);
      default:
        return &kScalar;
    }
  }

  const Shape* FieldShape(const Node& operand, const Shape* shape, const std::string& field,
                          Type result) {
    if (operand.type != nullptr && operand.type->kind == TypeKind::kDevice) {
      if (field == "driver") return &kDriverName;
      if (field == "attributes") return &kAttributes;
      if (field == "capacity") return &kCapacity;
      return &kScalar;
    }
    if (shape->elem != nullptr) return shape->elem;
    return result != nullptr && IsScalar(result) ? &kScalar : &kUnbounded;
  }

  static uint64_t Size(const Shape* s) { return s == nullptr ? kUnknown : s->size; }

  uint64_t FunctionCost(const Overload& o, const std::vector<Estimate>& args, const Shape* result) {
    auto size = [&](size_t i) { return i < args.size() ? Size(args[i].shape) : 1; };
    switch (o.cost) {
      case CostRule::kOne:
        return 1;
      case CostRule::kTraverseFirst:
        return CeilTenth(size(0));
      case CostRule::kTraverseFirst2x:
        return CeilTenth(Mul(2, size(0)));
      case CostRule::kJoin:
        return CeilTenth(Mul(2, Size(result)));
      case CostRule::kInList:
        return size(1);
      case CostRule::kCompareMin:
        return std::max<uint64_t>(1, CeilTenth(std::min(size(0), size(1))));
      case CostRule::kConcat:
        return CeilTenth(Add(size(0), size(1)));
      case CostRule::kContains:
        return Mul(CeilTenth(size(0)), CeilTenth(size(1)));
      case CostRule::kRegex:
        return Mul(CeilTenth(Add(1, size(0))), CeilQuarter(size(1)));
      case CostRule::kListTraverse:
        return size(0);
      case CostRule::kListProduct:
        return std::max<uint64_t>(1, Mul(size(0), size(1)));
    }
    return 1;
  }

  const Shape* ResultShape(const Node& n, const Overload& o, const std::vector<Estimate>& a) {
    std::string_view f = o.function;
    auto arg = [&](size_t i) { return i < a.size() ? a[i].shape : &kUnbounded; };
    if (f == "_[_]" || f == "_[?_]") {
      return arg(0)->elem != nullptr ? arg(0)->elem : &kUnbounded;
    }
    if (o.id == "add_string" || o.id == "add_bytes") {
      return Make(Add(Size(arg(0)), Size(arg(1))), nullptr, nullptr);
    }
    if (o.id == "add_list") {
      const Shape* elem = arg(0)->elem == nullptr || arg(1)->elem == nullptr
                              ? nullptr
                              : Union(arg(0)->elem, arg(1)->elem);
      return Make(Add(Size(arg(0)), Size(arg(1))), nullptr, elem);
    }
    if (f == "lowerAscii" || f == "upperAscii" || f == "trim" || f == "substring" || f == "find" ||
        f == "charAt") {
      return arg(0);
    }
    if (f == "split" || f == "findAll") {
      return Make(Add(Size(arg(0)), 1), nullptr, arg(0));
    }
    if (f == "dyn" || f == "optional.of" || f == "optional.ofNonZeroValue" || f == "value") {
      return arg(0);
    }
    if (f == "orValue" || f == "or") return Union(arg(0), arg(1));
    if (f == "string" || f == "bytes") {
      return n.children[0]->type != nullptr && IsScalar(n.children[0]->type)
                 ? Make(32, nullptr, nullptr)
                 : arg(0);
    }
    return n.type != nullptr && IsScalar(n.type) ? &kScalar : &kUnbounded;
  }

  Estimate VisitCall(const Node& n) {
    std::vector<Estimate> args;
    uint64_t cost = 0;
    for (const auto& c : n.children) {
      args.push_back(Visit(*c));
      cost = Add(cost, args.back().cost);
    }
    uint64_t call = 0;
    const Shape* shape = nullptr;
    for (const Overload* o : n.overloads) {
      const Shape* s = ResultShape(n, *o, args);
      call = std::max(call, FunctionCost(*o, args, s));
      shape = Union(shape, s);
    }
    return {Add(cost, call), shape == nullptr ? &kUnbounded : shape};
  }

  Estimate VisitComprehension(const Node& n) {
    Estimate range = Visit(*n.children[0]);
    const Shape* var = range.shape->elem;
    if (n.children[0]->type != nullptr && n.children[0]->type->kind == TypeKind::kMap) {
      var = range.shape->key;
    }
    locals_[n.slot] = var != nullptr ? var : &kUnbounded;
    uint64_t per = 0;
    uint64_t fixed = 0;
    const Shape* out = &kScalar;
    Estimate first = Visit(*n.children[1]);
    switch (n.macro) {
      case MacroKind::kAll:
      case MacroKind::kExists:
        per = Add(3, first.cost);
        fixed = 1;
        break;
      case MacroKind::kExistsOne:
        per = Add(2, first.cost);
        fixed = 2;
        break;
      case MacroKind::kMap:
        per = Add(12, first.cost);
        fixed = 11;
        out = Make(range.shape->size, nullptr, first.shape);
        break;
      case MacroKind::kMapFilter: {
        Estimate transform = Visit(*n.children[2]);
        per = Add(first.cost, Add(12, transform.cost));
        fixed = 11;
        out = Make(range.shape->size, nullptr, transform.shape);
        break;
      }
      case MacroKind::kFilter:
        per = Add(13, first.cost);
        fixed = 11;
        out = Make(range.shape->size, nullptr, locals_[n.slot]);
        break;
    }
    return {Add(Add(range.cost, fixed), Mul(range.shape->size, per)), out};
  }

  std::vector<const Shape*> locals_;
  std::deque<Shape> shapes_;
};

}  // namespace

uint64_t EstimateMaxCost(const Node& root, int num_slots) {
  return Estimator(num_slots).Visit(root).cost;
}

}  // namespace copse::cel::internal
