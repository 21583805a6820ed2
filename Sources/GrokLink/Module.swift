// GrokLink: see docs/architecture.md
