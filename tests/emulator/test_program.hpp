// Test-only program builder: a minimal line assembler over the isa table plus C++ calls for
// tasks, descriptors, queues and data, producing an isa::ObjectImage for the emulator tests.
//
// Contract: exists only because the emulator tests were written before the real assembler
// (isa/assembler.hpp); it understands one instruction per line, `label:` lines, `;` comments,
// operands rN, dN, integers (decimal, 0x.., or f:1.5 for an fp32 bit pattern), [rN + k],
// "strings" and label names, and after a `|` the options `async`, `ut=N`, `activate=T`,
// `unblock=T`. Any problem throws std::runtime_error naming the line. Never used by the
// product code.
#pragma once

#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "isa/descriptor.hpp"
#include "isa/instruction.hpp"
#include "isa/object.hpp"

namespace wsemu::testing {

inline isa::Descriptor mem1d(uint16_t base, uint32_t length, int16_t stride = 1, uint8_t bits = 32) {
  isa::Descriptor d;
  d.kind = isa::DsdKind::MEM1D;
  d.base = base;
  d.length = length;
  d.stride = stride;
  d.elem_bits = bits;
  return d;
}
inline isa::Descriptor mem4d(uint16_t base, std::array<uint16_t, 4> extents, std::array<int16_t, 4> strides,
                             uint8_t bits = 32) {
  isa::Descriptor d;
  d.kind = isa::DsdKind::MEM4D;
  d.base = base;
  d.extents = extents;
  d.strides = strides;
  d.elem_bits = bits;
  return d;
}
inline isa::Descriptor circbuf(uint16_t base, uint32_t size, uint8_t bits = 32) {
  isa::Descriptor d;
  d.kind = isa::DsdKind::CIRCBUF;
  d.base = base;
  d.length = size;
  d.elem_bits = bits;
  return d;
}
inline isa::Descriptor fabin(uint8_t color, uint8_t queue, uint32_t length, uint8_t bits = 32,
                             isa::OnControl on_control = isa::OnControl::NONE, uint8_t on_control_task = 0) {
  isa::Descriptor d;
  d.kind = isa::DsdKind::FABIN;
  d.color = color;
  d.queue = queue;
  d.length = length;
  d.elem_bits = bits;
  d.on_control = on_control;
  d.on_control_task = on_control_task;
  return d;
}
inline isa::Descriptor fabout(uint8_t color, uint8_t queue, uint32_t length, uint8_t bits = 32) {
  isa::Descriptor d;
  d.kind = isa::DsdKind::FABOUT;
  d.color = color;
  d.queue = queue;
  d.length = length;
  d.elem_bits = bits;
  return d;
}
inline isa::Descriptor fifo(uint16_t base, uint32_t capacity, uint8_t bits = 32, int8_t on_push = -1,
                            int8_t on_pop = -1) {
  isa::Descriptor d;
  d.kind = isa::DsdKind::FIFO;
  d.base = base;
  d.length = capacity;
  d.elem_bits = bits;
  d.activate_on_push = on_push;
  d.activate_on_pop = on_pop;
  return d;
}

inline uint32_t fbits(float f) { return std::bit_cast<uint32_t>(f); }

class TestProgram {
 public:
  static constexpr uint32_t kDataBase = 0x1000;  // data always starts here in test programs

  explicit TestProgram(std::string arch = "") { img_.arch = std::move(arch); img_.data_base = kDataBase; img_.data_size = 0x2000; }

  TestProgram& code(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines_.push_back(line);
    return *this;
  }
  TestProgram& local_task(int id, const std::string& label) { return task(isa::TaskKind::LOCAL, id, label, id, false); }
  TestProgram& data_task(int id, const std::string& label, bool by_queue = false) {
    return task(isa::TaskKind::DATA, id, label, id, by_queue);
  }
  TestProgram& control_task(int id, const std::string& label) { return task(isa::TaskKind::CONTROL, id, label, 0, false); }
  TestProgram& blocked_at_start() {
    pending_tasks_.back().starts_blocked = true;
    return *this;
  }
  TestProgram& dsd(int dsr, const isa::Descriptor& d) {
    std::string name = "d";
    name += std::to_string(dsr);
    img_.descriptors.push_back({name, uint8_t(dsr), d});
    return *this;
  }
  TestProgram& iq(int q, int color) {
    img_.queues.push_back({false, uint8_t(q), uint8_t(color)});
    return *this;
  }
  TestProgram& oq(int q, int color) {
    img_.queues.push_back({true, uint8_t(q), uint8_t(color)});
    return *this;
  }
  template <typename T>
  TestProgram& data(uint32_t address, const std::vector<T>& values) {
    const uint32_t off = address - kDataBase;
    if (img_.data_init.size() < off + values.size() * sizeof(T)) img_.data_init.resize(off + values.size() * sizeof(T));
    std::memcpy(img_.data_init.data() + off, values.data(), values.size() * sizeof(T));
    return *this;
  }

