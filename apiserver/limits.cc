#include "apiserver/limits.h"

#include <string>

#include "core/json_text.h"

namespace copse::apiserver {

std::optional<Error> CheckRequestBody(std::string_view body) {
  if (!JsonDepthExceeds(body, kMaxJsonDepth)) return std::nullopt;
  Error error = MakeError(ErrorCode::kInvalid,
                          "the request body nests JSON objects and arrays more than " +
                              std::to_string(kMaxJsonDepth) + " levels deep (the limit is " +
                              std::to_string(kMaxJsonDepth) + ")");
  error.http_status = 400;
  error.reason = "BadRequest";
  return error;
}

Error ObjectTooLarge(size_t size, size_t limit) {
  Error error =
      MakeError(ErrorCode::kInvalid, "Request entity too large: the object would be stored as " +
                                         std::to_string(size) + " bytes, above the limit of " +
                                         std::to_string(limit) + " bytes for a stored object");
  error.http_status = 413;
  error.reason = "RequestEntityTooLarge";
  return error;
}

}  // namespace copse::apiserver
