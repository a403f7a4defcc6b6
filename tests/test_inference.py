"""The pixel mask, declared once by the image processor (only the resize modes that pad give one), and
recognize() with a transformers `VisionEncoderDecoderModel`, which takes none: the processor of a fixed-size
model gives none."""

import json

import torch
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
