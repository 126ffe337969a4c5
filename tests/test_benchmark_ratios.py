"""How ``benchmarks/plugin_overhead.py`` turns its runs into ratios: the ratio of the
medians, and the paired ratio (the median of each round's own ratio), which a host
whose speed drifts between rounds does not move."""

from __future__ import annotations

from pathlib import Path

import pytest
from script_loader import load_script

po = load_script(Path(__file__).resolve().parents[1] / "benchmarks" / "plugin_overhead.py")


def test_the_paired_ratio_is_the_median_of_each_rounds_ratio() -> None:
    """The plugin is 10% slower in every round; in the second round the host slowed down
    during the plugin's run, and in the third during both runs. The ratio of the medians
    says 2.2; the paired ratio says 1.1."""
    base = po.Timing(wall=[10.0, 10.0, 20.0], cpu=[1.0, 1.0, 1.0])
    plugin = po.Timing(wall=[11.0, 22.0, 22.0], cpu=[1.0, 1.0, 1.0])
    row = po.summary(base, plugin)
    assert row["ratio"] == pytest.approx(2.2, abs=0.001)
    assert row["paired_ratio"] == pytest.approx(1.1, abs=0.001)
    assert row["cpu_ratio"] == row["paired_cpu_ratio"] == pytest.approx(1.0)


def test_no_paired_ratio_without_a_timed_baseline() -> None:
    """A baseline run that took no time gives no paired ratio (not one over fewer
    rounds), and the table prints a dash for it."""
    assert po.paired_ratio([1.0, 0.0], [1.1, 1.0]) is None
    assert po.paired_ratio([], []) is None
    assert po.paired_ratio([2.0], [3.0]) == pytest.approx(1.5)
    assert po._cell(None) == "-"
    assert po._cell(1.0666) == "1.067"
