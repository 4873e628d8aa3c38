#pragma once
// Readers for the small JSON files torch_npu writes beside its tables: communication.json (one
// entry per collective and point-to-point operation of each step, with its time split and the
// sizes it moved per link) and profiler_metadata.json (the environment and parallel groups the
// run had). docs/profile_formats.md describes both.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace npusim::profile {

/// Transfers of one collective over one link type (HCCS, SDMA, RDMA, PCIE, SIO).
struct LinkTransfer {
  std::string link;
  double size_mb = 0;     ///< "Transit Size(MB)", decimal megabytes (1e6 bytes)
  double time_ms = 0;     ///< "Transit Time(ms)"
  double bandwidth_gbps = 0;
  /// "Size Distribution": packet size in bytes -> (count, total ms). The profiler writes the
  /// size in MB with six decimals, which is exact to the byte.
  struct Packet {
    double bytes = 0;
    double count = 0;
    double time_ms = 0;
  };
  std::vector<Packet> packets;
};

/// One communication operation of one step.
struct CollectiveRecord {
  std::string step;   ///< "step13"
  std::string group;  ///< "collective" | "p2p"
  std::string name;   ///< e.g. "hcom_allReduce__586_0_1" (the "@group" suffix removed)
  double start_us = 0;
  double elapse_ms = 0, transit_ms = 0, wait_ms = 0, synchronization_ms = 0, idle_ms = 0;
  std::vector<LinkTransfer> links;  ///< only links that moved data
};

/// Reads communication.json. The "Total Op Info" summaries are left out (they repeat the
/// operations). Throws InputError on malformed JSON or a file that is not an object of steps.
[[nodiscard]] std::vector<CollectiveRecord> read_communication_json(
    const std::filesystem::path& file);

/// What profiler_metadata.json records about the run.
struct ProfilerMetadata {
  std::map<std::string, std::string> env;  ///< ENV_VARIABLES: name -> value ("" when unset)
  bool has_env = false;                    ///< the file has an ENV_VARIABLES object
};
/// Reads profiler_metadata.json. Throws InputError on malformed JSON.
[[nodiscard]] ProfilerMetadata read_profiler_metadata(const std::filesystem::path& file);

}  // namespace npusim::profile
