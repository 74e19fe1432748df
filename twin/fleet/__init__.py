"""Running the twin: one cluster as one process (cluster.py), a fleet of them behind one cloud account
(front.py), the env file, node registration, calibration and fault injection."""
