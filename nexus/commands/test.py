"""``nexus test``: fly scenario files (flight tests with pass/fail checks) and report their verdicts."""

from __future__ import annotations

import shlex
import shutil
import tempfile
import time
from pathlib import Path

import click

from nexus.scenario.baseline import save
from nexus.scenario.fault_trigger import fault_line
from nexus.scenario.junit import write_junit
from nexus.scenario.runner import ERROR, FAILED, SKIPPED, ScenarioOptions, results_json, run_tests, summary_counts
from nexus.scenario.report import write_report
from nexus.runtime.stopping import StopSignals


def _gain_scale(ctx, param, values) -> dict:
    scale = {}
    for value in values:
        name, _, factor = value.partition("=")
        try:
            scale[name.strip()] = float(factor)
        except ValueError:
            raise click.BadParameter(f"{value!r}: give NAME=FACTOR, e.g. rate_p=0.1") from None
        if not scale[name.strip()] >= 0.0:
            raise click.BadParameter(f"{value!r}: give a factor of 0 or more")
    return scale


def _seeds(ctx, param, value) -> list[int] | None:
    if value is None:
        return None
    try:
        seeds = [int(part) for part in value.split(",")]
    except ValueError:
        raise click.BadParameter(f"{value!r}: give whole numbers separated by commas, e.g. 0,1,2,3") from None
    if any(seed < 0 for seed in seeds):
        raise click.BadParameter(f"{value!r}: seeds are 0 or more")
    return seeds


def _resume_command(paths, out: Path, given: dict) -> str:
    """The ``nexus test`` line that finishes an interrupted run: the same paths and options, with ``--resume``.

    The options that decide what flies (the PX4 binary, gain factors, seeds) must be the same, or the resumed
    run would fly other points; the rest are repeated so the resumed run writes the same outputs.
    """
    words = ["nexus", "test", *map(str, paths), "--out", str(out)]
    for name in ("parallel", "address", "junit", "report", "baseline", "save_baseline", "px4_binary"):
        if given.get(name) is not None:
            words += [f"--{name.replace('_', '-')}", str(given[name])]
    for name, factor in (given.get("gain_scale") or {}).items():
        words += ["--scale-gain", f"{name}={factor:g}"]
    if given.get("seeds"):
        words += ["--seeds", ",".join(map(str, given["seeds"]))]
    words += [flag for flag in ("--yes", "--quiet") if given.get(flag[2:])]
    return shlex.join([*words, "--resume"])


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH...")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the run folders here (OUT/runs/<point id>/, ordinary runs for plot, view and replay), "
                   "with results.json. Default: a temporary folder, removed at the end.")
@click.option("--parallel", type=click.IntRange(min=1), default=None,
              help="Runs at once at most. Default: this machine's cores (or the cluster's CPUs).")
