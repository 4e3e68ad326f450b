"""The trainers' events read back from a Ray job's output, as Ray forwards worker lines."""

from vertexplan.clusters.ray_logs import events_in, summary

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
    from vertexplan.clusters.ray_logs import lines

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
