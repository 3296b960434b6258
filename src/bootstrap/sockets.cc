#include "bootstrap/sockets.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/deadline.h"
#include "common/env.h"

namespace strata::boot::net {
namespace {

std::string errnoText(int err) { return std::strerror(err); }

Status sysError(const std::string& what, int err) {
  return systemError(what + ": " + errnoText(err));
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    out.push_back(text.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool sameSubnet(const Interface& i, const SockAddr& a) {
  if (i.addr.family() != a.family()) return false;
  const auto* x = reinterpret_cast<const unsigned char*>(&i.addr.ss);
  const auto* y = reinterpret_cast<const unsigned char*>(&a.ss);
  const auto* m = reinterpret_cast<const unsigned char*>(&i.mask.ss);
  size_t off = 0, n = 0;
  if (a.family() == AF_INET) {
    off = offsetof(sockaddr_in, sin_addr);
    n = 4;
  } else {
    off = offsetof(sockaddr_in6, sin6_addr);
    n = 16;
  }
  for (size_t k = off; k < off + n; ++k) {
    if ((x[k] & m[k]) != (y[k] & m[k])) return false;
  }
  return true;
}

bool isDocker(const std::string& name) { return name.compare(0, 6, "docker") == 0; }

// One connect attempt, waited for within the deadline. errno-style result in *err (0: connected).
StatusOr<Fd> connectOnce(const SockAddr& addr, int* err, const std::string& what) {
  Fd fd(socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return sysError("socket", errno);
  const int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  *err = 0;
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr.ss), addr.len) == 0) return fd;
  if (errno != EINPROGRESS) {
    *err = errno;
    return Fd();
  }
  deadline::Poll poll;
  for (;;) {
    pollfd p{fd.get(), POLLOUT, 0};
    const int n = ::poll(&p, 1, 50);
    if (n < 0 && errno != EINTR) return sysError("poll (connect to " + addr.str() + ")", errno);
    if (n > 0) break;
    if (poll.expiredNow()) return deadline::expiredError("connecting to " + what);
  }
  int soErr = 0;
  socklen_t len = sizeof(soErr);
  getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &soErr, &len);
  *err = soErr;
  if (soErr != 0) return Fd();
  return fd;
}

}  // namespace

int SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

void SockAddr::setPort(int port) {
  const auto p = htons(static_cast<uint16_t>(port));
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = p;
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = p;
}

bool SockAddr::isLoopback() const {
  if (family() == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr) >> 24) == 127;
  }
  if (family() == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr);
  }
  return false;
}

std::string SockAddr::str() const {
  char host[NI_MAXHOST] = "?";
  getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, host, sizeof(host), nullptr, 0,
              NI_NUMERICHOST);
  const std::string h = family() == AF_INET6 ? "[" + std::string(host) + "]" : host;
  return h + ":" + std::to_string(port());
}

bool IfFilter::matches(const std::string& ifname) const {
  bool hit = false;
  for (const std::string& n : names) {
    hit = hit || (exact ? ifname == n : ifname.compare(0, n.size(), n) == 0);
  }
  return exclude ? !hit : hit;
}

StatusOr<IfFilter> parseIfFilter(const std::string& text) {
  IfFilter f;
  std::string rest = text;
  if (!rest.empty() && rest[0] == '^') {
    f.exclude = true;
    rest.erase(0, 1);
  }
  if (!rest.empty() && rest[0] == '=') {
    f.exact = true;
    rest.erase(0, 1);
  }
  for (const std::string& n : splitList(rest)) {
    if (n.empty() || n.size() >= IFNAMSIZ || n.find_first_of(" \t^=") != std::string::npos) {
      return invalidArgument("STRATA_SOCKET_IFNAME=" + text +
                             ": expected a comma-separated list of interface names or prefixes, "
                             "optionally after ^ (exclude) and = (exact names), e.g. eth,ib or "
                             "^docker,lo or =eth0");
    }
    f.names.push_back(n);
  }
  return f;
}

StatusOr<std::vector<Interface>> listInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return sysError("getifaddrs", errno);
  std::vector<Interface> out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_UP) == 0) continue;
    const int fam = i->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    Interface itf;
    itf.name = i->ifa_name;
    const socklen_t len = fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&itf.addr.ss, i->ifa_addr, len);
    itf.addr.len = len;
    if (i->ifa_netmask != nullptr) std::memcpy(&itf.mask.ss, i->ifa_netmask, len);
    itf.mask.len = len;
    out.push_back(itf);
  }
  freeifaddrs(list);
  return out;
}

// "lo, eth0": each name once, in the order the system lists them (an interface with an IPv4
// and an IPv6 address is listed twice by getifaddrs).
std::string interfaceNames(const std::vector<Interface>& all) {
  std::vector<std::string> seen;
  for (const Interface& i : all) {
    if (std::find(seen.begin(), seen.end(), i.name) == seen.end()) seen.push_back(i.name);
  }
  std::string names;
  for (const std::string& n : seen) names += (names.empty() ? "" : ", ") + n;
  return names;
}

