# %% [markdown]
# # 5. Calibration on real profiles
#
# How close are the op model's predictions to real kernels, and how much does calibration help
# on shapes it has not seen? This notebook fits the model to one rank of a real torch_npu profile
# and tests it on the shapes of another rank the fit never saw, then looks at the error by op
# family and at the pipes (MTE2, vector, cube, MTE3) of the op types that still miss most.
#
# The profiles: `../shared/profiles/Ascend_msinsight/test/st/level2`, ranks 0 and 2 of a
# Llama-like bf16 training step captured with torch_npu on CANN 8.3 (see docs/accuracy.md).
# `NPUSIM_PROFILES=/path/to/profiles` points the notebook at another copy; to use profiles of
# your own, set `RANK_FIT` and `RANK_TEST` below to two `*_ascend_pt` or `PROF_*` folders
# (`npusim calibrate --help` lists what it reads). Without the profiles the notebook says so and
# stops.
#
# Rerun: `notebooks_export/export.sh`, or `python3 notebooks_export/05_calibration.py`
# (`NPUSIM=/path/to/npusim` picks the binary).

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from nbhelpers import (npusim, npusim_csv, npusim_json, profiles_dir, reading, skip_rest, table,
                       workdir)

print(npusim("--version").strip())
profiles = profiles_dir()
level2 = profiles / "Ascend_msinsight" / "test" / "st" / "level2" if profiles else None
RANK_FIT = level2 / "rank_0_ascend_pt" if level2 else None
RANK_TEST = level2 / "rank_2_ascend_pt" if level2 else None
if not (RANK_FIT and RANK_FIT.is_dir() and RANK_TEST.is_dir()):
    skip_rest("The real profiles are not here (looked for ranks 0 and 2 under "
              f"{level2 or '../shared/profiles'}; set NPUSIM_PROFILES to the folder holding "
              "Ascend_msinsight/). Calibration needs measured kernels, so this notebook stops "
              "without figures.")
print(f"fit on {RANK_FIT.name}, test on the unseen shapes of {RANK_TEST.name}")

# %% [markdown]
# ## Fit on one rank, test on another
#
# `npusim calibrate --split file --holdout 0.5` fits the model's parameters (efficiencies,
# per-core rates, latencies, launch and vector class costs) to the kernels of one profile and
# reports the error on the other profile's shape keys that the fit did not see; `-o` writes the
# fitted values as an overlay. `npusim accuracy --csv` then gives every kernel's measured and
# predicted time, with and without the overlay.

# %%
overlay = workdir() / "calibrated.toml"
cal = npusim_json("calibrate", RANK_FIT, RANK_TEST, "--hw", "auto", "--split", "file",
                  "--holdout", "0.5", "-o", overlay)
print(cal["chip_note"])
print(f"fit rows {cal['fit_rows']}, held-out rows {cal['holdout_rows']}")
rows = []
for split in ("fit", "holdout"):
    for when in ("before", "after"):
        o = cal[split][when]["overall"]
        rows.append({"rows": split, "model": "calibrated" if when == "after" else "spec",
                     "MAPE": o["mape"], "median APE": o["median_ape"], "P90 APE": o["p90_ape"],
                     "step total error": o["step_total_error"]})
summary = pd.DataFrame(rows)
print(summary.to_string(index=False, float_format=lambda v: f"{v:.1%}"))

before = npusim_csv("accuracy", RANK_FIT, RANK_TEST, "--hw", "auto", name="before.csv")
after = npusim_csv("accuracy", RANK_FIT, RANK_TEST, "--hw", "auto", "--overlay", overlay,
                   name="after.csv")
# A row is held out when it comes from the test rank and its (type, input shapes) never occurs
# in the fit rank: the key calibrate splits on also has output shapes and dtypes, so this can
# count a few rows differently.
for df in (before, after):
    df["rank"] = np.where(df["source"].str.contains(RANK_TEST.name, regex=False), "test", "fit")
    seen = set(zip(df.loc[df["rank"] == "fit", "type"], df.loc[df["rank"] == "fit",
                                                               "input_shapes"]))
    df["holdout"] = [(r == "test") and ((t, s) not in seen)
                     for r, t, s in zip(df["rank"], df["type"], df["input_shapes"])]
print(f"accuracy rows {len(after)}; marked held out {int(after['holdout'].sum())} "
      f"(calibrate: {cal['holdout_rows']})")

