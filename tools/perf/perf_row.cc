// The call names and the arithmetic of the columns (perf_row.h).
#include "perf_row.h"

#include <algorithm>

namespace strata::tools {

const char* strataCallName(Collective c, bool nonblocking) {
  switch (c) {
    case Collective::kAllReduce:
      return nonblocking ? "strataIAllReduce" : "strataAllReduce";
    case Collective::kReduceScatter:
      return nonblocking ? "strataIReduceScatter" : "strataReduceScatter";
    case Collective::kAllGather:
      return nonblocking ? "strataIAllGather" : "strataAllGather";
    case Collective::kBroadcast:
      return nonblocking ? "strataIBroadcast" : "strataBroadcast";
    case Collective::kReduce:
      return nonblocking ? "strataIReduce" : "strataReduce";
    default:
      return "?";
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double busFactor(Collective c, int nranks) {
  const double n = nranks;
  switch (c) {
    case Collective::kAllReduce:
      return 2 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      return (n - 1) / n;
    default:  // broadcast, reduce: every byte crosses one link once, busbw = algbw
      return 1;
  }
}

}  // namespace strata::tools
