"""Population-scale disclosure risk assessment (issue 7)."""
