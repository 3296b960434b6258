// `nvidia-smi topo -m` text -> ConnectionMatrix and NodeTopology.
//
// The output is a whitespace-separated table, so lines are split on whitespace; the layout
// rules it follows, in every version seen:
//  - the header is the first line whose first word is GPU0 and whose second is not "X" (the
//    GPU0 row has "X" there); device columns come first, then the headings "CPU Affinity",
//    "NUMA Affinity" and "GPU NUMA ID" (newer versions), each of them one word in the rows;
//  - one row per device column, in column order; GPU rows carry the affinity cells, NIC rows
//    do not; tabs and spaces mix freely when the output was pasted by hand;
//  - newer versions name NICs "NIC0".. and add a "NIC Legend:" with "NIC0: mlx5_0" lines.
// Anything before the header (shell prompts, the command line, ANSI colour codes) is skipped.
// What the table says is checked, not guessed at: a cell must be one of the legend's codes, the
// matrix symmetric, a CPU affinity a list of ascending ranges. Text that breaks these is not the
// output of nvidia-smi, and a topology built from it would be wrong without a word.
#include "topology/nvsmi.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/text_file.h"
#include "topology/link_model.h"

namespace strata::topo {
namespace {

// The most NVLink lanes one GPU has (H100, B200: 18). A GPU whose NV# cells add up to more
// cannot be wired to each peer directly, so nvidia-smi is counting lanes into NVSwitches.
constexpr int kMaxNvlinksPerGpu = 18;
// Far above any machine (the largest seen has 8 GPUs and 17 NICs); it bounds the n x n matrix a
// header line can ask for.
constexpr size_t kMaxDevices = 1024;
// GPU indices, NV# counts and CPU numbers beyond these are not a machine's.
constexpr int kMaxGpuIndex = 9999;
constexpr int kMaxNvlinkCount = 99;
constexpr long kMaxCpuNumber = 1 << 20;

enum class Trailer { kCpuAffinity, kNumaAffinity, kGpuNumaId };

struct Table {
  ConnectionMatrix matrix;
  std::vector<std::string> cpuAffinity;   // per row; empty when the row has none
  std::vector<std::string> numaAffinity;  // per row; empty when the row has none
};

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool allDigits(const std::string& s, size_t from) {
  return from < s.size() && std::all_of(s.begin() + long(from), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

// The decimal number in s[from..], or -1 when it is not one or exceeds `max` (never throws:
// std::stoi on a long digit string does).
long boundedNumber(const std::string& s, size_t from, long max) {
  if (!allDigits(s, from)) return -1;
  long value = 0;
  for (size_t i = from; i < s.size(); ++i) {
    value = value * 10 + (s[i] - '0');
    if (value > max) return -1;
  }
  return value;
}

// "GPU3" -> 3; -1 for a name that is not GPU<digits>; -2 for GPU<digits> beyond kMaxGpuIndex.
int gpuNumber(const std::string& name) {
  if (!startsWith(name, "GPU") || !allDigits(name, 3)) return -1;
  const long n = boundedNumber(name, 3, kMaxGpuIndex);
  return n < 0 ? -2 : int(n);
}

// "NV12" -> 12, anything else -> 0.
int nvlinkCount(const std::string& cell) {
  if (!startsWith(cell, "NV")) return 0;
  const long n = boundedNumber(cell, 2, kMaxNvlinkCount);
  return n > 0 ? int(n) : 0;
}

// The legend's codes: X (self), SYS, NODE, PHB, PXB, PIX, NV# (# bonded NVLinks, 1..99), and
// SOC, which versions before 2017 printed for SYS. Anything else is refused: a code this reader
// does not know would be read as "no relation", and an affinity value ("0-23,48-71", "0", "N/A")
// slid under a device column must not pass as one.
bool isRelationCode(const std::string& cell) {
  static const char* const kCodes[] = {"X", "SYS", "NODE", "PHB", "PXB", "PIX", "SOC"};
  for (const char* code : kCodes) {
    if (cell == code) return true;
  }
  return nvlinkCount(cell) > 0;
}

// A CPU list as nvidia-smi prints it: "0-23,48-71", "5", or "N/A"; each range ascending.
bool isCpuList(const std::string& value) {
  if (value == "N/A") return true;
  std::istringstream items(value);
  std::string item;
  size_t count = 0;
  while (std::getline(items, item, ',')) {
    ++count;
    const size_t dash = item.find('-');
    const long first = boundedNumber(item.substr(0, dash), 0, kMaxCpuNumber);
    const long last =
        dash == std::string::npos ? first : boundedNumber(item.substr(dash + 1), 0, kMaxCpuNumber);
    if (first < 0 || last < first) return false;
  }
  // getline drops a trailing empty item: "0-3," must fail too.
  return count > 0 && value.back() != ',';
}

// Drops CSI escape sequences (colours) and carriage returns that a captured terminal leaves.
std::string cleanLine(const std::string& raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\r') continue;
    if (raw[i] == '\x1b') {
      if (i + 1 < raw.size() && raw[i + 1] == '[') {
        i += 2;
        while (i < raw.size() && !(raw[i] >= 0x40 && raw[i] <= 0x7e)) ++i;
      }
      continue;
    }
    out += raw[i];
  }
  return out;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Port type from the device name alone. mlx5_bond_N only exists for RoCE LAG (ports bonded at
// the Ethernet layer); a plain mlx5_N may be InfiniBand or RoCE, and InfiniBand is the common
// case on GPU clusters.
std::string nicTypeFromName(const std::string& name) {
  if (startsWith(name, "mlx") && name.find("_bond") != std::string::npos) return "roce";
  if (startsWith(name, "mlx")) return "infiniband";
  return "unknown";
}

class Parser {
 public:
  explicit Parser(std::string path) : path_(std::move(path)) {}

  StatusOr<Table> parse(const std::string& text) {
    Status checked = checkText(text);
    if (!checked.isOk()) return fail(0, checked.message());
    std::istringstream in(text);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(cleanLine(line));

    size_t header = 0;
    while (header < lines.size() && !isHeader(words(lines[header]))) ++header;
    if (header == lines.size()) {
      return fail(0, "no header line found (a line starting with GPU0 followed by column names)");
    }
    STRATA_RETURN_IF_ERROR(readHeader(words(lines[header]), int(header) + 1));

    const size_t n = table_.matrix.names.size();
    table_.matrix.cells.resize(n);
    table_.cpuAffinity.resize(n);
    table_.numaAffinity.resize(n);
    for (size_t row = 0; row < n; ++row) {
      const size_t index = header + 1 + row;
      const std::string& name = table_.matrix.names[row];
      if (index >= lines.size() || words(lines[index]).empty()) {
        return fail(int(std::min(index, lines.size())) + 1, "missing the row of " + name);
      }
      STRATA_RETURN_IF_ERROR(readRow(words(lines[index]), row, int(index) + 1));
    }
    STRATA_RETURN_IF_ERROR(checkSymmetric(int(header) + 1));
    for (size_t i = header + 1 + n; i < lines.size(); ++i) readLegendLine(words(lines[i]));
    return std::move(table_);
  }

 private:
  static bool isHeader(const std::vector<std::string>& w) {
    return !w.empty() && w[0] == "GPU0" && (w.size() == 1 || w[1] != "X");
  }

  Status readHeader(const std::vector<std::string>& w, int line) {
    size_t i = 0;
    std::set<std::string> seen;
    for (; i < w.size() && w[i] != "CPU" && w[i] != "NUMA" && w[i] != "GPU"; ++i) {
      if (!seen.insert(w[i]).second)
        return fail(line, "device " + w[i] + " named twice in the header");
      if (gpuNumber(w[i]) == -2) {
        return fail(line, "device " + w[i] + ": gpu index above " + std::to_string(kMaxGpuIndex));
      }
      if (seen.size() > kMaxDevices) {
        return fail(line, "more than " + std::to_string(kMaxDevices) + " devices in the header");
      }
      table_.matrix.names.push_back(w[i]);
    }
    auto at = [&](size_t k, const char* word) { return k < w.size() && w[k] == word; };
    while (i < w.size()) {
      if (at(i, "CPU") && at(i + 1, "Affinity")) {
        trailers_.push_back(Trailer::kCpuAffinity);
        i += 2;
      } else if (at(i, "NUMA") && at(i + 1, "Affinity")) {
        trailers_.push_back(Trailer::kNumaAffinity);
        i += 2;
      } else if (at(i, "GPU") && at(i + 1, "NUMA") && at(i + 2, "ID")) {
        trailers_.push_back(Trailer::kGpuNumaId);
        i += 3;
      } else {
        return fail(line, "unrecognised column heading '" + w[i] + "'");
      }
    }
    return Status::ok();
  }

  Status readRow(const std::vector<std::string>& w, size_t row, int line) {
    const std::vector<std::string>& names = table_.matrix.names;
    const size_t n = names.size();
    if (w[0] != names[row]) {
      return fail(line, "expected the row of " + names[row] + ", found '" + w[0] + "'");
    }
    if (w.size() < 1 + n || w.size() > 1 + n + trailers_.size()) {
      return fail(line, "row " + names[row] + " has " + std::to_string(w.size() - 1) +
                            " cells, the header has " + std::to_string(n) + " devices and " +
                            std::to_string(trailers_.size()) + " affinity columns");
    }
    // A cell shifted by a lost separator moves the "X" off the diagonal: catch it here rather
    // than read every later cell against the wrong device.
    for (size_t c = 0; c < n; ++c) {
      const std::string& cell = w[1 + c];
      if ((cell == "X") != (c == row)) {
        return fail(line, "row " + names[row] + ": cell '" + cell + "' under " + names[c] +
                              (c == row ? " should be X" : " is X off the diagonal"));
      }
      if (!isRelationCode(cell)) {
        return fail(line, "row " + names[row] + ": cell '" + cell + "' under " + names[c] +
                              " is not a connection type (X, SYS, NODE, PHB, PXB, PIX, NV1.." +
                              std::to_string(kMaxNvlinkCount) + ", or the older SOC)");
      }
    }
    table_.matrix.cells[row].assign(w.begin() + 1, w.begin() + 1 + n);
    for (size_t t = 0; 1 + n + t < w.size(); ++t) {
      const std::string& value = w[1 + n + t];
      // NUMA affinity is a CPU-list-shaped list of NUMA nodes; GPU NUMA ID one number or N/A.
      const bool ok = trailers_[t] == Trailer::kGpuNumaId
                          ? value == "N/A" || boundedNumber(value, 0, kMaxCpuNumber) >= 0
                          : isCpuList(value);
      if (!ok) {
        const char* heading = trailers_[t] == Trailer::kCpuAffinity    ? "CPU Affinity"
                              : trailers_[t] == Trailer::kNumaAffinity ? "NUMA Affinity"
                                                                       : "GPU NUMA ID";
        return fail(line, "row " + names[row] + ": " + heading + " '" + value +
                              "' is not a list of ascending ranges such as 0-23,48-71, or N/A");
      }
      if (trailers_[t] == Trailer::kCpuAffinity) table_.cpuAffinity[row] = value;
      if (trailers_[t] == Trailer::kNumaAffinity) table_.numaAffinity[row] = value;
    }
    return Status::ok();
  }

  // nvidia-smi prints one relation per pair, so the matrix is symmetric; a cell that differs
  // from its mirror was edited or shifted, and which one is right cannot be told.
  Status checkSymmetric(int headerLine) const {
    const ConnectionMatrix& m = table_.matrix;
    for (size_t a = 0; a < m.names.size(); ++a) {
      for (size_t b = a + 1; b < m.names.size(); ++b) {
        if (m.cells[a][b] != m.cells[b][a]) {
          return fail(headerLine + 1 + int(b),
                      "row " + m.names[b] + ": cell '" + m.cells[b][a] + "' under " + m.names[a] +
                          " differs from '" + m.cells[a][b] + "' in row " + m.names[a] + " under " +
                          m.names[b] + "; the matrix must be symmetric");
        }
      }
    }
    return Status::ok();
  }

  // "NIC0: mlx5_0" lines of the NIC legend.
  void readLegendLine(const std::vector<std::string>& w) {
    if (w.size() != 2 || !startsWith(w[0], "NIC") || w[0].back() != ':') return;
    const std::string alias = w[0].substr(0, w[0].size() - 1);
    const std::vector<std::string>& names = table_.matrix.names;
    if (std::find(names.begin(), names.end(), alias) == names.end()) return;
    table_.matrix.legend.push_back(alias + ": " + w[1]);
  }

  Status fail(int line, const std::string& problem) const {
    const std::string where = line > 0 ? ":" + std::to_string(line) : "";
    Status status = invalidArgument("nvidia-smi topo " + path_ + where + ": " + problem);
    STRATA_WARN(kSubsysTopo, "%s", status.message().c_str());
    return status.markLogged();
  }

  std::string path_;
  Table table_;
  std::vector<Trailer> trailers_;
};

// One NUMA node, or -1: "N/A", several nodes ("0-1"), or no NUMA column in older versions.
int parseNuma(const std::string& value) { return int(boundedNumber(value, 0, kMaxCpuNumber)); }

// NV# links between GPU columns; kNvswitch where a GPU's lanes cannot all be direct.
void addLinks(const ConnectionMatrix& m, const std::vector<int>& gpuCols, NodeTopology* topo) {
  const size_t g = gpuCols.size();
  std::vector<bool> switched(g, false);
  for (size_t a = 0; a < g; ++a) {
    int lanes = 0;
    for (size_t b = 0; b < g; ++b) lanes += nvlinkCount(m.cells[gpuCols[a]][gpuCols[b]]);
    switched[a] = lanes > kMaxNvlinksPerGpu;
  }
  for (size_t a = 0; a < g; ++a) {
    for (size_t b = a + 1; b < g; ++b) {
      const int count = nvlinkCount(m.cells[gpuCols[a]][gpuCols[b]]);
      if (count == 0) continue;
      GpuLink link;
      link.a = int(a);
      link.b = int(b);
      link.kind = switched[a] || switched[b] ? LinkKind::kNvswitch : LinkKind::kNvlink;
      link.count = count;
      link.generation = 0;  // the output does not name the GPU model
      link.bandwidthGBps = nvlinkLink(0, count).bandwidthGBps;
      topo->links.push_back(link);
    }
  }
}

NodeTopology buildTopology(const Table& table, const std::string& path) {
  const ConnectionMatrix& m = table.matrix;
  NodeTopology topo;
  topo.source = "nvidia-smi " + path;
  topo.nvlinkKnown = true;                   // nvidia-smi prints NV# for every NVLink it knows of
  std::map<std::string, std::string> alias;  // "NIC0" -> "mlx5_0"
  for (const std::string& entry : m.legend) {
    const size_t colon = entry.find(": ");
    alias[entry.substr(0, colon)] = entry.substr(colon + 2);
  }

  std::vector<int> gpuCols;
  std::vector<std::string> affinities;  // distinct CPU-affinity ranges: one package each
  std::vector<int> numas;
  for (size_t c = 0; c < m.names.size(); ++c) {
    const int index = gpuNumber(m.names[c]);
    if (index < 0) continue;
    Gpu gpu;
    gpu.name = m.names[c];
    gpu.vendor = "nvidia";
    gpu.cudaIndex = index;
    const std::string& cpus = table.cpuAffinity[c];
    if (!cpus.empty() && cpus != "N/A") {
      auto it = std::find(affinities.begin(), affinities.end(), cpus);
      gpu.pci.package = int(it - affinities.begin());
      if (it == affinities.end()) affinities.push_back(cpus);
    }
    if (cpus != "N/A") gpu.cpuAffinity = cpus;
    if (table.numaAffinity[c] != "N/A") gpu.numaAffinity = table.numaAffinity[c];
    gpu.pci.numa = parseNuma(table.numaAffinity[c]);
    if (gpu.pci.numa >= 0 && std::find(numas.begin(), numas.end(), gpu.pci.numa) == numas.end()) {
      numas.push_back(gpu.pci.numa);
    }
    gpuCols.push_back(int(c));
    topo.gpus.push_back(gpu);
  }

  for (size_t c = 0; c < m.names.size(); ++c) {
    if (gpuNumber(m.names[c]) >= 0) continue;
    Nic nic;
    auto named = alias.find(m.names[c]);
    nic.name = named != alias.end() ? named->second : m.names[c];
    nic.type = nicTypeFromName(nic.name);
    // NIC rows have no affinity; PIX/PXB/PHB/NODE to a GPU all stay within that GPU's NUMA
    // node (the legend's definitions), so the NIC shares its place. SYS says nothing.
    for (size_t g = 0; g < gpuCols.size(); ++g) {
      const std::string& rel = m.cells[c][gpuCols[g]];
      if (rel == "PIX" || rel == "PXB" || rel == "PHB" || rel == "NODE") {
        nic.pci.package = topo.gpus[g].pci.package;
        nic.pci.numa = topo.gpus[g].pci.numa;
        break;
      }
    }
    topo.nics.push_back(nic);
  }

  addLinks(m, gpuCols, &topo);
  topo.packages = int(affinities.size());
  topo.numaNodes = int(numas.size());
  if (topo.packages > 1) {
    topo.interSocket = smpLink();
    topo.interSocket.kind = LinkKind::kSmp;
  }
  return topo;
}

}  // namespace

StatusOr<ConnectionMatrix> parseNvidiaSmiMatrix(const std::string& text,
                                                const std::string& source) {
  STRATA_ASSIGN_OR_RETURN(Table table, Parser(source).parse(text));
  // The affinity columns the file has, as printed: GPU rows only (NIC rows have none). Old
  // versions print no NUMA Affinity column; neither does the matrix then.
  ConnectionMatrix& m = table.matrix;
  bool cpuColumn = false, numaColumn = false;
  for (size_t r = 0; r < m.names.size(); ++r) {
    cpuColumn = cpuColumn || !table.cpuAffinity[r].empty();
    numaColumn = numaColumn || !table.numaAffinity[r].empty();
  }
  for (size_t r = 0; r < m.names.size() && (cpuColumn || numaColumn); ++r) {
    const bool gpu = gpuNumber(m.names[r]) >= 0;
    const std::string& cpus = table.cpuAffinity[r];
    const std::string& numa = table.numaAffinity[r];
    if (cpuColumn) m.cpuAffinity.push_back(gpu ? (cpus.empty() ? "N/A" : cpus) : "");
    if (numaColumn) m.numaAffinity.push_back(gpu ? (numa.empty() ? "N/A" : numa) : "");
  }
  return std::move(table.matrix);
}

StatusOr<NodeTopology> parseNvidiaSmiTopo(const std::string& text, const std::string& source) {
  STRATA_ASSIGN_OR_RETURN(Table table, Parser(source).parse(text));
  return buildTopology(table, source);
}

namespace {
StatusOr<std::string> readFile(const std::string& path) {
  StatusOr<std::string> text = readTextFileBounded(path);
  if (text.isOk()) return text;
  Status status = text.status().withContext("nvidia-smi topo " + path);
  STRATA_WARN(kSubsysTopo, "%s", status.message().c_str());
  return status.markLogged();
}
}  // namespace

StatusOr<ConnectionMatrix> readNvidiaSmiMatrix(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseNvidiaSmiMatrix(text, path);
}

StatusOr<NodeTopology> readNvidiaSmiTopo(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseNvidiaSmiTopo(text, path);
}

}  // namespace strata::topo
