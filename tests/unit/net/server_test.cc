// net::Server over real sockets: raw HTTP from a blocking socket where the
// bytes on the wire matter (limits, HEAD, keep-alive, pipelining, streams),
// and net::HttpClient for TLS and client certificates.

#include "net/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <mutex>

#include "net/cert.h"
#include "net/client.h"
#include "tests/unit/net/net_test_util.h"

namespace copse::net {
namespace {

using testing::Io;
using testing::RawSocket;
using namespace std::chrono_literals;

// Echoes "<method> <target> <body>" and counts the requests it saw.
struct Echo {
  std::atomic<int> calls{0};
  Handler handler() {
    return [this](const Request& r) {
      ++calls;
      Response res(200, "text/plain",
                   std::string(r.method) + " " + std::string(r.target) + " " + std::string(r.body));
      res.headers.emplace_back("X-Echo", "1");
      return res;
    };
  }
};

std::unique_ptr<Server> StartPlain(Handler handler, ServerOptions options = {}) {
  options.listeners = {{0, false}};
  auto server = Server::Start(std::move(options), std::move(handler));
  EXPECT_TRUE(server.ok()) << server.error().ToString();
  return server.ok() ? std::move(server).value() : nullptr;
}

size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Server, AnswersWithItsHeadersAndKeepsTheConnection) {
  Echo echo;
  auto server = StartPlain(echo.handler());
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.connected());
  ASSERT_TRUE(socket.Write("POST /a?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"));
  std::string out;
  ASSERT_TRUE(socket.ReadUntil(out, "POST /a?x=1 abc"));
  EXPECT_EQ(out.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << out;
  EXPECT_NE(out.find("Content-Type: text/plain\r\n"), std::string::npos);
  EXPECT_NE(out.find("Cache-Control: no-cache, private\r\n"), std::string::npos);
  EXPECT_NE(out.find("X-Echo: 1\r\n"), std::string::npos);
  EXPECT_NE(out.find("Content-Length: 15\r\n"), std::string::npos);
  EXPECT_EQ(out.find("Connection: close"), std::string::npos);
  // The same connection answers again; "Connection: close" ends it.
  out.clear();
  ASSERT_TRUE(socket.Write("GET /b HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"));
  ASSERT_TRUE(socket.ReadToEof(out));
  EXPECT_NE(out.find("GET /b "), std::string::npos);
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(echo.calls.load(), 2);
}

TEST(Server, PipelinedRequestsAreAnsweredInOrder) {
  Echo echo;
  auto server = StartPlain(echo.handler());
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  std::string batch;
  for (int i = 0; i < 50; ++i) {
    batch += "POST /p" + std::to_string(i) + " HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx";
  }
  ASSERT_TRUE(socket.Write(batch));
  std::string out;
  ASSERT_TRUE(socket.ReadUntil(out, "POST /p49 x"));
  size_t at = 0;
  for (int i = 0; i < 50; ++i) {
    const size_t next = out.find("POST /p" + std::to_string(i) + " x", at);
    ASSERT_NE(next, std::string::npos) << i;
    at = next;
  }
  EXPECT_EQ(Count(out, "HTTP/1.1 200 OK"), 50u);
}

TEST(Server, HeadAnswersTheLengthWithoutTheBody) {
  auto server = StartPlain([](const Request&) { return Response(200, "text/plain", "12345"); });
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Write("HEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"));
  std::string out;
  ASSERT_TRUE(socket.ReadUntil(out, "12345"));
  // Two heads with Content-Length 5; one body, after the second head.
  EXPECT_EQ(Count(out, "Content-Length: 5\r\n"), 2u);
  EXPECT_EQ(Count(out, "12345"), 1u);
  EXPECT_GT(out.find("12345"), out.rfind("HTTP/1.1 200 OK"));
}

// The client keeps sending a body far above the limit and watches for the
// answer: it must come (413, rendered) long before the body could be read,
// and nothing of it reaches the handler.
void ExpectRefusedWhileSending(const std::string& head, bool chunked) {
  Echo echo;
  ServerOptions options;
  options.max_body_bytes = 64 * 1024;
  options.render_error = [](const ProtocolError& e) {
    return Response(e.status, "application/json",
                    "{\"reason\":\"" + e.reason + "\",\"message\":\"" + e.message + "\"}");
  };
  auto server = StartPlain(echo.handler(), options);
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Write(head));
  const std::string piece(64 * 1024, 'x');
  std::string chunk = piece;
  if (chunked) chunk = "10000\r\n" + piece + "\r\n";
  size_t sent = 0;
  std::string out;
  const auto started = std::chrono::steady_clock::now();
  while (out.find("\r\n\r\n") == std::string::npos &&
         std::chrono::steady_clock::now() - started < 10s) {
    if (socket.WaitReadable(0ms)) {
      if (!socket.ReadSome(out, 100ms)) break;
      continue;
    }
    if (!socket.Write(chunk)) break;  // the server may have closed already
    sent += chunk.size();
  }
  socket.ReadUntil(out, "}", 5s);
  EXPECT_EQ(out.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0), 0u) << out.substr(0, 200);
  EXPECT_NE(out.find("\"reason\":\"RequestEntityTooLarge\""), std::string::npos) << out;
  EXPECT_NE(out.find("limit is 65536"), std::string::npos) << out;
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos);
  EXPECT_LT(sent, size_t{64} << 20) << "the refusal came only after " << sent << " bytes";
  EXPECT_EQ(echo.calls.load(), 0);
}

