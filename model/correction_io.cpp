// The learned correction's file: one `key values...` line per field, then the regressor: the
// ridge coefficients, or the boosted trees' node arrays, one line each per tree.
#include <fmt/format.h>

#include <cmath>
#include <sstream>
#include <utility>

#include "model/correction.h"
#include "model/error.h"

namespace npusim {

namespace {

constexpr const char* kMagic = "npusim-correction 2";

template <typename Range>
std::string numbers(const Range& r) {
  std::string s;
  for (const auto v : r) s += fmt::format(" {:.17g}", static_cast<double>(v));
  return s;
}

// Reads the file line by line, failing with the line number.
struct LineReader {
  const std::string& text;
  const std::string& file;
  std::size_t pos = 0;
  std::uint32_t line = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError({file, line, 0}, fmt::format("correction file: {}", what));
  }
  // The next line, which must start with `key`; its values.
  std::vector<double> values(const char* key, std::size_t count) {
    if (pos >= text.size()) {
      ++line;
      fail(fmt::format("ends before '{}'", key));
    }
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::istringstream in(text.substr(pos, end - pos));
    pos = end + 1;
    ++line;
    std::string k;
    in >> k;
    if (k != key) fail(fmt::format("expected '{}', found '{}'", key, k));
    std::vector<double> v;
    std::string tok;
    while (in >> tok) {
      char* stop = nullptr;
      const double d = std::strtod(tok.c_str(), &stop);
      if (stop == tok.c_str() || *stop != '\0' || !std::isfinite(d)) {
        fail(fmt::format("'{}': '{}' is not a finite number", key, tok));
      }
      v.push_back(d);
    }
    if (v.size() != count) {
      fail(fmt::format("'{}' has {} values, expected {}", key, v.size(), count));
    }
    return v;
  }
  double value(const char* key) { return values(key, 1).front(); }
};

}  // namespace

std::string Correction::serialize() const {
  std::string s = std::string(kMagic) + "\n";
  s += fmt::format("kind {}\n", static_cast<int>(options_.kind));
  s += fmt::format("features {}\n", kCorrectionFeatures);
  s += fmt::format("hashed_type {}\n", options_.features.hashed_type ? 1 : 0);
  s += fmt::format("chip_features {}\n", options_.features.chip ? 1 : 0);
  s += fmt::format("ood_margin {:.17g}\n", options_.ood_margin);
  s += fmt::format("max_log_target {:.17g}\n", options_.max_log_target);
  s += fmt::format("rows {}\n", rows_);
  s += "lo" + numbers(range_.lo) + "\n";
  s += "hi" + numbers(range_.hi) + "\n";
  s += "family_seen" + numbers(range_.family_seen) + "\n";
  // The distance test: standardisation, threshold, reference points over the varying features.
  s += fmt::format("domain_threshold {:.17g}\n", domain_.threshold());
  s += "domain_mean" + numbers(domain_.mean.empty() ? std::vector<double>(kCorrectionFeatures, 0.0)
                                                    : domain_.mean) + "\n";
  s += "domain_scale" + numbers(domain_.scale.empty() ? std::vector<double>(kCorrectionFeatures, 0.0)
                                                      : domain_.scale) + "\n";
  s += fmt::format("domain_points {}\n", domain_.points().size());
  for (const auto& p : domain_.points()) {
    s += "p";
    for (const float v : p) s += fmt::format(" {:.9g}", v);  // a float exactly
    s += "\n";
  }
  if (options_.kind == CorrectionKind::kRidge) {
    s += fmt::format("intercept {:.17g}\n", intercept_);
    s += "mean" + numbers(mean_) + "\n";
    s += "scale" + numbers(scale_) + "\n";
    s += "beta" + numbers(beta_) + "\n";
  } else if (options_.kind == CorrectionKind::kGbt) {
    s += fmt::format("base_score {:.17g}\n", gbt_.base_score());
    s += fmt::format("trees {}\n", gbt_.trees().size());
    for (const GbtTree& t : gbt_.trees()) {
      s += fmt::format("nodes {}\n", t.left.size());
      s += "left" + numbers(t.left) + "\n";
      s += "right" + numbers(t.right) + "\n";
      s += "feature" + numbers(t.feature) + "\n";
      s += "value" + numbers(t.value) + "\n";
    }
  }
  return s;
}

