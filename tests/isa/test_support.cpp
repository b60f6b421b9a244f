#include "tests/isa/test_support.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

namespace wsemu::isa::test {

std::string source_dir() {
  const char* s = std::getenv("WSEMU_SOURCE_DIR");
  return s ? s : ".";
}

std::string bin_dir() {
  const char* s = std::getenv("WSEMU_BIN_DIR");
  return s ? s : "build/bin";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

CommandResult run_command(const std::string& command) {
  static int counter = 0;
  const auto tmp = std::filesystem::temp_directory_path() /
                   ("wsemu_isa_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  const std::string out_path = tmp.string() + ".out", err_path = tmp.string() + ".err";
  const std::string full = command + " >" + out_path + " 2>" + err_path;
  const int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return r;
}

ObjectImage without_origin(ObjectImage image) {
  image.source_name.clear();
  image.source_lines.clear();
  return image;
}

std::string all_errors(const AssembleResult& r) {
  std::string s;
  for (const Diagnostic& d : r.errors) s += d.to_string() + "\n";
  return s;
}

ObjectImage assemble_ok(const std::string& text, const AssembleOptions& options, const std::string& name) {
  AssembleResult r = assemble(text, name, options);
  EXPECT_TRUE(r.object.has_value()) << all_errors(r) << "\n--- source ---\n" << text;
  return r.object ? *r.object : ObjectImage{};
}

}  // namespace wsemu::isa::test

namespace wsemu::isa::test {

Instruction random_instruction(Opcode op, std::mt19937_64& rng, int& next_string) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const InsnInfo& in = info(op);
  Instruction insn;
  insn.op = op;
  for (int i = 0; i < in.num_operands; ++i) {
    Operand& o = insn.operands[static_cast<size_t>(i)];
    switch (in.operands[static_cast<size_t>(i)]) {
      case OperandKind::REG: o.value = pick(0, 15); break;
      case OperandKind::DSR: o.value = pick(0, 47); break;
      case OperandKind::VDST:
      case OperandKind::VSRC:
        o.is_reg = pick(0, 1);
        o.value = o.is_reg ? pick(0, 15) : pick(0, 47);
        break;
      case OperandKind::IMM16: o.value = pick(-32768, 32767); break;
      case OperandKind::UIMM16:
      case OperandKind::LABEL: o.value = pick(0, 65535); break;
      case OperandKind::IMM32: o.value = pick(0, 0xFFFFFFFF); break;
      case OperandKind::SHAMT: o.value = pick(0, 31); break;
      case OperandKind::MEM:
        o.is_reg = pick(0, 1);
        o.reg = o.is_reg ? static_cast<uint8_t>(pick(0, 15)) : 0;
        o.value = pick(-32768, 32767);
        break;
      case OperandKind::REG_OR_IMM:
        o.is_reg = pick(0, 1);
        o.value = o.is_reg ? pick(0, 15) : pick(-32768, 32767);
        break;
      case OperandKind::DIM: o.value = pick(0, 3); break;
      case OperandKind::TASKID: o.value = pick(0, 63); break;
      case OperandKind::QUEUEID: o.value = pick(0, 7); break;
      case OperandKind::COLORID: o.value = pick(0, 31); break;
      case OperandKind::STR: o.value = next_string++; break;
    }
  }
  if (is_vector(in.timing) && pick(0, 1)) {
    insn.async.async = true;
    insn.async.microthread = static_cast<uint8_t>(pick(0, 7));
    insn.async.on_done = static_cast<OnDone>(pick(0, 2));
    insn.async.task = insn.async.on_done == OnDone::NONE ? 0 : static_cast<uint8_t>(pick(0, 63));
  }
  return insn;
}

}  // namespace wsemu::isa::test
