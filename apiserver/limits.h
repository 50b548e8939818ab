#pragma once
// The embedded API server's request limits that a handler applies (the
// transport, net::Server, refuses bodies above the size limit itself), with
// kube-apiserver's Status errors naming the limit.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <optional>
#include <string_view>

#include "core/result.h"

namespace copse::apiserver {

// 400 BadRequest when a body nests JSON (or YAML flow) objects and arrays
// deeper than kMaxJsonDepth; nothing else is looked at. Every body is
// scanned whatever its declared media type: the handler parses `*/*`, a
// missing type and apply's application/apply-patch+yaml as JSON. Runs
// before anything parses the body (the scan is iterative).
std::optional<Error> CheckRequestBody(std::string_view body);

// 413 RequestEntityTooLarge for a write whose stored object would be `size`
// bytes, above `limit`.
Error ObjectTooLarge(size_t size, size_t limit);

}  // namespace copse::apiserver
