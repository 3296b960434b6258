#include "tune_measure.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <tuple>

#include "common/mpi_check.h"

namespace strata::tools {
namespace {

constexpr int kPingTag = 4711;

// Half round trips (us) of `bytes` between this rank and `partner` on `comm`; only the rank
// that sends first (`first`) records them, the other just echoes.
Status pingPong(MPI_Comm comm, int partner, bool first, std::vector<char>& buf, size_t bytes,
                int warmups, int reps, std::vector<double>* halfRtts) {
  const int n = static_cast<int>(bytes);
  for (int i = 0; i < warmups + reps; ++i) {
    const double t0 = MPI_Wtime();
    if (first) {
      STRATA_MPI_CHECK(MPI_Send(buf.data(), n, MPI_BYTE, partner, kPingTag, comm));
      STRATA_MPI_CHECK(
          MPI_Recv(buf.data(), n, MPI_BYTE, partner, kPingTag, comm, MPI_STATUS_IGNORE));
    } else {
      STRATA_MPI_CHECK(
          MPI_Recv(buf.data(), n, MPI_BYTE, partner, kPingTag, comm, MPI_STATUS_IGNORE));
      STRATA_MPI_CHECK(MPI_Send(buf.data(), n, MPI_BYTE, partner, kPingTag, comm));
    }
    const double t1 = MPI_Wtime();
    if (first && i >= warmups) halfRtts->push_back((t1 - t0) * 1e6 / 2);
  }
  return Status::ok();
}

// The measuring pair's side of one level: alpha from small messages, then the large ones. The
// pair talks over MPI_COMM_WORLD, whose ranks are the communicator's (strataCommInitMPI over
// it): the same two processes over the same links as their level group, so the tool needs no
// handle on the library's own groups.
Status measureAsPair(bool first, const PingPongOptions& o, LevelMeasurement* m) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int partner = first ? m->rankB : m->rankA;
  std::vector<char> buf(std::max(o.smallBytes, o.largeBytes), 1);
  std::vector<double> small, large;
  STRATA_RETURN_IF_ERROR(
      pingPong(comm, partner, first, buf, o.smallBytes, o.smallWarmups, o.smallReps, &small));
  STRATA_RETURN_IF_ERROR(
      pingPong(comm, partner, first, buf, o.largeBytes, o.largeWarmups, o.largeReps, &large));
  if (!first) return Status::ok();
  m->latencyUs = median(small);
  m->largeHalfRttUs = median(large);
  // The large message pays the latency once too; when noise makes it look free, charge the
  // whole time to the bytes rather than divide by nothing.
  double transferUs = m->largeHalfRttUs - m->latencyUs;
  if (transferUs <= 0) transferUs = m->largeHalfRttUs;
  m->bandwidthGBps = static_cast<double>(o.largeBytes) / transferUs / 1e3;  // bytes/us -> GB/s
  return Status::ok();
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double roundSignificant(double x) {
  if (!(x > 0) || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(x)));
  return std::round(x * scale) / scale;
}

Status lazyBarrier(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  STRATA_MPI_CHECK(MPI_Ibarrier(comm, &req));
  const timespec pause{0, 100 * 1000};  // 100 us: a waiting rank costs next to no CPU
  for (;;) {
    int done = 0;
    STRATA_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return Status::ok();
    nanosleep(&pause, nullptr);
  }
}

std::pair<int, int> measuringPair(const topo::Hierarchy& h, int level) {
  for (int r = 0; r < h.numRanks(); ++r) {
    const topo::StageGroup g = topo::stageGroup(h, level, r);
    if (!g.member || g.size < 2) continue;
    int a = -1, b = -1;
    for (int s = 0; s < h.numRanks(); ++s) {
      const topo::StageGroup t = topo::stageGroup(h, level, s);
      if (!t.member || t.color != g.color) continue;
      if (t.index == 0) a = s;
      if (t.index == 1) b = s;
    }
    if (a >= 0 && b >= 0) return {a, b};
  }
  return {-1, -1};
}

StatusOr<std::vector<LevelMeasurement>> measureLevels(
    tools_iface::ToolsComm& c, const PingPongOptions& o,
    const std::function<void(int level)>& progress) {
  std::vector<LevelMeasurement> out;
  for (int l = 0; l < c.hierarchy().numLevels(); ++l) {
    LevelMeasurement m;
    m.level = l;
    std::tie(m.rankA, m.rankB) = measuringPair(c.hierarchy(), l);
    if (m.rankA < 0) continue;  // every group of one rank: nothing to measure (or to model)
    if (c.rank() == 0 && progress) progress(l);
    // One level at a time, so measurements never share a link; the other ranks sleep.
    STRATA_RETURN_IF_ERROR(lazyBarrier(MPI_COMM_WORLD));
    Status st = Status::ok();
    if (c.rank() == m.rankA || c.rank() == m.rankB) {
      st = measureAsPair(c.rank() == m.rankA, o, &m);
    }
    STRATA_RETURN_IF_ERROR(lazyBarrier(MPI_COMM_WORLD));
    STRATA_RETURN_IF_ERROR(c.agree(st));
    // The numbers as rounded for the file, so that every rank predicts with the same ones.
    double values[3] = {roundSignificant(m.latencyUs), roundSignificant(m.largeHalfRttUs),
                        roundSignificant(m.bandwidthGBps)};
    STRATA_MPI_CHECK(MPI_Bcast(values, 3, MPI_DOUBLE, m.rankA, MPI_COMM_WORLD));
    m.latencyUs = values[0];
    m.largeHalfRttUs = values[1];
    m.bandwidthGBps = values[2];
    out.push_back(m);
  }
  return out;
}

std::map<std::string, topo::LinkModel> measuredLinks(const topo::Hierarchy& h,
                                                     const std::vector<LevelMeasurement>& m) {
  std::map<std::string, topo::LinkModel> out;
  for (const LevelMeasurement& lm : m) {
    topo::LinkModel link = h.level(lm.level).link;  // keeps the kind: it names the hardware
    link.latencyUs = lm.latencyUs;
    link.bandwidthGBps = lm.bandwidthGBps;
    link.source = "measured";
    out[h.level(lm.level).name] = link;
  }
  return out;
}

StatusOr<topo::Hierarchy> withLinks(const topo::Hierarchy& h,
                                    const std::map<std::string, topo::LinkModel>& links) {
  std::vector<topo::Level> levels = h.levels();
  for (topo::Level& level : levels) {
    auto it = links.find(level.name);
    if (it != links.end()) level.link = it->second;
  }
  // Every rank's groups as keys: the same tree, whatever way the original was built.
  std::vector<std::vector<std::string>> keys(h.numRanks());
  for (int r = 0; r < h.numRanks(); ++r) {
    for (int l = 0; l < h.numLevels(); ++l) keys[r].push_back(std::to_string(h.group(r, l)));
  }
  return topo::Hierarchy::fromKeys(std::move(levels), keys);
}

}  // namespace strata::tools
