// The plan-file keys `reduce_scatter:` and `all_gather:` (plan_file.h): what they read to, what is
// refused and on which line (a hierarchical form on a hierarchy that cannot run it included),
// the lookup by size, and that they survive formatPlanFile and count in the hash.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "decompose/plan_file.h"

namespace strata::plan {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

topo::Hierarchy nodeNetwork() {
  StatusOr<topo::Hierarchy> h =
      topo::Hierarchy::regular({topo::Level("node", "shm"), topo::Level("network", "mpi")}, {2, 2});
  REQUIRE(h.isOk());
  return h.value();
}

// Hosts of 3 and 4 ranks: no hierarchical reduce-scatter or all-gather.
topo::Hierarchy irregular() {
  std::vector<std::vector<std::string>> keys;
  for (const char* host : {"a", "a", "a", "b", "b", "b", "b"}) keys.push_back({host, ""});
  StatusOr<topo::Hierarchy> h =
      topo::Hierarchy::fromKeys({topo::Level("node", "shm"), topo::Level("network", "mpi")}, keys);
  REQUIRE(h.isOk());
  return h.value();
}

// Lines 1-2 hold one passthrough rule; `more` follows from line 3 on.
std::string withBlocks(const std::string& more) {
  return "rules:\n  - {min_bytes: 0, plan: passthrough}\n" + more;
}

struct Read {
  std::vector<PlanRule> rules;
  BlockRules blocks;
};

StatusOr<Read> read(const std::string& text, const topo::Hierarchy& h) {
  STRATA_ASSIGN_OR_RETURN(PlanFile file, parsePlanFile(text, "b.yaml"));
  Read out;
  STRATA_ASSIGN_OR_RETURN(out.rules,
                          resolvePlanFile(file, h, {"mpi", "shm"}, "b.yaml", &out.blocks));
  return out;
}

Read readOk(const std::string& text, const topo::Hierarchy& h = nodeNetwork()) {
  StatusOr<Read> r = read(text, h);
  INFO(text << r.status().message());
  REQUIRE(r.isOk());
  return r.value();
}

void refused(const std::string& text, int line, const std::string& problem,
             const topo::Hierarchy& h = nodeNetwork()) {
  StatusOr<Read> r = read(text, h);
  INFO(text);
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().code() == Code::kInvalidArgument);
  CHECK_THAT(r.status().message(), StartsWith("plan file b.yaml:" + std::to_string(line) + ": "));
  CHECK_THAT(r.status().message(), Contains(problem));
}

}  // namespace

TEST_CASE("plan file blocks: absent by default, read and sorted by size", "[plan_file]") {
  CHECK(readOk(withBlocks("")).blocks.empty());

  const Read r =
      readOk(withBlocks("reduce_scatter:\n"                                          // 3
                        "  - {min_bytes: 1MiB, form: flat}\n"                        // 4
                        "  - {min_bytes: 0, max_bytes: 1MiB, form: hierarchical}\n"  // 5
                        "all_gather:\n"                                              // 6
                        "  - {min_bytes: 0, max_bytes: inf, form: flat}\n"));        // 7
  const std::vector<BlockRule>& rs = r.blocks.reduceScatter;
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].minBytes == 0);
  CHECK(rs[0].maxBytes == (size_t{1} << 20));
  CHECK(rs[0].form == BlockForm::kHierarchical);
  CHECK(rs[0].line == 5);
  CHECK(rs[1].minBytes == (size_t{1} << 20));
  CHECK(rs[1].maxBytes == SIZE_MAX);
  CHECK(rs[1].form == BlockForm::kFlat);
  CHECK(rs[1].line == 4);
  REQUIRE(r.blocks.allGather.size() == 1);
  CHECK(r.blocks.allGather[0].form == BlockForm::kFlat);
  CHECK(&r.blocks.of(Collective::kReduceScatter) == &r.blocks.reduceScatter);
  CHECK(&r.blocks.of(Collective::kAllGather) == &r.blocks.allGather);
  CHECK(r.blocks.of(Collective::kAllReduce).empty());

  // The lookup: [min_bytes, max_bytes), the last rule up to and with SIZE_MAX.
  CHECK(blockRuleFor(rs, 0)->form == BlockForm::kHierarchical);
  CHECK(blockRuleFor(rs, (size_t{1} << 20) - 1)->form == BlockForm::kHierarchical);
  CHECK(blockRuleFor(rs, size_t{1} << 20)->form == BlockForm::kFlat);
  CHECK(blockRuleFor(rs, SIZE_MAX)->form == BlockForm::kFlat);
  CHECK(blockRuleIndexFor(rs, 5) == 0);
  CHECK(blockRuleFor({}, 5) == nullptr);

  // Only one of the two may be pinned; the other stays with the cost model.
  const Read only = readOk(withBlocks("all_gather:\n  - {min_bytes: 0, form: hierarchical}\n"));
  CHECK(only.blocks.reduceScatter.empty());
  REQUIRE(only.blocks.allGather.size() == 1);
  CHECK(only.blocks.allGather[0].form == BlockForm::kHierarchical);
}

