// The `wsemu._wsemu` extension: a thin pybind11 layer over runtime/host's SdkRuntime, with the
// trace recorder of inspect/trace. The SDK-shaped Python API (argument forms, numpy dtypes,
// task handles) is the pure-Python package around it (runtime/python/wsemu/).
//
// Contract: every host call takes and returns plain data (str, int, contiguous uint32 numpy
// arrays); a HostError becomes the Python exception of wsemu.errors for its kind (UsageError,
// FaultError, HangError, CycleLimitError) carrying the report text, and any other C++ exception
// becomes a Python exception too, so that no input from Python crashes the interpreter. The
// interpreter lock is released while the wafer runs. Nothing here prints.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "compiler/executable/executable_io.hpp"
#include "inspect/trace/trace_writer.hpp"
#include "isa/object.hpp"
#include "runtime/host/sdk_runtime.hpp"

namespace py = pybind11;
using wsemu::runtime::host::HostError;
using wsemu::runtime::host::MemcpyDataType;
using wsemu::runtime::host::MemcpyOptions;
using wsemu::runtime::host::MemcpyOrder;
using wsemu::runtime::host::RuntimeOptions;
using wsemu::runtime::host::SdkRuntime;

namespace {

using WordArray = py::array_t<uint32_t, py::array::c_style>;

MemcpyOptions memcpy_options(bool streaming, bool col_major, bool bits16, int stream_color = -1) {
  MemcpyOptions o;
  o.streaming = streaming;
  o.stream_color = stream_color;
  o.order = col_major ? MemcpyOrder::COL_MAJOR : MemcpyOrder::ROW_MAJOR;
  o.data_type = bits16 ? MemcpyDataType::MEMCPY_16BIT : MemcpyDataType::MEMCPY_32BIT;
  return o;
}

py::dict run_result_dict(const wsemu::emu::RunResult& r) {
  py::dict d;
  d["status"] = std::string(wsemu::emu::run_status_name(r.status));
  d["cycles_run"] = r.cycles_run;
  d["cycle"] = r.cycle;
  d["fault"] = r.fault ? py::object(py::str(r.fault->to_string())) : py::object(py::none());
  d["hang"] = r.hang ? py::object(py::str(r.hang->to_string())) : py::object(py::none());
  return d;
}

// One session: the runtime and, while recording, the trace writer installed on its wafer.
class Session {
 public:
  Session(const std::string& wsx_path, int threads, uint64_t max_cycles, bool backdoor, int channels,
          std::vector<std::string> profile)
      : rt_(wsemu::compiler::load_executable(wsx_path), options(threads, max_cycles, backdoor, channels,
                                                                std::move(profile))) {}
  ~Session() {
    if (trace_) rt_.wafer().set_event_sink(nullptr);
  }

  // The runtime, unless another thread is inside a host call on it (the interpreter lock is
  // released while the wafer runs, and the C++ runtime is not thread-safe): then a UsageError.
  SdkRuntime& rt() {
    if (busy_.load() && owner_.load() != std::this_thread::get_id()) throw concurrent_use();
    return rt_;
  }

  // Runs a host call; a wafer failure (fault, hang, cycle limit) also ends the trace with it.
  template <typename F>
  auto call(F&& f) -> decltype(f()) {
    if (busy_.exchange(true)) throw concurrent_use();
    owner_ = std::this_thread::get_id();
    struct Done {
      std::atomic<bool>& busy;
      ~Done() { busy = false; }
    } done{busy_};
    try {
      py::gil_scoped_release release;
      return f();
    } catch (const HostError& e) {
      if (e.kind() != HostError::Kind::USAGE) finish_trace(&e);
      throw;
    }
  }

  void start_trace(const std::string& path, const std::string& events, const std::string& rect,
                   const std::string& colors, const std::string& cycles) {
    rt();  // not while another thread is inside a call
    if (trace_) throw HostError(HostError::Kind::USAGE, "start_trace: a trace is already being recorded");
    wsemu::trace::TraceWriterOptions w;
    try {
      w.filter.kinds = wsemu::trace::parse_kinds(events);
      if (!rect.empty()) w.filter.rect = wsemu::trace::parse_rect(rect);
      if (!colors.empty()) w.filter.colors = wsemu::trace::parse_colors(colors);
      if (!cycles.empty()) w.filter.cycles = wsemu::trace::parse_cycles(cycles);
      if (!rt_.loaded()) call([&] { rt_.load(); });
      trace_ = std::make_unique<wsemu::trace::TraceWriter>(path, rt_.wafer(), w);
    } catch (const wsemu::trace::TraceError& e) {
      throw HostError(HostError::Kind::USAGE, std::string("trace: ") + e.what());
    }
    rt_.wafer().set_event_sink(trace_.get());
  }

