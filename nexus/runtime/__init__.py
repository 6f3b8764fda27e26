"""The application around the engine: what a run leaves behind, and how every command reads it back."""
