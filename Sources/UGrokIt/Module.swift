// UGrokIt: see docs/architecture.md