  // Ends the recording (with the error that ended the session, if any); returns
  // {path, events, bytes} or None when nothing was recorded.
  py::object finish_trace(const HostError* error) {
    if (!trace_) return py::none();
    wsemu::emu::RunResult r;
    r.cycle = rt_.wafer().cycle();
    r.status = wsemu::emu::RunResult::Status::QUIESCENT;
    if (error) {
      switch (error->kind()) {
        case HostError::Kind::HANG:
          r.status = wsemu::emu::RunResult::Status::HANG;
          r.hang = error->hang() ? error->hang() : rt_.wafer().hang_report();
          break;
        case HostError::Kind::FAULT:
          r.status = wsemu::emu::RunResult::Status::FAULT;
          r.fault = error->fault();
          break;
        default: r.status = wsemu::emu::RunResult::Status::CYCLE_LIMIT; break;
      }
    }
    rt_.wafer().set_event_sink(nullptr);
    std::unique_ptr<wsemu::trace::TraceWriter> w = std::move(trace_);
    w->finish(rt_.wafer(), r);
    finished_trace_ = {w->path(), w->events_written(), w->bytes_written()};
    return trace_info();
  }

  py::object trace_info() const {
    if (!finished_trace_) return py::none();
    py::dict d;
    d["path"] = finished_trace_->path;
    d["events"] = finished_trace_->events;
    d["bytes"] = finished_trace_->bytes;
    return d;
  }

  bool tracing() const { return trace_ != nullptr; }

 private:
  static RuntimeOptions options(int threads, uint64_t max_cycles, bool backdoor, int channels,
                                std::vector<std::string> profile) {
    if (threads < 1 || threads > 256)
      throw HostError(HostError::Kind::USAGE, "threads must be 1..256, not " + std::to_string(threads));
    if (channels < 1 || channels > 16)
      throw HostError(HostError::Kind::USAGE, "channels must be 1..16, not " + std::to_string(channels));
    RuntimeOptions o;
    o.threads = threads;
    o.max_cycles = max_cycles;
    o.backdoor = backdoor;
    o.channel.channels = channels;
    o.profile_overrides = std::move(profile);
    return o;
  }

  static HostError concurrent_use() {
    return HostError(HostError::Kind::USAGE,
                     "this SdkRuntime is inside a host call in another thread; use one runtime from one thread "
                     "at a time");
  }

