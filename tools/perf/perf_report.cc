#include "perf_report.h"

#include <mpi.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/env.h"

namespace strata::tools {
namespace {

constexpr const char* kTimeUnits[] = {"rank 0", "mean over ranks", "min over ranks",
                                      "max over ranks"};

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

// A number in `width` characters with as many decimals as fit (2, 1, 0, then an exponent), as
// nccl-tests prints times and bandwidths.
std::string fit(double value, int width) {
  int digits = 0;
  for (double v = 1; value >= v && digits < 40; v *= 10) ++digits;
  if (digits < width - 2) return format("%*.2f", width, value);
  if (digits < width - 1) return format("%*.1f", width, value);
  if (digits < width + 1) return format("%*.0f", width, value);
  return format("%*.0e", width, value);
}

std::string wrongText(long long wrong) {
  return wrong < 0 ? "   N/A" : format("%6g", static_cast<double>(wrong));
}

// Out-of-place and in-place columns, nccl-tests' body: time, algbw, busbw, #wrong.
std::string body(const Measurement& m) {
  return "  " + fit(m.timeUs, 7) + "  " + fit(m.algbw, 6) + "  " + fit(m.busbw, 6) + "  " +
         wrongText(m.wrong);
}

// A signed number in `width` characters, as fit() does (the nonblocking columns' difference).
std::string fitSigned(double value, int width) {
  const double a = std::fabs(value);
  int digits = 0;
  for (double v = 1; a >= v && digits < 40; v *= 10) ++digits;
  if (digits < width - 3) return format("%+*.2f", width, value);
  if (digits < width - 2) return format("%+*.1f", width, value);
  return format("%+*.0f", width, value);
}

// The comparison's columns: time, busbw, #wrong, and its time over strata's.
std::string vsBody(const Measurement& vs, const Measurement& strata) {
  const double ratio = strata.timeUs > 0 ? vs.timeUs / strata.timeUs : 0;
  return "  " + fit(vs.timeUs, 7) + "  " + fit(vs.busbw, 6) + "  " + wrongText(vs.wrong) + "  " +
         fit(ratio, 6);
}

// --nonblocking's columns: time, busbw, #wrong, and its time minus the blocking call's (us).
std::string nonblockingBody(const Measurement& nb, const Measurement& blocking) {
  return "  " + fit(nb.timeUs, 7) + "  " + fit(nb.busbw, 6) + "  " + wrongText(nb.wrong) + "  " +
         fitSigned(nb.timeUs - blocking.timeUs, 6);
}

// `title` centred over a group of columns `width` wide.
std::string centred(const std::string& title, size_t width) {
  if (title.size() >= width) return title;
  const size_t left = (width - title.size()) / 2;
  return std::string(left, ' ') + title + std::string(width - title.size() - left, ' ');
}

std::string rankRange(const std::vector<int>& ranks) {
  bool contiguous = true;
  for (size_t i = 1; i < ranks.size(); ++i) contiguous &= ranks[i] == ranks[i - 1] + 1;
  if (ranks.size() == 1) return "rank " + std::to_string(ranks[0]);
  if (contiguous) {
    return "ranks " + std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
  }
  return std::to_string(ranks.size()) + " ranks";
}

const char* vsCallName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "MPI_Allreduce";
    case Collective::kReduceScatter:
      return "MPI_Reduce_scatter_block";
    case Collective::kAllGather:
      return "MPI_Allgather";
    case Collective::kBroadcast:
      return "MPI_Bcast (out of place: the root first copies sendbuff to recvbuff)";
    case Collective::kReduce:
      return "MPI_Reduce";
    default:
      return "";
  }
}

std::string progressLine(const PerfMeta& m) {
  const auto progress = env::var::STRATA_PROGRESS;
  const std::string setting =
      "STRATA_PROGRESS=" + env::text(progress) + (env::isSet(progress) ? "" : " (default)");
  if (m.progressThread) {
    return format(
        "# Progress thread: on (MPI provided %s, %s): the communicator's own thread runs the "
        "nonblocking calls while the caller goes on\n",
        threadLevelName(m.threadLevel), setting.c_str());
  }
  return format(
      "# Progress thread: OFF (MPI provided %s, %s; it needs MPI_THREAD_MULTIPLE and "
      "STRATA_PROGRESS=1): the nonblocking calls run inside strataWait\n",
      threadLevelName(m.threadLevel), setting.c_str());
}

