"""Known training failures, recognised in log text. Pure: no database, no network.

Each kind has a plain explanation and a suggested fix for the job page. Single lines are
classified by `classify_line`; a Python traceback spans many log entries (one per line on
Vertex), so `TracebackScanner` is fed one replica's lines in order and reports each traceback
when its exception line arrives, with the innermost frame. A traceback whose exception is a
known kind (torch.OutOfMemoryError...) is reported as that kind, with the frame.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    title: str
    explanation: str
    fix: str


@dataclass(frozen=True)
class Failure:
    kind: str
    summary: str          # the line (or the exception) that gave it away
    last_frame: str = ""  # a traceback's innermost frame: 'File "x.py", line 3, in f: code'

    @property
    def info(self) -> Kind:
        return KINDS[self.kind]


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("gpu_oom", "GPU out of memory",
         "A process asked an accelerator for more memory than was free: the model, its "
         "optimizer state, the activations and the batch did not fit on one device.",
         "Lower the per-device batch size (keep the global batch with gradient accumulation), "
         "turn on activation checkpointing, shard parameters and optimizer state (FSDP "
         "full_shard or ZeRO-3), or choose an accelerator with more memory."),
    Kind("host_oom", "Host out of memory",
         "The VM's RAM ran out: the kernel killed the process (exit code 137, SIGKILL) or an "
         "allocation failed. Data-loader workers, a dataset held in memory, too little shared "
         "memory or CPU offload of optimizer state are the usual causes.",
         "Choose a machine type with more memory (a highmem type), use fewer DataLoader "
         "workers, stream the dataset instead of loading it whole, or turn CPU offload off."),
    Kind("nccl_timeout", "NCCL collective timed out",
         "A collective operation (all-reduce, all-gather...) did not finish within the process "
         "group's timeout: one rank was stuck, far slower than the others, or dead, and the "
         "others waited for it.",
         "Read the other replicas' logs for the first error (the stuck rank usually failed "
         "first); check that every rank runs the same steps and collectives; raise the "
         "timeout only when a long step on one rank (a checkpoint, an evaluation) is expected."),
    Kind("nccl_error", "NCCL system error",
         "NCCL failed outside the GPU: usually the network between replicas (a reset "
         "connection, a firewall rule, the wrong interface) or shared memory in the container.",
         "Run again with NCCL_DEBUG=INFO to see the failing call; set NCCL_SOCKET_IFNAME to "
         "the VM's network interface; keep every replica in one region and zone; make sure "
         "/dev/shm is large enough."),
    Kind("quota_exceeded", "Quota exceeded",
         "The project had no quota left for what the job asked: accelerators of this type in "
         "this region, CPUs, disks, or API requests.",
         "Request more quota for the metric named in the message (IAM & Admin > Quotas), pick "
         "another region or accelerator type, or use Spot or Flex-start, which have their own "
         "quotas."),
    Kind("image_pull", "Container image could not be pulled",
         "Vertex could not fetch the container image: the URI, tag or digest does not exist, "
         "or the service agent may not read the registry.",
         "Check that the image and tag exist (gcloud artifacts docker images list); grant the "
         "Vertex AI service agent roles/artifactregistry.reader on the repository; keep the "
         "registry in the job's region."),
    Kind("permission_denied", "Permission denied",
         "The job's service account was refused access to a resource: a Cloud Storage bucket, "
         "BigQuery, Secret Manager, or another service account.",
         "Grant the job's service account the role the error names (for checkpoints, "
         "roles/storage.objectAdmin on the bucket), or run the job as a service account that "
         "has it."),
    Kind("python_traceback", "Python exception",
         "The training process raised an exception it did not catch; the last frame shows "
         "where.",
         "Fix the error at the last frame shown; when only some ranks or only resumed runs "
         "fail, compare with the other replicas' logs."),
    # What Vertex itself says in CustomJob.error when no log line said more.
    Kind("stockout", "No capacity (stockout)",
         "Compute Engine had no machines of this type free in the region (a Spot job is also "
         "stopped this way when its VMs are reclaimed).",
         "Give the job a recovery policy that falls back (SPOT -> FLEX_START -> STANDARD) and "
         "lists other regions, resume from its newest checkpoint, or pick an accelerator with "
         "more capacity."),
    Kind("replica_exit", "A replica exited with an error",
         "A training process ended with a non-zero status and Vertex gave up on the job after "
         "its restarts; the reason is in that replica's own log.",
         "Open the log of the replica Vertex names and read its last lines; run the same "
         "command locally with the same arguments to reproduce it."),
    Kind("job_error", "Vertex reported an error",
         "Vertex ended the job with the error shown; no log line said more.",
         "Read the error's message; when it names a configuration field, fix the job and "
         "submit it again."),
)}

# Kinds recognised from CustomJob.error alone: a log line's diagnosis says more.
JOB_ERROR_KINDS = frozenset({"stockout", "replica_exit", "job_error"})

# Most specific first: a traceback ending in "CUDA out of memory" is an OOM, and an NCCL
# timeout message often also says "unhandled system error" further down.
_RULES: tuple[tuple[str, str], ...] = (
    ("gpu_oom", r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory"
                r"|HIP out of memory|Ran out of memory in memory space hbm"
                r"|RESOURCE_EXHAUSTED: Out of memory|CUBLAS_STATUS_ALLOC_FAILED"),
    ("nccl_timeout", r"Watchdog caught collective operation timeout|NCCL.{0,80}tim(ed|ing) ?out"
                     r"|collective operation timeout|ProcessGroupNCCL.{0,80}timeout"
                     r"|Timed out waiting .{0,40}for (the )?(store|collective)"),
    ("nccl_error", r"unhandled system error|ncclSystemError|ncclInternalError"
                   r"|ncclUnhandledCudaError|unhandled cuda error|NCCL communicator was aborted"
                   r"|NCCL error"),
    ("host_oom", r"\bMemoryError\b|Cannot allocate memory|std::bad_alloc|OOMKilled"
                 r"|out of memory.{0,40}(host|RAM|system memory)|Out of memory: Killed process"
                 r"|non-zero status of 137|exit(ed)? (with )?code 137|signal: Killed"
                 r"|insufficient shared memory"),
    ("quota_exceeded", r"quota (metric|limit)s?|exceeds? (the )?quota|quota exceeded"
                       r"|QUOTA_EXCEEDED|rateLimitExceeded|insufficient quota"),
    ("image_pull", r"(fail(ed|ure)?|unable|could not|cannot|error) (to )?pull(ing)?\b.{0,60}image"
                   r"|ErrImagePull|ImagePullBackOff|pull access denied"
                   r"|manifest (for \S+ )?(unknown|not found)"),
    ("permission_denied", r"PERMISSION_DENIED|Permission '?[\w.]+'? denied"
                          r"|does not have [\w.]+ access"
                          r"|does not have (the )?(required )?permission"
                          r"|AccessDeniedException|\b403\b.{0,80}(Forbidden|denied|access)"
                          r"|Forbidden: 403|iam\.serviceAccounts\.actAs"),
)
_PATTERNS = tuple((kind, re.compile(rx, re.IGNORECASE)) for kind, rx in _RULES)

TRACEBACK_HEAD = "Traceback (most recent call last):"
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(, in (?P<func>.+))?$')
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(: (?P<message>.*))?$")
# Lines Python 3.11+ adds under a frame to point at the failing expression.
_CARETS = re.compile(r"^\s*[\^~]+\s*$")
# torchrun's per-process prefix ("[rank0]: ", "[default3]:").
_RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d+\]: ?")
MAX_SUMMARY = 500


# Every alternative of every rule above holds one of these words (any case): a line with
# none of them matches no rule, and is passed over with a few substring checks instead of
# seven regular expressions (most lines of a log report nothing). A new rule brings its
# word; tests/vertexplan/logparse/test_failure_keywords.py checks that each alternative has one.
KEYWORDS = ("memory", "alloc", "timeout", "timed out", "nccl", "unhandled", "oom", "137",
            "killed", "quota", "ratelimit", "pull", "manifest", "permission", "access", "403",
            "actas")


def _trie(words: Iterable[str]) -> str:
    """An alternation of the words grouped by their leading letters ("a(?:ccess|lloc)"), which
    the regular expression engine tries letter by letter instead of word by word: about
    twice as fast over lines that hold none of them, as most do."""
    first: dict[str, list[str]] = {}
    for word in sorted(set(words)):
        first.setdefault(word[:1], []).append(word[1:])
    parts = []
    for letter, rests in first.items():
        if "" in rests:  # a word that is a prefix of another matches first anyway
            parts.append(re.escape(letter))
        elif len(rests) == 1:
            parts.append(re.escape(letter + rests[0]))
        else:
            parts.append(f"{re.escape(letter)}(?:{_trie(rests)})")
    return "|".join(parts)


# Searched in the lowered line: a case-blind search of the same words is several times slower.
_ANY_KEYWORD = re.compile(_trie(KEYWORDS))


def may_report(text: str) -> bool:
    """False when a line cannot make a scanner that is inside no traceback report anything
    or enter one: it holds no traceback head and none of the rules' words."""
    return TRACEBACK_HEAD in text or _ANY_KEYWORD.search(text.lower()) is not None


