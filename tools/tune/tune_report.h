// strata-tune, steps 3 and 4: the plan file of the measured winners, and the tables that show
// what was measured and where the cost model disagrees with it.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "decompose/plan_file.h"
#include "topology/hierarchy.h"
#include "tune_fit.h"
#include "tune_measure.h"
#include "tune_sweep.h"

namespace strata::tools {

// A prediction is flagged when measured / predicted is above this or below its inverse.
constexpr double kDisagreeRatio = 1.25;

// "1 KiB", "256 KiB", "16 MiB", "1000 B": sizes as the tables and progress lines show them.
std::string humanBytes(size_t bytes);

// Three significant digits without an exponent: "0.52", "12.3", "4096".
std::string num(double x);

// Rows of cells as columns padded to their widest cell; the cells of columns marked in `right`
// are right-aligned (numbers), the others left-aligned. Two spaces between columns, two before.
std::string alignTable(const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right);

// The measured links next to the ones the hierarchy had (from detection or the topology file).
std::string formatLinks(const topo::Hierarchy& original, const topo::Hierarchy& measured,
                        const std::vector<LevelMeasurement>& m, const PingPongOptions& o);

// Short unique labels for the plans of a sweep, by describePlan text: the plan's name, with
// "#2", "#3" for later plans of the same name (reorders of three or more stages share one).
std::map<std::string, std::string> planLabels(const std::vector<SizeResult>& results);

// Every plan the sweep ran, with its stages, under its label.
std::string formatPlanLegend(const std::vector<SizeResult>& results,
                             const std::map<std::string, std::string>& labels);

// One row per size and timed plan: predicted (ping-pong links) and measured microseconds,
// measured/predicted, a flag where they disagree by more than kDisagreeRatio, the fitted
// model's prediction, and the fastest plan marked. `flagged` gets the number of flagged rows.
std::string formatComparison(const std::vector<SizeResult>& results,
                             const std::map<std::string, std::string>& labels, int* flagged);

// Per size: the plan the model would pick with the ping-pong links and with the fitted ones
// (among the timed plans), the measured fastest, and what each pick costs against it. Where
// the fitted model's pick is not the measured fastest the row says so; `disagree` gets the
// number of such sizes.
std::string formatChoices(const std::vector<SizeResult>& results,
                          const std::map<std::string, std::string>& labels, int* disagree);

// The fitted model's pick among r's timed plans (lowest fittedUs), or -1.
int fittedPick(const SizeResult& r);

// Per level the ping-pong link next to the fitted one, the fitted step overhead, and the
// model's relative error on the timed plans before and after the fit.
std::string formatFit(const topo::Hierarchy& measured, const FitResult& fit, size_t points);

// The same as plan-file comment lines ("# ..."), to follow the rules.
std::string fitComment(const topo::Hierarchy& measured, const FitResult& fit, size_t points);

// --check: one row per size: the file's plan (plans[0]) against the fastest of the rest, and
// file / fastest. `worst` gets the largest file / fastest ratio and `worstBytes` its size.
std::string formatCheck(const std::vector<SizeResult>& results,
                        const std::map<std::string, std::string>& labels, double* worst,
                        size_t* worstBytes);

// The measured fastest plan of each size, over ranges split at the geometric midpoints between
// the measured sizes ([0, m1), [m1, m2), ..., [m_last, inf)), adjacent ranges with the same plan
// merged. Fails when a size has no plan that gave the exact sum.
StatusOr<std::vector<plan::PlanRule>> winnerRules(const std::vector<SizeResult>& results,
                                                  const topo::Hierarchy& h);

std::string formatRules(const std::vector<plan::PlanRule>& rules, const topo::Hierarchy& h,
                        const std::map<std::string, std::string>& labels);

// Writes the plan file (formatPlanFile with the measured links, then `comment`: "# " lines)
// after checking that the text reads back (parsePlanFile, resolvePlanFile against `h`) to the
// same rules and links, then loads the written file again as STRATA_PLAN_FILE would.
// `blocks`: the form rules of reduce-scatter and all-gather (tune_forms.h), written after the
// plan rules; empty lists leave those collectives to the cost model.
Status writePlanFile(const std::string& path, const std::vector<plan::PlanRule>& rules,
                     const topo::Hierarchy& h, const std::map<std::string, topo::LinkModel>& links,
                     const std::string& comment = "", const plan::BlockRules& blocks = {});

// Whether `path` can be written (its directory exists and is writable, and the file, when it
// exists, is a writable regular file), so a bad --output fails before the sweep, not after.
Status checkWritable(const std::string& path);

}  // namespace strata::tools
