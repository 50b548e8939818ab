#pragma once
// core/v1 Namespace: metadata plus status.phase ("Active" | "Terminating").
//
// Thread-safety: value type.

#include <string>
#include <string_view>

#include "core/result.h"
#include "kube/object.h"

namespace copse::kube {

class Namespace : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "v1";
  static constexpr std::string_view kKind = "Namespace";

  std::string phase;  // status.phase

  static Result<Namespace> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
