#pragma once
// Validating admission webhooks in the embedded API server, as
// kube-apiserver's ValidatingAdmissionWebhook plugin does it: every write
// (create, update, patch) of a main resource is sent, as an AdmissionReview
// v1, to each webhook of every admissionregistration.k8s.io/v1
// ValidatingWebhookConfiguration whose rules match (apiGroups, apiVersions,
// operations, resources, with "*"), and whose objectSelector matches the
// object's labels; a webhook that answers allowed=false fails the request with
// its status (code, reason, message prefixed `admission webhook "<name>"
// denied the request: `). A webhook that cannot be reached fails the request
// under failurePolicy Fail (the v1 default) and is skipped under Ignore.
//
// Supported: clientConfig.url (HTTPS, verified with caBundle), timeoutSeconds
// (default 10). Not supported (logged as not matching): clientConfig.service
// (there is no cluster DNS in local mode), namespaceSelector other than empty,
// subresources in rules. Subresource writes (status, scale, binding, eviction)
// are never sent to webhooks.
//
// The ValidatingWebhookConfiguration resource is registered by
// InstallAdmissionRegistration (as a CustomResourceDefinition of the store,
// so `kubectl apply` of a configuration works against copse local).
//
// Thread-safety: AdmitWrite may be called concurrently; it blocks the calling
// thread for the webhook calls (at most each webhook's timeout).

#include <optional>
#include <string_view>

#include "apiserver/resource_info.h"
#include "apiserver/store.h"
#include "core/result.h"

namespace copse::apiserver {

// The API server speaks kube/'s resource names.
using kube::ResourceRef;
namespace resources = kube::resources;

inline const ResourceRef kValidatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                          "validatingwebhookconfigurations", false};

// Serves admissionregistration.k8s.io/v1 validatingwebhookconfigurations from
// `store` (idempotent).
Status InstallAdmissionRegistration(Store& store);

// Runs validating admission for a write request; nullopt when admitted (or
// when no webhook matches - the common case costs one map lookup). `method`
// is POST (create on a collection), PUT or PATCH; anything else, and any
// `subresource`, is admitted without a call.
std::optional<Error> AdmitWrite(Store& store, const ResourceInfo& info, std::string_view version,
                                std::string_view method, std::string_view ns, std::string_view name,
                                std::string_view subresource, std::string_view body,
                                std::string_view content_type, bool dry_run);

}  // namespace copse::apiserver
