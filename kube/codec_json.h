#pragma once
// Building blocks for writing object codecs. PRIVATE to .cc files: this header
// includes simdjson and nlohmann, which must stay out of public headers.
//
// Decoding (simdjson DOM):
//   Reader tracks the JSON path being read; the first failure is kept as
//   "<path>: <message>". Read* functions return false once the reader failed.
//     return ForEachField(r, e, [&](std::string_view key, Element v) {
//       if (key == "name") return Read(r, v, out.name);
//       if (key == "ports") return ReadArray(r, v, out.ports, ReadPort);
//       return true;  // unknown fields are skipped (they live on in `raw`)
//     });
//   JSON null anywhere reads as the zero value (Go's encoding/json does the same).
//
// Encoding (nlohmann): an object whose typed fields were not edited encodes
//   as its raw text, byte for byte. Otherwise the typed value is overlaid on
//   the JSON it was decoded from (keys come out sorted). Every Put*
//   takes `now` (the typed value) and `before` (the value decoded from the
//   same raw JSON, or nullptr when there is none). A field whose value did not
//   change is left exactly as it was in raw ("1000m" stays "1000m"); a changed
//   field is rewritten; an emptied optional field is removed. Struct fields are
//   overlaid recursively so their unknown members survive.

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/labels.h"
#include "core/quantity.h"
#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"

namespace copse::kube::codec {

using Element = simdjson::dom::element;
using Json = nlohmann::json;

// ---------------------------------------------------------------- decoding

class Reader {
 public:
  // Pops the path segment pushed by Field/Index/MapKey when a field is done.
  class [[nodiscard]] Scope {
   public:
    Scope(Reader& reader, size_t depth) noexcept : reader_(&reader), depth_(depth) {}
    ~Scope() { reader_->depth_ = depth_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Reader* reader_;
    size_t depth_;
  };

  Reader() = default;

  // The names must outlive the scope (JSON keys and literals do); the path
  // text is only built when a failure is recorded.
  Scope Field(std::string_view name) { return Push(Segment{name, 0, Segment::kField}); }
  Scope Index(size_t index) { return Push(Segment{{}, index, Segment::kIndex}); }
  // ".cpu", or "[nvidia.com/gpu]" when the key is not a plain word.
  Scope MapKey(std::string_view key) { return Push(Segment{key, 0, Segment::kMapKey}); }

  // Records "<path>: <message>" unless a failure is already recorded; returns false.
  bool Fail(std::string_view message);
  // "expected <expected>, got <actual type>".
  bool TypeError(Element value, std::string_view expected);

  bool failed() const noexcept { return error_.has_value(); }
  std::string Path() const;  // "spec.containers[0].resources.requests.cpu"
  Error TakeError();

 private:
  struct Segment {
    enum Kind : uint8_t { kField, kIndex, kMapKey };
    std::string_view name;
    size_t index;
    Kind kind;
  };
  // Typed decoders nest about a dozen levels; deeper segments are counted
  // but not kept (the path then ends in "...").
  static constexpr size_t kMaxDepth = 48;

  Scope Push(Segment segment) noexcept {
    size_t depth = depth_;
    if (depth_ < kMaxDepth) segments_[depth_] = segment;
    ++depth_;
    return Scope(*this, depth);
  }

  std::array<Segment, kMaxDepth> segments_;
  size_t depth_ = 0;
  std::optional<Error> error_;
};

std::string_view TypeName(Element value) noexcept;

// The thread-local simdjson parser while it is free, else a private one (so
// a decoder that runs inside another decoder cannot clobber its document).
class ParserLease {
 public:
  ParserLease();
  ~ParserLease();
  ParserLease(const ParserLease&) = delete;
  ParserLease& operator=(const ParserLease&) = delete;
  simdjson::dom::parser& parser() noexcept { return *parser_; }

