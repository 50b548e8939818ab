// End to end: kubectl v1.32 sends built-in types as
// application/vnd.kubernetes.protobuf; every `kubectl create` subcommand must
// work against `copse local`, and what it created must read back as JSON.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/e2e/kubectl/harness.h"

namespace copse::e2e {
namespace {

using nlohmann::json;

class KubectlProtobufTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // This test needs kubectl: without it, it fails.
    if (!HaveKubectl()) return;
    cluster_ = new LocalCluster({"--nodes", "2"});
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(HaveKubectl()) << "kubectl is required for this test";
    ASSERT_NE(cluster_, nullptr);
    ASSERT_TRUE(cluster_->ready()) << cluster_->startup_output();
  }

  static CommandResult K(const std::vector<std::string>& args) { return cluster_->Kubectl(args); }

  // kubectl create <args>, which must succeed.
  static void Create(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"create"};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r = K(argv);
    EXPECT_EQ(r.exit_code, 0) << "kubectl create " << args[0] << ": " << r.out;
  }

  static json Get(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"get"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"-o", "json"});
    const CommandResult r = K(argv);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    return j;
  }

  static LocalCluster* cluster_;
};
LocalCluster* KubectlProtobufTest::cluster_ = nullptr;

TEST_F(KubectlProtobufTest, KubectlSendsAndReadsProtobuf) {
  // -v=8 prints the request and response headers: this is the protobuf path.
  const CommandResult r =
      K({"create", "configmap", "probe", "--from-literal=k=v", "-n", "default", "-v=8"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const size_t request = r.out.find("Request Headers:");
  const size_t response = r.out.find("Response Headers:");
  ASSERT_NE(request, std::string::npos) << r.out;
  ASSERT_NE(response, std::string::npos) << r.out;
  const std::string proto = "Content-Type: application/vnd.kubernetes.protobuf";
  EXPECT_NE(r.out.find(proto, request), std::string::npos) << r.out;   // what kubectl sent
  EXPECT_NE(r.out.find(proto, response), std::string::npos) << r.out;  // what it got back
  EXPECT_EQ(Get({"configmap", "probe", "-n", "default"})["data"]["k"], "v");
}

TEST_F(KubectlProtobufTest, EveryCreateSubcommandWorks) {
  const std::string ns = "proto-e2e";
  Create({"namespace", ns});
  EXPECT_EQ(Get({"namespace", ns})["status"]["phase"], "Active");

  Create({"configmap", "cm1", "-n", ns, "--from-literal=a=1", "--from-literal=b=two words"});
  const json cm = Get({"configmap", "cm1", "-n", ns});
  EXPECT_EQ(cm["data"], json({{"a", "1"}, {"b", "two words"}}));

  Create({"secret", "generic", "s1", "-n", ns, "--from-literal=password=hunter2"});
  const json s1 = Get({"secret", "s1", "-n", ns});
  EXPECT_EQ(s1["data"]["password"], "aHVudGVyMg==");  // bytes: base64 in JSON
  EXPECT_EQ(s1["type"], "Opaque");
  Create({"secret", "docker-registry", "reg", "-n", ns, "--docker-server=r.example",
          "--docker-username=u", "--docker-password=p"});
  const json reg = Get({"secret", "reg", "-n", ns});
  EXPECT_EQ(reg["type"], "kubernetes.io/dockerconfigjson");
  EXPECT_TRUE(reg["data"].contains(".dockerconfigjson")) << reg.dump();

  Create({"deployment", "web", "-n", ns, "--image=nginx:1.27", "--replicas=3", "--port=80"});
  const json web = Get({"deployment", "web", "-n", ns});
  EXPECT_EQ(web["spec"]["replicas"], 3);
  EXPECT_EQ(web["spec"]["selector"]["matchLabels"]["app"], "web");
  EXPECT_EQ(web["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.27");
  EXPECT_EQ(web["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"], 80);
  // A pointer field set to zero survives (not dropped as an omitted zero).
  Create({"deployment", "idle", "-n", ns, "--image=nginx", "--replicas=0"});
  EXPECT_EQ(Get({"deployment", "idle", "-n", ns})["spec"]["replicas"], 0);

  Create({"job", "pi", "-n", ns, "--image=perl:5.34", "--", "perl", "-Mbignum=bpi", "-wle",
          "print bpi(20)"});
  const json job = Get({"job", "pi", "-n", ns});
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["command"],
            json({"perl", "-Mbignum=bpi", "-wle", "print bpi(20)"}));
  EXPECT_EQ(job["spec"]["template"]["spec"]["restartPolicy"], "Never");

  Create({"cronjob", "nightly", "-n", ns, "--image=busybox", "--schedule=0 3 * * *"});
  EXPECT_EQ(Get({"cronjob", "nightly", "-n", ns})["spec"]["schedule"], "0 3 * * *");

  Create({"service", "clusterip", "api", "-n", ns, "--tcp=80:8080"});
  const json api = Get({"service", "api", "-n", ns});
  EXPECT_EQ(api["spec"]["ports"][0]["port"], 80);
  EXPECT_EQ(api["spec"]["ports"][0]["targetPort"], 8080);  // IntOrString, int
  EXPECT_EQ(api["spec"]["type"], "ClusterIP");
  Create({"service", "nodeport", "np", "-n", ns, "--tcp=443:https", "--node-port=30443"});
  const json np = Get({"service", "np", "-n", ns});
  EXPECT_EQ(np["spec"]["ports"][0]["targetPort"], "https");  // IntOrString, string
  EXPECT_EQ(np["spec"]["ports"][0]["nodePort"], 30443);
  Create({"service", "loadbalancer", "lb", "-n", ns, "--tcp=5678:8080"});
  EXPECT_EQ(Get({"service", "lb", "-n", ns})["spec"]["type"], "LoadBalancer");
  Create({"service", "externalname", "ext", "-n", ns, "--external-name=example.com"});
  EXPECT_EQ(Get({"service", "ext", "-n", ns})["spec"]["externalName"], "example.com");

  Create({"serviceaccount", "robot", "-n", ns});
  EXPECT_EQ(Get({"serviceaccount", "robot", "-n", ns})["metadata"]["name"], "robot");

  Create({"role", "reader", "-n", ns, "--verb=get,list", "--resource=pods"});
  const json role = Get({"role", "reader", "-n", ns});
  EXPECT_EQ(role["rules"][0]["verbs"], json({"get", "list"}));
  EXPECT_EQ(role["rules"][0]["resources"], json({"pods"}));
  Create({"rolebinding", "reader", "-n", ns, "--role=reader", "--serviceaccount=" + ns + ":robot"});
  const json rb = Get({"rolebinding", "reader", "-n", ns});
  EXPECT_EQ(rb["roleRef"]["name"], "reader");
  EXPECT_EQ(rb["subjects"][0]["kind"], "ServiceAccount");
  Create({"clusterrole", "node-reader", "--verb=get", "--resource=nodes"});
  EXPECT_EQ(Get({"clusterrole", "node-reader"})["rules"][0]["resources"], json({"nodes"}));
  Create({"clusterrolebinding", "node-reader", "--clusterrole=node-reader", "--user=alice"});
  EXPECT_EQ(Get({"clusterrolebinding", "node-reader"})["subjects"][0]["name"], "alice");

  Create({"quota", "q", "-n", ns, "--hard=pods=10,requests.cpu=4"});
  const json quota = Get({"quota", "q", "-n", ns});
  EXPECT_EQ(quota["spec"]["hard"], json({{"pods", "10"}, {"requests.cpu", "4"}}));  // Quantity

  Create({"priorityclass", "high", "--value=1000", "--description=important"});
  const json high = Get({"priorityclass", "high"});
  EXPECT_EQ(high["value"], 1000);
  EXPECT_EQ(high["description"], "important");
  // value has no omitempty: 0 is kept.
  Create({"priorityclass", "zero", "--value=0"});
  EXPECT_EQ(Get({"priorityclass", "zero"})["value"], 0);

  Create({"poddisruptionbudget", "web", "-n", ns, "--selector=app=web", "--min-available=50%"});
  EXPECT_EQ(Get({"pdb", "web", "-n", ns})["spec"]["minAvailable"], "50%");

  Create({"ingress", "web", "-n", ns, "--rule=a.example/=web:80"});
  const json ing = Get({"ingress", "web", "-n", ns});
  EXPECT_EQ(ing["spec"]["rules"][0]["host"], "a.example");
  EXPECT_EQ(ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"]["number"],
            80);
}

TEST_F(KubectlProtobufTest, CreateErrorsComeBackReadable) {
  Create({"configmap", "dup", "-n", "default", "--from-literal=a=1"});
  // A Status error in protobuf: kubectl prints its message.
  const CommandResult again = K({"create", "configmap", "dup", "-n", "default"});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.out.find("already exists"), std::string::npos) << again.out;
}

}  // namespace
}  // namespace copse::e2e