Correction Correction::parse(const std::string& text, const std::string& file) {
  LineReader r{text, file};
  const std::size_t first = std::min(text.find('\n'), text.size());
  r.line = 1;
  if (text.compare(0, first, kMagic) != 0) {
    r.fail(fmt::format("the first line is not '{}': not a file of `npusim calibrate "
                       "--correction-out`", kMagic));
  }
  r.pos = first + 1;
  Correction c;
  const double kind = r.value("kind");
  if (kind != 1 && kind != 2) r.fail(fmt::format("kind {}: expected 1 (ridge) or 2 (gbt)", kind));
  c.options_.kind = kind == 1 ? CorrectionKind::kRidge : CorrectionKind::kGbt;
  if (r.value("features") != static_cast<double>(kCorrectionFeatures)) {
    r.fail(fmt::format("written with another feature count; this npusim has {}: retrain it",
                       kCorrectionFeatures));
  }
  c.options_.features.hashed_type = r.value("hashed_type") != 0;
  c.options_.features.chip = r.value("chip_features") != 0;
  c.options_.ood_margin = r.value("ood_margin");
  c.options_.max_log_target = r.value("max_log_target");
  c.range_.margin = c.options_.ood_margin;
  c.rows_ = static_cast<std::size_t>(r.value("rows"));
  if (c.rows_ == 0) r.fail("rows 0: a correction trained on nothing");
  const auto lo = r.values("lo", kCorrectionFeatures);
  const auto hi = r.values("hi", kCorrectionFeatures);
  const auto seen = r.values("family_seen", kFamilyFeatures);
  for (std::size_t i = 0; i < kCorrectionFeatures; ++i) {
    if (lo[i] > hi[i]) r.fail(fmt::format("feature {}: lo above hi", i));
    c.range_.lo[i] = lo[i];
    c.range_.hi[i] = hi[i];
  }
  for (std::size_t f = 0; f < kFamilyFeatures; ++f) c.range_.family_seen[f] = seen[f] != 0;
  c.range_.any = true;
  {
    const double threshold = r.value("domain_threshold");
    std::vector<double> mean = r.values("domain_mean", kCorrectionFeatures);
    std::vector<double> scale = r.values("domain_scale", kCorrectionFeatures);
    std::size_t used = 0;
    for (const double v : scale) used += v > 0 ? 1 : 0;
    const double count = r.value("domain_points");
    if (count < 0 || count > 1e6 || count != std::floor(count)) {
      r.fail(fmt::format("domain_points {}: expected a whole number up to 1000000", count));
    }
    std::vector<std::vector<float>> points;
    for (std::size_t k = 0; k < static_cast<std::size_t>(count); ++k) {
      std::vector<float> p;
      for (const double v : r.values("p", used)) p.push_back(static_cast<float>(v));
      points.push_back(std::move(p));
    }
    try {
      c.domain_ = CorrectionDomain::restore(std::move(mean), std::move(scale), threshold,
                                            std::move(points));
    } catch (const std::invalid_argument& e) {
      r.fail(e.what());
    }
  }
  if (c.options_.kind == CorrectionKind::kRidge) {
    c.intercept_ = r.value("intercept");
    c.mean_ = r.values("mean", kCorrectionFeatures);
    c.scale_ = r.values("scale", kCorrectionFeatures);
    c.beta_ = r.values("beta", kCorrectionFeatures);
    return c;
  }
  const double base = r.value("base_score");
  const double count = r.value("trees");
  if (count < 0 || count > 100000 || count != std::floor(count)) {
    r.fail(fmt::format("trees {}: expected a whole number up to 100000", count));
  }
  std::vector<GbtTree> trees(static_cast<std::size_t>(count));
  auto ints = [&](const char* key, std::size_t n) {
    std::vector<int> v;
    for (const double d : r.values(key, n)) {
      if (d != std::floor(d) || std::abs(d) > 1e9) r.fail(fmt::format("'{}': {} is not an index", key, d));
      v.push_back(static_cast<int>(d));
    }
    return v;
  };
  for (GbtTree& t : trees) {
    const double n = r.value("nodes");
    if (n < 1 || n > 1e6 || n != std::floor(n)) r.fail(fmt::format("nodes {}", n));
    const auto nodes = static_cast<std::size_t>(n);
    t.left = ints("left", nodes);
    t.right = ints("right", nodes);
    t.feature = ints("feature", nodes);
    for (const double v : r.values("value", nodes)) t.value.push_back(static_cast<float>(v));
  }
  try {
    c.gbt_ = GbtModel(base, std::move(trees), kCorrectionFeatures);
  } catch (const std::invalid_argument& e) {
    r.fail(e.what());
  }
  return c;
}

}  // namespace npusim
