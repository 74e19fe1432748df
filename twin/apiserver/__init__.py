"""The twin's Kubernetes API server: routing (server.py), the kinds it serves and their defaulting, errors,
patch, selectors, tables, protobuf bodies, and the subpackages http/, discovery/, openapi/ and auth/."""