std::string modeLines(const PerfOptions& o, const PerfMeta& m) {
  const char* name = strataCallName(o.coll, false);
  const char* nbName = strataCallName(o.coll, true);
  if (o.mode == PerfMode::kNonblocking) {
    return format(
               "# Nonblocking: every timed iteration issues --inflight %d %s, each on "
               "its own buffers, then strataWait on each; the blocking columns make the same "
               "%d %s on the same buffers back to back; the two alternate every repeat. "
               "Times are per call (iteration time / %d); nb-bl = nonblocking - blocking time "
               "per call (us)\n",
               o.inflight, nbName, o.inflight, name, o.inflight) +
           progressLine(m);
  }
  if (o.mode == PerfMode::kOverlap) {
    const std::string sized = o.computeUs > 0
                                  ? format("%g us (--compute-us)", o.computeUs)
                                  : std::string("calibrated on each rank to its own t_coll");
    return format(
               "# Overlap (out of place): t_coll = %s alone; t_comp = a CPU-bound loop alone "
               "(no strata or MPI call), %s; t_both = %s, the loop, then strataWait; "
               "hidden = (t_coll + t_comp - t_both) / t_coll clamped to [0,1], raw = "
               "unclamped; each timed -n times per repeat\n",
               name, sized.c_str(), nbName) +
           progressLine(m);
  }
  return "";
}

}  // namespace

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "an unknown thread level";
  }
}

PerfSummary summarize(const PerfOptions& o, const std::vector<PerfRow>& rows) {
  PerfSummary s;
  double logRatios = 0;
  int ratios = 0, n = 0;
  auto count = [&s](long long wrong) {
    if (wrong > 0) {
      ++s.outOfBounds;
      s.wrongTotal += wrong;
    }
  };
  for (const PerfRow& r : rows) {
    if (o.mode == PerfMode::kOverlap) {
      s.avgBusbw += r.strata[kOutOfPlace].busbw;
      s.avgHidden += r.overlap.hidden;
      ++n;
      count(r.overlap.wrong);
      s.computeFailures += r.overlap.computeOk ? 0 : 1;
      continue;
    }
    for (int p = 0; p < 2; ++p) {
      s.avgBusbw += r.strata[p].busbw;
      s.avgBusbwVs += r.vs[p].busbw;
      s.avgBusbwNonblocking += r.nonblocking[p].busbw;
      s.avgDeltaUs += r.nonblocking[p].timeUs - r.strata[p].timeUs;
      ++n;
      for (const Measurement* m : {&r.strata[p], &r.vs[p], &r.nonblocking[p]}) count(m->wrong);
      if (!o.vs.empty() && r.strata[p].timeUs > 0 && r.vs[p].timeUs > 0) {
        logRatios += std::log(r.vs[p].timeUs / r.strata[p].timeUs);
        ++ratios;
      }
    }
  }
  if (n > 0) {
    s.avgBusbw /= n;
    s.avgBusbwVs /= n;
    s.avgBusbwNonblocking /= n;
    s.avgDeltaUs /= n;
    s.avgHidden /= n;
  }
  if (ratios > 0) s.ratioGeomean = std::exp(logRatios / ratios);
  return s;
}

namespace {

// nccl-tests' "-z" lines (its writeDeviceReport), said of strata's calls.
std::string blockingLine(int z) {
  switch (z) {
    case 1:
      return "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n";
    case 2:
      return "# Blocking Enabled: wait after each inner iteration (-m), no barrier \n";
    case 3:
      return "# Blocking Enabled: wait and barrier after each outer iteration (-n); "
             "time excludes barrier \n";
    default:
      return "";
  }
}

// nccl-tests' "#  Rank" lines: on the host path the device is the rank's index on its host and
// the name "cpu"; with --device, the GPU's ordinal, PCI address and name.
std::string rankLines(const PerfMeta& m) {
  std::string t;
  // Every rank, as nccl-tests prints them: parsers count these lines.
  for (int r = 0; r < m.nranks; ++r) {
    std::string device;
    if (r < static_cast<int>(m.rankDevices.size()) && !m.rankDevices[r].empty()) {
      device = m.rankDevices[r];
    } else {
      int local = 0;
      for (int q = 0; q < r; ++q) local += m.rankHosts[q] == m.rankHosts[r] ? 1 : 0;
      device = format("%2d [0000:00:00] cpu", local);
    }
    t += format("#  Rank %2d Group %2d Pid %6d on %10s device %s\n", r, 0, m.rankPids[r],
                m.rankHosts[r].c_str(), device.c_str());
  }
  return t;
}

}  // namespace

