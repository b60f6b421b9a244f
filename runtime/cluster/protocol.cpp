#include "runtime/cluster/protocol.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <fstream>

namespace wsemu::cluster {

std::string encode_frame(const pb::Envelope& envelope, size_t max_frame_bytes) {
  const size_t size = envelope.ByteSizeLong();
  if (size == 0 || size > max_frame_bytes) {
    throw ProtocolError(fmt::format("message of {} bytes does not fit a frame (limit {} bytes)",
                                    size, max_frame_bytes));
  }
  std::string frame(kFrameHeaderBytes + size, '\0');
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) {
    frame[i] = static_cast<char>((size >> (8 * i)) & 0xFF);
  }
  if (!envelope.SerializeToArray(frame.data() + kFrameHeaderBytes, static_cast<int>(size))) {
    throw ProtocolError("could not serialize a message");
  }
  return frame;
}

uint32_t decode_frame_length(const unsigned char* header) {
  return static_cast<uint32_t>(header[0]) | (static_cast<uint32_t>(header[1]) << 8) |
         (static_cast<uint32_t>(header[2]) << 16) | (static_cast<uint32_t>(header[3]) << 24);
}

std::optional<std::string> check_frame_length(uint64_t length, size_t max_frame_bytes) {
  if (length == 0) return std::string("empty frame");
  if (length > max_frame_bytes) {
    return fmt::format("frame length {} exceeds the limit of {} bytes", length, max_frame_bytes);
  }
  return std::nullopt;
}

ProtocolError unexpected_message(const pb::Envelope& envelope, std::string_view node, std::string_view sender) {
  if (envelope.body_case() == pb::Envelope::kHello) return ProtocolError("a second Hello");
  return ProtocolError(fmt::format("{} does not accept message #{}{}{}", node, static_cast<int>(envelope.body_case()),
                                   sender.empty() ? "" : " from ", sender));
}

pb::Envelope parse_envelope(const char* data, size_t size) {
  pb::Envelope envelope;
  if (!envelope.ParseFromArray(data, static_cast<int>(size))) {
    throw ProtocolError(fmt::format("malformed frame of {} bytes", size));
  }
  if (envelope.body_case() == pb::Envelope::BODY_NOT_SET) {
    throw ProtocolError("frame carries no known message");
  }
  return envelope;
}

static std::string strip(std::string text) {
  size_t begin = 0;
  while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  size_t end = text.size();
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

static std::string checked_token(std::string token, const std::string& where) {
  if (token.size() < kMinTokenBytes) {
    throw ConfigError(fmt::format(
        "the token {} is {} bytes; a cluster token needs at least {} (make one with "
        "`head -c 16 /dev/urandom | xxd -p > cluster.token && chmod 600 cluster.token`)",
        where, token.size(), kMinTokenBytes));
  }
  return token;
}

std::string load_token(const std::string& token_file) {
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in) throw ConfigError(fmt::format("cannot read the token file '{}'", token_file));
    struct stat info {};
    if (::stat(token_file.c_str(), &info) == 0 && (info.st_mode & 077) != 0) {
      throw ConfigError(fmt::format(
          "the token file '{}' can be read by group or others (mode {:03o}); make it private: "
          "chmod 600 '{}'",
          token_file, info.st_mode & 0777, token_file));
    }
    std::string line;
    std::getline(in, line);
    std::string token = strip(line);
    if (token.empty()) {
      throw ConfigError(
          fmt::format("the token file '{}' is empty (its first line is the token)", token_file));
    }
    return checked_token(std::move(token), fmt::format("in '{}'", token_file));
  }
  if (const char* env = std::getenv("WSEMU_TOKEN")) {
    std::string token = strip(env);
    if (!token.empty()) return checked_token(std::move(token), "in $WSEMU_TOKEN");
  }
  throw ConfigError(
      "no shared token: pass --token-file FILE (first line = the token) or set WSEMU_TOKEN; "
      "every node and client of a cluster must use the same token");
}

bool tokens_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

std::string Address::to_string() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

static uint16_t parse_port(std::string_view text, std::string_view whole) {
  if (text.empty() || text.size() > 5) {
    throw ConfigError(fmt::format("bad address '{}': expected HOST:PORT", whole));
  }
  uint32_t port = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      throw ConfigError(fmt::format("bad port in address '{}'", whole));
    }
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port > 65535) throw ConfigError(fmt::format("port out of range in address '{}'", whole));
  return static_cast<uint16_t>(port);
}

Address parse_address(std::string_view text) {
  Address address;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw ConfigError(fmt::format("bad address '{}': expected [IPV6]:PORT", text));
    }
    address.host = std::string(text.substr(1, close - 1));
    address.port = parse_port(text.substr(close + 2), text);
    return address;
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    address.host = "127.0.0.1";
    address.port = parse_port(text, text);
    return address;
  }
  address.host = std::string(text.substr(0, colon));
  if (address.host.empty()) address.host = "127.0.0.1";
  address.port = parse_port(text.substr(colon + 1), text);
  return address;
}

uint64_t parse_byte_size(std::string_view text) {
  if (text.empty()) throw ConfigError("empty byte size");
  uint64_t multiplier = 1;
  char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (last == 'B' && text.size() > 1) {
    text.remove_suffix(1);
    last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  }
  if (last == 'K' || last == 'M' || last == 'G' || last == 'T') {
    multiplier = last == 'K'   ? 1ull << 10
                 : last == 'M' ? 1ull << 20
                 : last == 'G' ? 1ull << 30
                               : 1ull << 40;
    text.remove_suffix(1);
  }
  if (text.empty()) throw ConfigError("byte size without a number");
  uint64_t value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      throw ConfigError(fmt::format("bad byte size '{}' (examples: 4096, 64K, 512M, 2G)", text));
    }
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value * multiplier;
}

std::string enum_word(const std::string& value_name, std::string_view zero_prefix) {
  if (value_name.empty()) return "unknown";
  std::string word = value_name.starts_with(zero_prefix) ? value_name.substr(zero_prefix.size()) : value_name;
  for (char& c : word) c = char(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

std::string role_name(pb::Role role) { return enum_word(pb::Role_Name(role), "ROLE_"); }

}  // namespace wsemu::cluster
