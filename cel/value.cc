#include "cel/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace copse::cel::internal {
namespace {

constexpr size_t kChunkSize = 16 << 10;

bool IsNumeric(const Value& v) {
  return v.kind == ValueKind::kInt || v.kind == ValueKind::kUint || v.kind == ValueKind::kDouble;
}

int Sign(double d) { return d < 0 ? -1 : (d > 0 ? 1 : 0); }

// Exact comparison of an int64 with a double; 2 if the double is NaN.
int CompareIntDouble(int64_t i, double d) {
  if (std::isnan(d)) return 2;
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  auto t = static_cast<int64_t>(d);  // truncates toward zero, in range
  if (i < t) return -1;
  if (i > t) return 1;
  return -Sign(d - static_cast<double>(t));
}

int CompareUintDouble(uint64_t u, double d) {
  if (std::isnan(d)) return 2;
  if (d >= 18446744073709551616.0) return -1;
  if (d < 0) return 1;
  auto t = static_cast<uint64_t>(d);
  if (u < t) return -1;
  if (u > t) return 1;
  return -Sign(d - static_cast<double>(t));
}

int CompareNumbers(const Value& a, const Value& b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  switch (a.kind) {
    case ValueKind::kInt:
      if (b.kind == ValueKind::kInt) return cmp(a.i, b.i);
      if (b.kind == ValueKind::kUint) return a.i < 0 ? -1 : cmp(static_cast<uint64_t>(a.i), b.u);
      return CompareIntDouble(a.i, b.d);
    case ValueKind::kUint:
      if (b.kind == ValueKind::kUint) return cmp(a.u, b.u);
      if (b.kind == ValueKind::kInt) return b.i < 0 ? 1 : cmp(a.u, static_cast<uint64_t>(b.i));
      return CompareUintDouble(a.u, b.d);
    default:
      if (b.kind == ValueKind::kDouble) {
        if (std::isnan(a.d) || std::isnan(b.d)) return 2;
        return cmp(a.d, b.d);
      }
      if (b.kind == ValueKind::kInt) {
        int c = CompareIntDouble(b.i, a.d);
        return c == 2 ? 2 : -c;
      }
      int c = CompareUintDouble(b.u, a.d);
      return c == 2 ? 2 : -c;
  }
}

// Map keys: bool < numbers < strings; int and uint keys of equal value are
// the same key.
int KeyClass(const Value& k) {
  switch (k.kind) {
    case ValueKind::kBool:
      return 0;
    case ValueKind::kInt:
    case ValueKind::kUint:
      return 1;
    default:
      return 2;
  }
}

int CompareKeys(const Value& a, const Value& b) {
  int ca = KeyClass(a), cb = KeyClass(b);
  if (ca != cb) return ca < cb ? -1 : 1;
  if (ca == 0) return a.b == b.b ? 0 : (a.b ? 1 : -1);
  if (ca == 1) return CompareNumbers(a, b);
  int c = a.sv().compare(b.sv());
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// A lookup key as a map key, or false if it cannot equal any key (an
// integral double finds the int key of the same value, as in cel-go).
bool NormalizeKey(const Value& key, Value* out) {
  switch (key.kind) {
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kUint:
    case ValueKind::kString:
      *out = key;
      return true;
    case ValueKind::kDouble: {
      double d = key.d;
      if (std::isnan(d) || std::trunc(d) != d) return false;
      if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        *out = Value::Int(static_cast<int64_t>(d));
        return true;
      }
      if (d >= 0 && d < 18446744073709551616.0) {
        *out = Value::Uint(static_cast<uint64_t>(d));
        return true;
      }
      return false;
    }
    default:
      return false;
  }
}

const MapEntry* FindEntry(const MapData* m, const Value& key) {
  const MapEntry* begin = m->entries;
  const MapEntry* end = m->entries + m->size;
  const MapEntry* it = std::lower_bound(
      begin, end, key, [](const MapEntry& e, const Value& k) { return CompareKeys(e.key, k) < 0; });
  if (it != end && CompareKeys(it->key, key) == 0) return it;
  return nullptr;
}

bool SameDomain(const Value& domain_value, std::string_view domain) {
  return domain_value.str.data != nullptr && domain_value.sv() == domain;
}

}  // namespace

