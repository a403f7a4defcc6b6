"""Training the text-line detector on the data engine's pages, through textrec's one training path (`fit`).

    textrec-train-line-detector --num_train_pages 2400 --max_steps 1500 --output_dir runs/line-detector

Each training example is a random square crop (`--crop_size` pixels of the page as the detector reads it) of a
synthetic page (`textrec.processing.data.synthetic_pages`), with its lines' cores drawn by the image processor;
evaluation reads whole pages of another seed. `--model_name_or_path` continues from a saved detector. Every
`TrainingArguments` option works.
"""

import json
import logging
from dataclasses import dataclass, field

import numpy as np
import torch
from transformers import HfArgumentParser, Trainer, TrainingArguments, set_seed

from textrec.modeling import LineDetectorConfig, LineDetectorForTextLineDetection
from textrec.processing.checkpoints import load_pretrained
from textrec.processing.data.synthetic_pages import make_synthetic_pages
from textrec.processing.image_processing_line_detection import LineDetectionImageProcessor
from textrec.processing.inference import check_model_source

from .output_folder import OutputFolder
from .train import fit, train_in_output_folder
from .trainer import CpuTrainingDefaults, TimeBudgetCallback

logger = logging.getLogger("textrec.train_line_detector")


@dataclass
class LineDetectorModelArguments:
    model_name_or_path: str | None = field(default=None, metadata={"help": "Continue training a saved detector."})
    stage_channels: str = field(default="16,32,48,64,96", metadata={"help": "A new model's stage widths."})


@dataclass
class LineDetectorDataArguments:
    num_train_pages: int = field(default=2400, metadata={"help": "Synthetic pages to train on (rendered once, cached)."})
    num_eval_pages: int = field(default=100, metadata={"help": "Synthetic pages of another seed to evaluate on."})
    crop_size: int = field(default=512, metadata={"help": "Side of the square training crops, in input pixels."})
    render_num_proc: int | None = field(default=None, metadata={"help": "Processes rendering the pages."})


@dataclass
class LineDetectorTrainingArguments(CpuTrainingDefaults, TrainingArguments):
    """`TrainingArguments` with defaults that suit the detector on a CPU."""

    output_dir: str | None = field(default="runs/line-detector", metadata={"help": "Where checkpoints and the model go."})
    per_device_train_batch_size: int = field(default=8)
    per_device_eval_batch_size: int = field(default=1)
    learning_rate: float = field(default=2e-3)
    weight_decay: float = field(default=1e-4)
    save_steps: float = field(default=250)
    eval_steps: float | None = field(default=250)


