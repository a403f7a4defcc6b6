"""Confidences (`textrec.processing.pipeline_text_recognition`): the same text with and without them, on every
path that gives them (recognize(), the pipeline, textrec-recognize), and what they are on a hand-made case."""

import json
import math

import pytest
import torch

from textrec.processing.inference import load_recognizer, recognize
from textrec.processing.pipeline_text_recognition import available_decodings, ctc_confidences


@pytest.fixture(scope="module")
def line_files(tmp_path_factory, sample_line_images):
    folder = tmp_path_factory.mktemp("lines")
    paths = []
    for index, image in enumerate(sample_line_images):
        image.save(folder / f"line{index}.png")
        paths.append(str(folder / f"line{index}.png"))
    return paths


def test_ctc_character_confidence_is_the_best_posterior_of_its_frames():
    # Frames' best tokens: a a _ b _ _ b c (blank 0, a 1, b 2, c 3): characters a, b, b, c.
    best = [1, 1, 0, 2, 0, 0, 2, 3]
    posteriors = [0.6, 0.9, 0.8, 0.7, 0.99, 0.5, 0.95, 0.4]
    logits = torch.full((1, len(best), 4), -30.0)
    for frame, (token, posterior) in enumerate(zip(best, posteriors)):
        rest = (1 - posterior) / 3
        logits[0, frame] = torch.tensor([rest] * 4).log()
        logits[0, frame, token] = math.log(posterior)
    mask = torch.tensor([[1] * 7 + [0]])  # the last frame is padding: c is not read

    (token_ids, confidences, line, alignment), = ctc_confidences(logits, blank_token_id=0, attention_mask=mask)

    assert token_ids == [1, 2, 2]
    assert confidences == pytest.approx([0.9, 0.7, 0.95], abs=1e-5)
    assert line == pytest.approx(0.9 * 0.7 * 0.95, abs=1e-5)
    assert alignment.character_frames == [(0, 2), (3, 4), (6, 7)]
    assert alignment.frame_count == 7 and alignment.frame_token_ids == best[:7]


READERS = [("crnn-lines", "ctc", {}), ("self-attention-lines", "ctc", {}), ("self-attention-lines", "attention", {}),
           ("self-attention-lines", "joint", {}), ("trocr-lines", "attention", {"num_beams": 3}),
           ("sharp-attention-digits", "attention", {})]



def test_a_beam_search_reading_of_nothing_aligns_every_frame_to_the_blank():
    """Beam search may read nothing where the best path reads a character (a faint speck on a page): its confidences
    are those of an empty line, its frames all blank (the forced path over one state failed on the arrays' shapes)."""
    logits = torch.full((1, 5, 4), -30.0)
    logits[0, :, 0] = 0.0
    logits[0, 2, 2] = 1.0  # the best path reads b at the third frame
    sequences = torch.tensor([[3, 0, 0]])  # beam search read nothing: the line's end (id 3) first
    (token_ids, confidences, line, alignment), = ctc_confidences(logits, blank_token_id=0, sequences=sequences,
                                                                 eos_token_id=3)
    assert token_ids == [] and confidences == [] and line == 1.0
    assert alignment.frame_token_ids == [0] * 5 and alignment.character_frames == []

@pytest.mark.parametrize("model_name, decoding, options", READERS, ids=[f"{m}-{d}{'-beam' if o else ''}" for m, d, o in READERS])
def test_the_text_is_the_same_with_and_without_confidences(model_name, decoding, options, sample_line_images):
    model, processor = load_recognizer(model_name)
    assert decoding in available_decodings(model)
    plain = recognize(model, processor, sample_line_images, decoding=decoding, progress=False, batch_size=2, **options)
    rated = recognize(model, processor, sample_line_images, decoding=decoding, progress=False, batch_size=2,
                      output_confidences=True, **options)

    assert rated.texts == plain.texts
    assert plain.readings is None and plain.confidences is None
    for reading, text in zip(rated.readings, plain.texts):
        assert reading.text == text
        assert 0.0 <= reading.confidence <= 1.0
        assert all(0.0 <= confidence <= 1.0 for _, confidence in reading.characters)
        assert "".join(character for character, _ in reading.characters) == text
        assert (reading.alignment is not None) == (decoding == "ctc")
        if decoding == "ctc":
            assert reading.confidence == pytest.approx(math.prod(confidence for _, confidence in reading.characters))


