// Topology files (STRATA_TOPO_FILE): a YAML description that replaces detection.
//
//   levels:            # innermost first; the sizes multiply to the number of ranks
//     - {name: socket, size: 2, fabric: mpi}
//     - {name: node,   size: 2, fabric: mpi}
//
// Each level is a map with these keys:
//   name    required; unique; letters, digits, '_', '-' and '.'.
//   size    required; a plain decimal integer in 1..1048576 (a quoted "2" is a string).
//   fabric  optional, default "mpi"; must be one of the fabrics this build knows (the default
//           is checked too).
//   link, bandwidth_GBps, latency_us, link_sharing
//           optional: what the level's groups talk over, for the cost model. link is a link
//           kind (nvlink, nvswitch, pcie, smp, shm, infiniband, roce, ethernet, efa),
//           bandwidth_GBps the per-direction bandwidth in GB/s, latency_us the per-message
//           latency, link_sharing how many of the level's groups share one link at once.
//           `strata-topo --save` writes them.
// The top level may also say what the ranks run on, for strata-plan's NCCL baseline only (the
// library itself ignores them):
//   gpu     volta, ampere, hopper or blackwell: the GPU generation whose constants NCCL's cost
//           model uses (decompose/nccl_model.h); volta stands for every generation before it.
//   cpu     intel or amd: NCCL's per-call network overhead differs.
// Any other key, at the top or in a level, is refused, as is a key given twice: a typo must not
// be silently ignored. Comments and both block and flow style are fine; see configs/topologies/.
//
// Errors are kInvalidArgument and name the file, the line (where known) and the problem, e.g.
//   "topology file configs/x.yaml:7: level 'node' has size 0; sizes must be positive";
// a file that is not there or cannot be read is kSystemError ("topology file x.yaml: file not
// found").
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "topology/hierarchy.h"

namespace strata::topo {

struct TopoFile {
  std::vector<Level> levels;
  std::vector<int> sizes;  // sizes[l]: children of each level-l group
  std::string gpu;         // the `gpu` key ("" when absent)
  std::string cpu;         // the `cpu` key ("" when absent)
};

// Parses YAML text. `source` names it in messages (a path, or "<string>"). `knownFabrics` lists
// the fabric names this build can run; any other is refused.
StatusOr<TopoFile> parseTopoFile(const std::string& text, const std::string& source,
                                 const std::vector<std::string>& knownFabrics);

// Reads and parses the file at `path`. Logs a failure once (WARN, TOPO); callers only
// propagate it.
StatusOr<TopoFile> loadTopoFile(const std::string& path,
                                const std::vector<std::string>& knownFabrics);

// Checks the file against a communicator of `nranks` (the sizes must multiply to it) and builds
// its regular hierarchy. `source` names the file in messages. Logs a failure once (WARN, TOPO).
StatusOr<Hierarchy> hierarchyFromTopoFile(const TopoFile& file, const std::string& source,
                                          int nranks);

// The YAML text of a file, which parseTopoFile reads back to the same TopoFile.
std::string formatTopoFile(const TopoFile& file);

}  // namespace strata::topo
