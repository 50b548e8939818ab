#include "kube/codec_json.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "core/json_text.h"

namespace copse::kube::codec {

namespace {

// A map key is shown as ".key" when it is a plain word, else as "[key]"
// (resource names like nvidia.com/gpu, label keys like app.kubernetes.io/name).
bool IsPlainWord(std::string_view key) noexcept {
  if (key.empty()) return false;
  for (char c : key) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-';
    if (!word) return false;
  }
  return true;
}

std::string FormatDouble(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return "NaN";
  return std::string(buffer, end);
}

// Whether this thread's parser holds a document being read right now.
thread_local bool t_parser_busy = false;

// Kubernetes' nesting limit (kMaxJsonDepth) instead of simdjson's 1024:
// what a server may send, this client reads.
void AllowKubeDepth(simdjson::dom::parser& parser) {
  // On failure (memory) the parse allocates again and reports it.
  const simdjson::error_code ignored = parser.allocate(64 * 1024, kMaxJsonDepth);
  (void)ignored;
}

simdjson::dom::parser& ThreadParser() {
  thread_local simdjson::dom::parser parser;
  thread_local bool ready = false;
  if (!ready) {
    AllowKubeDepth(parser);
    ready = true;
  }
  return parser;
}

// Replays a malformed document through nlohmann's SAX parser to learn where
// the syntax error is: the JSON path being read and nlohmann's line/column.
class ErrorLocator {
 public:
  using J = nlohmann::json;

  bool null() { return Value(); }
  bool boolean(bool) { return Value(); }
  bool number_integer(J::number_integer_t) { return Value(); }
  bool number_unsigned(J::number_unsigned_t) { return Value(); }
  bool number_float(J::number_float_t, const J::string_t&) { return Value(); }
  bool string(J::string_t&) { return Value(); }
  bool binary(J::binary_t&) { return Value(); }
  bool start_object(std::size_t) {
    frames_.push_back(Frame{false, {}, 0});
    return true;
  }
  bool key(J::string_t& key) {
    frames_.back().key = key;
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    return Value();
  }
  bool start_array(std::size_t) {
    frames_.push_back(Frame{true, {}, 0});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return Value();
  }
  bool parse_error(std::size_t, const std::string&, const J::exception& ex) {
    message_ = ex.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    if (auto bracket = message_.find("] ");
        message_.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) {
      message_.erase(0, bracket + 2);
    }
    for (const Frame& frame : frames_) {
      if (frame.is_array) {
        path_ += '[';
        path_ += std::to_string(frame.index);
        path_ += ']';
      } else if (!frame.key.empty()) {
        if (!path_.empty()) path_ += '.';
        path_ += frame.key;
      }
    }
    return false;
  }

  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }

 private:
  struct Frame {
    bool is_array;
    std::string key;
    size_t index;
  };
  bool Value() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    return true;
  }

  std::vector<Frame> frames_;
  std::string path_;
  std::string message_;
};

Error MalformedJson(std::string_view json, simdjson::error_code code) {
  if (code == simdjson::DEPTH_ERROR) {
    // Not replayed: the locator would track every level.
    return MakeError(ErrorCode::kInvalid, "malformed JSON: nested deeper than " +
                                              std::to_string(kMaxJsonDepth) + " levels");
  }
  ErrorLocator locator;
  bool parsed = nlohmann::json::sax_parse(json.begin(), json.end(), &locator);
  std::string message;
  if (!parsed && !locator.message().empty()) {
    if (!locator.path().empty()) message = locator.path() + ": ";
    message += "malformed JSON: " + locator.message();
  } else {
    message = std::string("malformed JSON: ") + simdjson::error_message(code);
  }
  return MakeError(ErrorCode::kInvalid, std::move(message));
}

bool ReadRequirement(Reader& r, Element e, Requirement& out) {
  std::string op;
  bool has_op = false;
  bool ok = ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "key") return Read(r, v, out.key);
    if (key == "operator") {
      has_op = !v.is_null();
      return Read(r, v, op);
    }
    if (key == "values") return Read(r, v, out.values);
    return true;
  });
  if (!ok) return false;
  auto scope = r.Field("operator");
  if (!has_op) return r.Fail("Required value");
  Result<SelectorOp> parsed = ParseSelectorOp(op);
  if (!parsed.ok()) {
    // The message may already start with the field name; the path has it.
    std::string_view message = parsed.error().message;
    if (message.starts_with("operator: ")) message.remove_prefix(10);
    return r.Fail(message);
  }
  out.op = *parsed;
  return true;
}

