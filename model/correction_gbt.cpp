#include "model/correction_gbt.h"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <stdexcept>
#include <utility>

namespace npusim {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(fmt::format("xgboost {}: {}", what, XGBGetLastError()));
}

// A DMatrix freed on scope exit.
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

}  // namespace

GbtModel::GbtModel() = default;
GbtModel::~GbtModel() {
  if (handle_) XGBoosterFree(handle_);
}
GbtModel::GbtModel(GbtModel&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
GbtModel& GbtModel::operator=(GbtModel&& o) noexcept {
  if (this != &o) {
    if (handle_) XGBoosterFree(handle_);
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
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
  GbtModel g;
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(&m.h, 1, &b), "XGBoosterCreate");
  g.handle_ = b;
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
      {"base_score", fmt::format("{}", sw > 0 ? swy / sw : 0.0)},
  };
  for (const auto& [k, v] : params) check(XGBoosterSetParam(b, k, v.c_str()), k);
  for (int it = 0; it < o.rounds; ++it) check(XGBoosterUpdateOneIter(b, it, m.h), "update");
  return g;
}

std::vector<double> GbtModel::predict(const std::vector<float>& x, std::size_t cols) const {
  if (!handle_) throw std::runtime_error("xgboost predict: no model");
  std::vector<double> out;
  if (x.empty()) return out;
  Matrix m(x, cols);
  bst_ulong len = 0;
  const float* r = nullptr;
  check(XGBoosterPredict(handle_, m.h, 0, 0, 0, &len, &r), "predict");
  out.assign(r, r + len);
  return out;
}

std::string GbtModel::save() const {
  if (!handle_) throw std::runtime_error("xgboost save: no model");
  bst_ulong len = 0;
  const char* buf = nullptr;
  check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "json"})", &len, &buf), "save");
  return std::string(buf, len);
}

GbtModel GbtModel::load(const std::string& json) {
  GbtModel g;
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(nullptr, 0, &b), "XGBoosterCreate");
  g.handle_ = b;
  check(XGBoosterLoadModelFromBuffer(b, json.data(), json.size()), "load");
  check(XGBoosterSetParam(b, "nthread", "1"), "nthread");
  return g;
}

}  // namespace npusim
