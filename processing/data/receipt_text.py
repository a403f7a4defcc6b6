"""Receipt-like text lines: what till receipts and shop invoices print, for the print reader's character n-gram.

Debian's fortunes, the n-gram's running text, seldom write what a receipt prints on most of its lines: totals and taxes
with their amounts (`TOTAL INCL. GST : RM 12.50`), item lines with quantities and units, invoice and receipt numbers,
dates and times, telephone numbers, a shop's name with its company form (`SDN BHD`, `PTE LTD`, `GMBH`), its address
(`NO. 12, JALAN ...`, `... STREET`) and the closing lines (`THANK YOU. PLEASE COME AGAIN.`). Without them the n-gram
argues against a receipt's own words where its print is faint (dot-matrix `GST` read `BST`, `RM` read `RH`).

The vocabulary spans several countries' receipts (English-speaking, Malaysian and Singaporean, European): their
currencies, taxes (GST, SST, VAT), company forms and address words. Lines are written in capitals, as most receipts
print, or in title case (`CAPITALS_SHARE`). Every random decision is drawn from the generator passed in.
"""

from __future__ import annotations

import numpy as np

CAPITALS_SHARE = 0.8
"""The share of receipt lines written in capitals; the others in title case (`Total`, `Thank You`)."""

SHOP_KINDS = ("MART", "STORE", "SUPERMARKET", "MINI MARKET", "HARDWARE", "STATIONERY", "BOOKS", "RESTAURANT", "CAFE",
              "BAKERY", "PHARMACY", "TRADING", "ENTERPRISE", "KITCHEN", "FOOD", "BEVERAGE", "ELECTRICAL",
              "GENERAL STORE", "DELI", "GRILL", "BOOKSTORE", "OPTICAL", "FLORIST", "HOME CENTRE", "PETROL STATION")
COMPANY_FORMS = ("SDN BHD", "SDN. BHD.", "S/B", "BHD", "PTE LTD", "PTE. LTD.", "LTD", "LIMITED", "INC", "INC.", "LLC",
                 "CO.", "& CO", "GMBH", "AG", "SARL", "CORP", "PLC")
SHOP_NAMES = ("TAN", "LEE", "LIM", "ONG", "WONG", "CHAN", "KUMAR", "SMITH", "BROWN", "GARCIA", "MUELLER", "ROSSI",
              "NGUYEN", "AHMAD", "ALI", "KIM", "PARK", "SANTOS", "SILVA", "KHAN", "GOLDEN", "SUNRISE", "EVERGREEN",
              "UNITED", "STAR", "CITY", "ROYAL", "NEW", "GREEN", "PACIFIC")
STREET_WORDS = ("JALAN", "JLN", "TAMAN", "LORONG", "PERSIARAN", "STREET", "ST.", "ROAD", "RD", "AVENUE", "AVE", "BLVD",
                "LANE", "DRIVE", "STRASSE", "RUE", "VIA", "CALLE", "HIGH STREET", "SQUARE")
PLACES = ("KUALA LUMPUR", "SELANGOR", "PETALING JAYA", "SHAH ALAM", "JOHOR BAHRU", "PENANG", "SINGAPORE", "LONDON",
          "NEW YORK", "CHICAGO", "TORONTO", "SYDNEY", "BERLIN", "PARIS", "MANILA", "JAKARTA", "BANGKOK",
          "SELANGOR DARUL EHSAN", "MANCHESTER", "DUBLIN")
ITEMS = ("RICE", "CHICKEN", "COKE", "MILK", "BREAD", "EGG", "SUGAR", "COFFEE", "TEA", "WATER", "MINERAL WATER",
         "NOODLE", "SOAP", "TISSUE", "PEN", "PAPER", "A4 PAPER", "BATTERY", "TAPE", "GLUE", "SCREW", "BOLT", "PAINT",
         "BRUSH", "CABLE", "BULB", "SHAMPOO", "TOOTHPASTE", "BISCUIT", "CHOCOLATE", "BEER", "JUICE", "ICE CREAM",
         "FRIED RICE", "SET MEAL", "CURRY", "SOUP", "SALAD", "BURGER", "FRIES", "PIZZA", "SANDWICH", "CAKE", "BUN",
         "ROLL", "ORANGE", "APPLE", "BANANA", "NOTEBOOK", "ENVELOPE", "FILE", "MARKER", "STAPLER", "CHARGER")
