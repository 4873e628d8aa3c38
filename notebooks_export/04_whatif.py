# %% [markdown]
# # 4. What-if: graph rewrites
#
# Tuning engineers rewrite Ascend graphs by hand in a handful of well-known ways: drop a Tile a
# broadcasting BatchMatMul makes redundant, narrow int64 compares to int32, fuse a masked Gather,
# move an AI CPU op to the host, and so on. `npusim whatif` applies each rewrite (a graph pass)
# that fits the scenario's graph, simulates every variant and reports what it buys: mean latency
# at the scenario's load and capacity (QPS) under the P99 target. This notebook lists the passes
# that apply to the default scenario, the gain of each, and a waterfall from the baseline to all
# of them applied together. The passes, their conditions and the JSON are in docs/whatif.md.
#
# Rerun: `notebooks_export/export.sh`, or `python3 notebooks_export/04_whatif.py`
# (`NPUSIM=/path/to/npusim` picks the binary).

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from nbhelpers import DEFAULT_SCENARIO, npusim, npusim_json, reading, sets

REQUESTS = 1500
WARMUP = 300

print(npusim("--version").strip())
short = sets(workload__requests=REQUESTS, workload__warmup_requests=WARMUP)
doc = npusim_json("whatif", DEFAULT_SCENARIO, *short, "--waterfall")
base = doc["baseline"]
passes = pd.json_normalize(doc["passes"])
print(f"scenario {doc['scenario']}: P99 target {doc['target_p99_ms']} ms, reference gear "
      f"{doc['reference_gear']}; not applicable: {', '.join(doc['not_applicable']) or 'none'}")

# %% [markdown]
# ## The passes that apply, and what each changes

# %%
for row in doc["passes"]:
    after = f" (after {', '.join(row['with'])})" if row["with"] else ""
    print(f"{row['name']}{after}:")
    for change in row["changes"]:
        if change["pass"] == row["name"]:
            print(f"  - {change['what']}")
            print(f"    why: {change['why']}")

# %% [markdown]
# ## Gain of each pass alone
#
# Each bar is one pass applied alone (with the passes it needs first, if any) against the
# baseline; "all" applies every pass. QPS gain is the change in the highest Poisson rate whose
# P99 meets the target; latency gain is the cut in mean latency at the scenario's own rate.

# %%
rows = pd.concat([passes, pd.json_normalize([doc["all"]])], ignore_index=True)
rows = rows.iloc[::-1]
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
colour = ["tab:green" if v > 0 else "tab:red" for v in rows["qps_gain"]]
left.barh(rows["name"], rows["qps_gain"] * 100, color=colour)
left.set(title=f"Capacity under P99 ≤ {doc['target_p99_ms']} ms",
         xlabel="QPS gain over the baseline (%)", ylabel="graph pass")
colour = ["tab:green" if v > 0 else "tab:red" for v in rows["latency_gain"]]
right.barh(rows["name"], rows["latency_gain"] * 100, color=colour)
right.set(title="Mean latency at the scenario's load", xlabel="latency cut (%)",
          ylabel="graph pass")
for ax in (left, right):
    ax.axvline(0, color="black", linewidth=0.8)
    ax.grid(alpha=0.3, axis="x")
fig.suptitle("What each graph pass buys on the default scenario")
plt.show()

top = passes.iloc[0]
losers = passes[passes["qps_gain"] <= 0]
reading(
    f"The baseline carries {base['qps_at_target']:.0f} QPS under the target with a mean latency "
    f"of {base['latency_ms']:.3f} ms. Of the {len(passes)} passes that apply, {top['name']} "
    f"buys most: {top['qps_gain']:+.0%} QPS and {top['latency_gain']:.0%} less latency "
    f"(its device time per batch at gear {doc['reference_gear']} goes from "
    f"{base['device_us_per_batch']:.0f} to {top['device_us_per_batch']:.0f} µs). "
    + (f"{' and '.join(losers['name'])} {'gains' if len(losers) == 1 else 'gain'} nothing or "
       f"lose{'s' if len(losers) == 1 else ''} capacity here "
       f"({', '.join(f'{q:+.1%}' for q in losers['qps_gain'])}): the rewrite's added ops cost "
       f"as much as it saves, or the difference is within the 2 % step of the rate search. "
       if len(losers) else "") +
    f"All passes together: {doc['all']['qps_gain']:+.0%} QPS, "
    f"{doc['all']['latency_gain']:.0%} less latency.")

# %% [markdown]
# ## Waterfall: from the baseline to all passes applied
#
# Gains do not add up: two passes may touch the same ops, and once one bottleneck is gone
# another limits the card. So the waterfall applies the passes cumulatively, in the order of
# their gain alone, and each step is simulated (`npusim whatif --waterfall`: its `waterfall`
# rows are the steps, the last one `all`).

# %%
steps = [("baseline", base["qps_at_target"], base["latency_ms"])]
for row in doc["waterfall"]:
    steps.append((f"+ {row['name']}", row["qps_at_target"], row["latency_ms"]))
water = pd.DataFrame(steps, columns=["step", "qps_at_target", "latency_ms"])
water["qps_step"] = water["qps_at_target"].diff().fillna(water["qps_at_target"])
print(water.round(3).to_string(index=False))

# %%
fig, ax = plt.subplots(figsize=(11, 4.5))
x = np.arange(len(water))
bottoms = np.r_[0, water["qps_at_target"].iloc[:-1]]
colours = ["tab:blue"] + ["tab:green" if v >= 0 else "tab:red" for v in water["qps_step"][1:]]
ax.bar(x, water["qps_step"], bottom=bottoms, color=colours)
ax.bar([len(water)], [water["qps_at_target"].iloc[-1]], color="tab:purple")
ax.set_xticks(list(x) + [len(water)], list(water["step"]) + ["all applied"], rotation=25,
              ha="right", fontsize=8)
ax.set(title="Capacity under the P99 target, pass by pass (cumulative)",
       xlabel="graph pass added", ylabel="max QPS with P99 ≤ target (requests/s)")
ax.grid(alpha=0.3, axis="y")
plt.show()

gains = water.iloc[1:].sort_values("qps_step", ascending=False)
final = water["qps_at_target"].iloc[-1]
reading(
    f"Applied one after another, the passes take the card from {water['qps_at_target'].iloc[0]:.0f} "
    f"to {final:.0f} QPS under the target ({final / water['qps_at_target'].iloc[0]:.1f}×) and "
    f"the mean latency from {water['latency_ms'].iloc[0]:.3f} to "
    f"{water['latency_ms'].iloc[-1]:.3f} ms. The largest step is {gains['step'].iloc[0]} "
    f"({gains['qps_step'].iloc[0]:+.0f} QPS); "
    f"{int((water['qps_step'].iloc[1:] > 0).sum())} of {len(water) - 1} steps add capacity. "
    f"A step's size depends on what came before it: a pass that removes the bottleneck leaves "
    f"the others acting on a card limited by something else.")
