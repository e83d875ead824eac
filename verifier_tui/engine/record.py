"""``@record``: the part of ``@dataclass`` the engine's plain data uses.

Kept because it pays its way: ``dataclasses`` brings ``inspect`` and ``ast``
along and generates and compiles each class's methods at import; the modules
``verifier-tui run`` imports took about 50 ms longer to import with
``@dataclass`` in its place (``slots=True`` makes a second class each: more).

What a record gets: ``__init__`` taking the fields in order, positionally or
by name, with their defaults (``field(default_factory=...)`` for a fresh list
or dict per instance), a subclass's after its base's; ``__repr__``;
``__eq__``; and when ``frozen``, no assignment and a ``__hash__``.
:func:`replace` copies one with some fields changed, :func:`narrowed` gives it as
one of its bases, and :func:`as_json` gives its fields as a JSON document holds
them. Type checkers see ``@dataclass`` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["AsJson", "as_json", "field", "narrowed", "record", "replace"]

if TYPE_CHECKING:
    from dataclasses import dataclass as record
    from dataclasses import field, replace
    from typing import Any, TypeVar

    Base = TypeVar("Base")

    def as_json(obj: Any, /, **more: Any) -> dict[str, Any]: ...
    def narrowed(obj: Base, base: type[Base], /) -> Base: ...

else:

    class FrozenInstanceError(AttributeError):
        """Assigning to a field of a frozen record."""

    class _Factory:
        __slots__ = ("make",)

        def __init__(self, make):
            self.make = make

    def field(*, default_factory):
        """``dataclasses.field(default_factory=...)``."""
        return _Factory(default_factory)

    def record(cls=None, /, *, frozen=False):
        """A class decorator: see the module's docstring."""

        def wrap(cls):
            own = tuple(cls.__dict__.get("__annotations__", {}))
            own_defaults = {n: cls.__dict__[n] for n in own if n in cls.__dict__}
            for name, value in own_defaults.items():
                if isinstance(value, _Factory):
                    delattr(cls, name)
            # a record's subclass: the base's fields first, as a dataclass's
            names = tuple(n for n in getattr(cls, "__record_fields__", ()) if n not in own) + own
            defaults = {**getattr(cls, "__record_defaults__", {}), **own_defaults}
            cls.__init__ = _init(names, defaults, cls.__qualname__)
            cls.__repr__ = _repr(names, cls.__qualname__)
            cls.__eq__ = _eq(names)
            cls.__record_fields__ = names
            cls.__record_defaults__ = defaults
            if frozen:
                _freeze(cls, names)
            else:
                cls.__hash__ = None  # mutable and compared by value: unhashable, as a dataclass
            return cls

        return wrap if cls is None else wrap(cls)

    def _init(names, defaults, qualname):
        known = frozenset(names)

        def __init__(self, *args, **kwargs):
            if len(args) > len(names):
                raise TypeError(f"{qualname}() takes {len(names)} arguments but {len(args)} were given")
            values = dict(zip(names, args, strict=False))  # the rest come by keyword or default
            for key in kwargs:
                if key not in known:
                    raise TypeError(f"{qualname}() got an unexpected keyword argument {key!r}")
                if key in values:
                    raise TypeError(f"{qualname}() got multiple values for argument {key!r}")
            values.update(kwargs)
            if len(values) < len(names):
                for name in names:
                    if name in values:
                        continue
                    if name not in defaults:
                        raise TypeError(f"{qualname}() missing required argument: {name!r}")
                    default = defaults[name]
                    values[name] = default.make() if isinstance(default, _Factory) else default
            # Straight into the instance's dict, at once (no field is a
            # descriptor, and a frozen record's __setattr__ refuses): test JOB
            # builds about a hundred records a trial.
            self.__dict__.update(values)

        return __init__

    def _repr(names, qualname):
        def __repr__(self):
            return f"{qualname}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"

        return __repr__

    def _eq(names):
        def __eq__(self, other):
            if other.__class__ is not self.__class__:
                return NotImplemented
            return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

        return __eq__

    def _freeze(cls, names):
        def __setattr__(self, name, value):
            raise FrozenInstanceError(f"cannot assign to field {name!r}")

        def __delattr__(self, name):
            raise FrozenInstanceError(f"cannot delete field {name!r}")

        def __hash__(self):
            return hash(tuple(getattr(self, n) for n in names))

        cls.__setattr__ = __setattr__
        cls.__delattr__ = __delattr__
        cls.__hash__ = __hash__

    def replace(obj, /, **changes):
        """A copy of a record with some fields changed (``dataclasses.replace``)."""
        values = {name: getattr(obj, name) for name in obj.__record_fields__}
        values.update(changes)
        return type(obj)(**values)

    def narrowed(obj, base, /):
        """``obj`` as a ``base`` of its class, with that base's fields alone."""
        return base(**{name: getattr(obj, name) for name in base.__record_fields__})

    def as_json(obj, /, **more):
        """A record's fields by name, then ``more``: a tuple or list as a list,
        a record inside as its own ``to_json()``."""
        document = {name: _plain(getattr(obj, name)) for name in obj.__record_fields__}
        document.update(more)
        return document

    def _plain(value):
        if isinstance(value, (tuple, list)):
            return [_plain(item) for item in value]
        return value.to_json() if hasattr(value, "__record_fields__") else value


class AsJson:
    """A record whose JSON document is its fields as :func:`as_json` gives them."""

    def to_json(self) -> dict[str, Any]:
        return as_json(self)
