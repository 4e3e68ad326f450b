"""The contract between the trainers and the control plane, in one place both sides import.

Pure Python, standard library only, no import of the project: the trainers (in their own
images and under the PyTorch/XLA environment), the emulator, vertexplan and the control plane
all read it.

    events         the JSON lines a trainer prints, their fields, and a validator
    labels         the labels and names the control plane writes on Vertex resources
    quota_metrics  which Vertex AI quota metric an accelerator draws on, per scheduling
    prediction     the prediction request and response a serving deployment speaks
"""