TEST(Server, ABodyAboveTheLimitIsRefusedFromItsLength) {
  ExpectRefusedWhileSending("PUT /big HTTP/1.1\r\nHost: h\r\nContent-Length: 209715200\r\n\r\n",
                            false);
}

TEST(Server, AChunkedBodyAboveTheLimitIsRefusedWhileItArrives) {
  ExpectRefusedWhileSending("PUT /big HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
                            true);
}

TEST(Server, MalformedRequestsAndHugeHeadersAreAnswered) {
  Echo echo;
  auto server = StartPlain(echo.handler());
  ASSERT_NE(server, nullptr);
  {
    RawSocket socket(server->port());
    ASSERT_TRUE(socket.Write("GARBAGE\r\n\r\n"));
    std::string out;
    ASSERT_TRUE(socket.ReadToEof(out));
    EXPECT_EQ(out.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << out;
    EXPECT_NE(out.find("malformed HTTP request"), std::string::npos) << out;
  }
  {
    RawSocket socket(server->port());
    ASSERT_TRUE(socket.Write("GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + std::string(20000, 'a') +
                             "\r\n\r\n"));
    std::string out;
    ASSERT_TRUE(socket.ReadToEof(out));
    EXPECT_EQ(out.rfind("HTTP/1.1 431 ", 0), 0u) << out.substr(0, 100);
  }
  EXPECT_EQ(echo.calls.load(), 0);
  // The server still answers.
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Write("GET /ok HTTP/1.1\r\nHost: h\r\n\r\n"));
  std::string out;
  EXPECT_TRUE(socket.ReadUntil(out, "GET /ok "));
}

TEST(Server, AnIdleConnectionIsClosedAfterTheReadTimeout) {
  Echo echo;
  ServerOptions options;
  options.read_timeout = 200ms;
  auto server = StartPlain(echo.handler(), options);
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  const auto started = std::chrono::steady_clock::now();
  std::string out;
  ASSERT_TRUE(socket.ReadToEof(out, 5s));
  EXPECT_TRUE(out.empty());
  EXPECT_GE(std::chrono::steady_clock::now() - started, 150ms);
}

TEST(Server, AHandlerThatThrowsGets500AndTheServerGoesOn) {
  auto server = StartPlain([](const Request& r) -> Response {
    if (r.target == "/throw") throw std::runtime_error("boom");
    return Response(200, "text/plain", "fine");
  });
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(
      socket.Write("GET /throw HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"));
  std::string out;
  ASSERT_TRUE(socket.ReadUntil(out, "fine"));
  EXPECT_EQ(out.rfind("HTTP/1.1 500 ", 0), 0u);
  EXPECT_NE(out.find("boom"), std::string::npos);
}

// A stream fed by the test: Push() queues a chunk and wakes the connection.
class TestStream : public StreamBody {
 public:
  explicit TestStream(std::chrono::microseconds quiet = {}) : quiet_(quiet) {}

