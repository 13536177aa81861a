"""chainrule.distributed, DistributedDataParallel and DistributedSampler (issue 19).

The multi-rank tests start 2 and 3 ranks through the launcher (mpiexec of the mpich wheel)
with a timeout; the workers in tests/distributed_workers check every collective against its
NumPy meaning and DDP against one process training on the whole batch, and abort the job on
the first failure. The single-process API (errors before init, messages, return values) is
compared with PyTorch's gloo backend, and DistributedSampler's indices with PyTorch's.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import chainrule
from chainrule.utils.data.distributed import torch_randperm

WORKERS = Path(__file__).parent / "distributed_workers"
LAUNCH = [sys.executable, "-m", "chainrule.distributed.run"]


def run_job(command: list[str], timeout: float = 240) -> subprocess.CompletedProcess:
    """Run ``command`` (a launcher, mpiexec and its ranks) in a session of its own, so that a
    timeout kills all of it instead of leaving ranks behind."""
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            pytest.fail(f"{command} did not finish in {timeout} s:\n{out}\n{err}")
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def run_ranks(ranks: int, script: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return run_job([*LAUNCH, "-n", str(ranks), str(script)], timeout)


def assert_every_rank(done: subprocess.CompletedProcess, word: str, ranks: int) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    for rank in range(ranks):
        assert f"{word} ok on rank {rank} of {ranks}" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("ranks", [2, 3])
def test_collectives_on_several_ranks(ranks: int) -> None:
    assert_every_rank(run_ranks(ranks, WORKERS / "collectives.py"), "collectives", ranks)


@pytest.mark.parametrize("ranks", [2, 3])
def test_ddp_matches_one_process_on_the_whole_batch(ranks: int) -> None:
    assert_every_rank(run_ranks(ranks, WORKERS / "ddp.py"), "ddp", ranks)


FAILING = """
import time
import chainrule as torch
import chainrule.distributed as dist
from datetime import timedelta
dist.init_process_group("mpi", timeout=timedelta(seconds={timeout}))
if dist.get_rank() == 1:
    {rank_one}
