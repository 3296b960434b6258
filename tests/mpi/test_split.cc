// MPI integration test of strataCommSplit.
//
// The world is split by parity, by host (color: the index of the rank's host name, which
// STRATA_HOSTNAME emulates, among the names in order of first appearance), with
// STRATA_SPLIT_NOCOLOR on some ranks (they must get NULL) or on all, with keys that reverse the
// order, with ties in the keys (broken by the parent's rank), and with a config made by
// STRATA_CONFIG_INITIALIZER. Each new communicator must have the members and the order that
// (key, parent rank) gives, which MPI_Comm_split computes for the MPI twin of each; then the
// collectives (all-reduce, broadcast, reduce, reduce-scatter, all-gather) run on it, checked
// against a local reference and against the same collectives of the MPI twin. Several split
// communicators stay alive together; one is split again; the parent keeps working between
// them; calls queued on the parent before a split complete first.
//
//   mpiexec -n 6 strata_mpi_split [--threads] [--timeout S] [--seed N] [-v]

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mpi/collective_reference.h"
#include "mpi/collective_runs.h"
#include "mpi/mpi_harness.h"
#include "strata/strata_mpi.h"

namespace {

using namespace strata_test;

// Runs one collective case on `cm` and records it.
void runCase(Harness& h, const Comm& cm, Case c, Reference ref) {
  c.root = resolveRoot(c.root, cm.size);
  const std::string what =
      describe(c) + " on " + cm.name + (ref == Reference::kMpi ? " vs MPI" : "");
  h.step(what);
  Verdict v = h.verdict(what);
  runBlocking(cm, c, ref, h.seed(what), nullptr, v);
  h.record(v);
}

// Every collective, a few counts; half against the MPI twin.
void runCollectives(Harness& h, const Comm& cm) {
  const Reference mpi = cm.mpi != MPI_COMM_NULL ? Reference::kMpi : Reference::kLocal;
  runCase(h, cm, {Coll::kAllReduce, strataFloat32, strataSum, 1021, false}, mpi);
  runCase(h, cm, {Coll::kAllReduce, strataBfloat16, strataAvg, 13, true}, Reference::kLocal);
  runCase(h, cm, {Coll::kBroadcast, strataUint8, strataSum, 1021, false, -1}, mpi);
  runCase(h, cm, {Coll::kBroadcast, strataFloat16, strataSum, 13, false, 0, Others::kNull},
          Reference::kLocal);
  runCase(h, cm, {Coll::kReduce, strataInt64, strataSum, 1021, false, 0}, mpi);
  runCase(h, cm, {Coll::kReduce, strataInt32, strataMin, 65, true, -1}, Reference::kLocal);
  runCase(h, cm, {Coll::kReduce, strataFloat32, strataAvg, 1021, false, -1, Others::kNull},
          Reference::kLocal);
  runCase(h, cm, {Coll::kReduceScatter, strataFloat64, strataSum, 13, true}, mpi);
  runCase(h, cm, {Coll::kReduceScatter, strataUint32, strataProd, 7, false}, Reference::kLocal);
  runCase(h, cm, {Coll::kAllGather, strataInt8, strataSum, 7, false}, mpi);
  runCase(h, cm, {Coll::kAllGather, strataFloat32, strataSum, 1021, true}, Reference::kLocal);
}

// A quick check that a communicator still works.
void runOne(Harness& h, const Comm& cm) {
  runCase(h, cm, {Coll::kAllReduce, strataInt32, strataSum, 257, false}, Reference::kLocal);
}

// The host name strata sees: STRATA_HOSTNAME if set, else the machine's.
std::string hostName() {
  const char* env = std::getenv("STRATA_HOSTNAME");
  if (env != nullptr && *env != '\0') return env;
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// The index of this rank's host among the hosts of `mpi`, in order of first appearance.
int hostIndex(MPI_Comm mpi) {
  constexpr int kLen = 256;
  int size = 0;
  MPI_Comm_size(mpi, &size);
  char mine[kLen] = {};
  std::strncpy(mine, hostName().c_str(), kLen - 1);
  std::vector<char> all(static_cast<size_t>(kLen) * size);
  MPI_Allgather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, mpi);
  std::vector<std::string> hosts;
  for (int q = 0; q < size; ++q) {
    const std::string name(&all[static_cast<size_t>(q) * kLen]);
    if (std::find(hosts.begin(), hosts.end(), name) == hosts.end()) hosts.push_back(name);
  }
  return static_cast<int>(std::find(hosts.begin(), hosts.end(), mine) - hosts.begin());
}

// The level names of a strataCommDescribe text, in order ("  level 0 node: ..." lines).
std::vector<std::string> levelNames(const std::string& text) {
  std::vector<std::string> names;
  size_t at = 0;
  while ((at = text.find("\n  level ", at)) != std::string::npos) {
    at += 9;
    const size_t name = text.find(' ', at) + 1, colon = text.find(':', name);
    if (name == 0 || colon == std::string::npos) break;
    names.push_back(text.substr(name, colon - name));
  }
  return names;
}

// Whether `sub` is `all` with some names left out (the order kept).
bool isSubsequence(const std::vector<std::string>& sub, const std::vector<std::string>& all) {
  size_t j = 0;
  for (const std::string& name : all) j += j < sub.size() && sub[j] == name ? 1 : 0;
  return j == sub.size();
}

std::string describeText(strataComm_t comm) {
  char text[4096] = {};
  if (strataCommDescribe(comm, text, sizeof text) != strataSuccess) return "";
  return text;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : " x ") + n;
  return s;
}

