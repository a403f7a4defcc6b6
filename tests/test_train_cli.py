"""textrec-train, textrec-evaluate and textrec-recognize end to end on tiny models and data."""

import json
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file

from textrec.scripts import evaluate as evaluate_cli
from textrec.scripts import recognize as recognize_cli
from textrec.scripts import train as train_cli
from textrec.processing.training import parse_arguments
from textrec.processing.training.trainer import TextRecognitionTrainer


def tiny_run_arguments(output_dir, max_steps=4, **extra):
    arguments = dict(
        model="self-attention",
        preset="tiny",
        dataset="synthetic-lines",
        max_train_samples=48,
        max_eval_samples=8,
        max_target_length=48,
        output_dir=output_dir,
        max_steps=max_steps,
        per_device_train_batch_size=8,
        per_device_eval_batch_size=8,
        eval_steps=max_steps,
        save_steps=2,
        logging_steps=2,
        warmup_steps=0,
        seed=7,
        data_seed=7,
        use_cpu=True,
        **extra,
    )
    return [f"--{key}={value}" for key, value in arguments.items()]


@pytest.fixture(scope="module")
def trained_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run") / "model"
    metrics = train_cli.run(tiny_run_arguments(folder))
    assert {"eval_cer", "eval_wer", "eval_sequence_accuracy"} <= set(metrics)
    return folder


def test_output_folder_is_hub_ready(trained_folder):
    names = {path.name for path in trained_folder.iterdir()}
    expected = {
        "config.json", "model.safetensors", "generation_config.json", "tokenizer.json", "processor_config.json",
        "README.md", "modeling_self_attention.py", "configuration_self_attention.py",
        "processing_text_recognition.py", "image_processing_text_recognition.py", "pipeline_text_recognition.py",
    }
    assert expected <= names, expected - names
    config = json.loads((trained_folder / "config.json").read_text())
    assert "AutoModelForImageTextToText" in config["auto_map"]
    assert "text-recognition" in config["custom_pipelines"]
    generation = json.loads((trained_folder / "generation_config.json").read_text())
    assert generation["max_new_tokens"] == 48 and "max_length" not in generation


def test_model_card_holds_the_real_evaluation(trained_folder):
    card = (trained_folder / "README.md").read_text()
    results = json.loads((trained_folder / "all_results.json").read_text())
    assert "pipeline_tag: image-to-text" in card
    assert "model-index" in card
    assert f"value: {round(results['eval_cer'], 4)}" in card
    # what the data is, not the --dataset value; the widget shows an evaluation image rendered by textrec
    assert "name: 'synthetic, rendered by textrec: print lines'" in card and "type: synthetic" in card
    assert "language:\n- en" in card and "base_model" not in card
    assert "src: example.png" in card and (trained_folder / "example.png").is_file()


def test_recognize_prints_one_line_per_image(trained_folder, tmp_path, sample_line_images, capsys):
    for index, image in enumerate(sample_line_images):
        image.save(tmp_path / f"line{index}.png")
    texts = recognize_cli.run(["--model", str(trained_folder), str(tmp_path)])
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(sample_line_images) == len(texts)
    assert printed == texts


def test_evaluate_reports_metrics_and_speed(trained_folder, tmp_path):
    output = tmp_path / "scores.json"
    scores = evaluate_cli.run(
        ["--model", str(trained_folder), "--dataset", "synthetic-lines", "--num_samples", "8",
         "--output_json", str(output), "--contact_sheet", str(tmp_path / "sheet.png")]
    )
    from PIL import Image

    assert Image.open(tmp_path / "sheet.png").size[1] > 8 * 48
    assert json.loads(output.read_text()) == pytest.approx(scores)
    assert 0.0 <= scores["sequence_accuracy"] <= 1.0 and scores["cer"] >= 0.0
    assert scores["lines_per_second"] > 0


def test_evaluate_reads_a_folder_without_splits_whole(tmp_path, sample_line_images, capsys):
    """`textrec-evaluate --dataset folder/` on a folder whose metadata.jsonl is at the top (no split folders) reads
    it whole instead of failing on the default test split, and says so on stderr; an explicit `--split` it lacks
    stays an error."""
    for index, image in enumerate(sample_line_images):
        image.save(tmp_path / f"line{index}.png")
    (tmp_path / "metadata.jsonl").write_text(
        "".join(json.dumps({"file_name": f"line{index}.png", "text": "a line"}) + "\n" for index in range(3))
    )
    scores = evaluate_cli.run(["--model", "crnn-lines", "--dataset", str(tmp_path), "--show_errors", "0"])
    captured = capsys.readouterr()
    assert scores["num_samples"] == 3
    assert "has no split folders" in captured.err and "reading it whole" in captured.err
    assert "(the whole folder, 3 lines" in captured.out
    with pytest.raises(ValueError, match="has no split 'test'"):
        evaluate_cli.run(["--model", "crnn-lines", "--dataset", str(tmp_path), "--split", "test"])