Json RequirementToJson(const Requirement& req) {
  Json j = Json::object();
  j["key"] = req.key;
  SelectorOp op = req.op;
  std::vector<std::string> values = req.values;
  if (op == SelectorOp::kEquals) op = SelectorOp::kIn;
  if (op == SelectorOp::kNotEquals) op = SelectorOp::kNotIn;
  j["operator"] = std::string(SelectorOpName(op));
  if (!values.empty()) j["values"] = values;
  return j;
}

}  // namespace

// ---------------------------------------------------------------- Reader

std::string Reader::Path() const {
  std::string path;
  for (size_t i = 0; i < depth_ && i < kMaxDepth; ++i) {
    const Segment& segment = segments_[i];
    switch (segment.kind) {
      case Segment::kIndex: {
        path += '[';
        char buffer[24];
        auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), segment.index);
        (void)ec;
        path.append(buffer, end);
        path += ']';
        break;
      }
      case Segment::kMapKey:
        if (!IsPlainWord(segment.name)) {
          path += '[';
          path += segment.name;
          path += ']';
          break;
        }
        [[fallthrough]];
      case Segment::kField:
        if (!path.empty()) path += '.';
        path += segment.name;
        break;
    }
  }
  if (depth_ > kMaxDepth) path += "...";
  return path;
}

bool Reader::Fail(std::string_view message) {
  if (error_.has_value()) return false;
  std::string text = Path();
  if (!text.empty()) text += ": ";
  text += message;
  error_ = MakeError(ErrorCode::kInvalid, std::move(text));
  return false;
}

bool Reader::TypeError(Element value, std::string_view expected) {
  std::string message = "expected ";
  message += expected;
  message += ", got ";
  message += TypeName(value);
  return Fail(message);
}

Error Reader::TakeError() {
  if (!error_.has_value())
    return MakeError(ErrorCode::kInternal, "decoder failed without an error");
  Error error = std::move(*error_);
  error_.reset();
  return error;
}

std::string_view TypeName(Element value) noexcept {
  switch (value.type()) {
    case simdjson::dom::element_type::ARRAY:
      return "array";
    case simdjson::dom::element_type::OBJECT:
      return "object";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE:
      return "number";
    case simdjson::dom::element_type::STRING:
      return "string";
    case simdjson::dom::element_type::BOOL:
      return "boolean";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
  }
  return "unknown";
}

// ---------------------------------------------------------------- parsing

ParserLease::ParserLease() {
  if (!t_parser_busy) {
    parser_ = &ThreadParser();
    t_parser_busy = true;
  } else {
    own_ = std::make_unique<simdjson::dom::parser>();
    AllowKubeDepth(*own_);
    parser_ = own_.get();
  }
}

ParserLease::~ParserLease() {
  if (!own_) t_parser_busy = false;
}

Status ParseDocument(ParserLease& lease, std::string_view json, Element& root, bool padded) {
  simdjson::error_code code =
      lease.parser().parse(json.data(), json.size(), /*realloc_if_needed=*/!padded).get(root);
  if (code != simdjson::SUCCESS) return MalformedJson(json, code);
  return Status::Ok();
}

// ---------------------------------------------------------------- readers

bool Read(Reader& r, Element e, std::string& out) {
  std::string_view text;
  if (e.get_string().get(text) == simdjson::SUCCESS) {
    out.assign(text.data(), text.size());
    return true;
  }
  if (e.is_null()) {
    out.clear();
    return true;
  }
  return r.TypeError(e, "string");
}

bool Read(Reader& r, Element e, bool& out) {
  if (e.get_bool().get(out) == simdjson::SUCCESS) return true;
  if (e.is_null()) {
    out = false;
    return true;
  }
  return r.TypeError(e, "boolean");
}

bool Read(Reader& r, Element e, int64_t& out) {
  switch (e.type()) {
    case simdjson::dom::element_type::INT64:
      out = e.get_int64().value_unsafe();
      return true;
    case simdjson::dom::element_type::UINT64:
      return r.Fail("value " + std::to_string(e.get_uint64().value_unsafe()) +
                    " is out of range for int64");
    case simdjson::dom::element_type::DOUBLE: {
      double value = e.get_double().value_unsafe();
      // 2^63 is exactly representable; anything at or above it is out of range.
      if (std::trunc(value) != value || value < -9223372036854775808.0 ||
          value >= 9223372036854775808.0) {
        return r.Fail("expected integer, got " + FormatDouble(value));
      }
      out = static_cast<int64_t>(value);
      return true;
    }
    case simdjson::dom::element_type::NULL_VALUE:
      out = 0;
      return true;
    default:
      return r.TypeError(e, "integer");
  }
}

