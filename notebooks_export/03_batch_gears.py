# %% [markdown]
# # 3. Batch gears and splitting
#
# An offline-compiled model runs only the batch sizes it was compiled for (its gears); a batch is
# padded up to the smallest gear that holds it. A request larger than the largest gear either
# needs a gear of its own or is split into chunks of the largest gear that run in parallel on
# idle instances (`deployment.split_oversize`). This notebook measures both choices for one
# oversize request, then the P99 of the scenario's production-like mix of batch sizes against
# the max gear.
#
# Rerun: `notebooks_export/export.sh`, or `python3 notebooks_export/03_batch_gears.py`
# (`NPUSIM=/path/to/npusim` picks the binary).

# %%
import tomllib

import matplotlib.pyplot as plt
import pandas as pd

from nbhelpers import (DEFAULT_SCENARIO, npusim, npusim_csv, npusim_json, reading,
                       scenario_gears, sets, table)

SIZES = [24, 32, 48, 64, 96]   # samples in the oversize request
LOW_RATE_QPS = 50              # far below capacity: the latency is the service time
REQUESTS = 300
MIX_REQUESTS = 2000
MIX_WARMUP = 300

print(npusim("--version").strip())
gears = scenario_gears()
with open(DEFAULT_SCENARIO, "rb") as f:
    hw = tomllib.load(f)["scenario"]["hw"]
chip = npusim_json("hw", "show", hw)["spec"]["chip"]
print(f"scenario gears {gears}; {hw}: {chip['cube_cores']} cube, "
      f"{chip['vector_cores']} vector cores")

# %% [markdown]
# ## One request above the largest gear: split or a gear of its own
#
# Every request has the same size; at a low rate nothing queues, so the latency is the service
# time. *Split*: the scenario's gears (largest 20), the request runs as chunks of 20 (and the
# remainder padded to its gear) on the 4 instances at once. *Own gear*: the size is added to the
# gears and runs as one batch on one instance. Core-time per request is the cores held over the
# run (time-average busy cores × window) divided by the requests completed.

# %%
def run(size, split):
    g = gears if split else sorted(set(gears) | {size})
    r = npusim_json("simulate", DEFAULT_SCENARIO,
                    *sets(workload__batch_size=size, workload__rate_qps=LOW_RATE_QPS,
                          workload__requests=REQUESTS, workload__warmup_requests=20,
                          deployment__split_oversize=split,
                          deployment__gears=str(g).replace(" ", "")))
    window_us = r["window_s"] * 1e6
    busy = r["utilization"]["cube"] * chip["cube_cores"] + \
        r["utilization"]["vector"] * chip["vector_cores"]
    return {"size": size, "mode": "split" if split else "own gear",
            "latency_ms": r["latency_ms"]["mean"], "p99_ms": r["latency_ms"]["p99"],
            "core_us_per_request": busy * window_us / r["window_completions"],
            "split_requests": r["split_requests"]}


oversize = pd.DataFrame([run(n, split) for n in SIZES for split in (True, False)])
print(table(oversize))

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
for mode, rows in oversize.groupby("mode"):
    left.plot(rows["size"], rows["latency_ms"], marker="o", label=mode)
    right.plot(rows["size"], rows["core_us_per_request"], marker="o", label=mode)
left.set(title="Latency", xlabel="request size (samples)", ylabel="mean latency (ms)")
right.set(title="Cube + vector core-time", xlabel="request size (samples)",
          ylabel="core-time per request (core·µs)")
for ax in (left, right):
    ax.set_xticks(SIZES)
    ax.grid(alpha=0.3)
    ax.legend()
fig.suptitle(f"A request above the largest gear ({max(gears)}): split into chunks or one batch")
plt.show()

