#include "kube/watch.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/json_text.h"

namespace copse::kube {
namespace {

namespace od = simdjson::ondemand;

// Kubernetes' nesting limit (kMaxJsonDepth) instead of simdjson's 1024:
// what a server may send, this client reads.
void AllowKubeDepth(od::parser& parser) {
  // On failure (memory) the parse allocates again and reports it.
  const simdjson::error_code ignored = parser.allocate(64 * 1024, kMaxJsonDepth);
  (void)ignored;
}

std::string ErrorText(simdjson::error_code err) {
  if (err == simdjson::DEPTH_ERROR) {
    return "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
  }
  return simdjson::error_message(err);
}

Error InternalError(std::string message) {
  return MakeError(ErrorCode::kInternal, std::move(message));
}

std::string Excerpt(std::string_view text, size_t max = 200) {
  if (text.size() <= max) return std::string(text);
  std::string out(text.substr(0, max));
  out += "...";
  return out;
}

std::string_view TrimWhitespace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Reads a string field value, tolerating null (-> empty).
simdjson::error_code ReadString(od::value value, std::string& out) {
  bool is_null = false;
  if (auto err = value.is_null().get(is_null); err) return err;
  if (is_null) {
    out.clear();
    return simdjson::SUCCESS;
  }
  std::string_view view;
  if (auto err = value.get_string().get(view); err) return err;
  out.assign(view);
  return simdjson::SUCCESS;
}

struct StatusFields {
  std::string kind;
  std::string message;
  std::string reason;
  int64_t code = 0;
};

// Parses a Status object; false when `json` is not a JSON object.
bool ParseStatus(std::string_view json, StatusFields& out) {
  const simdjson::padded_string padded(json);
  od::parser parser;
  AllowKubeDepth(parser);
  od::document doc;
  if (parser.iterate(padded).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "kind") {
      if (ReadString(field.value(), out.kind)) return false;
    } else if (key == "message") {
      if (ReadString(field.value(), out.message)) return false;
    } else if (key == "reason") {
      if (ReadString(field.value(), out.reason)) return false;
    } else if (key == "code") {
      int64_t code = 0;
      if (field.value().get_int64().get(code)) return false;
      out.code = code;
    }
  }
  return true;
}

}  // namespace

std::string_view WatchEventTypeName(WatchEventType type) noexcept {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
  }
  return "UNKNOWN";
}

ErrorCode ErrorCodeFor(int http_status, std::string_view reason) noexcept {
  if (reason == "AlreadyExists") return ErrorCode::kAlreadyExists;
  if (reason == "Expired" || reason == "Gone") return ErrorCode::kGone;
  switch (http_status) {
    case 400:
    case 405:
    case 413:
    case 415:
    case 422:
      return ErrorCode::kInvalid;
    case 401:
      return ErrorCode::kUnauthorized;
    case 403:
      return ErrorCode::kForbidden;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kConflict;
    case 410:
      return ErrorCode::kGone;
    case 429:
      return ErrorCode::kTooManyRequests;
    case 408:
    case 504:
      return ErrorCode::kTimeout;
    default:
      break;
  }
  if (http_status >= 500 && http_status <= 599) return ErrorCode::kUnavailable;
  return ErrorCode::kInternal;
}

Error ErrorFromResponse(int http_status, std::string_view body) {
  StatusFields status;
  const std::string_view trimmed = TrimWhitespace(body);
  if (!trimmed.empty() && trimmed.front() == '{' && ParseStatus(trimmed, status) &&
      status.kind == "Status") {
    const int code = http_status != 0 ? http_status : static_cast<int>(status.code);
    Error error;
    error.code = ErrorCodeFor(code, status.reason);
    error.http_status = code;
    error.reason = std::move(status.reason);
    error.message = !status.message.empty()
                        ? std::move(status.message)
                        : "the server responded with HTTP " + std::to_string(code) +
                              (error.reason.empty() ? "" : " (" + error.reason + ")");
    return error;
  }
  Error error;
  error.code = ErrorCodeFor(http_status, {});
  error.http_status = http_status;
  error.message = "the server responded with HTTP " + std::to_string(http_status);
  if (!trimmed.empty()) error.message += ": " + Excerpt(trimmed);
  return error;
}

