#include "kube/custom_resource_definition.h"

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Emit;
using codec::ForEachField;
using codec::Json;
using codec::Prev;
using codec::Put;
using codec::PutArray;
using codec::PutObject;
using codec::PutOpt;
using codec::PutOptObject;
using codec::Read;
using codec::ReadArray;
using codec::Reader;
using codec::ReadOpt;

namespace {

using Version = CustomResourceDefinitionVersion;

bool ReadNames(Reader& r, Element e, CustomResourceNames& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "plural") return Read(r, v, out.plural);
    if (key == "singular") return Read(r, v, out.singular);
    if (key == "kind") return Read(r, v, out.kind);
    if (key == "listKind") return Read(r, v, out.list_kind);
    if (key == "shortNames") return Read(r, v, out.short_names);
    if (key == "categories") return Read(r, v, out.categories);
    return true;
  });
}

bool ReadScale(Reader& r, Element e, CustomResourceScale& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "specReplicasPath") return Read(r, v, out.spec_replicas_path);
    if (key == "statusReplicasPath") return Read(r, v, out.status_replicas_path);
    if (key == "labelSelectorPath") return Read(r, v, out.label_selector_path);
    return true;
  });
}

bool ReadSubresources(Reader& r, Element e, CustomResourceSubresources& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "status") {
      if (v.is_null()) return true;
      if (!v.is_object()) return r.TypeError(v, "object");
      out.status = true;
      return true;
    }
    if (key == "scale") return ReadOpt(r, v, out.scale, ReadScale);
    return true;
  });
}

bool ReadColumn(Reader& r, Element e, CustomResourceColumn& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "type") return Read(r, v, out.type);
    if (key == "format") return Read(r, v, out.format);
    if (key == "description") return Read(r, v, out.description);
    if (key == "priority") return Read(r, v, out.priority);
    if (key == "jsonPath") return Read(r, v, out.json_path);
    return true;
  });
}

bool ReadVersion(Reader& r, Element e, Version& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "served") return Read(r, v, out.served);
    if (key == "storage") return Read(r, v, out.storage);
    if (key == "deprecated") return Read(r, v, out.deprecated);
    if (key == "deprecationWarning") return Read(r, v, out.deprecation_warning);
    if (key == "schema") {
      if (v.is_null()) return true;
      if (!v.is_object()) return r.TypeError(v, "object");
      // Canonical text (compact, keys sorted) so that equal schemas compare equal.
      std::string text;
      if (!codec::ReadRawJson(r, v, text)) return false;
      out.schema = Json::parse(text).dump();
      return true;
    }
    if (key == "subresources") return ReadOpt(r, v, out.subresources, ReadSubresources);
    if (key == "additionalPrinterColumns") {
      return ReadArray(r, v, out.additional_printer_columns, ReadColumn);
    }
    return true;
  });
}

bool ReadSpec(Reader& r, Element e, CustomResourceDefinitionSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "group") return Read(r, v, out.group);
    if (key == "names") return ReadNames(r, v, out.names);
    if (key == "scope") return Read(r, v, out.scope);
    if (key == "versions") return ReadArray(r, v, out.versions, ReadVersion);
    return true;
  });
}

bool ReadStatus(Reader& r, Element e, CustomResourceDefinitionStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "conditions") return Read(r, v, out.conditions);
    if (key == "acceptedNames") return ReadNames(r, v, out.accepted_names);
    if (key == "storedVersions") return Read(r, v, out.stored_versions);
    return true;
  });
}

void OverlayNames(Json& j, const CustomResourceNames& now, const CustomResourceNames* before) {
  using N = CustomResourceNames;
  Put(j, "plural", now.plural, Prev(before, &N::plural), Emit::kAlways);
  Put(j, "singular", now.singular, Prev(before, &N::singular));
  Put(j, "shortNames", now.short_names, Prev(before, &N::short_names));
  Put(j, "kind", now.kind, Prev(before, &N::kind), Emit::kAlways);
  Put(j, "listKind", now.list_kind, Prev(before, &N::list_kind));
  Put(j, "categories", now.categories, Prev(before, &N::categories));
}

void OverlayScale(Json& j, const CustomResourceScale& now, const CustomResourceScale* before) {
  using S = CustomResourceScale;
  Put(j, "specReplicasPath", now.spec_replicas_path, Prev(before, &S::spec_replicas_path),
      Emit::kAlways);
  Put(j, "statusReplicasPath", now.status_replicas_path, Prev(before, &S::status_replicas_path),
      Emit::kAlways);
  PutOpt(j, "labelSelectorPath", now.label_selector_path, Prev(before, &S::label_selector_path));
}

void OverlaySubresources(Json& j, const CustomResourceSubresources& now,
                         const CustomResourceSubresources* before) {
  if (before == nullptr || before->status != now.status) {
    if (!now.status) {
      j.erase("status");
    } else if (!j.contains("status") || !j["status"].is_object()) {
      j["status"] = Json::object();
    }
  }
  PutOptObject(j, "scale", now.scale, Prev(before, &CustomResourceSubresources::scale),
               OverlayScale);
}

