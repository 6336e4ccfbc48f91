"""The options the commands share, declared once: the metrics' own options (generated from
their declarations), flags that take several values, unambiguous long-option prefixes
(as SacreBLEU's argparse takes them), ``-w``, and deprecated spellings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from bleucli.display import WIDTH_RANGE, check_width
from bleucli.errors import ConfigError

#: The neural metrics (``analyze``, ``plot`` and ``gate`` take their declared options).
NEURAL_METRICS = ("comet", "cometkiwi", "xcomet", "metricx24", "metricx24-qe")


class Variadic(click.Option):
    """An option that takes several values after one flag (``-i a.txt b.txt``), as
    SacreBLEU's argparse ``nargs="+"``: declared where the option is (``cls=Variadic``,
    with ``multiple=True``), so each command's own options say which flags take lists."""


def variadic_flags(selected: click.Command) -> set[str]:
    """The flags of ``selected``'s :class:`Variadic` options."""
    return {
        flag
        for param in selected.params
        if isinstance(param, Variadic)
        for flag in (*param.opts, *param.secondary_opts)
    }


OUTPUT_FORMATS = ("json", "text", "latex", "markdown", "tsv", "html")


def expand_prefixes(argv: Sequence[str], selected: click.Command) -> list[str]:
    """Unambiguous prefixes of long options (``--tok zh``, ``--lower``), as argparse and so
    SacreBLEU accept them; an ambiguous one is a usage error naming the candidates."""
    longs = sorted(
        {
            opt
            for param in selected.params
            if isinstance(param, click.Option)
            for opt in (*param.opts, *param.secondary_opts)
            if opt.startswith("--")
        }
        | {"--help", "--version"}
    )
    out: list[str] = []
    for k, arg in enumerate(argv):
        if arg == "--":
            return out + list(argv[k:])
        name, eq, value = arg.partition("=")
        if name.startswith("--") and name not in longs:
            candidates = [opt for opt in longs if opt.startswith(name)]
            if len(candidates) == 1:
                arg = candidates[0] + eq + value
            elif candidates:
                raise click.UsageError(
                    f"ambiguous option: {name} could match {', '.join(candidates)}"
                )
        out.append(arg)
    return out


def expand_variadic(argv: Sequence[str], flags: set[str]) -> list[str]:
    """Rewrite ``-i a b`` as ``-i a -i b`` (``flags``: the variadic ones) so click's
    ``multiple=True`` options take lists."""
    out: list[str] = []
    current: str | None = None
    for arg in argv:
        if arg == "--":
            current = None
            out.append(arg)
        elif arg in flags:
            current = arg
            out.append(arg)
        elif current is not None and (arg == "-" or not arg.startswith("-")):
            if out[-1] != current:
                out.append(current)
            out.append(arg)
        else:
            current = None
            out.append(arg)
    return out


def click_parameter(option: Any) -> click.Option:
    """The click option of a metric's declared option (:mod:`bleucli.metrics.options`)."""
    kwargs: dict[str, Any] = {"help": option.help}
    if option.kind == "flag":
        kwargs["is_flag"] = True
    else:
        if option.kind in ("int", "float"):
            kwargs["type"] = int if option.kind == "int" else float
        if option.default is not None:
            kwargs["default"] = option.default
        if option.show_default:
            kwargs["show_default"] = True
        if option.metavar:
            kwargs["metavar"] = option.metavar
    return click.Option([*option.flags, option.param], **kwargs)


def declared_options(
    names: Sequence[str] | None = None, only: dict[str, tuple[str, ...]] | None = None
) -> list[Any]:
    """The declared options of the metrics ``names`` (default: the built-in ones), in
    registry order; ``only``: metric -> the keywords to take."""
    from bleucli.metrics import builtin_names, metric_class

    chosen = []
    for name in names if names is not None else builtin_names():
        keywords = (only or {}).get(name)
        chosen += [
            o
            for o in metric_class(name).OPTIONS
            if o.cli and (keywords is None or o.keyword in keywords)
        ]
    return chosen


def metric_options(
    names: Sequence[str] | None = None, only: dict[str, tuple[str, ...]] | None = None
) -> Any:
    """A decorator adding the declared options of the metrics ``names`` to a command."""

    def decorate(function: Any) -> Any:
        if not hasattr(function, "__click_params__"):
            function.__click_params__ = []
        for option in reversed(declared_options(names, only)):
            function.__click_params__.append(click_parameter(option))
        return function

    return decorate


