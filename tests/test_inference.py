"""The pixel mask, declared once by the image processor (only the resize modes that pad give one), and
recognize() with a transformers `VisionEncoderDecoderModel`, which takes none: the processor of a fixed-size
model gives none."""

import json

import numpy as np
import torch
from PIL import Image, ImageDraw
from transformers import TrOCRConfig, ViTConfig, VisionEncoderDecoderConfig, VisionEncoderDecoderModel

from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor, build_char_tokenizer
from textrec.processing.inference import recognize


def tiny_vit_trocr(tokenizer) -> VisionEncoderDecoderModel:
    """A ViT encoder and TrOCR decoder of a few thousand weights, for 1 x 32 x 128 images."""
    encoder = ViTConfig(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, image_size=(32, 128),
        patch_size=16, num_channels=1,
    )
    decoder = TrOCRConfig(
        vocab_size=len(tokenizer), hidden_size=16, decoder_layers=1, num_attention_heads=2, ffn_dim=32,
        max_position_embeddings=32, pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.bos_token_id,
    )
    torch.manual_seed(0)
    model = VisionEncoderDecoderModel(VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder))
    for config in (model.config, model.generation_config):
        config.decoder_start_token_id = tokenizer.bos_token_id
        config.pad_token_id = tokenizer.pad_token_id
        config.eos_token_id = tokenizer.eos_token_id
    return model.eval()


def test_recognize_passes_no_pixel_mask_to_a_vision_encoder_decoder(sample_line_images):
    tokenizer = build_char_tokenizer()
    image_processor = TextRecognitionImageProcessor(num_channels=1, resize_mode="fixed", height=32, width=128)
    processor = TextRecognitionProcessor(image_processor, tokenizer)
    model = tiny_vit_trocr(tokenizer)
    inputs = processor(images=sample_line_images, return_tensors="pt")
    assert set(inputs) == {"pixel_values"} and inputs["pixel_values"].shape[-2:] == (32, 128)

    result = recognize(model, processor, sample_line_images, batch_size=2, max_new_tokens=4, progress=False)

    assert len(result.texts) == len(sample_line_images)
    assert all(isinstance(text, str) for text in result.texts)


def test_only_padding_resize_modes_give_a_pixel_mask(sample_line_images):
    for mode, pads in (("keep_aspect", True), ("limits", True), ("fixed", False)):
        image_processor = TextRecognitionImageProcessor(resize_mode=mode)
        outputs = image_processor(sample_line_images, return_tensors="pt")
        assert image_processor.pads is pads and ("pixel_mask" in outputs) is pads
        assert image_processor.model_input_names == list(outputs)


def test_the_pixel_mask_follows_the_resize_mode_and_is_not_saved(tmp_path):
    image_processor = TextRecognitionImageProcessor(resize_mode="fixed")
    image_processor.save_pretrained(tmp_path)
    assert "model_input_names" not in (tmp_path / "preprocessor_config.json").read_text()
    image_processor.resize_mode = "keep_aspect"
    assert image_processor.model_input_names == ["pixel_values", "pixel_mask"]
    # Folders saved before it was derived hold a list; the resize mode decides all the same.
    saved = json.loads((tmp_path / "preprocessor_config.json").read_text())
    saved["model_input_names"] = ["pixel_values", "pixel_mask"]
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(saved))
    assert TextRecognitionImageProcessor.from_pretrained(tmp_path).model_input_names == ["pixel_values"]


def test_lines_of_like_width_share_a_batch_and_results_keep_their_order():
    from textrec.modeling import CRNNConfig, CRNNForTextRecognition
    from textrec.processing import inference

    torch.manual_seed(0)
    model = CRNNForTextRecognition(CRNNConfig.from_preset("tiny", vocab_size=20, max_target_length=12)).eval()
    processor = TextRecognitionProcessor(TextRecognitionImageProcessor(), build_char_tokenizer("abcdef"))
    widths = [400, 40, 380, 60, 420, 50, 360, 70]  # long and short lines, alternating
    images = [Image.new("L", (width, 32), 255) for width in widths]
    for image, width in zip(images, widths):
        ImageDraw.Draw(image).rectangle([4, 8, width - 4, 24], fill=0)
    batch_widths = []

    class RecordingProcessor(TextRecognitionProcessor):
        def __call__(self, *args, **kwargs):
            batch_widths.append([image.width for image in kwargs["images"]])
            return super().__call__(*args, **kwargs)

    processor = RecordingProcessor(processor.image_processor, processor.tokenizer)
    sorted_texts = recognize(model, processor, images, batch_size=4, progress=False).texts
    assert batch_widths == [[40, 50, 60, 70], [360, 380, 400, 420]]  # not [400, 40, 380, 60], [420, 50, 360, 70]
    alone = [recognize(model, processor, [image], progress=False).texts[0] for image in images]
    assert sorted_texts == alone  # each text at its image's position


def test_batches_are_cut_where_padding_would_cost_more_than_another_batch():
    """`batches_by_size`: runs in order, none over `batch_size`; lines of one size fill whole batches, and a few long
    lines after many short ones are read apart (in equal runs of 32 the short ones were padded to the longest)."""
    from textrec.processing.inference import batches_by_size

    assert [len(run) for run in batches_by_size([(32, 100)] * 64, 32)] == [32, 32]
    assert len(batches_by_size([(32, 100)] * 70, 32)) == 3  # as few batches as fit them
    sizes = [(32, 60)] * 28 + [(32, 1200)] * 4
    runs = batches_by_size(sizes, 32)
    assert [list(run) for run in runs] == [list(range(28)), list(range(28, 32))]
    # a page's runs: most a few words, some a whole row (log-normal, median 150 columns)
    widths = sorted(np.clip(np.random.default_rng(0).lognormal(np.log(150), 1.0, 200), 20, 4096).astype(int).tolist())
    runs = batches_by_size([(32, width) for width in widths], 32)
    assert [position for run in runs for position in run] == list(range(200))
    assert all(1 <= len(run) <= 32 for run in runs)
    padded = sum(len(run) * widths[run[-1]] for run in runs)
    equal_runs = sum(len(widths[start:start + 32]) * widths[min(start + 31, 199)] for start in range(0, 200, 32))
    assert padded < 0.9 * equal_runs  # the development forms read so: 0.61
    assert batches_by_size([], 32) == []
