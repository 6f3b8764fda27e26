"""``nexus plot`` and ``nexus view`` of runs of many worlds, on folders made from the real short run.

The 1,024-world run replays the short flight (every 8th tick of its 2,257: 283 ticks) in
every world with its base moved (tests/viz/worlds_run.py): 11 worlds fail
(7, 107, ..., 1007) and hold still from their failed tick on; 20 run out of
time (49, 99, ... that did not fail); the rest are done.
"""

import json
import shutil
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from nexus.cli import main
from tests.viz.worlds_run import failed_worlds, write_worlds_run

WORLDS = 1024
FAILED = failed_worlds(WORLDS)  # 7, 107, ..., 1007: 11 worlds
#: A one-world run's figures (as tests/viz/test_report.py).
ONE_WORLD_FIGURES = ("position", "attitude", "rates", "motors", "imu", "mag", "baro", "gps")


def plot(*args):
    return CliRunner().invoke(main, ["plot", *map(str, args)])


@pytest.fixture(scope="module")
def many(short_run, tmp_path_factory):
    return write_worlds_run(short_run, tmp_path_factory.mktemp("worlds") / "many", WORLDS)


@pytest.fixture(scope="module")
def plotted(many):
    """``nexus plot`` of the 1,024 worlds, keeping the figures the worlds report drew (name -> figure)."""
    from nexus.viz import worlds_report

    drawn = {}

    def keep(name, draw):
        def drawing(*args):
            drawn[name] = draw(*args)
            return drawn[name]
        return drawing

    started = time.perf_counter()
    with pytest.MonkeyPatch.context() as patch:
        for name in ("paths", "distributions", "drawn_values"):
            patch.setattr(worlds_report.figures, name, keep(name, getattr(worlds_report.figures, name)))
        made = plot(many)
    print(f"\nnexus plot of {WORLDS} worlds: {time.perf_counter() - started:.1f} s")
    assert made.exit_code == 0, made.output
    return made, drawn