// ---------------------------------------------------------------------------
// WatchEventDecoder

struct WatchEventDecoder::Impl {
  explicit Impl(size_t max_event) : max_event_bytes(max_event) { AllowKubeDepth(parser); }

  // Invariant: capacity >= end + SIMDJSON_PADDING, so any line inside
  // [begin, end) can be parsed in place.
  void Reserve(size_t extra) {
    const size_t needed = end + extra + simdjson::SIMDJSON_PADDING;
    if (needed <= capacity) return;
    const size_t live = end - begin;
    if (begin > 0 && live + extra + simdjson::SIMDJSON_PADDING <= capacity) {
      std::memmove(data.get(), data.get() + begin, live);
      scan = scan > begin ? scan - begin : 0;
      end = live;
      begin = 0;
      return;
    }
    size_t new_capacity = std::max<size_t>(capacity * 2, 64 * 1024);
    new_capacity = std::max(new_capacity, live + extra + simdjson::SIMDJSON_PADDING);
    std::unique_ptr<char[]> fresh(new char[new_capacity]);
    if (live > 0) std::memcpy(fresh.get(), data.get() + begin, live);
    data = std::move(fresh);
    capacity = new_capacity;
    scan = scan > begin ? scan - begin : 0;
    end = live;
    begin = 0;
  }

  Result<bool> ParseLine(const char* line, size_t len, WatchEvent& event) {
    // On demand, simdjson checks depth only where it descends; the object
    // is taken as raw text, so its depth is checked here.
    if (JsonDepthExceeds(std::string_view(line, len))) {
      return Malformed(simdjson::DEPTH_ERROR, line, len);
    }
    const size_t available = capacity - static_cast<size_t>(line - data.get());
    od::document doc;
    auto err = parser.iterate(line, len, available).get(doc);
    od::object obj;
    if (!err) err = doc.get_object().get(obj);
    if (err) return Malformed(err, line, len);

    enum class Kind { kUnknown, kAdded, kModified, kDeleted, kBookmark, kError };
    Kind kind = Kind::kUnknown;
    bool has_type = false;
    bool has_object = false;
    std::string_view type_text;
    for (auto field_result : obj) {
      od::field field;
      if ((err = std::move(field_result).get(field))) return Malformed(err, line, len);
      std::string_view key;
      if ((err = field.unescaped_key().get(key))) return Malformed(err, line, len);
      if (key == "type") {
        if ((err = field.value().get_string().get(type_text))) return Malformed(err, line, len);
        has_type = true;
        if (type_text == "ADDED") {
          kind = Kind::kAdded;
        } else if (type_text == "MODIFIED") {
          kind = Kind::kModified;
        } else if (type_text == "DELETED") {
          kind = Kind::kDeleted;
        } else if (type_text == "BOOKMARK") {
          kind = Kind::kBookmark;
        } else if (type_text == "ERROR") {
          kind = Kind::kError;
        } else {
          return InternalError("watch: unknown event type \"" + std::string(type_text) + "\"");
        }
      } else if (key == "object") {
        od::object object;
        if ((err = field.value().get_object().get(object))) return Malformed(err, line, len);
        std::string_view raw;
        if ((err = object.raw_json().get(raw))) return Malformed(err, line, len);
        event.object.assign(raw.data(), raw.size());
        has_object = true;
      }
    }
    if (!has_type || !has_object) {
      return InternalError("watch: event without " + std::string(has_type ? "object" : "type") +
                           ": " + Excerpt(std::string_view(line, len)));
    }
    if (kind == Kind::kError) return ErrorFromResponse(0, event.object);

    std::string_view rv;
    if (doc.at_pointer("/object/metadata/resourceVersion").get_string().get(rv)) {
      event.resource_version.clear();
    } else {
      event.resource_version.assign(rv.data(), rv.size());
    }
    switch (kind) {
      case Kind::kAdded:
        event.type = WatchEventType::kAdded;
        break;
      case Kind::kModified:
        event.type = WatchEventType::kModified;
        break;
      case Kind::kDeleted:
        event.type = WatchEventType::kDeleted;
        break;
      default:
        event.type = WatchEventType::kBookmark;
        break;
    }
    return true;
  }

