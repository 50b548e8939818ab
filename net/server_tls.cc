// TLS connections of net::Server: the handshake, the client certificate, and
// the connection coroutine instantiated for a TLS stream (kept out of
// server.cc, which instantiates it for plain TCP, to halve the slowest
// translation unit of the build).

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "net/server_connection.h"

namespace copse::net {

namespace {

constexpr auto kTlsShutdownTimeout = std::chrono::seconds(5);

// A certificate the client presented and OpenSSL verified (with a client CA,
// OpenSSL has already failed the handshake for one that does not verify).
bool PeerVerified(SSL* ssl) {
  return SSL_get0_peer_certificate(ssl) != nullptr && SSL_get_verify_result(ssl) == X509_V_OK;
}

std::string PeerCommonName(SSL* ssl) {
  if (!PeerVerified(ssl)) return {};
  X509* cert = SSL_get0_peer_certificate(ssl);
  X509_NAME* name = X509_get_subject_name(cert);
  const int index = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (index < 0) return {};
  ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  unsigned char* utf8 = nullptr;
  const int len = ASN1_STRING_to_UTF8(&utf8, data);
  if (len < 0) return {};
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
  OPENSSL_free(utf8);
  return out;
}

// The certificates the client presented, its own first (a server's
// SSL_get_peer_cert_chain leaves the peer's own out).
std::string PeerChainPem(SSL* ssl) {
  X509* leaf = SSL_get0_peer_certificate(ssl);
  if (leaf == nullptr) return {};
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return {};
  bool ok = PEM_write_bio_X509(bio, leaf) == 1;
  if (STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl)) {
    for (int i = 0; ok && i < sk_X509_num(chain); ++i) {
      X509* cert = sk_X509_value(chain, i);
      if (X509_cmp(cert, leaf) != 0) ok = PEM_write_bio_X509(bio, cert) == 1;
    }
  }
  std::string out;
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  if (ok && len > 0) out.assign(data, static_cast<size_t>(len));
  BIO_free(bio);
  ERR_clear_error();
  return out;
}

}  // namespace

asio::awaitable<void> Server::Impl::ServeTls(tcp::socket socket) {
  const std::shared_ptr<ssl::context> ctx = Context();  // held for the connection's life
  beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *ctx);
  beast::get_lowest_layer(stream).expires_after(options.handshake_timeout);
  auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, kTuple);
  if (ec) co_return;
  beast::get_lowest_layer(stream).expires_never();
  PeerCertificate peer;
  peer.verified = !options.tls.client_ca_pem.empty() && PeerVerified(stream.native_handle());
  if (peer.verified) peer.common_name = PeerCommonName(stream.native_handle());
  if (options.tls.client_ca_pem.empty() && options.tls.request_client_certificate) {
    peer.chain_pem = PeerChainPem(stream.native_handle());
  }
  co_await Serve(stream, true, peer);
  beast::get_lowest_layer(stream).expires_after(kTlsShutdownTimeout);
  co_await stream.async_shutdown(kTuple);
}

}  // namespace copse::net
