// Optional TLS for the cluster's connections, for nodes on several hosts: Boost.Asio's SSL layer
// over OpenSSL (Debian libssl-dev). A node that is given a certificate and key serves TLS only;
// a side that is given a CA file connects with TLS only, and refuses a peer whose certificate
// does not chain to that CA. The token handshake (handshake.hpp) runs inside TLS as without it:
// TLS adds confidentiality and the server's identity; the token still decides who joins.
//
// Contract: the context makers read and check the PEM files now and throw ConfigError naming
// the flag and the file (missing, unreadable, not PEM, a key that does not match the
// certificate); they return null when the files that enable TLS on that side are not given.
// TLS 1.2 or newer; the peer's host name is not checked (cluster nodes are often addressed by
// IP): the cluster's own CA is the trust anchor, so use a CA that signs only cluster nodes.
#pragma once

// clang-format off
#include <utility>  // before asio: Boost 1.74 asio under C++20 with GCC 12
#include <boost/asio/ssl.hpp>
// clang-format on
#include <memory>
#include <string>

namespace wsemu::cluster {

struct TlsFiles {
  std::string cert;  // --tls-cert: PEM certificate chain this node presents when it serves
  std::string key;   // --tls-key: its PEM private key
  std::string ca;    // --tls-ca: PEM CA bundle a node it connects to must chain to
};

// The listening side's context: null without --tls-cert (a key alone is an error).
std::shared_ptr<boost::asio::ssl::context> server_tls_context(const TlsFiles& files);
// The connecting side's context: null without --tls-ca.
std::shared_ptr<boost::asio::ssl::context> client_tls_context(const TlsFiles& files);

}  // namespace wsemu::cluster
