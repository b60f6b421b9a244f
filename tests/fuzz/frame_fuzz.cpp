// libFuzzer target for the cluster's wire frames (tools/fuzz.sh runs it).
//
// The input is what a peer sends: a 4-byte length, then the payload. The target judges the
// length as a node does (check_frame_length, against the handshake limit and the default one),
// parses the Envelope, and decodes any Chunk it carries with the node's element limit. Every
// input must be accepted or refused with ProtocolError, never crash, trip a sanitizer, or make
// decode_chunk allocate more than a frame can carry (a broken promise aborts).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "runtime/cluster/protocol.hpp"
#include "runtime/cluster/tensor_codec.hpp"

namespace {

void decode(const wsemu::cluster::pb::Chunk& chunk, size_t frame_bytes) {
  using namespace wsemu::cluster;
  const uint64_t limit = kDefaultMaxFrameBytes / 4;
  const std::vector<float> values = decode_chunk(chunk, limit);
  if (values.size() > limit || values.size() > frame_bytes * 8 + 16384) {
    // A dense chunk holds its values; a bitmap 8 per byte; only an index chunk may name more
    // elements than its bytes, and count is capped for it.
    if (chunk.layout() != pb::SPARSE_INDICES || values.size() > limit) {
      std::fprintf(stderr, "frame_fuzz: a %zu-byte frame decoded to %zu elements\n", frame_bytes,
                   values.size());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wsemu::cluster;
  if (size < kFrameHeaderBytes) return 0;
  const uint32_t length = decode_frame_length(data);
  if (check_frame_length(length, kDefaultMaxFrameBytes)) return 0;
  (void)check_frame_length(length, kHandshakeMaxFrameBytes);
  if (length != size - kFrameHeaderBytes) return 0;  // the node waits for the rest, or the next frame
  try {
    pb::Envelope envelope =
        parse_envelope(reinterpret_cast<const char*>(data) + kFrameHeaderBytes, length);
    if (envelope.has_gradient_data()) decode(envelope.gradient_data().chunk(), size);
    if (envelope.has_weight_data()) decode(envelope.weight_data().chunk(), size);
    (void)encode_frame(envelope);
  } catch (const ProtocolError&) {
  }
  return 0;
}
