#pragma once
// A small synchronous HTTP(S) client for the API server integration tests:
// one keep-alive connection per HttpClient, and WatchReader for chunked
// watch streams (a reader thread queues the newline-delimited events).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace copse::apiserver::testing {

struct Response {
  int status = 0;
  std::string body;
  std::string content_type;
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

struct ClientOptions {
  std::string token;
  bool tls = false;
  std::string ca_pem;  // trusted CA for TLS (verification on when set)
};

class HttpClient {
 public:
  HttpClient(uint16_t port, ClientOptions options = {});
  ~HttpClient();

  Response Request(std::string_view method, std::string_view target, std::string_view body = {},
                   std::string_view content_type = "application/json",
                   std::string_view accept = "application/json");
  Response Get(std::string_view target) { return Request("GET", target); }
  Response Post(std::string_view target, const nlohmann::json& body) {
    return Request("POST", target, body.dump());
  }
  Response Put(std::string_view target, const nlohmann::json& body) {
    return Request("PUT", target, body.dump());
  }
  Response Patch(std::string_view target, const nlohmann::json& body,
                 std::string_view type = "application/merge-patch+json") {
    return Request("PATCH", target, body.dump(), type);
  }
  Response Delete(std::string_view target, std::string_view body = {}) {
    return Request("DELETE", target, body);
  }

 private:
  struct Conn;
  uint16_t port_;
  ClientOptions options_;
  std::unique_ptr<Conn> conn_;
};

// GET <target> (a watch URL) and read its events as they arrive.
class WatchReader {
 public:
  // With `parse` false, events are queued as null (for counting at speed).
  WatchReader(uint16_t port, std::string target, ClientOptions options = {}, bool parse = true);
  ~WatchReader();
  int status() const { return status_; }
  // The next event, or nullopt when none arrives before the timeout or the
  // stream ended.
  std::optional<nlohmann::json> Next(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Next() with the number of the HTTP chunk the event ended in (1 for the
  // stream's first chunk): events written together share it.
  std::optional<std::pair<nlohmann::json, size_t>> NextWithChunk(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // True once the server ended the stream and every event was taken.
  bool WaitEnded(std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  struct Conn;
  void ReadLoop();
  std::unique_ptr<Conn> conn_;
  int status_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<nlohmann::json> events_;
  std::deque<size_t> event_chunks_;  // parallel to events_
  bool ended_ = false;
  bool parse_ = true;
};

}  // namespace copse::apiserver::testing
