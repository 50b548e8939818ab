#pragma once
// PATCH with application/apply-patch+yaml (kubectl apply --server-side) on
// one object of the embedded API server: reads the live object, applies
// (apiserver/apply.h) as the request's field manager, and writes the result
// with the live resourceVersion as precondition (retried when another writer
// got in between). A missing object is created. The body is the applied
// configuration as JSON (kubectl sends JSON under this media type); other
// YAML is refused with 415 naming JSON.
//
// Thread-safety: as Store.

#include <string_view>

#include "apiserver/handler.h"

namespace copse::apiserver {

struct ApplyRequest {
  std::string_view version;
  std::string_view ns;
  std::string_view name;
  std::string_view body;
  std::string_view field_manager;  // ?fieldManager=, required
  bool force = false;              // ?force=true
  bool dry_run = false;
};

HttpResponse ServeApply(Store& store, const ResourceInfo& info, const ApplyRequest& request);

}  // namespace copse::apiserver
