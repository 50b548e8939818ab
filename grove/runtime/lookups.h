#pragma once
// Cache lookups the Grove controllers share.
//
// Thread-safety: read-only access to the caches (thread-safe).

#include <memory>
#include <string>
#include <vector>

#include "grove/api/types.h"
#include "grove/runtime/caches.h"
#include "grove/runtime/context.h"
#include "kube/pod.h"

namespace copse::grove::runtime {

using PodPtr = std::shared_ptr<const kube::Pod>;

// Pods of `pclq` that are not terminating (deletionTimestamp unset) and not
// finished, controlled by it (its UID).
std::vector<PodPtr> ActivePodsOf(const Caches& caches, const api::PodClique& pclq);
// Every pod labelled with the PodClique's name (terminating ones included).
std::vector<PodPtr> AllPodsOf(const Caches& caches, std::string_view ns, std::string_view pclq);

// The defaulted PodCliqueSet an object belongs to (app.kubernetes.io/part-of), or null.
std::shared_ptr<const api::PodCliqueSet> OwningPodCliqueSet(const Caches& caches,
                                                            DefaultedCache& defaulted,
                                                            const kube::ObjectMeta& meta);

// Every PodGroup of `gang` has at least minReplicas bound pods.
bool IsGangScheduled(const Caches& caches, const api::PodGang& gang);

// An integer label, or -1.
int IntLabel(const kube::ObjectMeta& meta, std::string_view key);

}  // namespace copse::grove::runtime
