#include "core/route.h"

#include <vector>

namespace strata::core {

namespace {

enum class Runs : uint8_t { kHost, kStream, kEither };

bool fabricStep(Op op) {
  return op == Op::kStep || op == Op::kStart || op == Op::kWait || op == Op::kPeer;
}

Runs runsOf(const Instr& i, const LevelGroup* inFlight, const StreamOrderedFn& streamOrdered) {
  switch (i.op) {
    case Op::kCopy:
    case Op::kDivide:
      return Runs::kEither;
    case Op::kPack:
    case Op::kUnpack:  // host fusion packs only; never in a device program
      return Runs::kHost;
    case Op::kWait:  // where its allreduce was started
      return inFlight != nullptr && streamOrdered(*inFlight) ? Runs::kStream : Runs::kHost;
    default:
      return i.group != nullptr && streamOrdered(*i.group) ? Runs::kStream : Runs::kHost;
  }
}

}  // namespace

void routeProgram(Program& prog, const StreamOrderedFn& streamOrdered) {
  const size_t n = prog.code.size();
  std::vector<Runs> runs(n);
  const LevelGroup* inFlight = nullptr;
  for (size_t i = 0; i < n; ++i) {
    const Instr& x = prog.code[i];
    runs[i] = runsOf(x, inFlight, streamOrdered);
    if (x.op == Op::kStart) inFlight = x.group;
    if (x.op == Op::kWait) inFlight = nullptr;
  }
  // A copy or division joins the host stage around it when host stages lie on both sides with
  // no stream step between: the progress thread runs it on the communicator's stream then.
  for (size_t i = 0; i < n;) {
    if (runs[i] != Runs::kEither) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && runs[j] == Runs::kEither) ++j;
    const bool hostBoth = i > 0 && runs[i - 1] == Runs::kHost && j < n && runs[j] == Runs::kHost;
    for (size_t k = i; k < j; ++k) runs[k] = hostBoth ? Runs::kHost : Runs::kStream;
    i = j;
  }
  prog.segments.clear();
  bool anyHost = false;
  for (size_t i = 0; i < n; ++i) {
    const bool host = runs[i] == Runs::kHost;
    anyHost = anyHost || host;
    if (prog.segments.empty() || prog.segments.back().host != host) {
      prog.segments.push_back(Program::Segment{i, i + 1, host});
    } else {
      prog.segments.back().end = i + 1;
    }
  }
  prog.route = anyHost ? Program::Route::kJoined : Program::Route::kStream;
}

bool hasStreamSteps(const Program& prog) {
  for (const Program::Segment& s : prog.segments) {
    if (s.host) continue;
    for (size_t i = s.begin; i < s.end; ++i) {
      if (fabricStep(prog.code[i].op)) return true;
    }
  }
  return false;
}

const char* routeName(Program::Route r) {
  switch (r) {
    case Program::Route::kHost:
      return "host";
    case Program::Route::kStream:
      return "stream";
    case Program::Route::kJoined:
      return "joined";
  }
  return "?";
}

std::string firstHostStage(const Program& prog) {
  for (const Program::Segment& s : prog.segments) {
    if (!s.host) continue;
    for (size_t i = s.begin; i < s.end; ++i) {
      const Instr& x = prog.code[i];
      if (!fabricStep(x.op) || x.group == nullptr) continue;
      const std::string fabric = x.group->deviceFabric ? x.group->deviceFabric->name()
                                                       : x.group->fabricName;
      if (x.op == Op::kPeer) return "its send or receive (fabric " + fabric + ")";
      if (x.step != nullptr) return stepText(x, fabric);
      return "step " + std::to_string(x.index) + " of " + std::to_string(x.total) + " (fabric " +
             fabric + ")";
    }
    return "a host stage";
  }
  return "";
}

}  // namespace strata::core
