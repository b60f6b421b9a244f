// TLS between the nodes (runtime/cluster/tls.hpp): a cluster whose MemoryX and SwarmX nodes serve
// TLS with certificates of a test CA trains bit-identically to the reference; a client that
// speaks plain TCP, or trusts another CA, is refused with a clear error; bad TLS files are a usage
// error (exit 2) of the node. The certificates are made by the openssl command for each run.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/cluster/cluster_test_support.hpp"

namespace wsemu::cluster::testing {
namespace {

namespace fs = std::filesystem;

int run(const std::string& command, std::string* output = nullptr) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buffer{};
  std::string text;
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) text.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (output) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A CA, a node certificate it signed, and a second CA that signed nothing of ours.
struct TestPki {
  fs::path dir;
  fs::path ca, node_cert, node_key, other_ca;
  TestPki() {
    dir = fs::temp_directory_path() / fmt::format("wsemu-tls-test-{}", ::getpid());
    fs::remove_all(dir);
    fs::create_directories(dir);
    ca = dir / "ca.pem";
    node_cert = dir / "node.pem";
    node_key = dir / "node.key";
    other_ca = dir / "other-ca.pem";
    const std::string d = dir.string();
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string commands[] = {
        fmt::format("openssl req -x509 {} -keyout {}/ca.key -out {}/ca.pem -days 2 -subj /CN=wsemu-test-ca", ec, d,
                    d),
        fmt::format("openssl req {} -keyout {}/node.key -out {}/node.csr -subj /CN=127.0.0.1", ec, d, d),
        fmt::format("openssl x509 -req -in {0}/node.csr -CA {0}/ca.pem -CAkey {0}/ca.key -CAcreateserial "
                    "-out {0}/node.pem -days 2",
                    d),
        fmt::format("openssl req -x509 {} -keyout {}/other.key -out {}/other-ca.pem -days 2 -subj /CN=other-ca", ec,
                    d, d),
    };
    for (const std::string& c : commands) {
      std::string out;
      if (run(c, &out) != 0) throw std::runtime_error("making the test certificates failed: " + c + "\n" + out);
    }
  }
  ~TestPki() { fs::remove_all(dir); }
  std::vector<std::string> serving() const { return {"--tls-cert", node_cert.string(), "--tls-key", node_key.string()}; }
};

LocalClusterOptions tls_cluster(const TestPki& pki, const ReferenceOptimizer& optimizer) {
  LocalClusterOptions options = cluster_options(2, 2, optimizer);
  for (const std::string& a : pki.serving()) options.memoryx_args.push_back(a);
  options.swarmx_args = pki.serving();  // SwarmX serves its children with TLS ...
  options.swarmx_args.insert(options.swarmx_args.end(), {"--tls-ca", pki.ca.string()});  // ... and dials up with it
  return options;
}

TEST(ClusterTls, ATlsClusterTrainsBitIdenticallyToTheReference) {
  Watchdog watchdog(std::chrono::seconds(90), "TLS cluster run");
  const TestPki pki;
  const ReferenceOptimizer optimizer{.kind = "adam", .lr = 0.01f};
  const SyntheticModel model = SyntheticModel::small(31);
  LocalCluster cluster(tls_cluster(pki, optimizer));
  start_with_model(cluster, model, optimizer, pki.ca.string());
  LeafRunOptions options;
  options.steps = 12;
  options.tls_ca = pki.ca.string();
  const LeafRunResult result = run_leaves(cluster, model, 2, options);
  ASSERT_TRUE(result.errors.empty()) << result.errors.front();
  EXPECT_GT(result.weight_bytes_received, 0u);
  EXPECT_TRUE(bit_identical(read_model(cluster, model, pki.ca.string()),
                            reference_train(model, optimizer, 2, 2, options.steps)));
}

TEST(ClusterTls, PlainOrUntrustingClientsAreRefusedWithAClearError) {
  Watchdog watchdog(std::chrono::seconds(90), "TLS refusals");
  const TestPki pki;
  ReferenceOptimizer optimizer;
  LocalCluster cluster(tls_cluster(pki, optimizer));
  cluster.start();
  auto connect_error = [&](const std::string& tls_ca) -> std::string {
    ClientOptions o = orchestrator_options(cluster, cluster.memoryx_addresses().front());
    o.tls_ca = tls_ca;
    o.connect_timeout = std::chrono::milliseconds(3000);
    try {
      ClusterClient client(o);
      client.connect();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  const std::string untrusted = connect_error(pki.other_ca.string());
  EXPECT_NE(untrusted.find("TLS handshake failed"), std::string::npos) << untrusted;
  EXPECT_NE(untrusted.find("certificate verify failed"), std::string::npos) << untrusted;
  const std::string plain = connect_error("");
  EXPECT_NE(plain.find("a node that serves TLS needs --tls-ca"), std::string::npos) << plain;
  EXPECT_EQ(connect_error(pki.ca.string()), "");  // the same node, with the right CA
}

TEST(ClusterTls, BadTlsFilesAreUsageErrors) {
  const TestPki pki;
  const fs::path bin = fs::path(WSEMU_TEST_BIN_DIR);
  const std::string memoryx = "timeout 10 " + (bin / "wsemu-memoryx").string() + " --listen 127.0.0.1:0 --store " +
                              (pki.dir / "store").string();
  std::string out;
  ::setenv("WSEMU_TOKEN", "0123456789abcdef0123456789abcdef", 1);
  EXPECT_EQ(run(memoryx + " --tls-cert " + (pki.dir / "missing.pem").string() + " --tls-key " +
                    pki.node_key.string(), &out), 2) << out;
  EXPECT_NE(out.find("missing.pem: no such file"), std::string::npos) << out;
  EXPECT_EQ(run(memoryx + " --tls-cert " + pki.node_cert.string(), &out), 2) << out;
  EXPECT_NE(out.find("--tls-cert needs --tls-key"), std::string::npos) << out;
  EXPECT_EQ(run(memoryx + " --tls-cert " + pki.node_cert.string() + " --tls-key " + (pki.dir / "other.key").string(),
                &out), 2) << out;
  EXPECT_NE(out.find("it must be the private key of --tls-cert"), std::string::npos) << out;
  EXPECT_EQ(run(memoryx + " --tls-cert " + pki.node_cert.string() + " --tls-key " + pki.node_key.string() +
                    " --tls-ca " + pki.node_key.string(), &out), 2) << out;
  EXPECT_NE(out.find("--tls-ca"), std::string::npos) << out;
}

}  // namespace
}  // namespace wsemu::cluster::testing
