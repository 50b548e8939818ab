// Request and response bodies of every size arrive whole, over HTTP and
// HTTPS: both sides write the HTTP head themselves and send the body with it
// or after it, so bodies around and far above a TLS record (16 KiB) are the
// cases that matter.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/client/fixture.h"

namespace copse::kube {
namespace large_bodies_test {

using nlohmann::json;

const ResourceRef kConfigMaps{"", "v1", "configmaps", true};

class LargeBodies : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    server_ = testing::StartServer();
    ASSERT_NE(server_, nullptr);
    client_ = GetParam() ? testing::HttpsClient(io_, *server_) : testing::HttpClient(io_, *server_);
    ASSERT_NE(client_, nullptr);
  }

  IoThread io_;
  std::unique_ptr<apiserver::ApiServer> server_;
  std::shared_ptr<Client> client_;
};

TEST_P(LargeBodies, CreateGetAndListRoundTripEverySize) {
  for (const size_t size : {size_t{0}, size_t{100}, size_t{16 * 1024 - 300}, size_t{16 * 1024},
                            size_t{16 * 1024 + 1}, size_t{70 * 1024}, size_t{1 << 20}}) {
    SCOPED_TRACE(size);
    std::string value(size, 'x');
    for (size_t i = 0; i < size; i += 97) value[i] = static_cast<char>('a' + i % 26);
    const std::string name = "cm-" + std::to_string(size);
    const std::string body = json{
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", name}}},
        {"data", {{"v", value}}}}.dump();
    auto created = io_.Run(client_->Create(kConfigMaps, "default", body));
    ASSERT_TRUE(created.ok()) << created.error().ToString();
    EXPECT_EQ(json::parse(*created)["data"]["v"], value);
    auto got = io_.Run(client_->Get(kConfigMaps, "default", name));
    ASSERT_TRUE(got.ok()) << got.error().ToString();
    EXPECT_EQ(json::parse(*got)["data"]["v"], value);
  }
  auto listed = io_.Run(client_->List(kConfigMaps, "default"));
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(listed->items.size(), 7u);
}

INSTANTIATE_TEST_SUITE_P(HttpAndHttps, LargeBodies, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Https" : "Http";
                         });

}  // namespace large_bodies_test
}  // namespace copse::kube
