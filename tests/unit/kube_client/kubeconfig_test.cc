#include "kube/kubeconfig.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/unit/kube_client/test_util.h"

namespace copse::kube {
namespace {

using testing::TempDir;

GetEnvFunction FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

constexpr char kFullConfig[] = R"(
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: prod-cluster
  cluster:
    server: https://prod.example.com:6443
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443/prefix
    certificate-authority-data: Q0EtUEVN
    tls-server-name: kubernetes.default
users:
- name: prod-user
  user:
    token: prod-token
- name: dev-user
  user:
    client-certificate-data: Q0VSVC1QRU0=
    client-key-data: S0VZLVBFTQ==
    token: "  dev-token  "
contexts:
- name: prod
  context:
    cluster: prod-cluster
    user: prod-user
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: team-a
)";

TEST(Kubeconfig, ParsesTheCurrentContextWithInlineData) {
  auto config = LoadKubeconfig(kFullConfig);
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443/prefix");
  EXPECT_EQ(config->ca_pem, "CA-PEM");
  EXPECT_EQ(config->client_cert_pem, "CERT-PEM");
  EXPECT_EQ(config->client_key_pem, "KEY-PEM");
  EXPECT_EQ(config->token, "dev-token");
  EXPECT_EQ(config->tls_server_name, "kubernetes.default");
  EXPECT_EQ(config->namespace_, "team-a");
  EXPECT_FALSE(config->insecure_skip_tls_verify);
}

TEST(Kubeconfig, ExplicitContextOverridesCurrentContext) {
  auto config = LoadKubeconfig(kFullConfig, {.context = "prod"});
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://prod.example.com:6443");
  EXPECT_EQ(config->token, "prod-token");
  EXPECT_EQ(config->namespace_, "default");
  EXPECT_TRUE(config->ca_pem.empty());
  EXPECT_TRUE(config->client_cert_pem.empty());
}

TEST(Kubeconfig, InsecureSkipTlsVerifyAndBasicAuth) {
  auto config = LoadKubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://10.0.0.1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {username: admin, password: secret}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_TRUE(config->insecure_skip_tls_verify);
  EXPECT_EQ(config->username, "admin");
  EXPECT_EQ(config->password, "secret");
  EXPECT_TRUE(config->token.empty());
}

TEST(Kubeconfig, ContextWithoutUserIsAllowed) {
  auto config = LoadKubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: "http://127.0.0.1:8080"}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->server, "http://127.0.0.1:8080");
  EXPECT_TRUE(config->token.empty());
}

TEST(Kubeconfig, ReadsFilesRelativeToTheKubeconfig) {
  TempDir dir;
  dir.Write("certs/ca.crt", "CA-FROM-FILE");
  dir.Write("certs/client.crt", "CERT-FROM-FILE");
  dir.Write("certs/client.key", "KEY-FROM-FILE");
  dir.Write("token", "file-token\n");
  const std::string path = dir.Write("config", R"(
current-context: c
clusters:
- name: k
  cluster:
    server: https://127.0.0.1:1
    certificate-authority: certs/ca.crt
users:
- name: u
  user:
    client-certificate: certs/client.crt
    client-key: )" + dir.path() + R"(/certs/client.key
    tokenFile: token
contexts:
- name: c
  context: {cluster: k, user: u}
)");
  auto config = LoadKubeconfigFile(path);
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->ca_pem, "CA-FROM-FILE");
  EXPECT_EQ(config->client_cert_pem, "CERT-FROM-FILE");
  EXPECT_EQ(config->client_key_pem, "KEY-FROM-FILE");
  EXPECT_EQ(config->token, "file-token");
  EXPECT_EQ(config->token_file, dir.path() + "/token");
}

TEST(Kubeconfig, DataWinsOverFile) {
  auto config = LoadKubeconfig(R"(
current-context: c
clusters:
- name: k
  cluster:
    server: https://127.0.0.1:1
    certificate-authority: /nonexistent/ca.crt
    certificate-authority-data: SU5MSU5F
contexts: [{name: c, context: {cluster: k}}]
)");
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->ca_pem, "INLINE");
}

TEST(Kubeconfig, StaticTokenWinsOverTokenFile) {
  auto config = LoadKubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: static, tokenFile: /nonexistent/token}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->token, "static");
  EXPECT_TRUE(config->token_file.empty());
}

struct ErrorCase {
  const char* name;
  std::string yaml;
  std::string context;
  std::string expected_message;
  ErrorCode code = ErrorCode::kInvalid;
};

class KubeconfigErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(KubeconfigErrors, NameTheField) {
  const ErrorCase& c = GetParam();
  auto config = LoadKubeconfig(c.yaml, {.context = c.context});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code, c.code);
  EXPECT_NE(config.error().message.find(c.expected_message), std::string::npos)
      << "message: " << config.error().message;
}

const char kClusters[] = "clusters: [{name: k, cluster: {server: \"https://127.0.0.1:1\"}}]\n";

INSTANTIATE_TEST_SUITE_P(
    All, KubeconfigErrors,
    ::testing::Values(
        ErrorCase{"ContextNotFound", kFullConfig, "x", "kubeconfig: context \"x\" not found"},
        ErrorCase{"NoCurrentContext", std::string(kClusters), "",
                  "kubeconfig: current-context is not set"},
        ErrorCase{"ClusterNotFound",
                  "current-context: c\ncontexts: [{name: c, context: {cluster: nope}}]\n", "",
                  "kubeconfig: cluster \"nope\" not found"},
        ErrorCase{"UserNotFound",
                  std::string(kClusters) +
                      "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: "
                      "ghost}}]\n",
                  "", "kubeconfig: user \"ghost\" not found"},
        ErrorCase{"BadKeyData",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {client-certificate-data: QQ==, "
                      "client-key-data: \"not*base64\"}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "", "users[0].user.client-key-data: invalid base64"},
        ErrorCase{"BadCaData",
                  "current-context: c\n"
                  "clusters: [{name: a, cluster: {server: \"https://a\"}}, {name: k, cluster: "
                  "{server: \"https://b\", certificate-authority-data: \"%%%\"}}]\n"
                  "contexts: [{name: c, context: {cluster: k}}]\n",
                  "", "clusters[1].cluster.certificate-authority-data: invalid base64"},
        ErrorCase{"MissingServer",
                  "current-context: c\nclusters: [{name: k, cluster: {}}]\n"
                  "contexts: [{name: c, context: {cluster: k}}]\n",
                  "", "clusters[0].cluster.server: missing"},
        ErrorCase{"BadScheme",
                  "current-context: c\nclusters: [{name: k, cluster: {server: \"ftp://x\"}}]\n"
                  "contexts: [{name: c, context: {cluster: k}}]\n",
                  "",
                  "clusters[0].cluster.server: \"ftp://x\" must start with https:// or http://"},
        ErrorCase{"BadBool",
                  "current-context: c\nclusters: [{name: k, cluster: {server: \"https://x\", "
                  "insecure-skip-tls-verify: maybe}}]\n"
                  "contexts: [{name: c, context: {cluster: k}}]\n",
                  "", "clusters[0].cluster.insecure-skip-tls-verify: must be a boolean"},
        ErrorCase{"CertWithoutKey",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {client-certificate-data: QQ==}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "", "users[0].user.client-key: missing"},
        ErrorCase{"ExecWithoutApiVersion",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {exec: {command: aws}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "",
                  "users[0].user.exec.apiVersion: missing (supported: "
                  "client.authentication.k8s.io/v1, client.authentication.k8s.io/v1beta1)"},
        ErrorCase{"ExecOldApiVersion",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {exec: {command: aws, apiVersion: "
                      "client.authentication.k8s.io/v1alpha1}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "", "users[0].user.exec.apiVersion: \"client.authentication.k8s.io/v1alpha1\""},
        ErrorCase{"ExecWithoutCommand",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {exec: {apiVersion: "
                      "client.authentication.k8s.io/v1beta1}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "", "users[0].user.exec.command: missing"},
        ErrorCase{"ExecV1NeedsInteractiveMode",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {exec: {command: aws, apiVersion: "
                      "client.authentication.k8s.io/v1}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "",
                  "users[0].user.exec.interactiveMode: missing (required for "
                  "client.authentication.k8s.io/v1"},
        ErrorCase{"ExecAlwaysInteractive",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {exec: {command: aws, interactiveMode: Always, "
                      "apiVersion: client.authentication.k8s.io/v1}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "", "users[0].user.exec.interactiveMode: Always needs a terminal"},
        ErrorCase{"ExecBadInteractiveMode",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {exec: {command: aws, interactiveMode: Sometimes, "
                      "apiVersion: client.authentication.k8s.io/v1}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "",
                  "users[0].user.exec.interactiveMode: \"Sometimes\" (supported: Never, "
                  "IfAvailable, Always)"},
        ErrorCase{"ExecEnvWithoutName",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {exec: {command: aws, env: [{value: x}], "
                      "apiVersion: client.authentication.k8s.io/v1beta1}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "", "users[0].user.exec.env[0].name: missing"},
        ErrorCase{"ExecArgsNotStrings",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {exec: {command: aws, args: [[a]], "
                      "apiVersion: client.authentication.k8s.io/v1beta1}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "", "users[0].user.exec.args[0]: must be a string"},
        ErrorCase{"ExecAndToken",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {token: t, exec: {command: aws, "
                      "apiVersion: client.authentication.k8s.io/v1beta1}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "", "users[0].user.exec: user \"u\" has both an exec plugin and a token"},
        ErrorCase{"AuthProvider",
                  std::string(kClusters) +
                      "current-context: c\n"
                      "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n"
                      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
                  "", "users[0].user.auth-provider: auth-provider plugins were removed"},
        ErrorCase{"MissingFile",
                  "current-context: c\nclusters: [{name: k, cluster: {server: \"https://x\", "
                  "certificate-authority: /nonexistent/ca.crt}}]\n"
                  "contexts: [{name: c, context: {cluster: k}}]\n",
                  "",
                  "clusters[0].cluster.certificate-authority: cannot read "
                  "\"/nonexistent/ca.crt\"",
                  ErrorCode::kNotFound},
        ErrorCase{"ContextsNotAList", "current-context: c\ncontexts: {a: b}\n", "",
                  "contexts: must be a list"},
        ErrorCase{"BadYaml", "current-context: [unclosed\n", "", "kubeconfig: invalid YAML"},
        ErrorCase{"NotAMap", "- a\n- b\n", "", "kubeconfig: must be a YAML map"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

// An EKS-style kubeconfig user (aws eks get-token) and a GKE-style one.
TEST(Kubeconfig, ExecPluginsAsCloudKubeconfigsWriteThem) {
  constexpr char kEks[] = R"(
apiVersion: v1
kind: Config
current-context: eks
clusters:
- name: eks-cluster
  cluster:
    server: https://ABC.gr7.eu-west-1.eks.amazonaws.com
    certificate-authority-data: Q0EtUEVN
contexts:
- name: eks
  context: {cluster: eks-cluster, user: eks-user}
users:
- name: eks-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
      args: [--region, eu-west-1, eks, get-token, --cluster-name, prod]
      env:
      - name: AWS_PROFILE
        value: prod
)";
  auto eks = LoadKubeconfig(kEks);
  ASSERT_TRUE(eks.ok()) << eks.error().ToString();
  ASSERT_TRUE(eks->exec.has_value());
  EXPECT_EQ(eks->exec->command, "aws");  // a bare name: looked up in $PATH when run
  EXPECT_EQ(eks->exec->args, (std::vector<std::string>{"--region", "eu-west-1", "eks", "get-token",
                                                       "--cluster-name", "prod"}));
  ASSERT_EQ(eks->exec->env.size(), 1u);
  EXPECT_EQ(eks->exec->env[0].first, "AWS_PROFILE");
  EXPECT_EQ(eks->exec->env[0].second, "prod");
  EXPECT_EQ(eks->exec->api_version, "client.authentication.k8s.io/v1beta1");
  EXPECT_EQ(eks->exec->interactive_mode, "IfAvailable");  // v1beta1's default
  EXPECT_FALSE(eks->exec->provide_cluster_info);
  EXPECT_EQ(eks->exec->user, "eks-user");
  EXPECT_TRUE(eks->token.empty());

  constexpr char kGke[] = R"(
current-context: gke
clusters: [{name: g, cluster: {server: "https://34.1.2.3"}}]
contexts: [{name: gke, context: {cluster: g, user: g-user}}]
users:
- name: g-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl
      provideClusterInfo: true
      interactiveMode: Never
)";
  auto gke = LoadKubeconfig(kGke);
  ASSERT_TRUE(gke.ok()) << gke.error().ToString();
  ASSERT_TRUE(gke->exec.has_value());
  EXPECT_EQ(gke->exec->install_hint, "Install gke-gcloud-auth-plugin for use with kubectl");
  EXPECT_TRUE(gke->exec->provide_cluster_info);
  EXPECT_EQ(gke->exec->interactive_mode, "Never");
}

TEST(Kubeconfig, ExecCommandWithASlashIsRelativeToTheKubeconfig) {
  TempDir dir;
  const std::string path = dir.Write("sub/config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {command: ./bin/get-token, interactiveMode: Never,
                                apiVersion: client.authentication.k8s.io/v1}}}]
)");
  auto config = LoadKubeconfigFile(path);
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->exec->command, dir.path() + "/sub/./bin/get-token");
}

TEST(Kubeconfig, FileErrorsNameThePath) {
  auto config = LoadKubeconfigFile("/nonexistent/kubeconfig");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code, ErrorCode::kNotFound);
  EXPECT_NE(config.error().message.find("/nonexistent/kubeconfig"), std::string::npos);

  TempDir dir;
  const std::string path = dir.Write("config", "current-context: missing\n");
  config = LoadKubeconfigFile(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message, path + ": kubeconfig: context \"missing\" not found");
}

TEST(Kubeconfig, DefaultUsesKubeconfigEnvThenHome) {
  TempDir dir;
  const std::string body =
      std::string(kClusters) + "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n";
  const std::string explicit_path = dir.Write("explicit", body);
  dir.Write("home/.kube/config",
            "current-context: c\nclusters: [{name: k, cluster: {server: \"https://home:1\"}}]\n"
            "contexts: [{name: c, context: {cluster: k}}]\n");

  auto config = LoadDefaultKubeconfig({}, FakeEnv({{"KUBECONFIG", explicit_path}}));
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://127.0.0.1:1");

  config = LoadDefaultKubeconfig({}, FakeEnv({{"KUBECONFIG", ":" + explicit_path + ":/other"}}));
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://127.0.0.1:1");

  config = LoadDefaultKubeconfig({}, FakeEnv({{"HOME", dir.path() + "/home"}}));
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://home:1");

  config = LoadDefaultKubeconfig({}, FakeEnv({}));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code, ErrorCode::kInvalid);
}

TEST(InClusterConfig, ReadsServiceAccountFiles) {
  TempDir dir;
  InClusterOptions options;
  options.token_path = dir.Write("token", "sa-token\n");
  options.ca_path = dir.Write("ca.crt", "CLUSTER-CA");
  options.namespace_path = dir.Write("namespace", "copse-system");
  options.getenv =
      FakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  auto config = LoadInClusterConfig(options);
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->token, "sa-token");
  EXPECT_EQ(config->token_file, options.token_path);
  EXPECT_EQ(config->ca_pem, "CLUSTER-CA");
  EXPECT_EQ(config->namespace_, "copse-system");
}

TEST(InClusterConfig, BracketsIpv6AndDefaultsTheNamespace) {
  TempDir dir;
  InClusterOptions options;
  options.token_path = dir.Write("token", "t");
  options.ca_path = dir.Write("ca.crt", "CA");
  options.namespace_path = dir.path() + "/no-namespace-file";
  options.getenv =
      FakeEnv({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "6443"}});
  auto config = LoadInClusterConfig(options);
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://[fd00::1]:6443");
  EXPECT_EQ(config->namespace_, "default");
}

TEST(InClusterConfig, Errors) {
  TempDir dir;
  InClusterOptions options;
  options.token_path = dir.path() + "/missing-token";
  options.ca_path = dir.Write("ca.crt", "CA");
  options.getenv = FakeEnv({});
  auto config = LoadInClusterConfig(options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code, ErrorCode::kInvalid);
  EXPECT_NE(config.error().message.find("KUBERNETES_SERVICE_HOST"), std::string::npos);

  options.getenv = FakeEnv({{"KUBERNETES_SERVICE_HOST", "h"}, {"KUBERNETES_SERVICE_PORT", "1"}});
  config = LoadInClusterConfig(options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code, ErrorCode::kNotFound);
  EXPECT_NE(config.error().message.find("in-cluster: token"), std::string::npos);
  EXPECT_NE(config.error().message.find("missing-token"), std::string::npos);

  options.token_path = dir.Write("empty-token", "\n");
  config = LoadInClusterConfig(options);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("is empty"), std::string::npos);
}

TEST(Base64, RoundTripsAndRejectsGarbage) {
  for (std::string s : {"", "a", "ab", "abc", "abcd", "hello, world\n\x01\xff"}) {
    auto decoded = DecodeBase64(EncodeBase64(s));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, s);
  }
  EXPECT_EQ(EncodeBase64("abc"), "YWJj");
  EXPECT_EQ(EncodeBase64("ab"), "YWI=");
  EXPECT_EQ(*DecodeBase64("YW\nJj"), "abc");  // whitespace ignored (folded YAML)
  EXPECT_EQ(*DecodeBase64("YWI"), "ab");      // padding optional
  EXPECT_FALSE(DecodeBase64("Y").ok());
  EXPECT_FALSE(DecodeBase64("YW=I").ok());
  EXPECT_FALSE(DecodeBase64("YW*j").ok());
  EXPECT_FALSE(DecodeBase64("YWJj=").ok());
  EXPECT_EQ(DecodeBase64("@@").error().message, "invalid base64");
}

}  // namespace
}  // namespace copse::kube