  std::atomic<bool> busy_{false};
  std::atomic<std::thread::id> owner_{};
  struct FinishedTrace {
    std::string path;
    uint64_t events = 0, bytes = 0;
  };
  SdkRuntime rt_;
  std::unique_ptr<wsemu::trace::TraceWriter> trace_;
  std::optional<FinishedTrace> finished_trace_;
};

std::span<const uint32_t> words_in(const WordArray& a) { return {a.data(), size_t(a.size())}; }

// A Python list of one dict per item.
template <class Items, class ToDict>
py::list dicts(const Items& items, ToDict to_dict) {
  py::list out;
  for (const auto& item : items) out.append(to_dict(item));
  return out;
}

py::dict executable_dict(const wsemu::compiler::Executable& exe) {
  using namespace py::literals;
  py::dict params;
  for (const auto& [name, value] : exe.build_params) params[py::str(name)] = value;
  return py::dict(
      "arch"_a = exe.arch, "fabric_width"_a = exe.fabric_width, "fabric_height"_a = exe.fabric_height,
      "params"_a = params,
      "rects"_a = dicts(exe.rects,
                        [](const auto& r) {
                          return py::dict("name"_a = r.name, "x"_a = r.x, "y"_a = r.y, "width"_a = r.width,
                                          "height"_a = r.height);
                        }),
      "symbols"_a = dicts(exe.symbols,
                          [](const auto& s) {
                            return py::dict("name"_a = s.name, "type"_a = std::string(wsemu::isa::elem_type_name(s.type)),
                                            "bytes"_a = wsemu::isa::elem_bytes(s.type), "elems_per_pe"_a = s.elems_per_pe,
                                            "rect"_a = s.rect, "readable"_a = s.host_readable,
                                            "writable"_a = s.host_writable, "indirect"_a = s.indirect);
                          }),
      "functions"_a = dicts(exe.functions, [](const auto& f) { return py::dict("name"_a = f.name, "rect"_a = f.rect); }));
}

void raise_host_error(const HostError& e) {
  py::module_ errors = py::module_::import("wsemu.errors");
  const char* cls = "UsageError";
  switch (e.kind()) {
    case HostError::Kind::USAGE: cls = "UsageError"; break;
    case HostError::Kind::FAULT: cls = "FaultError"; break;
    case HostError::Kind::HANG: cls = "HangError"; break;
    case HostError::Kind::CYCLE_LIMIT: cls = "CycleLimitError"; break;
  }
  py::object report = py::none();
  py::object category = py::none();
  if (e.hang()) report = py::str(e.hang()->to_string());
  if (e.fault()) {
    report = py::str(e.fault()->to_string());
    category = py::str(std::string(wsemu::emu::fault_kind_name(e.fault()->kind)));
  }
  py::object exc = errors.attr(cls)(py::str(e.what()), report, category);
  PyErr_SetObject(exc.get_type().ptr(), exc.ptr());
}

}  // namespace

