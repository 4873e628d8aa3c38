# %% [markdown]
# # 6. Reading a profile
#
# What does a real profile say to fix, and how does the simulator's picture of the same step
# compare with what the device did? This notebook runs `npusim analyze` on a real torch_npu
# profile, lists its findings ranked by the time at stake, turns one step into a graph with
# `npusim graph from-profile`, simulates that graph, and puts the simulated timeline beside the
# real one.
#
# The profile: rank 0 of `../shared/profiles/Ascend_msinsight/test/st/level2` (a Llama-like
# bf16 training step, torch_npu on CANN 8.3). **To read your own**, set `PROFILE` below to its
# `*_ascend_pt` folder (torch_npu), its `PROF_*` folder (msprof), or a single
# `kernel_details.csv` / `op_summary_*.csv`; `NPUSIM_PROFILES=/path` moves the default folder.
# Without the profile the notebook says so and stops.
#
# Rerun: `notebooks_export/export.sh`, or `python3 notebooks_export/06_reading_a_profile.py`
# (`NPUSIM=/path/to/npusim` picks the binary).

# %%
import json
import os
import tomllib

import matplotlib.pyplot as plt
import pandas as pd

from nbhelpers import REPO, npusim, npusim_json, profiles_dir, reading, skip_rest, table, workdir

print(npusim("--version").strip())
profiles = profiles_dir()
PROFILE = (profiles / "Ascend_msinsight" / "test" / "st" / "level2" / "rank_0_ascend_pt"
           if profiles else None)
if not (PROFILE and PROFILE.exists()):
    skip_rest("The real profile is not here (looked for rank_0_ascend_pt under "
              f"{PROFILE.parent if PROFILE else '../shared/profiles'}; set NPUSIM_PROFILES to "
              "the folder holding Ascend_msinsight/, or PROFILE in this notebook to your own). "
              "This notebook stops without figures.")
print(f"profile: {os.path.relpath(PROFILE, REPO)}")

# %% [markdown]
# ## What `npusim analyze` finds
#
# The terminal summary first (what a user sees), then the JSON (`--json`) the figure is drawn
# from: each finding has a severity, the time at stake, the ops it points at and advice.

# %%
summary = npusim("analyze", PROFILE)
print("\n".join(summary.splitlines()[:12]))
report = npusim_json("analyze", PROFILE)
findings = pd.DataFrame(report["findings"])
findings = findings[findings["time_us"] > 0].sort_values("time_us")
op_types = pd.DataFrame(report["op_types"]).sort_values("total_us", ascending=False)
print(table(findings[["severity", "check", "time_us", "title"]], "{:.0f}"))

# %%
severity_colour = {"high": "tab:red", "medium": "tab:orange", "low": "tab:olive",
                   "info": "tab:grey"}
fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5),
                                  gridspec_kw={"width_ratios": [1.4, 1]})
left.barh([t if len(t) < 60 else t[:57] + "…" for t in findings["title"]],
          findings["time_us"] / 1000,
          color=[severity_colour.get(s, "tab:blue") for s in findings["severity"]])
left.set(title="Findings, by time at stake (colour: severity)", xlabel="time at stake (ms)",
         ylabel="finding")
left.tick_params(axis="y", labelsize=7)
top_types = op_types.head(10).iloc[::-1]
right.barh(top_types["type"], top_types["total_us"] / 1000, color="tab:blue")
right.set(title="Op types by device time", xlabel="summed Task Duration (ms)",
          ylabel="op type")
right.tick_params(axis="y", labelsize=8)
for ax in (left, right):
    ax.grid(alpha=0.3, axis="x")
fig.suptitle(f"npusim analyze {PROFILE.name}")
plt.show()

step = report["utilization"][0]["steps"][-1]
first = findings.iloc[-1]
advice = first["advice"][0] if first["advice"] else ""
reading(
    f"The profile holds {report['ops']} compute ops summing to "
    f"{report['total_time_us'] / 1000:.1f} ms of device time. The largest finding is "
    f"“{first['title']}” with {first['time_us'] / 1000:.1f} ms at stake; its first advice: "
    f"{advice.rstrip('.')}. {len(findings)} findings in all carry time. By op type, "
    f"{op_types.iloc[0]['type']} takes {op_types.iloc[0]['share']:.0%} of the device time and "
    f"the top three {op_types.head(3)['share'].sum():.0%}; these are where a faster kernel pays "
    f"most. The step spans {step['span_us'] / 1000:.1f} ms, so device time alone does not "
    f"explain it: the rest is idle device and communication.")

