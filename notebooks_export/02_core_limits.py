# %% [markdown]
# # 2. Core limits
#
# A core limit (`deployment.cube_cores_per_stream`, `vector_cores_per_stream`) gives each
# instance its own slice of the card. Ops then run on fewer cores, so each takes longer, but the
# instances stop competing for cores. This notebook asks, first op by op and then end to end:
# how much longer does each op of the default scenario take on 6 to 24 cube cores, what does it
# cost in core-time, and does partitioning the card pay off for 1 to 4 instances?
#
# Rerun: `notebooks_export/export.sh`, or `python3 notebooks_export/02_core_limits.py`
# (`NPUSIM=/path/to/npusim` picks the binary).
#
# On Ascend 910B every AI core cluster pairs one cube core with two vector cores, so a limit of
# c cube cores goes with 2c vector cores throughout. The scenario's 910B3 has 20 cube cores; the
# per-op part uses the 910B2 (24 cube / 48 vector cores at the same 1800 MHz) so the range
# reaches 24.

# %%
import re
import tomllib
from concurrent.futures import ThreadPoolExecutor

import matplotlib.pyplot as plt
import pandas as pd

from nbhelpers import (DEFAULT_SCENARIO, npusim, npusim_csv, npusim_json, reading,
                       scenario_without_core_limits, sets, table)

PER_OP_CHIP = "ascend910b2"
CUBE_CORES = [6, 12, 18, 24]
REQUESTS = 1500
WARMUP = 300

print(npusim("--version").strip())
with open(DEFAULT_SCENARIO, "rb") as f:
    scenario = tomllib.load(f)
batch = max(scenario["deployment"]["gears"])
graph_ops = scenario["graph"]["op"]
print(f"{len(graph_ops)} ops of '{scenario['graph']['name']}', predicted at batch {batch} "
      f"(the largest gear) on {PER_OP_CHIP}")

# %% [markdown]
# ## Op by op
#
# `npusim predict` gives each op's duration and core-time (cores held × duration) for a core
# budget. The shapes are the scenario graph's with the batch dimension `B` set to the largest
# gear.

# %%
def dims(text):
    """A graph shape list with the batch dimension (B, B*k, k*B) set to `batch`."""
    def dim(d):
        factors = [batch if f.strip() == "B" else int(f) for f in d.split("*")]
        return str(eval("*".join(map(str, factors)))) if d else d
    return ";".join(",".join(dim(d) for d in shape.split(",")) for shape in text.split(";"))


def predict_args(op, cube):
    args = ["predict", "--hw", PER_OP_CHIP, "--op", op["type"], "--name", op["name"],
            "--shapes", dims(op["shapes"]), "--dtypes", op["dtypes"],
            "--cube-cores", cube, "--vector-cores", 2 * cube]
    for key, flag in [("output_shapes", "--output-shapes"), ("output_dtypes", "--output-dtypes"),
                      ("formats", "--formats"), ("placement", "--placement")]:
        if key in op:
            args += [flag, dims(op[key]) if key == "output_shapes" else op[key]]
    for key, value in op.get("attrs", {}).items():
        value = str(value).lower() if isinstance(value, bool) else value
        if isinstance(value, str) and re.fullmatch(r"(B|\d+|B\*\d+|\d+\*B)(,(B|\d+|B\*\d+|\d+\*B))*", value):
            value = dims(value)  # a dimension list such as a Tile's multiples "B,1,1,1"
        args += ["--attr", f"{key}={value}"]
    return args


def predict_row(job):
    op, cube = job
    p = npusim_json(*predict_args(op, cube))
    return {"op": op["name"], "type": op["type"], "cube_cores": cube,
            "duration_us": p["duration_us"], "core_time_us": p["core_time_us"],
            "block_dim": p["block_dim"], "bound": p["bound"]}


jobs = [(op, c) for op in graph_ops for c in CUBE_CORES]
with ThreadPoolExecutor(max_workers=2) as pool:
    per_op = pd.DataFrame(list(pool.map(predict_row, jobs)))
wide = per_op.pivot(index="op", columns="cube_cores", values="duration_us")
lo, hi = CUBE_CORES[0], CUBE_CORES[-1]
wide["speedup"] = wide[lo] / wide[hi]
wide = wide.sort_values(lo, ascending=False)
print(wide.round(2).to_string())

# %%
scaling = wide[wide["speedup"] > 1.1].index.tolist()
flat = [o for o in wide.index if o not in scaling]
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
for name in scaling:
    rows = per_op[per_op["op"] == name]
    left.plot(rows["cube_cores"], rows["duration_us"], marker="o", label=name)
    right.plot(rows["cube_cores"], rows["core_time_us"], marker="o", label=name)
left.set(title="Duration", xlabel="cube cores (vector cores = 2×)", ylabel="duration (µs)",
         yscale="log")
right.set(title="Core-time (cores held × duration)", xlabel="cube cores (vector cores = 2×)",
          ylabel="core-time (core·µs)", yscale="log")
for ax in (left, right):
    ax.set_xticks(CUBE_CORES)
    ax.grid(alpha=0.3, which="both")
right.legend(fontsize=7, ncol=2)
fig.suptitle(f"Per op of the default scenario at batch {batch} on {PER_OP_CHIP}: "
             f"the ops whose time changes with the core budget")
plt.show()

