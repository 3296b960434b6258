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

Json rowJson(const PerfOptions& o, const PerfRow& r) {
  Json j;
  j["size"] = r.bytes;
  j["count"] = r.count;
  j["strata"] = {{"oop", measurementJson(r.strata[kOutOfPlace])},
                 {"ip", measurementJson(r.strata[kInPlace])}};
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
  j["hierarchy"] = m.hierarchy;
  j["check"] = o.check;
  j["average"] = o.average;  // nccl-tests' -a: 0 rank 0, 1 mean, 2 min, 3 max over ranks
  j["type_size"] = dataTypeSize(o.type);
  j["minbytes"] = o.minBytes;
  j["maxbytes"] = o.maxBytes;
  j["stepfactor"] = o.stepFactor;
  j["stepbytes"] = o.stepBytes;
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
  j["wrong_total"] = s.wrongTotal;
  j["out_of_bounds"] = s.outOfBounds;
  j["ok"] = error.empty() && s.outOfBounds == 0;
  j["error"] = error.empty() ? Json(nullptr) : Json(error);
  return writeText("--json", path, j.dump(1) + "\n");
}

Status writeCsv(const std::string& path, const PerfOptions& o, const PerfMeta& m,
                const std::vector<PerfRow>& rows) {
  std::ostringstream t;
  t << "collective,datatype,op,nranks,nhosts,size,count,impl,label,placement,time_us,algbw,"
       "busbw,wrong,ratio,samples_us\n";
  const int impls = o.vs.empty() ? 1 : 2;
  for (const PerfRow& r : rows) {
    for (int impl = 0; impl < impls; ++impl) {
      for (int p = 0; p < 2; ++p) {
        const Measurement& x = impl == kStrata ? r.strata[p] : r.vs[p];
        t << collectiveName(o.coll) << ',' << perfTypeName(o.type) << ',' << perfOpName(o) << ','
          << m.nranks << ',' << m.hosts.size() << ',' << r.bytes << ',' << r.count << ','
          << (impl == kStrata ? "strata" : o.vs) << ',' << (impl == kStrata ? "strata" : o.vsLabel)
          << ',' << (p == kInPlace ? "ip" : "oop") << ',' << number(x.timeUs) << ','
          << number(x.algbw) << ',' << number(x.busbw) << ',';
        if (x.wrong >= 0) t << x.wrong;
        t << ',';
        if (impl == kVs && r.strata[p].timeUs > 0) t << number(x.timeUs / r.strata[p].timeUs);
        t << ',';
        for (size_t i = 0; i < x.samplesUs.size(); ++i) {
          t << (i == 0 ? "" : ";") << number(x.samplesUs[i]);
        }
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
