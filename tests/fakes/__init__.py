"""Fakes speaking real wire formats on loopback."""
