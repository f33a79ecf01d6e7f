"""The hidden checks: one pytest module per exercise, run only by the judge."""
