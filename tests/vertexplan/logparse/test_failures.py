"""Known failures recognised in real-looking log text, each with its explanation and fix."""

from __future__ import annotations

import pytest

from vertexplan.logparse import failures

OOM_TRACEBACK = """\
Traceback (most recent call last):
  File "/usr/lib/python3.11/runpy.py", line 198, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "/app/trainers/train.py", line 240, in run
    return Trainer(config, process, device, stop).run()
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/app/trainers/trainer.py", line 131, in _step
    loss.backward()
  File "/usr/local/lib/python3.11/site-packages/torch/autograd/__init__.py", line 267, in backward
    _engine_run_backward(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total \
capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process \
has 77.91 GiB memory in use."""

VALUE_ERROR_TRACEBACK = """\
Traceback (most recent call last):
  File "/app/trainers/data.py", line 52, in load
    tokens = encode(path.read_text())
  File "/app/trainers/data.py", line 31, in encode
    raise ValueError(f"empty dataset at {path}")
ValueError: empty dataset at gs://bucket/data/train.txt"""

CHAINED = """\
Traceback (most recent call last):
  File "/app/a.py", line 3, in f
    g()
KeyError: 'lr'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/app/a.py", line 9, in main
    f()
  File "/app/a.py", line 5, in f
    raise RuntimeError("config has no learning rate")
RuntimeError: config has no learning rate"""

LINES = {
    "gpu_oom": [
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
        "total capacity of 39.39 GiB of which 9.56 MiB is free.",
        "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
        "reported at some other API call",
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent "
        "error. Ran out of memory in memory space hbm. Used 17.31G of 15.48G hbm.",
    ],
    "host_oom": [
        "The replica workerpool0-0 exited with a non-zero status of 137. Termination reason: "
        "OOMKilled. To find out more about why your job exited please check the logs",
        "RuntimeError: DataLoader worker (pid 4121) is killed by signal: Killed. ",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by "
        "insufficient shared memory (shm).",
        "MemoryError",
    ],
    "nccl_timeout": [
        "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8317, "
        "OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for "
        "600046 milliseconds before timing out.",
        "torch.distributed.DistBackendError: [2] is setting up NCCL communicator and retrieving "
        "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got "
        "error: Timed out waiting 1800000ms for the store",
    ],
    "nccl_error": [
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:275, unhandled system error (run with NCCL_DEBUG=INFO for details), "
        "NCCL version 2.20.5",
        "worker-1:231:460 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote "
        "peer 10.128.0.12<40542>; ncclSystemError: System call (e.g. socket, malloc) or "
        "external library call failed or device error.",
    ],
    "quota_exceeded": [
        "The following quota metrics exceed quota limits: "
        "aiplatform.googleapis.com/custom_model_training_nvidia_a100_gpus",
        "google.api_core.exceptions.ResourceExhausted: 429 Quota exceeded for quota metric "
        "'Write requests' and limit 'Write requests per minute per user' of service "
        "'storage.googleapis.com'",
    ],
    "image_pull": [
        "Unable to pull docker image us-central1-docker.pkg.dev/proj/training/trainer:v3: "
        "manifest for us-central1-docker.pkg.dev/proj/training/trainer:v3 not found",
        "Failed to pull image \"gcr.io/proj/trainer:latest\": rpc error: code = NotFound",
        "Back-off pulling image: ErrImagePull",
    ],
    "permission_denied": [
        "google.api_core.exceptions.Forbidden: 403 GET https://storage.googleapis.com/storage/"
        "v1/b/ckpt-bucket/o?prefix=job-7: vertex-sa@proj.iam.gserviceaccount.com does not "
        "have storage.objects.list access to the Google Cloud Storage bucket.",
        "PERMISSION_DENIED: Permission 'secretmanager.versions.access' denied for resource "
        "'projects/proj/secrets/wandb/versions/latest' (or it may not exist).",
        "AccessDeniedException: 403 vertex-sa@proj.iam.gserviceaccount.com does not have "
        "bigquery.tables.getData permission",
    ],
}


@pytest.mark.parametrize(("kind", "text"),
                         [(kind, text) for kind, texts in LINES.items() for text in texts])
def test_each_kind_is_recognised_in_a_single_line(kind: str, text: str) -> None:
    assert failures.classify_line(text) == kind
    found = failures.scan([text])
    assert [f.kind for f in found] == [kind]
    info = found[0].info
    assert info.title and info.explanation and info.fix


