#include "runtime/cluster/tls.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "runtime/cluster/protocol.hpp"

namespace wsemu::cluster {

namespace ssl = boost::asio::ssl;

namespace {

void require_file(const std::string& flag, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw ConfigError(fmt::format("{} {}: no such file", flag, path));
}

// Runs one context call, turning OpenSSL's error into one line about the flag and its file.
template <class Call>
void load(const std::string& flag, const std::string& path, Call call) {
  require_file(flag, path);
  boost::system::error_code ec;
  call(ec);
  if (ec) throw ConfigError(fmt::format("{} {}: {}", flag, path, ec.message()));
}

std::shared_ptr<ssl::context> base_context(ssl::context::method method) {
  auto context = std::make_shared<ssl::context>(method);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  return context;
}

}  // namespace

std::shared_ptr<ssl::context> server_tls_context(const TlsFiles& files) {
  if (files.cert.empty()) {
    if (!files.key.empty()) throw ConfigError("--tls-key needs --tls-cert (the certificate the key belongs to)");
    return nullptr;
  }
  if (files.key.empty()) throw ConfigError("--tls-cert needs --tls-key (its private key)");
  auto context = base_context(ssl::context::tls_server);
  load("--tls-cert", files.cert, [&](auto& ec) { context->use_certificate_chain_file(files.cert, ec); });
  require_file("--tls-key", files.key);
  boost::system::error_code ec;
  context->use_private_key_file(files.key, ssl::context::pem, ec);
  if (ec || SSL_CTX_check_private_key(context->native_handle()) != 1)
    throw ConfigError(fmt::format("--tls-key {}: {} (it must be the private key of --tls-cert {})", files.key,
                                  ec ? ec.message() : "the key does not match", files.cert));
  return context;
}

std::shared_ptr<ssl::context> client_tls_context(const TlsFiles& files) {
  if (files.ca.empty()) return nullptr;
  auto context = base_context(ssl::context::tls_client);
  load("--tls-ca", files.ca, [&](auto& ec) { context->load_verify_file(files.ca, ec); });
  context->set_verify_mode(ssl::verify_peer);
  return context;
}

}  // namespace wsemu::cluster