  void Push(std::string chunk) {
    std::function<void()> wake;
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(chunk));
      wake = wake_;
    }
    if (wake) wake();
  }
  void Attach(std::function<void()> wake) override {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = std::move(wake);
    attached_ = true;
  }
  void Detach() override {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = nullptr;
    detached_ = true;
  }
  void Close() override {
    std::function<void()> wake;
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
      wake = wake_;
    }
    if (wake) wake();
  }
  Step Poll(std::string& out) override {
    std::lock_guard<std::mutex> lock(mu_);
    Step step;
    const bool wrote = !queue_.empty();
    while (!queue_.empty()) {
      out += queue_.front();
      queue_.pop_front();
    }
    step.done = closed_;
    if (wrote) step.quiet_for = quiet_;
    return step;
  }
  bool attached() {
    std::lock_guard<std::mutex> lock(mu_);
    return attached_;
  }
  bool detached() {
    std::lock_guard<std::mutex> lock(mu_);
    return detached_;
  }

 private:
  const std::chrono::microseconds quiet_;
  std::mutex mu_;
  std::deque<std::string> queue_;
  std::function<void()> wake_;
  bool closed_ = false;
  bool attached_ = false;
  bool detached_ = false;
};

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(Server, AStreamSendsChunksWhenWokenAndEndsWhenClosed) {
  auto stream = std::make_shared<TestStream>();
  auto server = StartPlain([stream](const Request&) {
    Response res(200, "application/json", "");
    res.stream = stream;
    return res;
  });
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Write("GET /watch HTTP/1.1\r\nHost: h\r\n\r\n"));
  std::string out;
  ASSERT_TRUE(socket.ReadUntil(out, "\r\n\r\n"));
  EXPECT_NE(out.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << out;
  ASSERT_TRUE(WaitFor([&] { return stream->attached(); }));
  stream->Push("first");
  ASSERT_TRUE(socket.ReadUntil(out, "5\r\nfirst\r\n"));
  stream->Push("second!");
  ASSERT_TRUE(socket.ReadUntil(out, "7\r\nsecond!\r\n"));
  server->CloseStreams();
  ASSERT_TRUE(socket.ReadToEof(out));
  EXPECT_NE(out.find("0\r\n\r\n"), std::string::npos);
  EXPECT_TRUE(WaitFor([&] { return stream->detached(); }));
}

TEST(Server, AStreamThatHasJustWrittenGathersWhatFollows) {
  auto stream = std::make_shared<TestStream>(std::chrono::milliseconds(2000));
  auto server = StartPlain([stream](const Request&) {
    Response res(200, "application/json", "");
    res.stream = stream;
    return res;
  });
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Write("GET /watch HTTP/1.1\r\nHost: h\r\n\r\n"));
  std::string out;
  ASSERT_TRUE(WaitFor([&] { return stream->attached(); }));
  stream->Push("a");
  ASSERT_TRUE(socket.ReadUntil(out, "1\r\na\r\n"));
  // Within the quiet time: both go out in one chunk.
  stream->Push("b");
  stream->Push("c");
  ASSERT_TRUE(socket.ReadUntil(out, "2\r\nbc\r\n")) << out;
}

TEST(Server, StopEndsOpenStreamsAndConnections) {
  auto stream = std::make_shared<TestStream>();
  auto server = StartPlain([stream](const Request&) {
    Response res(200, "application/json", "");
    res.stream = stream;
    return res;
  });
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Write("GET /watch HTTP/1.1\r\nHost: h\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return stream->attached(); }));
  const auto started = std::chrono::steady_clock::now();
  server->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_TRUE(stream->detached());
  std::string out;
  EXPECT_TRUE(socket.ReadToEof(out, 5s));
  // A wake-up after Stop reaches nothing.
  stream->Push("late");
}

TEST(Server, StartRefusesBadAddressesAndMissingCertificates) {
  ServerOptions bad_address;
  bad_address.address = "not an address";
  bad_address.listeners = {{0, false}};
  auto refused = Server::Start(bad_address, [](const Request&) { return Response(); });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalid);
  EXPECT_NE(refused.error().message.find("bad listen address"), std::string::npos);

  ServerOptions no_cert;
  no_cert.listeners = {{0, true}};
  auto no_tls = Server::Start(no_cert, [](const Request&) { return Response(); });
  ASSERT_FALSE(no_tls.ok());
  EXPECT_EQ(no_tls.error().code, ErrorCode::kInvalid);

  auto first = StartPlain([](const Request&) { return Response(); });
  ASSERT_NE(first, nullptr);
  ServerOptions taken;
  taken.listeners = {{first->port(), false}};
  auto busy = Server::Start(taken, [](const Request&) { return Response(); });
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, ErrorCode::kUnavailable);
}

// --- TLS and client certificates --------------------------------------

struct Pki {
  Certificate ca;
  Certificate server;
  Certificate alice;    // issued by `ca`
  Certificate mallory;  // issued by another CA
};

Pki MakePki() {
  Pki pki;
  CertificateOptions ca;
  ca.common_name = "test-ca";
  pki.ca = NewCertificateAuthority(ca).value();
  pki.server = SelfSignedCertificate().value();
  CertificateOptions alice;
  alice.common_name = "alice";
  pki.alice = IssueCertificate(pki.ca, alice).value();
  Certificate other_ca = NewCertificateAuthority(ca).value();
  CertificateOptions mallory;
  mallory.common_name = "mallory";
  pki.mallory = IssueCertificate(other_ca, mallory).value();
  return pki;
}

