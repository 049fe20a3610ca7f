"""Renderers for people: markdown, terminal tables, graphs and the HTML board.

Pure: each takes values the api built and returns text. Nothing here reads the ledger.
"""