@click.option("--address", default=None, help="An existing Ray cluster (as nexus sweep --address).")
@click.option("--resume", is_flag=True, help="Finish an interrupted nexus test in --out: keep runs that ended.")
@click.option("--yes", is_flag=True, help="Fly a matrix of more runs than the bound (64) without asking.")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write JUnit XML here: one test case per scenario and matrix point.")
@click.option("--report", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write an HTML page here (DIR/index.html) with a figure per failed check.")
@click.option("--baseline", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Compare each check with a stored baseline; fail on a regression past [baseline] tolerance.")
@click.option("--save-baseline", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Store this run's worst value of each check as the baseline (DIR/<scenario>.json).")
@click.option("--px4-binary", default=None, help="PX4's bin/px4 for PX4 scenarios whose file leaves binary empty.")
@click.option("--scale-gain", "gain_scale", multiple=True, callback=_gain_scale, metavar="NAME=FACTOR",
              help="Multiply a PID gain in every scenario (repeatable), e.g. rate_p=0.1: a broken controller on "
                   "purpose, to see which checks catch it.")
@click.option("--seeds", callback=_seeds, default=None, metavar="N,N,...",
              help="Fly every scenario with these seeds, in place of its [matrix] seeds, e.g. 0,1,2,3.")
@click.option("--quiet", is_flag=True, help="No progress bar and no passed checks; failures and the summary only.")
@click.pass_context
def test(ctx, paths, out, parallel, address, resume, yes, junit, report, baseline, save_baseline, px4_binary,
         gain_scale, seeds, quiet):
    """Fly every scenario in PATH... (files, or folders of *.toml) and check it.

    Prints a line per scenario and check, and a summary. Exit status: 0 when every check passed, 1 when a
    check failed or a run broke (an error), 2 for bad input (nothing flew), 130 when interrupted and 143 when
    terminated (SIGTERM; finish it with --out DIR --resume). docs/testing.md describes the scenario file.
    """

    kept = out is not None
    folder = out if kept else Path(tempfile.mkdtemp(prefix="nexus-test-")) / "runs"
    options = ScenarioOptions(out=folder, parallel=parallel, address=address, resume=resume, yes=yes,
                          progress=not quiet, px4_binary=px4_binary, gain_scale=gain_scale, baseline=baseline,
                          seeds=seeds)
    started = time.perf_counter()
    try:
        with StopSignals():  # SIGTERM before Ray starts stops it too (the runner handles it from then on)
            cases = run_tests(paths, options, say=lambda text: click.echo(text, err=True))
    except BaseException as error:  # a stop (Ctrl-C, SIGTERM) or an error: a kept folder stays, resumable
        if not kept:
            shutil.rmtree(folder.parent, ignore_errors=True)
        elif isinstance(error, KeyboardInterrupt):
            click.echo(f"nexus test stopped; finished runs are in {out}; `{_resume_command(paths, out, ctx.params)}` "
                       "finishes it", err=True)
        raise
    wall = time.perf_counter() - started
    for case in cases:
        if case.verdict == SKIPPED:
            click.echo(f"{case.label} SKIPPED ({case.reason})")
            continue
        if case.verdict == ERROR:
            click.echo(f"{case.label} ERROR ({case.reason})")
            continue
        note = ""
        if case.reproducible is not None:
            note = " [PX4 reproducible: settle and pinned]" if case.reproducible else " [PX4 not reproducible]"
        if not quiet:
            for fault in case.faults:
                click.echo(f"{case.label} {fault_line(fault)}")
        for result in case.results:
            if result.passed and quiet:
                continue
            click.echo(f"{case.label}::{result.check.name} {'PASSED' if result.passed else 'FAILED'}{note}")
    failed = [c for c in cases if c.verdict in (FAILED, ERROR)]
    if failed:
        click.echo("=" * 30 + " failures " + "=" * 30)
        for case in failed:
            if case.verdict == ERROR:
                keep = "" if kept else " (removed at the end: pass --out DIR to keep it)"
                click.echo(f"ERROR {case.label}: {case.reason}{keep}")
            if case.verdict == FAILED and case.reason:  # a crash (nexus.plant.crash)
                click.echo(f"FAILED {case.label}: {case.reason}")
            for result in case.failed_results():
                click.echo(f"FAILED {case.label}::{result.check.name} - {result.message()}")
    counts = summary_counts(cases)
    click.echo(f"{'=' * 20} {counts['passed']} passed, {counts['failed']} failed, {counts['error']} errors, "
               f"{counts['skipped']} skipped in {wall:.1f} s {'=' * 20}")
    if kept:
        (out / "results.json").write_text(results_json(cases))
    if junit is not None:
        click.echo(f"junit: {write_junit(junit, cases, wall)}")
    if report is not None:
        click.echo(f"report: {write_report(report, cases, wall)}")
    if save_baseline is not None:
        for path in save(save_baseline, cases):
            click.echo(f"baseline: {path}")
    if not kept:
        shutil.rmtree(folder.parent, ignore_errors=True)
    if failed:
        ctx.exit(1)
