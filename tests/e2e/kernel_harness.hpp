// What the kernel tests share: building a kernel folder's layout (as `wsemu build` does, with
// the firmware's include folder, from source_dir() of tests/test_support.hpp), case names and
// the name generator of INSTANTIATE_TEST_SUITE_P, seeded random inputs, the word conversions of
// the host API, and the independent GEMV reference in xtensor (double precision, never the
// emulator).
//
// Contract: header-only test support; failures are GoogleTest failures or exceptions with the
// build's diagnostics in the message. Nothing here runs a wafer.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "isa/fp16.hpp"
#include "firmware/memcpy_protocol.hpp"
#include "compiler/layout/build.hpp"
#include "tests/test_support.hpp"  // source_dir(), bin_dir()

namespace wsemu::testing {

// Builds kernels/<folder>/layout.wsl with the given parameters; throws with the diagnostics.
inline compiler::Executable build_kernel(const std::string& folder, const std::map<std::string, int64_t>& params,
                                        const std::string& arch = "", const std::string& layout = "layout.wsl") {
  compiler::layout::BuildOptions options;
  options.params = params;
  options.arch = arch;
  options.include_dirs = {firmware::include_dir()};
  compiler::layout::BuildResult r =
      compiler::layout::build_layout_file(source_dir() + "/kernels/" + folder + "/" + layout, options);
  if (!r.ok()) throw std::runtime_error("build of " + folder + " failed:\n" + format_diagnostics(r.diagnostics));
  return *r.executable;
}

// A parameterised test's name from its parts in order: text as it is, integers in decimal
// ("wse2", "_", 4, "x", 3 -> "wse2_4x3"), for INSTANTIATE_TEST_SUITE_P's name generator.
template <class... Parts>
std::string case_name(const Parts&... parts) {
  std::string name;
  auto append = [&name](const auto& part) {
    using Part = std::decay_t<decltype(part)>;
    if constexpr (std::is_integral_v<Part> && !std::is_same_v<Part, bool> && !std::is_same_v<Part, char>) {
      name += std::to_string(part);
    } else {
      static_assert(std::is_convertible_v<const Part&, std::string_view>, "case_name takes text and integers");
      name += std::string_view(part);
    }
  };
  (append(parts), ...);
  return name;
}

// INSTANTIATE_TEST_SUITE_P's name generator written once: the parts are fields of the parameter
// (pointers to members), text, or a callable of the parameter, joined as case_name joins them:
// named_by(&Case::arch, "_", &Case::M, "x", &Case::N) names Case{4, 6, "wse2"} "wse2_4x6".
template <class... Parts>
struct NamedBy {
  std::tuple<Parts...> parts;

  template <class Param, class Part>
  static decltype(auto) part_of(const Param& param, const Part& part) {
    if constexpr (std::is_member_object_pointer_v<Part>) {
      return (param.*part);
    } else if constexpr (std::is_invocable_v<const Part&, const Param&>) {
      return part(param);
    } else {
      return (part);
    }
  }

  template <class Info>
  std::string operator()(const Info& info) const {
    return std::apply([&info](const auto&... p) { return case_name(part_of(info.param, p)...); }, parts);
  }
};

// By value: text arrives as const char*, members as their pointers.
template <class... Parts>
NamedBy<Parts...> named_by(Parts... parts) {
  return {{parts...}};
}

// A part of named_by: `yes` where the parameter's flag is set, else `no`.
template <class Param>
auto either(bool Param::*flag, const char* yes, const char* no) {
  return [flag, yes, no](const Param& param) { return param.*flag ? yes : no; };
}

// The parameter of a kernel test on a grid of PW x PH PEs with n values on each (a vector, a
// chunk), on one architecture, through `channels` host I/O channels.
struct PeGridCase {
  int pw, ph, n;
  std::string arch;
  int channels = 1;
};

// Uniform values in [-1, 1), reproducible from the seed.
inline xt::xarray<float> random_array(std::vector<size_t> shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  xt::xarray<float> a = xt::zeros<float>(shape);
  for (auto& v : a) v = dist(gen);
  return a;
}

inline std::vector<uint32_t> words(const xt::xarray<float>& a) {
  std::vector<uint32_t> w;
  w.reserve(a.size());
  for (float v : a) w.push_back(std::bit_cast<uint32_t>(v));
  return w;
}

inline std::vector<uint32_t> half_words(const xt::xarray<float>& a) {
  std::vector<uint32_t> w;
  w.reserve(a.size());
  for (float v : a) w.push_back(isa::fp32_to_fp16(v));
  return w;
}

inline xt::xarray<float> floats(const std::vector<uint32_t>& w, std::vector<size_t> shape) {
  xt::xarray<float> a = xt::zeros<float>(shape);
  for (size_t i = 0; i < w.size() && i < a.size(); ++i) a.flat(i) = std::bit_cast<float>(w[i]);
  return a;
}

inline xt::xarray<float> halves(const std::vector<uint32_t>& w, std::vector<size_t> shape) {
  xt::xarray<float> a = xt::zeros<float>(shape);
  for (size_t i = 0; i < w.size() && i < a.size(); ++i) a.flat(i) = isa::fp16_to_fp32(uint16_t(w[i]));
  return a;
}

// Rounds every element to the nearest fp16 value (what the kernel receives).
inline xt::xarray<float> to_half_precision(const xt::xarray<float>& a) {
  xt::xarray<float> r = a;
  for (auto& v : r) v = isa::fp16_to_fp32(isa::fp32_to_fp16(v));
  return r;
}

// y = A x + b in double precision: A is M x N, x has N elements, b has M.
inline xt::xarray<double> gemv_reference(const xt::xarray<float>& A, const xt::xarray<float>& x,
                                         const xt::xarray<float>& b) {
  const xt::xarray<double> Ad = xt::cast<double>(A), xd = xt::cast<double>(x), bd = xt::cast<double>(b);
  return xt::sum(Ad * xt::view(xd, xt::newaxis(), xt::all()), {1}) + bd;
}

inline void expect_close(const xt::xarray<float>& got, const xt::xarray<double>& want, double atol, double rtol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got.flat(i), w = want.flat(i);
    if (!(std::abs(g - w) <= atol + rtol * std::abs(w))) {
      if (++bad <= 5) ADD_FAILURE() << what << ": element " << i << " got " << g << ", expected " << w;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements differ";
}

}  // namespace wsemu::testing