t = torch.ones(2)
dist.all_reduce(t)
print("rank", dist.get_rank(), "finished", flush=True)
"""


@pytest.mark.parametrize("case", ["raises", "hangs"])
def test_a_failing_rank_ends_the_job(tmp_path: Path, case: str) -> None:
    """Rank 1 raises (or never joins the all-reduce): rank 0 does not wait for ever, the job
    ends with a non-zero status and the error is shown."""
    rank_one = "raise RuntimeError('rank 1 gives up')" if case == "raises" else "time.sleep(120)"
    script = tmp_path / "failing.py"
    script.write_text(FAILING.format(timeout=3, rank_one=rank_one))
    start = time.monotonic()
    done = run_ranks(2, script, timeout=100)
    assert done.returncode != 0
    assert "finished" not in done.stdout
    expected = (
        "rank 1 gives up" if case == "raises" else "Timed out after 3 s waiting for all_reduce"
    )
    # The launcher's summary holds the failing rank's whole traceback (the rank's own standard
    # error may be cut short by the abort), so the error always reaches the user.
    summary = done.stderr[done.stderr.index("failing.py FAILED") :]
    failing_rank = 1 if case == "raises" else 0
    assert f"rank {failing_rank} raised:" in summary
    assert expected in summary
    assert time.monotonic() - start < 90


def test_failure_summary_lists_ranks_in_order(tmp_path: Path) -> None:
    from chainrule.distributed.run import failure_summary

    assert failure_summary(["train.py"], tmp_path, 1) == ""
    for rank in (10, 2):
        (tmp_path / f"rank{rank}.txt").write_text(f"Traceback\nValueError: rank {rank}\n")
    (tmp_path / "rank3.txt.partial").write_text("cut short")
    summary = failure_summary(["-m", "pkg.train", "--steps", "3"], tmp_path, 1)
    assert summary.splitlines() == [
        "=" * 60,
        "pkg.train FAILED (exit status 1)",
        "-" * 60,
        "rank 2 raised:",
        "Traceback",
        "ValueError: rank 2",
        "-" * 60,
        "rank 10 raised:",
        "Traceback",
        "ValueError: rank 10",
        "=" * 60,
    ]


def test_launcher_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from chainrule.distributed.run import _split, main

    for argv, message in (
        ([], "a script (or -m module) to run is required"),
        (["-n", "0", "x.py"], "-n must be at least 1"),
    ):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2
        assert message in capsys.readouterr().err
    # The script's own options are the script's, before and after "-m".
    assert _split(["-n", "2", "train.py", "-n", "5"]) == (["-n", "2"], ["train.py", "-n", "5"])
    assert _split(["--mpiexec", "m", "-m", "pkg", "--steps", "3"]) == (
        ["--mpiexec", "m"],
        ["-m", "pkg", "--steps", "3"],
    )


def test_environment_must_match_mpi() -> None:
    """RANK / WORLD_SIZE set (by another launcher) but not matching MPI's: a clear error."""
    code = "import chainrule.distributed as d; d.init_process_group()"
    env = {**os.environ, "WORLD_SIZE": "4", "RANK": "0"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode != 0
    assert (
        "ValueError: environment variable WORLD_SIZE=4 does not match MPI's (1): start the "
        "processes with mpiexec (python -m chainrule.distributed.run -n N script.py)" in done.stderr
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _single_process(which: str) -> dict[str, list]:
    done = subprocess.run(
        [sys.executable, str(WORKERS / "single_process.py"), which, str(_free_port())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_single_process_api_matches_pytorch() -> None:
    """Errors before init_process_group, the dtype, list and gather/scatter checks, return
    values, Work, new_group, DDP's state_dict keys and repr: chainrule on MPI (one rank) and
    PyTorch on gloo (one rank), step by step."""
    ours = _single_process("chainrule")
    theirs = _single_process("torch")
    assert list(ours) == list(theirs)
    different = {k: (ours[k], theirs[k]) for k in theirs if ours[k] != theirs[k]}
    assert not different


@pytest.mark.parametrize("n", [0, 1, 2, 7, 10, 33, 1000])
@pytest.mark.parametrize("seed", [0, 5, 2**32 + 9])
def test_randperm_is_pytorchs(n: int, seed: int) -> None:
    generator = torch.Generator()
    generator.manual_seed(seed)
    assert torch_randperm(n, seed) == torch.randperm(n, generator=generator).tolist()


@pytest.mark.parametrize("n", [1, 2, 7, 10, 33])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [True, False])
def test_distributed_sampler_matches_pytorch(
    n: int, replicas: int, shuffle: bool, drop_last: bool
) -> None:
    for rank in range(replicas):
        for seed, epoch in ((0, 0), (7, 3)):
            samplers = [
                lib.utils.data.distributed.DistributedSampler(
                    range(n),
                    num_replicas=replicas,
                    rank=rank,
                    shuffle=shuffle,
                    seed=seed,
                    drop_last=drop_last,
                )
                for lib in (chainrule, torch)
            ]
            for sampler in samplers:
                sampler.set_epoch(epoch)
            ours, theirs = samplers
            assert list(ours) == list(theirs)
            assert len(ours) == len(theirs)
            assert (ours.num_samples, ours.total_size) == (theirs.num_samples, theirs.total_size)


def test_distributed_sampler_errors_match_pytorch() -> None:
    for kwargs in ({"num_replicas": 3, "rank": 3}, {"num_replicas": 2, "rank": -1}, {}):
        messages = []
        for lib in (chainrule, torch):
            with pytest.raises(ValueError) as caught:
                lib.utils.data.distributed.DistributedSampler(range(5), **kwargs)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]


def test_train_command_on_two_ranks(tmp_path: Path) -> None:
    """``python -m chainrule train --ranks 2``: the digits MLP trained data-parallel; rank 0
    reports once and writes the weights and the curve."""
    done = run_job(
        [
            sys.executable,
            "-m",
            "chainrule",
            "train",
            "--ranks",
            "2",
            "--epochs",
            "1",
            "--quiet",
            "--out",
            str(tmp_path),
        ],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("test accuracy") == 1
    assert "after 1 epochs" in done.stdout and "on 2 ranks" in done.stdout
    accuracy = float(done.stdout.split("test accuracy ")[1].split("%")[0])
    assert accuracy > 50
    assert (tmp_path / "digits_mlp.safetensors").exists()
    assert (tmp_path / "digits_mlp_curve.png").exists()


def test_ddp_cost_model() -> None:
    """benchmarks/ddp.py's model: the ring all-reduce formula, the fit recovering alpha and
    beta from exact times, and a step that overlaps communication with backward."""
    from benchmarks.ddp import fit_alpha_beta, predicted_step, ring_allreduce

    assert ring_allreduce(1, 1e6, 1e-5, 1e-9) == 0.0
    assert ring_allreduce(4, 4e6, 1e-5, 1e-9) == pytest.approx(6 * 1e-5 + 1.5 * 4e6 * 1e-9)
    sizes = [2**k for k in range(10, 25, 2)]
    times = [ring_allreduce(2, n, 2e-5, 5e-10) for n in sizes]
    alpha, beta = fit_alpha_beta(sizes, times, 2)
    assert alpha == pytest.approx(2e-5) and beta == pytest.approx(5e-10)
    # Free communication: the step is the computation; one huge bucket: all of it exposed.
    assert predicted_step(8, 1e7, 1e6, 0.01, 0.02, 0.001, 0.0, 0.0) == pytest.approx(0.031)
    exposed = predicted_step(8, 1e7, 1e7, 0.01, 0.02, 0.001, 0.0, 1e-9)
    assert exposed == pytest.approx(0.031 + ring_allreduce(8, 1e7, 0.0, 1e-9))
    overlapped = predicted_step(8, 1e7, 1e6, 0.01, 0.02, 0.001, 0.0, 1e-9)
    assert 0.031 < overlapped < exposed
