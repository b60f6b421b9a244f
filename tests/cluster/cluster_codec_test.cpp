// The wire format's pieces: fp16/bf16 conversion (hand-checked bit patterns), dense and sparse
// chunk layouts, sparsity rules, decode validation, frame limits, tokens and addresses.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "runtime/cluster/handshake.hpp"
#include "runtime/cluster/optimizer.hpp"
#include "runtime/cluster/tensor_codec.hpp"

namespace wsemu::cluster {
namespace {

TEST(ClusterCodec, Fp16KnownValues) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);               // largest finite
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);               // rounds up to infinity
  EXPECT_EQ(float_to_fp16(0.1f), 0x2E66);                   // 0.0999755859375
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 2^-24: even (0)
  EXPECT_EQ(float_to_fp16(std::ldexp(3.0f, -26)), 0x0001);  // 0.75 * 2^-24 rounds up
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie: even
  EXPECT_EQ(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie: even (up)
  EXPECT_EQ(float_to_fp16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(std::nanf("")))));
  EXPECT_EQ(fp16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_float(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(fp16_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  for (uint32_t bits = 0; bits < 0x7C00;
       ++bits) {  // every finite positive half survives a round trip
    ASSERT_EQ(float_to_fp16(fp16_to_float(static_cast<uint16_t>(bits))), bits);
  }
}

TEST(ClusterCodec, Bf16KnownValues) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie: even (down)
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie: even (up)
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_EQ(bf16_to_float(0xC040), -3.0f);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
}

std::vector<float> round_trip(const std::vector<float>& values, const std::vector<uint8_t>& keep,
                              pb::DType dtype, pb::Layout* layout = nullptr) {
  pb::Chunk chunk;
  chunk.set_offset(10);
  chunk.set_tensor_elements(10 + values.size());
  encode_chunk_values(values, keep, dtype, chunk);
  if (layout) *layout = chunk.layout();
  return decode_chunk(chunk);
}

TEST(ClusterCodec, LayoutsRoundTripAndPickTheCheapest) {
  std::vector<float> values(64);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 3.0f;
  pb::Layout layout;
  EXPECT_EQ(round_trip(values, {}, pb::FP32, &layout), values);
  EXPECT_EQ(layout, pb::DENSE);
  std::vector<uint8_t> keep(64, 0);
  keep[3] = keep[40] = 1;  // 2 of 64: indices (2*8 bytes) beat a bitmap (8 + 2*4 bytes)
  std::vector<float> expected(64, 0.0f);
  expected[3] = values[3];
  expected[40] = values[40];
  EXPECT_EQ(round_trip(values, keep, pb::FP32, &layout), expected);
  EXPECT_EQ(layout, pb::SPARSE_INDICES);
  for (size_t i = 0; i < 64; i += 2) keep[i] = 1;  // half: a bitmap is cheaper
  for (size_t i = 0; i < 64; ++i) expected[i] = keep[i] ? values[i] : 0.0f;
  EXPECT_EQ(round_trip(values, keep, pb::FP32, &layout), expected);
  EXPECT_EQ(layout, pb::SPARSE_BITMAP);
  const auto half = round_trip(values, {}, pb::FP16);
  const auto brain = round_trip(values, {}, pb::BF16);
  for (size_t i = 0; i < 64; ++i) {  // multiples of 0.5 below 32 are exact in both
    EXPECT_EQ(half[i], values[i]);
    EXPECT_EQ(brain[i], values[i]);
  }
}

TEST(ClusterCodec, SparsityRules) {
  const std::vector<float> tensor{0.0f, -0.5f, 0.25f, -0.0f, 1e-9f, 0.5f, 2.0f};
  pb::Sparsity zeros;
  zeros.set_mode(pb::Sparsity::THRESHOLD);
  EXPECT_EQ(sparsity_keep_mask(tensor, zeros), (std::vector<uint8_t>{0, 1, 1, 0, 1, 1, 1}));
  pb::Sparsity small;
  small.set_mode(pb::Sparsity::THRESHOLD);
  small.set_threshold(0.25f);
  EXPECT_EQ(sparsity_keep_mask(tensor, small), (std::vector<uint8_t>{0, 1, 0, 0, 0, 1, 1}));
  pb::Sparsity top;
  top.set_mode(pb::Sparsity::TOP_K);
  top.set_keep_fraction(0.4f);  // ceil(2.8) = 3: 2.0 and the tie -0.5/0.5 broken by the lower index
  EXPECT_EQ(sparsity_keep_mask(tensor, top), (std::vector<uint8_t>{0, 1, 0, 0, 0, 1, 1}));
  top.set_keep_fraction(0.2f);  // ceil(1.4) = 2: 2.0, then -0.5 (index 1) before 0.5 (index 5)
  EXPECT_EQ(sparsity_keep_mask(tensor, top), (std::vector<uint8_t>{0, 1, 0, 0, 0, 0, 1}));
  EXPECT_TRUE(sparsity_keep_mask(tensor, pb::Sparsity()).empty());
}

TEST(ClusterCodec, DecodeRejectsInconsistentChunks) {
  pb::Chunk chunk;
  chunk.set_tensor_elements(8);
  chunk.set_offset(4);
  std::vector<float> values(4, 1.0f);
  encode_chunk_values(values, {}, pb::FP32, chunk);
  EXPECT_NO_THROW(decode_chunk(chunk));
  pb::Chunk outside = chunk;
  outside.set_offset(5);
  EXPECT_THROW(decode_chunk(outside), ProtocolError);
  pb::Chunk short_values = chunk;
  short_values.mutable_values()->resize(12);
  EXPECT_THROW(decode_chunk(short_values), ProtocolError);
  pb::Chunk unordered = chunk;
  unordered.set_layout(pb::SPARSE_INDICES);
  unordered.set_values(std::string(8, '\0'));
  unordered.set_index_u32(std::string("\x02\0\0\0\x01\0\0\0", 8));
  EXPECT_THROW(decode_chunk(unordered), ProtocolError);
  pb::Chunk out_of_range = unordered;
  out_of_range.set_index_u32(std::string("\x01\0\0\0\x04\0\0\0", 8));
  EXPECT_THROW(decode_chunk(out_of_range), ProtocolError);
  pb::Chunk bitmap = chunk;
  bitmap.set_layout(pb::SPARSE_BITMAP);
  bitmap.set_bitmap(std::string(1, '\x07'));  // marks 3 elements, carries 4
  EXPECT_THROW(decode_chunk(bitmap), ProtocolError);
  pb::Chunk dtype = chunk;
  dtype.set_dtype(static_cast<pb::DType>(9));
  EXPECT_THROW(decode_chunk(dtype), ProtocolError);
}

TEST(ClusterCodec, FramesAndLimits) {
  pb::Envelope envelope;
  envelope.mutable_hello()->set_name("x");
  const std::string frame = encode_frame(envelope);
  ASSERT_GE(frame.size(), 4u);
  EXPECT_EQ(decode_frame_length(reinterpret_cast<const unsigned char*>(frame.data())),
            frame.size() - 4);
  EXPECT_EQ(parse_envelope(frame.data() + 4, frame.size() - 4).hello().name(), "x");
  EXPECT_FALSE(check_frame_length(100, 100).has_value());
  EXPECT_TRUE(check_frame_length(101, 100).has_value());
  EXPECT_TRUE(check_frame_length(0, 100).has_value());
  EXPECT_THROW(encode_frame(envelope, 2), ProtocolError);
  EXPECT_THROW(parse_envelope("\xff\xff\xff", 3), ProtocolError);
  EXPECT_THROW(parse_envelope("", 0), ProtocolError);  // no body
}

std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

// RFC 4231, test cases 1 and 2: the HMAC-SHA256 the handshake is built on.
TEST(ClusterHandshake, HmacSha256MatchesTheRfc4231Vectors) {
  EXPECT_EQ(hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(ClusterHandshake, AProofHoldsForOneChallengeTokenAndIdentityOnly) {
  const std::string token = "0123456789abcdef0123";
  const std::string nonce_a = random_nonce(), nonce_b = random_nonce();
  EXPECT_EQ(nonce_a.size(), kNonceBytes);
  EXPECT_NE(nonce_a, nonce_b);
  pb::Hello hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_role(pb::LEAF);
  hello.set_rank(3);
  hello.set_name("leaf-3");
  hello.set_client_nonce(random_nonce());
  const std::string proof = hello_proof(token, nonce_a, hello);
  EXPECT_EQ(proof.size(), 32u);
  EXPECT_EQ(proof, hello_proof(token, nonce_a, hello));
  EXPECT_NE(proof, hello_proof(token, nonce_b, hello));        // another connection: replay fails
  EXPECT_NE(proof, hello_proof(token + "x", nonce_a, hello));  // another token
  pb::Hello other_rank = hello;
  other_rank.set_rank(4);
  EXPECT_NE(proof, hello_proof(token, nonce_a, other_rank));  // the identity is covered
  EXPECT_NE(accept_proof(token, nonce_a, hello.client_nonce()),
            accept_proof(token, nonce_b, hello.client_nonce()));
}

TEST(ClusterCodec, TokensAndAddresses) {
  const std::string file = ::testing::TempDir() + "/cluster_token";
  auto refusal = [&](const std::string& token_file) {
    try {
      load_token(token_file);
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("(accepted)");
  };
  { std::ofstream(file, std::ios::trunc) << "  0123456789abcdef \nsecond line\n"; }
  ::chmod(file.c_str(), 0644);  // readable by everyone: refused
  EXPECT_NE(refusal(file).find("can be read by group or others (mode 644); make it private"),
            std::string::npos)
      << refusal(file);
  ::chmod(file.c_str(), 0600);
  EXPECT_EQ(load_token(file), "0123456789abcdef");
  { std::ofstream(file, std::ios::trunc) << "s3cret\n"; }  // 6 bytes: too short to be a secret
  EXPECT_NE(refusal(file).find("is 6 bytes; a cluster token needs at least 16"), std::string::npos)
      << refusal(file);
  { std::ofstream(file, std::ios::trunc) << "\n"; }
  EXPECT_THROW(load_token(file), ConfigError);
  EXPECT_THROW(load_token(file + ".missing"), ConfigError);
  ::setenv("WSEMU_TOKEN", "from-env-0123456789", 1);
  EXPECT_EQ(load_token(""), "from-env-0123456789");
  ::setenv("WSEMU_TOKEN", "short", 1);
  EXPECT_THROW(load_token(""), ConfigError);
  ::unsetenv("WSEMU_TOKEN");
  EXPECT_THROW(load_token(""), ConfigError);
  EXPECT_TRUE(tokens_equal("abc", "abc"));
  EXPECT_FALSE(tokens_equal("abc", "abd"));
  EXPECT_FALSE(tokens_equal("abc", "abcd"));
  EXPECT_EQ(parse_address("127.0.0.1:7100").port, 7100);
  EXPECT_EQ(parse_address("7200").host, "127.0.0.1");
  EXPECT_EQ(parse_address("[::1]:80").host, "::1");
  EXPECT_THROW(parse_address("host:99999"), ConfigError);
  EXPECT_THROW(parse_address("host:"), ConfigError);
  EXPECT_EQ(parse_byte_size("64K"), 65536u);
  EXPECT_EQ(parse_byte_size("2G"), 2ull << 30);
  EXPECT_EQ(parse_byte_size("512MB"), 512ull << 20);
  EXPECT_THROW(parse_byte_size("lots"), ConfigError);
}

// The words of roles and optimizer kinds in logs and refusals, as the .proto names them.
TEST(ClusterCodec, RoleAndOptimizerWordsFollowTheProtoNames) {
  EXPECT_EQ(role_name(pb::MEMORYX), "memoryx");
  EXPECT_EQ(role_name(pb::ORCHESTRATOR), "orchestrator");
  EXPECT_EQ(role_name(pb::ROLE_UNSPECIFIED), "unspecified");
  EXPECT_EQ(role_name(static_cast<pb::Role>(42)), "unknown");
  EXPECT_EQ(optimizer_kind_name(pb::ADAMW), "adamw");
  EXPECT_EQ(optimizer_kind_name(pb::OPTIMIZER_DEFAULT), "default");
}

}  // namespace
}  // namespace wsemu::cluster
