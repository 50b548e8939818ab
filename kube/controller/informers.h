#pragma once
// Building blocks for a controller's informer caches: indexes by label or by
// controller owner, informer options with logging, and waiting for a set of
// informers to sync.
//
// Index values are "namespace/<value>" so one index serves every namespace.
//
// Thread-safety: pure functions; WaitForSync as kube::Informer::WaitForSync.

#include <chrono>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "kube/informer.h"
#include "kube/object.h"

namespace copse::kube::controller {

// The index value for namespace `ns` and `value`.
std::string IndexValue(std::string_view ns, std::string_view value);

// Indexes objects by the value of label `label` ("namespace/<label value>").
IndexFunction LabelIndex(std::string_view label);

// Indexes objects by the UID of their controller owner reference (the value
// is the bare UID: UIDs are unique across namespaces).
IndexFunction ControllerUidIndex();

// Options for an informer of `resource` in `namespace_` ("" all), with extra
// indexes and a label selector; list/watch errors are logged at verbosity 1
// under `resource.resource`. `clock` drives the backoff (null: real time).
InformerOptions MakeInformerOptions(const ResourceRef& resource, std::string namespace_,
                                    Indexers indexers, std::string label_selector = {},
                                    std::shared_ptr<const Clock> clock = nullptr);

// Waits until every informer has synced, all within one `timeout`; returns
// the first that did not (null when all did).
const Informer* WaitForSync(std::initializer_list<const Informer*> informers,
                            std::chrono::milliseconds timeout);

}  // namespace copse::kube::controller
