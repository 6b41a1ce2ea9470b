"""A run's acting policy as a file that runs without Coach (``coach export``).

`coach.export.policy` makes the policy one torch module, observations in and actions out,
the filters folded in (their torch twins: `coach.export.transforms`); `coach.export.files`
rebuilds a run's agent from its checkpoint and writes that module as ONNX or TorchScript.
"""
