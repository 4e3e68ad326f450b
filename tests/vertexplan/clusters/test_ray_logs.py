"""The trainers' events read back from a Ray job's output, as Ray forwards worker lines."""

from hypothesis import given, settings
from hypothesis import strategies as st

from vertexplan.clusters.ray_logs import events_in, lines, summary

OUTPUT = "\n".join([
    "2026-11-25 02:21:23,917 INFO worker.py:1691 -- Using address 127.0.0.1:60109",
    '\x1b[36m(RayTrainWorker pid=7377)\x1b[0m {"severity":"INFO","event":"run_started",'
    '"rank":0,"world_size":2}',
    '(RayTrainWorker pid=7484) {"severity":"INFO","event":"run_started","rank":1,'
    '"world_size":2}',
    '(RayTrainWorker pid=7377) {"event":"step","step":1,"loss":5.5}',
    '(RayTrainWorker pid=7377) {"event":"step","step":2,"loss":5.2}',
    '(RayTrainWorker pid=7377) {"event":"step","step":2,"loss":5.2}',
    '(RayTrainWorker pid=7377) {"event":"checkpoint_saved","step":2,"path":"/c/step-2"}',
    '(RayTrainWorker pid=7377) {"event":"checkpoint_saved","step":4,"path":"/c/step-4"}',
    '(RayTrainWorker pid=7377) {"event":"checkpoint_deleted","step":2,"path":"/c/step-2"}',
    '(RayTrainWorker pid=7377) {"event":"run_finished","step":4,"final_loss":5.0,"wall_s":1}',
    "(RayTrainWorker pid=7377) {not json",
    '{"no_event": true}',
])


def test_events_found_behind_rays_prefixes_and_colours():
    kinds = [e["event"] for e in events_in(OUTPUT)]
    assert kinds[:2] == ["run_started", "run_started"] and kinds[-1] == "run_finished"


def test_summary_keeps_each_step_and_checkpoint_once():
    s = summary(OUTPUT)
    assert s["ranks"] == [0, 1]
    assert s["loss"] == [[1, 5.5], [2, 5.2]]
    assert s["checkpoints"] == [{"step": 4, "path": "/c/step-4"}]
    assert s["finished"] == {"step": 4, "final_loss": 5.0, "wall_s": 1}


def test_no_events_is_an_empty_summary():
    assert summary("plain output\n") == {"ranks": [], "loss": [], "checkpoints": [],
                                         "finished": None}


def test_each_line_has_the_severity_it_states():
    text = "\n".join([
        "2026-11-25 02:21:23,917 INFO worker.py:1691 -- Using address 127.0.0.1:60109",
        "\x1b[36m(RayTrainWorker pid=7377)\x1b[0m WARNING: the loader is slow",
        "/opt/x.py:3: UserWarning: TypedStorage is deprecated",
        "Traceback (most recent call last):",
        '  File "train.py", line 9, in <module>',
        "",
        "RuntimeError: CUDA out of memory",
        # A level word far along the line is the message's, not the line's level.
        "back to normal: " + "x" * 80 + " ERROR",
        "ValueError",
    ])
    found = lines(text)
    assert [(line.number, line.severity) for line in found] == [
        (1, 200), (2, 400), (3, 400), (4, 500), (5, 500), (6, 500), (7, 500), (8, 200),
        (9, 500)]
    assert found[1].text == "(RayTrainWorker pid=7377) WARNING: the loader is slow"


def test_a_traceback_a_worker_forwarded_is_errors_to_its_exception() -> None:
    """Ray puts its worker's name before each line the worker printed: the line's own
    indentation after it still says the traceback goes on."""
    prefix = "\x1b[36m(RayTrainWorker pid=7377, ip=10.0.0.2)\x1b[0m "
    text = "\n".join(prefix + line for line in [
        "Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
        "    loader = make_loader(shards)", "ValueError: shard 17 is empty", "epoch 2 read"])
    assert [line.severity for line in lines(text)] == [500, 500, 500, 500, 200]
    assert [line.severity for line in lines(text, after=2)] == [500, 500, 200]


# Lines of the kinds that change how the next line is read: a traceback's first line, its
# indented and blank lines, an exception's line that ends it, and lines that state a level
# (behind Ray's worker prefix and terminal colours or not).
KINDS = ["Traceback (most recent call last):", '  File "train.py", line 9', "\tat x", "",
         "   ", "RuntimeError: out of memory", "ValueError", "plain output",
         "INFO ready", "(RayTrainWorker pid=7) Traceback (most recent call last):",
         "\x1b[36m(RayTrainWorker pid=7)\x1b[0m   File \"x.py\"", "(RayTrainWorker pid=7) ",
         "/x.py:3: UserWarning: slow", "KeyError: 'a'"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(KINDS), max_size=30), st.data(),
       st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_the_lines_after_those_stored_are_read_as_in_the_whole_output(
        kinds: list[str], data: st.DataObject, newline: str, ends: bool) -> None:
    """A poller that stored the first lines reads the rest as a read of the whole output
    would: a traceback begun before them still makes its lines errors."""
    text = newline.join(kinds) + (newline if ends else "")
    after = data.draw(st.integers(-1, len(kinds) + 1), label="after")
    assert lines(text, after=after) == [line for line in lines(text) if line.number > after]


def test_a_traceback_begun_before_the_stored_lines_ends_keeps_its_lines_errors() -> None:
    text = "ok\nTraceback (most recent call last):\n  File \"t.py\", line 1\n\n" \
           "  x()\nRuntimeError: boom\nafter\n"
    assert [(line.number, line.severity) for line in lines(text, after=3)] == [
        (4, 500), (5, 500), (6, 500), (7, 200)]
    assert [line.severity for line in lines(text, after=6)] == [200]


@settings(max_examples=200)
@given(st.data())
def test_a_summary_read_on_from_stored_lines_is_the_whole_outputs(data: st.DataObject) -> None:
    """Reading on from the summary of the first lines (some of the later ones read already)
    gives the summary of the whole output."""
    events = OUTPUT.splitlines()
    text = "\n".join(data.draw(st.lists(st.sampled_from(events), max_size=25), label="lines"))
    count = len(text.splitlines())
    seen = data.draw(st.integers(0, count), label="read before")
    stored = data.draw(st.integers(0, seen), label="stored")
    before = summary("\n".join(text.splitlines()[:seen]))
    assert summary(text, after=stored, before=before) == summary(text)


def test_a_summary_not_made_here_is_read_again_from_the_start() -> None:
    assert summary(OUTPUT, after=3, before={"loss": "?"}) == summary(OUTPUT)