TEST_CASE("plan file blocks: malformed rules are refused on their line", "[plan_file]") {
  refused(withBlocks("reduce_scatter:\n  - {min_bytes: 0, form: hier}\n"), 4,
          "reduce_scatter rule 1 form must be flat or hierarchical, found 'hier'");
  refused(withBlocks("all_gather:\n  - {min_bytes: 0, form: [flat]}\n"), 4,
          "all_gather rule 1 form must be flat or hierarchical, found a sequence");
  refused(withBlocks("all_gather:\n  - {min_bytes: 0}\n"), 4,
          "all_gather rule 1 has no form (flat or hierarchical)");
  refused(withBlocks("all_gather:\n  - {form: flat}\n"), 4, "all_gather rule 1 has no min_bytes");
  refused(withBlocks("all_gather:\n  - {min_bytes: 0, from: flat}\n"), 4,
          "all_gather rule 1 has unknown key 'from'; known keys: min_bytes, max_bytes, form");
  refused(withBlocks("all_gather:\n  - {min_bytes: 0, form: flat, form: flat}\n"), 4,
          "has key 'form' twice");
  refused(withBlocks("all_gather:\n  - {min_bytes: 4x, form: flat}\n"), 4,
          "all_gather rule 1 min_bytes must be a size in bytes");
  refused(withBlocks("all_gather:\n  - {min_bytes: 64K, max_bytes: 64K, form: flat}\n"), 4,
          "all_gather rule 1 covers nothing: min_bytes 64KiB is not below max_bytes 64KiB");
  refused(withBlocks("all_gather:\n  - flat\n"), 4,
          "all_gather rule 1 must be a map such as {min_bytes: 0, form: flat}, found a scalar");
  refused(withBlocks("all_gather: flat\n"), 3,
          "'all_gather' must be a list of rules such as {min_bytes: 0, form: hierarchical}, "
          "found a scalar");
  refused(withBlocks("reduce_scatter: []\n"), 3, "found an empty list");
  // A typo of the key is an unknown key at the top level, not a silently ignored one.
  refused(withBlocks("reduce_scater:\n  - {min_bytes: 0, form: flat}\n"), 3,
          "the top level has unknown key 'reduce_scater'; known keys: rules, measured, layout, "
          "reduce_scatter, all_gather");
}

TEST_CASE("plan file blocks: the rules must tile every size", "[plan_file]") {
  refused(withBlocks("reduce_scatter:\n  - {min_bytes: 4K, form: flat}\n"), 4,
          "no reduce_scatter rule covers [0, 4KiB); the reduce_scatter rules must start at "
          "min_bytes: 0");
  refused(withBlocks("all_gather:\n"
                     "  - {min_bytes: 0, max_bytes: 64K, form: flat}\n"
                     "  - {min_bytes: 128K, form: hierarchical}\n"),
          5,
          "all_gather rules at lines 4 and 5 leave a gap: no all_gather rule covers "
          "[64KiB, 128KiB)");
  refused(withBlocks("all_gather:\n"
                     "  - {min_bytes: 0, max_bytes: 64K, form: flat}\n"
                     "  - {min_bytes: 32K, form: hierarchical}\n"),
          5, "all_gather rules at lines 4 and 5 overlap on [32KiB, 64KiB)");
  refused(withBlocks("reduce_scatter:\n  - {min_bytes: 0, max_bytes: 1M, form: flat}\n"), 4,
          "no reduce_scatter rule covers [1MiB, inf); the last reduce_scatter rule must have no "
          "max_bytes (or max_bytes: inf)");
}

