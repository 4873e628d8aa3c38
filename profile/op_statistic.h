#pragma once
// msprof's op_statistic table rebuilt from a kernel table (CSV, database or timeline): one row
// per (OP Type, Core Type) with count, total, min, avg, max and share. msprof keys on both, so
// MatMulV3 on AI_CORE and MatMulV3 on MIX_AIC are two rows, and it counts the device tasks that
// are not AI Core kernels (DSA_SQE: DSAGenBitMask) as rows of their own; communication (hcom_*)
// is not in it. Checked against every op_statistic.csv of ../shared/profiles by
// tests/profile/op_statistic_test.cpp.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "profile/readers.h"

namespace npusim::profile {

/// Accumulates op_statistic rows from kernel rows.
class OpStatistic {
 public:
  /// Counts `row` under (type, task type); a row without a type counts under its name.
  /// Communication rows are left out, as msprof does.
  void add(const KernelRow& row);
  /// The table, by total time descending (then type, core type); ratio_pct is each row's share
  /// of the sum of totals. `line` is 0.
  [[nodiscard]] std::vector<OpStatRow> rows() const;
  /// Rows whose core type is not a kernel's (DSA_SQE, ...): device work that is not an AI Core
  /// or AI CPU kernel, listed apart by the advisor.
  [[nodiscard]] std::vector<OpStatRow> other_device_rows() const;

 private:
  std::map<std::pair<std::string, std::string>, OpStatRow> rows_;
};

}  // namespace npusim::profile
