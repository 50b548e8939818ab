// The YAML readers: the scheduler's configuration file
// (scheduler/config/config.h) and kubeconfig (kube/kubeconfig.h). The first
// byte picks the reader, the rest is the YAML. Bad input must come back as
// an error naming a field, never as a crash or an uncaught exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/check.h"
#include "kube/kubeconfig.h"
#include "plugins/defaults/defaults.h"
#include "scheduler/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view yaml(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    static const copse::plugins::Registry* registry = [] {
      auto* r = new copse::plugins::Registry();
      COPSE_CHECK(copse::plugins::RegisterDefaultPlugins(*r).ok());
      return r;
    }();
    auto config = copse::scheduler::config::ParseSchedulerConfig(yaml, *registry);
    if (!config.ok()) {
      COPSE_CHECK(!config.error().message.empty());
    }
  } else {
    // Relative file references resolve to a folder that does not exist.
    copse::kube::KubeconfigOptions options;
    options.base_dir = "/nonexistent-copse-fuzz";
    auto config = copse::kube::LoadKubeconfig(yaml, options);
    if (!config.ok()) {
      COPSE_CHECK(!config.error().message.empty());
    }
  }
  return 0;
}
