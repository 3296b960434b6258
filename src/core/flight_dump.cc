#include "core/flight_dump.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/datatype.h"
#include "common/env.h"
#include "common/log.h"
#include "core/comm.h"
#include "core/describe.h"

namespace strata::core {
namespace {

std::string stepText(const FlightRecord& r) {
  if (r.steps == 0) return "";
  return "step " + std::to_string(r.step) + " of " + std::to_string(r.steps) + " (" +
         collectiveName(r.stepKind) + " at " +
         (r.stepLevel < 0 ? std::string("the flat group")
                          : "level " + std::to_string(r.stepLevel)) +
         ")";
}

}  // namespace

std::string flightJson(const Comm& c, const std::vector<FlightRecord>& calls,
                       const std::string& reason) {
  nlohmann::json j;
  j["reason"] = reason;
  j["rank"] = c.rank();
  j["size"] = c.size();
  j["host"] = c.settings().hostName;
  j["pid"] = static_cast<long>(getpid());
  j["commHash"] = hashText(c.hash());
  j["epochUs"] = c.flightRecorder().epochUs();
  // The levels' names, so that a reader can say "level 1 (network)" for a step's level.
  nlohmann::json levels = nlohmann::json::array();
  for (const topo::Level& l : c.hierarchy().levels()) {
    levels.push_back({{"name", l.name}, {"fabric", l.fabric}});
  }
  j["levels"] = std::move(levels);
  // Members known lost (their process is gone), so that strata-trace hang names them from the
  // survivors' dumps: a lost rank leaves none of its own.
  nlohmann::json lost = nlohmann::json::array();
  for (const auto& l : c.lostMembers()) lost.push_back({{"rank", l.first}, {"why", l.second}});
  if (!lost.empty()) j["lost"] = std::move(lost);
  nlohmann::json list = nlohmann::json::array();
  for (const FlightRecord& r : calls) {
    nlohmann::json e;
    e["id"] = r.id;
    e["collective"] = collectiveName(r.coll);
    e["seq"] = r.seq;
    e["count"] = r.count;
    e["type"] = dataTypeName(r.type);
    if (reduces(r.coll)) e["op"] = redOpName(r.op);
    e["root"] = r.root;
    e["state"] = flightStateName(r.state);
    e["step"] = r.step;
    e["steps"] = r.steps;
    if (r.steps > 0) {
      e["stepKind"] = collectiveName(r.stepKind);
      e["stepLevel"] = r.stepLevel;
    }
    e["issuedUs"] = r.issuedUs;
    e["startedUs"] = r.startedUs;
    e["endedUs"] = r.endedUs;
    if (!r.error.empty()) e["error"] = r.error;
    if (!r.note.empty()) e["note"] = r.note;
    list.push_back(std::move(e));
  }
  j["calls"] = std::move(list);
  return j.dump();
}

std::string flightSummary(const std::vector<FlightRecord>& calls, size_t last) {
  std::string out;
  const size_t from = calls.size() > last ? calls.size() - last : 0;
  for (size_t i = from; i < calls.size(); ++i) {
    const FlightRecord& r = calls[i];
    std::string line = std::string(collectiveName(r.coll)) + " #" + std::to_string(r.seq) + " (" +
                       std::to_string(r.count) + " " + dataTypeName(r.type) +
                       ")" + (r.note.empty() ? "" : " [" + r.note + "]") + ": " +
                       flightStateName(r.state);
    const std::string step = stepText(r);
    if (!step.empty() && r.state != FlightRecord::State::kDone) line += " at " + step;
    out += (out.empty() ? "" : "\n") + line;
  }
  return out.empty() ? "no calls recorded" : out;
}

Status dumpFlightRecorder(Comm& c, const std::string& reason, bool reasonLogged) {
  const FlightRecorder& rec = c.flightRecorder();
  if (!rec.on()) return Status::ok();
  const std::vector<FlightRecord> calls = rec.snapshot();
  const std::string pattern = env::get(env::var::STRATA_FLIGHT_RECORDER_FILE);
  if (pattern.empty()) {
    // A failure's message was logged just before: said once, not again in the summary.
    STRATA_WARN(kSubsysColl, "commHash %s flight recorder (%s); the last calls on rank %d:\n%s",
                hashText(c.hash()).c_str(), reasonLogged ? "at the failure above" : reason.c_str(),
                c.rank(), flightSummary(calls, 8).c_str());
    return Status::ok();
  }
  const std::string path = rankFilePath(pattern, c.rank(), c.settings().hostName);
  const std::string line = flightJson(c, calls, reason) + "\n";
  FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) {
    const Status st = systemError("STRATA_FLIGHT_RECORDER_FILE " + path +
                                  ": cannot write: " + std::strerror(errno));
    STRATA_WARN(kSubsysColl, "%s", st.message().c_str());
    return st;
  }
  const bool written = std::fwrite(line.data(), 1, line.size(), f) == line.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed)
    return systemError("STRATA_FLIGHT_RECORDER_FILE " + path + ": short write");
  STRATA_INFO(kSubsysColl, "commHash %s flight recorder (%s): %zu calls appended to %s",
              hashText(c.hash()).c_str(), reason.c_str(), calls.size(), path.c_str());
  return Status::ok();
}

}  // namespace strata::core