bool Read(Reader& r, Element e, int32_t& out) {
  int64_t value = 0;
  if (!Read(r, e, value)) return false;
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return r.Fail("value " + std::to_string(value) + " is out of range for int32");
  }
  out = static_cast<int32_t>(value);
  return true;
}

bool Read(Reader& r, Element e, std::vector<std::string>& out) {
  return ReadArray(r, e, out, [](Reader& rr, Element v, std::string& s) { return Read(rr, v, s); });
}

bool Read(Reader& r, Element e, Labels& out) {
  out.clear();
  if (e.is_null()) return true;
  simdjson::dom::object object;
  if (e.get_object().get(object) != simdjson::SUCCESS) return r.TypeError(e, "object");
  for (simdjson::dom::key_value_pair field : object) {
    auto scope = r.MapKey(field.key);
    std::string value;
    if (!Read(r, field.value, value)) return false;
    out.insert_or_assign(std::string(field.key), std::move(value));
  }
  return true;
}

bool Read(Reader& r, Element e, Quantity& out) {
  std::string text;
  switch (e.type()) {
    case simdjson::dom::element_type::STRING:
      text = std::string(e.get_string().value_unsafe());
      break;
    // Quantity.UnmarshalJSON accepts bare numbers too (cpu: 2).
    case simdjson::dom::element_type::INT64:
      text = std::to_string(e.get_int64().value_unsafe());
      break;
    case simdjson::dom::element_type::UINT64:
      text = std::to_string(e.get_uint64().value_unsafe());
      break;
    case simdjson::dom::element_type::DOUBLE:
      text = FormatDouble(e.get_double().value_unsafe());
      break;
    case simdjson::dom::element_type::NULL_VALUE:
      out = Quantity();
      return true;
    default:
      return r.TypeError(e, "quantity (string or number)");
  }
  Result<Quantity> parsed = Quantity::Parse(text);
  if (!parsed.ok()) return r.Fail(parsed.error().message);
  out = *parsed;
  return true;
}

bool Read(Reader& r, Element e, ResourceList& out) {
  out.clear();
  if (e.is_null()) return true;
  simdjson::dom::object object;
  if (e.get_object().get(object) != simdjson::SUCCESS) return r.TypeError(e, "object");
  for (simdjson::dom::key_value_pair field : object) {
    auto scope = r.MapKey(field.key);
    Quantity quantity;
    if (!Read(r, field.value, quantity)) return false;
    out.insert_or_assign(std::string(field.key), quantity);
  }
  return true;
}

bool Read(Reader& r, Element e, IntOrString& out) {
  switch (e.type()) {
    case simdjson::dom::element_type::STRING:
      out = IntOrString::FromString(std::string(e.get_string().value_unsafe()));
      return true;
    case simdjson::dom::element_type::NULL_VALUE:
      out = IntOrString();
      return true;
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: {
      int32_t value = 0;
      if (!Read(r, e, value)) return false;
      out = IntOrString::FromInt(value);
      return true;
    }
    default:
      return r.TypeError(e, "integer or string");
  }
}

bool Read(Reader& r, Element e, LabelSelector& out) {
  if (e.is_null()) {
    out = LabelSelector::Nothing();
    return true;
  }
  Labels match_labels;
  std::vector<Requirement> match_expressions;
  bool ok = ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "matchLabels") return Read(r, v, match_labels);
    if (key == "matchExpressions") return ReadArray(r, v, match_expressions, ReadRequirement);
    return true;
  });
  if (!ok) return false;
  Result<LabelSelector> selector =
      LabelSelector::FromParts(match_labels, std::move(match_expressions));
  if (!selector.ok()) return r.Fail(selector.error().message);
  out = std::move(selector).value();
  return true;
}

bool Read(Reader& r, Element e, NodeSelectorTerm& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "matchExpressions") return ReadArray(r, v, out.match_expressions, ReadRequirement);
    if (key == "matchFields") return ReadArray(r, v, out.match_fields, ReadRequirement);
    return true;
  });
}