PYBIND11_MODULE(_wsemu, m) {
  m.doc() = "wsemu's host runtime (the C++ SdkRuntime); use the `wsemu` package, not this module";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const HostError& e) {
      raise_host_error(e);
    } catch (const wsemu::emu::FaultError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  py::class_<Session> session(m, "Session");
  // The host-to-device copies (plain, row and column broadcast) take the same arguments.
  using H2dCall = void (SdkRuntime::*)(const std::string&, std::span<const uint32_t>, int, int, int, int, int,
                                       const MemcpyOptions&);
  for (const auto& [method, call] : {std::pair<const char*, H2dCall>{"memcpy_h2d", &SdkRuntime::memcpy_h2d},
                                     {"memcpy_h2d_rowbcast", &SdkRuntime::memcpy_h2d_rowbcast},
                                     {"memcpy_h2d_colbcast", &SdkRuntime::memcpy_h2d_colbcast}})
    session.def(
        method,
        [call](Session& s, const std::string& name, const WordArray& data, int x0, int y0, int w, int h, int elems,
               bool streaming, bool col_major, bool bits16, int stream_color) {
          s.call([&] {
            (s.rt().*call)(name, words_in(data), x0, y0, w, h, elems,
                           memcpy_options(streaming, col_major, bits16, stream_color));
          });
        },
        py::arg("name"), py::arg("data"), py::arg("x0"), py::arg("y0"), py::arg("w"), py::arg("h"), py::arg("elems"),
        py::arg("streaming"), py::arg("col_major"), py::arg("bits16"), py::arg("stream_color") = -1);
  session
      .def(py::init<const std::string&, int, uint64_t, bool, int, std::vector<std::string>>(), py::arg("wsx_path"),
           py::arg("threads") = 1, py::arg("max_cycles") = uint64_t(1'000'000'000), py::arg("backdoor") = false,
           py::arg("channels") = 1, py::arg("profile") = std::vector<std::string>{})
      .def("executable", [](Session& s) { return executable_dict(s.rt().executable()); })
      .def("loaded", [](Session& s) { return s.rt().loaded(); })
      .def("load", [](Session& s) { s.call([&] { s.rt().load(); }); })
      .def("memcpy_d2h",
           [](Session& s, py::array out, const std::string& name, int x0, int y0, int w, int h, int elems,
              bool streaming, bool col_major, bool bits16) {
             // Written in place: a converted copy would silently lose the data.
             if (!out.dtype().is(py::dtype::of<uint32_t>()) || !(out.flags() & py::array::c_style) ||
                 !out.writeable())
               throw py::type_error("memcpy_d2h: the output must be a writeable C-contiguous uint32 array");
             std::span<uint32_t> words(static_cast<uint32_t*>(out.mutable_data()), size_t(out.size()));
             s.call([&] {
               s.rt().memcpy_d2h(words, name, x0, y0, w, h, elems, memcpy_options(streaming, col_major, bits16));
             });
           })
      .def("launch",
           [](Session& s, const std::string& name, const std::vector<uint32_t>& args) {
             s.call([&] { s.rt().launch(name, args); });
           })
      .def("run_until_quiescent", [](Session& s) { return run_result_dict(s.call([&] { return s.rt().run_until_quiescent(); })); })
      .def("run_cycles", [](Session& s, uint64_t n) { return run_result_dict(s.call([&] { return s.rt().run(n); })); })
      .def("stop", [](Session& s) { s.rt().stop(); })
      .def("edge_streams",
           // [(x, y, side "N"/"E"/"S"/"W", color, words (uint32 array), expect)] -> received arrays
           [](Session& s, const std::vector<std::tuple<int, int, std::string, int, WordArray, uint64_t>>& list) {
             std::vector<wsemu::runtime::host::SdkRuntime::EdgeStream> streams;
             for (const auto& [x, y, side, color, words, expect] : list) {
               wsemu::runtime::host::SdkRuntime::EdgeStream st;
               st.x = x;
               st.y = y;
               st.side = side == "N" ? wsemu::emu::Direction::NORTH : side == "E" ? wsemu::emu::Direction::EAST
                         : side == "S" ? wsemu::emu::Direction::SOUTH : wsemu::emu::Direction::WEST;
               st.color = color;
               st.words.assign(words.data(), words.data() + words.size());
               st.expect = expect;
               streams.push_back(std::move(st));
             }
             const auto got = s.call([&] { return s.rt().edge_streams(streams); });
             py::list out;
             for (const auto& w : got) {
               WordArray a(py::ssize_t(w.size()));
               std::copy(w.begin(), w.end(), a.mutable_data());
               out.append(a);
             }
             return out;
           })
      .def("initial_symbol",
           [](Session& s, int x, int y, const std::string& name, const WordArray& words) {
             s.call([&] {
               s.rt().initial_symbol(x, y, name, std::vector<uint32_t>(words.data(), words.data() + words.size()));
               return 0;
             });
           })
      .def("read_symbol",
           [](Session& s, int x, int y, const std::string& name) {
             std::vector<uint32_t> w = s.call([&] { return s.rt().read_symbol(x, y, name); });
             WordArray a(py::ssize_t(w.size()));
             std::copy(w.begin(), w.end(), a.mutable_data());
             return a;
           })
      .def("dump_core", [](Session& s, int fx, int fy) {
        return s.rt().dump_core(fx, fy);  // checks load() and the coordinates
      })
      .def("hang_report", [](Session& s) -> py::object {
        if (!s.rt().loaded()) return py::none();
        wsemu::emu::HangReport r = s.rt().wafer().hang_report();
        return py::str(r.to_string());
      })
      .def("take_log",
           [](Session& s) {
             // The kernel's dprint lines since the last call, one line each (as `wsemu run` shows them).
             py::list lines;
             if (!s.rt().loaded()) return lines;
             for (wsemu::emu::LogLine& l : s.rt().wafer().take_log()) {
               while (!l.text.empty() && l.text.back() == '\n') l.text.pop_back();
               py::dict d;
               d["cycle"] = l.cycle;
               d["x"] = l.x;
               d["y"] = l.y;
               d["text"] = l.text;
               d["line"] = l.to_string();
               lines.append(d);
             }
             return lines;
           })
      .def("cycles", [](Session& s) { return s.rt().cycles(); })
      .def("clock_mhz", [](Session& s) { return s.rt().clock_mhz(); })
      .def("stats_json", [](Session& s) { return s.rt().stats_json().dump(2); })
      .def("start_trace", &Session::start_trace, py::arg("path"), py::arg("events") = "all", py::arg("rect") = "",
           py::arg("colors") = "", py::arg("cycles") = "")
      .def("finish_trace",
           [](Session& s) {
             s.rt();  // not while another thread is inside a call
             return s.finish_trace(nullptr);
           })
      .def("tracing", &Session::tracing)
      .def("trace_info", &Session::trace_info);
}
