// A rule's `stages` list in a plan file (plan_file.h has the format): each stage read from its
// text ("op@levelA+levelB") or map ({stage, fabric, algorithm, chunk_bytes, wire}), then checked
// to compose into an allreduce (reduce-scatters, exactly one allreduce, all-gathers mirroring the
// reduce-scatters in reverse order, no level twice) and folded into one RawStage per level set.
// With it, the two readers of plain values the rest of the plan-file parser shares. Internal to
// src/decompose: parsePlanFile is the interface.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/yaml_util.h"
#include "decompose/plan_file.h"

namespace strata::plan::detail {

// Whether `name` can be a level or fabric name: letters, digits, '_', '-' and '.'.
bool isValidName(const std::string& name);

// A size key of `what` (min_bytes, max_bytes, chunk_bytes) in the one size grammar; `allowInf`
// for max_bytes, where "inf" is SIZE_MAX.
StatusOr<size_t> sizeOf(const yaml::Entry& entry, bool allowInf, const std::string& what,
                        const yaml::Errors& errors);

// The `stages` entry of rule `what` ("rule 3"): a non-empty list whose stages compose into an
// allreduce; one RawStage per reduce-scatter (with its mirroring all-gather) in order, the
// allreduce's last. Errors name the stage's line.
StatusOr<std::vector<RawStage>> parseStages(const yaml::Entry& stages, const std::string& what,
                                            const yaml::Errors& errors);

}  // namespace strata::plan::detail
