"""The op table: one file per TF module."""
