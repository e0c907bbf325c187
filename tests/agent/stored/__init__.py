"""Stores and message histories written by earlier Edgewise versions, and the tests that they still load."""
