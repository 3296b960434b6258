// The TCP control plane's messages (tcp_root.h, tcp_world.h). Native byte order: every member
// of a job runs on the same architecture (the magic fails on a mismatch rather than garbling).
//
// Every connection starts with a Hello carrying the id's secret. The rendezvous root and the
// members read a Hello from a new connection without blocking anything else, and drop the
// connection, with a warning naming its address, when the bytes are not a Hello with the
// secret (a stranger, a port scanner, an old job's rank): such a connection never reaches the
// job's state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/sockets.h"
#include "bootstrap/unique_id.h"

namespace strata::boot::wire {

constexpr uint64_t kMagic = 0x3130617461727473ull;  // "strata01" read little-endian
enum class Kind : uint32_t { kRegister = 1, kPeer = 2 };

struct Hello {
  uint64_t magic = kMagic;
  Secret secret{};
  uint32_t kind = 0;
  int32_t rank = -1;
  int32_t nranks = 0;
  uint32_t reserved = 0;
};

// A socket address as it travels (a sockaddr_in or sockaddr_in6, whole).
struct AddrWire {
  uint32_t len = 0;
  uint8_t bytes[28] = {};
};
static_assert(sizeof(AddrWire) == 32, "an address record is 32 bytes");
AddrWire toWire(const net::SockAddr& a);
StatusOr<net::SockAddr> fromWire(const AddrWire& w);

// The root's answer to a Register: status 0 and nranks AddrWire; or a message with status 1 (a
// launch mistake: strataInvalidUsage) or 2 (the rendezvous timed out: strataRemoteError).
struct ReplyHeader {
  uint32_t status = 0;
  uint32_t bytes = 0;
};

// What follows the Hello on a member-to-member connection: frames.
struct FrameHeader {
  uint64_t group = 0;
  uint64_t tag = 0;
  uint64_t bytes = 0;
};
// Control messages are small; anything larger is a corrupted stream.
constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 31;

// Why `h` is not a valid Hello of kind `kind` for this secret and job size ("" when valid).
std::string helloProblem(const Hello& h, const Secret& secret, Kind kind, int nranks);

// The root and the members drop a connection that sent no Hello within kHelloSeconds, and the
// oldest unidentified one beyond kMaxPending: strangers never hold more than that.
constexpr double kHelloSeconds = 30;
constexpr size_t kMaxPending = 256;

// A connection whose Hello is still arriving: bytes are read without blocking until `want`.
struct Pending {
  net::Fd fd;
  net::SockAddr peer;
  std::vector<char> buf;
  double since = 0;  // seconds (steady clock) when accepted
  // Reads what is there; true once `want` bytes are in buf. An error: the peer closed or
  // broke the connection.
  StatusOr<bool> fill(size_t want);
};

double nowSeconds();

}  // namespace strata::boot::wire