total = per_op.groupby("cube_cores")[["duration_us", "core_time_us"]].sum()
best = wide.loc[scaling, "speedup"].sort_values(ascending=False)
at_hi = per_op[per_op["cube_cores"] == hi].set_index("op")
flat_dims = at_hi.loc[flat, "block_dim"]
largest = max(flat, key=lambda o: wide.loc[o, lo])
time_ratio = total.loc[lo, "duration_us"] / total.loc[hi, "duration_us"]
core_change = total.loc[hi, "core_time_us"] / total.loc[lo, "core_time_us"] - 1
reading(
    f"{len(scaling)} of the {len(wide)} ops run more than 10 % faster on {hi} cube cores "
    f"than on {lo}; the best, {best.index[0]}, {best.iloc[0]:.1f}× faster for {hi / lo:.0f}× "
    f"the cores. The other {len(flat)} hardly change: AI CPU ops, scalar-bound ops and ops "
    f"too small to gain from more cores (their block dims offered {hi} cube and {2 * hi} "
    f"vector cores: {', '.join(f'{o} {d}' for o, d in flat_dims.items())}). Summed over the graph, one batch takes "
    f"{total.loc[lo, 'duration_us']:.0f} µs of device time on {lo} cube cores and "
    f"{total.loc[hi, 'duration_us']:.0f} µs on {hi} ({time_ratio:.2f}× faster, far from "
    f"{hi / lo:.0f}×, because the flat ops, {largest} alone {wide.loc[largest, lo]:.0f} µs, do "
    f"not shrink), while its core-time changes by {core_change:+.0%} "
    f"({total.loc[lo, 'core_time_us']:.0f} → {total.loc[hi, 'core_time_us']:.0f} core·µs). "
    + ("The ops that scale use their extra cores almost in full, so a smaller slice costs a "
       "batch latency but hardly any card capacity: several instances on small slices can do "
       "the same work side by side." if abs(core_change) < 0.15 else
       "The extra cores are not used in proportion, so a smaller slice per instance saves "
       "core-time that other instances can use."))

# %% [markdown]
# ## End to end: 1 to 4 instances, with and without a core limit
#
# Each configuration's capacity is the highest Poisson rate whose P99 meets the scenario's
# target (`npusim sweep --find-max-qps`). "Limit" splits the scenario's chip (the 910B3: 20 cube,
# 40 vector cores) evenly: each of s instances gets 1/s of each kind, rounded down; "shared"
# lets all instances use the whole card.

# %%
short = sets(workload__requests=REQUESTS, workload__warmup_requests=WARMUP)
card = npusim_json("hw", "show", scenario["scenario"]["hw"])["spec"]["chip"]
cube_total, vector_total = card["cube_cores"], card["vector_cores"]
shared = npusim_csv("sweep", scenario_without_core_limits(), *short,
                    "--vary", "deployment.streams=1..4", "--find-max-qps", name="shared.csv")
shared["setup"] = "shared card"
limited = []
for s in range(1, 5):
    limited.append(npusim_csv(
        "sweep", DEFAULT_SCENARIO, *short,
        *sets(deployment__cube_cores_per_stream=cube_total // s,
              deployment__vector_cores_per_stream=vector_total // s),
        "--vary", f"deployment.streams={s}", "--find-max-qps", name=f"limit{s}.csv"))
limited = pd.concat(limited)
limited["setup"] = f"core limit {cube_total}/s + {vector_total}/s"
both = pd.concat([shared, limited], ignore_index=True)
both = both.rename(columns={"deployment.streams": "streams"})
print(table(both[["setup", "streams", "max_qps", "throughput", "p99_ms", "vector_utilization",
                  "cards_needed"]]))

# %%
pivot = both.pivot(index="streams", columns="setup", values="max_qps")
fig, ax = plt.subplots(figsize=(7, 4.2))
width = 0.38
for i, column in enumerate(pivot.columns):
    ax.bar(pivot.index + (i - 0.5) * width, pivot[column], width, label=column)
ax.set(title=f"Capacity of one {scenario['scenario']['hw']} under the P99 target", xlabel="instances (streams)",
       ylabel="max QPS with P99 ≤ target (requests/s)", xticks=list(pivot.index))
ax.grid(alpha=0.3, axis="y")
ax.legend()
plt.show()

gain = pivot[limited["setup"].iloc[0]] / pivot["shared card"] - 1
best_setup = both.loc[both["max_qps"].idxmax()]
one = pivot.loc[1]
reading(
    f"With one instance the limit is the whole card, so both bars measure the same thing ("
    + (f"{one.iloc[0]:.0f} QPS each). " if one.iloc[0] == one.iloc[1] else
       f"{one.iloc[0]:.0f} and {one.iloc[1]:.0f} QPS: the difference is the noise of the rate "
       f"search). ") +
    f"With 2, 3 and 4 instances the core limit changes the capacity by "
    f"{gain.loc[2]:+.0%}, {gain.loc[3]:+.0%} and {gain.loc[4]:+.0%}. A partition stops an "
    f"instance's wide ops from taking the cores another instance's batch is waiting for, at "
    f"the price of fewer cores per op; "
    + ("with 4 the first effect wins. " if gain.loc[4] > 0.02 else
       "with 4 the second costs more than the first saves. " if gain.loc[4] < -0.02 else
       "with 4 the two roughly cancel. ") +
    f"The highest capacity here is {best_setup['max_qps']:.0f} "
    f"QPS with {best_setup['streams']} instance(s), {best_setup['setup']}.")
