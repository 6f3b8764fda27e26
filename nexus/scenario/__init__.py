"""Flight tests: scenario files (:mod:`.spec`), the checks on a run's record (:mod:`.checks`), ``nexus test``'s
runner over the sweep machinery (:mod:`.runner`), baselines, JUnit XML and the HTML report (docs/testing.md)."""