std::string formatPreamble(const PerfOptions& o, const PerfMeta& m) {
  // nccl-tests' lines first, in its format (parsers match them), then strata's own.
  std::string t;
  t += format("# strata-perf version %s strata-library=%d\n", m.version.c_str(), m.versionCode);
  t += format("# Collective test starting: strata-perf %s\n", collectiveName(o.coll));
  t += format(
      "# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d "
      "iters: %d agg iters: %d validation: %d graph: %d\n",
      1, 1, o.minBytes, o.maxBytes,
      o.stepFactor > 1 ? static_cast<size_t>(o.stepFactor) : o.stepBytes,
      o.stepFactor > 1 ? "factor" : "bytes", o.warmup, o.iters, o.nccl.aggIters, o.check, 0);
  t += blockingLine(o.nccl.blocking);
  t += "#\n# Using devices\n" + rankLines(m);
  t += format("# strata: nRanks %d nHosts %zu repeat: %d time: %s\n", m.nranks, m.hosts.size(),
              o.repeat, kTimeUnits[o.average]);
  t += format("# Datatype %s, op %s", perfTypeName(o.type), perfOpName(o));
  t += perfRoot(o) >= 0 ? format(", root %d\n", perfRoot(o)) : "\n";
  if (o.nccl.timeoutS > 0) {
    t += format("# Timeout: a call fails after waiting %d s for its peers (-T)\n",
                o.nccl.timeoutS);
  }
  if (!o.vs.empty()) {
    t += format(
        "# Compared with: %s (label %s): %s on the same communicator and buffers, "
        "alternating with strata every repeat; ratio = %s time / strata time (> 1: "
        "strata faster)\n",
        o.vs.c_str(), o.vsLabel.c_str(), vsCallName(o.coll), o.vsLabel.c_str());
  }
  t += modeLines(o, m);
  t += "# Using hosts:";
  for (const std::string& h : m.hosts) {
    std::vector<int> ranks;
    for (int r = 0; r < static_cast<int>(m.rankHosts.size()); ++r) {
      if (m.rankHosts[r] == h) ranks.push_back(r);
    }
    t += " " + h + " (" + rankRange(ranks) + ")";
  }
  t += "\n# Hierarchy (strataCommDescribe):\n";
  size_t start = 0;
  while (start < m.hierarchy.size()) {
    size_t end = m.hierarchy.find('\n', start);
    if (end == std::string::npos) end = m.hierarchy.size();
    t += "#   " + m.hierarchy.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return t;
}

namespace {

// --overlap's table: one group of columns per measurement, then the fraction hidden.
std::string overlapHeader() {
  std::string l1 = format("# %10s  %12s  %8s  %6s  %6s  ", "", "", "", "", "");
  l1 += centred("(a) alone", 16) + "  " + centred("(b) alone", 8) + "  " + centred("(c) both", 8) +
        "  " + centred("hidden", 14);
  std::string l2 = format("# %10s  %12s  %8s  %6s  %6s  %8s  %6s  %8s  %8s  %6s  %6s  %6s", "size",
                          "count", "type", "redop", "root", "t_coll", "busbw", "t_comp", "t_both",
                          "hidden", "raw", "#wrong");
  std::string l3 =
      format("# %10s  %12s  %8s  %6s  %6s  %8s  %6s  %8s  %8s  %6s  %6s  %6s", "(B)", "(elements)",
             "", "", "", "(us)", "(GB/s)", "(us)", "(us)", "[0,1]", "", "");
  return "#\n" + l1 + "\n" + l2 + " \n" + l3 + " \n";
}

std::string overlapRow(const PerfRow& row) {
  const OverlapResult& r = row.overlap;
  return "  " + fit(r.collUs, 8) + "  " + fit(row.strata[kOutOfPlace].busbw, 6) + "  " +
         fit(r.compUs, 8) + "  " + fit(r.bothUs, 8) + "  " + format("%6.3f", r.hidden) + "  " +
         format("%6.3f", r.hiddenRaw) + "  " + wrongText(r.wrong);
}

}  // namespace

std::string formatTableHeader(const PerfOptions& o) {
  if (o.mode == PerfMode::kOverlap) return overlapHeader();
  const bool nb = o.mode == PerfMode::kNonblocking;
  const bool second = !o.vs.empty() || nb;
  const size_t secondWidth = 2 + 7 + 2 + 6 + 2 + 6 + 2 + 6;
  std::string l1 = format(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                  "
      "     in-place          ",
      "", "", "", "", "");
  const char* time = o.nccl.reportCputime != 0 ? "cputime" : "time";  // -C, as nccl-tests
  std::string l2 = format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s",
                          "size", "count", "type", "redop", "root", time, "algbw", "busbw",
                          "#wrong", time, "algbw", "busbw", "#wrong");
  std::string l3 = format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s",
                          "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                          "(GB/s)", "(GB/s)", "");
  if (second) {
    const std::string label = nb ? std::string("nonblocking") : o.vsLabel;
    for (const char* where : {"out-of-place", "in-place"}) {
      l1 += centred(label + " " + where, secondWidth);
      l2 += format("  %7s  %6s  %6s  %6s", "time", "busbw", "#wrong", nb ? "nb-bl" : "ratio");
      l3 += format("  %7s  %6s  %6s  %6s", "(us)", "(GB/s)", "", nb ? "(us)" : "(x)");
    }
  }
  return "#\n" + l1 + "\n" + l2 + " \n" + l3 + " \n";
}

