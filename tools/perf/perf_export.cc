#include "perf_export.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/datatype.h"

namespace strata::tools {
namespace {

using Json = nlohmann::ordered_json;

Json measurementJson(const Measurement& m) {
  Json j;
  j["time_us"] = m.timeUs;
  j["algbw"] = m.algbw;
  j["busbw"] = m.busbw;
  j["wrong"] = m.wrong < 0 ? Json(nullptr) : Json(m.wrong);
  j["samples_us"] = m.samplesUs;
  return j;
}

Json ratioJson(const Measurement& vs, const Measurement& strata) {
  return strata.timeUs > 0 ? Json(vs.timeUs / strata.timeUs) : Json(nullptr);
}

Json overlapJson(const OverlapResult& r) {
  Json j;
  j["t_coll_us"] = r.collUs;
  j["t_comp_us"] = r.compUs;
  j["t_both_us"] = r.bothUs;
  j["fraction_hidden"] = r.hidden;
  j["fraction_hidden_raw"] = r.hiddenRaw;
  j["compute_passes_min"] = r.passesMin;
  j["compute_passes_max"] = r.passesMax;
  j["compute_ok"] = r.computeOk;
  j["wrong"] = r.wrong < 0 ? Json(nullptr) : Json(r.wrong);
  j["t_coll_samples_us"] = r.collSamplesUs;
  j["t_comp_samples_us"] = r.compSamplesUs;
  j["t_both_samples_us"] = r.bothSamplesUs;
  return j;
}

Json rowJson(const PerfOptions& o, const PerfRow& r) {
  Json j;
  j["size"] = r.bytes;
  j["count"] = r.count;
  if (o.mode == PerfMode::kOverlap) {
    // The blocking call alone, out of place, as strata's measurement (tools/plot draws it).
    j["strata"] = {{"oop", measurementJson(r.strata[kOutOfPlace])}, {"ip", nullptr}};
    j["overlap"] = overlapJson(r.overlap);
    return j;
  }
  j["strata"] = {{"oop", measurementJson(r.strata[kOutOfPlace])},
                 {"ip", measurementJson(r.strata[kInPlace])}};
  if (o.mode == PerfMode::kNonblocking) {
    j["nonblocking"] = {{"oop", measurementJson(r.nonblocking[kOutOfPlace])},
                        {"ip", measurementJson(r.nonblocking[kInPlace])}};
    j["delta_us_oop"] = r.nonblocking[kOutOfPlace].timeUs - r.strata[kOutOfPlace].timeUs;
    j["delta_us_ip"] = r.nonblocking[kInPlace].timeUs - r.strata[kInPlace].timeUs;
  }
  if (!o.vs.empty()) {
    j["vs"] = {{"oop", measurementJson(r.vs[kOutOfPlace])},
               {"ip", measurementJson(r.vs[kInPlace])}};
    j["ratio_oop"] = ratioJson(r.vs[kOutOfPlace], r.strata[kOutOfPlace]);
    j["ratio_ip"] = ratioJson(r.vs[kInPlace], r.strata[kInPlace]);
  }
  return j;
}

Status writeText(const std::string& flag, const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f << text;
  if (f) f.close();
  if (!f) return systemError(flag + " " + path + ": cannot write: " + std::strerror(errno));
  return Status::ok();
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", x);
  return buf;
}

const char* modeName(PerfMode m) {
  switch (m) {
    case PerfMode::kNonblocking:
      return "nonblocking";
    case PerfMode::kOverlap:
      return "overlap";
    default:
      return "blocking";
  }
}

// --overlap's CSV: one line per size.
std::string overlapCsv(const PerfOptions& o, const PerfMeta& m, const std::vector<PerfRow>& rows) {
  std::ostringstream t;
  t << "collective,datatype,op,nranks,nhosts,size,count,root,t_coll_us,busbw,t_comp_us,"
       "t_both_us,fraction_hidden,fraction_hidden_raw,compute_passes_min,compute_passes_max,"
       "compute_ok,wrong\n";
  for (const PerfRow& r : rows) {
    const OverlapResult& x = r.overlap;
    t << collectiveName(o.coll) << ',' << perfTypeName(o.type) << ',' << perfOpName(o) << ','
      << m.nranks << ',' << m.hosts.size() << ',' << r.bytes << ',' << r.count << ',' << perfRoot(o)
      << ',' << number(x.collUs) << ',' << number(r.strata[kOutOfPlace].busbw) << ','
      << number(x.compUs) << ',' << number(x.bothUs) << ',' << number(x.hidden) << ','
      << number(x.hiddenRaw) << ',' << x.passesMin << ',' << x.passesMax << ','
      << (x.computeOk ? 1 : 0) << ',';
    if (x.wrong >= 0) t << x.wrong;
    t << '\n';
  }
  return t.str();
}

}  // namespace

Status writeJson(const std::string& path, const PerfOptions& o, const PerfMeta& m,
                 const std::vector<PerfRow>& rows, const PerfSummary& s, const std::string& error) {
  const bool vs = !o.vs.empty();
  Json j;
  j["tool"] = "strata-perf";
  j["version"] = m.version;
  j["version_code"] = m.versionCode;
  j["collective"] = collectiveName(o.coll);
  j["datatype"] = perfTypeName(o.type);
  j["op"] = perfOpName(o);
  j["nranks"] = m.nranks;
  j["nhosts"] = m.hosts.size();
  j["hosts"] = m.hosts;
  j["vs"] = vs ? Json(o.vs) : Json(nullptr);
  j["vs_label"] = vs ? Json(o.vsLabel) : Json(nullptr);
  j["iters"] = o.iters;
  j["warmup"] = o.warmup;
  j["repeat"] = o.repeat;
  j["agg_iters"] = o.nccl.aggIters;  // nccl-tests' -m: calls per timed iteration
  j["blocking"] = o.nccl.blocking;   // nccl-tests' -z: where the barriers are
  j["hierarchy"] = m.hierarchy;
  j["check"] = o.check;
  j["average"] = o.average;  // nccl-tests' -a: 0 rank 0, 1 mean, 2 min, 3 max over ranks
  j["type_size"] = dataTypeSize(o.type);
  j["minbytes"] = o.minBytes;
  j["maxbytes"] = o.maxBytes;
  j["stepfactor"] = o.stepFactor;
  j["stepbytes"] = o.stepBytes;
  j["root"] = perfRoot(o);  // -1: not a rooted collective
  j["mode"] = modeName(o.mode);
  j["inflight"] = o.inflight;
  j["thread_level"] = threadLevelName(m.threadLevel);
  j["progress_thread"] = m.progressThread;
  if (o.mode == PerfMode::kOverlap) j["compute_us"] = o.computeUs;  // 0: calibrated to t_coll
  j["rank_hosts"] = m.rankHosts;
  j["argv"] = m.argv;
  Json rowList = Json::array();
  for (const PerfRow& r : rows) rowList.push_back(rowJson(o, r));
  j["rows"] = rowList;
  j["avg_busbw"] = s.avgBusbw;
  if (vs) {
    j["avg_busbw_vs"] = s.avgBusbwVs;
    j["ratio_geomean"] = s.ratioGeomean;
  }
  if (o.mode == PerfMode::kNonblocking) {
    j["avg_busbw_nonblocking"] = s.avgBusbwNonblocking;
    j["avg_delta_us"] = s.avgDeltaUs;
  }
  if (o.mode == PerfMode::kOverlap) {
    j["avg_fraction_hidden"] = s.avgHidden;
    j["compute_failures"] = s.computeFailures;
  }
  j["wrong_total"] = s.wrongTotal;
  j["out_of_bounds"] = s.outOfBounds;
  j["ok"] = error.empty() && s.outOfBounds == 0 && s.computeFailures == 0;
  j["error"] = error.empty() ? Json(nullptr) : Json(error);
  return writeText("--json", path, j.dump(1) + "\n");
}

Status writeCsv(const std::string& path, const PerfOptions& o, const PerfMeta& m,
                const std::vector<PerfRow>& rows) {
  if (o.mode == PerfMode::kOverlap) return writeText("--csv", path, overlapCsv(o, m, rows));
  // ratio: the second implementation's time over strata's blocking one; delta_us (nonblocking
  // lines): nonblocking - blocking time per call.
  std::ostringstream t;
  t << "collective,datatype,op,nranks,nhosts,size,count,impl,label,placement,time_us,algbw,"
       "busbw,wrong,ratio,samples_us,root,inflight,delta_us\n";
  std::vector<Impl> impls = {kStrata};
  if (!o.vs.empty()) impls.push_back(kVs);
  if (o.mode == PerfMode::kNonblocking) impls.push_back(kNonblocking);
  for (const PerfRow& r : rows) {
    for (Impl impl : impls) {
      const std::string name = impl == kStrata ? "strata" : impl == kVs ? o.vs : "nonblocking";
      const std::string label = impl == kVs ? o.vsLabel : name;
      for (int p = 0; p < 2; ++p) {
        const Measurement& x = r.at(impl, Placement(p));
        const Measurement& blocking = r.strata[p];
        t << collectiveName(o.coll) << ',' << perfTypeName(o.type) << ',' << perfOpName(o) << ','
          << m.nranks << ',' << m.hosts.size() << ',' << r.bytes << ',' << r.count << ',' << name
          << ',' << label << ',' << (p == kInPlace ? "ip" : "oop") << ',' << number(x.timeUs) << ','
          << number(x.algbw) << ',' << number(x.busbw) << ',';
        if (x.wrong >= 0) t << x.wrong;
        t << ',';
        if (impl != kStrata && blocking.timeUs > 0) t << number(x.timeUs / blocking.timeUs);
        t << ',';
        for (size_t i = 0; i < x.samplesUs.size(); ++i) {
          t << (i == 0 ? "" : ";") << number(x.samplesUs[i]);
        }
        t << ',' << perfRoot(o) << ',' << (impl == kNonblocking ? o.inflight : 1) << ',';
        if (impl == kNonblocking) t << number(x.timeUs - blocking.timeUs);
        t << '\n';
      }
    }
  }
  return writeText("--csv", path, t.str());
}

Status checkWritable(const std::string& flag, const std::string& path) {
  if (access(path.c_str(), F_OK) == 0) {
    if (access(path.c_str(), W_OK) == 0) return Status::ok();
    return invalidArgument(flag + " " + path + ": cannot write: " + std::strerror(errno));
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (access(dir.c_str(), W_OK | X_OK) == 0) return Status::ok();
  return invalidArgument(flag + " " + path + ": cannot write: " + std::strerror(errno));
}

}  // namespace strata::tools
