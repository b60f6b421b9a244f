// The fixture of the layout tests: a scratch folder per test (removed afterwards), holding the
// files the suite starts from, to write layouts, programs and included files into, and a build
// of a layout written there.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/layout/build.hpp"

namespace wsemu::compiler::layout {

// The program the layout tests place: M f32 elements of y; K is declared but unused, so it
// never changes the object.
constexpr const char* kProgram = R"(; test program
.param M, K
.data
y:      .f32 [M]
n:      .i32 [2]
.code
compute:
        nop
        exit
helper:
        exit
.export y, n, compute
)";

class LayoutScratchFolder : public ::testing::Test {
 protected:
  // `files` (name, text) are written into the folder before each test: the programs its
  // layouts place.
  explicit LayoutScratchFolder(std::vector<std::pair<std::string, std::string>> files = {})
      : files_(std::move(files)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("wsemu_layout_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    for (const auto& [name, text] : files_) write(name, text);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // `name` may name a subfolder, which is made.
  void write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
  }
  // Writes `layout` as t.wsl and builds it.
  BuildResult build(const std::string& layout, BuildOptions options = {}) {
    write("t.wsl", layout);
    return build_layout_file((dir_ / "t.wsl").string(), options);
  }
  std::filesystem::path dir_;

 private:
  std::vector<std::pair<std::string, std::string>> files_;
};

}  // namespace wsemu::compiler::layout
