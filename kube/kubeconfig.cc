#include "kube/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace copse::kube {
namespace {

Error Invalid(std::string message) { return MakeError(ErrorCode::kInvalid, std::move(message)); }

std::string Quote(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

// Reads a whole file; `what` names the field or purpose for the error message.
Result<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    std::string message =
        std::string(what) + ": cannot read " + Quote(path) + ": " + std::strerror(err);
    return MakeError(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kInvalid,
                     std::move(message));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Invalid(std::string(what) + ": error reading " + Quote(path));
  return buffer.str();
}

std::string ResolvePath(const std::string& path, const std::string& base_dir) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  if (base_dir.back() == '/') return base_dir + path;
  return base_dir + "/" + path;
}

std::string TrimSpace(std::string s) {
  const auto not_space = [](char c) { return c != ' ' && c != '\n' && c != '\r' && c != '\t'; };
  size_t begin = 0;
  while (begin < s.size() && !not_space(s[begin])) ++begin;
  size_t end = s.size();
  while (end > begin && !not_space(s[end - 1])) --end;
  return s.substr(begin, end - begin);
}

std::optional<std::string> StdGetEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// Field access on a YAML map node with errors naming the field path.
class Fields {
 public:
  Fields(const YAML::Node& node, std::string path) : node_(node), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  std::string Field(std::string_view name) const {
    return path_.empty() ? std::string(name) : path_ + "." + std::string(name);
  }

  bool Has(const char* name) const {
    if (!node_.IsMap()) return false;
    const YAML::Node child = node_[name];
    return child.IsDefined() && !child.IsNull();
  }

  // A string field; empty when absent or null.
  Result<std::string> String(const char* name) const {
    if (!Has(name)) return std::string();
    const YAML::Node child = node_[name];
    if (!child.IsScalar()) return Invalid(Field(name) + ": must be a string");
    return child.Scalar();
  }

  Result<bool> Bool(const char* name) const {
    if (!Has(name)) return false;
    const YAML::Node child = node_[name];
    bool value = false;
    if (!child.IsScalar() || !YAML::convert<bool>::decode(child, value)) {
      return Invalid(Field(name) + ": must be a boolean");
    }
    return value;
  }

  // Base64 "-data" field decoded; empty when absent.
  Result<std::string> Data(const char* name) const {
    auto text = String(name);
    if (!text.ok()) return text.error();
    if (text->empty()) return std::string();
    auto decoded = DecodeBase64(*text);
    if (!decoded.ok()) return Invalid(Field(name) + ": " + decoded.error().message);
    return std::move(decoded).value();
  }

  // Either the inline "-data" field or the file named by `file_field`.
  Result<std::string> DataOrFile(const char* data_field, const char* file_field,
                                 const std::string& base_dir) const {
    auto data = Data(data_field);
    if (!data.ok()) return data.error();
    if (!data->empty()) return std::move(data).value();
    auto file = String(file_field);
    if (!file.ok()) return file.error();
    if (file->empty()) return std::string();
    return ReadFile(ResolvePath(*file, base_dir), Field(file_field));
  }

 private:
  YAML::Node node_;
  std::string path_;
};

// Finds the entry named `name` in a kubeconfig list (clusters, users,
// contexts) and returns its inner map (`cluster`, `user`, `context`) and path.
struct NamedEntry {
  YAML::Node inner;
  std::string path;  // e.g. "users[0].user"
};

Result<NamedEntry> FindNamed(const YAML::Node& root, const char* list, const char* inner,
                             const std::string& name, std::string_view what) {
  const YAML::Node entries = root[list];
  // A missing key yields an invalid node: only IsDefined() may be asked.
  const bool present = entries.IsDefined() && !entries.IsNull();
  if (present && !entries.IsSequence()) return Invalid(std::string(list) + ": must be a list");
  if (present) {
    for (size_t i = 0; i < entries.size(); ++i) {
      const std::string path = std::string(list) + "[" + std::to_string(i) + "]";
      const YAML::Node entry = entries[i];
      if (!entry.IsMap()) return Invalid(path + ": must be a map");
      Fields fields(entry, path);
      auto entry_name = fields.String("name");
      if (!entry_name.ok()) return entry_name.error();
      if (*entry_name != name) continue;
      const YAML::Node inner_node = entry[inner];
      if (!inner_node.IsDefined() || inner_node.IsNull()) {
        // An entry without its map is legal (e.g. a user with no credentials).
        return NamedEntry{YAML::Node(YAML::NodeType::Map), path + "." + inner};
      }
      if (!inner_node.IsMap()) return Invalid(path + "." + inner + ": must be a map");
      return NamedEntry{inner_node, path + "." + inner};
    }
  }
  return Invalid("kubeconfig: " + std::string(what) + " " + Quote(name) + " not found");
}

