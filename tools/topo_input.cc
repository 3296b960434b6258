#include "topo_input.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "topology/hwloc_reader.h"
#include "topology/nccl_xml.h"
#include "topology/nvsmi.h"
#include "topology/probe.h"

namespace strata::tools {
namespace {

// The first character that is not white space or a UTF-8 byte order mark, or '\0' when the file
// has none. XML files start with '<'; nvidia-smi output never does.
char firstSignificantChar(std::ifstream& in) {
  char c = '\0';
  while (in.get(c)) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u == 0xef || u == 0xbb || u == 0xbf || std::strchr(" \t\r\n", c) != nullptr) continue;
    return c;
  }
  return '\0';
}

}  // namespace

NodeDescription describeLiveNode(const std::string& host, std::vector<std::string>* warnings) {
  NodeDescription out;
  StatusOr<topo::NodeTopology> live = topo::readLiveHwloc();
  if (live.isOk()) {
    out.topo = live.take();
  } else {
    warnings->push_back("hwloc detection failed (" + live.status().message() +
                        "); describing the host name only");
    out.topo.source = "live (hwloc failed)";
  }
  if (!host.empty()) out.topo.host = host;
  Status st = topo::probeInfinibandSysfs("/sys", &out.topo);
  if (!st.isOk()) warnings->push_back("infiniband sysfs probe: " + st.message());
  st = topo::probeCudaAndNvml(&out.topo);
  if (!st.isOk()) warnings->push_back("cuda/nvml probe: " + st.message());
  return out;
}

StatusOr<NodeDescription> readNodeFile(const std::string& path) {
  // The readers report a missing file in their own words, or (looksLikeNcclTopoXml) not at all;
  // checking here first gives one clear message whatever the format would have been.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return invalidArgument(path + ": cannot read: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return invalidArgument(path + ": cannot read: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalidArgument(path + ": cannot open: " + std::strerror(errno));
  const char first = firstSignificantChar(in);
  if (first == '\0') return invalidArgument(path + ": the file is empty");

  NodeDescription out;
  if (first == '<') {
    StatusOr<topo::NodeTopology> t =
        topo::looksLikeNcclTopoXml(path) ? topo::readNcclTopoXml(path) : topo::readHwlocXml(path);
    if (!t.isOk()) return t.status();
    out.topo = t.take();
    return out;
  }
  StatusOr<topo::NodeTopology> t = topo::readNvidiaSmiTopo(path);
  if (!t.isOk()) {
    return invalidArgument(path + ": not an hwloc or NCCL XML file, nor nvidia-smi topo -m " +
                           "output (" + t.status().message() + ")");
  }
  StatusOr<topo::ConnectionMatrix> m = topo::readNvidiaSmiMatrix(path);
  if (!m.isOk()) return m.status();
  out.topo = t.take();
  out.matrix = m.take();
  return out;
}

}  // namespace strata::tools
