"""What training needs to know about each architecture beyond its model classes, declared here once and read by
`textrec-train`, the releases, benchmarks and studies: the image processor settings its models are trained
with, its vocabulary, its own training recipe if it has one, and what its presets change."""

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from textrec.modeling import ARCHITECTURES
from textrec.processing import (
    TextRecognitionProcessor,
    build_char_tokenizer,
    build_latex_tokenizer,
)
from textrec.processing.data.reference_glyphs import reference_glyph_table

from .recipes import (
    TrainingRecipe,
    adadelta_from_arguments,
    adam_from_arguments,
    constant_from_arguments,
    reduce_on_plateau_from_arguments,
    rsqrt_scaled_learning_rate,
    sgd_from_arguments,
    warmup_staircase_from_arguments,
)


@dataclass(frozen=True)
class ArchitectureSpec:
    """One entry of `--model`.

    Args:
        name: the command-line name.
        config_class, model_class: from `textrec.modeling.ARCHITECTURES`.
        description: one or two sentences for model cards.
        reads: what one image holds, for model cards ("an image of <reads> in").
        tokens: what the vocabulary's tokens are, for model cards.
        image_processor_kwargs: `TextRecognitionImageProcessor` settings for new models, but for what the model's
            configuration declares (channels, height where it has one, a fixed-size model's width), which the
            processor reads from it (`build_recognizer`).
        config_defaults: configuration values textrec-train gives new models of this architecture, before
            `--image_height`/`--image_width` and `--config_overrides` (an input size other than the config's own).
        recipe: the optimiser and learning-rate schedule of textrec-train, when not the Trainer's
            AdamW and `--lr_scheduler_type`.
        prepare_model: `(model, processor) -> None`, run by textrec-train on the model it is about to
            train, new or loaded (for what the model needs from the processor's vocabulary and image
            settings, such as rendered reference glyphs).
        build_tokenizer: builds the vocabulary of new models, from `--charset` (a charset or dictionary,
            or its file) when given, else its default: characters, or LaTeX tokens for formulas.
        extra_metrics: evaluation metrics besides CER, WER and sequence accuracy (`"exprate"`).
        train_processor_kwargs: processor call options for training batches only (augmentation).
        preset_changes: preset name -> the fields above that differ for new models of that preset (a CPU
            preset's image settings, or no architecture recipe for it).
    """

    name: str
    config_class: type
    model_class: type
    description: str
    reads: str = "one line of text"
    tokens: str = "characters"
    image_processor_kwargs: dict = field(default_factory=dict)
    config_defaults: dict = field(default_factory=dict)
    recipe: TrainingRecipe | None = None
    prepare_model: Callable | None = None
    build_tokenizer: Callable = build_char_tokenizer
    extra_metrics: tuple[str, ...] = ()
    train_processor_kwargs: dict = field(default_factory=dict)
    preset_changes: dict[str, dict] = field(default_factory=dict)

    def for_preset(self, preset: str | None) -> "ArchitectureSpec":
        """This spec as it trains new models of `preset`."""
        return replace(self, **self.preset_changes.get(preset, {}))


# Lines at their aspect ratio, 32 pixels high (the height of models whose configuration declares none; the others
# read theirs, 32 as well), padded to a multiple of 4 pixels.
LINE_IMAGES = dict(resize_mode="keep_aspect", height=32, max_width=512, width_multiple=4)

# The ResNet's convolutions reach further past a line's end than the VGG's: with 32 columns of padding a line's
# CTC logits move by up to 0.01 in a wider batch, with 48 not at all (`min_right_padding`).
RESNET_LINE_IMAGES = dict(LINE_IMAGES, min_right_padding=48)

# Every image resized to the configuration's input size (the description's: 32 x 300, handwriting).
RESNET_TRANSFORMER_IMAGES = dict(resize_mode="fixed")

