// The choice of a GPU's NIC: pure, over a NodeTopology the probes filled.
#include "topology/nic_choice.h"

#include <algorithm>
#include <tuple>

#include "topology/gpu_matrix.h"

namespace strata::topo {

int closestNic(const NodeTopology& topo, int gpu, int package) {
  auto usable = [](const Nic& nic) { return nic.state.empty() || nic.state == "active"; };
  bool anyUsable = std::any_of(topo.nics.begin(), topo.nics.end(), usable);
  bool forGpu = gpu >= 0 && gpu < static_cast<int>(topo.gpus.size());
  // Smaller is closer, compared in order.
  using Key = std::tuple<int, int, int, int>;
  int best = -1;
  Key bestKey;
  for (size_t n = 0; n < topo.nics.size(); ++n) {
    const Nic& nic = topo.nics[n];
    if (anyUsable && !usable(nic)) continue;
    Key key;
    if (forGpu) {
      const PciPlace& place = topo.gpus[gpu].pci;
      int hops = pciHops(place, nic.pci);
      bool sameNuma = place.numa >= 0 && place.numa == nic.pci.numa;
      bool samePackage = place.package >= 0 && place.package == nic.pci.package;
      key = Key(static_cast<int>(pciRelation(place, nic.pci).type), hops < 0 ? 1 << 20 : hops,
                sameNuma ? 0 : 1, samePackage ? 0 : 1);
    } else {
      key = Key(0, 0, 0, package >= 0 && nic.pci.package == package ? 0 : 1);
    }
    if (best < 0 || key < bestKey) {
      best = static_cast<int>(n);
      bestKey = key;
    }
  }
  return best;
}

}  // namespace strata::topo
