// Walks a parsed document beside the schema's message tree. Member lookup is
// a scan of the message's fields (a few dozen at most), following inline
// fields into their messages, so no per-message index is built.

#include "kube/protobuf/unknown_fields.h"

#include <algorithm>

#include "kube/codec_json.h"
#include "kube/protobuf/schema.h"

namespace copse::kube::protobuf {

namespace {

namespace dom = simdjson::dom;
using codec::Element;

const Field* FindMember(const Message& message, std::string_view name) {
  for (const Field& f : message.fields) {
    if (f.inline_) {
      if (f.message != nullptr) {
        if (const Field* inner = FindMember(*f.message, name)) return inner;
      }
    } else if (f.json_name == name) {
      return &f;
    }
  }
  return nullptr;
}

// Fields copse's JSON codecs read that the protobuf schema has no number for
// (newer than its sources): known, their contents unchecked. KEP-4671's pod
// spec.schedulingGroup ({podGroupName}) is how a pod joins a v1alpha2 PodGroup.
bool JsonOnlyField(const Message& message, std::string_view name) {
  return message.name == "core.v1.PodSpec" && name == "schedulingGroup";
}

class Checker {
 public:
  Checker(FieldProblems& out, std::string_view prefix, bool patch)
      : path_(prefix), patch_(patch), out_(out) {}

  // `root`: apiVersion and kind are TypeMeta's, accepted beside the fields.
  void Object(const Message& message, Element value, bool root) {
    dom::object obj;
    if (value.get(obj) != simdjson::SUCCESS) return;  // type errors are the decoder's to report
    std::vector<std::string_view> seen;
    for (dom::key_value_pair member : obj) {
      const std::string_view key = member.key;
      if (patch_ && key.starts_with('$')) continue;  // $patch, $setElementOrder/..., $retainKeys
      const size_t mark = path_.size();
      Push(key);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
        out_.duplicate.push_back(path_);
      } else {
        seen.push_back(key);
        if (const Field* f = FindMember(message, key)) {
          Value(*f, member.value);
        } else if (!(root && (key == "apiVersion" || key == "kind")) &&
                   !JsonOnlyField(message, key)) {
          out_.unknown.push_back(path_);
        }
      }
      path_.resize(mark);
    }
  }

 private:
  void Value(const Field& f, Element value) {
    if (f.map) {
      dom::object obj;
      if (value.get(obj) != simdjson::SUCCESS) return;
      std::vector<std::string_view> seen;
      for (dom::key_value_pair entry : obj) {
        const size_t mark = path_.size();
        path_ += '[';
        path_ += entry.key;
        path_ += ']';
        if (std::find(seen.begin(), seen.end(), entry.key) != seen.end()) {
          out_.duplicate.push_back(path_);
        } else {
          seen.push_back(entry.key);
          Single(f, entry.value);
        }
        path_.resize(mark);
      }
      return;
    }
    if (f.repeated) {
      dom::array arr;
      if (value.get(arr) != simdjson::SUCCESS) return;
      size_t index = 0;
      for (Element item : arr) {
        const size_t mark = path_.size();
        path_ += '[';
        path_ += std::to_string(index++);
        path_ += ']';
        Single(f, item);
        path_.resize(mark);
      }
      return;
    }
    Single(f, value);
  }

  void Single(const Field& f, Element value) {
    if (f.type == FieldType::kMessage && f.message != nullptr) Object(*f.message, value, false);
  }

  void Push(std::string_view key) {
    if (!path_.empty()) path_ += '.';
    path_ += key;
  }

  std::string path_;  // of the member being checked
  bool patch_;
  FieldProblems& out_;
};

}  // namespace

Result<std::optional<FieldProblems>> CheckObjectFields(std::string_view api_version,
                                                       std::string_view kind, std::string_view json,
                                                       bool patch) {
  const Message* message = GetSchema().FindKind(api_version, kind);
  if (message == nullptr) return std::optional<FieldProblems>();
  codec::ParserLease lease;
  Element root;
  if (Status parsed = codec::ParseDocument(lease, json, root); !parsed.ok()) return parsed.error();
  FieldProblems problems;
  Checker(problems, {}, patch).Object(*message, root, true);
  return std::optional<FieldProblems>(std::move(problems));
}

Result<std::optional<FieldProblems>> CheckMessageFields(std::string_view message_name,
                                                        std::string_view json,
                                                        std::string_view prefix) {
  const Message* message = GetSchema().FindMessage(message_name);
  if (message == nullptr) return std::optional<FieldProblems>();
  codec::ParserLease lease;
  Element root;
  if (Status parsed = codec::ParseDocument(lease, json, root); !parsed.ok()) return parsed.error();
  FieldProblems problems;
  Checker(problems, prefix, false).Object(*message, root, false);
  return std::optional<FieldProblems>(std::move(problems));
}

}  // namespace copse::kube::protobuf