def traces(ax):
    from matplotlib.collections import LineCollection

    (collection,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    return collection.get_segments()


def line(ax, label):
    (found,) = [x for x in ax.get_lines() if x.get_label() == label]
    return found


def test_every_world_is_one_thin_trace_and_the_figure_stays_within_its_point_budget(plotted, many):
    from nexus.viz.worlds_figures import MAX_POINTS

    figure = plotted[1]["paths"]
    top, *panels = figure.axes
    points = 0
    for ax in (top, *panels):
        segments = traces(ax)
        assert len(segments) == WORLDS  # one trace per world in each panel
        points += sum(len(s) for s in segments)
    # 283 ticks per world; 200,000 points over 4 panels and 1,024 worlds leave 48 per trace.
    assert points <= MAX_POINTS
    assert all(len(s) == 48 for s in traces(top))
    # World 1022 starts 10 m east of world 0 and drifts east at 0.02·1022/1024 m/s: from its own NED origin its
    # trace ends 0.18 m east of world 0's after 9.06 s (not 10.18 m: each world is drawn from where it started).
    east_end = traces(top)[1022][-1, 0] - traces(top)[0][-1, 0]
    assert east_end == pytest.approx(0.02 * 1022 / 1024 * 9.064, abs=2e-3)


def test_the_highlighted_world_is_drawn_whole_on_top(plotted, many):
    top, north, east, up = plotted[1]["paths"].axes
    table = pq.read_table(many / "record.parquet").filter(pc.field("world") == 0)
    x = table.column("body/base.pose[0]").to_numpy()  # ENU east
    highlighted = line(top, "world 0")
    assert highlighted.get_color() == "black"
    assert len(highlighted.get_xdata()) == 283  # every tick, not thinned
    origin = json.loads((many / "run.json").read_text())["ned_origin_enu_m"]
    assert np.allclose(highlighted.get_xdata(), x - origin[0], atol=1e-5)
    assert line(top, "world 0 setpoint").get_linestyle() == "--"
    assert "world 0 highlighted" in plotted[1]["paths"]._suptitle.get_text()


def test_failed_worlds_are_red_crosses_where_they_stopped_and_counted_in_the_title(plotted, many):
    figure = plotted[1]["paths"]
    crosses = line(figure.axes[0], f"failed ({len(FAILED)})")
    assert crosses.get_marker() == "x" and crosses.get_color() == "tab:red"
    # A failed world holds still from its failed tick on: its cross sits on its trace's last point.
    ends = np.array([traces(figure.axes[0])[w][-1] for w in FAILED])
    assert np.allclose(np.column_stack([crosses.get_xdata(), crosses.get_ydata()]), ends, atol=1e-5)
    assert figure._suptitle.get_text() == (f"1024 worlds: 993 done, 20 ran out of time, {len(FAILED)} failed (red ×); "
                                           "world 0 highlighted")


def test_each_summary_figure_is_a_histogram_of_every_world_that_has_it(plotted, many):
    summary = pq.read_table(many / "summary.parquet")
    axes = plotted[1]["distributions"].axes
    titles = [ax.get_title() for ax in axes]
    for ax, name, label in zip(axes, ("done_time", "max_altitude_error", "max_yaw_error", "landing_error"),
                               ("done time [s]", "max altitude error [m]", "max yaw error [deg]",
                                "landing error [m]"), strict=True):
        values = summary.column(name).to_numpy()
        counted = int(np.isfinite(values).sum())  # done time: only the 993 done worlds
        assert ax.get_title().startswith(f"{label}: {counted} of 1024 worlds"), titles
        assert sum(p.get_height() for p in ax.patches) == counted  # stacked by exit reason, every world once
    assert int(np.isfinite(summary.column("done_time").to_numpy()).sum()) == 993


def test_the_page_lists_the_failed_worlds_and_draws_world_0_in_detail(plotted, many):
    made = plotted[0]
    page = (many / "report.html").read_text()
    assert f"report: {many / 'report.html'}" in made.stdout
    assert f"<h3 id='failed'>Failed worlds: {len(FAILED)}</h3>" in page
    assert "World 0 in detail" in page
    for name in ("worlds_paths", "worlds_summary", "worlds_values", *ONE_WORLD_FIGURES):
        assert f"id='fig-{name}'" in page, name
        assert (many / "plots" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    assert page.count("data:image/png;base64,") == 3 + len(ONE_WORLD_FIGURES)


def test_world_option_highlights_another_world(many):
    from nexus.viz.worlds import load_worlds
    from nexus.viz.worlds_figures import paths

    run = load_worlds(many)
    figure = paths(run, 107)  # a failed one
    assert "world 107 highlighted" in figure._suptitle.get_text()
    highlighted = line(figure.axes[0], "world 107")
    assert np.allclose(highlighted.get_xdata()[-1], traces(figure.axes[0])[107][-1, 0])
    # World 107 started 10 m east of world 0 (107 % 3 = 2): its NED origin is 10 m east of world 0's, and its
    # detail figures start at (0, 0) as its setpoint does.
    assert run.origins[107][0] - run.origins[0][0] == pytest.approx(10.0, abs=1e-3)
    assert highlighted.get_xdata()[0] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("world", [1024, -1])
def test_a_world_out_of_range_is_one_clear_error(many, world):
    result = plot(many, "--world", world)
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: --world {world} is not a world of {many}: give a world in 0..1023 "
                             "(it flew 1024 worlds)\n")


def test_a_one_world_run_takes_only_world_0(short_run):
    result = plot(short_run, "--world", 1)
    assert result.exit_code == 2, result.output
    assert f"error: --world 1 is not a world of {short_run}: give a world in 0 (it flew one world)" in result.output


def test_an_old_record_without_a_world_column_still_plots_as_world_0(short_run, tmp_path):
    # The short run's record predates worlds (no `world` column); run.json and a one-row summary as a new
    # one-world run writes them.
    out = tmp_path / "old"
    shutil.copytree(short_run, out, ignore=shutil.ignore_patterns("plots", "report*", "*.png"))
    assert "world" not in pq.read_schema(next((out / "record.parquet").glob("part-*.parquet"))).names
    info = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**info, "worlds": 1, "world_values": [{}]}))
    pq.write_table(pa.table({"world": pa.array([0], pa.int32()), "exit_reason": ["done"]}), out / "summary.parquet")

    from nexus.viz.worlds import load_worlds

    tracks = load_worlds(out).tracks
    assert tracks.worlds == 1 and tracks.rows(0) == slice(0, info["ticks"])
    result = plot(out, "--world", 0)
    assert result.exit_code == 0, result.output
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == len(ONE_WORLD_FIGURES)  # the one-world report, unchanged
    assert "worlds_paths" not in page


