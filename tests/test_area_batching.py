"""Training batches packed by image area (CoMER's recipe): the sampler's guarantees, image sizes read
without decoding, and textrec-train using it, resumed runs included."""

import io
import json
import logging
import random

import datasets
import pytest
import torch
from PIL import Image, ImageFile
from safetensors.torch import load_file

from textrec.processing import TextRecognitionImageProcessor
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.area_batching import AreaBatchSampler, image_sizes
from textrec.processing.data.collator import TextRecognitionCollator
from textrec.scripts import train as train_cli
from textrec.processing.training.architectures import FORMULA_IMAGES, LINE_IMAGES, get_spec
from textrec.processing.training.trainer import TextRecognitionTrainer
from textrec.processing.training import ModelArguments, TextrecTrainingArguments, build_recognizer, parse_arguments

MAX_AREA = 20_000
MAX_BATCH_SIZE = 8


def random_sizes(count: int = 200, seed: int = 0) -> list[tuple[int, int]]:
    """Formula-like sizes, and three larger than `MAX_AREA` by themselves."""
    generator = random.Random(seed)
    sizes = [(generator.randint(16, 48), generator.randint(16, 240)) for _ in range(count)]
    sizes[10:10] = [(150, 200), (100, 400), (16, 1300)]
    return sizes


def epoch_batches(sampler: AreaBatchSampler, epoch: int) -> list[list[int]]:
    sampler.set_epoch(epoch)
    return list(sampler)


def test_every_example_comes_once_per_epoch():
    sizes = random_sizes()
    sampler = AreaBatchSampler(sizes, MAX_AREA, MAX_BATCH_SIZE, seed=3)
    for epoch in range(3):
        batches = epoch_batches(sampler, epoch)
        assert len(batches) == len(sampler)
        assert sorted(index for batch in batches for index in batch) == list(range(len(sizes)))


def test_batches_keep_within_the_area_and_size_limits(caplog):
    sizes = random_sizes()
    oversize = {index for index, (height, width) in enumerate(sizes) if height * width > MAX_AREA}
    assert oversize == {10, 11, 12}
    with caplog.at_level(logging.WARNING):
        sampler = AreaBatchSampler(sizes, MAX_AREA, MAX_BATCH_SIZE)
    assert [record.getMessage().split(" of ")[0] for record in caplog.records] == ["3"]
    batch_sizes = set()
    for batch in sampler:
        heights, widths = zip(*(sizes[index] for index in batch))
        assert len(batch) <= MAX_BATCH_SIZE
        if len(batch) > 1:
            assert len(batch) * max(heights) * max(widths) <= MAX_AREA
        assert len(batch) == 1 or not oversize & set(batch)
        batch_sizes.add(len(batch))
    assert min(batch_sizes) == 1 and max(batch_sizes) == MAX_BATCH_SIZE


def test_each_epoch_has_its_own_order_and_keeps_it():
    sizes = random_sizes()
    sampler = AreaBatchSampler(sizes, MAX_AREA, MAX_BATCH_SIZE, seed=3)
    first = epoch_batches(sampler, 0)
    assert epoch_batches(sampler, 1) != first
    assert epoch_batches(sampler, 0) == first
    assert epoch_batches(AreaBatchSampler(sizes, MAX_AREA, MAX_BATCH_SIZE, seed=3), 0) == first
    assert epoch_batches(AreaBatchSampler(sizes, MAX_AREA, MAX_BATCH_SIZE, seed=4), 0) != first
    # The batches themselves are the same in every epoch: only their order changes.
    assert sorted(map(sorted, epoch_batches(sampler, 1))) == sorted(map(sorted, first))


def test_without_shuffle_batches_come_small_to_large():
    sizes = random_sizes()
    sampler = AreaBatchSampler(sizes, MAX_AREA, MAX_BATCH_SIZE, shuffle=False)
    largest = [max(sizes[index][0] * sizes[index][1] for index in batch) for batch in epoch_batches(sampler, 5)]
    assert largest == sorted(largest)