# The description's recipe: Adam (0.9, 0.997, 1e-9); linear warm-up over 2000 steps to
# 0.3 / (sqrt(512) * sqrt(2000)), then x0.8 every 32000 steps. `--learning_rate` is that peak.
RESNET_TRANSFORMER_RECIPE = TrainingRecipe(
    summary="Adam; linear warm-up, then staircase decay",
    defaults=dict(
        learning_rate=rsqrt_scaled_learning_rate(0.3, hidden_size=512, warmup_steps=2000),
        warmup_steps=2000,
        adam_beta1=0.9,
        adam_beta2=0.997,
        adam_epsilon=1e-9,
    ),
    optimizer=adam_from_arguments,
    lr_scheduler=partial(warmup_staircase_from_arguments, decay_rate=0.8, decay_steps=32000),
)

# A ViT reads a fixed grid of patches: every line resized to the configuration's size, for new models 32 x 384.
TROCR_LINE_IMAGES = dict(resize_mode="fixed")
TROCR_LINE_SIZE = dict(image_height=32, image_width=384)

# Every image resized to the configuration's input size (the description's: grey, 100 x 32, CRNN's input size).
SHARP_ATTENTION_IMAGES = dict(resize_mode="fixed")

# The description's recipe: ADADELTA, learning rate 1.0, decay 0.95, L2 weight decay 4e-5, no schedule.
SHARP_ATTENTION_RECIPE = TrainingRecipe(
    summary="ADADELTA (decay 0.95), constant learning rate",
    defaults=dict(learning_rate=1.0, weight_decay=4e-5, warmup_steps=0),
    optimizer=partial(adadelta_from_arguments, rho=0.95),
    lr_scheduler=constant_from_arguments,
)


def set_reference_glyphs(model, processor: TextRecognitionProcessor) -> None:
    """Renders the reference glyphs of the vocabulary into a sharp-attention model that is supervised with
    them (`reference_loss_weight > 0`); other models are left alone."""
    config = model.config
    if config.reference_loss_weight > 0:
        width = config.sharpener_patch_widths[-1]
        model.set_reference_glyphs(*reference_glyph_table(processor.tokenizer, processor.image_processor, width))


# Formulas keep their size within 16-256 x 16-1024 pixels (scaled to fit otherwise), white strokes on
# black in [0, 1] (whatever their polarity on input: the processor brings every image to dark on light,
# `text_polarity`, then inverts it), padded with black; training batches are rescaled by a random factor in
# [0.7, 1.4].
FORMULA_IMAGES = dict(
    resize_mode="limits",
    invert=True,
    min_height=16,
    max_height=256,
    min_width=16,
    max_width=1024,
    width_multiple=16,
    scale_augmentation_range=[0.7, 1.4],
    # The middle half of the training renderings' glyph heights (mathtext at 80-140 dpi): a formula typeset
    # smaller or larger is brought into it (scripts/lab/reports/real_images.md, formula scale).
    glyph_height_range=[10.0, 14.0],
    do_normalize=False,
    padding_value=0.0,
)

# CoMER's recipe: SGD (momentum 0.9, weight decay 1e-4) at 0.08, the rate divided by 4 when the validation
# ExpRate has not improved for 10 evaluations (20 epochs at one evaluation every 2 epochs in the paper).
# Training batches packed by image area as in the published code: at most 8 formulas and 320000 padded
# pixels each (`--batch_max_area 0` for fixed-size batches).
COMER_RECIPE = TrainingRecipe(
    summary="SGD with momentum; learning rate reduced on a plateau of the validation metric",
    defaults=dict(
        learning_rate=0.08,
        weight_decay=1e-4,
        metric_for_best_model="exprate",
        greater_is_better=True,
        per_device_train_batch_size=8,
        batch_max_area=320_000,
    ),
    optimizer=partial(sgd_from_arguments, momentum=0.9),
    lr_scheduler=partial(reduce_on_plateau_from_arguments, factor=0.25, patience=10),
)