struct Split {
  std::string name;
  int color, key;
  bool config = false;  // pass a STRATA_CONFIG_INITIALIZER config (blocking = 0)
};

// A split communicator (comm NULL where this rank has none) with its MPI twin.
struct Child {
  Comm cm;
  bool member = false;
};

// Splits `parent` as `s` says and checks the result against MPI_Comm_split's: NULL for
// STRATA_SPLIT_NOCOLOR, else the count and rank that (key, parent rank) order gives, and a
// description over that many ranks. Returns the child; its collectives only run if every rank
// of the parent found its communicator as expected (else they could hang).
Child makeSplit(Harness& h, const Comm& parent, const Split& s) {
  const std::string what = "strataCommSplit(" + parent.name + ", " + s.name + ")";
  h.step(what);
  Child child;
  MPI_Comm twin = MPI_COMM_NULL;
  MPI_Comm_split(parent.mpi, s.color == STRATA_SPLIT_NOCOLOR ? MPI_UNDEFINED : s.color, s.key,
                 &twin);
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.blocking = 0;
  strataComm_t made = reinterpret_cast<strataComm_t>(&child);  // must be overwritten
  const strataResult_t rc =
      strataCommSplit(parent.comm, s.color, s.key, &made, s.config ? &config : nullptr);
  bool ok = h.expectSuccess(rc, what, parent.comm);
  if (rc != strataSuccess) made = nullptr;
  if (twin == MPI_COMM_NULL) {
    ok = h.expect(rc == strataSuccess && made == nullptr,
                  what + ": a rank with STRATA_SPLIT_NOCOLOR must get NULL") &&
         ok;
    made = nullptr;
  } else if (rc == strataSuccess) {
    int wantRank = -1, wantSize = -1, rank = -1, size = -1;
    MPI_Comm_rank(twin, &wantRank);
    MPI_Comm_size(twin, &wantSize);
    ok = h.expect(made != nullptr, what + ": no communicator") && ok;
    if (made != nullptr) {
      strataCommCount(made, &size);
      strataCommUserRank(made, &rank);
      ok = h.expect(size == wantSize && rank == wantRank,
                    what + ": strataCommCount/UserRank give rank " + std::to_string(rank) + " of " +
                        std::to_string(size) + ", (key, parent rank) order gives " +
                        std::to_string(wantRank) + " of " + std::to_string(wantSize)) &&
           ok;
      // Its hierarchy is the parent's restricted to its members: over its ranks, with some of
      // the parent's levels (those left with one member a group may go).
      const std::string text = describeText(made),
                        over = "over " + std::to_string(wantSize) + " rank";
      ok = h.expect(text.find(over) != std::string::npos,
                    what + ": strataCommDescribe does not say \"" + over + "\": " + text) &&
           ok;
      const std::vector<std::string> mine = levelNames(text),
                                     parents = levelNames(describeText(parent.comm));
      ok = h.expect(!mine.empty() && isSubsequence(mine, parents),
                    what + ": levels " + joined(mine) + " are not the parent's (" +
                        joined(parents) + ") restricted") &&
           ok;
      if (h.verbose() && wantRank == 0) std::printf("%s:\n%s", what.c_str(), text.c_str());
    }
    child.cm.rank = wantRank;
    child.cm.size = wantSize;
  }
  int allOk = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &allOk, 1, MPI_INT, MPI_MIN, parent.mpi);
  child.cm.comm = made;
  child.cm.mpi = twin;
  child.cm.name = s.name + (twin != MPI_COMM_NULL ? " #" + std::to_string(s.color) : "");
  child.member = allOk && made != nullptr;
  if (!allOk && made != nullptr) {  // local: the others may not have theirs
    strataCommAbort(made);
    child.cm.comm = nullptr;
  }
  return child;
}

