// The challenge-response handshake every cluster connection starts with (protocol version 2),
// and the HMAC-SHA256 it is built from (OpenSSL's libcrypto).
//
// Contract: the token never travels. The accepting node sends HelloChallenge{nonce} first; the
// connecting side answers Hello{..., client_nonce, proof = hello_proof(...)}, which the acceptor
// checks in constant time; an accepted HelloReply carries accept_proof(...), which the
// connecting side checks, so each side knows the other holds the token. Both proofs cover both
// nonces (fresh random 32 bytes per connection), so a recorded handshake proves nothing on a
// new connection, and the Hello's role, rank and name, so they cannot be swapped. Every field
// is length-prefixed in the MAC input, so no two field lists give the same bytes. Nothing here
// touches sockets except through Connection::send.
#pragma once

#include <string>
#include <string_view>

#include "runtime/cluster/connection.hpp"
#include "runtime/cluster/protocol.hpp"

namespace wsemu::cluster {

inline constexpr size_t kNonceBytes = 32;

// kNonceBytes from the operating system's random source. Throws std::runtime_error if it fails.
std::string random_nonce();

// HMAC-SHA256(key, message): 32 bytes.
std::string hmac_sha256(std::string_view key, std::string_view message);

// What the connecting side proves with its Hello (whose proof field is ignored).
std::string hello_proof(std::string_view token, std::string_view server_nonce,
                        const pb::Hello& hello);
// What an accepting node proves with its HelloReply.
std::string accept_proof(std::string_view token, std::string_view server_nonce,
                         std::string_view client_nonce);

// The accepting side: draws the connection's nonce and sends HelloChallenge (right after
// Connection::start).
void send_challenge(Connection& connection);
// Why `hello` (the first frame's body) is refused on `connection`, or empty when its version
// and proof are right. On success fills `reply`'s proof.
std::string check_hello(const Connection& connection, const pb::Hello& hello,
                        std::string_view token, pb::HelloReply& reply);

}  // namespace wsemu::cluster
