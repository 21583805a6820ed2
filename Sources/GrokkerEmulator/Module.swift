// GrokkerEmulator: see docs/architecture.md
