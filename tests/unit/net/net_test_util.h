#pragma once
// Helpers of the net/ tests: a blocking socket client that writes and reads
// raw HTTP (to see exactly what the server sends), and an io_context thread
// to run the client transport's coroutines from plain test code.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace copse::net::testing {

using namespace std::chrono_literals;

// A blocking loopback TCP connection.
class RawSocket {
 public:
  explicit RawSocket(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~RawSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  bool Write(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Waits up to `timeout` for readable data (or the peer's close).
  bool WaitReadable(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(timeout.count())) > 0;
  }

  // Appends what arrives within `timeout` to `out`; false on EOF or error
  // (or nothing within the timeout).
  bool ReadSome(std::string& out, std::chrono::milliseconds timeout) {
    if (!WaitReadable(timeout)) return false;
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    out.append(buf, static_cast<size_t>(n));
    return true;
  }

  // Reads until `out` holds `marker` (from `from` on), EOF or the deadline.
  bool ReadUntil(std::string& out, std::string_view marker,
                 std::chrono::milliseconds timeout = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out.find(marker) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !ReadSome(out, left)) return false;
    }
    return true;
  }

  // Reads until the peer closes the connection (or the deadline passes).
  bool ReadToEof(std::string& out, std::chrono::milliseconds timeout = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      if (!WaitReadable(left)) return false;
      char buf[16384];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return true;
      out.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// An io_context on a thread of its own.
class Io {
 public:
  Io() : guard_(ctx_.get_executor()), thread_([this] { ctx_.run(); }) {}
  ~Io() {
    guard_.reset();
    ctx_.stop();
    thread_.join();
  }
  boost::asio::any_io_executor executor() { return ctx_.get_executor(); }

  // Starts the awaitable now; the future gets its result.
  template <typename T>
  std::future<T> Spawn(boost::asio::awaitable<T> awaitable) {
    auto promise = std::make_shared<std::promise<T>>();
    std::future<T> future = promise->get_future();
    boost::asio::co_spawn(ctx_, Fulfil(std::move(awaitable), promise), boost::asio::detached);
    return future;
  }
  template <typename T>
  T Run(boost::asio::awaitable<T> awaitable) {
    return Spawn(std::move(awaitable)).get();
  }

 private:
  template <typename T>
  static boost::asio::awaitable<void> Fulfil(boost::asio::awaitable<T> awaitable,
                                             std::shared_ptr<std::promise<T>> promise) {
    promise->set_value(co_await std::move(awaitable));
  }

 public:
 private:
  boost::asio::io_context ctx_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::thread thread_;
};

// This process's resident set size in bytes (/proc/self/statm).
inline int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

}  // namespace copse::net::testing