# %%
families = sorted(after["family"].unique())
colours = dict(zip(families, plt.cm.tab10.colors))
fig, axes = plt.subplots(1, 2, figsize=(12, 5.2), sharex=True, sharey=True)
for ax, df, name in ((axes[0], before, "chip spec"), (axes[1], after, "calibrated overlay")):
    for fam in families:
        d = df[(df["family"] == fam) & ~df["holdout"]]
        ax.scatter(d["measured_us"], d["predicted_us"], s=6, alpha=0.35, color=colours[fam],
                   label=fam)
    h = df[df["holdout"]]
    ax.scatter(h["measured_us"], h["predicted_us"], s=30, facecolors="none", edgecolors="black",
               linewidths=0.8, label="held out (unseen shapes)")
    lim = [0.5, df[["measured_us", "predicted_us"]].max().max() * 2]
    ax.plot(lim, lim, color="grey", linewidth=0.8)
    ax.set(xscale="log", yscale="log", xlim=lim, ylim=lim, title=f"Predicted with the {name}",
           xlabel="measured Task Duration (µs)", ylabel="predicted duration (µs)")
    ax.grid(alpha=0.3, which="major")
axes[1].legend(fontsize=7, markerscale=2, loc="upper left")
fig.suptitle("Every compute kernel of two ranks: predicted against measured")
plt.show()


def mape(df):
    return float(df["ape"].mean())


hb, ha = cal["holdout"]["before"]["overall"], cal["holdout"]["after"]["overall"]
fa = cal["fit"]["after"]["overall"]
carries = ha["mape"] <= 1.25 * fa["mape"]
reading(
    f"Each point is one kernel ({len(after)} over both ranks); on the grey line prediction "
    f"equals measurement. With the chip's spec values the model's error is {mape(before):.0%} "
    f"MAPE over all kernels, {mape(after):.0%} with the fitted overlay. On the "
    f"{cal['holdout_rows']} held-out kernels, whose shapes the fit never saw, calibrate reports "
    f"MAPE {hb['mape']:.1%} → {ha['mape']:.1%}, median {hb['median_ape']:.1%} → "
    f"{ha['median_ape']:.1%} and the error of their summed time {hb['step_total_error']:.1%} → "
    f"{ha['step_total_error']:.1%}. After calibration the held-out MAPE is "
    f"{ha['mape'] / fa['mape']:.2f}× the fit rows' {fa['mape']:.1%}: "
    + ("the fit carries over to shapes it never saw. " if carries else
       "part of what the fit learned does not carry over to unseen shapes. ") +
    f"The model's clock is the one measured from the profile's cycle counts (--hw auto).")

# %% [markdown]
# ## Error by op family, before and after
#
# Families are the cost models of model/cost (cube = matrix products, elementwise, reduction,
# data movement, index, sort, AI CPU, generic for op types without a model of their own).

# %%
fam_rows = []
for split in ("fit", "holdout"):
    for when in ("before", "after"):
        for fam, m in cal[split][when]["by_family"].items():
            fam_rows.append({"rows": split, "model": when, "family": fam, "mape": m["mape"],
                             "n": m["rows"]})
