#include "app/profile_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "app/common.h"
#include "model/error.h"
#include "profile/discover.h"
#include "profile/observation.h"
#include "profile/readers.h"

namespace npusim::app {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

ProfileSamples load_samples(const std::vector<std::string>& paths,
                            const profile::ReadOptions& read) {
  ProfileSamples out;
  std::vector<double> freq, cube_cores;
  int max_vec_block = 0;
  double source_freq = 0;  // a database's AICORE_FREQ / a timeline's AI Core Freq track
  for (const auto& path : paths) {
    const profile::Discovery d = profile::discover_profiles(path, read);
    for (const auto& n : d.notes) out.notes.push_back(n);
    for (const auto& src : d.profiles) {
      std::vector<std::string> files;
      for (const auto& f : src.kernel_files) files.push_back(f.string());
      const profile::ObservationSet obs = profile::read_observations(files, read);
      for (const auto& o : obs.compute) {
        Sample s;
        s.op = o.op;
        s.measured_us = o.duration_us;
        s.block_dim = o.block_dim;
        s.has_pipes = o.has_pmu;
        s.measured_pipes = o.pipes;
        s.source = fmt::format("{}:{}", o.pos.file, o.pos.line);
        s.group = src.name;
        s.start_ns = o.start_ns;
        if (s.measured_us > 0) out.samples.push_back(std::move(s));
      }
      out.skipped += obs.skipped_count;
      std::uint64_t malformed = 0;
      for (const auto& i : obs.files) {
        malformed += i.broken_rows;
        for (const auto& m : i.broken_row_messages) out.notes.push_back(m);
        if (i.aicore_freq_mhz) source_freq = *i.aicore_freq_mhz;
      }
      out.notes.push_back(fmt::format("used {} ({}): {} compute rows, {} without shapes skipped, "
                                      "{} malformed rows skipped, {} communication and {} other "
                                      "tasks kept apart",
                                      src.name, src.kernel_source, obs.compute.size(),
                                      obs.skipped_count, malformed, obs.communication.size(),
                                      obs.other.size()));
      // Chip inference from the raw rows (profile_formats.md §7).
      for (const auto& f : src.kernel_files) {
        (void)profile::read_kernel_table(f, [&](const profile::KernelRow& r) {
          if (r.block_dim <= 0) return;
          if (r.kind == profile::TaskKind::kVector && r.aiv_total_cycles > 0 && r.aiv_time_us > 0) {
            freq.push_back(r.aiv_total_cycles / (r.aiv_time_us * r.block_dim));
            max_vec_block = std::max(max_vec_block, r.block_dim);
          }
          if (r.kind == profile::TaskKind::kCube && r.aic_total_cycles > 0 && r.aic_time_us > 0) {
            const double f_mhz = r.aic_total_cycles / (r.aic_time_us * r.block_dim);
            freq.push_back(f_mhz);
            if (r.cube_utilization_pct > 0 && r.duration_us > 0) {
              cube_cores.push_back(r.aic_total_cycles /
                                   (f_mhz * r.duration_us * r.cube_utilization_pct / 100.0));
            }
          }
        }, read);
      }
    }
  }
  if (out.samples.empty()) {
    throw InputError({paths.empty() ? std::string("<none>") : paths.front(), 0, 0},
                     fmt::format("no usable compute rows: the profile has no kernel rows with input "
                                 "shapes and dtypes ({} compute rows skipped); record shapes "
                                 "(torch_npu record_shapes=True, msprof --task-time with shapes)",
                                 out.skipped));
  }
  InferredChip& c = out.chip;
  c.freq_mhz = std::round(median(freq));
  // No cycle counts to infer the clock from: the clock the profile states.
  if (freq.empty() && source_freq > 0) c.freq_mhz = source_freq;
  c.cube_cores = static_cast<int>(std::lround(median(cube_cores)));
  c.vector_cores = max_vec_block;
  if (c.cube_cores > 0 && c.vector_cores < 2 * c.cube_cores) c.vector_cores = 2 * c.cube_cores;
  c.rows_used = freq.size();
  c.evidence = fmt::format("clock {} MHz from total_cycles / (pipe time x block dim) over {} rows; "
                           "{} cube cores from cube_utilization over {} rows; {} vector cores",
                           c.freq_mhz, freq.size(), c.cube_cores, cube_cores.size(),
                           c.vector_cores);
  return out;
}

HwSpec hw_for_profiles(const std::string& hw, const std::vector<std::string>& overlays,
                       const InferredChip& chip, std::string* note) {
  const SourcePos pos{"<command line>", 0, 0};
  if (hw != "auto") {
    HwSpec spec = load_hw(hw, overlays);
    if (chip.cube_cores > 0 && chip.cube_cores != spec.chip.cube_cores) {
      throw InputError(pos, fmt::format("--hw {} has {} cube cores but the profile's rows show {} ({}); "
                                        "use --hw auto or the matching chip",
                                        hw, spec.chip.cube_cores, chip.cube_cores, chip.evidence));
    }
    if (note) *note = fmt::format("chip {} as given", spec.chip.name);
    return spec;
  }
  if (chip.cube_cores <= 0 || chip.freq_mhz <= 0) {
    throw InputError(pos, "--hw auto: the profile has no cycle counts to infer the chip from "
                          "(needs aic_/aiv_total_cycles and cube_utilization columns); give --hw NAME");
  }
  for (const auto& file : list_hw_specs(hw_spec_dirs())) {
    HwSpec spec = load_hw_spec(file);
    if (spec.chip.cube_cores == chip.cube_cores && spec.chip.vector_cores == chip.vector_cores) {
      HwSpec s = load_hw(file.string(), overlays);
      const double spec_freq = s.chip.freq_mhz;
      s.chip.freq_mhz = chip.freq_mhz;
      if (note) {
        *note = fmt::format("--hw auto: {} ({} cube / {} vector cores), clock {} MHz measured "
                            "instead of the spec's {} ({})",
                            s.chip.name, s.chip.cube_cores, s.chip.vector_cores, chip.freq_mhz,
                            spec_freq, chip.evidence);
      }
      return s;
    }
  }
  throw InputError(pos, fmt::format("--hw auto: no chip in hw_specs/ has {} cube and {} vector cores "
                                    "({})",
                                    chip.cube_cores, chip.vector_cores, chip.evidence));
}

}  // namespace npusim::app