# %% [markdown]
# ## The same step, simulated
#
# `npusim graph from-profile` writes the step as a graph: ops in start-time order, each after
# the previous op of its stream, with its measured duration (`duration_us`); communication
# (hcom_*) is left out, since the simulator does not model collectives. Simulated as it is, the
# graph replays the measured kernels with the simulator's host launch costs; with the measured
# durations removed (for ops whose shapes the model accepts), the op model predicts every
# kernel. Both run one request on one stream (`--trace` writes the timeline).

# %%
graph = workdir() / "step.toml"
npusim("graph", "from-profile", PROFILE, "-o", graph)
text = graph.read_text()
print("\n".join(l.replace(str(PROFILE), PROFILE.name) for l in text.splitlines()[:8]
                if l.startswith("#")))

# The model's version: drop duration_us from every op whose shapes are usable (ops written with
# empty shapes keep their measured duration, the only time the simulator has for them).
blocks = text.split("\n[[graph.op]]\n")
kept = [blocks[0]]
for b in blocks[1:]:
    lines = b.split("\n")
    if not any(l.startswith('shapes = ""') for l in lines):
        lines = [l for l in lines if not l.startswith("duration_us")]
    kept.append("\n".join(lines))
model_graph = workdir() / "step_model.toml"
model_graph.write_text("\n[[graph.op]]\n".join(kept))

with open(graph, "rb") as f:
    graph_ops = tomllib.load(f)["graph"]["op"]
op_type = {o["name"]: o["type"] for o in graph_ops}
print(f"{len(graph_ops)} ops; {sum(1 for o in graph_ops if not o['shapes'])} keep their "
      f"measured duration in the model's version")


def simulate(graph_file, name):
    scenario = workdir() / f"{name}.toml"
    scenario.write_text(
        f'[scenario]\nname = "{name}"\nhw = "ascend910b3"\n[graph]\nfile = "{graph_file.name}"\n'
        '[deployment]\nstreams = 1\ngears = [1]\n'
        '[workload]\narrival = "closed"\nconcurrency = 1\nrequests = 1\nbatch_size = 1\n')
    trace = workdir() / f"{name}_trace.json"
    result = npusim_json("simulate", scenario, "--trace", trace)
    events = json.loads(trace.read_text())["traceEvents"]
    device = [e for e in events if e.get("ph") == "X" and e.get("tid") == 0]
    spans = pd.DataFrame({"name": [e["name"] for e in device],
                          "start_ms": [e["ts"] / 1000 for e in device],
                          "dur_ms": [e["dur"] / 1000 for e in device]})
    spans["type"] = spans["name"].map(op_type)
    return result, spans


spec_mhz = npusim_json("hw", "show", "ascend910b3")["spec"]["chip"]["freq_mhz"]
profile_mhz = report["utilization"][0]["freq_mhz"]
print(f"simulated chip clock {spec_mhz:.0f} MHz (spec); the profile's cores ran at "
      f"{profile_mhz:.0f} MHz (inferred by analyze)")
replay, replay_spans = simulate(graph, "replay")
model, model_spans = simulate(model_graph, "model")

kernels = pd.read_csv(next(PROFILE.rglob("kernel_details.csv")))
kernels.columns = [c.strip() for c in kernels.columns]
kernels = kernels[kernels["Step Id"] == kernels["Step Id"].max()]
t0 = kernels["Start Time(us)"].min()
real_spans = pd.DataFrame({"start_ms": (kernels["Start Time(us)"] - t0) / 1000,
                           "dur_ms": kernels["Duration(us)"] / 1000,
                           "type": kernels["Type"],
                           "comm": kernels["Accelerator Core"] == "COMMUNICATION"})
compute = real_spans[~real_spans["comm"]]
spans_ms = {"real": (real_spans["start_ms"] + real_spans["dur_ms"]).max(),
            "replay": replay["latency_ms"]["max"], "model": model["latency_ms"]["max"]}
busy_ms = {"real": compute["dur_ms"].sum(), "replay": replay_spans["dur_ms"].sum(),
           "model": model_spans["dur_ms"].sum()}
print(pd.DataFrame({"span_ms": spans_ms, "compute_ms": busy_ms}).round(1).to_string())

