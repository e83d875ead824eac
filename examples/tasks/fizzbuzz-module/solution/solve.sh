#!/usr/bin/env bash
# Reference solution: a module that passes every test and every style check.
set -eu
cat > /app/fizzbuzz.py <<'PY'
"""FizzBuzz, one number at a time."""


def fizzbuzz(n: int) -> str:
    """Return FizzBuzz's word for n, or n itself as text."""
    if n % 15 == 0:
        return "FizzBuzz"
    if n % 3 == 0:
        return "Fizz"
    if n % 5 == 0:
        return "Buzz"
    return str(n)
PY
