// GrokProtocol: see docs/architecture.md