# %%
main_types = compute.groupby("type")["dur_ms"].sum().sort_values(ascending=False).head(7).index
palette = dict(zip(main_types, plt.cm.tab10.colors))
rows = [("real device (compute)", compute), ("simulated: measured kernels", replay_spans),
        ("simulated: op model", model_spans)]
fig, ax = plt.subplots(figsize=(13, 3.8))
for y, (label, spans) in enumerate(rows):
    kind = spans["type"].where(spans["type"].isin(main_types), "other")
    for t in ["other", *main_types]:  # the many small ops first, the main types drawn over them
        group = spans[kind == t]
        ax.broken_barh(list(zip(group["start_ms"], group["dur_ms"])), (y - 0.35, 0.7),
                       color=palette.get(t, "lightgrey"), linewidth=0,
                       label=t if y == 0 else None)
comm = real_spans[real_spans["comm"]]
ax.broken_barh(list(zip(comm["start_ms"], comm["dur_ms"])), (-0.6, 0.2), color="black",
               label="communication (hcom, real only)")
ax.set_yticks(range(len(rows)), [r[0] for r in rows])
ax.invert_yaxis()
ax.set(title="One training step: the real device timeline and the simulated ones",
       xlabel="time from the step's first kernel (ms)", ylabel="timeline")
ax.grid(alpha=0.3, axis="x")
ax.legend(fontsize=7, ncol=3, loc="lower right")
plt.show()

reading(
    f"Top row: the device as profiled, {spans_ms['real']:.0f} ms from the first to the last "
    f"kernel of the step, of which {busy_ms['real']:.0f} ms are compute kernels; the black "
    f"marks are collectives, {real_spans.loc[real_spans['comm'], 'dur_ms'].sum():.0f} ms of "
    f"them, and the white space between kernels is the idle time analyze flagged. Middle row: "
    f"the same kernels with their measured durations, simulated on one in-order queue with the "
    f"simulator's launch costs: {spans_ms['replay']:.0f} ms, since there is no communication "
    f"and no host stall to wait for. Bottom row: every kernel the model accepts predicted "
    f"instead of measured: {spans_ms['model']:.0f} ms, {busy_ms['model']:.0f} ms of it kernels "
    f"against {busy_ms['replay']:.0f} ms measured ({busy_ms['model'] / busy_ms['replay'] - 1:+.0%}"
    f"; the simulated chip runs at its spec clock of {spec_mhz:.0f} MHz, the profiled one ran at "
    f"{profile_mhz:.0f} MHz, which alone makes compute-bound kernels "
    f"{1 - profile_mhz / spec_mhz:.0%} shorter). The gap between the top and middle rows is what faster collectives and a host that "
    f"keeps up could win; the gap between middle and bottom is the model's error on this step.")

# %% [markdown]
# ## Where the model's step differs, by op type

# %%
per_type = pd.DataFrame({
    "measured_ms": replay_spans.groupby("type")["dur_ms"].sum(),
    "model_ms": model_spans.groupby("type")["dur_ms"].sum()}).fillna(0)
per_type["diff_ms"] = per_type["model_ms"] - per_type["measured_ms"]
largest = per_type.reindex(per_type["diff_ms"].abs().sort_values(ascending=False).index).head(8)
print(table(largest.reset_index(), "{:.2f}"))

fig, ax = plt.subplots(figsize=(8, 4))
shown = largest.iloc[::-1]
ax.barh(shown.index, shown["diff_ms"],
        color=["tab:red" if d > 0 else "tab:blue" for d in shown["diff_ms"]])
ax.axvline(0, color="black", linewidth=0.8)
ax.set(title="Op model minus measured kernel time in the step",
       xlabel="predicted − measured, summed over the step (ms)", ylabel="op type")
ax.grid(alpha=0.3, axis="x")
plt.show()

over, under = largest[largest["diff_ms"] > 0], largest[largest["diff_ms"] < 0]
reading(
    f"Over the step the op model predicts {busy_ms['model']:.1f} ms of kernels against "
    f"{busy_ms['replay']:.1f} ms measured. The largest differences by type: "
    + "; ".join(f"{t} {r['diff_ms']:+.1f} ms ({r['model_ms']:.1f} predicted, "
                f"{r['measured_ms']:.1f} measured)" for t, r in largest.head(4).iterrows())
    + f". Of these {len(largest)} types the model overpredicts {len(over)} (red) and "
    f"underpredicts {len(under)} (blue); notebook 5 shows how far calibration closes such gaps and which pipes "
    f"they come from.")
