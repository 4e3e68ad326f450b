"""`python -m trainers.serve`: serve a trained model over HTTP as a Vertex AI custom container
(trainers/serving/server.py has the contract, the routes and the flags). Models registered by the
control plane run this command: it stays here."""

import sys

from trainers.serving.server import main

if __name__ == "__main__":
    sys.exit(main())