// users[].user.exec, checked as client-go's clientcmd validation does.
Result<ExecConfig> ParseExec(const YAML::Node& node, const std::string& path,
                             const std::string& base_dir) {
  if (!node.IsMap()) return Invalid(path + ": must be a map");
  Fields fields(node, path);
  ExecConfig exec;
  auto command = fields.String("command");
  if (!command.ok()) return command.error();
  if (command->empty()) return Invalid(fields.Field("command") + ": missing");
  // A command with a path separator is a path (relative ones to the kubeconfig,
  // as kubectl resolves them); a bare name is looked up in $PATH when run.
  exec.command = command->find('/') == std::string::npos ? std::move(command).value()
                                                         : ResolvePath(*command, base_dir);
  auto api_version = fields.String("apiVersion");
  if (!api_version.ok()) return api_version.error();
  if (*api_version != "client.authentication.k8s.io/v1" &&
      *api_version != "client.authentication.k8s.io/v1beta1") {
    return Invalid(fields.Field("apiVersion") + ": " +
                   (api_version->empty() ? std::string("missing") : Quote(*api_version)) +
                   " (supported: client.authentication.k8s.io/v1, "
                   "client.authentication.k8s.io/v1beta1)");
  }
  exec.api_version = std::move(api_version).value();
  if (fields.Has("args")) {
    const YAML::Node args = node["args"];
    if (!args.IsSequence()) return Invalid(fields.Field("args") + ": must be a list of strings");
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].IsScalar()) {
        return Invalid(fields.Field("args") + "[" + std::to_string(i) + "]: must be a string");
      }
      exec.args.push_back(args[i].Scalar());
    }
  }
  if (fields.Has("env")) {
    const YAML::Node env = node["env"];
    if (!env.IsSequence()) return Invalid(fields.Field("env") + ": must be a list");
    for (size_t i = 0; i < env.size(); ++i) {
      Fields entry(env[i], fields.Field("env") + "[" + std::to_string(i) + "]");
      if (!env[i].IsMap()) return Invalid(entry.path() + ": must be a map with name and value");
      auto name = entry.String("name");
      if (!name.ok()) return name.error();
      if (name->empty()) return Invalid(entry.Field("name") + ": missing");
      auto value = entry.String("value");
      if (!value.ok()) return value.error();
      exec.env.emplace_back(std::move(name).value(), std::move(value).value());
    }
  }
  auto hint = fields.String("installHint");
  if (!hint.ok()) return hint.error();
  exec.install_hint = std::move(hint).value();
  auto cluster_info = fields.Bool("provideClusterInfo");
  if (!cluster_info.ok()) return cluster_info.error();
  exec.provide_cluster_info = *cluster_info;
  auto mode = fields.String("interactiveMode");
  if (!mode.ok()) return mode.error();
  if (mode->empty()) {
    if (exec.api_version == "client.authentication.k8s.io/v1") {
      return Invalid(fields.Field("interactiveMode") + ": missing (required for " +
                     exec.api_version + "; Never or IfAvailable)");
    }
    *mode = "IfAvailable";
  }
  if (*mode == "Always") {
    return Invalid(fields.Field("interactiveMode") +
                   ": Always needs a terminal, which copse (a service) never has; use Never or "
                   "IfAvailable with a non-interactive plugin configuration");
  }
  if (*mode != "Never" && *mode != "IfAvailable") {
    return Invalid(fields.Field("interactiveMode") + ": " + Quote(*mode) +
                   " (supported: Never, IfAvailable, Always)");
  }
  exec.interactive_mode = std::move(mode).value();
  return exec;
}

