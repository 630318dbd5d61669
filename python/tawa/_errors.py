"""Errors the package raises besides the built-in ones."""


class Unsupported(NotImplementedError, AttributeError):
    """A part of Triton's API that tawa does not provide. Also an
    AttributeError, so that `hasattr(triton, "x")` answers False instead of
    raising."""


def unsupported(what: str, why: str = "") -> Unsupported:
    msg = f"{what} is not supported by tawa"
    if why:
        msg += f": {why}"
    return Unsupported(msg)
