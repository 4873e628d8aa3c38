// aicpu_to_host: an AI CPU op whose inputs all come from the host side (a root of the graph, or
// only host ops before it) runs on the host CPU instead, first in the graph.
#include <fmt/format.h>

#include "model/passes/pass_util.h"

namespace npusim::passes {

PassResult run_aicpu_to_host(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  std::vector<bool> host(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) host[i] = placement_of(g, i) == Placement::kHost;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (placement_of(g, i) != Placement::kAicpu) continue;
    // Everything it waits for (producers of its inputs and `after`) runs on the host.
    bool from_host = true;
    for (const std::size_t p : g.predecessors(i)) from_host = from_host && host[p];
    if (!from_host) continue;
    host[i] = true;
    w.op(i).text.placement = "host";
    // A host op runs when its stream's device work has drained: first in the graph, that is
    // before any device op of the batch. Readers and waiters keep its name.
    w.move_to_front(i);
    changes.push_back(
        {"aicpu_to_host",
         {g.ops()[i].text.name},
         fmt::format("{} '{}' runs on the host CPU, first in the graph (placement host)",
                     g.ops()[i].text.type, g.ops()[i].text.name),
         "its inputs come from the host: computing it there costs host time but no AI CPU "
         "dispatch and no device time"});
  }
  return finish(w, std::move(changes));
}

}  // namespace npusim::passes
