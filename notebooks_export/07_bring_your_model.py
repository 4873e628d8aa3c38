# %% [markdown]
# # 7. Bring your model: an ONNX file, imported and swept
#
# A performance engineer's model usually exists as an ONNX file long before anyone books an
# Ascend card. `npusim graph from-onnx` turns it into a graph the simulator runs: ONNX's own
# shape inference, the symbolic batch as `B`, the CANN ops ATC would make of each node, shape
# arithmetic folded into constants (docs/import.md). This notebook imports the example
# recommendation model (`npusim graph example-onnx rec`, a DLRM/DeepFM-like ranking model built
# in C++: embedding Gathers, a Where-masked lookup, int64 compares, a TopK, a Tile feeding a
# broadcasting BatchMatMul, a Concat and an MLP), looks at what the import made of it, and sweeps
# instances per card × max gear with the default scenario's deployment and traffic.
#
# Rerun: `notebooks_export/export.sh`, or `python3 notebooks_export/07_bring_your_model.py`
# (`NPUSIM=/path/to/npusim` picks the binary).

# %%
import tomllib
from collections import Counter

import matplotlib.pyplot as plt
import pandas as pd

from nbhelpers import DEFAULT_SCENARIO, npusim, npusim_csv, reading, sets, table, workdir

REQUESTS = 1500
WARMUP = 200

print(npusim("--version").strip())
model = workdir() / "rec.onnx"
graph_file = workdir() / "rec_graph.toml"
npusim("graph", "example-onnx", "rec", "-o", model)
npusim("graph", "from-onnx", model, "-o", graph_file)
with open(graph_file, "rb") as f:
    ops = tomllib.load(f)["graph"]["op"]
print(f"{model.name}: {model.stat().st_size} bytes -> {len(ops)} ops")

# %% [markdown]
# ## What the import made of it
#
# Each row is one op of the graph as ATC would compile the model: its CANN type, its input and
# output shapes in `B`. Gemm became MatMulV2 + Add, MatMul BatchMatMulV2, Gather GatherV2 (with
# the axis as an input), Where SelectV2; the Shape → Slice → Concat that computes the Tile's
# multiples is gone (folded into a constant, as GE folds it for a compiled gear).

# %%
rows = pd.DataFrame([{"op": o["name"], "type": o["type"], "input shapes": o["shapes"],
                      "output shapes": o.get("output_shapes", "")} for o in ops])
print(table(rows))
types = Counter(o["type"] for o in ops)
batch_ops = sum("B" in o["shapes"] + o.get("output_shapes", "") for o in ops)
reading(f"The import wrote {len(ops)} ops of {len(types)} CANN types; {batch_ops} of them have "
        f"shapes in B, the other {len(ops) - batch_ops} (the candidate match over the "
        f"user's history, its count) are the same for every batch size.")

# %% [markdown]
# ## Instances per card × max gear, on the imported model
#
# `--set graph.onnx=` replaces the default scenario's hand-written graph with the imported one
# and keeps its deployment (core limits per instance) and traffic (Poisson arrivals, the
# production-like batch-size mix). Each point runs at the highest rate whose P99 meets the
# scenario's target.

# %%
with open(DEFAULT_SCENARIO, "rb") as f:
    target = tomllib.load(f)["target"]["p99_ms"]
sweep = npusim_csv("sweep", DEFAULT_SCENARIO, "--set", f"graph.onnx={model}",
                   *sets(workload__requests=REQUESTS, workload__warmup_requests=WARMUP),
                   "--vary", "deployment.streams=1..4", "--vary", "deployment.max_gear=16,32",
                   "--find-max-qps", "--jobs", "2")
sweep = sweep.rename(columns={"deployment.streams": "streams", "deployment.max_gear": "max_gear"})
print(table(sweep[["streams", "max_gear", "max_qps", "p99_ms", "vector_utilization",
                   "cube_utilization"]]))

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
for gear, g in sweep.groupby("max_gear"):
    left.plot(g["streams"], g["max_qps"], marker="o", label=f"max gear {gear}")
    right.plot(g["streams"], g["vector_utilization"] * 100, marker="o", label=f"max gear {gear}")
left.set(title=f"Capacity under P99 ≤ {target} ms", xlabel="instances per card",
         ylabel="max QPS")
right.set(title="Vector-core utilisation at that rate", xlabel="instances per card",
          ylabel="vector utilisation (%)")
for ax in (left, right):
    ax.set_xticks(sorted(sweep["streams"].unique()))
    ax.grid(alpha=0.3)
    ax.legend()
fig.suptitle("The imported recommendation model on one 910B3")
plt.show()

best = sweep.loc[sweep["max_qps"].idxmax()]
worst = sweep.loc[sweep["max_qps"].idxmin()]
reading(f"The imported model carries at most {best['max_qps']:.0f} QPS under the "
        f"{target} ms P99 target, with {int(best['streams'])} instances and max gear "
        f"{int(best['max_gear'])}; the weakest point ({int(worst['streams'])} instance(s), "
        f"max gear {int(worst['max_gear'])}) carries {worst['max_qps']:.0f}. The vector cores "
        f"do the work: at the best point they are "
        f"{best['vector_utilization'] * 100:.0f} % busy while cube utilisation stays under "
        f"{sweep['cube_utilization'].max() * 100:.1f} % everywhere, so the MLP's matrix "
        f"products are not what limits this model.")