Result<ClientConfig> ParseKubeconfig(const YAML::Node& root, const KubeconfigOptions& options) {
  if (!root.IsMap()) return Invalid("kubeconfig: must be a YAML map");
  Fields top(root, "");

  std::string context_name = options.context;
  if (context_name.empty()) {
    auto current = top.String("current-context");
    if (!current.ok()) return current.error();
    if (current->empty()) return Invalid("kubeconfig: current-context is not set");
    context_name = std::move(current).value();
  }

  auto context = FindNamed(root, "contexts", "context", context_name, "context");
  if (!context.ok()) return context.error();
  Fields context_fields(context->inner, context->path);
  auto cluster_name = context_fields.String("cluster");
  if (!cluster_name.ok()) return cluster_name.error();
  if (cluster_name->empty()) return Invalid(context_fields.Field("cluster") + ": missing");
  auto user_name = context_fields.String("user");
  if (!user_name.ok()) return user_name.error();
  auto ns = context_fields.String("namespace");
  if (!ns.ok()) return ns.error();

  ClientConfig config;
  if (!ns->empty()) config.namespace_ = std::move(ns).value();

  // Cluster.
  auto cluster = FindNamed(root, "clusters", "cluster", *cluster_name, "cluster");
  if (!cluster.ok()) return cluster.error();
  Fields cluster_fields(cluster->inner, cluster->path);
  auto server = cluster_fields.String("server");
  if (!server.ok()) return server.error();
  if (server->empty()) return Invalid(cluster_fields.Field("server") + ": missing");
  if (server->rfind("https://", 0) != 0 && server->rfind("http://", 0) != 0) {
    return Invalid(cluster_fields.Field("server") + ": " + Quote(*server) +
                   " must start with https:// or http://");
  }
  config.server = std::move(server).value();
  auto ca = cluster_fields.DataOrFile("certificate-authority-data", "certificate-authority",
                                      options.base_dir);
  if (!ca.ok()) return ca.error();
  config.ca_pem = std::move(ca).value();
  auto insecure = cluster_fields.Bool("insecure-skip-tls-verify");
  if (!insecure.ok()) return insecure.error();
  config.insecure_skip_tls_verify = *insecure;
  auto server_name = cluster_fields.String("tls-server-name");
  if (!server_name.ok()) return server_name.error();
  config.tls_server_name = std::move(server_name).value();

  // User (optional: a context may name no user).
  if (!user_name->empty()) {
    auto user = FindNamed(root, "users", "user", *user_name, "user");
    if (!user.ok()) return user.error();
    Fields user_fields(user->inner, user->path);
    if (user_fields.Has("auth-provider")) {
      return Invalid(user_fields.Field("auth-provider") +
                     ": auth-provider plugins were removed from kubectl (1.26); use an exec "
                     "credential plugin (users[].user.exec), a token or a client certificate");
    }
    auto cert =
        user_fields.DataOrFile("client-certificate-data", "client-certificate", options.base_dir);
    if (!cert.ok()) return cert.error();
    auto key = user_fields.DataOrFile("client-key-data", "client-key", options.base_dir);
    if (!key.ok()) return key.error();
    if (cert->empty() != key->empty()) {
      return Invalid(user_fields.Field(cert->empty() ? "client-certificate" : "client-key") +
                     ": missing (a client certificate needs both certificate and key)");
    }
    config.client_cert_pem = std::move(cert).value();
    config.client_key_pem = std::move(key).value();

    auto token = user_fields.String("token");
    if (!token.ok()) return token.error();
    config.token = TrimSpace(std::move(token).value());
    auto token_file = user_fields.String("tokenFile");
    if (!token_file.ok()) return token_file.error();
    if (config.token.empty() && !token_file->empty()) {
      config.token_file = ResolvePath(*token_file, options.base_dir);
      auto contents = ReadFile(config.token_file, user_fields.Field("tokenFile"));
      if (!contents.ok()) return contents.error();
      config.token = TrimSpace(std::move(contents).value());
      if (config.token.empty()) {
        return Invalid(user_fields.Field("tokenFile") + ": " + Quote(config.token_file) +
                       " is empty");
      }
    }
    auto username = user_fields.String("username");
    if (!username.ok()) return username.error();
    auto password = user_fields.String("password");
    if (!password.ok()) return password.error();
    config.username = std::move(username).value();
    config.password = std::move(password).value();

    if (user_fields.Has("exec")) {
      if (!config.token.empty() || !config.username.empty()) {
        return Invalid(user_fields.Field("exec") + ": user " + Quote(*user_name) +
                       " has both an exec plugin and a " +
                       (config.token.empty() ? "username/password" : "token") +
                       "; only one authentication method is allowed");
      }
      auto exec = ParseExec(user->inner["exec"], user_fields.Field("exec"), options.base_dir);
      if (!exec.ok()) return exec.error();
      exec->user = *user_name;
      config.exec = std::move(exec).value();
    }
  }
  return config;
}

constexpr std::array<int8_t, 256> MakeBase64Table() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i)
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return table;
}
constexpr std::array<int8_t, 256> kBase64Table = MakeBase64Table();

}  // namespace

