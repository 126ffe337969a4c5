"""The standard library's callables that hold or call a function, written as Python.

The evaluator reads no module of the standard library (it is not on the search paths,
and much of it is C). Most of its callables are rows of the tables (``library``'s
specials, ``jax_api``'s rows), but a callable whose behaviour is a few lines of Python
is clearest written as those lines: a **model**, run by the evaluator like any module.
``weakref.ref(f)()`` gives ``f`` back because the model's ``ref.__call__`` returns what
its ``__init__`` kept.

``MODELS`` maps a module of the standard library to the source of its model. A name the
model defines is what that module's attribute is (``weakref.ref``, ``from contextvars
import ContextVar``); any other name of the module stays a library name (``External``),
as before. A model keeps only what decides which function runs: what a holder gives
back, what a runner calls with which arguments. It does not keep what a weak reference
does when its object dies (the program's functions live as long as their module), nor
what a context does to another thread.

Each model is a module named ``MODEL_PREFIX + module`` (``stdlib model:weakref``): not a
name any import can spell, so a program's module never shadows one. Chains of notes do
not show a model's functions: a user sees ``contextvars.copy_context().run(f, x)`` call
``f`` (``is_model``).

What it does not do: import the modules it models, or replace a special of ``library``
(a name is a model's only when no special or row has it).
"""

from __future__ import annotations

from typing import Final

#: the prefix of a model's module name (not a name an import statement can spell)
MODEL_PREFIX: Final = "stdlib model:"

#: the source of each module's model, by the modelled module's name
MODELS: Final[dict[str, str]] = {
    # contextvars: a variable's value is what was set last, or its default; a context
    # runs a callable with the arguments it is given (docs: contextvars)
    "contextvars": """
_NO_VALUE = object()


class Token:
    def __init__(self, var, old_value):
        self.var = var
        self.old_value = old_value


class ContextVar:
    def __init__(self, name, *, default=_NO_VALUE):
        self.name = name
        self._default = default
        self._value = _NO_VALUE

    def get(self, *default):
        if self._value is not _NO_VALUE:
            return self._value
        if default:
            return default[0]
        if self._default is not _NO_VALUE:
            return self._default
        raise LookupError(self)

    def set(self, value):
        token = Token(self, self._value)
        self._value = value
        return token

    def reset(self, token):
        self._value = token.old_value


class Context:
    def run(self, callable, /, *args, **kwargs):
        return callable(*args, **kwargs)

    def copy(self):
        return Context()


def copy_context():
    return Context()
""",
    # weakref: a reference gives its object back when called; a proxy stands for it;
    # the weak containers hold what a dict or set holds (docs: weakref)
    "weakref": """
class ref:
    def __init__(self, ob, callback=None, /):
        self._ob = ob

    def __call__(self):
        return self._ob


class WeakMethod(ref):
    pass


def proxy(ob, callback=None, /):
    return ob


class WeakValueDictionary(dict):
    pass


class WeakKeyDictionary(dict):
    pass


class WeakSet(set):
    pass
""",
    # types: a mapping proxy is a read-only view of the mapping it is given (docs: types)
    "types": """
def MappingProxyType(mapping):
    return mapping
""",
}


def model_source(module: str) -> tuple[str, bool, str] | None:
    """A ``Loader``'s answer for a model's module name: (path, is_package, source)."""
    if not module.startswith(MODEL_PREFIX):
        return None
    source = MODELS.get(module[len(MODEL_PREFIX) :])
    if source is None:
        return None
    return f"<{module}>", False, source


def is_model(module: str) -> bool:
    """Whether ``module`` is a model's module (its functions are not shown in notes)."""
    return module.startswith(MODEL_PREFIX)