@pytest.mark.parametrize("count", [24, 20])  # 6 batches of 4, or 5 (one repeated to even the shares)
def test_two_replicas_get_disjoint_equally_long_shares(count):
    sizes = [(10, 10)] * count
    full = AreaBatchSampler(sizes, MAX_AREA, max_batch_size=4, seed=1)
    shares = [
        epoch_batches(AreaBatchSampler(sizes, MAX_AREA, max_batch_size=4, seed=1, num_replicas=2, rank=rank), 2)
        for rank in range(2)
    ]
    assert len(shares[0]) == len(shares[1]) == -(-len(full.batches) // 2)
    seen = [tuple(batch) for share in shares for batch in share]
    assert sorted(index for batch in set(seen) for index in batch) == list(range(count))
    assert len(seen) - len(set(seen)) == len(full.batches) % 2
    if count == 24:
        assert not {tuple(batch) for batch in shares[0]} & {tuple(batch) for batch in shares[1]}


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError, match="at least one"):
        AreaBatchSampler([], MAX_AREA, MAX_BATCH_SIZE)
    with pytest.raises(ValueError, match="rank"):
        AreaBatchSampler([(10, 10)], MAX_AREA, MAX_BATCH_SIZE, num_replicas=2, rank=2)


def encoded(image: Image.Image, image_format: str, **save_options) -> dict:
    buffer = io.BytesIO()
    image.save(buffer, format=image_format, **save_options)
    return {"bytes": buffer.getvalue(), "path": None}


def test_image_sizes_are_the_batch_sizes_and_read_without_decoding(monkeypatch):
    rotated = Image.new("L", (90, 30), 255)
    exif = rotated.getexif()
    exif[0x0112] = 6  # rotated by 90 degrees: load_image turns it to 30 x 90
    images = [
        encoded(Image.new("L", (100, 40), 255), "PNG"),
        encoded(Image.new("RGB", (300, 20), "white"), "PNG"),
        encoded(Image.new("L", (2000, 300), 255), "PNG"),
        encoded(Image.new("L", (8, 12), 255), "PNG"),
        encoded(rotated, "JPEG", exif=exif.tobytes()),
    ]
    dataset = datasets.Dataset.from_dict({"image": images}, features=datasets.Features({"image": datasets.Image()}))
    for settings in (FORMULA_IMAGES, LINE_IMAGES):
        processor = TextRecognitionImageProcessor(**settings)
        expected = [processor([image], return_tensors="np")["pixel_values"].shape[2:] for image in dataset["image"]]
        with monkeypatch.context() as patch:
            patch.setattr(ImageFile.ImageFile, "load", lambda self: pytest.fail("pixels were decoded"))
            assert image_sizes(dataset, processor) == [tuple(size) for size in expected]


def test_image_sizes_of_other_columns_are_read_with_load_image(tmp_path):
    paths = []
    for index, size in enumerate([(100, 40), (30, 20)]):
        paths.append(str(tmp_path / f"{index}.png"))
        Image.new("L", size).save(paths[-1])
    dataset = datasets.Dataset.from_dict({"image": paths})  # file paths as strings, not datasets.Image
    processor = TextRecognitionImageProcessor(**FORMULA_IMAGES)
    # widths 100 and 30, each with 32 columns of padding, rounded up to multiples of 16
    assert image_sizes(dataset, processor) == [(40, 144), (20, 64)]


def test_comer_recipe_packs_batches_by_area_unless_zero(tmp_path):
    _, _, training_args = parse_arguments(["--model", "comer", "--output_dir", str(tmp_path)])
    assert (training_args.batch_max_area, training_args.per_device_train_batch_size) == (320_000, 8)
    arguments = ["--model", "comer", "--output_dir", str(tmp_path), "--batch_max_area", "0"]
    assert parse_arguments(arguments)[2].batch_max_area is None
    assert parse_arguments(["--output_dir", str(tmp_path)])[2].batch_max_area is None


def record_batches(monkeypatch) -> list[dict]:
    """Where the inputs of every training step will be appended."""
    batches = []
    original_step = TextRecognitionTrainer.training_step

    def recording_step(self, model, inputs, *args, **kwargs):
        batches.append({name: tensor.clone() for name, tensor in inputs.items()})
        return original_step(self, model, inputs, *args, **kwargs)

    monkeypatch.setattr(TextRecognitionTrainer, "training_step", recording_step)
    return batches