TEST_CASE("plan file blocks: a hierarchical form the hierarchy cannot run is refused",
          "[plan_file]") {
  const std::string text = withBlocks(
      "layout: \"node(2) x network(2), 4 ranks\"\n"      // 3
      "reduce_scatter:\n"                                // 4
      "  - {min_bytes: 0, max_bytes: 1M, form: flat}\n"  // 5
      "  - {min_bytes: 1M, form: hierarchical}\n");      // 6
  CHECK(readOk(text).blocks.reduceScatter.size() == 2);
  refused(text, 6,
          "reduce_scatter rule pins form hierarchical, which this hierarchy cannot run (its "
          "layout is irregular; the hierarchical form needs a regular layout of several "
          "levels); pin flat or leave the form to the cost model",
          irregular());
  // The message names the layout the file was written for and the job's.
  StatusOr<Read> r = read(text, irregular());
  REQUIRE_FALSE(r.isOk());
  CHECK_THAT(r.status().message(),
             Contains("the file was written for node(2) x network(2), 4 ranks, this job's "
                      "layout is node(3..4) x network(2), 7 ranks"));
  // Flat runs everywhere.
  CHECK(readOk(withBlocks("all_gather:\n  - {min_bytes: 0, form: flat}\n"), irregular())
            .blocks.allGather.size() == 1);
  // One level: nothing to go through level by level.
  StatusOr<topo::Hierarchy> one = topo::Hierarchy::regular({topo::Level("node", "shm")}, {4});
  REQUIRE(one.isOk());
  refused(withBlocks("all_gather:\n  - {min_bytes: 0, form: hierarchical}\n"), 4,
          "all_gather rule pins form hierarchical, which this hierarchy cannot run (it has one "
          "level",
          one.value());
}

TEST_CASE("plan file blocks: formatPlanFile writes them back and the hash counts them",
          "[plan_file]") {
  const topo::Hierarchy h = nodeNetwork();
  const Read r =
      readOk(withBlocks("reduce_scatter:\n"
                        "  - {min_bytes: 0, max_bytes: 96K, form: hierarchical}\n"
                        "  - {min_bytes: 96K, form: flat}\n"
                        "all_gather:\n"
                        "  - {min_bytes: 0, form: hierarchical}\n"));
  const std::string text = formatPlanFile(r.rules, h, {}, r.blocks);
  INFO(text);
  CHECK_THAT(text, Contains("reduce_scatter:\n"
                            "  - {min_bytes: 0, max_bytes: 96KiB, form: hierarchical}\n"
                            "  - {min_bytes: 96KiB, max_bytes: inf, form: flat}\n"
                            "all_gather:\n"
                            "  - {min_bytes: 0, max_bytes: inf, form: hierarchical}\n"));
  const Read again = readOk(text);
  REQUIRE(again.blocks.reduceScatter.size() == 2);
  CHECK(again.blocks.reduceScatter[0].maxBytes == 96 * 1024);
  CHECK(again.blocks.reduceScatter[1].form == BlockForm::kFlat);
  CHECK(planHash(again.rules, h, again.blocks) == planHash(r.rules, h, r.blocks));
  // Without form rules the text and the hash are what they were before the keys existed.
  CHECK(formatPlanFile(r.rules, h) == formatPlanFile(r.rules, h, {}, BlockRules{}));
  CHECK_THAT(formatPlanFile(r.rules, h), !Contains("reduce_scatter"));
  CHECK(planHash(r.rules, h, r.blocks) != planHash(r.rules, h));
  BlockRules other = r.blocks;
  other.allGather[0].form = BlockForm::kFlat;
  CHECK(planHash(r.rules, h, other) != planHash(r.rules, h, r.blocks));
}

}  // namespace strata::plan