void destroy(Harness& h, Child& child) {
  if (child.cm.comm != nullptr) {
    h.step("strataCommDestroy(" + child.cm.name + ")");
    h.expectSuccess(strataCommDestroy(child.cm.comm), "strataCommDestroy(" + child.cm.name + ")");
  }
  if (child.cm.mpi != MPI_COMM_NULL) MPI_Comm_free(&child.cm.mpi);
  child = Child();
}

// Calls queued on the parent before the split run before it: two nonblocking calls, a split,
// then the requests complete with the right results.
void runQueuedBeforeSplit(Harness& h, const Comm& world) {
  const std::string what = "nonblocking calls queued before a split";
  h.step(what);
  Verdict v = h.verdict(what);
  Case a{Coll::kAllReduce, strataFloat64, strataSum, 65537, false};
  Case b{Coll::kBroadcast, strataInt32, strataSum, 1021, false, world.size - 1};
  auto runA = makeCaseRun(world, a, Reference::kLocal, h.seed(what + " a"));
  auto runB = makeCaseRun(world, b, Reference::kLocal, h.seed(what + " b"));
  strataRequest_t ra = nullptr, rb = nullptr;
  checkResult(v, runA->start(&ra), world.comm);
  checkResult(v, runB->start(&rb), world.comm);
  strataComm_t half = nullptr;
  checkResult(
      v, strataCommSplit(world.comm, h.rank() < (world.size + 1) / 2 ? 0 : 1, 0, &half, nullptr),
      world.comm);
  if (ra != nullptr) checkResult(v, strataWait(&ra), nullptr);
  if (rb != nullptr) checkResult(v, strataWait(&rb), nullptr);
  runA->check(v);
  runB->check(v);
  if (half != nullptr) checkResult(v, strataCommDestroy(half), nullptr);
  h.record(v);
}

