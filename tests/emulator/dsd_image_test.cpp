// Descriptor images (isa/README.md "Descriptor images"): `dsdld` loads a descriptor written as
// 20 16-bit words in SRAM, `dsdst` stores one; the images here are written by hand from the
// documented layout, and what the loaded descriptors read is worked out by hand.
#include <gtest/gtest.h>

#include "isa/descriptor.hpp"
#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

TEST(DsdImage, LoadedMem1dAndMem4dImagesReadTheirElements) {
  // img1 = mem1d(x + 4, 3, stride 2): x[1], x[3], x[5]. img4 = mem4d(a, [2, 2], [1, 3]): a[0],
  // a[1], a[3], a[4]. Index words 17, 18 hold -1 (no wavelet index).
  SinglePe pe(kMainTask + R"(
.data
x:      .f32 1, 2, 3, 4, 5, 6, 7, 8
a:      .f32 0, 1, 2, 3, 4, 5, 6, 7, 8
z:      .f32 [3]
z4:     .f32 [4]
img1:   .u16 1, 32, x + 4, 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 65535, 65535, 0
img4:   .u16 2, 32, a, 0, 0, 0, 2, 2, 1, 1, 1, 3, 0, 0, 0, 0, 0, 65535, 65535, 0
.dsd    zd = mem1d(z, 3)
.dsd    z4d = mem1d(z4, 4)
.dsd    spare = mem1d(0, 1)
.code
main:
  dsdld spare, img1
  fmovs zd, spare
  dsdld spare, img4
  fmovs z4d, spare
  exit
)");
  pe.run_ok(10000);
  EXPECT_EQ(pe.read<float>("z", 3), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(pe.read<float>("z4", 4), (std::vector<float>{0, 1, 3, 4}));
}

TEST(DsdImage, StoredImagesHoldTheDocumentedWordsAndLoadBack) {
  // col = mem1d(y, 2) advanced by one element: base y + 4. fo = fabout(5, 2, 7) with control,
  // index 3 and advance_switch: flags 3. The stored column is loaded into `spare` and copies
  // y[1], y[2] to z.
  SinglePe pe(kMainTask + R"(
.data
y:      .f32 10, 20, 30
z:      .f32 [2]
img:    .u16 [20]
imgf:   .u16 [20]
.dsd    col = mem1d(y, 2)
.dsd    fo = fabout(5, 2, 7, control=1, index=3, advance_switch=1)
.dsd    zd = mem1d(z, 2)
.dsd    spare = mem1d(0, 1)
.code
main:
  dsdinc col, 1
  dsdst img, col
  dsdst imgf, fo
  dsdld spare, img
  fmovs zd, spare
  exit
)");
  pe.run_ok(10000);
  const uint16_t y = uint16_t(addr(*pe.program, "y"));
  EXPECT_EQ(pe.read<uint16_t>("img", 20),
            (std::vector<uint16_t>{1, 32, uint16_t(y + 4), 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 65535, 65535, 0}));
  EXPECT_EQ(pe.read<uint16_t>("imgf", 20),
            (std::vector<uint16_t>{5, 32, 0, 7, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 5, 2, 3, 3, 0, 0}));
  EXPECT_EQ(pe.read<float>("z", 2), (std::vector<float>{20, 30}));
}

TEST(DsdImage, ImagesRoundTripEveryField) {
  isa::Descriptor d;
  d.kind = isa::DsdKind::FABIN;
  d.elem_bits = 16;
  d.length = 70000;  // past 16 bits: both length words
  d.color = 21;
  d.queue = 6;
  d.on_control = isa::OnControl::ACTIVATE;
  d.on_control_task = 40;
  isa::Descriptor back;
  std::string why;
  ASSERT_TRUE(isa::descriptor_from_image(isa::descriptor_image(d), back, why)) << why;
  EXPECT_EQ(back, d);
  isa::DescriptorImage bad = isa::descriptor_image(d);
  bad[1] = 8;
  EXPECT_FALSE(isa::descriptor_from_image(bad, back, why));
  EXPECT_NE(why.find("element width 8"), std::string::npos) << why;
}

TEST(DsdImage, BadImagesAndRingDescriptorsAreKernelErrors) {
  const std::string data = R"(
.data
buf:    .u32 [4]
circ:   .u16 3, 32, 0, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 65535, 65535, 0
wide:   .u16 1, 32, 0, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 7, 0
img:    .u16 [20]
.dsd    f = fifo(buf, 4)
.dsd    spare = mem1d(0, 1)
.code
main:
)";
  expect_kernel_errors(kMainTask + data,
                       {
                           {"  dsdld spare, circ\n  exit\n", "a circbuf has no image"},
                           {"  dsdld spare, wide\n  exit\n", "is not a descriptor: a color, queue, flag, wavelet index"},
                           {"  dsdld spare, img + 1\n  exit\n", "is not 2-byte aligned"},
                           {"  dsdst img, f\n  exit\n", "is a fifo, which has no image"},
                       },
                       10000, [](const emu::Fault& fault) { EXPECT_EQ(*fault.pc, 0u); });
}

}  // namespace
}  // namespace wsemu::testing