def train_until_killed(monkeypatch, arguments: list[str], step: int) -> None:
    """Runs textrec-train and interrupts it as a kill would when it reaches `step`."""
    original_step = TextRecognitionTrainer.training_step

    def crash(self, *args, **kwargs):
        if self.state.global_step == step:
            raise KeyboardInterrupt("simulated interruption")
        return original_step(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(TextRecognitionTrainer, "training_step", crash)
        with pytest.raises(KeyboardInterrupt):
            train_cli.run(arguments)


@pytest.mark.slow
def test_interrupted_training_resumes_to_identical_weights(tmp_path, monkeypatch):
    uninterrupted = tmp_path / "uninterrupted"
    train_cli.run(tiny_run_arguments(uninterrupted, max_steps=4))

    interrupted = tmp_path / "interrupted"
    train_until_killed(monkeypatch, tiny_run_arguments(interrupted, max_steps=4), step=3)
    assert (interrupted / "checkpoint-2").is_dir() and not (interrupted / "model.safetensors").exists()
    train_cli.run(tiny_run_arguments(interrupted, max_steps=4))
    history = json.loads((interrupted / "trainer_state.json").read_text())["log_history"]
    cpu_minutes = [entry["cpu_minutes"] for entry in history if "cpu_minutes" in entry]
    assert cpu_minutes == sorted(cpu_minutes), "the CPU time of a resumed run goes on from the checkpoint's"

    expected = load_file(uninterrupted / "model.safetensors")
    actual = load_file(interrupted / "model.safetensors")
    assert expected.keys() == actual.keys()
    for name in expected:
        assert torch.equal(expected[name], actual[name]), name


@pytest.mark.slow
def test_two_process_data_parallel_training_keeps_replicas_identical(tmp_path):
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29531",
        "-m", "textrec.scripts.train", *tiny_run_arguments(tmp_path / "ddp", max_steps=3), "--check_replicas=True",
        "--ddp_find_unused_parameters=False",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    assert "2 replicas hold identical weights" in log


def test_fine_tuning_with_another_charset_resets_only_embedding_and_head(trained_folder, tmp_path):
    before = load_file(trained_folder / "model.safetensors")
    train_cli.run(
        tiny_run_arguments(tmp_path / "digits", max_steps=1)
        + [f"--model_name_or_path={trained_folder}", "--charset=0123456789", "--learning_rate=0"]
    )
    after = load_file(tmp_path / "digits" / "model.safetensors")
    resized = {"decoder.embed_tokens.weight", "lm_head.weight", "lm_head.bias"}
    assert after["lm_head.weight"].shape[0] == 4 + 10
    assert all(torch.equal(before[name], after[name]) for name in before if name not in resized and "running" not in name and "num_batches" not in name)
    # the digits and special tokens, which the saved printable-ASCII vocabulary has too, keep their rows
    saved_vocabulary = json.loads((trained_folder / "tokenizer.json").read_text())["model"]["vocab"]
    vocabulary = json.loads((tmp_path / "digits" / "tokenizer.json").read_text())["model"]["vocab"]
    saved_rows, rows = zip(*((saved_vocabulary[token], index) for token, index in vocabulary.items()))
    for name in resized:
        assert torch.equal(after[name][list(rows)], before[name][list(saved_rows)]), name


def test_fine_tuning_with_a_wider_charset_keeps_the_old_characters_rows(trained_folder, tmp_path):
    """A character set extending the model's (printable ASCII and German letters) reads the old characters as
    before: their rows are the saved model's, the new characters' rows are new; an old umlaut (u and U+0364, one
    token) starts from its letter's row."""
    charset = "".join(chr(code) for code in range(32, 127)) + "äöüß" + "u\u0364"
    before = load_file(trained_folder / "model.safetensors")
    train_cli.run(tiny_run_arguments(tmp_path / "wider", max_steps=1)
                  + [f"--model_name_or_path={trained_folder}", f"--charset={charset}", "--learning_rate=0"])
    after = load_file(tmp_path / "wider" / "model.safetensors")
    old = before["lm_head.weight"].shape[0]
    assert after["lm_head.weight"].shape[0] == old + 5
    for name in ("lm_head.weight", "decoder.embed_tokens.weight"):
        assert torch.equal(after[name][:old], before[name])
        assert torch.equal(after[name][old + 4], before[name][4 + ord("u") - 32])  # uͤ from u
        assert not torch.equal(after[name][old], before[name][4 + ord("a") - 32])  # ä is new


def test_deslant_is_kept_by_fine_tuning_and_set_by_its_argument(trained_folder, tmp_path):
    """`--deslant true` makes the fine-tuned model's processor deslant (in its training and its reading); a model
    fine-tuned from that one without the argument keeps it."""
    def deslants(folder):
        return json.loads((folder / "processor_config.json").read_text())["image_processor"]["deslant"]

    train_cli.run(tiny_run_arguments(tmp_path / "upright", max_steps=1)
                  + [f"--model_name_or_path={trained_folder}", "--deslant=true", "--learning_rate=0"])
    train_cli.run(tiny_run_arguments(tmp_path / "again", max_steps=1)
                  + [f"--model_name_or_path={tmp_path / 'upright'}", "--learning_rate=0"])
    assert (deslants(trained_folder), deslants(tmp_path / "upright"), deslants(tmp_path / "again")) == (False, True, True)


def test_a_crnn_fine_tuned_at_another_height_keeps_its_weights_and_reads_at_it(tmp_path):
    """`--image_height` on fine-tuning: a CRNN (whose weights fit any height) goes on learning, and reads, lines 48
    pixels high, every weight loaded from the saved model (`load_pretrained` refuses any other); `--max_image_width`
    sets the fine-tuned processor's widest line. A model whose weights depend on the height, or a height the
    architecture does not read, is refused."""
    from PIL import Image, ImageDraw

    from textrec.modeling.crnn.configuration_crnn import CRNNConfig
    from textrec.processing.inference import load_recognizer, recognize

    def crnn_arguments(folder):
        return [a.replace("--model=self-attention", "--model=crnn") for a in tiny_run_arguments(folder, max_steps=1)]

    train_cli.run(crnn_arguments(tmp_path / "at32"))
    train_cli.run(crnn_arguments(tmp_path / "at48") + [f"--model_name_or_path={tmp_path / 'at32'}",
                                                       "--image_height=48", "--max_image_width=500"])
    config = json.loads((tmp_path / "at48" / "config.json").read_text())
    image_processor = json.loads((tmp_path / "at48" / "processor_config.json").read_text())["image_processor"]
    assert (config["image_height"], image_processor["height"], image_processor["max_width"]) == (48, 48, 500)
    shapes = {name: tuple(weight.shape) for name, weight in load_file(tmp_path / "at32" / "model.safetensors").items()}
    assert {name: tuple(weight.shape) for name, weight in load_file(tmp_path / "at48" / "model.safetensors").items()} == shapes
    model, processor = load_recognizer(str(tmp_path / "at48"))
    line = Image.new("L", (200, 40), 255)
    ImageDraw.Draw(line).text((10, 10), "a line", fill=0)
    assert processor(images=[line], return_tensors="pt")["pixel_values"].shape[2] == 48
    assert len(recognize(model, processor, [line], progress=False).texts) == 1
    with pytest.raises(ValueError, match="32 pixels high or taller by a multiple of 16"):
        CRNNConfig(image_height=40)
    with pytest.raises(ValueError, match="32 pixels high or taller by a multiple of 16"):
        train_cli.run(crnn_arguments(tmp_path / "at40") + [f"--model_name_or_path={tmp_path / 'at32'}", "--image_height=40"])


def test_a_model_whose_weights_depend_on_its_height_is_not_fine_tuned_at_another(trained_folder, tmp_path):
    """Another height is refused; the height it reads at already is no change, and is accepted."""
    with pytest.raises(ValueError, match="keeps its height"):
        train_cli.run(tiny_run_arguments(tmp_path / "taller", max_steps=1)
                      + [f"--model_name_or_path={trained_folder}", "--image_height=48"])
    height = json.loads((trained_folder / "processor_config.json").read_text())["image_processor"]["height"]
    train_cli.run(tiny_run_arguments(tmp_path / "same", max_steps=1)
                  + [f"--model_name_or_path={trained_folder}", f"--image_height={height}"])
    assert json.loads((tmp_path / "same" / "processor_config.json").read_text())["image_processor"]["height"] == height


def test_frozen_modules_keep_their_weights_and_statistics_while_the_rest_trains(trained_folder, tmp_path):
    """--freeze_modules encoder: no gradient reaches the encoder and its batch normalisation keeps its running
    statistics (it runs in eval mode); the decoder trains. A part the model lacks is refused, naming its parts."""
    before = load_file(trained_folder / "model.safetensors")
    train_cli.run(tiny_run_arguments(tmp_path / "frozen", max_steps=2) + [
        f"--model_name_or_path={trained_folder}", "--freeze_modules", "encoder", "--learning_rate=1e-2"])
    after = load_file(tmp_path / "frozen" / "model.safetensors")
    encoder = [name for name in before if name.startswith("encoder.")]
    assert any("running_mean" in name for name in encoder)
    assert all(torch.equal(before[name], after[name]) for name in encoder)
    assert not all(torch.equal(before[name], after[name]) for name in before if name.startswith("decoder."))
    with pytest.raises(ValueError, match="no part 'vision'; its parts: encoder, decoder, lm_head"):
        train_cli.run(tiny_run_arguments(tmp_path / "wrong", max_steps=1) + [
            f"--model_name_or_path={trained_folder}", "--freeze_modules", "vision"])


def test_fine_tuning_trains_the_saved_models_architecture_and_refuses_another(trained_folder, tmp_path):
    """Without --model the saved model's architecture is the one trained (its weights all load); a --model that
    disagrees with the folder is an error, not a model silently started afresh."""
    from textrec.processing.training import arguments as training_arguments

    with pytest.raises(ValueError, match="--model crnn does not match --model_name_or_path .* a self-attention model"):
        training_arguments.resolve_architecture("crnn", str(trained_folder))
    assert training_arguments.resolve_architecture(None, str(trained_folder)) == "self-attention"
    assert training_arguments.resolve_architecture(None, None) == training_arguments.DEFAULT_ARCHITECTURE
    arguments = [a for a in tiny_run_arguments(tmp_path / "crnn", max_steps=1) if not a.startswith("--model=")]
    assert training_arguments.requested_architecture([*arguments, f"--model_name_or_path={trained_folder}"]).name == "self-attention"
    with pytest.raises(ValueError, match="does not match"):
        train_cli.run([*arguments, "--model=crnn", f"--model_name_or_path={trained_folder}"])


@pytest.mark.slow
@pytest.mark.parametrize("budget", ["--max_train_minutes=0.001", "--max_train_cpu_minutes=0.001"])
def test_time_budget_stops_training_early_with_a_saved_model(tmp_path, budget):
    train_cli.run(tiny_run_arguments(tmp_path / "budget", max_steps=50) + [budget])
    state = json.loads((tmp_path / "budget" / "trainer_state.json").read_text())
    assert 1 <= state["global_step"] < 50
    assert (tmp_path / "budget" / "model.safetensors").exists()


def test_early_stopping_ends_a_run_whose_cer_stops_falling_and_keeps_its_best_model(tmp_path):
    """With a learning rate of 0 the CER barely moves (only batch-norm statistics drift): patience 2 ends the run
    two evaluations after its best one, far before --max_steps, and the CER is read as lower-is-better."""
    arguments = tiny_run_arguments(tmp_path / "run", max_steps=40) + [
        "--eval_steps=1", "--save_steps=1", "--learning_rate=0", "--early_stopping_patience=2",
    ]
    _, _, training_args = parse_arguments(arguments)[:3]
    assert training_args.metric_for_best_model == "cer" and training_args.greater_is_better is False
    assert training_args.load_best_model_at_end
    train_cli.run(arguments)
    state = json.loads((tmp_path / "run" / "trainer_state.json").read_text())
    cers = {entry["step"]: entry["eval_cer"] for entry in state["log_history"] if "eval_cer" in entry}
    assert state["global_step"] < 40
    assert state["global_step"] == state["best_global_step"] + 2
    assert cers[state["best_global_step"]] == min(cers.values())
    logged = [entry["cpu_minutes"] for entry in state["log_history"] if "cpu_minutes" in entry]
    assert logged and logged == sorted(logged) and logged[-1] > 0


def break_checkpoint(folder, how: str) -> None:
    if how == "no trainer state":
        (folder / "trainer_state.json").unlink()
    elif how == "truncated weights":
        weights = (folder / "model.safetensors").read_bytes()
        (folder / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    elif how == "truncated trainer state":
        state = (folder / "trainer_state.json").read_text()
        (folder / "trainer_state.json").write_text(state[: len(state) // 2])
    elif how == "truncated optimizer":
        optimizer = (folder / "optimizer.pt").read_bytes()
        (folder / "optimizer.pt").write_bytes(optimizer[: len(optimizer) // 2])


@pytest.mark.slow
@pytest.mark.parametrize("how", ["no trainer state", "truncated weights", "truncated trainer state", "truncated optimizer"])
def test_resume_skips_a_half_written_checkpoint(tmp_path, monkeypatch, caplog, how):
    """A run killed while writing checkpoint-4 resumes, without help, from checkpoint-2."""
    folder = tmp_path / "run"
    train_until_killed(monkeypatch, tiny_run_arguments(folder, max_steps=6, save_total_limit=3), step=5)
    break_checkpoint(folder / "checkpoint-4", how)
    with caplog.at_level("INFO", logger="textrec.train"):
        train_cli.run(tiny_run_arguments(folder, max_steps=6, save_total_limit=3))
    assert "Skipping the incomplete checkpoint" in caplog.text and "checkpoint-4" in caplog.text
    assert f"Resuming from the last complete checkpoint in the output folder: {folder / 'checkpoint-2'}" in caplog.text
    assert (folder / "model.safetensors").is_file()


def test_unwritable_output_folder_fails_before_training(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(PermissionError, match="Cannot write to the output folder"):
        train_cli.run(tiny_run_arguments(blocker / "run"))


@pytest.mark.parametrize(
    "argument, message",
    [("--max_steps=-5", "--max_steps must be >= 1"), ("--max_steps=0", "--max_steps must be >= 1"),
     ("--per_device_train_batch_size=0", "--per_device_train_batch_size must be >= 1"),
     ("--max_train_minutes=-1", "--max_train_minutes must be a positive number")],
)
def test_invalid_training_arguments_are_refused_before_anything_runs(tmp_path, argument, message):
    with pytest.raises(ValueError, match=message):
        train_cli.run([*tiny_run_arguments(tmp_path / "run"), argument])
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("batch_size", [1, 2, 16])
def test_recognize_reads_the_good_images_beside_a_broken_one(trained_folder, tmp_path, sample_line_images, capsys, batch_size):
    for index, image in enumerate(sample_line_images):
        image.save(tmp_path / f"line{index}.png")
    (tmp_path / "line1b.png").write_bytes(b"")  # sorts between line1 and line2
    # The same batch size groups the good images alike with and without the broken one (an untrained model's
    # output still depends on the padding a batch brings).
    good = [str(tmp_path / f"line{i}.png") for i in range(3)]
    expected = recognize_cli.run(["--model", str(trained_folder), *good, "--batch_size", str(batch_size)])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        recognize_cli.main(["--model", str(trained_folder), str(tmp_path), "--batch_size", str(batch_size)])
    assert exit_info.value.code == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [*expected[:2], "", expected[2]]  # the broken image's line is empty
    assert f"image 3 of 4 ({tmp_path / 'line1b.png'})" in captured.err and "empty (0 bytes)" in captured.err
    assert "1 of 4 images could not be read" in captured.err


def test_recognize_api_names_the_position_of_a_broken_image_in_the_whole_list(trained_folder, tmp_path, sample_line_images):
    from textrec.processing.inference import load_recognizer, recognize

    model, processor = load_recognizer(str(trained_folder))
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    images = [*sample_line_images, str(broken)]
    with pytest.raises(ValueError, match=r"image 4 of 4 \(.*broken.png\): cannot read image file"):
        recognize(model, processor, images, batch_size=2, progress=False)
    result = recognize(model, processor, images, batch_size=2, progress=False, on_error="skip")
    assert result.texts[3] is None and list(result.errors) == [3]
    assert all(isinstance(text, str) for text in result.texts[:3])


@pytest.mark.parametrize("option", ["--batch_size", "--num_beams"])
@pytest.mark.parametrize("value", ["0", "-1"])
def test_recognize_refuses_counts_below_one(trained_folder, tmp_path, capsys, option, value):
    with pytest.raises(SystemExit) as exit_info:
        recognize_cli.run(["--model", str(trained_folder), str(tmp_path), option, value])
    assert exit_info.value.code == 2
    assert f"{option}: must be >= 1" in capsys.readouterr().err


def test_bf16_on_a_cpu_without_native_bfloat16_is_warned_about(tmp_path, monkeypatch, caplog):
    from textrec.processing.training import arguments as training_arguments

    monkeypatch.setattr(training_arguments, "cpu_has_native_bf16", lambda: False)
    with caplog.at_level("WARNING", logger="textrec.train"):
        parse_arguments(tiny_run_arguments(tmp_path / "run", max_steps=1) + ["--bf16=True"])
    assert "without native bfloat16" in caplog.text
    caplog.clear()
    monkeypatch.setattr(training_arguments, "cpu_has_native_bf16", lambda: True)
    with caplog.at_level("WARNING", logger="textrec.train"):
        parse_arguments(tiny_run_arguments(tmp_path / "run", max_steps=1) + ["--bf16=True"])
    assert "without native bfloat16" not in caplog.text
