#pragma once
// Kubernetes strategic merge patch (application/strategic-merge-patch+json),
// with the semantics of k8s.io/apimachinery/pkg/util/strategicpatch
// StrategicMergePatch for the built-in kinds copse serves:
//   - maps merge recursively; a null value deletes the key;
//   - lists without a patch strategy are replaced by the patch's list;
//   - lists with patchStrategy "merge" and a patchMergeKey (containers by
//     name, env by name, ports by containerPort, volumeMounts by mountPath,
//     volumes by name, status.conditions by type, ownerReferences by uid,
//     service ports by port, ...) merge element-wise by that key; lists of
//     primitives with patchStrategy "merge" (metadata.finalizers,
//     node spec.podCIDRs) become the union, in order;
//   - directives: `$patch: replace | delete` in maps and in list elements
//     (`{"$patch":"delete","name":"x"}` removes the element with that merge
//     key; a `$patch: replace` element replaces the whole list),
//     `$retainKeys`, `$setElementOrder/<field>`,
//     `$deleteFromPrimitiveList/<field>`;
//   - element order as upstream: with `$setElementOrder` the listed order;
//     without it, patched items keep their live position and new items are
//     placed before the live items they are compared with (so a new
//     container added without an order list comes first, as with
//     kube-apiserver).
// Deliberate differences, all on input kubectl never sends: `$patch: merge`
// is accepted as a no-op (upstream rejects it in list elements); directives
// and nulls inside a value the original lacks are applied instead of being
// stored verbatim (upstream's typed decode drops them anyway);
// `$deleteFromPrimitiveList` on a list without merge strategy deletes
// instead of replacing the list.
//
// Errors, with upstream's messages and codes (patch.go
// interpretStrategicMergePatchError):
//   - kInvalid, 400, reason "BadRequest": the patch is not a JSON object
//     (`json: cannot unmarshal array into Go value of type map[string]interface {}`),
//     malformed $retainKeys / $setElementOrder / $deleteFromPrimitiveList;
//   - kInvalid, 422, reason "Invalid": a list of lists, patch content
//     outside $retainKeys (upstream puts these texts in the Status causes
//     and a generic message on top; copse returns the specific text);
//   - kInternal, 500, reason "" (upstream returns these raw): an unknown
//     `$patch` value (`unknown patch type: x in map: map[...]`), a merge list
//     element without its merge key (`map: map[image:foo] does not contain
//     declared merge key: name`), an order list that contradicts the patch,
//     mixed element types.
//
// Thread-safety: pure functions.

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "core/result.h"

namespace copse::apiserver {

// Applies `patch` to `original` (which is not modified) for an object of
// the given apiVersion ("v1", "apps/v1", ...) and kind ("Pod", ...).
// Returns the patched object. The caller decides what may change (e.g. it
// restores apiVersion/kind and validates the result).
Result<nlohmann::json> ApplyStrategicMergePatch(const nlohmann::json& original,
                                                const nlohmann::json& patch,
                                                std::string_view api_version,
                                                std::string_view kind);

// True for kinds compiled into kube-apiserver (every kind of the built-in API
// groups: core "v1", apps, batch, policy, coordination.k8s.io, events.k8s.io,
// scheduling.k8s.io, apiextensions.k8s.io, ...); false for custom resources,
// for which the server answers 415 UnsupportedMediaType as upstream does.
bool SupportsStrategicMerge(std::string_view api_version, std::string_view kind);

// Applies an RFC 6902 JSON patch (application/json-patch+json) to `doc`
// (not modified), operation by operation, as nlohmann::json's patch() does,
// with the check that library leaves to an assertion: an add, copy or move
// whose target's parent is a string, number or boolean fails, naming the
// path (the assertion aborted a debug build; a release build silently did
// nothing). Every error is kInvalid, 422 "Invalid", with the library's or
// this check's message.
Result<nlohmann::json> ApplyJsonPatch(const nlohmann::json& doc, const nlohmann::json& patch);

}  // namespace copse::apiserver