bool Read(Reader& r, Element e, NodeSelector& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "nodeSelectorTerms") {
      return ReadArray(r, v, out.terms, [](Reader& rr, Element t, NodeSelectorTerm& term) {
        return Read(rr, t, term);
      });
    }
    return true;
  });
}

bool Read(Reader& r, Element e, OwnerReference& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "apiVersion") return Read(r, v, out.api_version);
    if (key == "kind") return Read(r, v, out.kind);
    if (key == "name") return Read(r, v, out.name);
    if (key == "uid") return Read(r, v, out.uid);
    if (key == "controller") return Read(r, v, out.controller);
    if (key == "blockOwnerDeletion") return Read(r, v, out.block_owner_deletion);
    return true;
  });
}

bool Read(Reader& r, Element e, ObjectMeta& out) {
  // A repeated "metadata" key keeps its last value, as in the raw text's
  // parse (nlohmann) and in Labels; merging into the first made the typed
  // name differ from what Encode() writes back.
  out = ObjectMeta{};
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    switch (key.size() > 0 ? key[0] : '\0') {
      case 'a':
        if (key == "annotations") return Read(r, v, out.annotations);
        break;
      case 'c':
        if (key == "creationTimestamp") return Read(r, v, out.creation_timestamp);
        break;
      case 'd':
        if (key == "deletionTimestamp") return Read(r, v, out.deletion_timestamp);
        if (key == "deletionGracePeriodSeconds")
          return Read(r, v, out.deletion_grace_period_seconds);
        break;
      case 'f':
        if (key == "finalizers") return Read(r, v, out.finalizers);
        break;
      case 'g':
        if (key == "generateName") return Read(r, v, out.generate_name);
        if (key == "generation") return Read(r, v, out.generation);
        break;
      case 'l':
        if (key == "labels") return Read(r, v, out.labels);
        break;
      case 'n':
        if (key == "name") return Read(r, v, out.name);
        if (key == "namespace") return Read(r, v, out.namespace_);
        break;
      case 'o':
        if (key == "ownerReferences") {
          return ReadArray(r, v, out.owner_references,
                           [](Reader& rr, Element x, OwnerReference& o) { return Read(rr, x, o); });
        }
        break;
      case 'r':
        if (key == "resourceVersion") return Read(r, v, out.resource_version);
        break;
      case 'u':
        if (key == "uid") return Read(r, v, out.uid);
        break;
      default:
        break;
    }
    return true;  // managedFields, selfLink, ... stay in raw
  });
}

bool Read(Reader& r, Element e, Condition& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "type") return Read(r, v, out.type);
    if (key == "status") return Read(r, v, out.status);
    if (key == "reason") return Read(r, v, out.reason);
    if (key == "message") return Read(r, v, out.message);
    if (key == "lastTransitionTime") return Read(r, v, out.last_transition_time);
    if (key == "lastProbeTime") return Read(r, v, out.last_probe_time);
    if (key == "lastHeartbeatTime") return Read(r, v, out.last_heartbeat_time);
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    return true;
  });
}

bool Read(Reader& r, Element e, std::vector<Condition>& out) {
  return ReadArray(r, e, out, [](Reader& rr, Element v, Condition& c) { return Read(rr, v, c); });
}

bool Read(Reader& r, Element e, ObjectReference& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "kind") return Read(r, v, out.kind);
    if (key == "namespace") return Read(r, v, out.namespace_);
    if (key == "name") return Read(r, v, out.name);
    if (key == "uid") return Read(r, v, out.uid);
    if (key == "apiVersion") return Read(r, v, out.api_version);
    if (key == "resourceVersion") return Read(r, v, out.resource_version);
    if (key == "fieldPath") return Read(r, v, out.field_path);
    return true;
  });
}

bool ReadRawJson(Reader&, Element e, std::string& out) {
  out = simdjson::minify(e);
  return true;
}

bool ReadTypeMeta(Reader& r, std::string_view key, Element value, KubeObject& out, bool& ok) {
  if (key == "apiVersion") {
    ok = Read(r, value, out.api_version);
    return true;
  }
  if (key == "kind") {
    ok = Read(r, value, out.kind);
    return true;
  }
  return false;
}

bool CheckKind(Reader& r, const KubeObject& object, std::string_view expected,
               std::string_view also) {
  if (expected.empty() || object.kind.empty() || object.kind == expected) return true;
  if (!also.empty() && object.kind == also) return true;
  auto scope = r.Field("kind");
  std::string message = "expected \"";
  message += expected;
  message += "\", got \"";
  message += object.kind;
  message += '"';
  return r.Fail(message);
}