  static Error Malformed(simdjson::error_code err, const char* line, size_t len) {
    return InternalError("watch: malformed event (" + ErrorText(err) +
                         "): " + Excerpt(std::string_view(line, len)));
  }

  const size_t max_event_bytes;
  std::unique_ptr<char[]> data;
  size_t capacity = 0;
  size_t begin = 0;         // first unconsumed byte
  size_t end = 0;           // end of data
  size_t scan = 0;          // bytes before this (from begin) hold no newline
  bool discarding = false;  // dropping the rest of an oversized line
  od::parser parser;
};

WatchEventDecoder::WatchEventDecoder(size_t max_event_bytes)
    : impl_(std::make_unique<Impl>(max_event_bytes)) {}
WatchEventDecoder::~WatchEventDecoder() = default;

void WatchEventDecoder::Feed(std::string_view bytes) {
  if (bytes.empty()) return;
  char* out = Prepare(bytes.size());
  std::memcpy(out, bytes.data(), bytes.size());
  Commit(bytes.size());
}

char* WatchEventDecoder::Prepare(size_t n) {
  impl_->Reserve(n);
  return impl_->data.get() + impl_->end;
}

void WatchEventDecoder::Commit(size_t n) { impl_->end += n; }

size_t WatchEventDecoder::pending_bytes() const noexcept {
  return impl_->discarding ? 0 : impl_->end - impl_->begin;
}

Result<bool> WatchEventDecoder::Next(WatchEvent& event) {
  Impl& s = *impl_;
  while (true) {
    const size_t search_from = std::max(s.scan, s.begin);
    const void* found = search_from < s.end
                            ? std::memchr(s.data.get() + search_from, '\n', s.end - search_from)
                            : nullptr;
    if (found == nullptr) {
      s.scan = s.end;
      if (s.discarding) {
        s.begin = s.end = s.scan = 0;
        return false;
      }
      if (s.end - s.begin > s.max_event_bytes) {
        s.discarding = true;
        s.begin = s.end = s.scan = 0;
        return InternalError("watch: event larger than " + std::to_string(s.max_event_bytes) +
                             " bytes");
      }
      if (s.begin == s.end) s.begin = s.end = s.scan = 0;  // cheap reset when drained
      return false;
    }
    const size_t newline = static_cast<size_t>(static_cast<const char*>(found) - s.data.get());
    const char* line = s.data.get() + s.begin;
    const size_t len = newline - s.begin;
    s.begin = newline + 1;
    s.scan = s.begin;
    if (s.discarding) {
      s.discarding = false;
      continue;
    }
    if (len > s.max_event_bytes) {
      return InternalError("watch: event larger than " + std::to_string(s.max_event_bytes) +
                           " bytes");
    }
    const std::string_view trimmed = TrimWhitespace(std::string_view(line, len));
    if (trimmed.empty()) continue;
    return s.ParseLine(trimmed.data(), trimmed.size(), event);
  }
}

// ---------------------------------------------------------------------------
// Lists, Scale

