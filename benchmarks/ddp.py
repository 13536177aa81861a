"""``python -m benchmarks.ddp``: a DistributedDataParallel step on 1 and 2 ranks, the overlap of
its all-reduces with backward, and a cost model predicting larger jobs.

Runs ``benchmarks/ddp_worker.py`` through ``python -m chainrule.distributed.run`` for each rank
count, then:

* reports per rank count the step time without and with DDP, the communication of the step's
  buckets measured alone, what the end of backward still waited for (``exposed``), and the
  overlap: the fraction of the communication hidden behind backward, ``1 - exposed / comm``;
* fits ``t = alpha + beta * bytes`` to this machine's all-reduce times (2 ranks: a ring
  all-reduce of n bytes on p ranks takes ``2 (p - 1) alpha + 2 (p - 1) / p * n * beta``);
* predicts the step time and weak-scaling efficiency for 8, 64 and 512 ranks on a stated
  network (``NETWORK``) with the computation measured here, for several bucket sizes, and
  recommends the bucket size with the shortest step (benchmarks/DDP.md explains the model).

``--write-results`` writes ``benchmarks/ddp_results.json`` and ``benchmarks/ddp_results.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent

#: The network the predictions assume: one rank per node on 25 Gb/s Ethernet, a per-message
#: latency of 10 microseconds and 2.5 GB/s of usable bandwidth per link.
NETWORK: dict[str, Any] = {"name": "25 Gb/s Ethernet", "alpha": 10e-6, "beta": 1 / 2.5e9}

PREDICTED_RANKS = (8, 64, 512)
BUCKET_MB = (0.25, 1, 4, 16, 25, 64, 256)


def run_worker(ranks: int, steps: int, bucket_cap_mb: float) -> dict[str, Any]:
    """One launch of the worker on ``ranks`` ranks; rank 0's JSON."""
    command = [
        sys.executable,
        "-m",
        "chainrule.distributed.run",
        "-n",
        str(ranks),
        "-m",
        "benchmarks.ddp_worker",
        "--steps",
        str(steps),
        "--bucket-cap-mb",
        str(bucket_cap_mb),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, cwd=HERE.parent)
    if done.returncode != 0:
        raise RuntimeError(f"the DDP worker failed on {ranks} ranks:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def fit_alpha_beta(sizes: list[int], seconds: list[float], ranks: int) -> tuple[float, float]:
    """The ring model ``2 (p - 1) alpha + 2 (p - 1) / p * n * beta`` fitted by least squares of
    the relative errors (so that the small messages, which fix alpha, count as much as the
    large ones, which fix beta)."""
    steps = 2 * (ranks - 1)
    xs = [steps / ranks * n for n in sizes]
    weights = [1 / t**2 for t in seconds]
    sw = sum(weights)
    swx = sum(w * x for w, x in zip(weights, xs, strict=True))
    swy = sum(w * y for w, y in zip(weights, seconds, strict=True))
    swxx = sum(w * x * x for w, x in zip(weights, xs, strict=True))
    swxy = sum(w * x * y for w, x, y in zip(weights, xs, seconds, strict=True))
    beta = (sw * swxy - swx * swy) / (sw * swxx - swx**2)
    intercept = (swy - beta * swx) / sw
    return max(intercept / steps, 0.0), beta


def ring_allreduce(ranks: int, nbytes: float, alpha: float, beta: float) -> float:
    """Seconds of one ring all-reduce of ``nbytes`` on ``ranks`` ranks."""
    if ranks == 1:
        return 0.0
    return 2 * (ranks - 1) * alpha + 2 * (ranks - 1) / ranks * nbytes * beta


def predicted_step(
    ranks: int,
    gradient_bytes: float,
    bucket_bytes: float,
    forward: float,
    backward: float,
    update: float,
    alpha: float,
    beta: float,
) -> float:
    """A DDP step: buckets ready one after another during backward (evenly spread), each
    all-reduce starting when its bucket is ready and the previous one has finished; the step
    ends when the last all-reduce and the update are done."""
    count = max(1, math.ceil(gradient_bytes / bucket_bytes))
    size = gradient_bytes / count
    comm = ring_allreduce(ranks, size, alpha, beta)
    end = 0.0
    for i in range(1, count + 1):
        ready = forward + backward * i / count
        end = max(ready, end) + comm
    return max(end, forward + backward) + update


def model_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Predictions for ``PREDICTED_RANKS`` on ``NETWORK``, per bucket size."""
    one = result["runs"]["1"]
    forward = one["forward"]
    backward = max(one["local_step"] - forward - one["update"], 0.0)
    update = one["update"]
    rows = []
    for ranks in PREDICTED_RANKS:
        for mb in BUCKET_MB:
            step = predicted_step(
                ranks,
                one["gradient_bytes"],
                mb * 2**20,
                forward,
                backward,
                update,
                NETWORK["alpha"],
                NETWORK["beta"],
            )
            rows.append(
                {
                    "ranks": ranks,
                    "bucket_mb": mb,
                    "step": step,
                    "efficiency": one["local_step"] / step,
                }
            )
    return rows


def summarize(runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {"runs": runs, "network": NETWORK}
    for run in runs.values():
        comm = run["comm_alone"]
        run["overlap"] = (
            None
            if run["ranks"] == 1 or comm <= 0
            else min(1.0, max(0.0, 1 - run["exposed"] / comm))
        )
    if "2" in runs:
        two = runs["2"]
        alpha, beta = fit_alpha_beta(two["allreduce_bytes"], two["allreduce_seconds"], 2)
        result["measured_alpha"] = alpha
        result["measured_beta"] = beta
    if "1" in runs:
        rows = model_table(result)
        result["predictions"] = rows
        best = {}
        for ranks in PREDICTED_RANKS:
            mine = [r for r in rows if r["ranks"] == ranks]
            best[str(ranks)] = min(mine, key=lambda r: r["step"])["bucket_mb"]
        result["recommended_bucket_mb"] = best
    return result


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| ranks | step without DDP | DDP step | comm. alone | exposed at end of backward "
        "| overlap |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for run in result["runs"].values():
        overlap = "n/a" if run["overlap"] is None else f"{100 * run['overlap']:.0f}%"
        lines.append(
            f"| {run['ranks']} | {1e3 * run['local_step']:.1f} ms | "
            f"{1e3 * run['ddp_step']:.1f} ms | {1e3 * run['comm_alone']:.1f} ms | "
            f"{1e3 * run['exposed']:.1f} ms | {overlap} |"
        )
    if "measured_alpha" in result:
        lines += [
            "",
            f"This machine's MPI (shared memory, 2 ranks): alpha = "
            f"{1e6 * result['measured_alpha']:.1f} us, 1/beta = "
            f"{1e-9 / result['measured_beta']:.2f} GB/s.",
        ]
    if "predictions" in result:
        network = result["network"]
        lines += [
            "",
            f"Predicted on {network['name']} (alpha = {1e6 * network['alpha']:.0f} us, "
            f"1/beta = {1e-9 / network['beta']:.1f} GB/s), computation as measured on "
            "1 rank:",
            "",
            "| ranks | bucket (MiB) | step | weak-scaling efficiency |",
            "|---:|---:|---:|---:|",
        ]
        for row in result["predictions"]:
            lines.append(
                f"| {row['ranks']} | {row['bucket_mb']:g} | {1e3 * row['step']:.1f} ms "
                f"| {100 * row['efficiency']:.0f}% |"
            )
        lines += [
            "",
            "Recommended bucket size (shortest predicted step): "
            + ", ".join(
                f"{mb:g} MiB on {ranks} ranks"
                for ranks, mb in result["recommended_bucket_mb"].items()
            ),
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ddp", description=__doc__)
    parser.add_argument("--ranks", default="1,2", help="rank counts to measure (default 1,2)")
    parser.add_argument("--steps", type=int, default=15, help="timed steps (medians)")
    parser.add_argument("--bucket-cap-mb", type=float, default=1.0)
    parser.add_argument(
        "--write-results", action="store_true", help="write benchmarks/ddp_results.json and .md"
    )
    options = parser.parse_args(argv)
    runs = {}
    for ranks in [int(r) for r in options.ranks.split(",")]:
        runs[str(ranks)] = run_worker(ranks, options.steps, options.bucket_cap_mb)
    result = summarize(runs)
    text = markdown(result)
    print(text, end="")
    if options.write_results:
        (HERE / "ddp_results.json").write_text(json.dumps(result, indent=1) + "\n")
        (HERE / "ddp_results.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
