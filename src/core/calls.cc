#include "core/calls.h"

#include "core/device_side.h"
#include "core/dispatch.h"
#include "core/executor.h"

namespace strata::core {

Status issue(Comm& c, const Call& call, strataStream_t stream) {
  STRATA_ASSIGN_OR_RETURN(Place place, placeOf(c, call.send, call.recv));
  if (place == Place::kDevice) return submitDevice(c, call, stream);
  STRATA_ASSIGN_OR_RETURN(Prepared p, prepare(c, call));
  // A communicator's calls run in call order on every rank: the queued ones first.
  STRATA_RETURN_IF_ERROR(c.engine().drain());
  HostExecutor x(c.scratch());
  return run(c, x, p);
}

}  // namespace strata::core
