#include "plan_args.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/strings.h"
#include "decompose/plan_file.h"

namespace strata::tools {
namespace {

// A sweep such as 1:1G:+1 would otherwise run for a billion steps.
constexpr size_t kMaxSizes = 4096;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

// A positive integer in [1, max], the whole text.
bool parsePositiveInt(const std::string& text, long long max, long long* out) {
  if (text.empty() || text.size() > 18) return false;
  long long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > max) return false;
  *out = v;
  return true;
}

// A positive, finite decimal number, the whole text.
bool parsePositiveNumber(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v) || !(v > 0)) return false;
  *out = v;
  return true;
}

// Appends FIRST:LAST[:STEP] to `out`.
Status appendSweep(const std::vector<std::string>& parts, const std::string& item,
                   const std::string& option, std::vector<size_t>* out) {
  const std::string what = option + " " + item + ": ";
  if (parts.size() != 2 && parts.size() != 3) {
    return invalidArgument(what + "a sweep is FIRST:LAST or FIRST:LAST:STEP");
  }
  STRATA_ASSIGN_OR_RETURN(size_t first, parseByteSize(trim(parts[0]), option));
  STRATA_ASSIGN_OR_RETURN(size_t last, parseByteSize(trim(parts[1]), option));
  if (first > last) return invalidArgument(what + "the sweep ends below its start");
  const std::string step = parts.size() == 3 ? trim(parts[2]) : "x2";
  size_t add = 0;
  long long factor = 0;
  if (!step.empty() && step[0] == 'x') {
    if (!parsePositiveInt(step.substr(1), 1 << 20, &factor) || factor < 2) {
      return invalidArgument(what + "step '" + step + "' must be x followed by an integer >= 2");
    }
    if (first == 0) return invalidArgument(what + "a sweep by multiples must start above 0");
  } else if (!step.empty() && step[0] == '+') {
    STRATA_ASSIGN_OR_RETURN(add, parseByteSize(step.substr(1), option));
    if (add == 0) return invalidArgument(what + "step '" + step + "' must be positive");
  } else {
    return invalidArgument(what + "step '" + step + "' must be xF (multiply) or +N (add)");
  }
  for (size_t v = first; v <= last;) {
    if (out->size() >= kMaxSizes) {
      return invalidArgument(what + "more than " + std::to_string(kMaxSizes) + " sizes");
    }
    out->push_back(v);
    // Stop before the next step would pass the end or wrap around.
    if (factor > 0) {
      if (v > last / static_cast<size_t>(factor)) break;
      v *= static_cast<size_t>(factor);
    } else {
      if (add > last - v) break;
      v += add;
    }
  }
  return Status::ok();
}

}  // namespace

StatusOr<size_t> parseByteSize(const std::string& text, const std::string& option) {
  size_t value = 0;
  bool tooLarge = false;
  if (plan::detail::parseSize(trim(text), &value, &tooLarge)) return value;
  if (tooLarge) return invalidArgument(option + " " + text + ": too large (at most 2^63 - 1)");
  return invalidArgument(option + " '" + text +
                         "': not a size; write bytes as an integer with an optional binary "
                         "suffix K, KiB, M, MiB, G or GiB (e.g. 64M, 1200000000)");
}