 private:
  std::unique_ptr<simdjson::dom::parser> own_;
  simdjson::dom::parser* parser_;
};

// Parses `json`; a malformed document is reported with the path and the
// line/column of the syntax error. `root` lives as long as the lease.
// `padded`: the caller promises SIMDJSON_PADDING readable bytes after the
// text (saves simdjson a copy).
Status ParseDocument(ParserLease& lease, std::string_view json, Element& root, bool padded = false);

// Parses `json` and runs `fill(Reader&, Element root)`; the element is valid
// only inside `fill`.
template <typename F>
Status ParseAndRead(std::string_view json, F&& fill, bool padded = false) {
  ParserLease lease;
  Element root;
  Status parsed = ParseDocument(lease, json, root, padded);
  if (!parsed.ok()) return parsed;
  Reader reader;
  if (!fill(reader, root)) return reader.TakeError();
  return Status::Ok();
}

template <typename F>
bool ForEachField(Reader& r, Element e, F&& fn) {
  if (e.is_null()) return true;
  simdjson::dom::object object;
  if (e.get_object().get(object) != simdjson::SUCCESS) return r.TypeError(e, "object");
  for (simdjson::dom::key_value_pair field : object) {
    auto scope = r.Field(field.key);
    if (!fn(field.key, field.value)) return false;
  }
  return true;
}

template <typename F>
bool ForEachElement(Reader& r, Element e, F&& fn) {
  if (e.is_null()) return true;
  simdjson::dom::array array;
  if (e.get_array().get(array) != simdjson::SUCCESS) return r.TypeError(e, "array");
  size_t index = 0;
  for (Element item : array) {
    auto scope = r.Index(index);
    if (!fn(item)) return false;
    ++index;
  }
  return true;
}

// Reads an array of T; `read_one(Reader&, Element, T&)` reads one element.
template <typename T, typename F>
bool ReadArray(Reader& r, Element e, std::vector<T>& out, F&& read_one) {
  out.clear();
  if (e.is_null()) return true;
  simdjson::dom::array array;
  if (e.get_array().get(array) != simdjson::SUCCESS) return r.TypeError(e, "array");
  out.reserve(array.size());
  size_t index = 0;
  for (Element item : array) {
    auto scope = r.Index(index);
    out.emplace_back();
    if (!read_one(r, item, out.back())) return false;
    ++index;
  }
  return true;
}

// An optional struct: null reads as nullopt, anything else through
// `read_one(Reader&, Element, T&)`.
template <typename T, typename F>
bool ReadOpt(Reader& r, Element e, std::optional<T>& out, F&& read_one) {
  if (e.is_null()) {
    out.reset();
    return true;
  }
  out.emplace();
  return read_one(r, e, *out);
}

bool Read(Reader& r, Element e, std::string& out);
bool Read(Reader& r, Element e, bool& out);
bool Read(Reader& r, Element e, int64_t& out);
bool Read(Reader& r, Element e, int32_t& out);
bool Read(Reader& r, Element e, std::vector<std::string>& out);
bool Read(Reader& r, Element e, Labels& out);  // any map of string -> string
bool Read(Reader& r, Element e, Quantity& out);
bool Read(Reader& r, Element e, ResourceList& out);
bool Read(Reader& r, Element e, IntOrString& out);
// null reads as LabelSelector::Nothing(); see DecodeLabelSelector.
bool Read(Reader& r, Element e, LabelSelector& out);
bool Read(Reader& r, Element e, NodeSelectorTerm& out);
bool Read(Reader& r, Element e, NodeSelector& out);
bool Read(Reader& r, Element e, ObjectMeta& out);
bool Read(Reader& r, Element e, OwnerReference& out);
bool Read(Reader& r, Element e, Condition& out);
bool Read(Reader& r, Element e, std::vector<Condition>& out);
bool Read(Reader& r, Element e, ObjectReference& out);
// The value re-serialised as minified JSON text.
bool ReadRawJson(Reader& r, Element e, std::string& out);

// null reads as nullopt.
template <typename T>
bool Read(Reader& r, Element e, std::optional<T>& out) {
  if (e.is_null()) {
    out.reset();
    return true;
  }
  out.emplace();
  return Read(r, e, *out);
}

// Handles "apiVersion" and "kind"; returns true when `key` was one of them
// (`ok` then tells whether it was read successfully).
bool ReadTypeMeta(Reader& r, std::string_view key, Element value, KubeObject& out, bool& ok);

// Fails when `kind` is set and is not `expected` (and not in `also`).
bool CheckKind(Reader& r, const KubeObject& object, std::string_view expected,
               std::string_view also = {});

// Decodes a whole object: runs `read_field(reader, key, value)` for every
// top-level field other than apiVersion/kind/metadata, checks the kind, and
// keeps `json` as raw. `also_kind` is a second accepted kind (if any).
template <typename T, typename F>
Result<T> DecodeObject(std::string_view json, std::string_view kind, F&& read_field,
                       std::string_view also_kind = {}) {
  T out;
  // raw doubles as simdjson's padded input buffer.
  out.raw.reserve(json.size() + simdjson::SIMDJSON_PADDING);
  out.raw.assign(json.data(), json.size());
  Status status = ParseAndRead(
      out.raw,
      [&](Reader& r, Element root) {
        if (!root.is_object()) return r.TypeError(root, "object");
        bool ok = ForEachField(r, root, [&](std::string_view key, Element value) {
          bool type_ok = true;
          if (ReadTypeMeta(r, key, value, out, type_ok)) return type_ok;
          if (key == "metadata") return Read(r, value, out.meta);
          return read_field(r, key, value, out);
        });
        return ok && CheckKind(r, out, kind, also_kind);
      },
      /*padded=*/true);
  if (!status.ok()) return status.error();
  return out;
}

// ---------------------------------------------------------------- encoding

enum class Emit : uint8_t {
  kOmitEmpty,  // an empty value removes the key (Go's omitempty)
  kAlways,     // zero values are written too (non-omitempty Go fields)
};

// `raw` parsed as a JSON object; an empty object when raw is empty or not an object.
Json ParseRaw(const std::string& raw);

Json ToJson(const std::string& v);
Json ToJson(bool v);
Json ToJson(int64_t v);
Json ToJson(int32_t v);
Json ToJson(const std::vector<std::string>& v);
Json ToJson(const Labels& v);
Json ToJson(const Quantity& v);
Json ToJson(const ResourceList& v);
Json ToJson(const IntOrString& v);
Json ToJson(const LabelSelector& v);
Json ToJson(const NodeSelectorTerm& v);
Json ToJson(const NodeSelector& v);

inline bool IsEmpty(const std::string& v) { return v.empty(); }
inline bool IsEmpty(bool v) { return !v; }
inline bool IsEmpty(int64_t v) { return v == 0; }
inline bool IsEmpty(int32_t v) { return v == 0; }
inline bool IsEmpty(const std::vector<std::string>& v) { return v.empty(); }
inline bool IsEmpty(const Labels& v) { return v.empty(); }
inline bool IsEmpty(const ResourceList& v) { return v.empty(); }
inline bool IsEmpty(const Quantity& v) { return v.IsZero(); }
inline bool IsEmpty(const IntOrString&) { return false; }    // presence is meaningful
inline bool IsEmpty(const LabelSelector&) { return false; }  // {} differs from absent
inline bool IsEmpty(const NodeSelectorTerm& v) {
  return v.match_expressions.empty() && v.match_fields.empty();
}
inline bool IsEmpty(const NodeSelector& v) { return v.terms.empty(); }

// `before->*field`, or nullptr when there is no `before`.
template <typename S, typename M>
const M* Prev(const S* before, M S::*field) noexcept {
  return before != nullptr ? &(before->*field) : nullptr;
}

// A leaf field: rewritten only when it changed.
template <typename T>
void Put(Json& obj, const char* key, const T& now, const T* before, Emit emit = Emit::kOmitEmpty) {
  if (before != nullptr && *before == now) return;
  if (emit == Emit::kOmitEmpty && IsEmpty(now)) {
    obj.erase(key);
    return;
  }
  obj[key] = ToJson(now);
}

// An optional leaf: nullopt removes the key; a value is written even if zero.
template <typename T>
void PutOpt(Json& obj, const char* key, const std::optional<T>& now,
            const std::optional<T>* before) {
  if (before != nullptr && *before == now) return;
  if (!now.has_value()) {
    obj.erase(key);
    return;
  }
  obj[key] = ToJson(*now);
}

// A resource list: unchanged quantities keep their original spelling.
void PutResourceList(Json& obj, const char* key, const ResourceList& now,
                     const ResourceList* before);

// A struct field: `overlay(Json& child)` writes its members into the existing
// object (created if missing; not added if it stays empty).
template <typename F>
void PutObject(Json& obj, const char* key, F&& overlay) {
  auto it = obj.find(key);
  if (it != obj.end() && it->is_object()) {
    overlay(*it);
    return;
  }
  Json child = Json::object();
  overlay(child);
  if (!child.empty()) obj[key] = std::move(child);
}

// An optional struct: `overlay(Json&, const T& now, const T* before)`.
template <typename T, typename F>
void PutOptObject(Json& obj, const char* key, const std::optional<T>& now,
                  const std::optional<T>* before, F&& overlay) {
  if (before != nullptr && *before == now) return;
  if (!now.has_value()) {
    obj.erase(key);
    return;
  }
  const T* previous = (before != nullptr && before->has_value()) ? &**before : nullptr;
  auto it = obj.find(key);
  if (it != obj.end() && it->is_object() && previous != nullptr) {
    overlay(*it, *now, previous);
    return;
  }
  Json child = Json::object();
  overlay(child, *now, nullptr);
  obj[key] = std::move(child);
}

// Never the same element: changed elements are matched by position only.
struct NoKey {
  template <typename T>
  bool operator()(const T&, const T&) const noexcept {
    return false;
  }
};

// An array of structs. Each new element reuses the raw JSON of an old one so
// unknown members survive: an identical old element is copied verbatim; else
// one with the same key (`same_key(old, now)`, e.g. same container name) is
// overlaid; else, when the length did not change, the one at the same
// position; else the element is written fresh.
// `overlay(Json&, const T& now, const T* before)` writes one element.
template <typename T, typename F, typename K = NoKey>
void PutArray(Json& obj, const char* key, const std::vector<T>& now, const std::vector<T>* before,
              F&& overlay, K&& same_key = K{}, Emit emit = Emit::kOmitEmpty) {
  if (before != nullptr && *before == now) return;
  if (now.empty()) {
    if (emit == Emit::kOmitEmpty) {
      obj.erase(key);
    } else {
      obj[key] = Json::array();
    }
    return;
  }
  Json old = Json::array();
  auto it = obj.find(key);
  if (before != nullptr && it != obj.end() && it->is_array() && it->size() == before->size()) {
    old = std::move(*it);
  } else {
    before = nullptr;
  }
  std::vector<bool> used(old.size(), false);
  Json out = Json::array();
  for (size_t i = 0; i < now.size(); ++i) {
    size_t match = old.size();
    bool exact = false;
    if (before != nullptr) {
      // Prefer the same position for identical elements (stable for duplicates).
      if (i < before->size() && !used[i] && (*before)[i] == now[i]) {
        match = i;
        exact = true;
      }
      for (size_t j = 0; !exact && j < before->size(); ++j) {
        if (!used[j] && (*before)[j] == now[i]) {
          match = j;
          exact = true;
        }
      }
      for (size_t j = 0; match == old.size() && j < before->size(); ++j) {
        if (!used[j] && same_key((*before)[j], now[i])) match = j;
      }
      if (match == old.size() && before->size() == now.size() && !used[i]) match = i;
    }
    if (match == old.size()) {
      Json element = Json::object();
      overlay(element, now[i], static_cast<const T*>(nullptr));
      out.push_back(std::move(element));
      continue;
    }
    used[match] = true;
    Json element = std::move(old[match]);
    if (!exact) {
      if (!element.is_object()) element = Json::object();
      overlay(element, now[i], &(*before)[match]);
    }
    out.push_back(std::move(element));
  }
  obj[key] = std::move(out);
}

// apiVersion and kind; empty typed values fall back to the given defaults.
void PutTypeMeta(Json& root, const KubeObject& now, const KubeObject* before,
                 std::string_view default_api_version, std::string_view default_kind);
void OverlayObjectMeta(Json& meta, const ObjectMeta& now, const ObjectMeta* before);
void OverlayOwnerReference(Json& j, const OwnerReference& now, const OwnerReference* before);
void OverlayCondition(Json& j, const Condition& now, const Condition* before);
void PutConditions(Json& obj, const char* key, const std::vector<Condition>& now,
                   const std::vector<Condition>* before);
void OverlayObjectReference(Json& j, const ObjectReference& now, const ObjectReference* before);

// Decodes `raw` again with T::Decode to learn what the typed fields were
// before any edit; nullopt when raw is empty or does not decode.
template <typename T>
std::optional<T> DecodeBefore(const std::string& raw) {
  if (raw.empty()) return std::nullopt;
  Result<T> decoded = T::Decode(raw);
  if (!decoded.ok()) return std::nullopt;
  return std::move(decoded).value();
}

// Whether two ObjectMeta hold the same values (ObjectMeta has no operator==).
bool SameObjectMeta(const ObjectMeta& a, const ObjectMeta& b);

// The common frame of T::Encode(). `same_body(const T& before)` tells whether
// the kind-specific typed fields equal those decoded from raw; when they and
// apiVersion/kind/metadata do, raw is returned unchanged. Otherwise raw is
// parsed, apiVersion/kind/metadata overlaid, then `overlay_body(root, before)`
// writes the rest, and the result is dumped compactly.
template <typename T, typename Same, typename F>
std::string EncodeObject(const T& now, std::string_view default_api_version,
                         std::string_view default_kind, Same&& same_body, F&& overlay_body) {
  std::optional<T> before = DecodeBefore<T>(now.raw);
  const T* previous = before.has_value() ? &*before : nullptr;
  if (previous != nullptr && now.api_version == previous->api_version &&
      now.kind == previous->kind &&
      (!previous->api_version.empty() || default_api_version.empty()) &&
      (!previous->kind.empty() || default_kind.empty()) &&
      SameObjectMeta(now.meta, previous->meta) && same_body(*previous)) {
    return now.raw;
  }
  Json root = ParseRaw(now.raw);
  PutTypeMeta(root, now, previous, default_api_version, default_kind);
  PutObject(root, "metadata", [&](Json& meta) {
    OverlayObjectMeta(meta, now.meta, previous != nullptr ? &previous->meta : nullptr);
  });
  overlay_body(root, previous);
  return root.dump();
}

}  // namespace copse::kube::codec
