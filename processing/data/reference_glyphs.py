"""Reference glyphs: what each character of a vocabulary looks like, printed clean and centred.

The sharp-attention recognizer can be supervised by an L2 loss between the patch its sharpener cuts
out at each step and the reference glyph of the target character; :func:`reference_glyph_table`
renders that table for a tokenizer, in the values a processor gives its images.
"""

from __future__ import annotations

import os

import numpy as np
import torch
from PIL import Image, ImageDraw, ImageFont

from .fonts import list_fonts

GLYPH_HEIGHT_FRACTION = 0.8
"""The ink height of a digit, as a fraction of the patch height (a digit in a 32-pixel cell is ~26 high)."""


def render_glyph(character: str, height: int, width: int, font_path: str | os.PathLike[str]) -> np.ndarray:
    """One character in black, centred on a white ``height x width`` cell.

    The font size makes a digit's ink ``GLYPH_HEIGHT_FRACTION`` of the height; a character wider than
    the cell is scaled down to fit.

    Returns:
        ``(height, width)`` uint8 array, 255 = paper.
    """
    font = ImageFont.truetype(str(font_path), size=height)
    digit_top, digit_bottom = font.getbbox("0", anchor="ls")[1::2]
    font = ImageFont.truetype(
        str(font_path), size=max(1, round(height * height * GLYPH_HEIGHT_FRACTION / (digit_bottom - digit_top)))
    )
    left, top, right, bottom = font.getbbox(character, anchor="ls")
    canvas = Image.new("L", (max(1, right - left) + 2, max(1, bottom - top) + 2), 255)
    ImageDraw.Draw(canvas).text((1 - left, 1 - top), character, font=font, fill=0, anchor="ls")
    scale = min(1.0, (width - 2) / canvas.width, (height - 2) / canvas.height)
    glyph = canvas.resize(
        (max(1, round(canvas.width * scale)), max(1, round(canvas.height * scale))), Image.Resampling.LANCZOS
    )
    cell = Image.new("L", (width, height), 255)
    cell.paste(glyph, ((width - glyph.width) // 2, (height - glyph.height) // 2))
    return np.asarray(cell)


def reference_glyph_table(
    tokenizer, image_processor, width: int, font_path: str | os.PathLike[str] | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Glyphs for every token of ``tokenizer`` that is one visible character, in the values
    ``image_processor`` gives pixels (inversion, normalisation, channels).

    Args:
        tokenizer: A character tokenizer (``convert_ids_to_tokens``, ``all_special_ids``).
        image_processor: A ``TextRecognitionImageProcessor``; its ``height`` is the glyph height.
        width: The glyph width (the sharpener's patch width).
        font_path: A font file; default the first upright regular-weight print font (name with "Regular")
            that covers the characters, else the first print font that does.

    Returns:
        ``glyphs (vocab_size, num_channels, height, width)`` float32, and ``available (vocab_size,)`` bool.
    """
    vocab_size = len(tokenizer)
    tokens = tokenizer.convert_ids_to_tokens(list(range(vocab_size)))
    special = set(tokenizer.all_special_ids)
    characters = {
        i: token for i, token in enumerate(tokens) if i not in special and len(token) == 1 and not token.isspace()
    }
    if font_path is None:
        fonts = list_fonts("print", charset="".join(characters.values()))
        if not fonts:
            raise ValueError("No installed print font covers the vocabulary; pass font_path.")
        font_path = next((font for font in fonts if "regular" in font.name.lower()), fonts[0])
    height, channels = image_processor.height, image_processor.num_channels
    glyphs = np.zeros((vocab_size, channels, height, width), dtype=np.float32)
    available = np.zeros(vocab_size, dtype=bool)
    mean = np.asarray(image_processor.image_mean, dtype=np.float32)[:, None, None]
    std = np.asarray(image_processor.image_std, dtype=np.float32)[:, None, None]
    for index, character in characters.items():
        values = render_glyph(character, height, width, font_path).astype(np.float32)[None] / 255.0
        if image_processor.invert:
            values = 1.0 - values
        if image_processor.do_normalize:
            values = (values - mean) / std
        glyphs[index] = np.broadcast_to(values, (channels, height, width))
        available[index] = True
    return torch.from_numpy(glyphs), torch.from_numpy(available)
