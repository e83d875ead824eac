"""The words both faces (the TUI and the headless commands) use."""