// Whether the hosts hold the same number of ranks each, in blocks (rank r on host r / perHost):
// the layouts whose plans certainly have inter-host stages that carry the wire type.
bool regularBlocks(int host, int rank, int size) {
  int hosts = host + 1;
  MPI_Allreduce(MPI_IN_PLACE, &hosts, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int block = size % hosts == 0 && host == rank / (size / hosts) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &block, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return hosts > 1 && block == 1;
}

// A float32 sum of values fp16 cannot hold exactly, on `comm`.
std::vector<float> inexactSum(strataComm_t comm, int rank, strataResult_t* rc) {
  std::vector<float> v(4099);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * (rank + 1) + 1e-4f * static_cast<float>(i);
  *rc = strataAllReduce(v.data(), v.data(), v.size(), strataFloat32, strataSum, comm, nullptr);
  return v;
}

// strataConfig_t's extensions: `compress` gives the split its own wire type (which shows on
// regular layouts of several hosts, and never on one host), members that disagree on it all
// fail, and a malformed value or a negative timeoutMs is refused.
void runConfigExtensions(Harness& h, const Comm& world, bool oneHost, bool regular) {
  const std::string what = "strataCommSplit with config->compress and timeoutMs";
  h.step(what);
  Verdict v = h.verdict(what);
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.compress = "fp16";
  config.timeoutMs = 60000;
  strataComm_t fp16 = nullptr;
  checkResult(v, strataCommSplit(world.comm, 0, h.rank(), &fp16, &config), world.comm);
  if (fp16 != nullptr) {
    strataResult_t rcExact = strataSuccess, rcFp16 = strataSuccess;
    const std::vector<float> exact = inexactSum(world.comm, h.rank(), &rcExact);
    const std::vector<float> narrowed = inexactSum(fp16, h.rank(), &rcFp16);
    checkResult(v, rcExact, world.comm);
    checkResult(v, rcFp16, fp16);
    size_t differ = 0;
    double worst = 0;
    for (size_t i = 0; i < exact.size(); ++i) {
      differ += exact[i] != narrowed[i];
      worst = std::max(worst, std::abs(double(exact[i]) - narrowed[i]) / std::abs(exact[i]));
    }
    if (!(worst < 4e-3)) {
      v.fail("fp16 wire: relative error " + std::to_string(worst) + " over 4e-3");
    }
    if (oneHost && differ > 0) {
      v.fail("fp16 wire: " + std::to_string(differ) +
             " elements differ from float32's result on one host (no inter-host stage)");
    }
    if (regular && differ == 0) {
      v.fail("fp16 wire: no element differs from float32's result across hosts");
    }
    checkResult(v, strataCommDestroy(fp16), nullptr);
  }
  // Rank 0 asks for bf16, the others for fp16: every rank refuses the split.
  config.compress = h.rank() == 0 ? "bf16" : "fp16";
  strataComm_t mixed = nullptr;
  const strataResult_t rcMixed = strataCommSplit(world.comm, 0, h.rank(), &mixed, &config);
  if (!(world.size == 1 ? rcMixed == strataSuccess : rcMixed == strataInvalidUsage)) v.fail("members passing different config->compress: got " + std::to_string(rcMixed));
  if (mixed != nullptr) strataCommDestroy(mixed);
  config.compress = "fp8";
  strataComm_t bad = nullptr;
  if (!(strataCommSplit(world.comm, 0, h.rank(), &bad, &config) == strataInvalidArgument &&
              bad == nullptr)) v.fail("config->compress \"fp8\" must be strataInvalidArgument");
  config.compress = nullptr;
  config.timeoutMs = -1;
  if (!(strataCommSplit(world.comm, 0, h.rank(), &bad, &config) == strataInvalidArgument &&
              bad == nullptr)) v.fail("config->timeoutMs -1 must be strataInvalidArgument");
  h.record(v);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "strataCommSplit (run under mpiexec)");
  if (!h.start(argc, argv)) return h.exitCode();
  const int r = h.rank(), n = h.size();

  h.step("strataCommInitMPI(MPI_COMM_WORLD)");
  Comm world;
  world.name = "world";
  world.mpi = MPI_COMM_WORLD;
  world.rank = r;
  world.size = n;
  if (!h.expectSuccess(initComm(&world.comm, MPI_COMM_WORLD), "strataCommInitMPI")) {
    return h.finish();
  }

  h.step("host names");
  const int host = hostIndex(MPI_COMM_WORLD);
  const std::vector<Split> splits = {
      {"parity", r % 2, r},
      {"parity, reversed keys", r % 2, n - r},
      {"host", host, r},
      {"host, reversed keys", host, -r},
      {"NOCOLOR on ranks 1, 4, 7", r % 3 == 1 ? STRATA_SPLIT_NOCOLOR : 7, r},
      {"one color, keys in pairs from the end", 3, (n - 1 - r) / 2},
      {"one color, with a config", 0, r, true},
      {"parity, extreme keys", r % 2, r % 3 == 0 ? INT_MIN + r : INT_MAX - r},
      {"NOCOLOR everywhere", STRATA_SPLIT_NOCOLOR, r},
      {"every rank alone", r, 0},
  };
  // All alive together; the parent works between the splits.
  std::vector<Child> children;
  for (const Split& s : splits) {
    children.push_back(makeSplit(h, world, s));
    runOne(h, world);
  }
  for (const Child& c : children) {
    if (c.member) runCollectives(h, c.cm);
  }
  runCollectives(h, world);

  // A split of the parity split: pairs of its ranks, in reverse order.
  Child& parity = children[0];
  if (parity.member) {
    Child grand = makeSplit(h, parity.cm, {"pairs of parity", parity.cm.rank / 2, -parity.cm.rank});
    if (grand.member) runCollectives(h, grand.cm);
    runOne(h, parity.cm);
    destroy(h, grand);
  }
  runQueuedBeforeSplit(h, world);
  int hosts = host + 1;
  MPI_Allreduce(MPI_IN_PLACE, &hosts, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  runConfigExtensions(h, world, hosts == 1, regularBlocks(host, r, n));

  // Destroyed in another order than made; the parent must not notice.
  for (size_t i : {2, 0, 5, 1, 8, 3, 9, 4, 6, 7}) destroy(h, children[i]);
  runCollectives(h, world);
  h.step("strataCommDestroy(world)");
  h.expectSuccess(strataCommDestroy(world.comm), "strataCommDestroy(world)");
  return h.finish();
}
