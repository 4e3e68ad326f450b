"""The shape this project's own Python export writes."""
CUSTOM_JOB = {'displayName': 'camel-dict',
 'jobSpec': {'workerPoolSpecs': [{'machineSpec': {'machineType': 'g2-standard-12',
                                                   'acceleratorType': 'NVIDIA_L4',
                                                   'acceleratorCount': 1},
                                   'replicaCount': '1',
                                   'containerSpec': {'imageUri': 'gcr.io/p/l4:latest',
                                                     'args': ['--fast']}}],
             'scheduling': {'strategy': 'SPOT'}}}
