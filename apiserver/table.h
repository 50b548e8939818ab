#pragma once
// Server-side printing: the meta.k8s.io/v1 Table that kubectl requests with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
//
//   - BuiltinColumns: kube-apiserver's column definitions for the built-in
//     resources copse serves (pkg/printers/internalversion), names as
//     upstream writes them ("Name", "Ready", "Nominated Node"); kubectl
//     upper-cases them. Cells of these columns are computed by code
//     (PrinterColumn::builtin names the computation).
//   - ColumnsFromCrd: a CRD version's additionalPrinterColumns, with "Name"
//     first, and "Age" when the version declares none (as upstream).
//     Cells come from the column's JSONPath (see apiserver/jsonpath.h).
//   - BuildTable / BuildTableWatchEvent: rows for objects.
//
// Thread-safety: pure functions.

#include <chrono>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::apiserver {

struct PrinterColumn {
  std::string name;    // "Name", "Ready", ...
  std::string type;    // "string", "integer", "number", "boolean", "date"
  std::string format;  // "name" for the Name column, else usually empty
  std::string description;
  int priority = 0;       // 0: always shown; 1: with -o wide
  std::string json_path;  // CRD columns: ".spec.replicas"
  // Built-in columns: which computation fills the cell ("pod.ready",
  // "node.status", "name", "age", ...). When empty the cell is json_path.
  std::string builtin;
};

// Columns for a resource of a group ("" for core) as kube-apiserver prints
// them: pods, nodes, namespaces, services, events (core and events.k8s.io,
// which share one printer upstream), leases, priorityclasses,
// poddisruptionbudgets, configmaps, secrets, customresourcedefinitions
// (Name, Created At: upstream's default convertor). Anything else gets Name,
// Age. As upstream, every column is returned, including priority 1 ("wide")
// ones; kubectl hides those without -o wide.
std::vector<PrinterColumn> BuiltinColumns(std::string_view group, std::string_view resource);

// `crd_version` is one element of a CRD's spec.versions[] (apiextensions/v1).
// additionalPrinterColumns entries keep their name/type/format/description/
// priority/jsonPath. Name first; when the version declares no columns at all,
// Name and Age.
std::vector<PrinterColumn> ColumnsFromCrd(const nlohmann::json& crd_version);

// "None", "Metadata" (also ""), "Object"; anything else: kInvalid, 400
// BadRequest `unrecognized includeObject value: "X"` as upstream.
Status CheckIncludeObject(std::string_view include_object);

// A meta.k8s.io/v1 Table ({"kind":"Table","apiVersion":"meta.k8s.io/v1",
// "metadata":{},"columnDefinitions":[...],"rows":[...]}); the caller sets
// metadata.resourceVersion/continue. Each row is {"cells":[...],"object":X}
// where X is, by include_object: "None" -> null; "Metadata" or "" ->
// {"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":
// <the object's metadata>}; "Object" -> the object. Unknown values are
// treated as "Metadata" (check them first with CheckIncludeObject).
// Pointers in `objects` must not be null. `now` is the wall time for ages.
nlohmann::json BuildTable(const std::vector<PrinterColumn>& columns,
                          const std::vector<const nlohmann::json*>& objects,
                          std::string_view include_object,
                          std::chrono::system_clock::time_point now);

// The object of one watch event with as=Table: a Table with a single row.
// As upstream, only the first event of a watch carries columnDefinitions
// (pass include_column_definitions = true for it); later ones have an empty
// columnDefinitions list.
nlohmann::json BuildTableWatchEvent(const std::vector<PrinterColumn>& columns,
                                    const nlohmann::json& object, std::string_view include_object,
                                    std::chrono::system_clock::time_point now,
                                    bool include_column_definitions);

// kube's human duration ("45s", "5m3s", "3h4m", "3d", "2y10d"), as
// k8s.io/apimachinery/pkg/util/duration.HumanDuration.
std::string HumanDuration(std::chrono::system_clock::duration d);

// The Age cell of a timestamp (RFC 3339) relative to `now`: "<unknown>" when
// the timestamp is missing or does not parse, as upstream.
std::string TranslateTimestampSince(std::string_view rfc3339,
                                    std::chrono::system_clock::time_point now);

}  // namespace copse::apiserver
