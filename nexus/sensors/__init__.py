"""Sensors: device stages that sample the plant's state into NED/FRD sample structs."""
