"""Running the twin: one cluster as one process (cluster.py), a fleet of them behind one cloud account
(front.py), the env file and node registration. It builds the parts; none of them imports it (the calibration and
the fault rules they obey are twin/calibration.py and twin/faults.py)."""
