#pragma once
// Calibration that transfers between runs and chips (issue #12 item 2). A fit's parameters are
// split by what they describe: the chip (clock when the profile has no cycle counts, HBM and L2
// efficiency, the per-core DMA rates, memory latencies, the sustained cube efficiency, which
// differs between cube generations) or the kernels (per-family implementation costs:
// transposed-A and ND->NZ cube factors, vector cycles per repeat, API and launch overheads,
// scalar fallbacks, AI CPU rates), which CANN versions share. The kernel part is one set of
// factors fitted over every run; the chip part is one set per chip, fitted only on that chip's
// runs. Each factor multiplies the run's own prior value, so a run on a chip the fit never saw
// gets the kernel factors and keeps its chip's spec values.
//
// The objective is the per-row error a user sees: the robust (Cauchy) sum of squared log
// errors, each row weighted by how often its shape occurs, never the step total. Before the
// factors are used, a held-out part of the fit rows (whole shape keys) decides: if the fit does
// not lower the error there (pooled, and the median over runs), the spec is kept and the result
// says so.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/accuracy.h"
#include "model/hw_spec.h"

namespace npusim {

/// Where a calibration parameter belongs.
enum class ParamScope : std::uint8_t { kChip, kKernel };
/// The scope of a key of calibration_parameters() or "chip.freq_mhz".
[[nodiscard]] ParamScope param_scope(const std::string& key);

/// The fit rows of one run.
struct FitGroup {
  std::string run;             ///< name, for the per-run validation check
  std::string chip;            ///< chip key: groups with the same key share chip factors
  HwSpec prior;                ///< the run's spec (its measured clock, if any)
  bool clock_measured = true;  ///< false: chip.freq_mhz is a chip parameter of the fit
  const std::vector<Sample>* samples = nullptr;
  std::vector<std::size_t> rows;  ///< indices into *samples the fit may use
};

/// Options of a transfer fit.
struct TransferOptions {
  int max_iterations = 25;
  double prior_sigma = 0.7;         ///< prior width in log space, as calibrate()
  double robust_scale = 0.5;        ///< Cauchy scale of the log error, as calibrate()
  std::size_t max_keys_per_run = 250;  ///< shape keys per run the fit uses (sampled by hash)
  double validation_fraction = 0.25;   ///< shape keys held out to decide spec vs fit; 0: none
  std::uint64_t seed = 1;
};

/// The fitted factors (natural logs of multipliers on each run's prior value).
struct TransferFit {
  std::map<std::string, double> kernel;                         ///< key -> log factor
  std::map<std::string, std::map<std::string, double>> chip;    ///< chip -> key -> log factor
  bool kept_spec = false;     ///< the fit did not beat the spec on its held-out rows
  std::string verdict;        ///< one line: what the validation decided and on what figures
  int iterations = 0;
  std::size_t fit_rows = 0, validation_rows = 0;
  double validation_spec = 0, validation_fit = 0;  ///< weighted mean |log error| on held-out keys
};

/// The spec a fit gives a run on `chip`: `prior` times the kernel factors and, when the fit
/// saw that chip, its chip factors.
[[nodiscard]] HwSpec apply_transfer(const HwSpec& prior, const std::string& chip,
                                    const TransferFit& fit);

/// Fits kernel factors over every group and chip factors per chip (see the file comment).
[[nodiscard]] TransferFit fit_transfer(const std::vector<FitGroup>& groups,
                                       const TransferOptions& options = {});

/// (type, input and output shapes, dtypes): the key shape splits hold out whole.
[[nodiscard]] std::string sample_shape_key(const Sample& s);

}  // namespace npusim
