// Rendering of advisor reports: short terminal text, complete JSON, a Markdown ticket.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "profile/advisor.h"

namespace npusim::profile {

namespace {

std::string fmt_us(double v) {
  if (v >= 100) return fmt::format("{:.0f} us", v);
  return fmt::format("{:.2f} us", v);
}
std::string pct(double share) { return fmt::format("{:.1f} %", share * 100.0); }

std::string evidence_text(const Evidence& e) {
  if (e.number) return fmt::format("{} = {:.6g}", e.key, *e.number);
  return fmt::format("{}: {}", e.key, e.text);
}

std::string chip_line(const ChipFigures& c) {
  if (!c.cube_cores || !c.freq_mhz) return "chip: cube cores / frequency unknown";
  std::string line = fmt::format("chip: {} cube cores at {:.0f} MHz ({})", *c.cube_cores,
                                 *c.freq_mhz, c.cores_source);
  if (c.hbm_gbps) {
    line += fmt::format("; HBM {:.0f} GB/s of {}", *c.hbm_gbps,
                        c.bandwidth_source.empty() ? "the chip" : c.bandwidth_source);
  }
  return line;
}

// "computing 8874 us, exposed communication 101963 us, overlapped 4029 us, free 25744 us".
std::string breakdown(const StepStat& s) {
  return fmt::format("computing {}, exposed communication {} ({}), overlapped communication {}, "
                     "free {}",
                     fmt_us(s.computing_us), fmt_us(s.exposed_communication_us),
                     s.span_us > 0 ? pct(s.exposed_communication_us / s.span_us) : "-",
                     fmt_us(s.overlapped_communication_us), fmt_us(s.free_us));
}

nlohmann::json kernel_json(const KernelBound& k) {
  nlohmann::json ratios = nlohmann::json::object();
  for (const auto& [name, v] : k.ratios) ratios[name] = v;
  return {{"name", k.name},   {"type", k.type},       {"shapes", k.shapes},
          {"dtypes", k.dtypes}, {"side", k.side},     {"calls", k.calls},
          {"total_us", k.total_us}, {"bound", k.bound}, {"ratios", ratios},
          {"why", k.why}};
}

nlohmann::json type_json(const TypeStat& t) {
  nlohmann::json j = {{"type", t.type},         {"kind", t.kind},         {"count", t.count},
                      {"total_us", t.total_us}, {"mean_us", t.mean_us()}, {"min_us", t.min_us},
                      {"max_us", t.max_us},     {"share", t.share}};
  j["cube_utilization"] = t.cube_utilization ? nlohmann::json(*t.cube_utilization) : nullptr;
  j["mac_utilization"] = t.mac_utilization ? nlohmann::json(*t.mac_utilization) : nullptr;
  return j;
}

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json finding_json(const Finding& f, const std::string& profile) {
  nlohmann::json ev = nlohmann::json::object();
  for (const auto& e : f.evidence) {
    ev[e.key] = e.number ? nlohmann::json(*e.number) : nlohmann::json(e.text);
  }
  return {{"profile", profile}, {"check", f.check},   {"severity", f.severity},
          {"title", f.title},   {"ops", f.ops},       {"time_us", f.time_us},
          {"evidence", ev},     {"advice", f.advice}};
}

nlohmann::json op_stat_json(const OpStatRow& s) {
  return {{"type", s.type},         {"core_type", s.core_type}, {"count", s.count},
          {"total_us", s.total_us}, {"min_us", s.min_us},       {"avg_us", s.avg_us},
          {"max_us", s.max_us},     {"ratio_pct", s.ratio_pct}};
}

// Device work outside the compute totals (DSA_SQE...), named so it is not silently dropped.
std::string other_device_line(const Report& r) {
  std::string out = "other device tasks (not in the compute totals):";
  for (std::size_t i = 0; i < r.other_device_types.size(); ++i) {
    const auto& s = r.other_device_types[i];
    out += fmt::format("{} {} on {} {} x {}", i ? "," : "", s.type, s.core_type, s.count,
                       fmt_us(s.avg_us));
  }
  return out;
}

}  // namespace

std::string render_json(const std::vector<Report>& reports) {
  nlohmann::json root;
  nlohmann::json profiles = nlohmann::json::array();
  nlohmann::json findings = nlohmann::json::array();
  nlohmann::json utilization = nlohmann::json::array();
  nlohmann::json skipped = nlohmann::json::array();
  std::uint64_t ops = 0;
  double total = 0;
  // Op types over all profiles (ranks of one job run the same model).
  std::map<std::string, TypeStat> merged;
  for (const auto& r : reports) {
    ops += r.ops;
    total += r.total_time_us;
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : r.steps) {
      steps.push_back({{"step", s.step},       {"ops", s.ops},         {"span_us", s.span_us},
                       {"busy_us", s.busy_us}, {"idle_us", s.idle_us}, {"compute_us", s.compute_us},
                       {"cube_cycles", s.cube_cycles},
                       {"cube_utilization", opt(s.cube_utilization)},
                       {"mac_utilization", opt(s.mac_utilization)}});
      if (s.has_communication) {
        steps.back()["breakdown"] = {
            {"computing_us", s.computing_us},
            {"communication_us", s.communication_us},
            {"exposed_communication_us", s.exposed_communication_us},
            {"overlapped_communication_us", s.overlapped_communication_us},
            {"free_us", s.free_us}};
      }
    }
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : r.kernels) kernels.push_back(kernel_json(k));
    nlohmann::json types = nlohmann::json::array();
    for (const auto& t : r.op_types) types.push_back(type_json(t));
    nlohmann::json comm = nlohmann::json::array();
    for (const auto& t : r.communication_types) comm.push_back(type_json(t));
    nlohmann::json stat = nlohmann::json::array();
    for (const auto& s : r.op_statistic) stat.push_back(op_stat_json(s));
    nlohmann::json other = nlohmann::json::array();
    for (const auto& s : r.other_device_types) other.push_back(op_stat_json(s));
    profiles.push_back({{"name", r.profile},
                        {"producer", r.producer},
                        {"cann_version", r.cann_version},
                        {"files", r.files},
                        {"layouts", r.layouts},
                        {"notes", r.notes},
                        {"ops", r.ops},
                        {"total_time_us", r.total_time_us},
                        {"wait_time_us", r.wait_time_us},
                        {"communication_ops", r.communication_ops},
                        {"communication_time_us", r.communication_time_us},
                        {"other_tasks", r.other_tasks},
                        {"op_types", types},
                        {"communication_types", comm},
                        {"op_statistic", stat},
                        {"other_device_types", other},
                        {"kernels", kernels},
                        {"steps", steps}});
    utilization.push_back({{"profile", r.profile},
                           {"cube_cores", opt(r.chip.cube_cores)},
                           {"freq_mhz", opt(r.chip.freq_mhz)},
                           {"hbm_gbps", opt(r.chip.hbm_gbps)},
                           {"chip", r.chip.name},
                           {"chip_source", r.chip.cores_source},
                           {"bandwidth_source", r.chip.bandwidth_source},
                           {"steps", steps}});
    for (const auto& f : r.findings) findings.push_back(finding_json(f, r.profile));
    for (const auto& s : r.skipped) {
      skipped.push_back({{"profile", r.profile}, {"check", s.check}, {"reason", s.reason}});
    }
    for (const auto& t : r.op_types) {
      auto& m = merged[t.type];
      if (m.count == 0) {
        m.type = t.type;
        m.kind = t.kind;
        m.min_us = t.min_us;
      }
      m.count += t.count;
      m.total_us += t.total_us;
      m.min_us = std::min(m.min_us, t.min_us);
      m.max_us = std::max(m.max_us, t.max_us);
    }
  }
  std::vector<TypeStat> types;
  for (auto& [k, t] : merged) {
    t.share = total > 0 ? t.total_us / total : 0;
    types.push_back(t);
  }
  std::sort(types.begin(), types.end(), [](const TypeStat& a, const TypeStat& b) {
    return a.total_us != b.total_us ? a.total_us > b.total_us : a.type < b.type;
  });
  nlohmann::json jt = nlohmann::json::array();
  for (const auto& t : types) {
    auto j = type_json(t);
    j.erase("cube_utilization");
    jt.push_back(j);
  }
  std::stable_sort(findings.begin(), findings.end(), [](const auto& a, const auto& b) {
    return a["time_us"].template get<double>() > b["time_us"].template get<double>();
  });
  root["ops"] = ops;
  root["total_time_us"] = total;
  root["op_types"] = jt;
  root["utilization"] = utilization;
  root["findings"] = findings;
  root["skipped_checks"] = skipped;
  root["profiles"] = profiles;
  // Op names come from user files: replace invalid UTF-8 rather than fail.
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_text(const std::vector<Report>& reports) {
  std::string out;
  for (const auto& r : reports) {
    out += fmt::format("== {} ({}{})\n", r.profile, r.producer,
                       r.cann_version.empty() ? "" : ", CANN " + r.cann_version);
    std::string read;
    for (const auto& f : r.files) {
      read += (read.empty() ? "" : ", ") + std::filesystem::path(f).filename().string();
    }
    out += fmt::format("   read: {}\n", read);
    for (const auto& l : r.layouts) out += fmt::format("   layout: {}\n", l);
    out += fmt::format("   {} compute ops, {}; {} communication ops, {}; task wait {}\n", r.ops,
                       fmt_us(r.total_time_us), r.communication_ops,
                       fmt_us(r.communication_time_us), fmt_us(r.wait_time_us));
    if (!r.other_device_types.empty()) out += "   " + other_device_line(r) + "\n";
    for (const auto& s : r.steps) {
      out += fmt::format("   step {}: span {}, device idle {}{}{}\n",
                         s.step >= 0 ? std::to_string(s.step) : "-", fmt_us(s.span_us),
                         s.span_us > 0 ? pct(s.idle_us / s.span_us) : "-",
                         s.cube_utilization ? ", cube cores active " + pct(*s.cube_utilization)
                                            : "",
                         s.mac_utilization ? ", MAC busy " + pct(*s.mac_utilization) : "");
      if (s.has_communication) out += fmt::format("     {}\n", breakdown(s));
    }
    out += "   " + chip_line(r.chip) + "\n";
    out += "   top op types:";
    for (std::size_t i = 0; i < r.op_types.size() && i < 5; ++i) {
      const auto& t = r.op_types[i];
      out += fmt::format("{} {} {} ({} x {})", i ? "," : "", t.type, pct(t.share), t.count,
                         fmt_us(t.mean_us()));
    }
    out += "\n";
    if (r.findings.empty()) out += "   no findings\n";
    int n = 0;
    for (const auto& f : r.findings) {
      out += fmt::format("  {}. [{}] {} — {} at stake\n", ++n, f.severity, f.title,
                         fmt_us(f.time_us));
      int shown = 0;
      for (const auto& e : f.evidence) {
        if (e.number) continue;
        if (++shown > 3) break;
        std::string line = evidence_text(e);
        // Keep the terminal readable: long shape lists are complete in --json and --md.
        constexpr std::size_t kMaxLine = 200;
        if (line.size() > kMaxLine) line = line.substr(0, kMaxLine - 3) + "...";
        out += fmt::format("       {}\n", line);
      }
      if (!f.advice.empty()) out += fmt::format("       try: {}\n", f.advice.front());
    }
    for (const auto& s : r.skipped) {
      out += fmt::format("   skipped {}: {}\n", s.check, s.reason);
    }
    if (!r.notes.empty()) {
      out += fmt::format("   {} note(s) on the input (missing optional columns, skipped rows): "
                         "see --md or --json\n",
                         r.notes.size());
    }
  }
  return out;
}

