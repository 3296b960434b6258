// RDMA ports in sysfs: what each InfiniBand, RoCE or EFA port of the machine reports (state,
// rate, link layer), put on the NodeTopology's NICs. The parsing of each file is in detail::,
// which tests run on a fake tree.
#include "topology/rdma_probe.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "common/log.h"
#include "common/strings.h"
#include "topology/gpu_matrix.h"

namespace strata::topo {
namespace {

namespace fs = std::filesystem;

// The first line of a small sysfs file; "" when it cannot be read.
std::string readFirstLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return trim(line);
}

// The last component of a symlink's target ("../../../0000:3b:00.0" -> "0000:3b:00.0").
std::string linkTargetName(const fs::path& link) {
  std::error_code ec;
  fs::path target = fs::read_symlink(link, ec);
  if (ec) return "";
  return target.filename().string();
}

// The entries of a directory, in name order so that probes are repeatable.
std::vector<fs::path> listDirectory(const fs::path& dir, std::error_code* ec) {
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, *ec), end; !*ec && it != end; it.increment(*ec)) {
    entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

// Puts one port's facts on the NIC of that name and port. A NIC hwloc found knows its device
// but not its port (port 0): the first port claims it, later ports become NICs of their own at
// the same PCI place.
void recordPort(const std::string& device, int port, const std::string& busid, const Nic& facts,
                NodeTopology* topo) {
  int target = -1, sameDevice = -1;
  for (size_t i = 0; i < topo->nics.size() && target < 0; ++i) {
    const Nic& nic = topo->nics[i];
    if (nic.name != device) continue;
    if (nic.port == port) target = static_cast<int>(i);
    if (sameDevice < 0) sameDevice = static_cast<int>(i);
  }
  if (target < 0 && sameDevice >= 0 && topo->nics[sameDevice].port == 0) target = sameDevice;
  if (target < 0) {
    Nic nic;
    nic.name = device;
    if (sameDevice >= 0) nic.pci = topo->nics[sameDevice].pci;
    topo->nics.push_back(nic);
    target = static_cast<int>(topo->nics.size()) - 1;
  }
  Nic& nic = topo->nics[target];
  nic.port = port;
  nic.type = facts.type;
  nic.state = facts.state;
  if (facts.rateGbps > 0) nic.rateGbps = facts.rateGbps;
  if (nic.pci.busid.empty()) nic.pci.busid = busid;
}

}  // namespace

Status probeInfinibandSysfs(const std::string& root, NodeTopology* topo) {
  if (topo == nullptr) return invalidArgument("probeInfinibandSysfs: null topology");
  fs::path dir = fs::path(root) / "class" / "infiniband";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    STRATA_TRACE(kSubsysTopo, "sysfs: no %s, no rdma ports", dir.c_str());
    return Status::ok();
  }
  std::vector<fs::path> devices = listDirectory(dir, &ec);
  if (ec) {
    STRATA_WARN(kSubsysTopo, "sysfs: cannot list %s: %s", dir.c_str(), ec.message().c_str());
    return systemError("cannot list " + dir.string() + ": " + ec.message());
  }
  for (const fs::path& device : devices) {
    std::string name = device.filename().string();
    std::string busid = linkTargetName(device / "device");
    busid = isBusid(busid) ? normalizeBusid(busid) : "";
    std::string driver = linkTargetName(device / "device" / "driver");
    std::error_code portError;
    std::vector<fs::path> ports = listDirectory(device / "ports", &portError);
    if (portError) {
      STRATA_TRACE(kSubsysTopo, "sysfs: %s has no readable ports: %s", name.c_str(),
                   portError.message().c_str());
      continue;
    }
    for (const fs::path& portDir : ports) {
      std::string number = portDir.filename().string();
      if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) continue;
      int port = std::atoi(number.c_str());
      Nic facts;
      facts.state = detail::parsePortState(readFirstLine(portDir / "state"));
      facts.rateGbps = detail::parsePortRate(readFirstLine(portDir / "rate"));
      facts.type = detail::nicTypeOf(readFirstLine(portDir / "link_layer"), name, driver);
      recordPort(name, port, busid, facts, topo);
      STRATA_INFO(kSubsysTopo, "sysfs: %s port %d (%s): %s, %s, %g Gbit/s", name.c_str(), port,
                  busid.empty() ? "no pci device" : busid.c_str(), facts.type.c_str(),
                  facts.state.empty() ? "state unknown" : facts.state.c_str(), facts.rateGbps);
    }
  }
  return Status::ok();
}

namespace detail {

std::string parsePortState(const std::string& text) {
  size_t colon = text.find(':');
  return lower(trimView(colon == std::string::npos ? text : text.substr(colon + 1)));
}

double parsePortRate(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  double rate = std::strtod(begin, &end);
  return end == begin || !(rate > 0) ? 0 : rate;
}

std::string nicTypeOf(const std::string& linkLayer, const std::string& device,
                      const std::string& driver) {
  // EFA reports no useful link layer; its driver and device names say what it is.
  if (driver == "efa" || device.rfind("efa", 0) == 0) return "efa";
  std::string layer = lower(linkLayer);
  // Kernels before link_layer existed (2.6.x) only knew InfiniBand.
  if (layer.empty() || layer == "infiniband") return "infiniband";
  if (layer == "ethernet") return "roce";
  return "unknown";
}

}  // namespace detail

}  // namespace strata::topo
