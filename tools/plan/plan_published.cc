#include "plan_published.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <regex>
#include <sstream>

#include "plan_args.h"

namespace strata::tools {
namespace {

namespace nccl = plan::nccl;

// docs/decomposition.md's verdict: a model within 15% of a measurement agrees with it.
constexpr double kAgreement = 0.15;

// The smallest and largest bus bandwidth over a figure's sizes.
struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  void add(double x) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  bool empty() const { return hi <= 0; }
  // The end further from `ref`: the honest single number for "how far off".
  double worst(double ref) const { return std::fabs(lo - ref) > std::fabs(hi - ref) ? lo : hi; }
};

std::string gbps(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

std::string rangeText(const Range& r) {
  const std::string lo = gbps(r.lo), hi = gbps(r.hi);
  return (lo == hi ? lo : lo + "-" + hi) + " GB/s";
}

std::string percent(double model, double measured) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.0f%%", (model / measured - 1) * 100);
  return buf;
}

bool agrees(double model, double measured) { return std::fabs(model / measured - 1) <= kAgreement; }

// NCCL's predicted bus bandwidth at `bytes`: its own choice, or its best protocol of `algo`.
// Returns 0 (and leaves *what alone) where the model has no option of that algorithm.
double modelBusbw(const nccl::System& s, double bytes, const nccl::Algo* algo, std::string* what) {
  double us = -1;
  if (algo == nullptr) {
    const nccl::Choice c = nccl::choose(s, nccl::Func::kAllReduce, bytes);
    us = c.us;
    *what = std::string(nccl::algoName(c.algo)) + "/" + nccl::protoName(c.proto);
  } else {
    for (const nccl::Option& o : nccl::options(s, nccl::Func::kAllReduce)) {
      if (o.algo != *algo || o.bandwidthGBps <= 0) continue;
      const double t = nccl::timeUs(s, nccl::Func::kAllReduce, o, bytes);
      if (t > 0 && (us < 0 || t < us)) {
        us = t;
        *what = std::string(nccl::algoName(o.algo)) + "/" + nccl::protoName(o.proto);
      }
    }
  }
  return us > 0 ? nccl::busBandwidthGBps(nccl::Func::kAllReduce, s.ranks, bytes, us) : 0;
}

Range modelRange(const nccl::System& s, const PublishedFigure& f, const nccl::Algo* algo,
                 std::string* what) {
  Range r;
  std::string last;
  for (size_t bytes : f.sizes) {
    const double b = modelBusbw(s, static_cast<double>(bytes), algo, &last);
    if (b <= 0) return Range{};
    // Several choices over the sizes are named together ("tree/LL128, ring/Simple").
    if (what->find(last) == std::string::npos) *what += (what->empty() ? "" : ", ") + last;
    r.add(b);
  }
  return r;
}

// Why the model is above the measurement, from what the model itself assumed.
std::string whyAbove(const nccl::System& s, const PublishedFigure& f, const std::string& chose,
                     double measured) {
  // NCCL's choice is the tree, and the tree is what is off: the ring alone agrees.
  if (!f.algoGiven && chose.rfind("tree/", 0) == 0) {
    const nccl::Algo ring = nccl::Algo::kRing;
    std::string ringWhat;
    const Range r = modelRange(s, f, &ring, &ringWhat);
    if (!r.empty() && agrees(r.worst(measured), measured)) {
      std::string why = "the model's ring alone gives " + rangeText(r) + " (" +
                        percent(r.worst(measured), measured) +
                        ", within 15%): the tree's figure is the one off";
      if (s.nodes == 2 && s.tree.bwIntra > s.ring.bwIntra) {
        why += ". On 2 nodes NCCL's search raises the tree's intra-node channels to " +
               gbps(s.tree.bwIntra) + " GB/s (the ring's: " + gbps(s.ring.bwIntra) +
               " GB/s), and nccl-tests' bus bandwidth formula overstates a 2-node tree, so the "
               "model predicts a tree speed such clusters do not show";
      }
      return why;
    }
  }
  return "the model gives every NIC its line rate on a non-blocking network; what the real "
         "network delivered (congestion, routing, a network plugin's efficiency) is not in the "
         "topology file";
}

}  // namespace

StatusOr<std::vector<PublishedFigure>> parsePublished(const std::string& text,
                                                      const std::string& path) {
  static const std::regex kStart(R"(^\s*#\s*published:)");
  static const std::regex kLine(
      R"(^\s*#\s*published:\s*allreduce busbw ([0-9]+(\.[0-9]+)?) GB/s at (\S+))"
      R"((\s+with (ring|tree))?(\s+\((.*)\))?\s*$)");
  std::vector<PublishedFigure> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!std::regex_search(line, kStart)) continue;
    const std::string where = "topology file " + path + ":" + std::to_string(n) + ": ";
    std::smatch m;
    if (!std::regex_match(line, m, kLine)) {
      return invalidArgument(where +
                             "expected '# published: allreduce busbw GBPS GB/s at SIZES "
                             "[with ring|tree] [(SOURCE)]', found '" +
                             line + "'");
    }
    PublishedFigure f;
    f.busbwGBps = std::stod(m[1].str());
    if (!(f.busbwGBps > 0)) return invalidArgument(where + "the bus bandwidth must be positive");
    f.sizesText = m[3].str();
    StatusOr<std::vector<size_t>> sizes = parseSizeList(f.sizesText, "published");
    if (!sizes.isOk()) return invalidArgument(where + sizes.status().message());
    f.sizes = sizes.take();
    f.algoGiven = m[5].matched;
    if (f.algoGiven) f.algo = m[5].str() == "tree" ? nccl::Algo::kTree : nccl::Algo::kRing;
    f.source = m[7].matched ? m[7].str() : "";
    f.line = n;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> publishedNotes(const std::vector<PublishedFigure>& figures,
                                        const nccl::System& system) {
  std::vector<std::string> notes;
  for (const PublishedFigure& f : figures) {
    const std::string sizes = f.sizes.size() == 1
                                  ? formatBytes(static_cast<double>(f.sizes.front()))
                                  : formatBytes(static_cast<double>(f.sizes.front())) + "-" +
                                        formatBytes(static_cast<double>(f.sizes.back()));
    std::string note = "published (line " + std::to_string(f.line) + "): NCCL measured " +
                       gbps(f.busbwGBps) + " GB/s bus bandwidth at " + sizes +
                       (f.algoGiven ? std::string(" with ") + nccl::algoName(f.algo) : "") +
                       (f.source.empty() ? "" : " (" + f.source + ")") + "; ";
    std::string what;
    const Range r = modelRange(system, f, f.algoGiven ? &f.algo : nullptr, &what);
    if (r.empty()) {
      notes.push_back(note + "NCCL's cost model has no " + nccl::algoName(f.algo) +
                      " option for this cluster to compare with");
      continue;
    }
    const double model = r.worst(f.busbwGBps);
    note += "NCCL's cost model predicts " + rangeText(r) + " there (" +
            (f.algoGiven ? what : "its choice, " + what) + "), " + percent(model, f.busbwGBps);
    if (agrees(model, f.busbwGBps)) {
      note += ": within 15%";
    } else if (model > f.busbwGBps) {
      note += ": " + whyAbove(system, f, what, f.busbwGBps);
    } else {
      note +=
          ": the model is below the measurement; the file's links may be slower than the "
          "cluster's, or NCCL ran an algorithm the model leaves out (CollNet, NVLS)";
    }
    notes.push_back(note + " (docs/decomposition.md, \"Published clusters\")");
  }
  return notes;
}

}  // namespace strata::tools