std::string formatRow(const PerfOptions& o, const PerfRow& row) {
  std::string t = format("%12zu  %12zu  %8s  %6s  %6d", row.bytes, row.count, perfTypeName(o.type),
                         perfOpName(o), perfRoot(o));
  if (o.mode == PerfMode::kOverlap) return t + overlapRow(row) + "\n";
  t += body(row.strata[kOutOfPlace]) + body(row.strata[kInPlace]);
  if (!o.vs.empty()) {
    t += vsBody(row.vs[kOutOfPlace], row.strata[kOutOfPlace]);
    t += vsBody(row.vs[kInPlace], row.strata[kInPlace]);
  }
  if (o.mode == PerfMode::kNonblocking) {
    t += nonblockingBody(row.nonblocking[kOutOfPlace], row.strata[kOutOfPlace]);
    t += nonblockingBody(row.nonblocking[kInPlace], row.strata[kInPlace]);
  }
  return t + "\n";
}

std::string formatFooter(const PerfOptions& o, const PerfSummary& s) {
  std::string t;
  t += format("# %-20s : %d %s\n", "Out of bounds values", s.outOfBounds,
              s.outOfBounds != 0 ? "FAILED" : "OK");
  t += format("# %-20s : %g \n", "Avg bus bandwidth", s.avgBusbw);
  if (!o.vs.empty()) {
    t += format("# %-20s : %g \n", ("Avg bus bw " + o.vsLabel).c_str(), s.avgBusbwVs);
    t += format("# %-20s : %g (geometric mean of %s time / strata time; > 1: strata faster)\n",
                "Time ratio", s.ratioGeomean, o.vsLabel.c_str());
  }
  if (o.mode == PerfMode::kNonblocking) {
    t += format("# %-20s : %g \n", "Avg bus bw nonblock", s.avgBusbwNonblocking);
    t += format(
        "# %-20s : %+.2f us per call (mean of nonblocking - blocking over every row, "
        "out of place and in place)\n",
        "Nonblocking cost", s.avgDeltaUs);
  }
  if (o.mode == PerfMode::kOverlap) {
    t += format("# %-20s : %.3f (mean over sizes of the clamped fraction of t_coll hidden)\n",
                "Avg fraction hidden", s.avgHidden);
    t += format("# %-20s : %s\n", "Computation check",
                s.computeFailures == 0 ? "OK (the same checksum alone and overlapped)"
                                       : "FAILED (the overlapped computation's checksum changed)");
  }
  t += "#\n";
  t += format("# Collective test concluded: strata-perf %s\n", collectiveName(o.coll));
  return t;
}

}  // namespace strata::tools