// ---------------------------------------------------------------- encoding

Json ParseRaw(const std::string& raw) {
  if (raw.empty()) return Json::object();
  Json parsed = Json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return Json::object();
  return parsed;
}

Json ToJson(const std::string& v) { return Json(v); }
Json ToJson(bool v) { return Json(v); }
Json ToJson(int64_t v) { return Json(v); }
Json ToJson(int32_t v) { return Json(v); }
Json ToJson(const std::vector<std::string>& v) { return Json(v); }

Json ToJson(const Labels& v) {
  Json j = Json::object();
  for (const auto& [key, value] : v) j[key] = value;
  return j;
}

Json ToJson(const Quantity& v) { return Json(v.ToString()); }

Json ToJson(const ResourceList& v) {
  Json j = Json::object();
  for (const auto& [name, quantity] : v) j[name] = quantity.ToString();
  return j;
}

Json ToJson(const IntOrString& v) {
  if (v.is_string) return Json(v.str_value);
  return Json(v.int_value);
}

Json ToJson(const LabelSelector& v) {
  if (v.MatchesNothing()) return Json(nullptr);
  Json j = Json::object();
  Json match_labels = Json::object();
  Json match_expressions = Json::array();
  for (const Requirement& req : v.requirements()) {
    if (req.op == SelectorOp::kEquals && req.values.size() == 1 &&
        !match_labels.contains(req.key)) {
      match_labels[req.key] = req.values.front();
    } else {
      match_expressions.push_back(RequirementToJson(req));
    }
  }
  if (!match_labels.empty()) j["matchLabels"] = std::move(match_labels);
  if (!match_expressions.empty()) j["matchExpressions"] = std::move(match_expressions);
  return j;
}

Json ToJson(const NodeSelectorTerm& v) {
  Json j = Json::object();
  if (!v.match_expressions.empty()) {
    Json list = Json::array();
    for (const Requirement& req : v.match_expressions) list.push_back(RequirementToJson(req));
    j["matchExpressions"] = std::move(list);
  }
  if (!v.match_fields.empty()) {
    Json list = Json::array();
    for (const Requirement& req : v.match_fields) list.push_back(RequirementToJson(req));
    j["matchFields"] = std::move(list);
  }
  return j;
}

Json ToJson(const NodeSelector& v) {
  Json terms = Json::array();
  for (const NodeSelectorTerm& term : v.terms) terms.push_back(ToJson(term));
  Json j = Json::object();
  j["nodeSelectorTerms"] = std::move(terms);
  return j;
}

void PutResourceList(Json& obj, const char* key, const ResourceList& now,
                     const ResourceList* before) {
  if (before != nullptr && *before == now) return;
  if (now.empty()) {
    obj.erase(key);
    return;
  }
  auto it = obj.find(key);
  if (before == nullptr || it == obj.end() || !it->is_object()) {
    obj[key] = ToJson(now);
    return;
  }
  Json& list = *it;
  for (const auto& [name, quantity] : *before) {
    if (now.find(name) == now.end()) list.erase(name);
  }
  for (const auto& [name, quantity] : now) {
    auto old = before->find(name);
    if (old != before->end() && old->second == quantity && list.contains(name)) continue;
    list[name] = quantity.ToString();
  }
}

bool SameObjectMeta(const ObjectMeta& a, const ObjectMeta& b) {
  return a.name == b.name && a.namespace_ == b.namespace_ && a.generate_name == b.generate_name &&
         a.uid == b.uid && a.resource_version == b.resource_version &&
         a.generation == b.generation && a.creation_timestamp == b.creation_timestamp &&
         a.deletion_timestamp == b.deletion_timestamp &&
         a.deletion_grace_period_seconds == b.deletion_grace_period_seconds &&
         a.labels == b.labels && a.annotations == b.annotations &&
         a.owner_references == b.owner_references && a.finalizers == b.finalizers;
}

void PutTypeMeta(Json& root, const KubeObject& now, const KubeObject* before,
                 std::string_view default_api_version, std::string_view default_kind) {
  auto put = [&root](const char* key, const std::string& value, const std::string* old,
                     std::string_view fallback) {
    if (old != nullptr && *old == value && root.contains(key)) return;
    std::string effective = value.empty() ? std::string(fallback) : value;
    if (effective.empty()) {
      root.erase(key);
    } else {
      root[key] = std::move(effective);
    }
  };
  put("apiVersion", now.api_version, before != nullptr ? &before->api_version : nullptr,
      default_api_version);
  put("kind", now.kind, before != nullptr ? &before->kind : nullptr, default_kind);
}

