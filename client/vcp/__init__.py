"""vcp: the Vertex Control Plane from a shell, on the client generated from the API's schema.

It knows the control plane only through its REST API (vertex_control_plane_client): no Django,
nothing of the server's code.
"""
