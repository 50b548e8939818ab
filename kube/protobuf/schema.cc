#include "kube/protobuf/schema.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace copse::kube::protobuf {

namespace {

[[noreturn]] void Die(const std::string& line, const char* why) {
  std::fprintf(stderr, "kube/protobuf schema table: %s: %s\n", why, line.c_str());
  std::abort();
}

// A field whose type is resolved once every message is known (or a kind
// line, with `message` null). Indices, not pointers: the vectors still grow.
struct PendingType {
  Message* message;
  size_t index;
  std::string type;
};

bool ScalarType(std::string_view name, FieldType* out) {
  static const std::pair<std::string_view, FieldType> kTypes[] = {
      {"string", FieldType::kString},
      {"bytes", FieldType::kBytes},
      {"bool", FieldType::kBool},
      {"int32", FieldType::kInt32},
      {"int64", FieldType::kInt64},
      {"meta.v1.Time", FieldType::kTime},
      {"meta.v1.MicroTime", FieldType::kMicroTime},
      {"meta.v1.FieldsV1", FieldType::kFieldsV1},
      {"resource.Quantity", FieldType::kQuantity},
      {"intstr.IntOrString", FieldType::kIntOrString},
      {"runtime.RawExtension", FieldType::kRawExtension},
  };
  for (const auto& [n, t] : kTypes) {
    if (n == name) {
      *out = t;
      return true;
    }
  }
  return false;
}

}  // namespace

const Field* Message::FindNumber(uint32_t number) const {
  auto it = std::lower_bound(by_number.begin(), by_number.end(), number,
                             [](const Field* f, uint32_t n) { return f->number < n; });
  return it != by_number.end() && (*it)->number == number ? *it : nullptr;
}

std::unique_ptr<Schema> Schema::Parse(const char* const* chunks) {
  auto schema = std::make_unique<Schema>();
  std::vector<PendingType> pending;
  Message* current = nullptr;
  for (const char* const* chunk = chunks; *chunk != nullptr; ++chunk) {
    std::istringstream in(*chunk);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      std::istringstream words(line);
      std::vector<std::string> w;
      for (std::string word; words >> word;) w.push_back(word);
      if (w[0] == "message") {
        if (w.size() != 2) Die(line, "bad message line");
        auto message = std::make_unique<Message>();
        message->name = w[1];
        current = message.get();
        if (!schema->messages_.emplace(w[1], std::move(message)).second) {
          Die(line, "duplicate message");
        }
      } else if (w[0] == "kind") {
        if (w.size() != 4) Die(line, "bad kind line");
        pending.push_back({nullptr, 0, line});
      } else {
        if (current == nullptr || w.size() < 3) Die(line, "field outside a message");
        Field field;
        auto [p, ec] = std::from_chars(w[0].data(), w[0].data() + w[0].size(), field.number);
        if (ec != std::errc() || field.number == 0) Die(line, "bad field number");
        field.json_name = w[1];
        for (size_t i = 3; i < w.size(); ++i) {
          if (w[i] == "repeated") {
            field.repeated = true;
          } else if (w[i] == "emit") {
            field.emit = true;
          } else if (w[i] == "inline") {
            field.inline_ = true;
          } else {
            Die(line, "unknown flag");
          }
        }
        std::string type = w[2];
        if (type.starts_with("map<string,") && type.ends_with(">")) {
          field.map = true;
          type = type.substr(11, type.size() - 12);
        }
        current->fields.push_back(std::move(field));
        pending.push_back({current, current->fields.size() - 1, type});
      }
    }
  }
  // Fields are stable now (each message's vector is complete): resolve types.
  for (auto& [name, message] : schema->messages_) {
    for (auto& field : message->fields) message->by_number.push_back(&field);
    std::sort(message->by_number.begin(), message->by_number.end(),
              [](const Field* a, const Field* b) { return a->number < b->number; });
  }
  for (const PendingType& p : pending) {
    if (p.message == nullptr) {  // a kind line
      std::istringstream words(p.type);
      std::string tag, api_version, kind, message;
      words >> tag >> api_version >> kind >> message;
      const Message* m = schema->FindMessage(message);
      if (m == nullptr) Die(p.type, "kind of an unknown message");
      if (api_version == "*") {
        schema->meta_kinds_[kind] = m;
      } else {
        schema->kinds_[api_version + " " + kind] = m;
      }
      continue;
    }
    Field& field = p.message->fields[p.index];
    if (ScalarType(p.type, &field.type)) continue;
    const Message* m = schema->FindMessage(p.type);
    if (m == nullptr) Die(p.type, "field of an unknown type");
    field.type = FieldType::kMessage;
    field.message = m;
  }
  schema->list_meta_ = schema->FindMessage("meta.v1.ListMeta");
  if (schema->list_meta_ == nullptr) Die("meta.v1.ListMeta", "missing");
  return schema;
}

const Message* Schema::FindMessage(std::string_view name) const {
  auto it = messages_.find(std::string(name));
  return it == messages_.end() ? nullptr : it->second.get();
}

const Message* Schema::FindKind(std::string_view api_version, std::string_view kind) const {
  std::string key;
  key.reserve(api_version.size() + kind.size() + 1);
  key.append(api_version).append(" ").append(kind);
  if (auto it = kinds_.find(key); it != kinds_.end()) return it->second;
  // meta.k8s.io/v1 kinds are registered in every group version (and
  // Status answers as apiVersion "v1").
  if (auto it = meta_kinds_.find(std::string(kind)); it != meta_kinds_.end()) return it->second;
  return nullptr;
}

const Schema& GetSchema() {
  static const std::unique_ptr<Schema> schema = Schema::Parse(kSchemaText);
  return *schema;
}

}  // namespace copse::kube::protobuf