void OverlayOwnerReference(Json& j, const OwnerReference& now, const OwnerReference* before) {
  Put(j, "apiVersion", now.api_version, Prev(before, &OwnerReference::api_version), Emit::kAlways);
  Put(j, "kind", now.kind, Prev(before, &OwnerReference::kind), Emit::kAlways);
  Put(j, "name", now.name, Prev(before, &OwnerReference::name), Emit::kAlways);
  Put(j, "uid", now.uid, Prev(before, &OwnerReference::uid), Emit::kAlways);
  Put(j, "controller", now.controller, Prev(before, &OwnerReference::controller));
  Put(j, "blockOwnerDeletion", now.block_owner_deletion,
      Prev(before, &OwnerReference::block_owner_deletion));
}

void OverlayObjectMeta(Json& j, const ObjectMeta& now, const ObjectMeta* before) {
  Put(j, "name", now.name, Prev(before, &ObjectMeta::name));
  Put(j, "generateName", now.generate_name, Prev(before, &ObjectMeta::generate_name));
  Put(j, "namespace", now.namespace_, Prev(before, &ObjectMeta::namespace_));
  Put(j, "uid", now.uid, Prev(before, &ObjectMeta::uid));
  Put(j, "resourceVersion", now.resource_version, Prev(before, &ObjectMeta::resource_version));
  Put(j, "generation", now.generation, Prev(before, &ObjectMeta::generation));
  Put(j, "creationTimestamp", now.creation_timestamp,
      Prev(before, &ObjectMeta::creation_timestamp));
  PutOpt(j, "deletionTimestamp", now.deletion_timestamp,
         Prev(before, &ObjectMeta::deletion_timestamp));
  PutOpt(j, "deletionGracePeriodSeconds", now.deletion_grace_period_seconds,
         Prev(before, &ObjectMeta::deletion_grace_period_seconds));
  Put(j, "labels", now.labels, Prev(before, &ObjectMeta::labels));
  Put(j, "annotations", now.annotations, Prev(before, &ObjectMeta::annotations));
  PutArray(j, "ownerReferences", now.owner_references, Prev(before, &ObjectMeta::owner_references),
           OverlayOwnerReference,
           [](const OwnerReference& a, const OwnerReference& b) { return a.uid == b.uid; });
  Put(j, "finalizers", now.finalizers, Prev(before, &ObjectMeta::finalizers));
}

void OverlayCondition(Json& j, const Condition& now, const Condition* before) {
  Put(j, "type", now.type, Prev(before, &Condition::type), Emit::kAlways);
  Put(j, "status", now.status, Prev(before, &Condition::status), Emit::kAlways);
  PutOpt(j, "observedGeneration", now.observed_generation,
         Prev(before, &Condition::observed_generation));
  Put(j, "lastProbeTime", now.last_probe_time, Prev(before, &Condition::last_probe_time));
  Put(j, "lastHeartbeatTime", now.last_heartbeat_time,
      Prev(before, &Condition::last_heartbeat_time));
  Put(j, "lastTransitionTime", now.last_transition_time,
      Prev(before, &Condition::last_transition_time));
  Put(j, "reason", now.reason, Prev(before, &Condition::reason));
  Put(j, "message", now.message, Prev(before, &Condition::message));
}

void PutConditions(Json& obj, const char* key, const std::vector<Condition>& now,
                   const std::vector<Condition>* before) {
  PutArray(obj, key, now, before, OverlayCondition,
           [](const Condition& a, const Condition& b) { return a.type == b.type; });
}

void OverlayObjectReference(Json& j, const ObjectReference& now, const ObjectReference* before) {
  Put(j, "kind", now.kind, Prev(before, &ObjectReference::kind));
  Put(j, "namespace", now.namespace_, Prev(before, &ObjectReference::namespace_));
  Put(j, "name", now.name, Prev(before, &ObjectReference::name));
  Put(j, "uid", now.uid, Prev(before, &ObjectReference::uid));
  Put(j, "apiVersion", now.api_version, Prev(before, &ObjectReference::api_version));
  Put(j, "resourceVersion", now.resource_version, Prev(before, &ObjectReference::resource_version));
  Put(j, "fieldPath", now.field_path, Prev(before, &ObjectReference::field_path));
}

}  // namespace copse::kube::codec
