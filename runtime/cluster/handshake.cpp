#include "runtime/cluster/handshake.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <fmt/format.h>

#include <stdexcept>

namespace wsemu::cluster {

std::string random_nonce() {
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) !=
      1) {
    throw std::runtime_error("cannot draw a random handshake nonce (OpenSSL RAND_bytes failed)");
  }
  return nonce;
}

std::string hmac_sha256(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &length)) {
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
  }
  return std::string(reinterpret_cast<const char*>(out), length);
}

namespace {

void put_field(std::string& out, std::string_view field) {
  const uint64_t n = field.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  out.append(field);
}

}  // namespace

std::string hello_proof(std::string_view token, std::string_view server_nonce,
                        const pb::Hello& hello) {
  std::string message;
  put_field(message, "wsemu-cluster-hello-v2");
  put_field(message, server_nonce);
  put_field(message, hello.client_nonce());
  put_field(message, std::to_string(hello.protocol_version()));
  put_field(message, std::to_string(static_cast<int>(hello.role())));
  put_field(message, std::to_string(hello.rank()));
  put_field(message, hello.name());
  return hmac_sha256(token, message);
}

std::string accept_proof(std::string_view token, std::string_view server_nonce,
                         std::string_view client_nonce) {
  std::string message;
  put_field(message, "wsemu-cluster-accept-v2");
  put_field(message, server_nonce);
  put_field(message, client_nonce);
  return hmac_sha256(token, message);
}

void send_challenge(Connection& connection) {
  connection.set_nonces(random_nonce(), "");
  pb::Envelope envelope;
  auto& challenge = *envelope.mutable_hello_challenge();
  challenge.set_protocol_version(kProtocolVersion);
  challenge.set_nonce(connection.server_nonce());
  connection.send(envelope);
}

std::string check_hello(const Connection& connection, const pb::Hello& hello,
                        std::string_view token, pb::HelloReply& reply) {
  if (hello.protocol_version() != kProtocolVersion) {
    return fmt::format("protocol version {} is not supported (this node speaks {})",
                       hello.protocol_version(), kProtocolVersion);
  }
  // A Hello proven over another connection's nonce (a recorded one) fails here like a wrong
  // token: the proof covers this connection's challenge.
  if (hello.client_nonce().size() != kNonceBytes ||
      !tokens_equal(hello.proof(), hello_proof(token, connection.server_nonce(), hello))) {
    return "wrong token (or a replayed handshake)";
  }
  reply.set_proof(accept_proof(token, connection.server_nonce(), hello.client_nonce()));
  return "";
}

}  // namespace wsemu::cluster