StatusOr<Interface> chooseInterface(const SockAddr* reach) {
  STRATA_ASSIGN_OR_RETURN(std::vector<Interface> all, listInterfaces());
  const std::string spec = env::get(env::var::STRATA_SOCKET_IFNAME);
  if (!spec.empty()) {
    STRATA_ASSIGN_OR_RETURN(IfFilter f, parseIfFilter(spec));
    const Interface* first = nullptr;
    for (const Interface& i : all) {
      if (!f.matches(i.name)) continue;
      if (reach != nullptr && sameSubnet(i, *reach)) return i;
      if (first == nullptr && (reach == nullptr || i.addr.family() == reach->family())) first = &i;
    }
    if (first != nullptr) return *first;
    return invalidArgument("STRATA_SOCKET_IFNAME=" + spec + " matches no interface that is up" +
                           (reach != nullptr ? " (with the family of " + reach->str() + ")" : "") +
                           "; this host has: " + interfaceNames(all));
  }
  if (reach != nullptr) {
    for (const Interface& i : all) {
      if (sameSubnet(i, *reach)) return i;
    }
    // The root is loopback: only loopback reaches it.
    if (reach->isLoopback()) {
      for (const Interface& i : all) {
        if (i.addr.isLoopback() && i.addr.family() == reach->family()) return i;
      }
    }
  }
  for (const Interface& i : all) {
    if (!i.addr.isLoopback() && !isDocker(i.name) &&
        (reach == nullptr || i.addr.family() == reach->family())) {
      // Link-local IPv6 addresses need the peer to know our scope: prefer any other.
      if (i.addr.family() == AF_INET6 &&
          IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(&i.addr.ss)->sin6_addr)) {
        continue;
      }
      return i;
    }
  }
  for (const Interface& i : all) {
    if (i.addr.isLoopback()) return i;
  }
  return systemError("no network interface is up (not even loopback)");
}

StatusOr<SockAddr> parseHostPort(const std::string& text) {
  std::string host, port;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return invalidArgument("'" + text + "': expected [ipv6-address]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || text.find(':') != colon) {
      return invalidArgument("'" + text + "': expected host:port (IPv6 addresses in brackets: "
                             "[::1]:29500)");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  const long p = port.empty() ? -1 : std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 1 || p > 65535) {
    return invalidArgument("'" + text + "': the port must be a number in 1..65535");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    return invalidArgument("'" + text + "': cannot resolve host '" + host +
                           "': " + gai_strerror(rc));
  }
  SockAddr a;
  std::memcpy(&a.ss, res->ai_addr, res->ai_addrlen);
  a.len = static_cast<socklen_t>(res->ai_addrlen);
  freeaddrinfo(res);
  a.setPort(static_cast<int>(p));
  return a;
}

void Fd::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

StatusOr<Fd> listenOn(SockAddr* addr) {
  Fd fd(socket(addr->family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return sysError("socket", errno);
  const int one = 1;
  // A fixed port (STRATA_COMM_ID) is reused at once after an earlier job on it.
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr->ss), addr->len) != 0) {
    return sysError("bind to " + addr->str(), errno);
  }
  if (listen(fd.get(), SOMAXCONN) != 0) return sysError("listen on " + addr->str(), errno);
  socklen_t len = sizeof(addr->ss);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr->ss), &len) != 0) {
    return sysError("getsockname", errno);
  }
  addr->len = len;
  return fd;
}

StatusOr<Fd> connectTo(const SockAddr& addr, bool retry, const std::string& what) {
  deadline::DefaultScope scope;
  for (;;) {
    int err = 0;
    STRATA_ASSIGN_OR_RETURN(Fd fd, connectOnce(addr, &err, what));
    if (fd.valid()) return fd;
    const bool transient = err == ECONNREFUSED || err == ECONNRESET || err == ETIMEDOUT ||
                           err == EHOSTUNREACH || err == ENETUNREACH || err == EAGAIN;
    if (!retry || !transient) return sysError("connect to " + what + " at " + addr.str(), err);
    if (deadline::Scope::expired()) {
      return deadline::expiredError("connecting to " + what + " at " + addr.str() + " (" +
                                    errnoText(err) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Fd acceptOne(int listener, SockAddr* peer) {
  peer->len = sizeof(peer->ss);
  const int fd = accept4(listener, reinterpret_cast<sockaddr*>(&peer->ss), &peer->len,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return Fd();
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return Fd(fd);
}

StatusOr<size_t> readSome(int fd, void* buf, size_t len) {
  for (;;) {
    const ssize_t n = recv(fd, buf, len, 0);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return Status(Code::kRemoteError, "connection closed by the peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
    return Status(Code::kRemoteError, std::string("recv: ") + errnoText(errno));
  }
}

StatusOr<size_t> writeSome(int fd, const void* buf, size_t len) {
  for (;;) {
    const ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
    return Status(Code::kRemoteError, std::string("send: ") + errnoText(errno));
  }
}

namespace {

// Moves all of `len` bytes with `step` (readSome or writeSome), polling for `events`.
template <typename Step>
Status moveAll(int fd, size_t len, short events, const std::string& what, Step step) {
  deadline::DefaultScope scope;
  size_t done = 0;
  while (done < len) {
    STRATA_ASSIGN_OR_RETURN(size_t n, step(done));
    done += n;
    if (n > 0) continue;
    pollfd p{fd, events, 0};
    if (::poll(&p, 1, 50) < 0 && errno != EINTR) return sysError("poll (" + what + ")", errno);
    if (deadline::Scope::expired()) return deadline::expiredError(what);
  }
  return Status::ok();
}

}  // namespace

Status writeAll(int fd, const void* buf, size_t len, const std::string& what) {
  const auto* p = static_cast<const char*>(buf);
  return moveAll(fd, len, POLLOUT, what, [&](size_t done) {
    return writeSome(fd, p + done, len - done);
  });
}

Status readAll(int fd, void* buf, size_t len, const std::string& what) {
  auto* p = static_cast<char*>(buf);
  return moveAll(fd, len, POLLIN, what, [&](size_t done) {
    StatusOr<size_t> n = readSome(fd, p + done, len - done);
    if (!n.isOk()) return StatusOr<size_t>(Status(n.status().code(), what + ": " +
                                                  n.status().message()));
    return n;
  });
}

}  // namespace strata::boot::net
