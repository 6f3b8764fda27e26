"""Recording a run: device-side rows each tick, flushed to Parquet between replays."""
