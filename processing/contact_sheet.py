"""A picture of recognition results: each line image with the expected and the predicted text."""

from PIL import Image, ImageDraw, ImageFont

from .image_processing_text_recognition import load_image


def draw_contact_sheet(
    images: list, references: list[str], predictions: list[str], width: int = 900, line_height: int = 48
) -> Image.Image:
    """Stacks rows of `image | expected | got`; rows whose prediction differs get a red marker.

    Args:
        images: line images (PIL, arrays or paths), one per row.
    """
    font = ImageFont.load_default(size=14)
    row_height = line_height + 40
    sheet = Image.new("RGB", (width, row_height * len(images) + 8), "white")
    draw = ImageDraw.Draw(sheet)
    for row, (image, reference, prediction) in enumerate(zip(images, references, predictions)):
        top = row * row_height + 4
        line = load_image(image).convert("RGB")
        scale = min(line_height / line.height, (width - 16) / line.width)
        line = line.resize((max(1, round(line.width * scale)), max(1, round(line.height * scale))))
        sheet.paste(line, (12, top))
        wrong = reference != prediction
        draw.rectangle((0, top, 6, top + row_height - 8), fill="red" if wrong else "green")
        draw.text((12, top + line_height + 2), f"expected: {reference}", fill="black", font=font)
        draw.text((12, top + line_height + 18), f"     got: {prediction}", fill="red" if wrong else "green", font=font)
    return sheet