def test_decoder_confidences_are_generates_own_token_scores(sample_line_images):
    """For greedy search the teacher-forced probabilities are those `generate()` chose by."""
    from textrec.processing.pipeline_text_recognition import decoder_confidences

    model, processor = load_recognizer("self-attention-lines")
    inputs = processor(images=sample_line_images, return_tensors="pt")
    with torch.inference_mode():
        output = model.generate(**inputs, decoding="attention", num_beams=1, do_sample=False, output_scores=True,
                                return_dict_in_generate=True)
        transition = model.compute_transition_scores(output.sequences, output.scores, normalize_logits=True)
        readings = decoder_confidences(model, inputs, output.sequences)
    for row, (token_ids, confidences, line) in enumerate(readings):
        generated = transition[row, : len(token_ids) + 1]  # the characters and the end token
        assert confidences == pytest.approx(generated[:-1].exp().tolist(), abs=1e-4)
        assert line == pytest.approx(float(generated.sum().exp()), rel=1e-3)


@pytest.mark.parametrize("batch_size", [1, 2])
def test_the_pipeline_gives_the_confidence_beside_the_text(batch_size, sample_line_images):
    from transformers import pipeline

    model, processor = load_recognizer("crnn-lines")
    read = pipeline("text-recognition", model=model, processor=processor)
    plain = read(sample_line_images, batch_size=batch_size)
    rated = read(sample_line_images, batch_size=batch_size, return_confidence=True)
    expected = recognize(model, processor, sample_line_images, batch_size=batch_size, progress=False,
                         output_confidences=True).readings

    assert [r["generated_text"] for r in rated] == [r["generated_text"] for r in plain] == [r.text for r in expected]
    assert set(plain[0]) == {"generated_text"}
    for result, reading in zip(rated, expected):
        assert result["confidence"] == pytest.approx(reading.confidence, abs=1e-3)  # batches pad differently
        assert [(c["character"], pytest.approx(c["confidence"], abs=1e-3)) for c in result["characters"]] == reading.characters


def test_the_command_prints_confidences_and_json(line_files, capsys):
    from textrec.scripts.recognize import run

    texts = run(["--model", "crnn-lines", *line_files])
    plain = capsys.readouterr().out.splitlines()
    run(["--model", "crnn-lines", "--show_confidence", "--show_paths", *line_files])
    rated = capsys.readouterr().out.splitlines()
    run(["--model", "crnn-lines", "--output_format", "json", *line_files])
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    assert plain == texts
    assert [line.split("\t")[:2] for line in rated] == [[path, text] for path, text in zip(line_files, texts)]
    assert all(0.0 <= float(line.split("\t")[2]) <= 1.0 for line in rated)
    assert [(o["path"], o["text"]) for o in objects] == list(zip(line_files, texts))
    assert all("".join(c for c, _ in o["characters"]) == o["text"] and 0 <= o["confidence"] <= 1 for o in objects)


def test_the_forced_path_is_the_most_probable_frame_path_that_reads_the_tokens():
    """`ctc_forced_path` (Viterbi) against every frame path of a few frames: the path it gives reads the tokens and no
    path that reads them is more probable; too few frames for the tokens give None."""
    import itertools

    import numpy as np

    from textrec.processing.pipeline_text_recognition import ctc_forced_path

    def collapsed(path):
        return [token for frame, token in enumerate(path) if token != 0 and (frame == 0 or token != path[frame - 1])]

    rng = np.random.default_rng(0)
    for trial in range(60):
        frames, vocab = int(rng.integers(1, 6)), 3
        logits = rng.normal(size=(frames, vocab)) * (3.0 if trial % 2 else 0.5)
        log_probs = (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))).astype(np.float32)
        tokens = [int(token) for token in rng.integers(1, vocab, size=int(rng.integers(0, 4)))]
        reading = [path for path in itertools.product(range(vocab), repeat=frames) if collapsed(path) == tokens]
        found = ctc_forced_path(log_probs, tokens, 0)
        if not reading:
            assert found is None
            continue
        score = lambda path: float(np.sum(log_probs[np.arange(frames), path], dtype=np.float64))
        assert collapsed(found) == tokens
        assert score(found) == pytest.approx(max(score(path) for path in reading), abs=1e-9)
