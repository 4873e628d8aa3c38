#include "model/correction_gbt.h"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

namespace npusim {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(fmt::format("xgboost {}: {}", what, XGBGetLastError()));
}

// XGBoost handles freed on scope exit.
struct Matrix {
  DMatrixHandle h = nullptr;
  Matrix(const std::vector<float>& x, std::size_t cols) {
    const std::size_t rows = cols ? x.size() / cols : 0;
    check(XGDMatrixCreateFromMat(x.data(), rows, cols, -1e30F, &h), "XGDMatrixCreateFromMat");
  }
  ~Matrix() { XGDMatrixFree(h); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
};
struct Booster {
  BoosterHandle h = nullptr;
  ~Booster() { XGBoosterFree(h); }
};

// The trees of XGBoost's JSON model (learner.gradient_booster.model.trees).
std::vector<GbtTree> trees_of(const nlohmann::json& model) {
  std::vector<GbtTree> out;
  for (const auto& t : model.at("learner").at("gradient_booster").at("model").at("trees")) {
    GbtTree g;
    g.left = t.at("left_children").get<std::vector<int>>();
    g.right = t.at("right_children").get<std::vector<int>>();
    g.feature = t.at("split_indices").get<std::vector<int>>();
    g.value = t.at("split_conditions").get<std::vector<float>>();
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

GbtModel::GbtModel(double base_score, std::vector<GbtTree> trees, std::size_t features)
    : base_(base_score), trees_(std::move(trees)) {
  if (!std::isfinite(base_)) throw std::invalid_argument("base score is not finite");
  for (std::size_t t = 0; t < trees_.size(); ++t) {
    const GbtTree& g = trees_[t];
    const std::size_t n = g.left.size();
    if (n == 0 || g.right.size() != n || g.feature.size() != n || g.value.size() != n) {
      throw std::invalid_argument(fmt::format("tree {}: node arrays of different or zero length", t));
    }
    for (std::size_t k = 0; k < n; ++k) {
      const int l = g.left[k], r = g.right[k];
      const auto node = static_cast<int>(k);
      const bool leaf = l == -1 && r == -1;
      const bool inner = l > node && r > node && static_cast<std::size_t>(l) < n &&
                         static_cast<std::size_t>(r) < n;
      if (!leaf && !inner) {
        throw std::invalid_argument(fmt::format(
            "tree {} node {}: children {} and {} are neither a leaf's (-1) nor later nodes", t, k,
            l, r));
      }
      if (inner && (g.feature[k] < 0 || static_cast<std::size_t>(g.feature[k]) >= features)) {
        throw std::invalid_argument(fmt::format("tree {} node {}: feature {} outside 0..{}", t, k,
                                                g.feature[k], features - 1));
      }
      if (!std::isfinite(g.value[k])) {
        throw std::invalid_argument(fmt::format("tree {} node {}: value is not finite", t, k));
      }
    }
  }
}

GbtModel GbtModel::train(const std::vector<float>& x, std::size_t cols, const std::vector<float>& y,
                         const std::vector<float>& w, const GbtOptions& o) {
  Matrix m(x, cols);
  check(XGDMatrixSetFloatInfo(m.h, "label", y.data(), y.size()), "label");
  check(XGDMatrixSetFloatInfo(m.h, "weight", w.data(), w.size()), "weight");
  double sw = 0, swy = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    sw += w[i];
    swy += static_cast<double>(w[i]) * y[i];
  }
  const double base = sw > 0 ? swy / sw : 0.0;
  Booster b;
  check(XGBoosterCreate(&m.h, 1, &b.h), "XGBoosterCreate");
  const std::pair<const char*, std::string> params[] = {
      {"booster", "gbtree"},
      {"objective", "reg:squarederror"},
      {"tree_method", "hist"},
      {"nthread", "1"},
      {"verbosity", "0"},
      {"seed", fmt::format("{}", o.seed)},
      {"subsample", "1"},
      {"colsample_bytree", "1"},
      {"max_depth", fmt::format("{}", o.max_depth)},
      {"eta", fmt::format("{}", o.eta)},
      {"min_child_weight", fmt::format("{}", o.min_child_weight)},
      {"lambda", fmt::format("{}", o.lambda)},
      {"base_score", fmt::format("{:.17g}", base)},
  };
  for (const auto& [k, v] : params) check(XGBoosterSetParam(b.h, k, v.c_str()), k);
  for (int it = 0; it < o.rounds; ++it) check(XGBoosterUpdateOneIter(b.h, it, m.h), "update");
  bst_ulong len = 0;
  const char* buf = nullptr;
  check(XGBoosterSaveModelToBuffer(b.h, R"({"format": "json"})", &len, &buf), "save");
  const nlohmann::json model = nlohmann::json::parse(buf, buf + len);
  return GbtModel(base, trees_of(model), cols);
}

std::vector<double> GbtModel::predict(const std::vector<float>& x, std::size_t cols) const {
  const std::size_t rows = cols ? x.size() / cols : 0;
  std::vector<double> out(rows, base_);
  for (std::size_t i = 0; i < rows; ++i) {
    const float* row = x.data() + i * cols;
    float sum = 0;
    for (const GbtTree& t : trees_) {
      std::size_t k = 0;
      while (t.left[k] != -1) {
        const auto f = static_cast<std::size_t>(t.feature[k]);
        const float v = f < cols ? row[f] : 0.0F;
        k = static_cast<std::size_t>(v < t.value[k] ? t.left[k] : t.right[k]);
      }
      sum += t.value[k];
    }
    out[i] += sum;
  }
  return out;
}

}  // namespace npusim
