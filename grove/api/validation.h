#pragma once
// Validation of PodCliqueSets as upstream Grove's validating webhook does it
// (operator/internal/webhook/admission/pcs/validation), with errors in
// Kubernetes' field.Error form so each names the field at fault:
//   spec.template.cliques[0].spec.minAvailable: Invalid value: 5: minAvailable must not be greater
//   than replicas spec.template.cliques[1].spec.podSpec.nodeName: Invalid value: "n1": must not be
//   set spec.template.cliqueStartupType: Forbidden: field is immutable
//
// Callers validate the *defaulted* object (grove/api/defaults.h).
//
// Thread-safety: pure functions (the context's callbacks must be safe to call
// from the caller's thread).

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "grove/api/types.h"

namespace copse::grove::api {

struct FieldError {
  enum class Type : uint8_t {
    kInvalid,      // Invalid value: <value>: <detail>
    kRequired,     // Required value: <detail>
    kDuplicate,    // Duplicate value: <value>
    kForbidden,    // Forbidden: <detail>
    kUnsupported,  // Unsupported value: <value>: supported values: ...
    kNotFound,     // Not found: <value>
  };
  Type type = Type::kInvalid;
  std::string field;  // "spec.template.cliques[0].spec.replicas"
  std::string value;  // rendered value (JSON-ish: strings quoted)
  std::string detail;

  std::string ToString() const;
};
using FieldErrors = std::vector<FieldError>;

// What validation needs to know about the operator's configuration.
struct ValidationContext {
  // The pod-facing name the default scheduler backend answers to (an empty
  // schedulerName resolves to it), e.g. "default-scheduler".
  std::string default_scheduler_name = "default-scheduler";
  // Whether pods with this schedulerName have an enabled backend; unset: all do.
  std::function<bool(std::string_view scheduler_name)> scheduler_enabled;
  // The ClusterTopologyBinding named `name`, or nullopt when it does not exist;
  // unset: topology names are not resolved (domains are not checked).
  std::function<std::optional<ClusterTopologyBindingSpec>(std::string_view name)> topology;
};

// Create: the whole object.
FieldErrors ValidatePodCliqueSet(const PodCliqueSet& pcs, const ValidationContext& context);
// Update: immutable fields and composition (the new object is validated with
// ValidatePodCliqueSet too; fields that only matter at creation, such as
// nodeName, are not re-checked, as upstream).
FieldErrors ValidatePodCliqueSetUpdate(const PodCliqueSet& now, const PodCliqueSet& old,
                                       const ValidationContext& context);

// kInvalid with kube-apiserver's aggregate form:
//   PodCliqueSet.grove.io "x" is invalid: [<error>, <error>]
Error ToError(const FieldErrors& errors, std::string_view kind, std::string_view name);

// The resolved (non-empty) scheduler name all pods of the PodCliqueSet use:
// the first clique's schedulerName, or `default_name` when empty.
std::string ResolvedSchedulerName(const PodCliqueSet& pcs, std::string_view default_name);

}  // namespace copse::grove::api
