// The cluster wire protocol's fixed parts: version, frame layout and limits, the shared token,
// addresses. Messages themselves are in cluster.proto (generated: runtime/cluster/cluster.pb.h).
//
// Contract: a frame is a 4-byte little-endian payload length followed by one serialized
// pb::Envelope. encode_frame() never produces a frame over max_frame_bytes (it throws
// ProtocolError instead); check_frame_length() is the one place lengths are judged, before any
// allocation. load_token() fails with a clear message rather than ever running without a token.
// Nothing here touches sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "runtime/cluster/cluster.pb.h"

namespace wsemu::cluster {

// pb:: is the generated namespace wsemu::cluster::pb (no alias: clang rejects one that names
// the namespace it is declared beside).

inline constexpr uint32_t kProtocolVersion = 2;  // 2: challenge-response handshake
inline constexpr size_t kFrameHeaderBytes = 4;
inline constexpr size_t kDefaultMaxFrameBytes = 64u << 20;
// Until a peer has passed the handshake it may send only small frames, so an unauthenticated
// connection can never make a node allocate much.
inline constexpr size_t kHandshakeMaxFrameBytes = 64u << 10;
inline constexpr uint32_t kDefaultChunkElements = 16384;
inline constexpr size_t kMinTokenBytes = 16;

// A peer broke the protocol (bad frame, bad field, unexpected message). The connection that
// caused it is closed; the node keeps running.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A configuration or start-up error the operator can fix (bad flag, missing token, bad store).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The serialized frame (header + payload) of an envelope.
std::string encode_frame(const pb::Envelope& envelope,
                         size_t max_frame_bytes = kDefaultMaxFrameBytes);

uint32_t decode_frame_length(const unsigned char* header);

// Empty when a payload of `length` bytes is acceptable, else why not.
std::optional<std::string> check_frame_length(uint64_t length, size_t max_frame_bytes);

// Parses one payload; throws ProtocolError on malformed bytes or an envelope with no body.
pb::Envelope parse_envelope(const char* data, size_t size);

// The error for an authenticated peer's frame that `node` does not take (from `sender`, when the
// node takes different messages from different peers): a second Hello, or an unexpected body.
ProtocolError unexpected_message(const pb::Envelope& envelope, std::string_view node,
                                 std::string_view sender = "");

// The shared token: the first line of token_file when given, else $WSEMU_TOKEN; surrounding
// whitespace is stripped. Throws ConfigError when neither gives a token, when the token is
// shorter than kMinTokenBytes, or when the file can be read by group or others.
std::string load_token(const std::string& token_file);

// Constant-time comparison, so a refused peer learns nothing from the timing.
bool tokens_equal(std::string_view a, std::string_view b);

struct Address {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const;
};

// "HOST:PORT" or "PORT" (host 127.0.0.1); "[::1]:PORT" for IPv6. Throws ConfigError.
Address parse_address(std::string_view text);

// "4096", "64K", "512M", "2G" (binary units). Throws ConfigError.
uint64_t parse_byte_size(std::string_view text);

// An enum value's word in logs and messages: its protobuf name in lower case, less the prefix of
// the enum's zero value (MEMORYX -> "memoryx", ROLE_UNSPECIFIED -> "unspecified" with prefix
// "ROLE_"); "unknown" for a number the enum does not name (a newer or broken peer's).
std::string enum_word(const std::string& value_name, std::string_view zero_prefix);

std::string role_name(pb::Role role);

}  // namespace wsemu::cluster
