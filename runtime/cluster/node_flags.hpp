// The command line every cluster node process shares: the flags of NodeOptions (listen address,
// token file, stats file, port file, frame and queue limits, name) plus logging, and the process
// frame around a node's run.
//
// Contract: add_to() registers the flags on a CLI11 app with the defaults already in the struct;
// apply_to() fills NodeOptions and throws ConfigError naming the flag on a bad value. run_node()
// installs the logger (stderr, plus --log-file) and lets no exception escape: a ConfigError
// exits 2, anything else 1, each with one line on stderr prefixed by the program's name.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "runtime/cluster/node_listener.hpp"

namespace wsemu::cluster {

struct NodeFlags {
  // The flags' defaults for listen address and name are the role's (MemoryXOptions, ...).
  explicit NodeFlags(const NodeOptions& role_defaults)
      : listen(role_defaults.listen.to_string()), name(role_defaults.name) {}

  std::string listen;
  std::string token_file;
  std::string stats_file;
  uint32_t stats_interval_ms = 1000;
  std::string port_file;
  std::string max_frame = "64M";
  std::string queue_bytes = "8M";
  uint32_t max_connections = 1024;
  uint32_t max_unauthenticated = 64;
  std::string name;
  std::string log_level = "info";
  std::string log_file;
  TlsFiles tls;

  // `queue_bytes_meaning`: what a full outgoing queue means for this role (--help text).
  void add_to(CLI::App& app, const std::string& queue_bytes_meaning);
  void apply_to(NodeOptions& options) const;
};

int run_node(const std::string& program, const NodeFlags& flags, const std::function<int()>& body);

}  // namespace wsemu::cluster
