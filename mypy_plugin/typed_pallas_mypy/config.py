"""The plugin's configuration: which platforms each module may lower for.

Reads, in this order (the first source that holds a typed-pallas section wins):

1. the file named by the environment variable ``TYPED_PALLAS_CONFIG`` (a
   ``pyproject.toml`` or an ini file; the ``typed-pallas check`` CLI sets it);
2. mypy's own config file (``options.config_file``): ``[tool.typed-pallas]`` when it is
   TOML, ``[mypy.plugins.typed-pallas]`` when it is ``mypy.ini``/``.mypy.ini``/``setup.cfg``;
3. the files of :data:`CONFIG_FILE_NAMES` (mypy's own names and order: ``mypy.ini``,
   ``.mypy.ini``, ``pyproject.toml``, ``setup.cfg``) in the folder of mypy's config
   file, then in the current folder and each parent up to the repository root (a folder
   holding ``.git`` or ``.hg``), as mypy itself searches. mypy names ``pyproject.toml``
   as its config file only when it holds ``[tool.mypy]``, and ``setup.cfg`` only when
   it holds ``[mypy]``, so the plugin must look for them itself.

:func:`find_config_file` is that search (steps 2 and 3); the plugin (through
:func:`load_config`) and the ``typed-pallas check`` command both use it, so they find
the same file. A file that cannot be read, or whose typed-pallas section is wrong,
stops the search with a :class:`ConfigError`.

Then ``TYPED_PALLAS_PLATFORMS`` (a comma list, e.g. ``tpu`` or ``cuda,rocm``), when set
and not empty, replaces the top-level ``platforms``.

Keys (pyproject.toml)::

    [tool.typed-pallas]
    platforms = ["tpu"]                # the platforms this code may lower for

    [[tool.typed-pallas.overrides]]
    module = ["mypkg.gpu.*", "mypkg.triton_ops"]
    platforms = ["gpu"]

``check_opted_out = true`` (top level; ``true``/``false`` in an ini file too) is read by
``typed-pallas check`` only, as its ``--check-opted-out``: the plugin's answers do not
depend on it, so it is no part of :meth:`PluginConfig.fingerprint`.

The same in an ini file::

    [mypy.plugins.typed-pallas]
    platforms = tpu

    [mypy.plugins.typed-pallas.overrides.mypkg.gpu.*,mypkg.triton_ops]
    platforms = gpu

Platform names are those of :data:`typed_pallas._platforms.LOWERINGS_OF_NAME`:
``tpu``, ``cuda``, ``rocm``, and ``gpu`` (= ``cuda`` + ``rocm``). Module patterns and
their precedence are mypy's own: a concrete module name beats every pattern;
unstructured patterns (``a.*.b``) beat structured ones (``a.b.*``), the later one winning
among them; among structured patterns the most specific wins; ``a.b.*`` also matches
``a.b`` itself.

Bad configuration stops mypy at once (exit status 2) with a message that says what is
wrong, where, and what to write instead, prefixed ``(typed-pallas) mypy: error:`` like
mypy's own config errors.

What it does not do: import jax or decide what a call means; it only answers
:meth:`PluginConfig.platforms_for` (and, for notes, :meth:`PluginConfig.origin_for`:
which entry of which file, or the environment, configured a module).
"""

from __future__ import annotations

import configparser
import os
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from typing_extensions import override

from typed_pallas._platforms import LOWERINGS_OF_NAME

if TYPE_CHECKING:
    from mypy.options import Options

    from typed_pallas_mypy.config_entries import Override, Registry

__all__ = [
    "CONFIG_ENV",
    "CONFIG_FILE_NAMES",
    "CONFIG_PLATFORM_NAMES",
    "PLATFORMS_ENV",
    "ConfigError",
    "PluginConfig",
    "candidate_files",
    "find_config_file",
    "load_config",
    "package_version",
    "read_config",
    "resolve_config",
]

#: Environment variable: a comma list of platforms replacing the top-level ``platforms``.
PLATFORMS_ENV: Final = "TYPED_PALLAS_PLATFORMS"
#: Environment variable: the file to read the configuration from (skips discovery).
CONFIG_ENV: Final = "TYPED_PALLAS_CONFIG"