UNITS = ("KG", "G", "ML", "L", "PCS", "PC", "EA", "PKT", "BOX", "CTN", "BTL", "OZ", "LB", "M", "CM")
CURRENCIES = ("RM", "$", "USD", "SGD", "MYR", "EUR", "GBP", "£", "€", "S$")
AMOUNT_LABELS = (
    "TOTAL", "SUBTOTAL", "SUB TOTAL", "SUB-TOTAL", "GRAND TOTAL", "TOTAL AMOUNT", "TOTAL AMT", "NET TOTAL", "TOTAL QTY",
    "TOTAL ITEMS", "TOTAL SALES", "TOTAL INCL. GST", "TOTAL EXCL. GST", "TOTAL INCLUSIVE GST",
    "TOTAL SALES (EXCLUDING GST)", "TOTAL SALES (INCLUSIVE OF GST)", "GST", "GST 6%", "GST @ 6%", "GST @6%", "SST",
    "SST 6%", "VAT", "VAT 20%", "TAX", "SALES TAX", "SERVICE CHARGE", "SERVICE TAX", "SVC CHG 10%", "ROUNDING",
    "ROUNDING ADJ", "ROUNDING ADJUSTMENT", "ROUNDED TOTAL", "TOTAL ROUNDED", "CASH", "CHANGE", "CHANGE DUE", "TENDER",
    "PAID", "BALANCE", "BALANCE DUE", "AMOUNT", "AMOUNT DUE", "AMT", "DISCOUNT", "DISC", "MEMBER DISCOUNT",
    "CREDIT CARD", "VISA", "MASTERCARD", "DEBIT", "CARD", "PAYMENT", "DEPOSIT", "QTY", "PRICE", "UNIT PRICE", "NET AMT",
    "GROSS AMT", "TAX AMT", "AMOUNT (RM)", "TAX (RM)", "AMT (RM)", "PRICE (RM)", "AMOUNT(RM)", "TAX(RM)", "TIP",
)
FIELD_LABELS = (
    "INVOICE NO", "INV NO", "RECEIPT NO", "RECEIPT #", "BILL NO", "DOC NO", "DOCUMENT NO", "ORDER NO", "TABLE",
    "TABLE NO", "CASHIER", "SERVER", "COUNTER", "TERMINAL", "POS", "TRANS", "REF", "REF NO", "AUTH CODE",
    "APPROVAL CODE", "CARD NO", "MEMBER NO", "MEMBER", "POINTS", "DATE", "TIME", "TEL", "TEL NO", "FAX", "PHONE", "H/P",
    "GST REG NO", "GST ID", "GST ID NO", "CO. REG. NO", "CO REG NO", "COMPANY NO", "ROC NO", "VAT NO", "TAX ID",
    "SST REG NO", "BUSINESS REG NO", "STORE", "STAFF", "SALESPERSON", "CUSTOMER", "ACCOUNT", "PAX",
)
HEADINGS = ("TAX INVOICE", "SIMPLIFIED TAX INVOICE", "INVOICE", "RECEIPT", "OFFICIAL RECEIPT", "CASH RECEIPT",
            "CASH BILL", "SALES RECEIPT", "BILL", "CUSTOMER COPY", "MERCHANT COPY", "DUPLICATE", "REPRINT",
            "GST SUMMARY", "TAX SUMMARY", "SUMMARY", "ITEM", "DESCRIPTION", "ITEM DESCRIPTION", "QTY PRICE AMOUNT",
            "QTY U/PRICE AMOUNT", "CASH SALE", "CREDIT SALE", "DELIVERY ORDER", "QUOTATION")
CLOSING_LINES = ("THANK YOU", "THANK YOU!", "THANK YOU. PLEASE COME AGAIN.", "THANK YOU & PLEASE COME AGAIN",
                 "PLEASE COME AGAIN", "HAVE A NICE DAY", "GOODS SOLD ARE NOT RETURNABLE",
                 "GOODS SOLD ARE NOT RETURNABLE OR EXCHANGEABLE", "NO REFUND", "NO EXCHANGE",
                 "PLEASE KEEP THIS RECEIPT", "KEEP YOUR RECEIPT", "FOR ANY ENQUIRY, PLEASE CONTACT US",
                 "PRICES INCLUDE GST", "ALL PRICES INCLUSIVE OF GST", "SERVED BY", "OPENING HOURS", "OPEN DAILY",
                 "THANK YOU FOR SHOPPING WITH US", "THANK YOU FOR YOUR PURCHASE", "SEE YOU AGAIN", "VISIT US AT")
TAX_CODES = ("SR", "ZR", "S", "Z", "T", "E", "A", "B")
MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
SEPARATORS = (" : ", ": ", ":", " :", " ")
"""How a receipt sets a label before its value."""


def _pick(rng: np.random.Generator, choices: tuple[str, ...]) -> str:
    return choices[int(rng.integers(len(choices)))]


def _amount(rng: np.random.Generator) -> str:
    value = 10 ** rng.uniform(-1, 3.3)
    return f"{value:,.2f}" if rng.random() < 0.2 else f"{value:.2f}"


def _date(rng: np.random.Generator) -> str:
    day, month, year = int(rng.integers(1, 29)), int(rng.integers(1, 13)), int(rng.integers(2000, 2030))
    formats = (f"{day:02d}/{month:02d}/{year}", f"{day:02d}-{month:02d}-{year}", f"{day:02d}/{month:02d}/{year % 100:02d}",
               f"{year}-{month:02d}-{day:02d}", f"{day:02d}.{month:02d}.{year}", f"{day:02d} {MONTHS[month - 1]} {year}",
               f"{month:02d}/{day:02d}/{year}")
    return formats[int(rng.integers(len(formats)))]


