// Sockets for the TCP control plane (tcp_bootstrap.h): addresses, the interface choice, and
// listening and connecting within a deadline. Control messages only: a fabric's data never
// travels here (between hosts it goes through MPI or UCX).
//
// The interface choice follows NCCL_SOCKET_IFNAME: STRATA_SOCKET_IFNAME is a comma-separated
// list of interface-name prefixes; a leading '^' excludes those instead, and a leading '='
// (after the '^' if both) makes the names exact. Unset: an interface on the same subnet as the
// address the rank must reach (the id's root), else the first one that is up and is neither
// loopback nor docker*, else loopback. IPv4 and IPv6 both work.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace strata::boot::net {

// An IPv4 or IPv6 socket address (with port), stored whole so it can travel in a unique id.
struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family() const { return ss.ss_family; }
  int port() const;
  void setPort(int port);
  bool isLoopback() const;
  std::string str() const;  // "10.0.0.1:29500", "[fe80::1%eth0]:29500"
};

// STRATA_SOCKET_IFNAME's grammar (NCCL_SOCKET_IFNAME's).
struct IfFilter {
  bool exclude = false;  // '^': names that match are left out
  bool exact = false;    // '=': whole names, not prefixes
  std::vector<std::string> names;
  bool matches(const std::string& ifname) const;
};
StatusOr<IfFilter> parseIfFilter(const std::string& text);

struct Interface {
  std::string name;
  SockAddr addr;   // port 0
  SockAddr mask;   // the netmask, same family
};

// The interfaces that are up and carry an IPv4 or IPv6 address, in the system's order.
StatusOr<std::vector<Interface>> listInterfaces();

// The interface this process listens on (see the top of this file). `reach`: the address it
// must reach, or null. Reads STRATA_SOCKET_IFNAME.
StatusOr<Interface> chooseInterface(const SockAddr* reach);

// "host:port", "[v6addr]:port" or "v6addr" forms are refused unless bracketed; host may be a
// name (resolved) or a literal. The port must be 1..65535.
StatusOr<SockAddr> parseHostPort(const std::string& text);

// A socket descriptor, closed by the destructor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

// A nonblocking listening socket on `addr`; a port of 0 takes a free one, and `addr` is
// updated to the bound address.
StatusOr<Fd> listenOn(SockAddr* addr);

// A connected, nonblocking socket to `addr`. A refused connection is retried every 50 ms while
// `retry` holds (the root may not be listening yet); the thread's deadline bounds the whole.
StatusOr<Fd> connectTo(const SockAddr& addr, bool retry, const std::string& what);

// Accepts one pending connection (nonblocking); an invalid Fd when none is pending.
Fd acceptOne(int listener, SockAddr* peer);

// Nonblocking I/O. Return the bytes moved (0 when the socket would block), or an error; a
// closed peer is kRemoteError "closed" on read.
StatusOr<size_t> readSome(int fd, void* buf, size_t len);
StatusOr<size_t> writeSome(int fd, const void* buf, size_t len);

// Blocking forms over a nonblocking socket, bounded by the thread's deadline: all of `len`
// bytes, or an error naming `what`.
Status writeAll(int fd, const void* buf, size_t len, const std::string& what);
Status readAll(int fd, void* buf, size_t len, const std::string& what);

}  // namespace strata::boot::net