void OverlayColumn(Json& j, const CustomResourceColumn& now, const CustomResourceColumn* before) {
  using C = CustomResourceColumn;
  Put(j, "name", now.name, Prev(before, &C::name), Emit::kAlways);
  Put(j, "type", now.type, Prev(before, &C::type), Emit::kAlways);
  Put(j, "format", now.format, Prev(before, &C::format));
  Put(j, "description", now.description, Prev(before, &C::description));
  Put(j, "priority", now.priority, Prev(before, &C::priority));
  Put(j, "jsonPath", now.json_path, Prev(before, &C::json_path), Emit::kAlways);
}

void OverlayVersion(Json& j, const Version& now, const Version* before) {
  Put(j, "name", now.name, Prev(before, &Version::name), Emit::kAlways);
  Put(j, "served", now.served, Prev(before, &Version::served), Emit::kAlways);
  Put(j, "storage", now.storage, Prev(before, &Version::storage), Emit::kAlways);
  Put(j, "deprecated", now.deprecated, Prev(before, &Version::deprecated));
  PutOpt(j, "deprecationWarning", now.deprecation_warning,
         Prev(before, &Version::deprecation_warning));
  const std::optional<std::string>* old_schema = Prev(before, &Version::schema);
  if (old_schema == nullptr || *old_schema != now.schema) {
    Json schema = now.schema.has_value() ? Json::parse(*now.schema, nullptr, false) : Json();
    if (schema.is_object()) {
      j["schema"] = std::move(schema);
    } else {
      j.erase("schema");
    }
  }
  PutOptObject(j, "subresources", now.subresources, Prev(before, &Version::subresources),
               OverlaySubresources);
  PutArray(j, "additionalPrinterColumns", now.additional_printer_columns,
           Prev(before, &Version::additional_printer_columns), OverlayColumn,
           [](const CustomResourceColumn& a, const CustomResourceColumn& b) {
             return a.name == b.name;
           });
}

void OverlaySpec(Json& j, const CustomResourceDefinitionSpec& now,
                 const CustomResourceDefinitionSpec* before) {
  using S = CustomResourceDefinitionSpec;
  Put(j, "group", now.group, Prev(before, &S::group), Emit::kAlways);
  PutObject(j, "names",
            [&](Json& names) { OverlayNames(names, now.names, Prev(before, &S::names)); });
  Put(j, "scope", now.scope, Prev(before, &S::scope), Emit::kAlways);
  PutArray(
      j, "versions", now.versions, Prev(before, &S::versions), OverlayVersion,
      [](const Version& a, const Version& b) { return a.name == b.name; }, Emit::kAlways);
}

void OverlayStatus(Json& j, const CustomResourceDefinitionStatus& now,
                   const CustomResourceDefinitionStatus* before) {
  using S = CustomResourceDefinitionStatus;
  codec::PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
  const CustomResourceNames empty_names;
  if (before == nullptr ? now.accepted_names != empty_names
                        : now.accepted_names != before->accepted_names) {
    PutObject(j, "acceptedNames", [&](Json& names) {
      OverlayNames(names, now.accepted_names, Prev(before, &S::accepted_names));
    });
  }
  Put(j, "storedVersions", now.stored_versions, Prev(before, &S::stored_versions));
}

}  // namespace

const CustomResourceDefinitionVersion* CustomResourceDefinition::FindVersion(
    std::string_view name) const noexcept {
  for (const Version& version : spec.versions) {
    if (version.name == name) return &version;
  }
  return nullptr;
}

const CustomResourceDefinitionVersion* CustomResourceDefinition::StorageVersion() const noexcept {
  for (const Version& version : spec.versions) {
    if (version.storage) return &version;
  }
  return nullptr;
}

ResourceRef CustomResourceDefinition::Resource(std::string_view version) const {
  return ResourceRef{spec.group, std::string(version), spec.names.plural,
                     spec.scope != kClusterScoped};
}

Result<CustomResourceDefinition> CustomResourceDefinition::Decode(std::string_view json) {
  return codec::DecodeObject<CustomResourceDefinition>(
      json, kKind, [](Reader& r, std::string_view key, Element v, CustomResourceDefinition& out) {
        if (key == "spec") return ReadSpec(r, v, out.spec);
        if (key == "status") return ReadStatus(r, v, out.status);
        return true;
      });
}

std::string CustomResourceDefinition::Encode() const {
  return codec::EncodeObject(
      *this, kApiVersion, kKind,
      [this](const CustomResourceDefinition& before) {
        return spec == before.spec && status == before.status;
      },
      [this](Json& root, const CustomResourceDefinition* before) {
        codec::PutObject(root, "spec", [&](Json& j) {
          OverlaySpec(j, spec, Prev(before, &CustomResourceDefinition::spec));
        });
        codec::PutObject(root, "status", [&](Json& j) {
          OverlayStatus(j, status, Prev(before, &CustomResourceDefinition::status));
        });
      });
}

}  // namespace copse::kube
