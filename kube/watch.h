#pragma once
// Wire formats the client decodes: watch event streams, list bodies, Scale
// subresources and Status errors. Pure in-memory decoding (simdjson inside,
// not in this header); the network side is kube/client.h (Client::Watch).
//
// A watch response body is a stream of JSON objects, one per line:
//   {"type":"ADDED","object":{...}}
//   {"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}}
//   {"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired",...}}
// WatchEventDecoder accepts the bytes in arbitrary pieces (as they arrive in
// HTTP chunks) and yields one event per complete line without re-serializing
// the object: WatchEvent::object is the object's JSON text as sent.
//
// Thread-safety: WatchEventDecoder is a single-owner object (no internal
// locking); the free functions are pure.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::kube {

enum class WatchEventType : uint8_t { kAdded, kModified, kDeleted, kBookmark };
std::string_view WatchEventTypeName(WatchEventType type) noexcept;  // "ADDED", ...

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  std::string object;            // the object's JSON text, exactly as sent
  std::string resource_version;  // object.metadata.resourceVersion ("" if absent)
};

class WatchEventDecoder {
 public:
  // Lines longer than this (a single event) are rejected as kInternal.
  static constexpr size_t kDefaultMaxEventBytes = size_t{64} << 20;

  explicit WatchEventDecoder(size_t max_event_bytes = kDefaultMaxEventBytes);
  ~WatchEventDecoder();
  WatchEventDecoder(const WatchEventDecoder&) = delete;
  WatchEventDecoder& operator=(const WatchEventDecoder&) = delete;

  // Appends bytes of the stream.
  void Feed(std::string_view bytes);
  // Zero-copy alternative to Feed: write up to `n` bytes at Prepare(n), then
  // Commit() how many were written. The pointer is valid until the next call.
  char* Prepare(size_t n);
  void Commit(size_t n);

  // Decodes the next complete event into `event` (its strings are reused).
  // Returns false when no complete line is buffered. Errors: an ERROR event
  // yields its Status as an Error (410 / Expired -> kGone, others mapped as
  // ErrorFromStatus does); a malformed line or unknown type is kInternal; an
  // oversized line is kInternal. The offending line is consumed, so decoding
  // may continue after an error.
  Result<bool> Next(WatchEvent& event);

  // Bytes buffered that do not form a complete line yet (non-zero at the end
  // of a stream means it was truncated mid-event).
  size_t pending_bytes() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A list response (PodList, NodeList, ...) with each item's JSON text as sent.
// Note: kube-apiserver omits apiVersion/kind in the items of built-in lists;
// `kind` here is the list kind ("PodList"), ItemKind() strips "List".
struct ListResult {
  std::string api_version;
  std::string kind;
  std::string resource_version;
  std::string continue_token;  // empty on the last page
  std::optional<int64_t> remaining_item_count;
  std::vector<std::string> items;

  std::string ItemKind() const;
};
// Errors: kInternal for a body that is not a list object.
Result<ListResult> DecodeList(std::string body);

// autoscaling/v1 Scale (the scale subresource).
struct Scale {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int32_t spec_replicas = 0;
  int32_t status_replicas = 0;
  std::string selector;  // status.selector, label selector string form
  std::string raw;       // the JSON the server returned
};
// Errors: kInternal for a body that is not a Scale.
Result<Scale> DecodeScale(std::string_view body);

// Maps an HTTP status and Kubernetes Status.reason to an ErrorCode:
// reason AlreadyExists -> kAlreadyExists; 400/405/413/415/422 -> kInvalid;
// 401 -> kUnauthorized; 403 -> kForbidden; 404 -> kNotFound;
// 409 -> kConflict; 410 (or reason Expired/Gone) -> kGone;
// 429 -> kTooManyRequests; 408/504 -> kTimeout; other 5xx -> kUnavailable;
// anything else -> kInternal.
ErrorCode ErrorCodeFor(int http_status, std::string_view reason) noexcept;

// An Error from a failed response: the body's Status (code, reason, message)
// when it is one, else the status line and the start of the body.
Error ErrorFromResponse(int http_status, std::string_view body);

}  // namespace copse::kube