TOML_TABLE: Final = "tool.typed-pallas"
INI_SECTION: Final = "mypy.plugins.typed-pallas"
INI_OVERRIDE_PREFIX: Final = INI_SECTION + ".overrides."
#: The files searched for in each folder, in mypy's own order.
CONFIG_FILE_NAMES: Final = ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg")
#: A folder holding one of these is a repository root: the upward search stops there.
REPOSITORY_MARKERS: Final = (".git", ".hg")

TOP_LEVEL_KEYS: Final = ("platforms", "overrides", "registries", "check_opted_out")
OVERRIDE_KEYS: Final = ("module", "platforms")
REGISTRY_KEYS: Final = ("call", "platform", "position", "values", "function", "function_position")
#: The names accepted in ``platforms = [...]``, ``--platform`` and ``TYPED_PALLAS_PLATFORMS``:
#: the lowering names of :data:`typed_pallas._platforms.LOWERINGS_OF_NAME` (``gpu`` = cuda +
#: rocm). Not ``_platforms.PLATFORM_NAMES``, which also holds the host (``cpu``).
CONFIG_PLATFORM_NAMES: Final[tuple[str, ...]] = tuple(LOWERINGS_OF_NAME)

USAGE: Final = """
(pyproject.toml)
    [tool.typed-pallas]
    platforms = ["tpu"]                   # any of: tpu, gpu, cuda, rocm

    [[tool.typed-pallas.overrides]]
    module = ["mypkg.gpu.*"]              # mypy-style module patterns
    platforms = ["gpu"]

(mypy.ini, .mypy.ini or setup.cfg)
    [mypy.plugins.typed-pallas]
    platforms = tpu

    [mypy.plugins.typed-pallas.overrides.mypkg.gpu.*]
    platforms = gpu

    check_opted_out = true                # typed-pallas check: files with "# mypy: ignore-errors" too

    [[tool.typed-pallas.registries]]      # a registry of kernels per platform (pyproject only)
    call = "mypkg.registry.register"      # the registering decorator or call
    platform = "backend"                  # the argument naming the platform (keyword)
    position = 2                          # ... and its position, if passed positionally
    values = { "Backend.TPU" = "tpu", "Backend.GPU" = "gpu" }   # enum members -> platforms

(environment)
    TYPED_PALLAS_PLATFORMS=tpu,gpu        # replaces the top-level platforms
    TYPED_PALLAS_CONFIG=path/to/pyproject.toml

docs: `typed-pallas explain configuration`"""


def _is_identifier(text: str) -> bool:
    """An ASCII identifier (string methods: a regular expression compiled at import
    cost every mypy run a fifth of a millisecond)."""
    return text.isascii() and text.isidentifier()


def _is_dotted(text: str) -> bool:
    """Two or more ASCII identifiers joined by dots (``mypkg.registry.register``)."""
    return "." in text and all(_is_identifier(part) for part in text.split("."))


class ConfigError(Exception):
    """A configuration problem; ``str()`` says what, where and what to do."""


# --------------------------------------------------------------------------- model