std::unique_ptr<Server> StartTls(const Pki& pki, bool require) {
  ServerOptions options;
  options.listeners = {{0, true}};
  options.tls.cert_pem = pki.server.cert_pem;
  options.tls.key_pem = pki.server.key_pem;
  options.tls.client_ca_pem = pki.ca.cert_pem;
  options.tls.require_client_certificate = require;
  auto server = Server::Start(options, [](const Request& r) {
    return Response(
        200, "text/plain",
        std::string(r.tls ? "tls " : "plain ") + "cn=" + std::string(r.client_common_name));
  });
  EXPECT_TRUE(server.ok()) << server.error().ToString();
  return server.ok() ? std::move(server).value() : nullptr;
}

Result<ClientResponse> Get(Io& io, const Pki& pki, uint16_t port, const Certificate* client) {
  ClientOptions options;
  options.server = "https://127.0.0.1:" + std::to_string(port);
  options.ca_pem = pki.server.cert_pem;
  if (client != nullptr) {
    options.client_cert_pem = client->cert_pem;
    options.client_key_pem = client->key_pem;
  }
  auto http = HttpClient::Create(options, io.executor());
  if (!http.ok()) return std::move(http).error();
  ClientRequest request;
  request.target = "/";
  request.timeout = 10s;
  request.deadline = std::chrono::steady_clock::now() + request.timeout;
  return io.Run((*http)->Send(std::move(request)));
}

TEST(ServerTls, RequiredClientCertificatesAreVerifiedAgainstTheCa) {
  const Pki pki = MakePki();
  auto server = StartTls(pki, /*require=*/true);
  ASSERT_NE(server, nullptr);
  Io io;
  auto alice = Get(io, pki, server->port(), &pki.alice);
  ASSERT_TRUE(alice.ok()) << alice.error().ToString();
  EXPECT_EQ(alice->body, "tls cn=alice");
  auto none = Get(io, pki, server->port(), nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(none.error().code == ErrorCode::kTls || none.error().code == ErrorCode::kUnavailable)
      << none.error().ToString();
  auto mallory = Get(io, pki, server->port(), &pki.mallory);
  ASSERT_FALSE(mallory.ok());
  EXPECT_TRUE(mallory.error().code == ErrorCode::kTls ||
              mallory.error().code == ErrorCode::kUnavailable)
      << mallory.error().ToString();
}

TEST(ServerTls, OptionalClientCertificatesAreVerifiedWhenPresented) {
  const Pki pki = MakePki();
  auto server = StartTls(pki, /*require=*/false);
  ASSERT_NE(server, nullptr);
  Io io;
  auto none = Get(io, pki, server->port(), nullptr);
  ASSERT_TRUE(none.ok()) << none.error().ToString();
  EXPECT_EQ(none->body, "tls cn=");
  auto alice = Get(io, pki, server->port(), &pki.alice);
  ASSERT_TRUE(alice.ok()) << alice.error().ToString();
  EXPECT_EQ(alice->body, "tls cn=alice");
  EXPECT_FALSE(Get(io, pki, server->port(), &pki.mallory).ok());
}

// Asked for but not verified (a handler that verifies against CAs of its
// own): any certificate, or none, passes the handshake, and the handler sees
// the chain as presented; nothing counts as verified.
TEST(ServerTls, RequestedClientCertificatesArePassedOnUnverified) {
  const Pki pki = MakePki();
  ServerOptions options;
  options.listeners = {{0, true}};
  options.tls.cert_pem = pki.server.cert_pem;
  options.tls.key_pem = pki.server.key_pem;
  options.tls.request_client_certificate = true;
  auto server = Server::Start(options, [](const Request& r) {
    return Response(200, "text/plain",
                    std::string(r.client_certificate ? "verified " : "unverified ") +
                        std::string(r.client_certificate_chain));
  });
  ASSERT_TRUE(server.ok()) << server.error().ToString();
  Io io;
  auto none = Get(io, pki, (*server)->port(), nullptr);
  ASSERT_TRUE(none.ok()) << none.error().ToString();
  EXPECT_EQ(none->body, "unverified ");
  for (const Certificate* client : {&pki.alice, &pki.mallory}) {
    auto r = Get(io, pki, (*server)->port(), client);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(r->body, "unverified " + client->cert_pem);
  }
}

TEST(ServerTls, AClientThatDoesNotTrustTheServerSaysWhy) {
  const Pki pki = MakePki();
  auto server = StartTls(pki, /*require=*/false);
  ASSERT_NE(server, nullptr);
  Io io;
  Pki impostor = pki;
  impostor.server = SelfSignedCertificate().value();  // the CA data the client trusts
  auto refused = Get(io, impostor, server->port(), nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kTls);
  EXPECT_NE(refused.error().message.find("certificate verify failed"), std::string::npos)
      << refused.error().message;
}

}  // namespace
}  // namespace copse::net
