#pragma once
// Content negotiation of the embedded API server for protobuf, as
// kube-apiserver does it: built-in types are served as
// application/vnd.kubernetes.protobuf when the client's Accept header
// prefers it, request bodies may come in protobuf, and custom resources stay
// JSON only (406 when a client accepts nothing else, 415 for a protobuf body).
// The transcoding itself is kube/protobuf/codec.h.
//
// Thread-safety: pure functions.

#include <string_view>

#include "apiserver/handler.h"
#include "core/result.h"

namespace copse::apiserver {

enum class OutputMedia { kJson, kProtobuf, kNone };

// The media type an Accept header picks: its clauses by descending q, the
// first one served wins. JSON for */*, application/* and an empty header;
// protobuf only when `protobuf_ok` (a built-in type) and the clause asks for
// no other form (as=Table has no protobuf form). kNone: nothing acceptable.
OutputMedia NegotiateOutput(std::string_view accept, bool protobuf_ok);

bool IsProtobufContentType(std::string_view content_type);

// A protobuf request body as JSON. Errors: 400 for a malformed body (naming
// the field), 415 for a kind with no protobuf form (a custom resource).
Result<std::string> ProtobufBodyToJson(std::string_view body);

// Re-encodes a JSON response (object, list, Status) as protobuf when the
// client prefers protobuf and `custom_resource` is false. A body with no
// protobuf form stays JSON when the client accepts JSON, else becomes 406.
// Watches are left alone (WatchSession writes their frames).
void EncodeForClient(std::string_view accept, bool custom_resource, HttpResponse* response);

}  // namespace copse::apiserver
