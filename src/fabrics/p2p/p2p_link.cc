#include "fabrics/p2p/p2p_link.h"

namespace strata::fabric::p2p {

Status sendRecv(Link& link, Channel ch, int to, const void* sendBuf, size_t sendBytes, int from,
                void* recvBuf, size_t recvBytes, const char* what) {
  STRATA_RETURN_IF_ERROR(link.postRecv(ch, from, recvBuf, recvBytes));
  STRATA_RETURN_IF_ERROR(link.postSend(ch, to, sendBuf, sendBytes));
  return link.wait(ch, what);
}

}  // namespace strata::fabric::p2p
