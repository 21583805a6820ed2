// GrokCLI: see docs/architecture.md