StatusOr<std::vector<size_t>> parseSizeList(const std::string& text, const std::string& option) {
  std::vector<size_t> out;
  for (const std::string& raw : split(text, ',')) {
    const std::string item = trim(raw);
    if (item.empty()) return invalidArgument(option + " '" + text + "': an empty item");
    const std::vector<std::string> parts = split(item, ':');
    if (parts.size() == 1) {
      STRATA_ASSIGN_OR_RETURN(size_t v, parseByteSize(item, option));
      out.push_back(v);
    } else {
      STRATA_RETURN_IF_ERROR(appendSweep(parts, item, option, &out));
    }
    if (out.size() > kMaxSizes) {
      return invalidArgument(option + ": more than " + std::to_string(kMaxSizes) + " sizes");
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string formatBytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (u + 1 < 7 && bytes >= 1024) {
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  // Three significant digits, but never an exponent (1001 MiB, not 1e+03 MiB).
  const int decimals = bytes == std::floor(bytes) || bytes >= 100 ? 0 : bytes >= 10 ? 1 : 2;
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, bytes, kUnits[u]);
  return buf;
}

std::string formatTime(double us) {
  char buf[48];
  if (us < 1e3) {
    std::snprintf(buf, sizeof buf, "%.4g us", us);
  } else if (us < 1e6) {
    std::snprintf(buf, sizeof buf, "%.4g ms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g s", us / 1e6);
  }
  return buf;
}

StatusOr<LinkSpec> parseLinkSpec(const std::string& text, const std::string& option) {
  const std::string what = option + " '" + text + "': ";
  const size_t colon = text.find(':');
  if (colon == std::string::npos) {
    return invalidArgument(what +
                           "write KIND:GBps or KIND:LANESxGBps, e.g. nvlink:150 or "
                           "ib:4x25");
  }
  LinkSpec spec;
  const std::string kind = trim(text.substr(0, colon));
  if (kind == "eth") {
    spec.kind = topo::LinkKind::kEthernet;
  } else if (!topo::parseLinkKind(kind, &spec.kind) || spec.kind == topo::LinkKind::kLoopback ||
             spec.kind == topo::LinkKind::kUnknown) {
    return invalidArgument(what + "unknown link kind '" + kind +
                           "'; kinds: nvlink, nvswitch, pcie, smp, shm, infiniband (ib), roce, "
                           "ethernet (eth), efa");
  }
  const std::string rate = trim(text.substr(colon + 1));
  const size_t x = rate.find('x');
  long long lanes = 0;
  if (x != std::string::npos && !parsePositiveInt(rate.substr(0, x), 1024, &lanes)) {
    return invalidArgument(what + "LANES in LANESxGBps must be an integer in 1..1024");
  }
  spec.lanes = static_cast<int>(lanes);
  if (!parsePositiveNumber(x == std::string::npos ? rate : rate.substr(x + 1), &spec.laneGBps)) {
    return invalidArgument(what + "the bandwidth must be a positive number of GB/s");
  }
  return spec;
}

StatusOr<topo::Hierarchy> simulatedHierarchy(const SimulatedCluster& c) {
  const std::vector<std::string> dims = split(trim(c.shape), 'x');
  long long nodes = 0, gpus = 0;
  if (dims.size() != 2 || !parsePositiveInt(dims[0], kMaxPlanRanks, &nodes) ||
      !parsePositiveInt(dims[1], kMaxPlanRanks, &gpus)) {
    return invalidArgument("--cluster '" + c.shape +
                           "': write NODESxGPUS with positive integers, e.g. 24x8");
  }
  if (nodes * gpus > kMaxPlanRanks) {
    return invalidArgument("--cluster " + c.shape + ": " + std::to_string(nodes * gpus) +
                           " ranks; at most " + std::to_string(kMaxPlanRanks));
  }
  STRATA_ASSIGN_OR_RETURN(LinkSpec intra, parseLinkSpec(c.intra, "--intra"));
  STRATA_ASSIGN_OR_RETURN(LinkSpec inter, parseLinkSpec(c.inter, "--inter"));
  if (c.nics < 0) return invalidArgument("--nics must be positive");
  if (c.nics > 0 && !c.interGiven) inter.lanes = 0;
  if (c.nics > 0 && inter.lanes > 0 && c.nics != inter.lanes) {
    return invalidArgument("--nics " + std::to_string(c.nics) + " disagrees with --inter " +
                           c.inter + " (" + std::to_string(inter.lanes) + " NICs per node)");
  }
  const long long nics = c.nics > 0 ? c.nics : std::max(1, inter.lanes);
  if (!(c.intraLatencyUs >= 0) || !(c.interLatencyUs >= 0) || !std::isfinite(c.intraLatencyUs) ||
      !std::isfinite(c.interLatencyUs)) {
    return invalidArgument("latencies must be non-negative numbers of microseconds");
  }

  // A GPU drives all of its NVLink lanes at once, so they add up; the NICs of a node are shared
  // by its GPUs instead, which is what linkSharing says.
  topo::LinkModel node;
  node.kind = intra.kind;
  node.bandwidthGBps = intra.laneGBps * std::max(1, intra.lanes);
  node.latencyUs = c.intraLatencyUs;
  node.source = "command line";
  topo::LinkModel network;
  network.kind = inter.kind;
  network.bandwidthGBps = inter.laneGBps;
  network.latencyUs = c.interLatencyUs;
  network.source = "command line";
  const int sharing = static_cast<int>((gpus + nics - 1) / nics);
  std::vector<topo::Level> levels{topo::Level("node", "mpi", node, 1),
                                  topo::Level("network", "mpi", network, sharing)};
  STRATA_ASSIGN_OR_RETURN(
      topo::Hierarchy h, topo::Hierarchy::regular(
                             std::move(levels), {static_cast<int>(gpus), static_cast<int>(nodes)}));
  return h.withoutTrivialLevels();
}

}  // namespace strata::tools