@final
class PluginConfig:
    """What the plugin knows about the platforms each module may lower for.

    ``platforms`` holds lowering platforms (``tpu``/``cuda``/``rocm``; ``gpu`` is
    expanded); ``None`` means unconfigured (only zero-config checks run).

    A plain class with read-only attributes, not a frozen dataclass: every mypy run
    loads one, warm runs included, and generating a dataclass's methods cost the
    module's import 1.5 ms of a 0.25 s warm run.
    """

    __slots__ = (
        "_cache",
        "check_opted_out",
        "overrides",
        "platforms",
        "platforms_origin",
        "registries",
        "source",
    )

    def __init__(
        self,
        platforms: frozenset[str] | None = None,
        overrides: tuple[Override, ...] = (),
        source: str | None = None,
        platforms_origin: str | None = None,
        registries: tuple[Registry, ...] = (),
        check_opted_out: bool = False,
    ) -> None:
        self.platforms: Final = platforms
        self.overrides: Final = overrides
        self.source: Final = source
        #: where the top-level platforms were set, for notes (not compared)
        self.platforms_origin: Final = platforms_origin
        self.registries: Final = registries
        #: ``check_opted_out``: ``typed-pallas check`` also checks the files that opt out
        #: of mypy (``# mypy: ignore-errors``), for ``pallas-platform`` only
        #: (``cli.opted_out``)
        self.check_opted_out: Final = check_opted_out
        self._cache: Final[dict[str, frozenset[str] | None]] = {}

    def _compared(self) -> tuple[object, ...]:
        return (self.platforms, self.overrides, self.source, self.registries, self.check_opted_out)

    @override
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PluginConfig):
            return NotImplemented
        return self._compared() == other._compared()

    @override
    def __hash__(self) -> int:
        return hash(self._compared())

    @override
    def __repr__(self) -> str:
        return (
            f"PluginConfig(platforms={self.platforms!r}, overrides={self.overrides!r}, "
            f"source={self.source!r}, platforms_origin={self.platforms_origin!r}, "
            f"registries={self.registries!r}, check_opted_out={self.check_opted_out!r})"
        )

    def with_platforms(self, platforms: frozenset[str], origin: str) -> PluginConfig:
        """This configuration with other top-level platforms (overrides, registries and
        the rest stay)."""
        return PluginConfig(
            platforms,
            self.overrides,
            self.source,
            origin,
            self.registries,
            self.check_opted_out,
        )

    def platforms_for(self, module: str) -> frozenset[str] | None:
        """The lowering platforms ``module`` may use, or None when nothing says."""
        try:
            return self._cache[module]
        except KeyError:
            pass
        result = self._resolve(module)
        self._cache[module] = result
        return result

    def _resolve(self, module: str) -> frozenset[str] | None:
        override = self.override_for(module)
        return override.platforms if override is not None else self.platforms

    def override_for(self, module: str) -> Override | None:
        """The override that decides ``module`` (mypy's precedence), or None."""
        concrete = [o for o in self.overrides if o.is_concrete and o.pattern == module]
        if concrete:
            return concrete[-1]
        unstructured = [
            o
            for o in self.overrides
            if not o.is_concrete and not o.is_structured and o.matches(module)
        ]
        if unstructured:
            return max(unstructured, key=lambda o: o.order)
        parts = module.split(".")
        for i in range(len(parts), 0, -1):
            key = ".".join([*parts[:i], "*"])
            hits = [o for o in self.overrides if o.pattern == key]
            if hits:
                return hits[-1]
        star = [o for o in self.overrides if o.pattern == "*"]
        return star[-1] if star else None

    def origin_for(self, module: str) -> str | None:
        """Where the platforms of ``module`` were configured, for notes; None if unconfigured.

        E.g. ``[tool.typed-pallas] platforms in pyproject.toml``,
        ``[[tool.typed-pallas.overrides]] #2 (module = 'pkg.gpu.*') in pyproject.toml``,
        ``[mypy.plugins.typed-pallas.overrides.pkg.gpu.*] in mypy.ini`` or
        ``TYPED_PALLAS_PLATFORMS=gpu``.
        """
        override = self.override_for(module)
        if override is not None:
            return override.origin or f"override {override.pattern!r}"
        if self.platforms is None:
            return None
        return self.platforms_origin or "platforms"

    @property
    def configured(self) -> bool:
        return self.platforms is not None or bool(self.overrides)

    def fingerprint(self) -> dict[str, object]:
        """Everything that changes the plugin's answers, for ``report_config_data``."""
        return {
            "typed_pallas": package_version(),
            "platforms": sorted(self.platforms) if self.platforms is not None else None,
            "overrides": [[o.pattern, sorted(o.platforms), o.order] for o in self.overrides],
            "registries": [
                [
                    r.call,
                    r.platform,
                    r.position,
                    [[k, sorted(v)] for k, v in r.values],
                    r.function,
                    r.function_position,
                ]
                for r in self.registries
            ],
        }


# --------------------------------------------------------------------------- helpers


def package_version() -> str:
    """The installed typed-pallas version, or ``unknown`` in a bare source checkout.

    Read with ``typed_pallas._versions.installed_version`` (the same answer as
    ``importlib.metadata.version``): every mypy run asks, warm ones included, and
    importing ``importlib.metadata`` alone costs about 10 ms there.
    """
    from typed_pallas._versions import installed_version

    try:
        return installed_version("typed-pallas") or "unknown"
    except Exception:  # pragma: no cover - an odd environment: never stop mypy for this
        return "unknown"


def _plural_list(names: Iterable[str]) -> str:
    return ", ".join(names)


