"""Reading images with an attention recognizer and keeping, per decoding step, what it looked at.

Used by the sharp-attention study (accuracy and attention entropy) and by its figure script.
"""

from dataclasses import dataclass

import numpy as np
import torch
from tqdm.auto import tqdm


@dataclass
class AttentionReadout:
    """One image as the model read it; `steps` runs up to and including the end token.

    Args:
        text: the decoded prediction.
        tokens: the token predicted at each step (the end token included).
        attention: `(steps, columns)` the attention weights over the image's valid columns.
        indices: `(steps,)` the column each step read (hard and sharp attention), else None.
        patches: `(steps, channels, height, width)` the sharpener's patches, in pixel_values' values (sharp).
        corners: `(steps, 4, 2)` (x, y) pixel corners of the patches in the image (sharp).
        pixel_values: `(channels, height, width)` the processed image.
    """

    text: str
    tokens: list[str]
    attention: np.ndarray
    indices: np.ndarray | None
    patches: np.ndarray | None
    corners: np.ndarray | None
    pixel_values: np.ndarray


def _steps_until_end(predicted: list[int], eos_token_id: int) -> int:
    return predicted.index(eos_token_id) + 1 if eos_token_id in predicted else len(predicted)


@torch.inference_mode()
def read_with_attention(
    model, processor, images: list, batch_size: int = 64, progress: bool = True
) -> list[AttentionReadout]:
    """Greedy `generate()`, then one teacher-forced pass over the generated tokens with
    `output_attentions=True` (in eval mode both take the same, most probable, columns)."""
    readouts = []
    eos_token_id = model.config.eos_token_id
    for begin in tqdm(range(0, len(images), batch_size), desc="reading", unit="batch", disable=not progress):
        inputs = processor(images=images[begin : begin + batch_size], return_tensors="pt").to(model.device)
        encoder_outputs = model.get_encoder()(inputs["pixel_values"], pixel_mask=inputs.get("pixel_mask"))
        sequences = model.generate(encoder_outputs=encoder_outputs, do_sample=False, num_beams=1, decoding="attention")
        output = model(encoder_outputs=encoder_outputs, decoder_input_ids=sequences[:, :-1], output_attentions=True)
        texts = processor.batch_decode(sequences, skip_special_tokens=True)
        mask = encoder_outputs.attention_mask
        for row, text in enumerate(texts):
            predicted = sequences[row, 1:].tolist()
            steps = _steps_until_end(predicted, eos_token_id)
            columns = int(mask[row].sum()) if mask is not None else output.attention_weights.shape[-1]
            readouts.append(
                AttentionReadout(
                    text=text,
                    tokens=processor.tokenizer.convert_ids_to_tokens(predicted[:steps]),
                    attention=output.attention_weights[row, :steps, :columns].float().numpy(),
                    indices=None if output.attention_indices is None else output.attention_indices[row, :steps].numpy(),
                    patches=None if output.patches is None else output.patches[row, :steps].float().numpy(),
                    corners=None if output.patch_corners is None else output.patch_corners[row, :steps].numpy(),
                    pixel_values=inputs["pixel_values"][row].float().numpy(),
                )
            )
    return readouts