w = oversize.pivot(index="size", columns="mode", values="latency_ms")
c = oversize.pivot(index="size", columns="mode", values="core_us_per_request")
faster = w["own gear"] / w["split"]
costlier = c["split"] / c["own gear"] - 1
reading(
    f"Split, a {SIZES[-1]}-sample request completes in {w.loc[SIZES[-1], 'split']:.2f} ms "
    f"against {w.loc[SIZES[-1], 'own gear']:.2f} ms as one batch "
    f"({faster.loc[SIZES[-1]]:.1f}× faster); over the sizes {SIZES[0]}–{SIZES[-1]} splitting is "
    f"{faster.min():.1f}× to {faster.max():.1f}× faster, because its chunks run on idle "
    f"instances at once and finish with the slowest. It costs core-time: "
    f"{costlier.min():+.0%} to {costlier.max():+.0%} per request, since every chunk pays each "
    f"op's fixed costs again and small batches use the cores less well. On a loaded card the chunks "
    f"also take instances that other requests are waiting for; the next section is that case.")

# %% [markdown]
# ## The production-like mix against the max gear
#
# The scenario's batch-size distribution has most requests small and a tail up to 48 samples.
# `deployment.max_gear=n` keeps the scenario's gears up to n and adds n; requests above it are
# split. Three offered rates around the scenario's own show how the choice moves with load.

# %%
mix = npusim_csv("sweep", DEFAULT_SCENARIO,
                 *sets(workload__requests=MIX_REQUESTS, workload__warmup_requests=MIX_WARMUP),
                 "--vary", "workload.rate_qps=1500,2500,3500",
                 "--vary", "deployment.max_gear=8,12,16,20,24,32,48", name="mix.csv")
mix = mix[mix["feasible"]].rename(columns={"workload.rate_qps": "rate_qps",
                                           "deployment.max_gear": "max_gear"})
target_ms = npusim_json("sweep", DEFAULT_SCENARIO, "--vary", "deployment.streams=4",
                        *sets(workload__requests=100))["target"]["p99_ms"]
print(table(mix[["rate_qps", "max_gear", "qps", "p50_ms", "p99_ms", "vector_utilization"]]))

# %%
fig, ax = plt.subplots(figsize=(7.5, 4.5))
for rate, rows in mix.groupby("rate_qps"):
    ax.plot(rows["max_gear"], rows["p99_ms"], marker="o", label=f"{rate:.0f} QPS offered")
ax.axhline(target_ms, color="grey", linestyle="--", label="P99 target")
ax.set(title="P99 of the production-like batch mix against the max gear",
       xlabel="max gear (largest compiled batch, samples)", ylabel="P99 latency (ms)",
       yscale="log", xticks=sorted(mix["max_gear"].unique()))
ax.grid(alpha=0.3, which="both")
ax.legend()
plt.show()

best = mix.loc[mix.groupby("rate_qps")["p99_ms"].idxmin()]
scenario_gear = max(gears)
own = mix[mix["max_gear"] == scenario_gear].set_index("rate_qps")["p99_ms"]
p99 = mix.pivot(index="max_gear", columns="rate_qps", values="p99_ms")
smallest = p99.index.min()
small_ratio = p99.loc[smallest] / p99.min()
worst_small = small_ratio.agg(["min", "max"])
above = pd.concat([p99.loc[p99.index > best_gear, rate] / p99.loc[best_gear, rate] - 1
                   for rate, best_gear in zip(best["rate_qps"], best["max_gear"])])
reading(
    "Lowest P99 per offered rate: " +
    "; ".join(f"{r['rate_qps']:.0f} QPS: max gear {r['max_gear']} ({r['p99_ms']:.2f} ms, "
              f"against {own[r['rate_qps']]:.2f} ms at the scenario's {scenario_gear})"
              for _, r in best.iterrows()) +
    f". At max gear {smallest} the P99 is {worst_small['min']:.1f}× to "
    f"{worst_small['max']:.1f}× the best: every request above {smallest} samples is split, "
    f"and the chunks occupy instances and queue behind each other"
    + (", more so the higher the load. " if small_ratio.is_monotonic_increasing else ". ")
    + (f"Above the best gear the P99 moves by {above.min():+.0%} to {above.max():+.0%} "
       f"(fewer splits, more padding). " if len(above) else "") +
    f"{int((mix['p99_ms'] <= target_ms).sum())} of the {len(mix)} points meet the "
    f"{target_ms} ms target.")
