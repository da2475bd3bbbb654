"""Importers: memories from other tools' exports (chat exports, memory servers, notes).

One small reader module per format turns a file into ImportItems (items.py); the splitter
cuts long texts; the runner checks the whole file first, then saves through the save path
(plan_saves: secrets redacted, invisible content dropped, dedup) with the source's times and
stable ids, so importing the same file again adds nothing. docs/guides/importing.md is the user's
guide.
"""
