#pragma once
// A scripted HTTP/1.1 server on blocking sockets, for transport edge cases
// the real API server does not produce on demand (a keep-alive connection
// closed by the peer, a request that is never answered, odd chunking).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace copse::kube::testing {

struct RawRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

class RawConnection {
 public:
  explicit RawConnection(int fd) : fd_(fd) {}

  // Reads one request; nullopt when the peer closed the connection.
  std::optional<RawRequest> ReadRequest() {
    size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return std::nullopt;
    }
    RawRequest req;
    std::string_view head(buffer_.data(), header_end);
    const size_t line_end = head.find("\r\n");
    std::string_view line = head.substr(0, line_end);
    const size_t sp1 = line.find(' ');
    const size_t sp2 = line.find(' ', sp1 + 1);
    req.method = std::string(line.substr(0, sp1));
    req.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
    size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t end = head.find("\r\n", pos);
      if (end == std::string_view::npos) end = head.size();
      std::string_view header = head.substr(pos, end - pos);
      const size_t colon = header.find(':');
      std::string name(header.substr(0, colon));
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      std::string_view value = header.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      req.headers[name] = std::string(value);
      pos = end + 2;
    }
    buffer_.erase(0, header_end + 4);
    size_t length = 0;
    if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
      length = std::stoul(it->second);
    }
    while (buffer_.size() < length) {
      if (!Fill()) return std::nullopt;
    }
    req.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return req;
  }

  void Write(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      data.remove_prefix(static_cast<size_t>(n));
    }
  }

  void WriteJsonResponse(int status, std::string_view body, bool keep_alive = true) {
    std::string response = "HTTP/1.1 " + std::to_string(status) + " X\r\n";
    response += "Content-Type: application/json\r\n";
    response += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    if (!keep_alive) response += "Connection: close\r\n";
    response += "\r\n";
    response += body;
    Write(response);
  }

  void Close() {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  }

 private:
  bool Fill() {
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  std::string buffer_;
};

class RawHttpServer {
 public:
  using Handler = std::function<void(RawConnection&)>;

  // `accept` false: listen but never accept (connections hang in the backlog).
  explicit RawHttpServer(Handler handler, bool accept = true) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) std::abort();
    if (::listen(listen_fd_, 64) != 0) std::abort();
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (accept) accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~RawHttpServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    if (accept_thread_.joinable()) accept_thread_.join();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : threads_) t.join();
    for (int fd : fds_) ::close(fd);
    ::close(listen_fd_);
  }

  uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_.load(); }

 private:
  void AcceptLoop() {
    while (!stopping_) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      accepted_.fetch_add(1);
      std::lock_guard<std::mutex> lock(mu_);
      fds_.push_back(fd);
      threads_.emplace_back([this, fd] {
        RawConnection conn(fd);
        handler_(conn);
        ::shutdown(fd, SHUT_RDWR);
      });
    }
  }

  Handler handler_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::thread accept_thread_;
  std::mutex mu_;
  std::vector<int> fds_;
  std::vector<std::thread> threads_;
};

}  // namespace copse::kube::testing