def parse_platforms(values: Sequence[object], where: str) -> frozenset[str]:
    """Validate platform names and expand them to lowering platforms."""
    if not values:
        raise ConfigError(
            f"{where}: the platform list is empty; "
            f"name at least one of {_plural_list(CONFIG_PLATFORM_NAMES)} "
            '(to allow every platform write ["tpu", "gpu"])'
        )
    out: set[str] = set()
    for value in values:
        if not isinstance(value, str):
            raise ConfigError(
                f"{where}: platform {value!r} is a {type(value).__name__}, not a string; "
                f"write one of {_plural_list(repr(n) for n in CONFIG_PLATFORM_NAMES)}"
            )
        name = value.strip()
        if name not in LOWERINGS_OF_NAME:
            hint = ""
            if name.lower() in LOWERINGS_OF_NAME:
                hint = f" (platform names are lower case: {name.lower()!r})"
            raise ConfigError(
                f"{where}: unknown platform {value!r}{hint}; "
                f"valid platforms are {_plural_list(CONFIG_PLATFORM_NAMES)} "
                "(gpu means cuda and rocm)"
            )
        out |= LOWERINGS_OF_NAME[name]
    return frozenset(out)


def parse_pattern(pattern: object, where: str) -> str:
    """Validate one mypy-style module pattern."""
    if not isinstance(pattern, str):
        raise ConfigError(
            f"{where}: module pattern {pattern!r} is a {type(pattern).__name__}, not a string; "
            'write e.g. module = ["mypkg.tpu.*"]'
        )
    text = pattern.strip()
    parts = text.split(".")
    if not text or any(not (p == "*" or _is_identifier(p)) for p in parts):
        raise ConfigError(
            f"{where}: bad module pattern {pattern!r}; patterns are fully qualified module "
            "names, optionally with '*' as whole components (e.g. mypkg.tpu.* or mypkg.*.kernels)"
        )
    return text


