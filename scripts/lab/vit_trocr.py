"""The ViT+TrOCR system of `benchmark_recognition`: a transformers `VisionEncoderDecoderModel` (a `ViTModel` and
a `TrOCRForCausalLM` decoder) sized after textrec's self-attention model, trained from scratch."""

from transformers import TrOCRConfig, ViTConfig, ViTModel, VisionEncoderDecoderConfig, VisionEncoderDecoderModel

from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor, build_char_tokenizer
from textrec.processing.training import special_token_ids
from textrec.processing.training.architectures import LINE_IMAGES

VIT_TROCR_DESCRIPTION = (
    "A ViT (patches half the line's height tall and 4 pixels wide) encodes the fixed-size line image; a TrOCR "
    "transformer decoder reads it (transformers' VisionEncoderDecoderModel), trained from scratch."
)
MAX_PARAMETER_RATIO = 1.15
"""The ViT+TrOCR model must have at most this many times the self-attention model's parameters."""


def build_vit_trocr_processor(max_target_length: int) -> TextRecognitionProcessor:
    """Fixed-size grey images (height and width of the self-attention model's widest line) and the
    default character tokenizer, as textrec-train uses."""
    image_processor = TextRecognitionImageProcessor(
        resize_mode="fixed", height=LINE_IMAGES["height"], width=LINE_IMAGES["max_width"]
    )
    return TextRecognitionProcessor(image_processor, build_char_tokenizer(), max_label_length=max_target_length)


def build_vit_trocr(
    reference_config, processor: TextRecognitionProcessor, vit_layers: int
) -> VisionEncoderDecoderModel:
    """A randomly initialised ViT encoder + TrOCR decoder sized after the self-attention `reference_config`."""
    image_processor, tokenizer = processor.image_processor, processor.tokenizer
    height, width = image_processor.height, image_processor.width
    encoder_config = ViTConfig(
        hidden_size=reference_config.hidden_size,
        num_hidden_layers=vit_layers,
        num_attention_heads=reference_config.num_attention_heads,
        intermediate_size=reference_config.ffn_dim,
        image_size=(height, width),
        patch_size=(height // 2, 4),
        num_channels=image_processor.num_channels,
    )
    token_ids = special_token_ids(tokenizer)
    decoder_config = TrOCRConfig(
        vocab_size=len(tokenizer),
        d_model=reference_config.hidden_size,
        decoder_layers=reference_config.decoder_layers,
        decoder_attention_heads=reference_config.num_attention_heads,
        decoder_ffn_dim=reference_config.ffn_dim,
        max_position_embeddings=reference_config.max_target_length,
        **token_ids,
    )
    config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder_config, decoder_config)
    for name, value in token_ids.items():
        setattr(config, name, value)
    # ViT's pooler would be an unused parameter block: leave it out.
    model = VisionEncoderDecoderModel(config=config, encoder=ViTModel(encoder_config, add_pooling_layer=False))
    for name, value in token_ids.items():
        setattr(model.generation_config, name, value)
    model.generation_config.max_new_tokens = reference_config.max_target_length
    return model


def choose_vit_layers(reference_config, processor, target: int) -> int:
    """The smallest ViT depth whose ViT+TrOCR model has at least `target` parameters."""
    for layers in range(1, 25):
        if build_vit_trocr(reference_config, processor, layers).num_parameters() >= target:
            return layers
    raise ValueError(f"no ViT depth up to 24 layers reaches {target:,} parameters")
