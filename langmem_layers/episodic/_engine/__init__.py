"""The episodic search engine (private): a mirror of Chroma with BM25 and vector indexes.

The mirror is kept in sync with the collections, refreshed and loaded in the background.
"""