def _time(rng: np.random.Generator) -> str:
    hour, minute, second = int(rng.integers(24)), int(rng.integers(60)), int(rng.integers(60))
    half = "PM" if hour >= 12 else "AM"
    formats = (f"{hour:02d}:{minute:02d}", f"{hour:02d}:{minute:02d}:{second:02d}", f"{hour % 12 or 12}:{minute:02d} {half}",
               f"{hour % 12 or 12}:{minute:02d}:{second:02d} {half}")
    return formats[int(rng.integers(len(formats)))]


def _code(rng: np.random.Generator) -> str:
    letters = "".join(_pick(rng, tuple("ABCDEFGHJKLMNPQRSTUVWXYZ")) for _ in range(int(rng.integers(0, 4))))
    return letters + "".join(str(digit) for digit in rng.integers(0, 10, size=int(rng.integers(4, 13))))


def _telephone(rng: np.random.Generator) -> str:
    formats = (f"0{rng.integers(1, 10)}-{rng.integers(1000, 10000)} {rng.integers(1000, 10000)}",
               f"0{rng.integers(10, 20)}-{rng.integers(100, 1000)} {rng.integers(1000, 10000)}",
               f"({rng.integers(100, 1000)}) {rng.integers(100, 1000)}-{rng.integers(1000, 10000)}",
               f"+{rng.integers(1, 100)} {rng.integers(10, 100)} {rng.integers(1000, 10000)} {rng.integers(1000, 10000)}")
    return formats[int(rng.integers(len(formats)))]


def _field_value(rng: np.random.Generator) -> str:
    kind = int(rng.integers(5))
    return (_code(rng), _telephone(rng), _date(rng), _time(rng), str(int(rng.integers(1, 100))))[kind]


def _capitals_line(rng: np.random.Generator) -> str:
    kind = int(rng.integers(12))
    if kind == 0:  # the shop
        return f"{_pick(rng, SHOP_NAMES)} {_pick(rng, SHOP_KINDS)} {_pick(rng, COMPANY_FORMS)}"
    if kind == 1:  # its street
        return f"NO. {rng.integers(1, 300)}, {_pick(rng, STREET_WORDS)} {_pick(rng, SHOP_NAMES)} {rng.integers(1, 30)},"
    if kind == 2:  # its town
        return f"{rng.integers(10000, 100000)} {_pick(rng, PLACES)}"
    if kind == 3:  # a field and its value
        return f"{_pick(rng, FIELD_LABELS)}{_pick(rng, SEPARATORS)}{_field_value(rng)}"
    if kind == 4:  # an amount
        currency = f"{_pick(rng, CURRENCIES)} " if rng.random() < 0.4 else ""
        return f"{_pick(rng, AMOUNT_LABELS)}{_pick(rng, SEPARATORS)}{currency}{_amount(rng)}"
    if kind == 5:  # a quantity times a unit price
        if rng.random() < 0.5:
            return f"{rng.integers(1, 10)} X {_amount(rng)}"
        return f"{rng.integers(1, 10)} {_pick(rng, ('X', 'x', '@'))} {_amount(rng)} {_amount(rng)}"
    if kind == 6:  # an item by its size
        price = f" {_amount(rng)}" if rng.random() < 0.5 else ""
        return f"{_pick(rng, ITEMS)} {rng.integers(1, 1000)}{_pick(rng, UNITS)}{price}"
    if kind == 7:  # an item by its code
        return f"{_code(rng)} {_pick(rng, ITEMS)}"
    if kind == 8:
        return _pick(rng, HEADINGS)
    if kind == 9:
        return _pick(rng, CLOSING_LINES)
    if kind == 10:
        return f"{_date(rng)} {_time(rng)}"
    if rng.random() < 0.5:  # a tax summary's row
        return f"{_pick(rng, TAX_CODES)} {_amount(rng)} {_amount(rng)}"
    return f"{_pick(rng, AMOUNT_LABELS)} {_pick(rng, CURRENCIES)}"


def sample_receipt_line(rng: np.random.Generator) -> str:
    """One receipt-like line (see the module docstring): in capitals, or in title case (`CAPITALS_SHARE`)."""
    line = _capitals_line(rng)
    return line if rng.random() < CAPITALS_SHARE else line.title()


def receipt_lines(count: int, seed: int = 0) -> list[str]:
    """`count` receipt-like lines drawn from a generator seeded with `seed` (the same lines for the same seed)."""
    if count < 0:
        raise ValueError(f"count must be at least 0, got {count}")
    rng = np.random.default_rng(seed)
    return [sample_receipt_line(rng) for _ in range(count)]