def reporting(lines: Sequence[str]) -> set[int]:
    """The indices of the lines that may_report(), found in one search over them all."""
    joined = "\n".join(lines)
    if not joined.isascii():  # lowering may change a line's length: line by line
        return {i for i, line in enumerate(lines) if may_report(line)}
    # Where each line starts in `joined` (no word and no head holds a newline, so no match
    # runs from one line into the next).
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    found: list[int] = []
    lowered = joined.lower()
    # A find per word, not the alternation above: str.find skips along the text in C, about
    # 1.6x faster over a page of lines that hold no word (most pages).
    for text, word in ((joined, TRACEBACK_HEAD), *((lowered, word) for word in KEYWORDS)):
        at = text.find(word)
        while at >= 0:
            found.append(at)
            at = text.find(word, at + 1)
    return {bisect.bisect_right(starts, offset) - 1 for offset in found}


def classify_line(text: str) -> str | None:
    """The known failure a single line reports, or None."""
    if not _ANY_KEYWORD.search(text.lower()):
        return None
    for kind, pattern in _PATTERNS:
        if pattern.search(text):
            return kind
    return None


_STOCKOUT = re.compile(r"stockout|resource(s)? (is |are )?(not|un)available|"
                       r"zone_resource_pool_exhausted|no capacity", re.IGNORECASE)
