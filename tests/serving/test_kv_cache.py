"""The KV-cached decoder (trainers/serving/decoding.py, kv_cache.py, GPT.forward_cached):
greedy bytes equal to the no-cache path's exactly, inside the window and past it, sequences
joining a running batch, stop sequences, top_p and seeds."""

from __future__ import annotations

import pytest
import torch

from contract import prediction
from contract.prediction import BadInstance, Instance, parse_instances
from trainers.config import ModelConfig
from trainers.serving import generate
from trainers.serving.decoding import LENGTH, STOP, Decoder, Sequence
from trainers.serving.kv_cache import CacheFull, SlotCache
from trainers.torch.model import GPT

pytestmark = pytest.mark.trainers


def _model(block_size: int = 48, seed: int = 1) -> GPT:
    config = ModelConfig(block_size=block_size, n_layer=2, n_head=2, n_embd=32)
    return GPT(config, seed=seed).eval()


def test_a_prefill_gives_the_training_forwards_logits_exactly() -> None:
    model = _model()
    prompt = torch.tensor([list(b"def main():\n    return")])
    cache = SlotCache(model, slots=2)
    with torch.inference_mode():
        want, _ = model(prompt)
        got = model.forward_cached(prompt, torch.tensor([1]), torch.tensor([0]), cache.layers)
        assert torch.equal(got, want)
        # One more byte against the cache: the logits the whole context gives at its end.
        longer = torch.cat([prompt, torch.tensor([[ord(" ")]])], dim=1)
        step = model.forward_cached(longer[:, -1:], torch.tensor([1]),
                                    torch.tensor([prompt.shape[1]]), cache.layers)
        assert torch.allclose(step[0, -1], model(longer)[0][0, -1], atol=1e-5)


def test_greedy_bytes_with_the_cache_equal_the_no_cache_path_also_past_the_window() -> None:
    """block_size 48: the long prompt starts past the window, the others cross it while
    generating (and so leave their slot for the sliding window), one never reaches it."""
    model = _model()
    instances = [Instance(b"import os\nimport sys\n", 90), Instance(b"x", 12),
                 Instance(b"a" * 70, 20), Instance(b"def ", 60)]
    cached = generate.generate(model, instances)
    assert cached == generate.generate(model, instances, cache=False)
    assert [p["tokens"] for p in cached] == [90, 12, 20, 60]
    assert [generate.generate(model, [i])[0] for i in instances] == cached


def test_a_sequence_joins_a_running_batch_and_answers_as_it_would_alone() -> None:
    model = _model()
    decoder = Decoder(model, slots=2)
    ended: list[str] = []
    long = Sequence(Instance(b"class A:\n", 30), on_done=lambda s: ended.append("long"))
    short = Sequence(Instance(b"# ", 3), on_done=lambda s: ended.append("short"))
    decoder.join(long)
    for _ in range(10):
        decoder.step()
    decoder.join(short)  # long is at its 11th byte, in its slot
    with pytest.raises(RuntimeError, match="2 sequences at most"):
        decoder.join(Sequence(Instance(b"z", 1)))
    while not decoder.idle:
        decoder.step()
    assert ended == ["short", "long"]
    assert decoder.cache.free == 2
    alone = generate.generate(model, [long.instance, short.instance], cache=False)
    assert [long.answer(), short.answer()] == alone


def test_a_cancelled_sequence_leaves_at_the_next_step_and_frees_its_slot() -> None:
    """What a streaming client's disconnect does (http.py sets `cancelled`)."""
    decoder = Decoder(_model(), slots=1)
    left: list[Sequence] = []

    def after_each_byte(sequence: Sequence) -> None:
        if len(sequence.generated) == 3:
            sequence.cancelled = True

    sequence = Sequence(Instance(b"def ", 40), on_done=left.append, on_token=after_each_byte)
    decoder.join(sequence)
    while not decoder.idle:
        decoder.step()
    assert left == [sequence] and len(sequence.generated) == 3
    assert sequence.finish_reason is None and decoder.cache.free == 1


def test_generation_ends_at_a_stop_sequence_which_the_text_leaves_out() -> None:
    model = _model()
    free = generate.generate(model, [Instance(b"def ", 40)])[0]["text"].encode()
    stop = free[20:22]
    at = free.index(stop)
    decoder = Decoder(model, slots=1)
    sequence = Sequence(Instance(b"def ", 40, stop=(b"\x00\x01", stop)))
    decoder.join(sequence)
    while not decoder.idle:
        decoder.step()
    assert sequence.finish_reason == STOP
    assert sequence.text().encode() == free[:at]
    assert sequence.answer() == {"text": free[:at].decode(), "tokens": at + len(stop)}
    assert decoder.cache.free == 1  # the slot is free again


def test_a_stream_holds_back_what_could_still_become_a_stop() -> None:
    assert prediction.held_back(b"abc\n", (b"\n\n",)) == 1
    assert prediction.held_back(b"abc", (b"\n\n", b"cd", b"bcx")) == 2
    assert prediction.held_back(b"abc", (b"zz",)) == 0
    assert prediction.stop_start(b"abcd", (b"cd", b"bcd")) == 1
    sequence = Sequence(Instance(b"p", 10, stop=(b"END",)), generated=list(b"textEN"),
                        out=b"textEN")
    assert sequence.ready() == 4  # "EN" may be the start of "END"
    sequence.finish_reason = LENGTH
    assert sequence.ready() == 6  # done without the stop: everything


def test_top_p_and_seeds() -> None:
    model = _model()
    greedy = generate.generate(model, [Instance(b"def ", 12)])
    # A nucleus this small holds the likeliest byte alone: a draw from it is the greedy one.
    assert generate.generate(model, [Instance(b"def ", 12, 1.0, 5, top_p=1e-6)]) == greedy
    seeded = [Instance(b"def ", 12, 1.5, 7, top_p=0.9), Instance(b"x", 12, 1.0, 3)]
    first = generate.generate(model, seeded)
    assert generate.generate(model, seeded) == first
    assert generate.generate(model, seeded[::-1]) == first[::-1]


def test_the_cache_hands_out_and_takes_back_slots() -> None:
    cache = SlotCache(_model(), slots=2)
    assert (cache.take(), cache.take()) == (0, 1)
    with pytest.raises(CacheFull):
        cache.take()
    cache.give_back(0)
    with pytest.raises(ValueError, match="not in use"):
        cache.give_back(0)
    assert cache.free == 1 and cache.nbytes() == 2 * 2 * 2 * 48 * 32 * 4


@pytest.mark.parametrize(("instance", "message"), [
    ({"prompt": "a", "stop": 3}, "instances[0].stop: a string or a list of up to 4 strings"),
    ({"prompt": "a", "stop": ["a", "b", "c", "d", "e"]}, "instances[0].stop: a string or a list"),
    ({"prompt": "a", "stop": [""]}, "each 1 to 64 bytes"),
    ({"prompt": "a", "top_p": 0}, "instances[0].top_p: a number over 0 and at most 1"),
    ({"prompt": "a", "top_p": 1.5}, "instances[0].top_p: a number over 0 and at most 1"),
])
def test_bad_stops_and_top_p_are_refused_naming_the_field(instance: dict, message: str) -> None:
    with pytest.raises(BadInstance, match=message.replace("(", r"\(").replace("[", r"\[")):
        parse_instances([instance], None)
    assert parse_instances([{"prompt": "a", "stop": "\n", "top_p": 0.5}], None)[0] == Instance(
        b"a", prediction.DEFAULT_MAX_TOKENS, 0.0, None, 0.5, (b"\n",))