std::string render_markdown(const std::vector<Report>& reports) {
  std::string out = "# npusim analyze\n\n";
  for (const auto& r : reports) {
    out += fmt::format("## {}\n\n", r.profile);
    out += fmt::format("- producer: {}{}\n", r.producer,
                       r.cann_version.empty() ? "" : ", CANN " + r.cann_version);
    for (const auto& f : r.files) out += fmt::format("- file: `{}`\n", f);
    for (const auto& l : r.layouts) out += fmt::format("- layout: {}\n", l);
    out += fmt::format("- compute: {} ops, {}; communication: {} ops, {}; task wait: {}\n",
                       r.ops, fmt_us(r.total_time_us), r.communication_ops,
                       fmt_us(r.communication_time_us), fmt_us(r.wait_time_us));
    if (!r.other_device_types.empty()) out += "- " + other_device_line(r) + "\n";
    out += fmt::format("- {}\n\n", chip_line(r.chip));
    if (!r.steps.empty()) {
      out += "| step | ops | span (us) | idle | cube cores active | MAC busy | computing (us) | "
             "exposed comm (us) | overlapped comm (us) | free (us) |\n"
             "|---|---|---|---|---|---|---|---|---|---|\n";
      for (const auto& s : r.steps) {
        auto num = [&](double v) {
          return s.has_communication ? fmt::format("{:.1f}", v) : std::string("-");
        };
        out += fmt::format("| {} | {} | {:.1f} | {} | {} | {} | {} | {} | {} | {} |\n",
                           s.step >= 0 ? std::to_string(s.step) : "-", s.ops, s.span_us,
                           s.span_us > 0 ? pct(s.idle_us / s.span_us) : "-",
                           s.cube_utilization ? pct(*s.cube_utilization) : "-",
                           s.mac_utilization ? pct(*s.mac_utilization) : "-",
                           num(s.computing_us), num(s.exposed_communication_us),
                           num(s.overlapped_communication_us), num(s.free_us));
      }
      out += "\n";
    }
    out += "### Op types\n\n| type | kind | count | total (us) | mean (us) | min (us) | max (us) | "
           "share |\n|---|---|---|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < r.op_types.size() && i < 15; ++i) {
      const auto& t = r.op_types[i];
      out += fmt::format("| {} | {} | {} | {:.1f} | {:.2f} | {:.2f} | {:.2f} | {} |\n", t.type,
                         t.kind, t.count, t.total_us, t.mean_us(), t.min_us, t.max_us,
                         pct(t.share));
    }
    if (!r.op_statistic.empty()) {
      out += "\n### op_statistic (OP Type x Core Type, as msprof writes it)\n\n| OP Type | Core "
             "Type | Count | Total Time(us) | Min Time(us) | Avg Time(us) | Max Time(us) | "
             "Ratio(%) |\n|---|---|---|---|---|---|---|---|\n";
      for (const auto& s : r.op_statistic) {
        out += fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} |\n",
                           s.type, s.core_type, s.count, s.total_us, s.min_us, s.avg_us,
                           s.max_us, s.ratio_pct);
      }
    }
    out += "\n### Findings (by time at stake)\n\n";
    if (r.findings.empty()) out += "None.\n\n";
    int n = 0;
    for (const auto& f : r.findings) {
      out += fmt::format("{}. **[{}] {}** — {} at stake (`{}`)\n", ++n, f.severity, f.title,
                         fmt_us(f.time_us), f.check);
      for (const auto& e : f.evidence) out += fmt::format("   - {}\n", evidence_text(e));
      for (const auto& a : f.advice) out += fmt::format("   - *Try:* {}\n", a);
      out += "\n";
    }
    if (!r.skipped.empty()) {
      out += "### Checks not run\n\n";
      for (const auto& s : r.skipped) out += fmt::format("- `{}`: {}\n", s.check, s.reason);
      out += "\n";
    }
    if (!r.notes.empty()) {
      out += "### Notes\n\n";
      for (const auto& s : r.notes) out += fmt::format("- {}\n", s);
      out += "\n";
    }
  }
  return out;
}

}  // namespace npusim::profile
