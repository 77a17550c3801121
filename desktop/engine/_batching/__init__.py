"""The continuous-batching decode loop and what it owns: slots, their KV states and the
state cache, sliding-window checkpoints, per-slot samplers, answers read back.

Everything here runs on the decode-loop thread unless a docstring says otherwise.
"""
