#pragma once
// Runtime values of the CEL evaluator and the per-evaluation scratch state
// (internal to cel/; the public API is cel/cel.h).
//
// A Value is a small trivially copyable handle. What it points to lives in
// an Arena (strings, lists, maps made during an evaluation, freed together
// when it ends), in the compiled program (constants), or in the caller's
// Device (attribute strings and versions, capacity quantities), which
// outlives the evaluation. Errors are values too, so that `&&`, `||` and the
// quantifier macros can absorb them as CEL requires.
//
// Thread-safety: an EvalContext and its Arena belong to one evaluation on one
// thread; Values made by compilation (constants) are read-only afterwards.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cel/cel.h"

namespace copse::cel::internal {

enum class ValueKind : uint8_t {
  kError,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kType,
  kOptional,
  kQuantity,
  kSemver,
  // The DRA device and its maps, looked up in the caller's Device on use
  // instead of being copied into map values.
  kDevice,            // the `device` object
  kDeviceAttributes,  // device.attributes: domain -> kAttributeDomain
  kDeviceCapacity,    // device.capacity: domain -> kCapacityDomain
  kAttributeDomain,   // device.attributes[domain]: name -> attribute value
  kCapacityDomain,    // device.capacity[domain]: name -> quantity
};

struct Value;
struct MapEntry;

struct ListData {
  const Value* items = nullptr;
  size_t size = 0;
};

// Entries sorted by key (KeyOrder in value.cc), keys unique.
struct MapData {
  const MapEntry* entries = nullptr;
  size_t size = 0;
};

struct StrRef {
  const char* data;
  size_t size;
};

struct Value {
  ValueKind kind = ValueKind::kNull;
  union {
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    // kString, kBytes, kError (message), kType (type name), and the domain of
    // kAttributeDomain/kCapacityDomain (data null: a key that matches no
    // domain).
    StrRef str;
    const ListData* list;
    const MapData* map;
    const Quantity* quantity;
    const Semver* semver;
    const Value* optional;  // kOptional: null for optional.none()
  };

  Value() : str{nullptr, 0} {}

  static Value Null() { return Value(); }
  static Value Bool(bool v) {
    Value r;
    r.kind = ValueKind::kBool;
    r.b = v;
    return r;
  }
  static Value Int(int64_t v) {
    Value r;
    r.kind = ValueKind::kInt;
    r.i = v;
    return r;
  }
  static Value Uint(uint64_t v) {
    Value r;
    r.kind = ValueKind::kUint;
    r.u = v;
    return r;
  }
  static Value Double(double v) {
    Value r;
    r.kind = ValueKind::kDouble;
    r.d = v;
    return r;
  }
  // The text must outlive the value (arena, program or device storage).
  static Value String(std::string_view v) { return WithStr(ValueKind::kString, v); }
  static Value Bytes(std::string_view v) { return WithStr(ValueKind::kBytes, v); }
  static Value Type(std::string_view name) { return WithStr(ValueKind::kType, name); }
  static Value StaticError(std::string_view message) { return WithStr(ValueKind::kError, message); }
  static Value List(const ListData* l) {
    Value r;
    r.kind = ValueKind::kList;
    r.list = l;
    return r;
  }
  static Value Map(const MapData* m) {
    Value r;
    r.kind = ValueKind::kMap;
    r.map = m;
    return r;
  }
  static Value OfQuantity(const Quantity* q) {
    Value r;
    r.kind = ValueKind::kQuantity;
    r.quantity = q;
    return r;
  }
  static Value OfSemver(const Semver* s) {
    Value r;
    r.kind = ValueKind::kSemver;
    r.semver = s;
    return r;
  }
  static Value Optional(const Value* v) {
    Value r;
    r.kind = ValueKind::kOptional;
    r.optional = v;
    return r;
  }
  static Value Of(ValueKind kind) {
    Value r;
    r.kind = kind;
    return r;
  }
  static Value WithStr(ValueKind kind, std::string_view v) {
    Value r;
    r.kind = kind;
    r.str = StrRef{v.data(), v.size()};
    return r;
  }

