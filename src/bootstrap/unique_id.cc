#include "bootstrap/unique_id.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "bootstrap/tcp_root.h"
#include "common/env.h"

namespace strata::boot {
namespace {

// The layout inside the 128 bytes. A version change makes older ids fail to decode.
struct IdLayout {
  char magic[8];  // "strataID"
  uint32_t version;
  uint32_t flags;  // bit 0: formed from STRATA_COMM_ID
  uint32_t addrLen;
  uint8_t addr[28];
  uint8_t secret[32];
};
static_assert(sizeof(IdLayout) <= kUniqueIdBytes, "the id fits ncclUniqueId's 128 bytes");
constexpr char kIdMagic[8] = {'s', 't', 'r', 'a', 't', 'a', 'I', 'D'};
constexpr uint32_t kIdVersion = 1;

// The secret of an id formed from STRATA_COMM_ID: the same on every rank, so no secret at all
// against someone who knows the address; it still keeps apart jobs that reuse a port.
Secret envSecret(const std::string& text) {
  Secret s{};
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t k = 0; k < s.size(); ++k) {
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
    h = (h ^ k) * 0x100000001b3ull;
    s[k] = static_cast<uint8_t>(h >> 56);
  }
  return s;
}

}  // namespace

void encodeId(const UniqueId& id, char out[kUniqueIdBytes]) {
  std::memset(out, 0, kUniqueIdBytes);
  IdLayout l{};
  std::memcpy(l.magic, kIdMagic, sizeof(l.magic));
  l.version = kIdVersion;
  l.flags = id.fromEnv ? 1u : 0u;
  l.addrLen = id.root.len;
  std::memcpy(l.addr, &id.root.ss, id.root.len <= sizeof(l.addr) ? id.root.len : sizeof(l.addr));
  std::memcpy(l.secret, id.secret.data(), sizeof(l.secret));
  std::memcpy(out, &l, sizeof(l));
}

StatusOr<UniqueId> decodeId(const char in[kUniqueIdBytes]) {
  IdLayout l{};
  std::memcpy(&l, in, sizeof(l));
  if (std::memcmp(l.magic, kIdMagic, sizeof(kIdMagic)) != 0) {
    return invalidArgument(
        "the unique id is not one strataGetUniqueId (or ncclGetUniqueId of strata's drop-in) "
        "made: check that every rank received the root's 128 bytes unchanged");
  }
  if (l.version != kIdVersion) {
    return invalidArgument("the unique id has version " + std::to_string(l.version) +
                           "; this library reads version " + std::to_string(kIdVersion) +
                           " (ranks run different strata builds?)");
  }
  UniqueId id;
  if (l.addrLen == 0 || l.addrLen > sizeof(l.addr)) {
    return invalidArgument("the unique id holds no valid root address");
  }
  std::memcpy(&id.root.ss, l.addr, l.addrLen);
  id.root.len = l.addrLen;
  if (id.root.family() != AF_INET && id.root.family() != AF_INET6) {
    return invalidArgument("the unique id holds no valid root address");
  }
  std::memcpy(id.secret.data(), l.secret, sizeof(l.secret));
  id.fromEnv = (l.flags & 1u) != 0;
  return id;
}

Status randomBytes(void* out, size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return systemError(std::string("getrandom: ") + std::strerror(errno));
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return Status::ok();
}

StatusOr<UniqueId> makeUniqueId() {
  UniqueId id;
  const std::string commId = env::get(env::var::STRATA_COMM_ID);
  if (!commId.empty()) {
    StatusOr<net::SockAddr> root = net::parseHostPort(commId);
    if (!root.isOk()) return invalidArgument("STRATA_COMM_ID=" + root.status().message());
    id.root = root.take();
    id.secret = envSecret(id.root.str());
    id.fromEnv = true;
    return id;
  }
  STRATA_ASSIGN_OR_RETURN(net::Interface itf, net::chooseInterface(nullptr));
  id.root = itf.addr;
  id.root.setPort(0);
  STRATA_RETURN_IF_ERROR(randomBytes(id.secret.data(), id.secret.size()));
  STRATA_RETURN_IF_ERROR(startRoot(&id.root, id.secret));
  return id;
}

}  // namespace strata::boot
