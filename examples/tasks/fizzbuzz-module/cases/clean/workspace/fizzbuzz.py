"""FizzBuzz for a single number."""


def fizzbuzz(n: int) -> str:
    """Return "Fizz", "Buzz", "FizzBuzz" or the number itself as text."""
    word = ""
    if n % 3 == 0:
        word += "Fizz"
    if n % 5 == 0:
        word += "Buzz"
    return word or str(n)
