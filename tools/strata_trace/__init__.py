"""The parts of tools/strata-trace (the command-line script next to this folder), one module
per job: common (messages and exits), timeline (reading timelines, merge), summary, hang
(flight-recorder dumps)."""
