// Published measurements a topology file records, set beside NCCL's cost model (strata-plan).
//
// A topology file that describes a cluster someone measured may say what was measured, in a
// comment line that the library ignores and strata-plan reads:
//
//   # published: allreduce busbw 100 GB/s at 1G:8G (nccl-tests issue #169, 2 servers)
//   # published: allreduce busbw 7.0 GB/s at 1000000000 with ring (nccl-tests issue #22)
//
// busbw is nccl-tests' bus bandwidth; the sizes use --sizes' grammar (FIRST:LAST[:STEP], lists);
// `with ring` or `with tree` says the measurement forced that algorithm; the parenthesis names
// the source. With the NCCL baseline, each such line becomes a note: the model's bus bandwidth
// over the same sizes, how far it is from the measurement, and, where it is more than 15% off
// (docs/decomposition.md's bar), which of the model's assumptions the difference points to.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "decompose/nccl_model.h"

namespace strata::tools {

struct PublishedFigure {
  double busbwGBps = 0;
  std::vector<size_t> sizes;  // ascending
  std::string sizesText;      // as written
  bool algoGiven = false;
  plan::nccl::Algo algo = plan::nccl::Algo::kRing;
  std::string source;  // the parenthesis, "" when absent
  int line = 0;
};

// Every `# published:` line of a topology file's text. A line that starts so but does not follow
// the grammar above is refused with "topology file PATH:LINE: ...": a figure silently dropped
// would leave the prediction unexplained.
StatusOr<std::vector<PublishedFigure>> parsePublished(const std::string& text,
                                                      const std::string& path);

// One note per figure, comparing it with NCCL's cost model on `system` (a single line of text
// each, as strata-plan prints its notes).
std::vector<std::string> publishedNotes(const std::vector<PublishedFigure>& figures,
                                        const plan::nccl::System& system);

}  // namespace strata::tools
