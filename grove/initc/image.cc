#include "grove/initc/image.h"

#include <nlohmann/json.hpp>

namespace copse::grove::initc {

std::string OperatorImageFromPod(std::string_view pod_json) {
  const nlohmann::json pod = nlohmann::json::parse(pod_json, nullptr, false);
  if (!pod.is_object()) return {};
  const auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return {};
  const auto containers = spec->find("containers");
  if (containers == spec->end() || !containers->is_array()) return {};
  const auto image_of = [](const nlohmann::json& c) -> std::string {
    auto image = c.find("image");
    return image != c.end() && image->is_string() ? image->get<std::string>() : std::string();
  };
  for (const auto& c : *containers) {
    if (!c.is_object()) continue;
    // `copse grove ...`: the image's entrypoint is copse, args[0] the command.
    auto args = c.find("args");
    if (args != c.end() && args->is_array() && !args->empty() && (*args)[0] == "grove") {
      return image_of(c);
    }
    auto command = c.find("command");
    if (command != c.end() && command->is_array() && command->size() >= 2 &&
        (*command)[1] == "grove") {
      return image_of(c);
    }
  }
  if (containers->size() == 1 && (*containers)[0].is_object()) return image_of((*containers)[0]);
  return {};
}

ResolvedImage ResolveImage(const ImageSources& sources) {
  if (!sources.explicit_image.empty()) return {sources.explicit_image, "--initc-image"};
  if (!sources.grove_env_repository.empty()) {
    return {sources.grove_env_repository + ":" + sources.version, "GROVE_INIT_CONTAINER_IMAGE"};
  }
  if (!sources.own_pod_json.empty()) {
    std::string image = OperatorImageFromPod(sources.own_pod_json);
    if (!image.empty()) return {std::move(image), "own pod"};
  }
  return {std::string(kDefaultImageRepository) + ":" + sources.version, "default"};
}

}  // namespace copse::grove::initc
