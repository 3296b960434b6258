#include "tune_fit.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace strata::tools {
namespace {

// The parameters in units of their scale, so that every column of the least-squares problem has
// a similar size: u = [alpha_0 .. alpha_{L-1}, beta_0 .. beta_{L-1}, overhead] / scale.
struct Layout {
  int levels = 0;
  std::vector<double> scale;  // us for alphas and the overhead, us per byte for betas
  std::vector<double> lower;  // lower bounds, scaled
  int alpha(int l) const { return l; }
  int beta(int l) const { return levels + l; }
  int overhead() const { return 2 * levels; }
  int size() const { return 2 * levels + 1; }
};

// A link's usable numbers, as the cost model costs an unusable one (cost_model.cc: usable).
double startLatency(const topo::LinkModel& l) {
  return std::isfinite(l.latencyUs) && l.latencyUs >= 0 ? l.latencyUs : 10.0;
}
double startBandwidth(const topo::LinkModel& l) {
  return std::isfinite(l.bandwidthGBps) && l.bandwidthGBps > 0 ? l.bandwidthGBps : 1.0;
}

// The model with parameters u: the hierarchy's links and the params' overhead replaced.
struct Model {
  topo::Hierarchy h;
  plan::CostParams params;
};

StatusOr<Model> modelAt(const topo::Hierarchy& start, const plan::CostParams& params,
                        const Layout& lay, const std::vector<double>& u) {
  std::vector<topo::Level> levels = start.levels();
  for (int l = 0; l < lay.levels; ++l) {
    topo::LinkModel& link = levels[l].link;
    link.latencyUs = u[lay.alpha(l)] * lay.scale[lay.alpha(l)];
    link.bandwidthGBps = 1e-3 / (u[lay.beta(l)] * lay.scale[lay.beta(l)]);
    link.source = "fitted";
  }
  STRATA_ASSIGN_OR_RETURN(topo::Hierarchy h, start.withLevels(std::move(levels)));
  Model m{std::move(h), params};
  m.params.stepOverheadUs = u[lay.overhead()] * lay.scale[lay.overhead()];
  return m;
}

std::vector<double> predictions(const Model& m, const std::vector<FitPoint>& points) {
  std::vector<double> out;
  for (const FitPoint& p : points)
    out.push_back(plan::predict(m.h, p.plan, p.bytes, m.params).totalUs);
  return out;
}

// What the fit minimises: the squared relative errors plus the pull towards the start.
double objective(const std::vector<double>& predicted, const std::vector<FitPoint>& points,
                 const std::vector<double>& u, const std::vector<double>& u0, double prior) {
  double sum = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const double r = predicted[i] / points[i].measuredUs - 1;
    sum += r * r;
  }
  for (size_t j = 0; j < u.size(); ++j) sum += prior * prior * (u[j] - u0[j]) * (u[j] - u0[j]);
  return sum;
}

double rms(const std::vector<double>& e) {
  double s = 0;
  for (double x : e) s += x * x;
  return e.empty() ? 0 : std::sqrt(s / e.size());
}

double worst(const std::vector<double>& e) {
  double w = 0;
  for (double x : e) w = std::max(w, std::fabs(x));
  return w;
}

// Solves the square system m x = v by Gaussian elimination with partial pivoting; a pivot that
// vanishes leaves its unknown at 0 (the caller's columns are independent, with the prior rows).
std::vector<double> solveSquare(std::vector<std::vector<double>> m, std::vector<double> v) {
  const size_t n = v.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r) {
      if (std::fabs(m[r][c]) > std::fabs(m[p][c])) p = r;
    }
    std::swap(m[c], m[p]);
    std::swap(v[c], v[p]);
    if (std::fabs(m[c][c]) < 1e-300) continue;
    for (size_t r = c + 1; r < n; ++r) {
      const double f = m[r][c] / m[c][c];
      for (size_t k = c; k < n; ++k) m[r][k] -= f * m[c][k];
      v[r] -= f * v[c];
    }
  }
  std::vector<double> x(n, 0);
  for (size_t c = n; c-- > 0;) {
    if (std::fabs(m[c][c]) < 1e-300) continue;
    double s = v[c];
    for (size_t k = c + 1; k < n; ++k) s -= m[c][k] * x[k];
    x[c] = s / m[c][c];
  }
  return x;
}

// Unconstrained least squares over the columns in `passive` (the others held at 0), through the
// normal equations: the problems here have a handful of well-scaled columns.
std::vector<double> leastSquaresOn(const std::vector<std::vector<double>>& a,
                                   const std::vector<double>& b, const std::vector<bool>& passive) {
  const size_t n = passive.size();
  std::vector<size_t> cols;
  for (size_t j = 0; j < n; ++j) {
    if (passive[j]) cols.push_back(j);
  }
  std::vector<std::vector<double>> m(cols.size(), std::vector<double>(cols.size(), 0));
  std::vector<double> v(cols.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t p = 0; p < cols.size(); ++p) {
      v[p] += a[i][cols[p]] * b[i];
      for (size_t q = 0; q < cols.size(); ++q) m[p][q] += a[i][cols[p]] * a[i][cols[q]];
    }
  }
  const std::vector<double> z = solveSquare(m, v);
  std::vector<double> x(n, 0);
  for (size_t p = 0; p < cols.size(); ++p) x[cols[p]] = z[p];
  return x;
}

}  // namespace

