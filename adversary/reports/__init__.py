"""Tables of a case study's risk measures, as pandas DataFrames (layer 5)."""
