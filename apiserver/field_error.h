#pragma once
// apimachinery's field.Error: one problem with one field, in the message form
// kube-apiserver writes ("spec.x: Invalid value: 3: must be ...") and that
// the handler reads back into a Status cause (its reason is the type:
// "FieldValueInvalid", "FieldValueRequired", ...). Values are printed as Go
// prints the decoded field: strings quoted (strconv.Quote), numbers and
// bools plain, null for nil, objects and lists as compact JSON.
//
// Thread-safety: value types and pure functions.

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace copse::apiserver {

// strconv.Quote (%q).
std::string GoQuote(std::string_view s);
// A decoded value as field.Error prints it (see above).
std::string GoRepr(const nlohmann::json& value);

struct FieldError {
  enum class Type : uint8_t {
    kRequired,      // "Required value"
    kInvalid,       // "Invalid value: <value>"
    kNotSupported,  // "Unsupported value: <value>: supported values: ..."
    kDuplicate,     // "Duplicate value: <value>"
    kForbidden,     // "Forbidden"
    kTooMany,       // "Too many: <n>: must have at most <max> items"
    kTooLong,       // "Too long: may not be more than <max> bytes"
  };
  Type type = Type::kInvalid;
  std::string field;  // "spec.podGroupTemplates[0].name"
  std::string value;  // printed already (GoRepr); unused for Required, Forbidden, TooLong
  std::string detail;

  // "<field>: <type text>[: <value>][: <detail>]", as field.Error.Error().
  std::string Message() const;
  // The Status cause reason of the type ("FieldValueInvalid", ...).
  static std::string_view Reason(Type type);

  static FieldError Required(std::string field, std::string detail = {});
  static FieldError Invalid(std::string field, const nlohmann::json& value, std::string detail);
  static FieldError NotSupported(std::string field, const nlohmann::json& value,
                                 const std::vector<std::string>& supported);
  static FieldError Duplicate(std::string field, const nlohmann::json& value);
  static FieldError Forbidden(std::string field, std::string detail);
  static FieldError TooMany(std::string field, int64_t actual, int64_t max);
  static FieldError TooLong(std::string field, int64_t max_bytes);
};
using FieldErrorList = std::vector<FieldError>;

// The cause reason a field error message carries, read from the text after
// "<field>: " ("Required value" -> "FieldValueRequired"); "FieldValueInvalid"
// for a message of no known form.
std::string_view CauseReasonOfMessage(std::string_view message_after_field);

}  // namespace copse::apiserver