def _split_commas(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


# --------------------------------------------------------------------------- readers


def _from_mapping(
    table: Mapping[str, Any],
    source: str,
    where: str,
    *,
    toml: bool,
    ini_overrides: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> PluginConfig:
    """Build a config from a parsed TOML table (lists) or ini section (comma strings)."""
    for key in table:
        if key not in TOP_LEVEL_KEYS:
            raise ConfigError(
                f"{where}: unknown key {key!r}; known keys are {_plural_list(TOP_LEVEL_KEYS)}"
                + (
                    f" (per-module settings go under [[{TOML_TABLE}.overrides]])"
                    if key == "module"
                    else ""
                )
            )
    platforms: frozenset[str] | None = None
    if "platforms" in table:
        raw = table["platforms"]
        if isinstance(raw, str):
            if toml:  # TOML wants a list
                names = ", ".join(f'"{p}"' for p in _split_commas(raw)) or '"tpu"'
                raise ConfigError(
                    f"{where}: 'platforms' must be a list of strings, got the string {raw!r}; "
                    f"write platforms = [{names}]"
                )
            raw = _split_commas(raw)
        if not isinstance(raw, list):
            raise ConfigError(
                f"{where}: 'platforms' must be a list of strings, got {type(raw).__name__} {raw!r}; "
                'write platforms = ["tpu"]'
            )
        platforms = parse_platforms(raw, f"{where} platforms")
    top_origin = f"[{TOML_TABLE if toml else INI_SECTION}] platforms in {os.path.basename(source)}"

    overrides: list[Override] = []
    order = 0
    if "overrides" in table:
        from typed_pallas_mypy.config_entries import Override  # see config_entries

        raw_overrides = table["overrides"]
        if not isinstance(raw_overrides, list) or not all(
            isinstance(o, dict) for o in raw_overrides
        ):
            raise ConfigError(
                f"{where}: 'overrides' must be an array of tables; write each one as "
                f"[[{TOML_TABLE}.overrides]] with module = [...] and platforms = [...]"
            )
        for index, entry in enumerate(raw_overrides, 1):
            ewhere = f"{where} overrides #{index}"
            for key in entry:
                if key not in OVERRIDE_KEYS:
                    raise ConfigError(
                        f"{ewhere}: unknown key {key!r}; an override takes only "
                        f"{_plural_list(OVERRIDE_KEYS)}"
                    )
            for key in OVERRIDE_KEYS:
                if key not in entry:
                    raise ConfigError(
                        f"{ewhere}: missing {key!r}; an override needs both "
                        'module = ["pkg.mod.*"] and platforms = ["tpu"]'
                    )
            modules = entry["module"]
            if isinstance(modules, str):
                modules = [modules]
            if not isinstance(modules, list) or not modules:
                raise ConfigError(
                    f"{ewhere}: 'module' must be a module pattern or a non-empty list of them, "
                    f'got {modules!r}; write module = ["mypkg.tpu.*"]'
                )
            raw_p = entry["platforms"]
            if not isinstance(raw_p, list):
                raise ConfigError(
                    f"{ewhere}: 'platforms' must be a list of strings, got {type(raw_p).__name__} "
                    f'{raw_p!r}; write platforms = ["gpu"]'
                )
            plats = parse_platforms(raw_p, f"{ewhere} platforms")
            for module in modules:
                pattern = parse_pattern(module, f"{ewhere} module")
                origin = f"[[{TOML_TABLE}.overrides]] #{index} (module = {pattern!r}) in {os.path.basename(source)}"
                overrides.append(Override(pattern, plats, order, origin))
                order += 1

    registries = _registries(table.get("registries"), source, where)
    check_opted_out = _boolean(table, "check_opted_out", where, toml=toml)

    for section, body in ini_overrides:
        from typed_pallas_mypy.config_entries import Override  # see config_entries

        swhere = f"{source}: [{section}]"
        for key in body:
            if key != "platforms":
                raise ConfigError(
                    f"{swhere}: unknown key {key!r}; an override section takes only 'platforms' "
                    "(the module patterns are in the section name)"
                )
        if "platforms" not in body:
            raise ConfigError(
                f"{swhere}: missing 'platforms'; write platforms = gpu (or tpu, cuda, rocm)"
            )
        plats = parse_platforms(_split_commas(body["platforms"]), f"{swhere} platforms")
        patterns = section[len(INI_OVERRIDE_PREFIX) :]
        for pattern in patterns.split(","):
            origin = f"[{section}] in {os.path.basename(source)}"
            overrides.append(Override(parse_pattern(pattern, swhere), plats, order, origin))
            order += 1

    return PluginConfig(
        platforms=platforms,
        overrides=tuple(overrides),
        source=source,
        platforms_origin=top_origin if platforms is not None else None,
        registries=registries,
        check_opted_out=check_opted_out,
    )


#: the spellings of a boolean in an ini file (configparser's own)
_INI_BOOLEANS: Final = configparser.RawConfigParser.BOOLEAN_STATES


def _boolean(table: Mapping[str, Any], key: str, where: str, *, toml: bool) -> bool:
    """A ``true``/``false`` key (False when absent): a TOML boolean, or an ini file's
    ``true``/``false`` (also ``yes``/``no``, ``on``/``off``, ``1``/``0``)."""
    if key not in table:
        return False
    raw = table[key]
    if isinstance(raw, bool):
        return raw
    if not toml and isinstance(raw, str) and raw.strip().lower() in _INI_BOOLEANS:
        return _INI_BOOLEANS[raw.strip().lower()]
    got = f"the string {raw!r}" if isinstance(raw, str) else f"{type(raw).__name__} {raw!r}"
    meant = _INI_BOOLEANS.get(str(raw).strip().lower(), True)
    raise ConfigError(
        f"{where}: {key!r} must be true or false, got {got}; write {key} = {str(meant).lower()}"
    )


_REGISTRY_EXAMPLE: Final = (
    f'write [[{TOML_TABLE}.registries]] with call = "mypkg.registry.register", '
    'platform = "backend" (and/or position = 2), values = { "Backend.TPU" = "tpu" }'
)


def _registries(raw: object, source: str, where: str) -> tuple[Registry, ...]:
    """The ``registries`` array of tables (pyproject.toml only)."""
    if raw is None:
        return ()
    from typed_pallas_mypy.config_entries import Registry  # see config_entries

    if isinstance(raw, str):
        raise ConfigError(
            f"{where}: 'registries' can be set in pyproject.toml only (an array of tables); "
            + _REGISTRY_EXAMPLE
        )
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise ConfigError(f"{where}: 'registries' must be an array of tables; {_REGISTRY_EXAMPLE}")
    out: list[Registry] = []
    for index, entry in enumerate(raw, 1):
        ewhere = f"{where} registries #{index}"
        for key in entry:
            if key not in REGISTRY_KEYS:
                raise ConfigError(
                    f"{ewhere}: unknown key {key!r}; a registry takes {_plural_list(REGISTRY_KEYS)}"
                )
        call = entry.get("call")
        if not isinstance(call, str) or not _is_dotted(call):
            raise ConfigError(
                f"{ewhere}: 'call' must be the dotted name of the registering decorator or call, "
                f'got {call!r}; write call = "mypkg.registry.register"'
            )
        platform = entry.get("platform")
        position = entry.get("position")
        if platform is not None and (not isinstance(platform, str) or not _is_identifier(platform)):
            raise ConfigError(
                f"{ewhere}: 'platform' must be the keyword of the argument naming the platform, "
                f'got {platform!r}; write platform = "backend"'
            )
        for name in ("position", "function_position"):
            value = entry.get(name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ConfigError(
                    f"{ewhere}: {name!r} must be an argument position (0, 1, ...), got {value!r}"
                )
        if platform is None and position is None:
            raise ConfigError(
                f'{ewhere}: say which argument names the platform: platform = "backend" '
                "(its keyword) and/or position = 2 (its position)"
            )
        function = entry.get("function")
        if function is not None and (not isinstance(function, str) or not _is_identifier(function)):
            raise ConfigError(
                f"{ewhere}: 'function' must be the keyword of the argument holding the registered "
                f'function, got {function!r}; write function = "fn"'
            )
        raw_values = entry.get("values", {})
        if not isinstance(raw_values, dict):
            raise ConfigError(
                f"{ewhere}: 'values' must be a table of value = platform, got {raw_values!r}; "
                'write values = { "Backend.TPU" = "tpu", "Backend.GPU" = "gpu" }'
            )
        values: list[tuple[str, frozenset[str]]] = []
        for key, name in raw_values.items():
            values.append((key, parse_platforms([name], f"{ewhere} values[{key!r}]")))
        out.append(
            Registry(
                call,
                platform,
                position,
                tuple(values),
                function,
                entry.get("function_position"),
                origin=f"[[{TOML_TABLE}.registries]] #{index} in {os.path.basename(source)}",
            )
        )
    return tuple(out)


def _not_text(path: str, error: UnicodeDecodeError) -> ConfigError:
    return ConfigError(
        f"{path}: not UTF-8 text ({error.reason} at byte {error.start}); save it as UTF-8"
    )


def _read_toml(path: str) -> PluginConfig | None:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise _not_text(path, e) from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}; fix it and rerun") from None
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None
    if "typed-pallas" not in tool:
        for wrong in ("typed_pallas", "typedpallas", "typed-pallas-mypy"):
            if wrong in tool:
                raise ConfigError(
                    f"{path}: found [tool.{wrong}]; the table is spelled [{TOML_TABLE}]"
                )
        return None
    table = tool["typed-pallas"]
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{TOML_TABLE}] must be a table, got {type(table).__name__}")
    return _from_mapping(table, path, f"{path}: [{TOML_TABLE}]", toml=True)


def _read_ini(path: str) -> PluginConfig | None:
    parser = configparser.RawConfigParser()
    try:
        with open(path, encoding="utf-8") as f:
            parser.read_file(f, source=path)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise _not_text(path, e) from None
    except configparser.Error as e:
        said = "; ".join(line.strip() for line in str(e).splitlines() if line.strip())
        raise ConfigError(f"{path}: not a valid ini file: {said}; fix it and rerun") from None
    ours = [s for s in parser.sections() if s == INI_SECTION or s.startswith(INI_SECTION + ".")]
    if not ours:
        for wrong in ("mypy-plugins.typed-pallas", "mypy.plugins.typed_pallas", "typed-pallas"):
            if parser.has_section(wrong):
                raise ConfigError(
                    f"{path}: found [{wrong}]; the section is spelled [{INI_SECTION}]"
                )
        return None
    overrides: list[tuple[str, Mapping[str, Any]]] = []
    for section in ours:
        if section == INI_SECTION:
            continue
        if not section.startswith(INI_OVERRIDE_PREFIX) or section == INI_OVERRIDE_PREFIX:
            raise ConfigError(
                f"{path}: unknown section [{section}]; per-module sections are spelled "
                f"[{INI_OVERRIDE_PREFIX}PATTERN[,PATTERN...]], e.g. [{INI_OVERRIDE_PREFIX}mypkg.gpu.*]"
            )
        overrides.append((section, dict(parser.items(section))))
    top = dict(parser.items(INI_SECTION)) if parser.has_section(INI_SECTION) else {}
    if "overrides" in top:
        raise ConfigError(
            f"{path}: [{INI_SECTION}] unknown key 'overrides' in an ini file; write one section "
            f"per override: [{INI_OVERRIDE_PREFIX}mypkg.gpu.*] with platforms = gpu"
        )
    return _from_mapping(top, path, f"{path}: [{INI_SECTION}]", toml=False, ini_overrides=overrides)


def _is_toml(path: str) -> bool:
    return path.lower().endswith(".toml")


def read_config(path: str) -> PluginConfig | None:
    """Read the typed-pallas section of one file; None when the file has none."""
    return _read_toml(path) if _is_toml(path) else _read_ini(path)


def _search_upwards(start: str) -> Iterable[str]:
    """``start`` (made absolute) and its parents, up to the repository root or ``/``."""
    current = os.path.abspath(start)
    while True:
        yield current
        if any(os.path.exists(os.path.join(current, marker)) for marker in REPOSITORY_MARKERS):
            return
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def candidate_files(config_file: str | None, cwd: str | None = None) -> list[str]:
    """Where the configuration is looked for, in order (see the module docstring).

    ``config_file`` is mypy's config file (None when mypy has none, as for the CLI);
    ``cwd`` defaults to the current folder. Each path appears once.
    """
    folders: list[str] = []
    out: list[str] = []
    if config_file:
        out.append(config_file)
        folders.append(os.path.dirname(os.path.abspath(config_file)))
    folders.extend(_search_upwards(cwd or os.getcwd()))
    out.extend(os.path.join(folder, name) for folder in folders for name in CONFIG_FILE_NAMES)
    seen: set[str] = set()
    unique: list[str] = []
    for path in out:
        key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def find_config_file(config_file: str | None, cwd: str | None = None) -> str | None:
    """The first of :func:`candidate_files` holding a typed-pallas section, or None.

    The same search :func:`resolve_config` (the plugin) runs; ``typed-pallas check``
    calls it to find the project's file before mypy starts. Raises
    :class:`ConfigError` for the first candidate that cannot be read or whose
    typed-pallas section is wrong: the search does not skip a broken file.
    """
    found = _search(config_file, cwd)
    return found[0] if found is not None else None


def _search(config_file: str | None, cwd: str | None) -> tuple[str, PluginConfig] | None:
    for path in candidate_files(config_file, cwd):
        if os.path.isfile(path):
            config = read_config(path)
            if config is not None:
                return path, config
    return None


def resolve_config(
    config_file: str | None, environ: Mapping[str, str] | None = None, cwd: str | None = None
) -> PluginConfig:
    """Like :func:`load_config` but raising :class:`ConfigError` (for tests and the CLI)."""
    env = os.environ if environ is None else environ
    config: PluginConfig | None = None
    explicit = env.get(CONFIG_ENV, "").strip()
    if explicit:
        if not os.path.isfile(explicit):
            raise ConfigError(
                f"{CONFIG_ENV}={explicit!r}: no such file; point it at a pyproject.toml or mypy.ini"
            )
        config = read_config(explicit) or PluginConfig(source=explicit)
    else:
        found = _search(config_file, cwd)
        if found is not None:
            config = found[1]
    if config is None:
        config = PluginConfig()
    raw = env.get(PLATFORMS_ENV, "").strip()
    if raw:
        platforms = parse_platforms(
            _split_commas(raw) or [raw], f"environment variable {PLATFORMS_ENV}={raw!r}"
        )
        config = config.with_platforms(platforms, f"{PLATFORMS_ENV}={raw}")
    return config


def exit_with_error(message: str) -> NoReturn:
    """Print mypy's config-error shape to stderr and stop with status 2."""
    print(f"usage: configure typed-pallas like this:{USAGE}\n", file=sys.stderr)
    print(f"(typed-pallas) mypy: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def load_config(options: Options | None) -> PluginConfig:
    """The configuration for this mypy run; bad config stops mypy (exit status 2)."""
    config_file = getattr(options, "config_file", None) if options is not None else None
    try:
        return resolve_config(config_file)
    except ConfigError as e:
        exit_with_error(str(e))
