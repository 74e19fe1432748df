"""NetApp endpoints of the twin: the ONTAP cluster behind its Trident backends (ontap.py)."""