std::vector<double> nonNegativeLeastSquares(const std::vector<std::vector<double>>& a,
                                            const std::vector<double>& b) {
  const size_t n = a.empty() ? 0 : a[0].size();
  std::vector<double> x(n, 0);
  std::vector<bool> passive(n, false), refused(n, false);
  constexpr double kTol = 1e-10;
  // The gradient of -|Ax - b|^2 / 2: positive where raising a held-at-zero x_j would help.
  auto gradient = [&] {
    std::vector<double> w(n, 0);
    for (size_t i = 0; i < a.size(); ++i) {
      double r = b[i];
      for (size_t j = 0; j < n; ++j) r -= a[i][j] * x[j];
      for (size_t j = 0; j < n; ++j) w[j] += a[i][j] * r;
    }
    return w;
  };
  for (size_t outer = 0; outer < 3 * n + 3; ++outer) {
    const std::vector<double> w = gradient();
    int j = -1;
    for (size_t k = 0; k < n; ++k) {
      if (!passive[k] && !refused[k] && w[k] > kTol && (j < 0 || w[k] > w[j])) j = k;
    }
    if (j < 0) break;  // Kuhn-Tucker conditions hold: x is optimal
    passive[j] = true;
    for (size_t inner = 0; inner < 3 * n + 3; ++inner) {
      const std::vector<double> z = leastSquaresOn(a, b, passive);
      bool feasible = true;
      for (size_t k = 0; k < n; ++k) feasible = feasible && (!passive[k] || z[k] > kTol);
      if (feasible) {
        x = z;
        break;
      }
      if (inner == 0 && z[j] <= kTol) {  // the column that looked useful is not: skip it
        passive[j] = false;
        refused[j] = true;
        break;
      }
      // Move from x towards z as far as every passive x stays >= 0; those that hit 0 leave.
      double step = 1;
      for (size_t k = 0; k < n; ++k) {
        if (passive[k] && z[k] <= kTol) step = std::min(step, x[k] / (x[k] - z[k]));
      }
      for (size_t k = 0; k < n; ++k) {
        x[k] += step * (z[k] - x[k]);
        if (passive[k] && x[k] <= kTol) {
          passive[k] = false;
          x[k] = 0;
        }
      }
    }
    std::fill(refused.begin(), refused.end(), false);
    refused[j] = !passive[j];  // not tried again at once, which could cycle
  }
  return x;
}

namespace {

// What one descent works on: the timings, the start the prior pulls towards (u0) and the bounds.
struct Problem {
  const topo::Hierarchy& start;
  const plan::CostParams& params;
  const Layout& lay;
  const std::vector<FitPoint>& points;
  const std::vector<double>& u0;
  const FitOptions& o;
};

struct Descent {
  std::vector<double> u;  // where it stopped
  double f = 0;           // the objective there
  int iterations = 0;
};

// Gauss-Newton with non-negative least-squares steps from `from`, until a step no longer lowers
// the objective (or o.maxIterations).
StatusOr<Descent> descend(const Problem& p, const std::vector<double>& from) {
  const auto& [start, params, lay, points, u0, o] = p;
  Descent out{from, 0, 0};
  std::vector<double>& u = out.u;
  STRATA_ASSIGN_OR_RETURN(Model current, modelAt(start, params, lay, u));
  std::vector<double> predicted = predictions(current, points);
  double& f = out.f;
  f = objective(predicted, points, u, u0, o.prior);
  const size_t n = u.size();
  for (int it = 0; it < o.maxIterations; ++it) {
    out.iterations = it + 1;
    // The local linear model: row_i . u + c_i = predicted_i / measured_i. Forward differences
    // are exact inside a linear piece; a step that crosses a kink is checked below.
    std::vector<std::vector<double>> a(points.size() + n, std::vector<double>(n, 0));
    std::vector<double> b(points.size() + n, 0);
    for (size_t j = 0; j < n; ++j) {
      std::vector<double> up = u;
      const double d = 1e-4 * std::max(1.0, u[j]);
      up[j] += d;
      STRATA_ASSIGN_OR_RETURN(Model mj, modelAt(start, params, lay, up));
      const std::vector<double> pj = predictions(mj, points);
      for (size_t i = 0; i < points.size(); ++i)
        a[i][j] = (pj[i] - predicted[i]) / d / points[i].measuredUs;
    }
    for (size_t i = 0; i < points.size(); ++i) {
      double c = predicted[i] / points[i].measuredUs;
      for (size_t j = 0; j < n; ++j) c -= a[i][j] * u[j];
      b[i] = 1 - c;
    }
    for (size_t j = 0; j < n; ++j) {  // prior * (u_j - u0_j) ~ 0
      a[points.size() + j][j] = o.prior;
      b[points.size() + j] = o.prior * u0[j];
    }
    // Bounds u >= lower by the change of variables y = u - lower >= 0.
    for (size_t i = 0; i < a.size(); ++i) {
      for (size_t j = 0; j < n; ++j) b[i] -= a[i][j] * lay.lower[j];
    }
    std::vector<double> target = nonNegativeLeastSquares(a, b);
    for (size_t j = 0; j < n; ++j) target[j] += lay.lower[j];

    // Backtrack along the step until the true model improves.
    bool improved = false;
    for (double t = 1; t > 1e-3; t /= 2) {
      std::vector<double> trial(n);
      for (size_t j = 0; j < n; ++j)
        trial[j] = std::max(lay.lower[j], u[j] + t * (target[j] - u[j]));
      STRATA_ASSIGN_OR_RETURN(Model mt, modelAt(start, params, lay, trial));
      const std::vector<double> pt = predictions(mt, points);
      const double ft = objective(pt, points, trial, u0, o.prior);
      if (ft < f) {
        improved = f - ft > 1e-10 * f;
        u = trial;
        predicted = pt;
        f = ft;
        break;
      }
    }
    if (!improved) break;
  }
  return out;
}

}  // namespace