void* Arena::Allocate(size_t size, size_t align) {
  auto p = reinterpret_cast<uintptr_t>(next_);
  uintptr_t aligned = (p + align - 1) & ~(uintptr_t{align} - 1);
  if (aligned + size <= reinterpret_cast<uintptr_t>(end_)) {
    next_ = reinterpret_cast<char*>(aligned + size);
    return reinterpret_cast<void*>(aligned);
  }
  size_t chunk = std::max(kChunkSize, size + align);
  if (used_ + chunk > limit_) {
    throw Cancelled{"operation cancelled: evaluation memory limit of " +
                    std::to_string(limit_ >> 20) + " MiB exceeded"};
  }
  used_ += chunk;
  chunks_.push_back(std::make_unique<char[]>(chunk));
  next_ = chunks_.back().get();
  end_ = next_ + chunk;
  return Allocate(size, align);
}

std::string_view Arena::CopyString(std::string_view s) {
  if (s.empty()) return {};
  char* p = AllocateArray<char>(s.size());
  std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

Value EvalContext::NewQuantity(Quantity q) {
  store.quantities.push_back(std::make_unique<Quantity>(std::move(q)));
  return Value::OfQuantity(store.quantities.back().get());
}

Value EvalContext::NewSemver(Semver s) {
  store.semvers.push_back(std::make_unique<Semver>(std::move(s)));
  return Value::OfSemver(store.semvers.back().get());
}

Value EvalContext::NewList(const std::vector<Value>& items) {
  auto* data = arena.AllocateArray<ListData>(1);
  Value* copy = arena.AllocateArray<Value>(items.size());
  std::copy(items.begin(), items.end(), copy);
  data->items = copy;
  data->size = items.size();
  return Value::List(data);
}

Value EvalContext::NewMap(std::vector<MapEntry> entries) {
  for (const MapEntry& e : entries) {
    if (e.key.kind != ValueKind::kBool && e.key.kind != ValueKind::kInt &&
        e.key.kind != ValueKind::kUint && e.key.kind != ValueKind::kString) {
      return Error("unsupported key type");
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const MapEntry& a, const MapEntry& b) {
    return CompareKeys(a.key, b.key) < 0;
  });
  for (size_t i = 1; i < entries.size(); ++i) {
    if (CompareKeys(entries[i - 1].key, entries[i].key) == 0) {
      return Error("Failed with repeated key: " + DebugString(*this, entries[i].key));
    }
  }
  auto* data = arena.AllocateArray<MapData>(1);
  auto* copy = arena.AllocateArray<MapEntry>(entries.size());
  std::copy(entries.begin(), entries.end(), copy);
  data->entries = copy;
  data->size = entries.size();
  return Value::Map(data);
}

Value EvalContext::NewOptional(const Value& v) {
  auto* p = arena.AllocateArray<Value>(1);
  *p = v;
  return Value::Optional(p);
}

bool ValuesEqual(EvalContext& ctx, const Value& a, const Value& b) {
  if (IsNumeric(a) && IsNumeric(b)) return CompareNumbers(a, b) == 0;
  if (IsMapLike(a) && IsMapLike(b)) {
    if (MapSize(ctx, a) != MapSize(ctx, b)) return false;
    for (const Value& k : MapKeys(ctx, a)) {
      Value va, vb;
      if (!MapHas(ctx, b, k) || !MapFind(ctx, a, k, &va) || !MapFind(ctx, b, k, &vb)) {
        return false;
      }
      if (!ValuesEqual(ctx, va, vb)) return false;
    }
    return true;
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind::kNull:
      return true;
    case ValueKind::kBool:
      return a.b == b.b;
    case ValueKind::kString:
    case ValueKind::kBytes:
    case ValueKind::kType:
      return a.sv() == b.sv();
    case ValueKind::kList:
      if (a.list->size != b.list->size) return false;
      for (size_t i = 0; i < a.list->size; ++i) {
        if (!ValuesEqual(ctx, a.list->items[i], b.list->items[i])) return false;
      }
      return true;
    case ValueKind::kOptional:
      if (a.optional == nullptr || b.optional == nullptr) return a.optional == b.optional;
      return ValuesEqual(ctx, *a.optional, *b.optional);
    case ValueKind::kQuantity:
      return *a.quantity == *b.quantity;
    case ValueKind::kSemver:
      return *a.semver == *b.semver;
    default:
      return false;
  }
}

int CompareValues(const Value& a, const Value& b) {
  if (IsNumeric(a) && IsNumeric(b)) return CompareNumbers(a, b);
  if (a.kind != b.kind) return -2;
  switch (a.kind) {
    case ValueKind::kBool:
      return a.b == b.b ? 0 : (a.b ? 1 : -1);
    case ValueKind::kString:
    case ValueKind::kBytes: {
      int c = a.sv().compare(b.sv());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default:
      return -2;
  }
}

std::string_view TypeName(const Value& v) {
  switch (v.kind) {
    case ValueKind::kError:
      return "*types.Err";
    case ValueKind::kNull:
      return "null_type";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kUint:
      return "uint";
    case ValueKind::kDouble:
      return "double";
    case ValueKind::kString:
      return "string";
    case ValueKind::kBytes:
      return "bytes";
    case ValueKind::kList:
      return "list";
    case ValueKind::kType:
      return "type";
    case ValueKind::kOptional:
      return "optional_type";
    case ValueKind::kQuantity:
      return "kubernetes.Quantity";
    case ValueKind::kSemver:
      return "kubernetes.Semver";
    default:
      return "map";
  }
}

uint64_t CodePoints(std::string_view s) {
  uint64_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

uint64_t CostSize(EvalContext& ctx, const Value& v) {
  switch (v.kind) {
    case ValueKind::kString:
      return CodePoints(v.sv());
    case ValueKind::kBytes:
      return v.str.size;
    case ValueKind::kList:
      return v.list->size;
    case ValueKind::kOptional:
      return v.optional == nullptr ? 1 : CostSize(ctx, *v.optional);
    default:
      return IsMapLike(v) && v.kind != ValueKind::kDevice ? MapSize(ctx, v) : 1;
  }
}

bool IsMapLike(const Value& v) {
  switch (v.kind) {
    case ValueKind::kMap:
    case ValueKind::kDevice:
    case ValueKind::kDeviceAttributes:
    case ValueKind::kDeviceCapacity:
    case ValueKind::kAttributeDomain:
    case ValueKind::kCapacityDomain:
      return true;
    default:
      return false;
  }
}

std::vector<Value> MapKeys(EvalContext& ctx, const Value& m) {
  std::vector<Value> keys;
  const Device& d = *ctx.device;
  switch (m.kind) {
    case ValueKind::kMap:
      for (size_t i = 0; i < m.map->size; ++i) keys.push_back(m.map->entries[i].key);
      break;
    case ValueKind::kDevice:
      for (std::string_view k : {"driver", "attributes", "capacity", "allowMultipleAllocations"}) {
        keys.push_back(Value::String(k));
      }
      break;
    case ValueKind::kDeviceAttributes:
    case ValueKind::kDeviceCapacity: {
      auto add = [&](std::string_view domain) {
        for (const Value& k : keys) {
          if (k.sv() == domain) return;
        }
        keys.push_back(Value::String(domain));
      };
      if (m.kind == ValueKind::kDeviceAttributes) {
        for (const DeviceAttribute& a : d.attributes) add(a.domain);
      } else {
        for (const DeviceCapacity& c : d.capacity) add(c.domain);
      }
      break;
    }
    case ValueKind::kAttributeDomain:
    case ValueKind::kCapacityDomain: {
      auto add = [&](std::string_view name) {
        for (const Value& k : keys) {
          if (k.sv() == name) return;
        }
        keys.push_back(Value::String(name));
      };
      if (m.kind == ValueKind::kAttributeDomain) {
        for (const DeviceAttribute& a : d.attributes) {
          if (SameDomain(m, a.domain)) add(a.name);
        }
      } else {
        for (const DeviceCapacity& c : d.capacity) {
          if (SameDomain(m, c.domain)) add(c.name);
        }
      }
      break;
    }
    default:
      break;
  }
  return keys;
}

size_t MapSize(EvalContext& ctx, const Value& m) {
  if (m.kind == ValueKind::kMap) return m.map->size;
  return MapKeys(ctx, m).size();
}

Value AttributeToValue(const AttributeValue& a) {
  switch (a.index()) {
    case 0:
      return Value::Int(std::get<0>(a));
    case 1:
      return Value::Bool(std::get<1>(a));
    case 2:
      return Value::String(std::get<2>(a));
    default:
      return Value::OfSemver(std::get<3>(a));
  }
}

bool MapFind(EvalContext& ctx, const Value& m, const Value& key, Value* out) {
  const Device& d = *ctx.device;
  switch (m.kind) {
    case ValueKind::kMap: {
      Value k;
      if (!NormalizeKey(key, &k)) return false;
      const MapEntry* e = FindEntry(m.map, k);
      if (e == nullptr) return false;
      *out = e->value;
      return true;
    }
    case ValueKind::kDevice: {
      if (key.kind != ValueKind::kString) return false;
      std::string_view k = key.sv();
      if (k == "driver") {
        *out = Value::String(d.driver);
      } else if (k == "attributes") {
        *out = Value::Of(ValueKind::kDeviceAttributes);
      } else if (k == "capacity") {
        *out = Value::Of(ValueKind::kDeviceCapacity);
      } else if (k == "allowMultipleAllocations") {
        *out = Value::Bool(d.allow_multiple_allocations);
      } else {
        return false;
      }
      return true;
    }
    case ValueKind::kDeviceAttributes:
    case ValueKind::kDeviceCapacity: {
      // Kubernetes' DRA maps answer an unknown domain with an empty map.
      ValueKind inner = m.kind == ValueKind::kDeviceAttributes ? ValueKind::kAttributeDomain
                                                               : ValueKind::kCapacityDomain;
      *out = key.kind == ValueKind::kString ? Value::WithStr(inner, key.sv()) : Value::Of(inner);
      return true;
    }
    case ValueKind::kAttributeDomain:
      if (key.kind != ValueKind::kString) return false;
      for (const DeviceAttribute& a : d.attributes) {
        if (SameDomain(m, a.domain) && a.name == key.sv()) {
          *out = AttributeToValue(a.value);
          return true;
        }
      }
      return false;
    case ValueKind::kCapacityDomain:
      if (key.kind != ValueKind::kString) return false;
      for (const DeviceCapacity& c : d.capacity) {
        if (SameDomain(m, c.domain) && c.name == key.sv()) {
          *out = Value::OfQuantity(c.value);
          return true;
        }
      }
      return false;
    default:
      return false;
  }
}

bool MapHas(EvalContext& ctx, const Value& m, const Value& key) {
  if (m.kind == ValueKind::kDeviceAttributes || m.kind == ValueKind::kDeviceCapacity) {
    if (key.kind != ValueKind::kString) return false;
    for (const Value& k : MapKeys(ctx, m)) {
      if (k.sv() == key.sv()) return true;
    }
    return false;
  }
  Value ignored;
  return MapFind(ctx, m, key, &ignored);
}

Value NoSuchKey(EvalContext& ctx, const Value& key) {
  return ctx.Error("no such key: " + DebugString(ctx, key));
}

Value NoSuchOverload() { return Value::StaticError("no such overload"); }

std::string FormatDouble(double d) {
  // Go's %g: shortest representation, exponent form below 1e-4 and from 1e21.
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, end);
  size_t e = sci.find('e');
  int exp = std::stoi(sci.substr(e + 1));
  std::string mant = sci.substr(0, e);
  bool neg = !mant.empty() && mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  if (exp < -4 || exp >= 21) {
    std::string out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof(eb), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    return (neg ? "-" : "") + out + eb;
  }
  std::string out;
  if (exp < 0) {
    out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0');
  } else {
    out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." +
          digits.substr(static_cast<size_t>(exp) + 1);
  }
  return (neg ? "-" : "") + out;
}

std::string DebugString(EvalContext& ctx, const Value& v) {
  switch (v.kind) {
    case ValueKind::kError:
    case ValueKind::kString:
    case ValueKind::kType:
      return std::string(v.sv());
    case ValueKind::kBytes:
      return std::string(v.sv());
    case ValueKind::kNull:
      return "<nil>";
    case ValueKind::kBool:
      return v.b ? "true" : "false";
    case ValueKind::kInt:
      return std::to_string(v.i);
    case ValueKind::kUint:
      return std::to_string(v.u);
    case ValueKind::kDouble:
      return FormatDouble(v.d);
    case ValueKind::kQuantity:
      return v.quantity->ToString();
    case ValueKind::kSemver:
      return v.semver->ToString();
    case ValueKind::kOptional:
      return v.optional == nullptr ? "optional.none()"
                                   : "optional(" + DebugString(ctx, *v.optional) + ")";
    case ValueKind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < v.list->size; ++i) {
        if (i > 0) out += ", ";
        out += DebugString(ctx, v.list->items[i]);
      }
      return out + "]";
    }
    default: {
      std::string out = "{";
      bool first = true;
      for (const Value& k : MapKeys(ctx, v)) {
        Value val;
        if (!MapFind(ctx, v, k, &val)) continue;
        if (!first) out += ", ";
        first = false;
        out += DebugString(ctx, k) + ": " + DebugString(ctx, val);
      }
      return out + "}";
    }
  }
}

}  // namespace copse::cel::internal