  bool IsError() const { return kind == ValueKind::kError; }
  std::string_view sv() const { return {str.data, str.size}; }
};

struct MapEntry {
  Value key;
  Value value;
};

// Thrown (and caught at the evaluation's boundary) when an evaluation must
// stop at once: the cost or memory limit. cel-go stops the same way (a
// panic), and no CEL construct can absorb it.
struct Cancelled {
  std::string message;
};

// Bump allocator for one evaluation (or for a program's constants). Only
// trivially destructible objects go here; Quantity and Semver values live in
// EvalContext's owners.
class Arena {
 public:
  // Above `limit` bytes in total, Allocate throws Cancelled.
  explicit Arena(size_t limit) : limit_(limit) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void* Allocate(size_t size, size_t align);
  template <typename T>
  T* AllocateArray(size_t n) {
    return static_cast<T*>(Allocate(sizeof(T) * (n == 0 ? 1 : n), alignof(T)));
  }
  std::string_view CopyString(std::string_view s);
  size_t used() const noexcept { return used_; }

 private:
  size_t limit_;
  size_t used_ = 0;
  char* next_ = inline_;
  char* end_ = inline_ + sizeof(inline_);
  std::vector<std::unique_ptr<char[]>> chunks_;
  alignas(16) char inline_[256];
};

// The most memory one evaluation may allocate. The cost limit bounds work;
// this bounds what list concatenation (charged as O(1), as in cel-go) can
// build within it.
inline constexpr size_t kMaxEvaluationMemory = size_t{64} << 20;

class Node;

// Owns the Quantity and Semver values an evaluation (or a program's constant
// folding) creates.
struct ValueStore {
  std::vector<std::unique_ptr<Quantity>> quantities;
  std::vector<std::unique_ptr<Semver>> semvers;
};

struct EvalContext {
  EvalContext(const Device* device, uint64_t cost_limit, Arena& arena, ValueStore& store)
      : device(device), cost_limit(cost_limit), arena(arena), store(store) {}

  const Device* device;
  uint64_t cost = 0;
  uint64_t cost_limit;
  Arena& arena;
  ValueStore& store;
  // The values of comprehension and cel.bind variables, by slot.
  Value* slots = nullptr;

  void AddCost(uint64_t c) {
    cost = cost + c < cost ? UINT64_MAX : cost + c;
    if (cost > cost_limit) throw Cancelled{"operation cancelled: actual cost limit exceeded"};
  }
  Value Error(std::string_view message) { return Value::StaticError(arena.CopyString(message)); }
  Value NewString(std::string_view s) { return Value::String(arena.CopyString(s)); }
  Value NewBytes(std::string_view s) { return Value::Bytes(arena.CopyString(s)); }
  Value NewQuantity(Quantity q);
  Value NewSemver(Semver s);
  Value NewList(const std::vector<Value>& items);
  // Sorts and checks for duplicate keys (an error value if any).
  Value NewMap(std::vector<MapEntry> entries);
  Value NewOptional(const Value& v);
};

// --- Operations shared by the evaluator and the function library ---------

// CEL's heterogeneous equality: numbers compare by value across int, uint
// and double; values of different types are unequal; lists and maps compare
// element-wise. Never an error (errors are handled by the caller).
bool ValuesEqual(EvalContext& ctx, const Value& a, const Value& b);

// Ordering of two values of an ordered type (bool, numbers across types,
// string, bytes): -1, 0 or 1; 2 when unordered (NaN); -2 when the types have
// no ordering (no such overload).
int CompareValues(const Value& a, const Value& b);

// The CEL runtime type name (type(x)): "int", "list", "kubernetes.Quantity"...
std::string_view TypeName(const Value& v);

// Size as cel-go's cost model sees it: code points of a string, bytes,
// entries of a list or map, 1 otherwise.
uint64_t CostSize(EvalContext& ctx, const Value& v);
// Number of code points of a UTF-8 string.
uint64_t CodePoints(std::string_view s);

// Maps, including the device and its maps.
bool IsMapLike(const Value& v);
size_t MapSize(EvalContext& ctx, const Value& m);
// Index and field selection: the value at `key`, or false. The device's
// attribute and capacity maps find every domain (an empty map when the
// device has nothing in it), as Kubernetes' do.
bool MapFind(EvalContext& ctx, const Value& m, const Value& key, Value* out);
// The `in` operator: whether the key is really present.
bool MapHas(EvalContext& ctx, const Value& m, const Value& key);
// The keys in iteration order.
std::vector<Value> MapKeys(EvalContext& ctx, const Value& m);

// The runtime error for a missing key: "no such key: <key>".
Value NoSuchKey(EvalContext& ctx, const Value& key);
// "no such overload"
Value NoSuchOverload();

// The value of a device attribute.
Value AttributeToValue(const AttributeValue& a);

// Go's %g of a double (cel-go's string(double)).
std::string FormatDouble(double d);
// A value as cel-go prints it in error messages (%v).
std::string DebugString(EvalContext& ctx, const Value& v);

}  // namespace copse::cel::internal
