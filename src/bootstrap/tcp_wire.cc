#include "bootstrap/tcp_wire.h"

#include <chrono>
#include <cstring>

namespace strata::boot::wire {

AddrWire toWire(const net::SockAddr& a) {
  AddrWire w;
  w.len = a.len;
  std::memcpy(w.bytes, &a.ss, a.len <= sizeof(w.bytes) ? a.len : sizeof(w.bytes));
  return w;
}

StatusOr<net::SockAddr> fromWire(const AddrWire& w) {
  net::SockAddr a;
  if (w.len == 0 || w.len > sizeof(w.bytes)) {
    return invalidArgument("an address record of " + std::to_string(w.len) + " bytes");
  }
  std::memcpy(&a.ss, w.bytes, w.len);
  a.len = w.len;
  if (a.family() != AF_INET && a.family() != AF_INET6) {
    return invalidArgument("an address record of family " + std::to_string(a.family()));
  }
  return a;
}

std::string helloProblem(const Hello& h, const Secret& secret, Kind kind, int nranks) {
  if (h.magic != kMagic) return "not a strata control-plane connection";
  if (h.secret != secret) return "wrong secret (a rank of another job or id?)";
  if (h.kind != static_cast<uint32_t>(kind)) return "unexpected connection kind";
  if (nranks > 0 && h.nranks != nranks) {
    return "job size " + std::to_string(h.nranks) + ", expected " + std::to_string(nranks);
  }
  if (h.nranks <= 0 || h.rank < 0 || h.rank >= h.nranks) {
    return "rank " + std::to_string(h.rank) + " of " + std::to_string(h.nranks);
  }
  return "";
}

StatusOr<bool> Pending::fill(size_t want) {
  while (buf.size() < want) {
    char tmp[256];
    const size_t ask = want - buf.size() < sizeof(tmp) ? want - buf.size() : sizeof(tmp);
    STRATA_ASSIGN_OR_RETURN(size_t n, net::readSome(fd.get(), tmp, ask));
    if (n == 0) return false;
    buf.insert(buf.end(), tmp, tmp + n);
  }
  return true;
}

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace strata::boot::wire