def with_plugin_options(selected: click.Command, args: Sequence[str]) -> click.Command:
    """``selected`` with the declared options of the plugin metrics ``args`` ask for: a
    ``-m`` name that is not built in, or a flag the command does not know (a plugin's). The
    entry points are read only then, so plain scoring never pays for them."""
    from bleucli.metrics import available_metrics, builtin_names, metric_class

    known = {opt for param in selected.params for opt in (*param.opts, *param.secondary_opts)}

    def unknown(arg: str) -> bool:
        head = arg.partition("=")[0]
        if not head.startswith("-") or head in ("-", "--") or head in known or _number(head):
            return False
        return not (head.startswith("--") and any(k.startswith(head) for k in known))

    names = _metric_names(args)
    if not any(unknown(arg) for arg in args) and all(n in builtin_names() for n in names):
        return selected

    extra = []
    for name in available_metrics():
        if name in builtin_names():
            continue
        for option in metric_class(name).OPTIONS:
            if not option.cli:
                continue
            clash = [flag for flag in option.flags if flag in known]
            if clash:
                raise ConfigError(
                    f"metric plugin {name}: its option {', '.join(clash)} is already "
                    "bleucli's; the plugin must declare other flags"
                )
            known.update(option.flags)
            extra.append(click_parameter(option))
    if not extra:
        return selected
    from copy import copy

    widened = copy(selected)
    widened.params = [*selected.params, *extra]
    return widened


def _number(arg: str) -> bool:
    try:
        float(arg)
    except ValueError:
        return False
    return True


def _metric_names(args: Sequence[str]) -> list[str]:
    """The names given to ``-m``/``--metrics`` (before click has parsed anything)."""
    names: list[str] = []
    taking = False
    for arg in args:
        head, eq, value = arg.partition("=")
        if head in ("-m", "--metrics"):
            taking = not eq
            if eq:
                names.append(value.lower())
        elif taking and not arg.startswith("-"):
            names.append(arg.lower())
        else:
            taking = False
    return names


def metric_values(
    params: dict[str, Any], names: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Per metric, the keywords of the declared options a command parsed (those it has)."""
    from bleucli.metrics import builtin_names, metric_class

    out: dict[str, dict[str, Any]] = {}
    for name in names if names is not None else builtin_names():
        out[name] = {
            option.keyword: params[option.param]
            for option in metric_class(name).OPTIONS
            if option.cli and option.param in params
        }
    return out


def _width_value(text: str) -> tuple[str | None, int]:
    """``N`` or ``METRIC=N`` (``-w comet=6``)."""
    name, sep, number = text.rpartition("=")
    try:
        value = int(number)
    except ValueError:
        raise click.BadParameter(f"{text!r}: give N, or METRIC=N (-w comet=6)") from None
    if sep and not name:
        raise click.BadParameter(f"{text!r}: name the metric before '=' (-w comet=6)")
    return (name.lower() if sep else None), value


#: ``-w``: decimals of the 0-100 metrics (BLEU, chrF, TER), and ``-w METRIC=N`` for one
#: metric; every other metric keeps its own (COMET 4, MetricX 2: bleucli.precision).
width_option = click.option(
    "-w",
    "--width",
    "width",
    multiple=True,
    metavar="N|METRIC=N",
    callback=lambda _ctx, _param, values: [_width_value(v) for v in values],
    help=f"Decimal places of BLEU, chrF and TER ({WIDTH_RANGE[0]}-{WIDTH_RANGE[1]}; default 1); "
    "METRIC=N for one metric (-w comet=6). COMET, CometKiwi and xCOMET show 4, MetricX 2.",
)


#: ``-e``: how input files are decoded (every command that reads text files).
encoding_option = click.option(
    "-e", "--encoding", default="utf-8", show_default=True, help="Encoding of input files."
)


def precision_from(values: Sequence[tuple[str | None, int]]) -> tuple[int, dict[str, int]]:
    """(the 0-100 metrics' decimals, per-metric decimals) of the ``-w`` values given."""
    width = 1
    per_metric: dict[str, int] = {}
    for name, value in values:
        check_width(value, "-w/--width" if name is None else f"-w {name}=")
        if name is None:
            width = value
        else:
            per_metric[name] = value
    return width, per_metric


def _pair(values: Sequence[tuple[str | None, int]]) -> tuple[int, tuple[tuple[str, int], ...]]:
    width, per_metric = precision_from(values)
    return width, tuple(sorted(per_metric.items()))


def deprecated(value: Any, old: str, new: str) -> Any:
    """A deprecated spelling still works, with a one-line warning naming the one to use."""
    if value is not None and value is not False and value != ():
        click.echo(f"bleucli: {old} is deprecated and will be removed: use {new}", err=True)
    return value