@pytest.mark.parametrize("text", [
    "step 1200 loss 2.31 lr 3.0e-04 tokens/s 51234",
    "saving checkpoint to gs://bucket/job-7/step-00001200",
    "NCCL INFO Channel 00/02 :    0   1   2   3",
    "memory allocated: 12.3 GiB, reserved 14.0 GiB",
    "checking permissions on gs://bucket: ok",
])
def test_ordinary_lines_are_not_failures(text: str) -> None:
    assert failures.classify_line(text) is None


def test_traceback_gives_its_last_frame_and_message_and_its_kind() -> None:
    found = failures.scan(OOM_TRACEBACK.splitlines())
    assert len(found) == 1
    oom = found[0]
    assert oom.kind == "gpu_oom"
    assert oom.summary.startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert oom.last_frame == ('File "/usr/local/lib/python3.11/site-packages/torch/autograd/'
                              '__init__.py", line 267, in backward: _engine_run_backward(')

    (plain,) = failures.scan(VALUE_ERROR_TRACEBACK.splitlines())
    assert plain.kind == "python_traceback"
    assert plain.summary == "ValueError: empty dataset at gs://bucket/data/train.txt"
    assert plain.last_frame == ('File "/app/trainers/data.py", line 31, in encode: '
                                'raise ValueError(f"empty dataset at {path}")')


def test_chained_traceback_reports_the_exception_that_was_raised() -> None:
    found = failures.scan(CHAINED.splitlines())
    assert [f.summary for f in found] == ["KeyError: 'lr'",
                                          "RuntimeError: config has no learning rate"]
    assert found[-1].last_frame.startswith('File "/app/a.py", line 5, in f')


def test_interleaved_ranks_on_one_replica_are_followed_apart() -> None:
    lines = []
    for a, b in zip(VALUE_ERROR_TRACEBACK.splitlines(), OOM_TRACEBACK.splitlines(), strict=False):
        lines += [f"[rank0]: {a}", f"[rank1]: {b}"]
    lines += [f"[rank1]: {b}" for b in OOM_TRACEBACK.splitlines()[len(lines) // 2:]]
    found = failures.scan(lines)
    assert sorted(f.kind for f in found) == ["gpu_oom", "python_traceback"]


def test_a_traceback_split_across_pages_is_completed_from_the_lines_before() -> None:
    lines = VALUE_ERROR_TRACEBACK.splitlines()
    scanner = failures.TracebackScanner()
    scanner.prime(lines[:3])  # stored by an earlier page
    assert failures.is_traceback_continuation(lines[3])
    results = [scanner.feed(line) for line in lines[3:]]
    assert results[-1] is not None and results[-1].last_frame.endswith(
        'raise ValueError(f"empty dataset at {path}")')


def test_a_stdout_line_stamped_inside_a_stderr_traceback_does_not_end_it() -> None:
    # The pipes are read apart: stdout's last step line can be stamped between stderr's
    # traceback lines. Scanned by stream, the traceback is still one OOM.
    err = OOM_TRACEBACK.splitlines()
    scanner = failures.TracebackScanner()
    found = [scanner.feed(err[0], "stderr"), scanner.feed(err[1], "stderr"),
             scanner.feed('{"event": "step", "step": 40}', "stdout")]
    found += [scanner.feed(line, "stderr") for line in err[2:]]
    assert [f.kind for f in found if f is not None] == ["gpu_oom"]
    # Without streams the same order reads as two failures, the first a bare traceback.
    assert [f.kind for f in failures.scan([*err[:2], '{"event": "step"}', *err[2:]])] == [
        "python_traceback", "gpu_oom"]


@pytest.mark.parametrize(("code", "message", "kind"), [
    (3, "The replica workerpool0-0 exited with a non-zero status of 1.", "replica_exit"),
    (8, "The following quota metrics exceed quota limits: aiplatform.googleapis.com/x",
     "quota_exceeded"),
    (8, "Resources are insufficient in region us-central1 (STOCKOUT).", "stockout"),
    (3, "Unable to pull image us-docker.pkg.dev/p/r/i:1: manifest unknown", "image_pull"),
    (13, "Internal error.", "job_error"),
])
def test_custom_job_errors_are_classified(code: int, message: str, kind: str) -> None:
    assert failures.classify_job_error(code, message) == kind


def test_a_named_cause_heads_a_bare_traceback_and_vertex_s_own_words() -> None:
    ranked = sorted(["replica_exit", "python_traceback", "gpu_oom"], key=failures.headline_rank)
    assert ranked == ["gpu_oom", "python_traceback", "replica_exit"]
