// The embedded API server's request handling in process (apiserver/handler.h,
// no sockets): a fresh Store per input, then up to 8 requests, separated by
// a line "%%". Each request is a line "METHOD TARGET [CONTENT-TYPE [ACCEPT]]"
// and the body after it. Every response must be an object, a list, a Table,
// discovery or OpenAPI, or a Status whose code is the HTTP status. Requests
// run on a stack as large as the server's request threads (server_stack.h):
// bodies may nest up to the depth limit, which Handle enforces.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/handler.h"
#include "apiserver/store.h"
#include "core/check.h"
#include "tests/fuzz/server_stack.h"

namespace api = copse::apiserver;
using nlohmann::json;

namespace {

std::string_view NextWord(std::string_view& line) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  const size_t end = std::min(line.find(' '), line.size());
  std::string_view word = line.substr(0, end);
  line.remove_prefix(end);
  return word;
}

void CheckResponse(const api::HttpRequest& request, const api::HttpResponse& response) {
  COPSE_CHECK(response.status >= 200 && response.status < 600) << response.status;
  if (response.watch) {
    response.watch->stream().Close();
    return;
  }
  if (response.content_type.starts_with("application/json") && !response.body.empty()) {
    const json body = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    COPSE_CHECK(!body.is_discarded())
        << request.method << " " << request.target << ": not JSON: " << response.body;
    if (response.status >= 400) {
      COPSE_CHECK(body.value("kind", "") == "Status") << response.body;
      COPSE_CHECK(body.value("code", 0) == response.status) << response.body;
    }
  }
}

void RunInput(std::string_view input) {
  api::Handler handler(api::NewStore(), api::HandlerOptions{});
  for (int i = 0; i < 8 && !input.empty(); ++i) {
    const size_t sep = input.find("\n%%\n");
    std::string_view one = input.substr(0, sep);
    input.remove_prefix(sep == std::string_view::npos ? input.size() : sep + 4);

    const size_t newline = std::min(one.find('\n'), one.size());
    std::string_view line = one.substr(0, newline);
    api::HttpRequest request;
    request.method = NextWord(line);
    request.target = NextWord(line);
    request.content_type = NextWord(line);
    request.accept = NextWord(line);
    request.host = "127.0.0.1:6443";
    request.body = one.substr(std::min(newline + 1, one.size()));
    if (request.target.empty()) continue;
    CheckResponse(request, handler.Handle(request));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  copse::fuzz::ServerStack::Run([&] { RunInput(input); });
  return 0;
}