def test_a_summary_only_run_plots_its_distributions_and_final_positions_and_cannot_be_replayed(short_run, tmp_path):
    out = write_worlds_run(short_run, tmp_path / "summary_only", 64, mode="summary")
    assert not (out / "record.parquet").exists()
    result = plot(out, "--world", 7)
    assert result.exit_code == 0, result.output
    assert "note: the run kept a summary only" in result.output
    page = (out / "report.html").read_text()
    assert "id='fig-worlds_final'" in page and "id='fig-worlds_summary'" in page
    assert page.count("data:image/png;base64,") == 3  # final positions, distributions, drawn values

    from nexus.viz.errors import RunFolderError
    from nexus.viz.replay_view import open_replay

    with pytest.raises(RunFolderError, match="kept a summary only .*there are no paths to replay"):
        open_replay(out, "127.0.0.1", 0)


def test_a_run_without_its_summary_still_draws_every_path(many, tmp_path):
    from nexus.viz.worlds import load_worlds
    from nexus.viz.worlds_figures import distributions, paths

    out = tmp_path / "no_summary"
    out.mkdir()
    shutil.copy(many / "run.json", out / "run.json")
    (out / "record.parquet").symlink_to(many / "record.parquet")
    run = load_worlds(out)
    assert run.summary is None and "has no summary.parquet" in run.notes[0]
    assert len(traces(paths(run, 3).axes[0])) == WORLDS
    assert distributions(run, 3) is None


def test_viewer_draws_1024_worlds_as_one_batch_and_times_a_frame(many):
    from nexus.viz.replay_view import open_replay
    from nexus.viz.worlds_view import HIDDEN_Z

    replay = open_replay(many, "127.0.0.1", 0, world=5)
    try:
        assert replay.worlds == WORLDS and len(replay.time) == 283
        bases = replay.view.viewer._instances["/worlds/bases"]
        assert bases["count"] == WORLDS  # one batched mesh of 1,024 instances, not 1,024 vehicles
        costs = []
        for row in range(0, 283, 3):
            started = time.perf_counter()
            replay.draw(row)
            costs.append(time.perf_counter() - started)
        median = 1e3 * float(np.median(costs))
        print(f"\nviewer frame at {WORLDS} worlds: median {median:.2f} ms, max {1e3 * max(costs):.2f} ms "
              f"over {len(costs)} frames (no browser connected)")
        xforms = replay.view.xforms
        assert xforms[5, 2] == HIDDEN_Z  # the selected world: its vehicle instead of its marker
        # World 34 is in cell (2, 1) of the 32-column grid, 3 m apart, and started 5 m east of world 0: drawn
        # 6 − 5 = 1 m east and 3 m north of its position, its start on its cell as world 0's is on (0, 0).
        row = replay.index[282, 34]  # the last row drawn above
        assert np.allclose(xforms[34, :2], replay.run.tracks.position[row, :2] + (1.0, 3.0), atol=1e-4)
        replay.wanted = 107  # as the page's world number does
        replay.frame(0.0)
        assert replay.selected == 107 and "world 107 (0..1023): failed at" in replay.world_caption.content
        assert replay.view.xforms[107, 2] == HIDDEN_Z and replay.view.xforms[5, 2] != HIDDEN_Z
    finally:
        replay.view.close()


def test_view_of_a_world_out_of_range_is_refused(many):
    result = CliRunner().invoke(main, ["view", str(many), "--port", "0", "--world", "1024"])
    assert result.exit_code == 2, result.output
    assert "--world 1024 is not a world of" in result.output and "0..1023" in result.output
