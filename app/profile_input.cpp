#include "app/profile_input.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "app/common.h"
#include "model/error.h"
#include "profile/discover.h"
#include "profile/observation.h"
#include "profile/readers.h"

namespace npusim::app {

ProfileSamples load_samples(const std::vector<std::string>& paths,
                            const profile::ReadOptions& read) {
  ProfileSamples out;
  double source_freq = 0;  // a database's AICORE_FREQ / a timeline's AI Core Freq track
  // Kernel files already read: a profile reached from two of the paths (given twice, or a folder
  // and a folder inside it) is read once, not counted twice.
  std::set<std::filesystem::path> seen;
  for (const auto& path : paths) {
    const profile::Discovery d = profile::discover_profiles(path, read);
    for (const auto& n : d.notes) out.notes.push_back(n);
    for (const auto& src : d.profiles) {
      std::vector<std::string> files;
      bool again = false;
      for (const auto& f : src.kernel_files) {
        files.push_back(f.string());
        again = !seen.insert(std::filesystem::weakly_canonical(f)).second || again;
      }
      if (again) {
        out.notes.push_back(fmt::format("warning: {} ({}) was already read from an earlier path; "
                                        "read once",
                                        src.name, path));
        continue;
      }
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
        (void)profile::read_kernel_table(
            f, [&](const profile::KernelRow& r) { observe_row(out.chip, r); }, read);
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
  // No cycle counts to infer the clock from: the clock the profile states.
  finish_inference(out.chip, source_freq);
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
  const auto files = list_hw_specs(hw_spec_dirs());
  std::vector<HwSpec> chips;
  for (const auto& file : files) chips.push_back(load_hw_spec(file));
  const ChipMatch m = best_chip(chip, chips);
  HwSpec s = load_hw(files[m.index].string(), overlays);
  const double spec_freq = s.chip.freq_mhz;
  if (chip.clock_known) s.chip.freq_mhz = chip.freq_mhz;
  const std::string clock =
      chip.clock_known ? fmt::format("clock {} MHz measured instead of the spec's {}",
                                       chip.freq_mhz, spec_freq)
                         : fmt::format("the spec's nominal clock {} MHz (no cycle counts)", spec_freq);
  if (!m.exact) {
    warn(fmt::format("--hw auto: no chip fits the profile exactly; using the closest, {} ({}); "
                     "give --hw NAME if it is another",
                     s.chip.name, fmt::join(m.mismatched, "; ")));
  }
  if (note) {
    *note = fmt::format("--hw auto: {} ({} cube / {} vector cores), {}; {} match ({})",
                        s.chip.name, s.chip.cube_cores, s.chip.vector_cores, clock,
                        m.exact ? "exact" : "inexact", chip.evidence);
  }
  return s;
}

}  // namespace npusim::app
