"""The boot image rules every platform shares, in Python.

A port of the project's Rust library ``guests/bootimage`` as far as a GCP
guest needs it: the stream lookups' wording, the architecture rule,
the per-MachineSet rules, the RFC 7386 merge patch with its convergence
check, and the Ignition spec 2 -> 3 stub upgrade for installer stubs.
Every reason and message is the Rust library's, word for word, so the
host (and ``mco-host guests test``) cannot tell the two guests apart.

Like the Rust library it is pure and total: no clock, randomness or I/O,
and bad input gives an ``error`` decision, never an exception.
"""
