"""Money as integer micro-dollars, with every division exact and rounded once, half-up.

Prices are read as ``Decimal`` from their published decimal strings and never pass through a
float. Arithmetic that divides (GB-months to hours, hours to seconds) is done on exact fractions,
so the only rounding is the one a caller asks for at the end.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal, InvalidOperation
from fractions import Fraction

MICROS_PER_USD = 1_000_000
SECONDS_PER_HOUR = 3600

Quantity = Decimal | int | float | str


def to_decimal(value: Quantity) -> Decimal:
    """A Decimal from a Decimal, int, decimal string or float.

    A float goes through its shortest repr, so ``0.1`` means the 0.1 the caller typed rather
    than the binary fraction closest to it.
    """
    if isinstance(value, bool):
        raise TypeError("a bool is not a quantity")
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        number = Decimal(repr(value))
    elif isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            raise ValueError(f"not a decimal number: {value!r}") from None
    else:
        raise TypeError(f"not a quantity: {value!r}")
    if not number.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return number


def round_half_up(value: Fraction) -> int:
    """The nearest integer to a non-negative exact value, halves rounded up."""
    if value < 0:
        raise ValueError(f"money amounts here are never negative, got {value}")
    return (2 * value.numerator + value.denominator) // (2 * value.denominator)


def usd_to_micros(usd: Decimal | Fraction) -> int:
    """Dollars to micro-dollars, rounded half-up: the one rounding of a line item."""
    return round_half_up(Fraction(usd) * MICROS_PER_USD)


def micros_to_usd(micros: int) -> Decimal:
    return Decimal(micros).scaleb(-6)


def seconds_of(value: Quantity | Fraction | timedelta) -> Fraction:
    """Exact seconds of a number of seconds or a timedelta (to the microsecond)."""
    if isinstance(value, timedelta):
        seconds = Fraction(value // timedelta(microseconds=1), 1_000_000)
    elif isinstance(value, Fraction):
        seconds = value
    else:
        seconds = Fraction(to_decimal(value))
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative, got {value!r}")
    return seconds


def cost_of_seconds(micros_per_hour: int, seconds: Quantity | Fraction | timedelta) -> int:
    """Micro-dollars for running ``seconds`` at an hourly rate: rate x seconds / 3600, exact,
    then rounded once, half-up, to a whole micro-dollar."""
    if isinstance(micros_per_hour, bool) or not isinstance(micros_per_hour, int):
        raise TypeError(f"an hourly rate is an int of micro-dollars, got {micros_per_hour!r}")
    if micros_per_hour < 0:
        raise ValueError(f"an hourly rate cannot be negative, got {micros_per_hour}")
    return round_half_up(micros_per_hour * seconds_of(seconds) / SECONDS_PER_HOUR)


def format_usd(micros: int, places: int = 2) -> str:
    """'$1,234.57': micro-dollars for display, rounded half-up to ``places`` decimals.

    A negative amount (a budget overspent) keeps its sign, '-$3.20'; it never raises."""
    sign = "-" if micros < 0 else ""
    cents = round_half_up(Fraction(abs(micros), 10 ** (6 - places)))
    whole, fraction = divmod(cents, 10**places)
    return f"{sign}${whole:,}.{fraction:0{places}d}" if places else f"{sign}${whole:,}"


# Below a dollar, a figure shows two significant digits, but never more than six decimals.
_SIGNIFICANT_BELOW_A_DOLLAR = 2


def display_places(micros: int, places: int = 2) -> int:
    """How many decimals an amount needs so that it does not read as $0.00: ``places`` from
    a dollar up (and for zero), enough for two significant digits below it (at most six)."""
    size = abs(micros)
    if size == 0 or size >= MICROS_PER_USD:
        return places
    leading_zeros = 6 - len(str(size))
    return max(places, min(6, leading_zeros + _SIGNIFICANT_BELOW_A_DOLLAR))


def display_usd(micros: int, places: int = 2) -> str:
    """An amount as the pages show it: '$1,234.57', '$0.0014' (not '$0.00'), '-$3.20'.

    Trailing zeros beyond ``places`` are dropped ('$0.005', not '$0.0050'), so one amount
    reads the same in every panel whatever precision the panel asked for."""
    needed = display_places(micros, places)
    text = format_usd(micros, needed)
    if needed > places:
        text = text.rstrip("0")
        whole, _, fraction = text.partition(".")
        text = f"{whole}.{fraction.ljust(places, '0')}"
    return text