class PageCrops(torch.utils.data.Dataset):
    """Training examples: page `index`'s image and line cores as the processor makes them, cut to a random square of
    `crop_size` input pixels (the page padded where it is smaller), drawn anew each time the page is read."""

    def __init__(self, pages, processor: LineDetectionImageProcessor, label_stride: int, crop_size: int | None):
        self.pages, self.processor, self.label_stride, self.crop_size = pages, processor, label_stride, crop_size
        self.reads = 0

    def __len__(self) -> int:
        return len(self.pages)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        row = self.pages[index]
        lines = [line["polygon"] for line in json.loads(row["lines"])]
        features = self.processor.preprocess([row["image"]], annotations=[lines], label_stride=self.label_stride,
                                             return_tensors="np")
        pixels, labels, mask = features["pixel_values"][0], features["labels"][0], features["label_mask"][0]
        if self.crop_size:
            self.reads += 1
            rng = np.random.default_rng([index, self.reads, torch.initial_seed() % 2**32])
            size, stride = self.crop_size, self.label_stride
            height, width = pixels.shape[1:]
            top = int(rng.integers(0, max(height - size, 0) // stride + 1)) * stride
            left = int(rng.integers(0, max(width - size, 0) // stride + 1)) * stride
            cropped = np.full((1, size, size), pixels.max(), dtype=np.float32)  # padding: white paper
            part = pixels[:, top:top + size, left:left + size]
            cropped[:, :part.shape[1], :part.shape[2]] = part
            label_crop = np.zeros((size // stride, size // stride), dtype=np.float32)
            mask_crop = np.zeros_like(label_crop)
            part = labels[top // stride:(top + size) // stride, left // stride:(left + size) // stride]
            label_crop[:part.shape[0], :part.shape[1]] = part
            part = mask[top // stride:(top + size) // stride, left // stride:(left + size) // stride]
            mask_crop[:part.shape[0], :part.shape[1]] = part
            pixels, labels, mask = cropped, label_crop, mask_crop
        return {"pixel_values": torch.from_numpy(pixels), "labels": torch.from_numpy(labels),
                "label_mask": torch.from_numpy(mask)}


def collate_pages(examples: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Stacks examples of one size; pages of different sizes (evaluation) are padded at the right and bottom."""
    height = max(example["pixel_values"].shape[1] for example in examples)
    width = max(example["pixel_values"].shape[2] for example in examples)
    stride = examples[0]["pixel_values"].shape[1] // examples[0]["labels"].shape[0]
    batch = {"pixel_values": torch.full((len(examples), 1, height, width), float(examples[0]["pixel_values"].max())),
             "labels": torch.zeros(len(examples), height // stride, width // stride),
             "label_mask": torch.zeros(len(examples), height // stride, width // stride)}
    for index, example in enumerate(examples):
        for name, value in example.items():
            if name == "pixel_values":
                batch[name][index, :, :value.shape[1], :value.shape[2]] = value
            else:
                batch[name][index, :value.shape[0], :value.shape[1]] = value
    return batch


def parse_arguments(argv: list[str]):
    parser = HfArgumentParser((LineDetectorModelArguments, LineDetectorDataArguments, LineDetectorTrainingArguments))
    return parser.parse_args_into_dataclasses(args=argv)


def run_description(model_args: LineDetectorModelArguments, data_args: LineDetectorDataArguments) -> dict:
    """What the output folder's run record compares with a run already there."""
    return {"command": "textrec-train-line-detector", "model_name_or_path": model_args.model_name_or_path,
            "stage_channels": model_args.stage_channels, "num_train_pages": data_args.num_train_pages,
            "crop_size": data_args.crop_size}


def build_detector(model_args: LineDetectorModelArguments):
    """The model and image processor: a saved detector's, or new ones."""
    if model_args.model_name_or_path:
        # A released detector's short name (line-detector), a folder or a Hub id, checked as the readers check it.
        source = check_model_source(model_args.model_name_or_path, required_files=("config.json", "model.safetensors"))
        processor = LineDetectionImageProcessor.from_pretrained(source)
        model = load_pretrained(LineDetectorForTextLineDetection, source, dtype=torch.float32)
        return model, processor
    channels = [int(width) for width in model_args.stage_channels.split(",")]
    return LineDetectorForTextLineDetection(LineDetectorConfig(stage_channels=channels)), LineDetectionImageProcessor()


def train_line_detector(model_args: LineDetectorModelArguments, data_args: LineDetectorDataArguments,
                        training_args: LineDetectorTrainingArguments) -> dict:
    """Trains the detector (new, or continued from `--model_name_or_path`) in its output folder, checked and locked
    as `textrec-train` checks its own; returns the final evaluation metrics."""
    return train_in_output_folder(training_args, run_description(model_args, data_args), model_args.model_name_or_path,
                                  lambda output_folder: train_line_detector_in(output_folder, model_args, data_args,
                                                                               training_args))


def train_line_detector_in(output_folder: OutputFolder, model_args: LineDetectorModelArguments,
                           data_args: LineDetectorDataArguments, training_args: LineDetectorTrainingArguments) -> dict:
    """`train_line_detector`'s work once its output folder is checked and locked."""
    set_seed(training_args.seed)
    model, processor = build_detector(model_args)
    output_folder.check_model(model.config)
    logger.info("Line detector with %s parameters", f"{model.num_parameters():,}")
    with training_args.main_process_first(desc="rendering the pages"):
        train_pages = make_synthetic_pages(data_args.num_train_pages, seed=training_args.seed,
                                           num_proc=data_args.render_num_proc)
        eval_pages = make_synthetic_pages(data_args.num_eval_pages, seed=training_args.seed + 1,
                                          num_proc=data_args.render_num_proc)
    stride = model.config.output_stride
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=PageCrops(train_pages, processor, stride, data_args.crop_size),
        eval_dataset=PageCrops(eval_pages, processor, stride, None),
        data_collator=collate_pages,
        processing_class=processor,
        callbacks=[TimeBudgetCallback(training_args.max_train_minutes)] if training_args.max_train_minutes else [],
    )
    return fit(trainer, output_folder=output_folder)