std::vector<double> relativeErrors(const topo::Hierarchy& h, const plan::CostParams& params,
                                   const std::vector<FitPoint>& points) {
  std::vector<double> e;
  for (const FitPoint& p : points) {
    if (p.measuredUs > 0)
      e.push_back(plan::predict(h, p.plan, p.bytes, params).totalUs / p.measuredUs - 1);
  }
  return e;
}

StatusOr<FitResult> fitCostModel(const topo::Hierarchy& start, const plan::CostParams& params,
                                 const std::vector<FitPoint>& all, const FitOptions& o) {
  std::vector<FitPoint> points;
  for (const FitPoint& p : all) {
    if (p.measuredUs > 0 && std::isfinite(p.measuredUs)) points.push_back(p);
  }
  if (points.empty()) return invalidArgument("no timed plan to fit the cost model to");

  Layout lay;
  lay.levels = start.numLevels();
  lay.scale.assign(lay.size(), 1);
  lay.lower.assign(lay.size(), 0);
  std::vector<double> u0(lay.size(), 0);  // the start: ping-pong links, no overhead
  double largestAlpha = 1;
  for (int l = 0; l < lay.levels; ++l) {
    const topo::LinkModel& link = start.level(l).link;
    const double alpha = startLatency(link), beta = 1e-3 / startBandwidth(link);
    largestAlpha = std::max(largestAlpha, alpha);
    lay.scale[lay.alpha(l)] = std::max(alpha, 1.0);
    lay.scale[lay.beta(l)] = beta;
    lay.lower[lay.beta(l)] = 1 / o.maxBandwidthFactor;
    u0[lay.alpha(l)] = alpha / lay.scale[lay.alpha(l)];
    u0[lay.beta(l)] = 1;
  }
  lay.scale[lay.overhead()] = largestAlpha;
  u0[lay.overhead()] = std::max(0.0, params.stepOverheadUs) / largestAlpha;

  FitResult out;
  {
    STRATA_ASSIGN_OR_RETURN(Model m0, modelAt(start, params, lay, u0));
    const std::vector<double> e = relativeErrors(m0.h, m0.params, points);
    out.rmsBefore = rms(e);
    out.worstBefore = worst(e);
  }

  // The descent from the ping-pong start, then from starts with two levels' bandwidths swapped:
  // a merged stage costs its slowest link, and the local steps do not cross that maximum's kink
  // back, so when the timings order two levels the other way round from ping-pong only a start
  // on the far side of the kink reaches the better fit. The lowest objective wins; ties go to
  // the earlier start (the ping-pong one first).
  const Problem problem{start, params, lay, points, u0, o};
  STRATA_ASSIGN_OR_RETURN(Descent best, descend(problem, u0));
  out.starts = 1;
  for (int l = 0; l < lay.levels; ++l) {
    for (int m = l + 1; m < lay.levels; ++m) {
      const double betaL = lay.scale[lay.beta(l)], betaM = lay.scale[lay.beta(m)];
      if (betaL == betaM) continue;  // swapping equal links is the same start
      std::vector<double> swapped = u0;
      swapped[lay.beta(l)] = std::max(lay.lower[lay.beta(l)], betaM / betaL);
      swapped[lay.beta(m)] = std::max(lay.lower[lay.beta(m)], betaL / betaM);
      STRATA_ASSIGN_OR_RETURN(Descent d, descend(problem, swapped));
      ++out.starts;
      if (d.f < best.f) best = std::move(d);
    }
  }
  const std::vector<double>& u = best.u;
  out.iterations = best.iterations;

  STRATA_ASSIGN_OR_RETURN(Model fitted, modelAt(start, params, lay, u));
  out.fitted = std::move(fitted.h);
  out.params = fitted.params;
  const std::vector<double> e = relativeErrors(out.fitted, out.params, points);
  out.rmsAfter = rms(e);
  out.worstAfter = worst(e);
  return out;
}

}  // namespace strata::tools
