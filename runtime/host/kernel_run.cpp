// The default kernel run and the output comparison (kernel_run.hpp).
#include "runtime/host/kernel_run.hpp"

#include <fmt/format.h>

#include <cmath>

namespace wsemu::runtime::host {
namespace {

npy::DType dtype_of_elem(isa::ElemType t) {
  switch (t) {
    case isa::ElemType::I16: return npy::DType::I16;
    case isa::ElemType::U16: return npy::DType::U16;
    case isa::ElemType::I32: return npy::DType::I32;
    case isa::ElemType::U32: return npy::DType::U32;
    case isa::ElemType::F16: return npy::DType::F16;
    case isa::ElemType::F32: return npy::DType::F32;
  }
  return npy::DType::F32;
}

std::vector<uint32_t> words_of(const npy::NpyArray& a) {
  const int size = npy::dtype_size(a.dtype);
  std::vector<uint32_t> out(a.size());
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t v = 0;
    for (int b = 0; b < size; ++b) v |= uint32_t(a.data[i * size_t(size) + size_t(b)]) << (8 * b);
    out[i] = v;
  }
  return out;
}

const HostSymbol& symbol_of(const Executable& exe, const std::string& name) {
  const HostSymbol* s = exe.find_symbol(name);
  if (!s) {
    std::string known;
    for (const HostSymbol& h : exe.symbols) known += (known.empty() ? "" : ", ") + h.name;
    throw HostError(HostError::Kind::USAGE, fmt::format("the executable exports no symbol '{}' (it exports: {})",
                                                        name, known.empty() ? "none" : known));
  }
  return *s;
}

}  // namespace

void check_array_for_symbol(const Executable& exe, const std::string& symbol, const npy::NpyArray& array,
                            const std::string& source) {
  const HostSymbol& s = symbol_of(exe, symbol);
  const Rect& rect = exe.rects[s.rect];
  const npy::DType want = dtype_of_elem(s.type);
  if (array.dtype != want)
    throw HostError(HostError::Kind::USAGE,
                    fmt::format("{}: dtype {} does not match symbol '{}', which holds {} elements (save the array "
                                "with dtype {})",
                                source, npy::dtype_name(array.dtype), symbol, isa::elem_type_name(s.type),
                                npy::dtype_name(want)));
  const size_t need = size_t(rect.width) * rect.height * s.elems_per_pe;
  const std::string natural =
      rect.width * rect.height == 1 ? fmt::format("({},)", s.elems_per_pe)
                                    : fmt::format("({}, {}, {})", rect.height, rect.width, s.elems_per_pe);
  bool ok = array.size() == need;
  if (ok && array.shape.size() == 3)
    ok = array.shape[0] == rect.height && array.shape[1] == rect.width && array.shape[2] == s.elems_per_pe;
  if (!ok)
    throw HostError(HostError::Kind::USAGE,
                    fmt::format("{}: shape {} does not fit symbol '{}': {} elements on each of the {} x {} PEs of "
                                "rectangle '{}' need shape {} ({} elements)",
                                source, array.shape_string(), symbol, s.elems_per_pe, rect.width, rect.height,
                                rect.name, natural, need));
}

std::string entry_function(const Executable& exe, const std::string& requested) {
  if (!requested.empty()) {
    if (!exe.find_function(requested)) {
      std::string known;
      for (const HostFunction& f : exe.functions) known += (known.empty() ? "" : ", ") + f.name;
      throw HostError(HostError::Kind::USAGE, fmt::format("the executable exports no function '{}' (it exports: {})",
                                                          requested, known.empty() ? "none" : known));
    }
    return requested;
  }
  if (exe.functions.size() == 1) return exe.functions.front().name;
  if (exe.functions.empty()) return "";
  std::string known;
  for (const HostFunction& f : exe.functions) known += (known.empty() ? "" : ", ") + f.name;
  throw HostError(HostError::Kind::USAGE,
                  fmt::format("the executable exports several functions ({}); name the entry with --launch", known));
}