std::string ListResult::ItemKind() const {
  constexpr std::string_view kSuffix = "List";
  if (kind.size() > kSuffix.size() &&
      kind.compare(kind.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
    return kind.substr(0, kind.size() - kSuffix.size());
  }
  return kind;
}

Result<ListResult> DecodeList(std::string body) {
  const size_t size = body.size();
  body.reserve(size + simdjson::SIMDJSON_PADDING);
  od::parser parser;
  AllowKubeDepth(parser);
  od::document doc;
  // Items are taken as raw text, which simdjson does not descend into.
  auto err = JsonDepthExceeds(std::string_view(body.data(), size))
                 ? simdjson::DEPTH_ERROR
                 : parser.iterate(body.data(), size, body.capacity()).get(doc);
  od::object obj;
  if (!err) err = doc.get_object().get(obj);
  const auto malformed = [&](simdjson::error_code e) {
    return InternalError("list: malformed response (" + ErrorText(e) +
                         "): " + Excerpt(std::string_view(body.data(), size)));
  };
  if (err) return malformed(err);
  ListResult result;
  bool has_items = false;
  for (auto field_result : obj) {
    od::field field;
    if ((err = std::move(field_result).get(field))) return malformed(err);
    std::string_view key;
    if ((err = field.unescaped_key().get(key))) return malformed(err);
    if (key == "apiVersion") {
      if ((err = ReadString(field.value(), result.api_version))) return malformed(err);
    } else if (key == "kind") {
      if ((err = ReadString(field.value(), result.kind))) return malformed(err);
    } else if (key == "metadata") {
      od::object meta;
      if ((err = field.value().get_object().get(meta))) return malformed(err);
      for (auto meta_result : meta) {
        od::field meta_field;
        if ((err = std::move(meta_result).get(meta_field))) return malformed(err);
        std::string_view meta_key;
        if ((err = meta_field.unescaped_key().get(meta_key))) return malformed(err);
        if (meta_key == "resourceVersion") {
          if ((err = ReadString(meta_field.value(), result.resource_version)))
            return malformed(err);
        } else if (meta_key == "continue") {
          if ((err = ReadString(meta_field.value(), result.continue_token))) return malformed(err);
        } else if (meta_key == "remainingItemCount") {
          int64_t remaining = 0;
          if ((err = meta_field.value().get_int64().get(remaining))) return malformed(err);
          result.remaining_item_count = remaining;
        }
      }
    } else if (key == "items") {
      od::value items_value = field.value();
      bool is_null = false;
      if ((err = items_value.is_null().get(is_null))) return malformed(err);
      has_items = true;
      if (is_null) continue;
      od::array items;
      if ((err = items_value.get_array().get(items))) return malformed(err);
      for (auto item_result : items) {
        od::object item;
        if ((err = item_result.get_object().get(item))) return malformed(err);
        std::string_view raw;
        if ((err = item.raw_json().get(raw))) return malformed(err);
        result.items.emplace_back(raw);
      }
    }
  }
  if (!has_items) {
    return InternalError("list: response has no items: " +
                         Excerpt(std::string_view(body.data(), size)));
  }
  return result;
}

Result<Scale> DecodeScale(std::string_view body) {
  const simdjson::padded_string padded(body);
  od::parser parser;
  AllowKubeDepth(parser);
  od::document doc;
  // The limit as for lists and watch events, found before simdjson descends.
  auto err = JsonDepthExceeds(body) ? simdjson::DEPTH_ERROR : parser.iterate(padded).get(doc);
  od::object obj;
  if (!err) err = doc.get_object().get(obj);
  const auto malformed = [&](simdjson::error_code e) {
    return InternalError("scale: malformed response (" + ErrorText(e) + "): " + Excerpt(body));
  };
  if (err) return malformed(err);
  Scale scale;
  std::string kind;
  for (auto field_result : obj) {
    od::field field;
    if ((err = std::move(field_result).get(field))) return malformed(err);
    std::string_view key;
    if ((err = field.unescaped_key().get(key))) return malformed(err);
    if (key == "kind") {
      if ((err = ReadString(field.value(), kind))) return malformed(err);
      continue;
    }
    if (key != "metadata" && key != "spec" && key != "status") continue;
    od::object section;
    if ((err = field.value().get_object().get(section))) return malformed(err);
    for (auto inner_result : section) {
      od::field inner;
      if ((err = std::move(inner_result).get(inner))) return malformed(err);
      std::string_view inner_key;
      if ((err = inner.unescaped_key().get(inner_key))) return malformed(err);
      std::string* target = nullptr;
      int32_t* number = nullptr;
      if (key == "metadata") {
        if (inner_key == "name") target = &scale.name;
        if (inner_key == "namespace") target = &scale.namespace_;
        if (inner_key == "uid") target = &scale.uid;
        if (inner_key == "resourceVersion") target = &scale.resource_version;
      } else if (key == "spec") {
        if (inner_key == "replicas") number = &scale.spec_replicas;
      } else {
        if (inner_key == "replicas") number = &scale.status_replicas;
        if (inner_key == "selector") target = &scale.selector;
      }
      if (target != nullptr) {
        if ((err = ReadString(inner.value(), *target))) return malformed(err);
      } else if (number != nullptr) {
        int64_t value = 0;
        if ((err = inner.value().get_int64().get(value))) return malformed(err);
        *number = static_cast<int32_t>(value);
      }
    }
  }
  if (kind != "Scale") return InternalError("scale: response is not a Scale: " + Excerpt(body));
  scale.raw.assign(body);
  return scale;
}

}  // namespace copse::kube
