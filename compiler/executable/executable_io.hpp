// Saving and loading .wsx executables.
//
// File layout (all integers little-endian):
//   bytes 0..7    magic "WSEMUEXE"
//   bytes 8..11   format version (kExecutableFormatVersion)
//   bytes 12..19  payload length in bytes
//   bytes 20..23  CRC-32 (IEEE, as zlib computes it) of the payload
//   bytes 24..    payload: a wsemu.compiler.pb.Executable protobuf message (executable.proto),
//                 which embeds each program as a wsemu.isa.pb.Object (isa/object.proto)
// Contract: load_executable() accepts only what save_executable() writes for the same format
// version; anything else (another magic, another version, a truncated or extended file, a bad
// checksum, an undecodable payload, indices that do not hang together) is an ExecutableError
// that names the file and what is wrong. A loaded executable passes validate().
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "compiler/executable/executable.hpp"

namespace wsemu::compiler {

class ExecutableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string serialize_executable(const Executable& exe);
// `name` is used in error messages.
Executable parse_executable(std::string_view bytes, std::string_view name = "<memory>");

void save_executable(const Executable& exe, const std::string& path);
Executable load_executable(const std::string& path);

}  // namespace wsemu::compiler