std::map<std::string, npy::NpyArray> run_kernel(SdkRuntime& rt, const KernelRunRequest& request) {
  const Executable& exe = rt.executable();
  for (const NamedArray& in : request.inputs) check_array_for_symbol(exe, in.symbol, in.array, in.source);
  for (const std::string& out : request.outputs) symbol_of(exe, out);
  const std::string entry = entry_function(exe, request.launch);
  if (!rt.loaded()) rt.load();
  MemcpyOptions o;
  o.order = request.order;
  for (const NamedArray& in : request.inputs) {
    const HostSymbol& s = symbol_of(exe, in.symbol);
    const Rect& rect = exe.rects[s.rect];
    o.data_type = isa::elem_bytes(s.type) == 2 ? MemcpyDataType::MEMCPY_16BIT : MemcpyDataType::MEMCPY_32BIT;
    const std::vector<uint32_t> words = words_of(in.array);
    rt.memcpy_h2d(in.symbol, words, 0, 0, int(rect.width), int(rect.height), int(s.elems_per_pe), o);
  }
  if (!entry.empty()) rt.launch(entry, request.launch_args);
  rt.run_until_quiescent();
  std::map<std::string, npy::NpyArray> outputs;
  for (const std::string& name : request.outputs) {
    const HostSymbol& s = symbol_of(exe, name);
    const Rect& rect = exe.rects[s.rect];
    o.data_type = isa::elem_bytes(s.type) == 2 ? MemcpyDataType::MEMCPY_16BIT : MemcpyDataType::MEMCPY_32BIT;
    std::vector<uint32_t> words(size_t(rect.width) * rect.height * s.elems_per_pe);
    rt.memcpy_d2h(words, name, 0, 0, int(rect.width), int(rect.height), int(s.elems_per_pe), o);
    npy::NpyArray a;
    a.dtype = dtype_of_elem(s.type);
    if (rect.width * rect.height == 1)
      a.shape = {s.elems_per_pe};
    else
      a.shape = {rect.height, rect.width, s.elems_per_pe};
    const int size = npy::dtype_size(a.dtype);
    a.data.resize(words.size() * size_t(size));
    for (size_t i = 0; i < words.size(); ++i)
      for (int b = 0; b < size; ++b) a.data[i * size_t(size) + size_t(b)] = uint8_t(words[i] >> (8 * b));
    outputs[name] = std::move(a);
  }
  return outputs;
}

Comparison compare(const std::string& symbol, const npy::NpyArray& got, const npy::NpyArray& expected, double rtol,
                   double atol) {
  if (got.size() != expected.size())
    throw HostError(HostError::Kind::USAGE,
                    fmt::format("{}: the output has shape {} ({} elements) but the reference has shape {} ({})",
                                symbol, got.shape_string(), got.size(), expected.shape_string(), expected.size()));
  const xt::xarray<double> g = got.to_double(), e = expected.to_double();
  Comparison c;
  c.symbol = symbol;
  c.elements = expected.size();
  double worst_excess = -1;
  for (size_t i = 0; i < c.elements; ++i) {
    const double gv = g.flat(i), ev = e.flat(i);
    const double diff = std::fabs(gv - ev);
    const double tol = atol + rtol * std::fabs(ev);
    const bool nan = std::isnan(gv) || std::isnan(ev);
    const bool bad = nan || !(diff <= tol);
    if (!nan) c.max_abs_error = std::max(c.max_abs_error, diff);
    if (!bad) continue;
    ++c.mismatches;
    const double excess = nan || std::isinf(diff) ? INFINITY : diff - tol;
    if (excess > worst_excess || !c.worst) {
      worst_excess = excess;
      Mismatch m;
      m.flat_index = i;
      m.got = gv;
      m.expected = ev;
      size_t rest = i;
      m.index.assign(expected.shape.size(), 0);
      for (size_t d = expected.shape.size(); d-- > 0;) {
        m.index[d] = rest % expected.shape[d];
        rest /= expected.shape[d];
      }
      c.worst = m;
    }
  }
  return c;
}

}  // namespace wsemu::runtime::host
