"""What Vertex does not offer but tests and the demo need: the emulator's admin service
(preemptions, injected faults, quotas, stockouts, images), its client and command line
(`python -m localvertex.admin`), and the fault injector every API call passes through."""