def training_sampler(dataset: str, count: int, image_settings: dict, max_area: int, max_batch_size: int):
    """The sampler textrec-train builds for `count` training rows of a synthetic `dataset` (seed 7)."""
    rows = load_text_recognition_dataset(dataset, split="train", num_samples=count, seed=7)
    sizes = image_sizes(rows, TextRecognitionImageProcessor(**image_settings))
    return AreaBatchSampler(sizes, max_area, max_batch_size, seed=7)


@pytest.mark.slow
def test_textrec_train_comer_uses_area_batches(tmp_path, monkeypatch):
    inputs = record_batches(monkeypatch)
    arguments = dict(
        model="comer", preset="tiny", dataset="synthetic-math", max_train_samples=24, max_eval_samples=2,
        max_target_length=50, output_dir=tmp_path, max_steps=-1, num_train_epochs=2, per_device_train_batch_size=8,
        per_device_eval_batch_size=2, eval_strategy="no", save_strategy="no", logging_steps=50, seed=7, data_seed=7,
        use_cpu=True, batch_max_area=MAX_AREA, generation_num_beams=1,
    )
    train_cli.run([f"--{key}={value}" for key, value in arguments.items()])

    expected_sizes = sorted(map(len, training_sampler("synthetic-math", 24, FORMULA_IMAGES, MAX_AREA, 8).batches))
    batches = len(expected_sizes)
    batch_sizes = [len(batch["labels"]) for batch in inputs]
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    assert state["global_step"] == len(batch_sizes) == 2 * batches > 2 * 3  # not 3 batches of 8 per epoch
    assert sorted(batch_sizes[:batches]) == sorted(batch_sizes[batches:]) == expected_sizes
    assert sum(expected_sizes) == 24 and len(set(expected_sizes)) > 2 and max(expected_sizes) <= 8


@pytest.mark.slow
def test_resuming_in_a_later_epoch_skips_the_batches_already_trained(tmp_path, monkeypatch):
    spec = get_spec("self-attention")  # quicker than CoMER; no augmentation, so the weights must be identical
    model_args = ModelArguments(model="self-attention", preset="tiny", max_target_length=48)
    _, processor = build_recognizer(model_args, spec)
    dataset = load_text_recognition_dataset("synthetic-lines", split="train", num_samples=16, seed=7)
    max_area = 2 * MAX_AREA
    batches = len(training_sampler("synthetic-lines", 16, LINE_IMAGES, max_area, 4))
    assert batches > 3
    checkpoint_step = batches + 2  # in the second epoch, with batches after it

    def train(output_dir, resume: bool = False) -> None:
        torch.manual_seed(0)
        args = TextrecTrainingArguments(
            output_dir=str(output_dir), batch_max_area=max_area, per_device_train_batch_size=4, max_steps=-1,
            num_train_epochs=2, save_steps=checkpoint_step, eval_strategy="no", logging_steps=50, learning_rate=1e-3,
            warmup_steps=0, seed=7, data_seed=7, use_cpu=True,
        )
        trainer = TextRecognitionTrainer(
            model=build_recognizer(model_args, spec)[0],
            args=args,
            train_dataset=dataset,
            data_collator=TextRecognitionCollator(processor),
            processing_class=processor,
        )
        trainer.train(resume_from_checkpoint=resume)
        trainer.save_model()

    uninterrupted = record_batches(monkeypatch)
    train(tmp_path / "uninterrupted")
    monkeypatch.undo()

    original_step = TextRecognitionTrainer.training_step

    def crash_after_the_checkpoint(self, *args, **kwargs):
        if self.state.global_step == checkpoint_step:
            raise KeyboardInterrupt("simulated interruption")
        return original_step(self, *args, **kwargs)

    monkeypatch.setattr(TextRecognitionTrainer, "training_step", crash_after_the_checkpoint)
    with pytest.raises(KeyboardInterrupt):
        train(tmp_path / "interrupted")
    monkeypatch.undo()
    resumed = record_batches(monkeypatch)
    train(tmp_path / "interrupted", resume=True)

    assert len(uninterrupted) == 2 * batches and len(resumed) == 2 * batches - checkpoint_step
    for expected, actual in zip(uninterrupted[checkpoint_step:], resumed):
        assert torch.equal(expected["labels"], actual["labels"])
    expected = load_file(tmp_path / "uninterrupted" / "model.safetensors")
    actual = load_file(tmp_path / "interrupted" / "model.safetensors")
    for name in expected:
        assert torch.equal(expected[name], actual[name]), name