_REPLICA_EXIT = re.compile(r"non-zero status|exited with|exit (status|code)", re.IGNORECASE)
# google.rpc.Code.RESOURCE_EXHAUSTED: quota (or capacity) ran out.
_RESOURCE_EXHAUSTED = 8


def classify_job_error(code: int, message: str) -> str:
    """The kind of failure CustomJob.error describes (its google.rpc.Status)."""
    kind = classify_line(message)
    if kind is not None:
        return kind
    if _STOCKOUT.search(message):
        return "stockout"
    if code == _RESOURCE_EXHAUSTED:
        return "quota_exceeded"
    if _REPLICA_EXIT.search(message):
        return "replica_exit"
    return "job_error"


def headline_rank(kind: str) -> int:
    """Lower is a better headline: a named cause from the log (an OOM, a refused pull) beats a
    bare traceback, which beats what CustomJob.error alone says ("non-zero status of 1")."""
    if kind in JOB_ERROR_KINDS:
        return 2
    return 1 if kind == "python_traceback" else 0


def is_traceback_continuation(text: str) -> bool:
    """Whether a line could sit inside a traceback (so the lines before it matter)."""
    prefix = _RANK_PREFIX.match(text)
    line = text[prefix.end():] if prefix else text
    return line.startswith((" ", *_CHAIN)) or bool(_EXCEPTION.match(line))


class TracebackScanner:
    """Follows one replica's lines in order and reports failures as they complete.

    feed() returns the failure a line completes: a classified single line, or a traceback
    whose exception line just arrived. Lines inside a traceback are not classified on their
    own, so one failure is reported once. Several processes on one replica (torchrun) write
    "[rank3]: ..." prefixed lines that interleave: each prefix is followed on its own. stdout
    and stderr are read separately and stamped as they are read, so a line of one can land
    inside a traceback printed on the other: each stream is followed on its own too.
    """

    def __init__(self) -> None:
        self._streams: dict[str, _Stream] = {}
        # The keys of the streams inside a traceback: while there is none, a line that
        # may_report() clears is passed over (most lines of a log report nothing).
        self._open: set[str] = set()

    @property
    def in_traceback(self) -> bool:
        return bool(self._open)

    def feed(self, text: str, stream: str = "") -> Failure | None:
        """`stream` names the pipe the line came from (stdout or stderr), when known."""
        if not self._open and not may_report(text):
            # What the stream would do with it: no traceback opens, no rule matches (the
            # line the stream reads is part of `text`), and a new stream starts as it is.
            return None
        line = text.rstrip("\n")
        prefix = _RANK_PREFIX.match(line)
        key = stream + "\x00" + (prefix.group(0).strip() if prefix else "")
        if prefix:
            line = line[prefix.end():]
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = _Stream()
        failure = stream.feed(line)
        if stream.in_traceback:
            self._open.add(key)
        else:
            self._open.discard(key)
        return failure

    def prime(self, lines: Iterable[str], stream: str = "") -> None:
        """Replay lines already handled (an earlier page) without reporting anything."""
        for line in lines:
            self.feed(line, stream)


class _Stream:
    def __init__(self) -> None:
        self._in_traceback = False
        self._frame = ""
        self._code = ""

    @property
    def in_traceback(self) -> bool:
        return self._in_traceback

    def feed(self, line: str) -> Failure | None:
        if line.startswith(TRACEBACK_HEAD):
            self._in_traceback, self._frame, self._code = True, "", ""
            return None
        if not self._in_traceback:
            kind = classify_line(line)
            return Failure(kind, clip(line)) if kind else None
        frame = _FRAME.match(line)
        if frame:
            func = f", in {frame['func']}" if frame["func"] else ""
            self._frame = f'File "{frame["file"]}", line {frame["line"]}{func}'
            self._code = ""
            return None
        if line.startswith(" ") or not line.strip() or line.startswith(_CHAIN):
            if line.strip() and not _CARETS.match(line) and self._frame and not self._code:
                self._code = line.strip()
            return None
        # The first unindented line after the frames is the exception.
        self._in_traceback = False
        exception = _EXCEPTION.match(line)
        summary = clip(line)
        where = f"{self._frame}: {self._code}" if self._code else self._frame
        if exception is None:
            return Failure("python_traceback", summary, where)
        return Failure(classify_line(line) or "python_traceback", summary, where)


def clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 1] + "\u2026"


def scan(lines: Iterable[str]) -> list[Failure]:
    """Every failure in one replica's lines, in order (a convenience over TracebackScanner)."""
    scanner = TracebackScanner()
    return [f for f in map(scanner.feed, lines) if f is not None]