  std::shared_ptr<const isa::ObjectImage> build() {
    std::map<std::string, int64_t> labels;
    std::vector<std::string> insn_lines;
    for (std::string line : lines_) {
      if (auto c = line.find(';'); c != std::string::npos && line.find('"') == std::string::npos) line.resize(c);
      line = trim(line);
      if (line.empty()) continue;
      if (line.back() == ':') {
        labels[line.substr(0, line.size() - 1)] = int64_t(insn_lines.size());
        continue;
      }
      insn_lines.push_back(line);
    }
    isa::ObjectImage img = img_;
    for (const std::string& line : insn_lines) img.code.push_back(assemble_line(line, labels, img));
    for (PendingTask t : pending_tasks_) {
      if (!labels.count(t.label)) throw std::runtime_error("unknown task label " + t.label);
      t.binding.entry = uint32_t(labels[t.label]);
      t.binding.starts_blocked = t.starts_blocked;
      img.tasks.push_back(t.binding);
    }
    if (img.code.size() * 8 > kDataBase) throw std::runtime_error("test program too long");
    return std::make_shared<const isa::ObjectImage>(std::move(img));
  }

 private:
  struct PendingTask {
    isa::TaskBinding binding;
    std::string label;
    bool starts_blocked = false;
  };
  TestProgram& task(isa::TaskKind kind, int id, const std::string& label, int trigger, bool by_queue) {
    PendingTask t;
    t.binding.name = label;
    t.binding.kind = kind;
    t.binding.id = uint8_t(id);
    t.binding.trigger = uint8_t(trigger);
    t.binding.trigger_is_queue = by_queue;
    t.label = label;
    pending_tasks_.push_back(t);
    return *this;
  }
  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
  }
  static int64_t number(const std::string& t, const std::string& line) {
    try {
      if (t.rfind("f:", 0) == 0) return std::bit_cast<uint32_t>(std::stof(t.substr(2)));
      size_t used = 0;
      const int64_t v = std::stoll(t, &used, 0);
      if (used != t.size()) throw std::invalid_argument("junk");
      return v;
    } catch (const std::exception&) {
      throw std::runtime_error("bad number '" + t + "' in: " + line);
    }
  }
  uint64_t assemble_line(const std::string& line, const std::map<std::string, int64_t>& labels, isa::ObjectImage& img) {
    std::string body = line, options;
    if (auto bar = line.find('|'); bar != std::string::npos) {
      body = trim(line.substr(0, bar));
      options = line.substr(bar + 1);
    }
    const auto sp = body.find_first_of(" \t");
    std::string mnem = body.substr(0, sp);
    std::string rest = sp == std::string::npos ? "" : trim(body.substr(sp));
    isa::Instruction insn;
    if (mnem.size() > 6 && mnem.substr(mnem.size() - 6) == ".async") {
      mnem.resize(mnem.size() - 6);
      insn.async.async = true;
    }
    const isa::InsnInfo* info = isa::find_mnemonic(mnem);
    if (!info) throw std::runtime_error("unknown mnemonic in: " + line);
    insn.op = info->id;
    std::vector<std::string> ops;
    if (!rest.empty()) {
      std::string cur;
      bool in_str = false;
      int depth = 0;
      for (char c : rest) {
        if (c == '"') in_str = !in_str;
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (c == ',' && !in_str && depth == 0) {
          ops.push_back(trim(cur));
          cur.clear();
        } else {
          cur += c;
        }
      }
      ops.push_back(trim(cur));
    }
    if (int(ops.size()) != info->num_operands) throw std::runtime_error("wrong operand count in: " + line);
    for (int i = 0; i < info->num_operands; ++i) {
      const std::string& t = ops[i];
      isa::Operand& o = insn.operands[i];
      using K = isa::OperandKind;
      switch (info->operands[i]) {
        case K::REG:
        case K::DSR: o.value = number(t.substr(1), line); break;
        case K::VDST:
        case K::VSRC:
        case K::REG_OR_IMM:
          if (t[0] == 'r') {
            o.is_reg = true;
            o.value = number(t.substr(1), line);
          } else if (t[0] == 'd') {
            o.value = number(t.substr(1), line);
          } else {
            o.value = number(t, line);
          }
          break;
        case K::LABEL:
          if (labels.count(t))
            o.value = labels.at(t);
          else
            o.value = number(t, line);
          break;
        case K::MEM: {
          std::string in = trim(t.substr(1, t.size() - 2));
          if (in[0] == 'r') {
            o.is_reg = true;
            const auto plus = in.find('+');
            o.reg = uint8_t(number(trim(in.substr(1, plus == std::string::npos ? std::string::npos : plus - 1)), line));
            o.value = plus == std::string::npos ? 0 : number(trim(in.substr(plus + 1)), line);
          } else {
            o.value = number(in, line);
          }
          break;
        }
        case K::STR:
          o.value = int64_t(img.strings.size());
          img.strings.push_back(t.substr(1, t.size() - 2));
          break;
        default: o.value = number(t, line); break;
      }
    }
    std::istringstream opt(options);
    std::string word;
    while (opt >> word) {
      if (word == "async") insn.async.async = true;
      else if (word.rfind("ut=", 0) == 0) insn.async.microthread = uint8_t(number(word.substr(3), line));
      else if (word.rfind("activate=", 0) == 0) {
        insn.async.on_done = isa::OnDone::ACTIVATE;
        insn.async.task = uint8_t(number(word.substr(9), line));
      } else if (word.rfind("unblock=", 0) == 0) {
        insn.async.on_done = isa::OnDone::UNBLOCK;
        insn.async.task = uint8_t(number(word.substr(8), line));
      } else {
        throw std::runtime_error("unknown option '" + word + "' in: " + line);
      }
    }
    if (std::string err = isa::validate(insn); !err.empty()) throw std::runtime_error(err + " in: " + line);
    return isa::encode(insn);
  }

  isa::ObjectImage img_;
  std::vector<std::string> lines_;
  std::vector<PendingTask> pending_tasks_;
};

}  // namespace wsemu::testing