by_family = pd.DataFrame(fam_rows)
print(by_family.pivot_table(index=["family"], columns=["rows", "model"], values="mape")
      .to_string(float_format=lambda v: f"{v:.1%}"))

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
for ax, split in zip(axes, ("fit", "holdout")):
    d = by_family[by_family["rows"] == split].pivot(index="family", columns="model",
                                                    values="mape")
    n = by_family[(by_family["rows"] == split) & (by_family["model"] == "after")] \
        .set_index("family")["n"]
    x = np.arange(len(d))
    ax.bar(x - 0.2, d["before"] * 100, 0.4, label="chip spec")
    ax.bar(x + 0.2, d["after"] * 100, 0.4, label="calibrated")
    ax.set_xticks(x, [f"{f}\n({n[f]})" for f in d.index], fontsize=8)
    ax.set(title=f"{'Fit' if split == 'fit' else 'Held-out'} kernels",
           xlabel="op family (kernels)", ylabel="MAPE (%)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend()
fig.suptitle("Error by op family before and after calibration")
plt.show()

hold = by_family[by_family["rows"] == "holdout"].pivot(index="family", columns="model",
                                                      values="mape")
hold["change"] = hold["after"] - hold["before"]
improved = hold.sort_values("change")
reading(
    f"On the held-out kernels calibration helps most in {improved.index[0]} "
    f"({improved['before'].iloc[0]:.0%} → {improved['after'].iloc[0]:.0%} MAPE) and "
    f"{improved.index[1]} ({improved['before'].iloc[1]:.0%} → {improved['after'].iloc[1]:.0%}); "
    f"{improved.index[-1]} "
    f"{'gets worse' if improved['change'].iloc[-1] > 0 else 'changes least'} "
    f"({improved['before'].iloc[-1]:.1%} → "
    f"{improved['after'].iloc[-1]:.1%}). The family with the lowest held-out error after "
    f"calibration is {hold['after'].idxmin()} ({hold['after'].min():.0%}), the highest "
    f"{hold['after'].idxmax()} ({hold['after'].max():.0%}). Families with few kernels (the count "
    f"is under each bar) move a lot with a single kernel.")

# %% [markdown]
# ## Pipe-level discrepancies of the worst op types
#
# The profile measures how long each pipe of the AI core was busy (MTE2 loads from global
# memory, the vector and cube units, MTE3 stores); the model predicts the same pipes. For the op
# types that contribute most absolute error after calibration, the summed pipe times show which
# part of the model misses.

# %%
after["abs_err_us"] = (after["predicted_us"] - after["measured_us"]).abs()
worst = after.groupby("type")["abs_err_us"].sum().sort_values(ascending=False).head(4)
pipes = ["mte2", "vector", "cube", "mte3"]
pipe_rows = []
for t in worst.index:
    d = after[after["type"] == t]
    for p in pipes:
        pipe_rows.append({"type": t, "pipe": p, "measured_us": d[f"measured_{p}_us"].sum(),
                          "predicted_us": d[f"predicted_{p}_us"].sum()})
    pipe_rows.append({"type": t, "pipe": "duration", "measured_us": d["measured_us"].sum(),
                      "predicted_us": d["predicted_us"].sum()})
pipe_df = pd.DataFrame(pipe_rows)
print(table(pipe_df, "{:.0f}"))

# %%
fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), layout="constrained")
axes = axes.ravel()
for ax, t in zip(axes, worst.index):
    d = pipe_df[pipe_df["type"] == t]
    x = np.arange(len(d))
    ax.bar(x - 0.2, d["measured_us"] / 1000, 0.4, label="measured")
    ax.bar(x + 0.2, d["predicted_us"] / 1000, 0.4, label="predicted")
    ax.set_xticks(x, d["pipe"], fontsize=8)
    ax.set(title=f"{t} ({(after['type'] == t).sum()} kernels)", xlabel="pipe",
           ylabel="summed busy time (ms)")
    ax.grid(alpha=0.3, axis="y")
axes[0].legend()
fig.suptitle("Measured and predicted pipe times of the op types with the largest error "
             "(calibrated)")
plt.show()

notes = []
for t in worst.index:
    d = pipe_df[(pipe_df["type"] == t) & (pipe_df["pipe"] != "duration")].copy()
    d["gap"] = d["predicted_us"] - d["measured_us"]
    g = d.loc[d["gap"].abs().idxmax()]
    dur = pipe_df[(pipe_df["type"] == t) & (pipe_df["pipe"] == "duration")].iloc[0]
    notes.append(f"{t} (predicted {dur['predicted_us'] / 1000:.1f} ms of a measured "
                 f"{dur['measured_us'] / 1000:.1f} ms; its largest pipe gap is {g['pipe']}, "
                 f"{g['predicted_us'] / 1000:.1f} ms predicted against "
                 f"{g['measured_us'] / 1000:.1f} ms measured)")
unmodelled = pipe_df[(pipe_df["pipe"] != "duration") & (pipe_df["predicted_us"] == 0)
                     & (pipe_df["measured_us"] > 1000)]
reading(
    f"The four op types with the largest absolute error after calibration, together "
    f"{worst.sum() / 1000:.1f} ms of the {after['abs_err_us'].sum() / 1000:.1f} ms summed over "
    f"all kernels: " + "; ".join(notes) + ". "
    + ("The model gives no time at all to " +
       ", ".join(f"the {r['pipe']} pipe of {r['type']} ({r['measured_us'] / 1000:.1f} ms "
                 f"measured)" for _, r in unmodelled.iterrows()) + ". "
       if len(unmodelled) else "")
    + f"A pipe predicted longer than measured is a rate the "
    f"model puts too low (or work it counts that the kernel does not do); one predicted "
    f"shorter is cost it misses. docs/accuracy.md lists what is known to be missing.")