Result<std::string> DecodeBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  uint32_t accumulator = 0;
  int bits = 0;
  size_t symbols = 0;
  size_t padding = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    const int8_t value = kBase64Table[static_cast<unsigned char>(c)];
    if (value < 0 || padding > 0) return Invalid("invalid base64");
    accumulator = (accumulator << 6) | static_cast<uint32_t>(value);
    bits += 6;
    ++symbols;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((accumulator >> bits) & 0xFF));
    }
  }
  // A single leftover symbol cannot encode a byte; padding must complete a quantum.
  if (symbols % 4 == 1 || padding > 2 || (padding > 0 && (symbols + padding) % 4 != 0)) {
    return Invalid("invalid base64");
  }
  return out;
}

std::string EncodeBase64(std::string_view data) {
  constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const uint32_t n = (static_cast<unsigned char>(data[i]) << 16) |
                       (static_cast<unsigned char>(data[i + 1]) << 8) |
                       static_cast<unsigned char>(data[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(kAlphabet[(n >> 6) & 63]);
    out.push_back(kAlphabet[n & 63]);
  }
  if (i < data.size()) {
    uint32_t n = static_cast<unsigned char>(data[i]) << 16;
    if (i + 1 < data.size()) n |= static_cast<unsigned char>(data[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < data.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

Result<ClientConfig> LoadKubeconfig(std::string_view yaml, const KubeconfigOptions& options) {
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    if (!root.IsDefined() || root.IsNull()) return Invalid("kubeconfig: empty document");
    return ParseKubeconfig(root, options);
  } catch (const YAML::Exception& e) {
    std::string message = "kubeconfig: invalid YAML";
    if (!e.mark.is_null()) {
      message += " at line " + std::to_string(e.mark.line + 1) + ", column " +
                 std::to_string(e.mark.column + 1);
    }
    message += ": " + e.msg;
    return Invalid(std::move(message));
  }
}

Result<ClientConfig> LoadKubeconfigFile(const std::string& path, const KubeconfigOptions& options) {
  auto text = ReadFile(path, "kubeconfig");
  if (!text.ok()) return text.error();
  KubeconfigOptions resolved = options;
  if (resolved.base_dir.empty()) {
    const size_t slash = path.rfind('/');
    resolved.base_dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  }
  auto config = LoadKubeconfig(*text, resolved);
  if (!config.ok()) {
    Error error = std::move(config).error();
    error.message = path + ": " + error.message;
    return error;
  }
  return config;
}

Result<ClientConfig> LoadDefaultKubeconfig(const KubeconfigOptions& options,
                                           const GetEnvFunction& getenv) {
  const GetEnvFunction& env = getenv ? getenv : GetEnvFunction(StdGetEnv);
  if (auto kubeconfig = env("KUBECONFIG"); kubeconfig && !kubeconfig->empty()) {
    std::string_view list = *kubeconfig;
    while (!list.empty()) {
      const size_t colon = list.find(':');
      const std::string_view first = list.substr(0, colon);
      if (!first.empty()) return LoadKubeconfigFile(std::string(first), options);
      if (colon == std::string_view::npos) break;
      list.remove_prefix(colon + 1);
    }
  }
  auto home = env("HOME");
  if (!home || home->empty()) {
    return Invalid("kubeconfig: neither KUBECONFIG nor HOME is set");
  }
  return LoadKubeconfigFile(*home + "/.kube/config", options);
}

Result<ClientConfig> LoadInClusterConfig(const InClusterOptions& options) {
  const GetEnvFunction& env = options.getenv ? options.getenv : GetEnvFunction(StdGetEnv);
  const auto host = env("KUBERNETES_SERVICE_HOST");
  const auto port = env("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    return Invalid(
        "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (not "
        "running in a pod?)");
  }
  ClientConfig config;
  const bool ipv6 = host->find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;

  auto token = ReadFile(options.token_path, "in-cluster: token");
  if (!token.ok()) return token.error();
  config.token = TrimSpace(std::move(token).value());
  if (config.token.empty()) {
    return Invalid("in-cluster: token: " + Quote(options.token_path) + " is empty");
  }
  config.token_file = options.token_path;

  auto ca = ReadFile(options.ca_path, "in-cluster: ca.crt");
  if (!ca.ok()) return ca.error();
  config.ca_pem = std::move(ca).value();

  if (!options.namespace_path.empty()) {
    auto ns = ReadFile(options.namespace_path, "in-cluster: namespace");
    if (ns.ok()) {
      std::string trimmed = TrimSpace(std::move(ns).value());
      if (!trimmed.empty()) config.namespace_ = std::move(trimmed);
    } else if (ns.error().code != ErrorCode::kNotFound) {
      return ns.error();
    }
  }
  return config;
}

}  // namespace copse::kube
