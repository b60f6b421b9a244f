// Reading and writing objects (.wso): ObjectImage <-> the protobuf message wsemu.isa.pb.Object
// (isa/object.proto) <-> bytes.
//
// Contract: serialize_object() output always parses back to an equal ObjectImage.
// parse_object() and from_proto() check everything a consumer relies on (magic, version,
// completeness, field ranges, consistent sizes) and throw FormatError with a message that names
// the input (`what`: usually the file name) and the problem; they never return a half-valid
// image and never crash on hostile bytes. to_proto() / from_proto() are for formats that embed
// an object (the executable). Nothing here knows about assembly text.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "isa/object.hpp"

namespace wsemu::isa {

namespace pb {
class Object;
}

class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr std::string_view kObjectMagic = "wsemu-object";

std::string serialize_object(const ObjectImage& object);
ObjectImage parse_object(std::string_view bytes, std::string_view what);

void to_proto(const ObjectImage& object, pb::Object& out);
ObjectImage from_proto(const pb::Object& in, std::string_view what);  // checks magic and version

// Whole files; errors (including I/O) as FormatError naming the path.
ObjectImage read_object_file(const std::string& path);
void write_object_file(const std::string& path, const ObjectImage& object);

}  // namespace wsemu::isa
