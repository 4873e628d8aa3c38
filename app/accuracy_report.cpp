#include "app/accuracy_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "model/op_table.h"

namespace npusim::app {

nlohmann::ordered_json summary_json(const ErrorSummary& e) {
  nlohmann::ordered_json j;
  j["rows"] = e.rows;
  j["mape"] = e.mape;
  j["median_ape"] = e.median_ape;
  j["p90_ape"] = e.p90_ape;
  j["pearson_r_log"] = e.pearson_r_log;
  j["step_total_error"] = e.step_total_error;
  j["measured_total_us"] = e.measured_total_us;
  j["predicted_total_us"] = e.predicted_total_us;
  return j;
}

nlohmann::ordered_json report_json(const AccuracyReport& r) {
  nlohmann::ordered_json j;
  j["overall"] = summary_json(r.overall);
  auto map_json = [](const std::map<std::string, ErrorSummary>& m) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (const auto& [k, v] : m) o[k] = summary_json(v);
    return o;
  };
  j["by_family"] = map_json(r.by_family);
  j["by_type"] = map_json(r.by_type);
  j["by_regime"] = map_json(r.by_regime);
  return j;
}

namespace {

std::string line(const std::string& name, const ErrorSummary& e) {
  return fmt::format("  {:<34} {:>6} {:>8.1f}% {:>8.1f}% {:>8.1f}% {:>7.3f} {:>9.1f}%\n", name, e.rows,
                     100 * e.mape, 100 * e.median_ape, 100 * e.p90_ape, e.pearson_r_log,
                     100 * e.step_total_error);
}

std::string header() {
  return fmt::format("  {:<34} {:>6} {:>9} {:>9} {:>9} {:>7} {:>10}\n", "", "rows", "MAPE", "median",
                     "P90", "r(log)", "total err");
}

struct PipeRatios {
  std::vector<double> mte2, vec, cube, scalar, mte3;
};

double med(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct TypeStake {
  std::string type;
  double measured = 0, predicted = 0;
  std::size_t rows = 0;
  PipeRatios ratios;
};

std::vector<TypeStake> worst(const std::vector<Sample>& samples, const AccuracyReport& r,
                             std::size_t n) {
  std::map<std::string, TypeStake> by;
  for (std::size_t i = 0; i < samples.size() && i < r.rows.size(); ++i) {
    const Sample& s = samples[i];
    const SamplePrediction& p = r.rows[i];
    TypeStake& t = by[s.op.type];
    t.type = s.op.type;
    t.measured += s.measured_us;
    t.predicted += p.predicted_us;
    ++t.rows;
    if (s.has_pipes) {
      auto add = [](std::vector<double>& v, double pred, double meas) {
        if (meas > 0.05) v.push_back(pred / meas);
      };
      add(t.ratios.mte2, p.cost.pipes.mte2_us, s.measured_pipes.mte2_us);
      add(t.ratios.vec, p.cost.pipes.vector_us, s.measured_pipes.vector_us);
      add(t.ratios.cube, p.cost.pipes.cube_us, s.measured_pipes.cube_us);
      add(t.ratios.scalar, p.cost.pipes.scalar_us, s.measured_pipes.scalar_us);
      add(t.ratios.mte3, p.cost.pipes.mte3_us, s.measured_pipes.mte3_us);
    }
  }
  std::vector<TypeStake> v;
  for (auto& [k, t] : by) v.push_back(std::move(t));
  std::sort(v.begin(), v.end(), [](const TypeStake& a, const TypeStake& b) {
    return std::abs(a.predicted - a.measured) > std::abs(b.predicted - b.measured);
  });
  if (v.size() > n) v.resize(n);
  return v;
}

std::string ratio_text(const char* name, const std::vector<double>& v) {
  if (v.empty()) return "";
  return fmt::format(" {} x{:.2f}", name, med(v));
}

}  // namespace

std::string report_text(const AccuracyReport& r, const std::string& title) {
  std::string s = title + "\n" + header();
  s += line("overall", r.overall);
  s += "  by family\n";
  for (const auto& [k, v] : r.by_family) s += line("  " + k, v);
  s += "  by regime\n";
  for (const auto& [k, v] : r.by_regime) s += line("  " + k, v);
  s += "  by op type (at least 3 rows)\n";
  for (const auto& [k, v] : r.by_type) s += line("  " + k, v);
  return s;
}

std::string worst_types_text(const std::vector<Sample>& samples, const AccuracyReport& r,
                             std::size_t n) {
  std::string s = "worst op types by time at stake (predicted/measured pipe busy time, median):\n";
  for (const auto& t : worst(samples, r, n)) {
    s += fmt::format("  {:<28} {:>4} rows  measured {:>10.1f} us  predicted {:>10.1f} us  ({:+.0f}%)",
                     t.type, t.rows, t.measured, t.predicted,
                     100 * (t.predicted - t.measured) / t.measured);
    s += ratio_text("mte2", t.ratios.mte2) + ratio_text("vec", t.ratios.vec) +
         ratio_text("cube", t.ratios.cube) + ratio_text("scalar", t.ratios.scalar) +
         ratio_text("mte3", t.ratios.mte3) + "\n";
  }
  return s;
}

nlohmann::ordered_json worst_types_json(const std::vector<Sample>& samples, const AccuracyReport& r,
                                        std::size_t n) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& t : worst(samples, r, n)) {
    nlohmann::ordered_json j;
    j["type"] = t.type;
    j["rows"] = t.rows;
    j["measured_us"] = t.measured;
    j["predicted_us"] = t.predicted;
    auto put = [&](const char* k, const std::vector<double>& v) {
      if (!v.empty()) j["pipe_ratio"][k] = med(v);
    };
    put("mte2", t.ratios.mte2);
    put("vector", t.ratios.vec);
    put("cube", t.ratios.cube);
    put("scalar", t.ratios.scalar);
    put("mte3", t.ratios.mte3);
    arr.push_back(j);
  }
  return arr;
}

std::string rows_csv(const std::vector<Sample>& samples, const AccuracyReport& r) {
  std::string s =
      "source,type,family,block_dim,measured_us,predicted_us,ape,bound,predicted_block_dim,"
      "measured_mte2_us,predicted_mte2_us,measured_vector_us,predicted_vector_us,measured_cube_us,"
      "predicted_cube_us,measured_mte3_us,predicted_mte3_us,input_shapes\n";
  for (std::size_t i = 0; i < samples.size() && i < r.rows.size(); ++i) {
    const Sample& x = samples[i];
    const SamplePrediction& p = r.rows[i];
    std::string shapes;
    for (const auto& t : x.op.inputs) {
      if (!shapes.empty()) shapes += ';';
      for (std::size_t d = 0; d < t.shape.size(); ++d) {
        if (d) shapes += ',';
        shapes += std::to_string(t.shape[d]);
      }
    }
    s += fmt::format("{},{},{},{},{:.3f},{:.3f},{:.4f},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},"
                     "{:.3f},{:.3f},\"{}\"\n",
                     x.source, x.op.type, family_name(x.op.kind->family), x.block_dim, x.measured_us,
                     p.predicted_us, p.ape, bound_name(p.cost.bound), p.cost.block_dim,
                     x.measured_pipes.mte2_us, p.cost.pipes.mte2_us, x.measured_pipes.vector_us,
                     p.cost.pipes.vector_us, x.measured_pipes.cube_us, p.cost.pipes.cube_us,
                     x.measured_pipes.mte3_us, p.cost.pipes.mte3_us, shapes);
  }
  return s;
}

}  // namespace npusim::app