SPECS = {
    "self-attention": ArchitectureSpec(
        "self-attention",
        *ARCHITECTURES["self-attention"],
        description=(
            "A CNN encodes the line image; its feature map, flattened into a sequence with sinusoidal "
            "positions, is read by a transformer decoder (masked self-attention, cross-attention, ReLU "
            "feed-forward) that predicts the characters."
        ),
        image_processor_kwargs=LINE_IMAGES,
    ),
    "resnet-transformer": ArchitectureSpec(
        "resnet-transformer",
        *ARCHITECTURES["resnet-transformer"],
        description=(
            "A ResNet-50 whose last stages keep 1/8 resolution encodes the line image; each feature-map column, "
            "reduced by a 1x1 convolution and a fully connected layer, is one element of a sequence read by a "
            "transformer encoder-decoder. Beam search of 4 ranked by the GNMT length penalty."
        ),
        image_processor_kwargs=RESNET_TRANSFORMER_IMAGES,
        recipe=RESNET_TRANSFORMER_RECIPE,
        # The CPU preset reads lines of any length at their aspect ratio, and trains as self-attention's does
        # (AdamW, --lr_scheduler_type).
        preset_changes={"fast": dict(image_processor_kwargs=RESNET_LINE_IMAGES, recipe=None)},
    ),
    "sharp-attention": ArchitectureSpec(
        "sharp-attention",
        *ARCHITECTURES["sharp-attention"],
        description=(
            "CRNN's VGG and a 2-layer bidirectional LSTM encode the 100x32 grey image into 24 column features; "
            "an LSTM decoder with additive attention reads them with soft, hard (sampled, REINFORCE-trained) "
            "or sharp attention, where the chosen column's image region is cropped and transformed by spatial "
            "transformers and re-encoded."
        ),
        image_processor_kwargs=SHARP_ATTENTION_IMAGES,
        recipe=SHARP_ATTENTION_RECIPE,
        prepare_model=set_reference_glyphs,
    ),
    "crnn": ArchitectureSpec(
        "crnn",
        *ARCHITECTURES["crnn"],
        description=(
            "CRNN: a VGG reduces the 32-pixel-high line to one row of features, a 2-layer bidirectional LSTM reads "
            "them left to right and a linear classifier trained with CTC reads by best path, with no decoder: the "
            "model docTR and PaddleOCR users pick, trained as textrec's peer."
        ),
        image_processor_kwargs=LINE_IMAGES,
    ),
    "comer": ArchitectureSpec(
        "comer",
        *ARCHITECTURES["comer"],
        description=(
            "CoMER: a DenseNet encodes the formula image with 2-D positions; a transformer decoder trained in both "
            "directions reads it, its cross-attention refined by an Attention Refinement Module from the coverage "
            "of earlier steps (none: the BTTR baseline)."
        ),
        reads="one typeset formula",
        tokens="LaTeX tokens of the CROHME dictionary",
        image_processor_kwargs=FORMULA_IMAGES,
        recipe=COMER_RECIPE,
        build_tokenizer=build_latex_tokenizer,
        extra_metrics=("exprate",),
        train_processor_kwargs=dict(do_scale_augmentation=True),
    ),
    "trocr": ArchitectureSpec(
        "trocr",
        *ARCHITECTURES["trocr"],
        description=(
            "TrOCR's transformer decoder (transformers' TrOCRForCausalLM, in a VisionEncoderDecoderModel) reads the "
            "line image as encoded by a CNN with a strided stem and a transformer encoder over its columns, with a "
            "CTC head on the encoder (joint CTC-attention training) in the fast preset."
        ),
        image_processor_kwargs=LINE_IMAGES,
    ),
    "trocr-charbert": ArchitectureSpec(
        "trocr-charbert",
        *ARCHITECTURES["trocr-charbert"],
        description=(
            "TrOCR (a ViT encoder and a TrOCR transformer decoder, as a VisionEncoderDecoderModel) whose decoder "
            "input embeddings are corrected by a causal CharBERT: tensor transforms map them to CharBERT's token "
            "and character embeddings and CharBERT's outputs back, and a tensor combine merges them with the "
            "original embeddings."
        ),
        image_processor_kwargs=TROCR_LINE_IMAGES,
        config_defaults=TROCR_LINE_SIZE,
    ),
}


def get_spec(name: str) -> ArchitectureSpec:
    if name not in SPECS:
        raise ValueError(f"Unknown architecture {name!r}; available: {', '.join(sorted(SPECS))}.")
    return SPECS[name]
