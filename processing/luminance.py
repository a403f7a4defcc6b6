"""The grey a text image is read by, where PIL's conversions would lose its text: integer images read at their own bit
depth (a 12-bit scan stored in 16 bits is not all but black), and colour images whose text differs from its ground in
colour far more than in brightness read along their colours' main axis (red on a blue of like brightness).

NumPy and Pillow only: textrec's image processor, a Hub folder's copy of it and the ONNX reader (`textrec_onnx.py`,
which finds this file beside it) load images alike.
"""

import numpy as np
from PIL import Image

INTEGER_DEPTHS = (8, 10, 12, 14, 16)
"""The bit depths an image stored in 16-bit integers may hold: a scanner's or camera's 10, 12 or 14 bits are stored
so, and read at 65535 their text would lie within the darkest 6% of grey levels."""


def full_scale(high: int) -> int:
    """The white of an integer image whose largest value is `high`: that of the smallest `INTEGER_DEPTHS` depth
    holding it (255 for an 8-bit image converted, 4095 for a 12-bit scan, 65535 for 16 bits)."""
    return next((2**depth - 1 for depth in INTEGER_DEPTHS if high <= 2**depth - 1), 65535)


LOW_LUMINANCE_CONTRAST = 40
"""Grey levels between the 1st and 99th percentiles of a colour image's luminance under which its colours are looked
at (`colour_contrast_grey`): above it luminance keeps the text, as it does for nearly every photograph. Of the 1,030
real scene-word development crops, 3 lie under 40 and read better by their colours (`crnn-lines`: `AT` -> `ATM`,
`Looadg` -> `Colorado`; the third wrong both ways); the 3 at 44-47 read better by luminance (`AS` -> `At`)."""
COLOUR_CONTRAST_GAIN = 2.0
"""How many times more contrast a colour image's main colour axis must hold than its luminance to replace it."""


def colour_contrast_grey(image: Image.Image) -> Image.Image | None:
    """An RGB image as the grey of its colours' main axis (their first principal component), where its luminance
    holds under `LOW_LUMINANCE_CONTRAST` grey levels and that axis at least `COLOUR_CONTRAST_GAIN` times as much: text
    that differs from its ground in colour and hardly in brightness (red on blue, as a sign is painted), which
    luminance would all but erase. The axis is signed to follow luminance (what is darker stays darker where
    brightness tells them apart at all) and centred on its mean grey. None where luminance serves."""
    rgb = np.asarray(image, dtype=np.float32)
    step = max(1, round((rgb.shape[0] * rgb.shape[1] / 250_000) ** 0.5))  # percentiles of a sample of a large image
    weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)
    sample = rgb[::step, ::step].reshape(-1, 3)
    luma = sample @ weights
    low, high = np.percentile(luma, (1, 99))
    if high - low >= LOW_LUMINANCE_CONTRAST:
        return None
    centred = sample - sample.mean(axis=0)
    axis = np.linalg.eigh(centred.T @ centred)[1][:, -1]
    if np.dot(centred @ axis, luma - luma.mean()) < 0:
        axis = -axis
    axis_low, axis_high = np.percentile(centred @ axis, (1, 99))
    if axis_high - axis_low < COLOUR_CONTRAST_GAIN * max(high - low, 1.0):
        return None
    grey = (rgb.reshape(-1, 3) - sample.mean(axis=0)) @ axis + float(luma.mean())
    return Image.fromarray(np.clip(np.round(grey), 0, 255).astype(np.uint8).reshape(rgb.shape[:2]))
