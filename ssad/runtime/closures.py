"""The value of a nested `def` or `lambda` at run time: a template and what it captured.

See `frontend.closures` for how a nested function becomes a template.
"""


class Closure:
    """A function made inside a differentiated function: a template and its captured values."""

    def __init__(self, template, captured, name):
        self.template = template
        self.captured = captured
        self.__name__ = name
        self.__qualname__ = name
        for key, value in captured.items():
            if value is _SELF:  # the function refers to itself (recursion)
                captured[key] = self

    def __call__(self, *args, **kwargs):
        return self.template(*args, **self.captured, **kwargs)

    def __repr__(self):
        return f"<ssad closure {self.__name__} capturing {', '.join(self.captured) or 'nothing'}>"


class _Self:
    def __repr__(self):
        return "SELF"


_SELF = _Self()


def closure(template, **captured):
    """The value of a nested `def` or `lambda`: `template` with `captured` values."""
    return Closure(template, captured, template.__name__.rsplit("_template", 1)[0])


SELF = _SELF
