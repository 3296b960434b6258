#include "topo_input.h"

#include <utility>

#include "common/text_file.h"
#include "topology/hwloc_reader.h"
#include "topology/nccl_xml.h"
#include "topology/nvsmi.h"

namespace strata::tools {
namespace {

// The first character that is not white space or a UTF-8 byte order mark, or '\0' when the text
// has none. XML files start with '<'; nvidia-smi output never does. The text holds no NUL byte
// (readTextFileBounded refuses one), so '\0' means "nothing there".
char firstSignificantChar(const std::string& text) {
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u == 0xef || u == 0xbb || u == 0xbf || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      continue;
    }
    return c;
  }
  return '\0';
}

}  // namespace

std::string problemText(const topo::NodeProblem& p) {
  switch (p.source) {
    case topo::NodeProblem::Source::kHwloc:
      return "hwloc detection failed (" + p.message + "); describing the host name only";
    case topo::NodeProblem::Source::kInfiniband:
      return "infiniband sysfs probe: " + p.message;
    case topo::NodeProblem::Source::kCuda:
      return "cuda/nvml probe: " + p.message;
  }
  return p.message;
}

NodeDescription describeLiveNode(const std::string& host, std::vector<std::string>* warnings) {
  // The one description init makes (topology/cluster_exchange.h), its problems said as warnings.
  topo::LocalNode live = topo::describeLocalNode(host);
  for (const topo::NodeProblem& p : live.problems) warnings->push_back(problemText(p));
  NodeDescription out;
  out.topo = std::move(live.topo);
  return out;
}

StatusOr<NodeDescription> readNodeFile(const std::string& path) {
  // One bounded read for every format: a FIFO, a device (/dev/zero, /dev/urandom), a binary or a
  // huge file is refused here, before any reader could wait on it or read it for ever.
  StatusOr<std::string> read = readTextFileBounded(path);
  if (!read.isOk()) return read.status().withContext(path);
  const std::string& text = read.value();
  const char first = firstSignificantChar(text);
  if (first == '\0') return invalidArgument(path + ": the file is empty");

  NodeDescription out;
  if (first == '<') {
    StatusOr<topo::NodeTopology> t = topo::isNcclTopoXmlText(text)
                                         ? topo::parseNcclTopoXml(text, path)
                                         : topo::parseHwlocXml(text, path);
    if (!t.isOk()) return t.status();
    out.topo = t.take();
    return out;
  }
  StatusOr<topo::NodeTopology> t = topo::parseNvidiaSmiTopo(text, path);
  if (!t.isOk()) {
    return invalidArgument(path + ": not an hwloc or NCCL XML file, nor nvidia-smi topo -m " +
                           "output (" + t.status().message() + ")");
  }
  StatusOr<topo::ConnectionMatrix> m = topo::parseNvidiaSmiMatrix(text, path);
  if (!m.isOk()) return m.status();
  out.topo = t.take();
  out.matrix = m.take();
  return out;
}

}  // namespace strata::tools
