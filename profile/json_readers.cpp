#include "profile/json_readers.h"

#include "profile/json_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/error.h"

namespace npusim::profile {

namespace fs = std::filesystem;

nlohmann::json read_json_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError({file.string(), 0, 0}, "cannot open the file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t at = std::min<std::size_t>(e.byte, text.size());
    const auto line = static_cast<std::uint32_t>(
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    throw InputError({file.string(), line, 0}, fmt::format("malformed JSON: {}", e.what()));
  } catch (const nlohmann::json::exception& e) {  // out_of_range: a number like 1e400
    throw InputError({file.string(), 0, 0}, fmt::format("malformed JSON: {}", e.what()));
  }
}

namespace {


double number(const nlohmann::json& o, const char* key) {
  if (!o.is_object() || !o.contains(key)) return 0;
  const auto& v = o[key];
  return v.is_number() ? v.get<double>() : 0;
}

}  // namespace

std::vector<CollectiveRecord> read_communication_json(const fs::path& file) {
  const nlohmann::json j = read_json_file(file);
  if (!j.is_object()) {
    throw InputError({file.string(), 1, 0}, "expected a JSON object of steps (\"step13\": ...)");
  }
  std::vector<CollectiveRecord> out;
  for (const auto& [step, groups] : j.items()) {
    if (!groups.is_object()) continue;
    for (const auto& [group, ops] : groups.items()) {
      if (!ops.is_object()) continue;
      for (const auto& [name, op] : ops.items()) {
        if (name == "Total Op Info" || !op.is_object()) continue;
        CollectiveRecord c;
        c.step = step;
        c.group = group;
        c.name = name.substr(0, name.find('@'));
        if (op.contains("Communication Time Info")) {
          const auto& t = op["Communication Time Info"];
          c.start_us = number(t, "Start Timestamp(us)");
          c.elapse_ms = number(t, "Elapse Time(ms)");
          c.transit_ms = number(t, "Transit Time(ms)");
          c.wait_ms = number(t, "Wait Time(ms)");
          c.synchronization_ms = number(t, "Synchronization Time(ms)");
          c.idle_ms = number(t, "Idle Time(ms)");
        }
        if (op.contains("Communication Bandwidth Info") &&
            op["Communication Bandwidth Info"].is_object()) {
          for (const auto& [link, b] : op["Communication Bandwidth Info"].items()) {
            LinkTransfer l;
            l.link = link;
            l.size_mb = number(b, "Transit Size(MB)");
            l.time_ms = number(b, "Transit Time(ms)");
            l.bandwidth_gbps = number(b, "Bandwidth(GB/s)");
            if (b.is_object() && b.contains("Size Distribution") &&
                b["Size Distribution"].is_object()) {
              for (const auto& [size, v] : b["Size Distribution"].items()) {
                double mb = 0;
                const auto [p, ec] = std::from_chars(size.data(), size.data() + size.size(), mb);
                if (ec != std::errc() || p != size.data() + size.size() || !v.is_array() ||
                    v.size() < 2 || !v[0].is_number() || !v[1].is_number()) {
                  continue;  // a malformed entry says nothing about sizes: skip it
                }
                l.packets.push_back({std::round(mb * 1e6), v[0].get<double>(), v[1].get<double>()});
              }
            }
            if (l.size_mb > 0 || !l.packets.empty()) c.links.push_back(std::move(l));
          }
        }
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

ProfilerMetadata read_profiler_metadata(const fs::path& file) {
  const nlohmann::json j = read_json_file(file);
  ProfilerMetadata m;
  if (!j.is_object() || !j.contains("ENV_VARIABLES") || !j["ENV_VARIABLES"].is_object()) return m;
  m.has_env = true;
  for (const auto& [k, v] : j["ENV_VARIABLES"].items()) {
    m.env[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  return m;
}

}  // namespace npusim::profile
